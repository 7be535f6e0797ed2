import Foundation
import Testing

/// `chime quiet` through the real executable: the settings persist in the store, bad input is
/// refused in one line, and the desktop's do-not-disturb is read where it can be (GNOME's setting
/// through GSettings' keyfile backend under the test's own XDG_CONFIG_HOME; dunst's `paused` on
/// the project's test server).
@Suite("chime quiet", .serialized)
struct QuietCLITests {
    func status(_ sandbox: borrowing Sandbox) throws -> [String: Any] {
        let result = try sandbox.chime("quiet", "status", "--json")
        #expect(result.status == 0, "\(result.stderr)")
        return try jsonObject(result.stdout)
    }

    @Test("Settings and quiet by hand persist, and status shows them")
    func settingsPersist() throws {
        let sandbox = try Sandbox()
        var shown = try status(sandbox)
        #expect(shown["quiet"] as? Bool == false)
        #expect(shown["hours"] is NSNull)
        #expect(shown["doses"] as? String == "come")
        #expect(shown["focus_hold"] as? Bool == true)
        #expect(shown["held"] as? Int == 0)

        // A daily window that is not in effect now (from 3 to 4 hours ahead, in the sandbox's
        // zone, UTC), so that the quiet by hand ends in an hour: with a fixed 22:00-07:00 the
        // test failed at night (UTC), when the window was in effect and ended after that hour.
        var utc = Calendar(identifier: .gregorian)
        utc.timeZone = TimeZone(identifier: "UTC")!
        let hour = utc.component(.hour, from: Date())
        let window = String(format: "%02d:00-%02d:00", (hour + 3) % 24, (hour + 4) % 24)
        for words in [["hours", window], ["doses", "wait"], ["focus-hold", "off"]] {
            let result = try sandbox.chime(["quiet"] + words + ["--json"])
            #expect(result.status == 0, "\(words): \(result.stderr)")
        }
        let started = try sandbox.chime("quiet", "1h", "--json")
        #expect(started.status == 0, "\(started.stderr)")
        shown = try jsonObject(started.stdout)
        #expect(shown["quiet"] as? Bool == true)
        #expect((shown["reasons"] as? [String])?.contains("manual") == true)
        let until = try #require(shown["until"] as? String)
        let iso = ISO8601DateFormatter()
        iso.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let end = try #require(iso.date(from: until))
        #expect(abs(end.timeIntervalSinceNow - 3_600) < 60)

        shown = try status(sandbox)
        #expect(shown["hours"] as? String == window)
        #expect(shown["doses"] as? String == "wait")
        #expect(shown["focus_hold"] as? Bool == false)
        #expect(shown["quiet"] as? Bool == true)

        #expect(try sandbox.chime("quiet", "off").status == 0)
        // Off ends the quiet by hand, and the daily window too when it is in effect now
        #expect(try status(sandbox)["quiet"] as? Bool == false)
        let human = try sandbox.chime("quiet", "status")
        #expect(human.stdout.contains("Quiet hours:  \(window)"))
        #expect(human.stdout.contains("Doses:        wait for the end of quiet"))
        #expect(try sandbox.chime("quiet", "hours", "off").status == 0)
        #expect(try status(sandbox)["hours"] is NSNull)
    }

    @Test("The daily window in effect now makes it quiet; 'off' ends it for today and keeps the window")
    func windowInEffectAndOff() throws {
        let sandbox = try Sandbox()
        // From an hour before now to two after, in the sandbox's zone (UTC)
        let hour = Calendar(identifier: .gregorian).dateComponents(in: TimeZone(identifier: "UTC")!, from: Date()).hour!
        let window = String(format: "%02d:00-%02d:00", (hour + 23) % 24, (hour + 2) % 24)
        let set = try sandbox.chime("quiet", "hours", window, "--json")
        #expect(set.status == 0, "\(set.stderr)")
        let shown = try jsonObject(set.stdout)
        #expect(shown["quiet"] as? Bool == true)
        #expect(shown["reasons"] as? [String] == ["hours"])
        #expect(try sandbox.chime("quiet", "off").status == 0)
        let after = try status(sandbox)
        #expect(after["quiet"] as? Bool == false)
        #expect(after["hours"] as? String == window)
        // Setting the window again brings it back at once
        #expect(try sandbox.chime("quiet", "hours", window).status == 0)
        #expect(try status(sandbox)["quiet"] as? Bool == true)
    }

    @Test("The runner holds alerts while quiet, across a kill -9, and 'quiet off' brings one summary at once")
    func runnerHoldsAndOffSummarises() async throws {
        let sandbox = try Sandbox()
        #expect(try sandbox.chime("quiet", "1h").status == 0)
        let runner = try sandbox.startRunner("--notifier", "json")
        #expect(await runner.waitUntilStarted(), "runner did not start: \(runner.stderr)")
        #expect(try sandbox.chime("in", "1s", "Tea", "--id", "tea").status == 0)
        #expect(try sandbox.chime("in", "1s", "Cake", "--id", "cake").status == 0)
        // Held (bounded wait for the runner to reach their due time), not shown
        let deadline = Date().addingTimeInterval(10)
        while try status(sandbox)["held"] as? Int != 2 && Date() < deadline { try await Task.sleep(for: .milliseconds(50)) }
        #expect(try status(sandbox)["held"] as? Int == 2)
        #expect(await runner.nextLine(timeout: 0.2) == nil)

        // Killed and started again: still held, nothing shown
        runner.crash()
        let again = try sandbox.startRunner("--notifier", "json")
        #expect(await again.waitUntilStarted(), "runner did not start: \(again.stderr)")
        #expect(try status(sandbox)["held"] as? Int == 2)

        // Off: the runner is poked and posts one summary of both
        #expect(try sandbox.chime("quiet", "off").status == 0)
        let line = try #require(await again.nextLine(timeout: 5))
        let summary = try jsonObject(line)
        #expect(summary["event"] as? String == "summary")
        #expect(summary["title"] as? String == "2 reminders held while quiet")
        #expect(Set(summary["ids"] as? [String] ?? []) == ["tea", "cake"])
        #expect(try status(sandbox)["held"] as? Int == 0)
        #expect(await again.terminate() == 0)
        #expect(await again.nextLine(timeout: 0.2) == nil)
    }

    @Test(
        "Bad input: one line naming the value, exit 64, nothing written",
        arguments: [
            (["quiet"], "missing"), (["quiet", "soon"], "'soon'"), (["quiet", "hours", "22:00"], "'22:00'"),
            (["quiet", "hours", "25:00-07:00"], "'25:00-07:00'"), (["quiet", "doses", "maybe"], "'maybe'"),
            (["quiet", "focus-hold", "yes"], "'yes'"), (["quiet", "until", "9"], "did you mean '9am'"), (["quiet", "off", "now"], "'now'"),
            (["quiet", "hours"], "missing value"),
        ]
    )
    func badInput(arguments: [String], named: String) throws {
        let sandbox = try Sandbox()
        #expect(try sandbox.chime("quiet", "doses", "wait").status == 0)
        let before = try sandbox.chime("quiet", "status", "--json").stdout
        let result = try sandbox.chime(arguments)
        #expect(result.status == 64, "\(arguments): \(result.stderr)")
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
        #expect(result.stderr.hasPrefix("chime: ") && result.stderr.contains(named), "\(result.stderr)")
        #expect(try sandbox.chime("quiet", "status", "--json").stdout == before)
    }

    @Test("GNOME's show-banners off (GSettings keyfile backend, the test's own config) is shown as do-not-disturb")
    func gnomeShowBanners() throws {
        // The schema from the system (the sandbox's XDG_DATA_DIRS leaves /usr/share out); the
        // settings from the sandbox's own XDG_CONFIG_HOME.
        let sandbox = try Sandbox(extra: ["GSETTINGS_BACKEND": "keyfile", "GSETTINGS_SCHEMA_DIR": "/usr/share/glib-2.0/schemas"])
        var shown = try status(sandbox)
        #expect(shown["desktop_do_not_disturb"] as? Bool == false)
        #expect((shown["desktop"] as? String)?.contains("gnome: show-banners is true") == true)

        let config = sandbox.environment["XDG_CONFIG_HOME"]! + "/glib-2.0/settings"
        try FileManager.default.createDirectory(atPath: config, withIntermediateDirectories: true)
        try "[org/gnome/desktop/notifications]\nshow-banners=false\n".write(toFile: config + "/keyfile", atomically: true, encoding: .utf8)
        shown = try status(sandbox)
        #expect(shown["desktop_do_not_disturb"] as? Bool == true)
        #expect((shown["desktop"] as? String)?.contains("gnome: show-banners is false") == true)
        let doctor = try sandbox.chime("doctor", "--json")
        #expect(try jsonObject(doctor.stdout)["do_not_disturb"] as? Bool == true)
    }

    @Test("dunst paused (the project's test server) is shown as do-not-disturb by status and doctor")
    func dunstPaused() async throws {
        let server = try NotificationServer()
        defer { server.stop() }
        let sandbox = try Sandbox(extra: server.environment)
        #expect(try status(sandbox)["desktop_do_not_disturb"] as? Bool == false)
        try server.dunstctl("set-paused", "true")
        let shown = try status(sandbox)
        #expect(shown["desktop_do_not_disturb"] as? Bool == true)
        #expect((shown["desktop"] as? String)?.contains("dunst: paused is true") == true)
        let doctor = try sandbox.chime("doctor")
        #expect(doctor.stdout.contains("Do not disturb:       on"), "\(doctor.stdout)")
        try server.dunstctl("set-paused", "false")
        #expect(try status(sandbox)["desktop_do_not_disturb"] as? Bool == false)
    }
}

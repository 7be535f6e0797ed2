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

        for words in [["hours", "22:00-07:00"], ["doses", "wait"], ["focus-hold", "off"]] {
            let result = try sandbox.chime(["quiet"] + words + ["--json"])
            #expect(result.status == 0, "\(words): \(result.stderr)")
        }
        let started = try sandbox.chime("quiet", "1h", "--json")
        #expect(started.status == 0, "\(started.stderr)")
        shown = try jsonObject(started.stdout)
        #expect(shown["quiet"] as? Bool == true)
        #expect((shown["reasons"] as? [String])?.contains("manual") == true)
        let until = try #require(shown["until"] as? String)
        let end = try #require(ISO8601DateFormatter().date(from: until))
        #expect(abs(end.timeIntervalSinceNow - 3_600) < 60)

        shown = try status(sandbox)
        #expect(shown["hours"] as? String == "22:00-07:00")
        #expect(shown["doses"] as? String == "wait")
        #expect(shown["focus_hold"] as? Bool == false)
        #expect(shown["quiet"] as? Bool == true)

        #expect(try sandbox.chime("quiet", "off").status == 0)
        // Off ends the quiet by hand, and the daily window too when it is in effect now
        #expect(try status(sandbox)["quiet"] as? Bool == false)
        let human = try sandbox.chime("quiet", "status")
        #expect(human.stdout.contains("Quiet hours:  22:00-07:00"))
        #expect(human.stdout.contains("Doses:        wait for the end of quiet"))
        #expect(try sandbox.chime("quiet", "hours", "off").status == 0)
        #expect(try status(sandbox)["hours"] is NSNull)
    }

    @Test(
        "Bad input: one line naming the value, exit 64, nothing written",
        arguments: [
            (["quiet"], "missing"), (["quiet", "soon"], "'soon'"), (["quiet", "hours", "22:00"], "'22:00'"),
            (["quiet", "hours", "25:00-07:00"], "'25:00-07:00'"), (["quiet", "doses", "maybe"], "'maybe'"),
            (["quiet", "focus-hold", "yes"], "'yes'"), (["quiet", "until", "9am"], "'9am'"), (["quiet", "off", "now"], "'now'"),
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
        let sandbox = try Sandbox(extra: ["GSETTINGS_BACKEND": "keyfile"])
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

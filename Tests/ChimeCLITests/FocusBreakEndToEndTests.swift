import ChimeCore
import ChimeFocus
import ChimeStore
import Foundation
import Testing

/// Breaks with the real `chime` executable and runner and the JSON notifier. A session lasts
/// 10 minutes at least, so it is started through the library with a clock shifted into the
/// past (``startSession(in:endingIn:)``): in the first test it ended 40 s ago, and the 1-minute
/// break that follows it (`chime config set focus.short_break 1m`) ends 20 s after the runner
/// starts: time for the status to be read during the break on a loaded machine (with 3 s, a CI
/// run read it after the break).
@Suite("End to end: focus breaks", .serialized)
struct FocusBreakEndToEndTests {
    @Test("A completed session's alert says the break; Break over fires at its end, once")
    func breakAfterASession() async throws {
        let sandbox = try Sandbox()
        let set = try sandbox.chime("config", "set", "focus.short_break", "1m")
        #expect(set.status == 0, "\(set.stderr)")
        let bad = try sandbox.chime("config", "set", "focus.long_break_every", "0")
        #expect(bad.status == 64)
        #expect(bad.stderr.contains("focus.long_break_every") && bad.stderr.contains("a whole number from 1 to 12"), "\(bad.stderr)")

        // Given a session that ended 40 s ago while no runner ran
        let started = try startSession(in: sandbox, endingIn: -40)
        let runner = try sandbox.startRunner("--notifier", "json")
        #expect(await runner.waitUntilStarted(), "runner did not start: \(runner.stderr)")

        // Then "Tree planted!" comes late, saying the break, with Plant another and Skip Break
        let line = try #require(await runner.nextLine(timeout: 6), "no alert: \(runner.stderr)")
        let planted = try jsonObject(line)
        #expect(planted["id"] as? String == "focus-\(started.id)")
        #expect(planted["title"] as? String == "Tree planted!")
        #expect(planted["body"] as? String == "Great focus session! Break: 1 min.")
        #expect(planted["actions"] as? [String] == ["plant-another", "skip-break"])
        #expect((planted["late_ms"] as? Double ?? 0) > 35_000)

        // And the status shows the break and the cycle
        let status = try jsonObject(try sandbox.chime("focus", "status", "--json").stdout)
        #expect(status["state"] as? String == "break")
        #expect(status["cycle_position"] as? Int == 1)
        #expect(status["cycle_length"] as? Int == 4)
        let rest = try #require(status["break"] as? [String: Any], "no break: \(status)")
        #expect(rest["kind"] as? String == "short")
        #expect(rest["length_s"] as? Int == 60)
        #expect(rest["after_session"] as? Int == Int(started.id))
        #expect(rest["alert"] as? String == "focus-break-1")
        let remaining = try #require(rest["remaining_s"] as? Int)
        #expect((1...20).contains(remaining), "remaining_s \(remaining)")
        let text = try sandbox.chime("focus", "status")
        #expect(text.stdout.hasPrefix("Break: 00:"), "\(text.stdout)")

        // Then "Break over" fires at the break's end, with Start and Skip
        let overLine = try #require(await runner.nextLine(timeout: 30), "no break alert: \(runner.stderr)")
        let over = try jsonObject(overLine)
        #expect(over["id"] as? String == "focus-break-1")
        #expect(over["title"] as? String == "Break over: plant the next tree")
        #expect(over["body"] as? String == "Session 2 of 4: Start when you are ready.")
        #expect(over["actions"] as? [String] == ["start-session", "skip"])
        let lateMs = try #require(over["late_ms"] as? Double)
        #expect(lateMs < 1000, "fired \(lateMs) ms late")

        // And nothing started by itself; the stats count the break, the forest the session only
        let after = try jsonObject(try sandbox.chime("focus", "status", "--json").stdout)
        #expect(after["state"] as? String == "idle")
        #expect(after["cycle_position"] as? Int == 2)
        #expect(after["break"] == nil)
        let stats = try jsonObject(try sandbox.chime("stats", "--json").stdout)
        #expect(stats["total_trees"] as? Int == 1)
        #expect(stats["breaks_taken"] as? Int == 1)
        #expect(stats["breaks_skipped"] as? Int == 0)
        let skip = try sandbox.chime("focus", "skip")
        #expect(skip.status == 3)
        #expect(skip.stderr.contains("no break to skip"), "\(skip.stderr)")

        let extra = await runner.nextLine(timeout: 2)
        #expect(extra == nil, "unexpected alert: \(extra ?? "")")
        #expect(await runner.terminate() == 0)
    }

    @Test("chime focus skip ends the break; its alert never fires")
    func skipTheBreak() async throws {
        let sandbox = try Sandbox()
        #expect(try sandbox.chime("config", "set", "focus.short_break", "1m").status == 0)
        // (Ended 35 s ago: the break would end 25 s after the runner starts, time to skip it.)
        let started = try startSession(in: sandbox, endingIn: -35)
        let runner = try sandbox.startRunner("--notifier", "json")
        #expect(await runner.waitUntilStarted(), "runner did not start: \(runner.stderr)")
        let planted = try jsonObject(try #require(await runner.nextLine(timeout: 6), "no alert: \(runner.stderr)"))
        #expect(planted["id"] as? String == "focus-\(started.id)")

        let skip = try sandbox.chime("focus", "skip", "--json")
        #expect(skip.status == 0, "\(skip.stderr)")
        let skipped = try #require(try jsonObject(skip.stdout)["break"] as? [String: Any])
        #expect(skipped["state"] as? String == "skipped")
        // (Past the break's end: its alert would have come.)
        let extra = await runner.nextLine(timeout: 30)
        #expect(extra == nil, "unexpected alert: \(extra ?? "")")
        let stats = try jsonObject(try sandbox.chime("stats", "--json").stdout)
        #expect(stats["breaks_skipped"] as? Int == 1)
        #expect(await runner.terminate() == 0)
    }
}

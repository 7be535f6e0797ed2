import ChimeCore
import Foundation
import Testing

/// `chime edit`, `show` and `history` with the real executable and runner: an edit wakes the
/// runner, which fires at the new time with the new title; the ledger then says when, how
/// late, through which channel and with what result. These wait a few real seconds.
@Suite("End to end: edit, show and history", .serialized)
struct HistoryEditEndToEndTests {
    @Test("An edit moves a pending reminder and wakes the runner; history and show say what happened")
    func editThenHistory() async throws {
        let sandbox = try Sandbox()
        let runner = try sandbox.startRunner("--notifier", "json")
        #expect(await runner.waitUntilStarted(), "runner did not start: \(runner.stderr)")

        // Given a reminder an hour away, moved to 1.5 s from now with a new title
        #expect(try sandbox.chime("in", "1h", "Tea", "--id", "tea").status == 0)
        let soon = TimeText.iso(Date().addingTimeInterval(1.5))
        let edit = try sandbox.chime("edit", "tea", "--at", soon, "--title", "Green tea", "--json")
        #expect(edit.status == 0, "\(edit.stderr)")
        let edited = try jsonObject(edit.stdout)
        #expect(edited["runner"] as? Bool == true)
        #expect((edited["reminder"] as? [String: Any])?["id"] as? String == "tea")

        // Then the runner fires it at the new time, with the new title
        let line = try #require(await runner.nextLine(timeout: 5), "no alert: \(runner.stderr)")
        let fired = try jsonObject(line)
        #expect(fired["id"] as? String == "tea")
        #expect(fired["title"] as? String == "Green tea")
        #expect(await runner.terminate() == 0)

        // And history says when, how late, through which channel, and that nobody answered
        let history = try sandbox.chime("history", "tea", "--json")
        #expect(history.status == 0, "\(history.stderr)")
        let alerts = try #require(try jsonObject(history.stdout)["alerts"] as? [[String: Any]])
        #expect(alerts.count == 1)
        #expect(alerts.first?["via"] as? String == "json")
        #expect(alerts.first?["result"] as? String == "shown")
        #expect(alerts.first?["title"] as? String == "Green tea")
        let late = try #require(alerts.first?["late_seconds"] as? Double)
        #expect(late >= 0 && late < 1, "shown \(late) s late")
        let human = try sandbox.chime("history", "--last", "1d")
        #expect(human.status == 0)
        #expect(human.stdout.contains("json") && human.stdout.contains("Green tea") && human.stdout.contains("shown"), "\(human.stdout)")

        // And show has all of it; the reminder, fired, can no longer be edited (exit 3)
        let show = try jsonObject(try sandbox.chime("show", "tea", "--json").stdout)
        #expect(show["state"] as? String == "done")
        #expect(show["shown"] as? Int == 1)
        let again = try sandbox.chime("edit", "tea", "--title", "x")
        #expect(again.status == 3)
        #expect(again.stderr.hasPrefix("chime: no pending reminder has the id 'tea'"), "\(again.stderr)")
        #expect(try sandbox.chime("history", "nothing").status == 3)
        let week = try sandbox.chime("history", "--last", "7", "--json")
        #expect((try jsonObject(week.stdout)["alerts"] as? [Any])?.count == 1, "\(week.stderr)")
        let bad = try sandbox.chime("history", "--last", "7x")
        #expect(bad.status == 64 && bad.stderr.hasPrefix("chime: invalid duration '7x'"), "\(bad.stderr)")
    }

    @Test("An alert the desktop showed is in the history through the desktop, with what the person did")
    func desktopChannelInHistory() async throws {
        let server = try NotificationServer()
        defer { server.stop() }
        let sandbox = try Sandbox(extra: server.environment)
        let runner = try sandbox.startRunner("--notifier", "desktop")
        #expect(await runner.waitUntilStarted(), "runner did not start: \(runner.stderr)")
        #expect(try sandbox.chime("in", "1s", "Stretch", "--id", "stretch").status == 0)
        #expect(await server.waitForLog { $0.contains("string \"Stretch\"") }, "the server got no alert: \(runner.stderr)")
        // The ledger is written once the server has answered: wait (bounded) for it.
        var alerts: [[String: Any]] = []
        let deadline = Date().addingTimeInterval(15)
        while Date() < deadline {
            let history = try sandbox.chime("history", "stretch", "--json")
            alerts = try jsonObject(history.stdout)["alerts"] as? [[String: Any]] ?? []
            if alerts.first?["state"] as? String == "posted" { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(alerts.count == 1)
        #expect(alerts.first?["via"] as? String == "desktop")
        #expect(alerts.first?["result"] as? String == "shown")
        #expect(await runner.terminate() == 0)
    }

    @Test("edit refuses a dose alert (exit 4) naming the family's command, and a bad time (exit 64), changing nothing")
    func editRefusals() throws {
        let sandbox = try Sandbox()
        #expect(try sandbox.chime("med", "add", "Aspirin", "--amount", "100", "--unit", "mg", "--at", "08:00").status == 0)
        let listed = try #require(try jsonObject(try sandbox.chime("list", "--json").stdout)["reminders"] as? [[String: Any]])
        let dose = try #require(listed.first { $0["kind"] as? String == "dose" }?["id"] as? String)
        let refused = try sandbox.chime("edit", dose, "--title", "Other")
        #expect(refused.status == 4)
        #expect(refused.stderr.contains("'chime dose' and 'chime med'"), "\(refused.stderr)")
        #expect(refused.stderr.split(separator: "\n").count == 1)

        #expect(try sandbox.chime("in", "1h", "Tea", "--id", "tea").status == 0)
        let bad = try sandbox.chime("edit", "tea", "--at", "25:00", "--title", "Coffee")
        #expect(bad.status == 64)
        #expect(bad.stderr.hasPrefix("chime: invalid time '25:00'"), "\(bad.stderr)")
        let nothing = try sandbox.chime("edit", "tea")
        #expect(nothing.status == 64)
        let show = try jsonObject(try sandbox.chime("show", "tea", "--json").stdout)
        #expect((show["reminder"] as? [String: Any])?["title"] as? String == "Tea")
    }
}

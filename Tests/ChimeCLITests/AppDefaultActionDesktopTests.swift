import ChimeCore
import ChimeLibnotify
import ChimeStore
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension DesktopTests {
    /// A click on a runner's alert's body (its `default` action, which dunst invokes for
    /// `dunstctl action 0`) opens the app at the alert's page, through the runner's
    /// org.freedesktop.Application: a plain reminder's at Reminders. It is no answer: the
    /// ledger records none, and the buttons stay.
    @Test("A click on an alert's body opens the app at its page, and answers nothing")
    func alertBodyOpensTheAppAtItsPage() async throws {
        let server = try NotificationServer()
        defer { server.stop() }
        let sandbox = try Sandbox(extra: server.environment)
        let runner = try sandbox.startRunner("--notifier", "desktop")
        #expect(await runner.waitUntilStarted(), "\(runner.stderr)")
        // The app the runner starts is stopped by its pid (the owner of its bus name) before the
        // runner: it writes into the runner's standard error.
        defer {
            if let pid = Self.owner(of: "io.github.chime.Chime.App", server) {
                kill(pid, SIGKILL)
                NotificationServer.waitUntilGone(pid)
            }
        }
        #expect(
            await DBusTests.wait { runner.stderr.contains("D-Bus service: io.github.chime.Chime on the session bus") },
            "\(runner.stderr)"
        )
        let store = try ReminderStore(path: sandbox.store, schemas: chimeSchemas)

        #expect(try sandbox.chime("in", "1s", "Tea is ready", "--id", "tea").status == 0)
        #expect(await server.waitForLog { $0.contains(#"string "Tea is ready""#) }, "\(runner.stderr)")
        let call = try #require(NotificationServer.notifyCalls(in: server.monitorLog).last)
        #expect(Array(call.actions.suffix(2)) == ["default", "Open Chime"] && call.actions.contains("done"), "\(call)")

        // The body's click
        try server.dunstctl("action", "0")
        #expect(await server.waitForLog { $0.contains("member=ActionInvoked") })
        #expect(await DBusTests.wait(timeout: 20) { runner.stderr.contains("presented page=reminders") }, "\(runner.stderr)")
        #expect(runner.stderr.contains("App started at reminders"), "\(runner.stderr)")
        #expect(Self.owner(of: "io.github.chime.Chime.App", server) != nil)

        // Nothing answered: the alert is still shown and unanswered
        try await Task.sleep(for: .milliseconds(500))
        let ledger = try store.ledger(id: "tea")
        #expect(ledger.map(\.response) == [nil], "\(ledger)")
        #expect(!runner.stderr.contains("Alert answered"), "\(runner.stderr)")
        #expect(!server.monitorLog.contains("member=NotificationClosed"))
    }

    /// A dose's alert: its body's click opens the app at Doses, and the dose stays unanswered.
    @Test("A click on a dose's alert opens the app at Doses, and answers nothing")
    func doseAlertBodyOpensDoses() async throws {
        let server = try NotificationServer()
        defer { server.stop() }
        let sandbox = try Sandbox(extra: server.environment)
        var utc = Calendar(identifier: .gregorian)
        utc.timeZone = TimeZone(identifier: "UTC")!
        let nextMinute = try #require(utc.nextDate(after: Date(), matching: DateComponents(second: 0), matchingPolicy: .nextTime))
        let at = String(format: "%02d:%02d", utc.component(.hour, from: nextMinute), utc.component(.minute, from: nextMinute))
        let occurrence = try addScheduled(in: sandbox, name: "Aspirin", at: at)
        try moveDose(occurrence, to: Date().addingTimeInterval(2), store: sandbox.store)
        let runner = try sandbox.startRunner("--notifier", "desktop")
        #expect(await runner.waitUntilStarted(), "\(runner.stderr)")
        defer {
            if let pid = Self.owner(of: "io.github.chime.Chime.App", server) {
                kill(pid, SIGKILL)
                NotificationServer.waitUntilGone(pid)
            }
        }
        #expect(await server.waitForLog { $0.contains(#"string "Medication Reminder""#) }, "\(runner.stderr)")

        try server.dunstctl("action", "0")
        #expect(await DBusTests.wait(timeout: 20) { runner.stderr.contains("presented page=doses") }, "\(runner.stderr)")
        let invoked = try #require(server.monitorLog.components(separatedBy: "member=ActionInvoked\n").last)
        #expect(invoked.contains(#"string "default""#), "\(invoked)")
        try await Task.sleep(for: .milliseconds(500))
        #expect(!runner.stderr.contains("Alert answered"), "\(runner.stderr)")
        let listing = try jsonObject(try sandbox.chime("doses", "--json").stdout)
        let dose = (listing["doses"] as? [[String: Any]])?.first { $0["occurrence"] as? String == occurrence }
        #expect(dose != nil && !["taken", "skipped", "snoozed"].contains(dose?["status"] as? String ?? ""), "\(listing)")
    }

    /// The page each kind of alert opens.
    @Test func alertsOpenTheirFamilysPage() {
        var dose = Note(id: "d", title: "Aspirin", postedAt: Date())
        dose.category = "x-chime.dose"
        var focus = Note(id: "f", title: "Focus", postedAt: Date())
        focus.category = "x-chime.focus.live"
        var done = Note(id: "g", title: "Tree grown", postedAt: Date())
        done.category = "x-chime.focus"
        let plain = Note(id: "p", title: "Tea", postedAt: Date())
        #expect(
            [dose, focus, done, plain].map(LibnotifyNotifier.page(for:)) == ["doses", "focus", "focus", "reminders"]
        )
    }

    /// The pid of the connection owning `name` on the server's bus.
    static func owner(of name: String, _ server: NotificationServer) -> pid_t? {
        let output = server.directory.appendingPathComponent("owner-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: output) }
        guard
            let pid = try? NotificationServer.spawn(
                "/usr/bin/gdbus",
                [
                    "call", "--session", "--dest", "org.freedesktop.DBus", "--object-path", "/org/freedesktop/DBus", "--method",
                    "org.freedesktop.DBus.GetConnectionUnixProcessID", name,
                ],
                environment: server.environment,
                output: output.path
            ), NotificationServer.wait(pid) == 0,
            let text = try? String(contentsOf: output, encoding: .utf8), let range = text.range(of: "uint32 ")
        else { return nil }
        return pid_t(text[range.upperBound...].prefix(while: \.isNumber))
    }
}

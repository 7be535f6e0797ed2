import ChimeCore
import ChimeStore
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension DesktopTests {
    /// `--after-last 6h` on the real notification server: the first dose taken from the
    /// terminal, the next one's alert (moved to now, as the other dose tests move a dose rather
    /// than wait) taken with its "Mark as Taken"; the one after is then scheduled 6 hours after
    /// that Take, and its alert comes when its time comes.
    @Test("An after-last dose: Mark as Taken on its alert schedules the next alert 6 hours after the Take")
    func afterLastDoseTakenFromTheServer() async throws {
        let server = try NotificationServer()
        defer { server.stop() }
        let dunst = try startDunstTakingDoses(server)
        defer {
            kill(dunst, SIGKILL)
            _ = NotificationServer.wait(dunst)
        }
        let sandbox = try Sandbox(extra: server.environment)
        let added = try sandbox.chime("med", "add", "Pain", "--amount", "500", "--unit", "mg", "--after-last", "6h")
        #expect(added.status == 0, "\(added.stderr)")
        let first = try sandbox.chime("dose", "take", "Pain")
        #expect(first.status == 0 && first.stdout.hasPrefix("Logged dose"), "\(first.stdout)\(first.stderr)")
        let second = try nextAlert(of: "Pain", in: sandbox)
        try moveDose(second, to: Date().addingTimeInterval(2), store: sandbox.store)

        let runner = try sandbox.startRunner("--notifier", "desktop")
        #expect(await runner.waitUntilStarted(), "\(runner.stderr)")
        #expect(
            await server.waitForLog { NotificationServer.notifyCalls(in: $0).contains { $0.summary == "Pain 500 mg" } },
            "\(runner.stderr)"
        )
        try server.dunstctl("context")
        #expect(await server.waitForLog { $0.contains("member=ActionInvoked") }, "\(server.monitorLog)")

        // Taken: the next dose 6 hours after the Take, its alert pending then.
        var taken: Date?
        for _ in 0..<100 where taken == nil {
            let listing = try jsonObject(try sandbox.chime("doses", "--json").stdout)
            let dose = (listing["doses"] as? [[String: Any]])?.first { $0["occurrence"] as? String == second }
            taken = DoseAfterLastCLITests.instant(dose?["taken"])
            if taken == nil { try await Task.sleep(for: .milliseconds(50)) }
        }
        let takenAt = try #require(taken, "\(runner.stderr)")
        let third = try nextAlert(of: "Pain", in: sandbox)
        #expect(third != second)
        let store = try ReminderStore(path: sandbox.store, schemas: chimeSchemas)
        let alert = try #require(try store.pending().first { $0.id == third })
        // (--json writes milliseconds)
        let gap = try #require(alert.nextDue).timeIntervalSince(takenAt)
        #expect(abs(gap - 6 * 3_600) < 0.001, "\(gap)")
        #expect(alert.title == "Pain 500 mg")

        // Its time come (moved to now): the runner shows it.
        let shown = NotificationServer.notifyCalls(in: server.monitorLog).filter { $0.summary == "Pain 500 mg" }.count
        try moveDose(third, to: Date().addingTimeInterval(1), store: sandbox.store)
        // (a direct write does not poke the runner; scheduling something through the CLI does)
        #expect(try sandbox.chime("in", "1h", "Later", "--id", "later").status == 0)
        #expect(
            await server.waitForLog { log in NotificationServer.notifyCalls(in: log).filter { $0.summary == "Pain 500 mg" }.count > shown },
            "\(runner.stderr)"
        )
        #expect(await runner.terminate() == 0)
    }
}

import ChimeCore
import ChimeGateway
import ChimeStore
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension DesktopTests {
    /// The reminder in use on the real notification server: a gated program runs with
    /// `--remind-after 20m`; its reminder (moved to now, as the dose tests move a dose: nothing
    /// waits 20 minutes) comes as "20 min in Chess" with Exit and Keep going, chosen in dunst's
    /// menu as a person would. Keep going schedules the next one 20 minutes on; Exit stops them
    /// and says "Close Chess when you are ready." while Chess goes on running.
    @Test("A gated program's reminder in use reaches the real server; Keep going and Exit are answered")
    func gateReminderInUseFromTheServer() async throws {
        let server = try NotificationServer()
        defer { server.stop() }
        var dunst = try server.restartDunst(choosingWith: "#!/bin/sh\nexec grep -m 1 -F 'Keep going'\n", name: "keep")
        defer {
            kill(dunst, SIGKILL)
            _ = NotificationServer.wait(dunst)
        }
        let sandbox = try Sandbox(extra: server.environment.merging(["TZ": "UTC"]) { $1 })
        try GateMinutesTests.install(in: sandbox)
        let add = try sandbox.chime("gate", "add", "chess", "--hours", GateMinutesTests.elsewhere, "--remind-after", "20m")
        #expect(add.status == 0, "\(add)")
        let (watcher, program) = try await GateMinutesTests.startWatched(sandbox, name: "chess")
        defer {
            kill(program, SIGKILL)
            _ = Spawn.wait(watcher)
        }
        let run = try #require(try await GateMinutesTests.run(1, in: sandbox))
        let store = try ReminderStore(path: sandbox.store, schemas: chimeSchemas)
        func remindNow() throws {
            let moved = try store.write { db in try ReminderStore.moveOnce(id: run.reminderID, to: Date().addingTimeInterval(1), in: db) }
            #expect(moved, "no pending reminder \(run.reminderID)")
        }
        try remindNow()

        var runner = try sandbox.startRunner("--notifier", "desktop")
        #expect(await runner.waitUntilStarted(), "\(runner.stderr)")
        #expect(await server.waitForLog { $0.contains(#"string "20 min in Chess""#) }, "\(runner.stderr)")
        let alert = try #require(NotificationServer.notifyCalls(in: server.monitorLog).first { $0.summary == "20 min in Chess" })
        #expect(alert.body == "Exit: close Chess when you are ready. Keep going: another reminder in 20 min.")
        #expect(Array(alert.actions.prefix(4)) == ["gate-exit", "Exit", "gate-keep-going", "Keep going"], "\(alert)")
        #expect(alert.hints.contains(#"string "x-chime.gate""#), "\(alert)")

        // Keep going: the alert says so; the next reminder comes 20 minutes from the press.
        try server.dunstctl("context")
        #expect(await server.waitForConfirmation { $0.summary == "Keep going: Chess" }, "\(runner.stderr)\n\(server.monitorLog)")
        let next = try store.reminder(id: run.reminderID).nextDue ?? .distantPast
        #expect(abs(next.timeIntervalSinceNow - 1_200) < 30, "\(next)")
        #expect(await runner.terminate() == 0)

        // Exit, on the next reminder: it closes nothing; the person is asked to.
        kill(dunst, SIGKILL)
        _ = NotificationServer.wait(dunst)
        dunst = try server.restartDunst(choosingWith: "#!/bin/sh\nexec grep -m 1 -E '^#?Exit( |$)'\n", name: "exit")
        try remindNow()
        runner = try sandbox.startRunner("--notifier", "desktop")
        #expect(await runner.waitUntilStarted(), "\(runner.stderr)")
        #expect(
            await server.waitForLog { NotificationServer.notifyCalls(in: $0).filter { $0.summary.hasSuffix("min in Chess") }.count == 2 },
            "\(runner.stderr)"
        )
        try server.dunstctl("context")
        #expect(
            await server.waitForConfirmation { $0.summary == "Close Chess when you are ready." },
            "\(runner.stderr)\n\(server.monitorLog)"
        )
        #expect(throws: ChimeError.self) { try store.reminder(id: run.reminderID) }
        #expect(kill(program, 0) == 0)
        #expect(kill(watcher, 0) == 0)
        #expect(await runner.terminate() == 0)
    }
}

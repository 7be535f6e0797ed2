import ChimeCore
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension DesktopTests {
    /// The issue's end-to-end test: a dose falls due, the runner posts its alert with the
    /// actions to the real server, and the person's "Mark as Taken" marks it taken.
    ///
    /// `dunstctl context` opens dunst's context menu (`dunstctl action 0` would invoke the
    /// alert's default action, the body's click, which opens the app): dunst feeds the
    /// actions to its `dmenu` command and invokes the one it chooses. The test configuration
    /// points dmenu at /bin/false, so dunst is restarted on the same bus with the test
    /// configuration and a chooser that picks "Mark as Taken" (as a person would in the menu).
    /// The ActionInvoked signal then comes from the server itself. (dunst 1.9.0 has no rule
    /// setting for the default action's name: `default_action_name` in a rule is refused.)
    @Test("A dose's alert reaches the real server with its actions, and Mark as Taken marks it taken")
    func doseAlertTakenFromTheServer() async throws {
        let server = try NotificationServer()
        defer { server.stop() }
        let dunst = try startDunstTakingDoses(server)
        defer {
            kill(dunst, SIGKILL)
            _ = NotificationServer.wait(dunst)
        }
        let sandbox = try Sandbox(extra: server.environment)

        // A medication due at the next whole minute, its first dose then moved to 2 s from now
        var utc = Calendar(identifier: .gregorian)
        utc.timeZone = TimeZone(identifier: "UTC")!
        let nextMinute = try #require(utc.nextDate(after: Date(), matching: DateComponents(second: 0), matchingPolicy: .nextTime))
        let at = String(format: "%02d:%02d", utc.component(.hour, from: nextMinute), utc.component(.minute, from: nextMinute))
        let occurrence = try addScheduled(in: sandbox, name: "Aspirin", at: at)
        try moveDose(occurrence, to: Date().addingTimeInterval(2), store: sandbox.store)

        let runner = try sandbox.startRunner("--notifier", "desktop")
        #expect(await runner.waitUntilStarted(), "\(runner.stderr)")

        // The alert, titled with the medication, the seed's phrase below, and its three actions
        #expect(await server.waitForLog { $0.contains(#"string "Medication Reminder""#) }, "\(runner.stderr)")
        let call = try #require(server.monitorLog.components(separatedBy: "member=Notify\n").last)
        #expect(NotificationServer.stringArguments(ofLastNotifyIn: server.monitorLog).dropFirst(2).first == "Aspirin 100 mg")
        for expected in [
            #"string "Medication Reminder""#, #"string "Aspirin 100 mg""#, #"string "take""#, #"string "Mark as Taken""#,
            #"string "snooze""#, #"string "Snooze 10 min""#, #"string "skip""#, #"string "Skip""#, #"string "x-chime.dose""#,
        ] {
            #expect(call.contains(expected), "\(expected) not in \(call)")
        }

        // The person chooses "Mark as Taken" in dunst's menu: the server invokes the action "take"
        try server.dunstctl("context")
        #expect(await server.waitForLog { $0.contains("member=ActionInvoked") }, "\(server.monitorLog)")
        let invoked = try #require(server.monitorLog.components(separatedBy: "member=ActionInvoked\n").last)
        #expect(invoked.contains(#"string "take""#), "\(invoked)")

        var status: String?
        for _ in 0..<100 where status != "taken" {
            let listing = try jsonObject(try sandbox.chime("doses", "--json").stdout)
            let dose = (listing["doses"] as? [[String: Any]])?.first { $0["occurrence"] as? String == occurrence }
            status = dose?["status"] as? String
            if status != "taken" { try await Task.sleep(for: .milliseconds(50)) }
        }
        #expect(status == "taken", "\(runner.stderr)")

        // Then the alert is replaced in place by what was recorded: the same server id, no
        // buttons, an expiry of its own; the server never closed it in between
        #expect(await server.waitForLog { $0.contains("taken at") }, "\(runner.stderr)\n\(server.monitorLog)")
        let replaced = try #require(NotificationServer.notifyCalls(in: server.monitorLog).last)
        let first = try #require(NotificationServer.notifyCalls(in: server.monitorLog).first)
        #expect(replaced.summary.wholeMatch(of: #/✓ Aspirin 100 mg taken at \d\d:\d\d/#) != nil, "\(replaced)")
        #expect(
            replaced.replacesID != 0 && replaced.replacesID == NotificationServer.serverIDs(in: server.monitorLog).first,
            "\(server.monitorLog)"
        )
        #expect(replaced.actions.isEmpty, "\(replaced)")
        #expect(replaced.timeout == 5_000, "\(replaced)")
        // (The alert stayed up until answered, and was kept after the press: resident. Its three
        // buttons, and the body's click, which opens the app at Doses: "default".)
        #expect(
            first.actions.count == 8 && first.actions.suffix(2) == ["default", "Open Chime"] && first.timeout == 0
                && first.hints.contains(#"string "resident""#),
            "\(first)"
        )
        #expect(!server.monitorLog.contains("member=NotificationClosed"), "\(server.monitorLog)")

        // Shown once: no repeat, no second alert
        try await Task.sleep(for: .seconds(1.5))
        #expect(server.monitorLog.components(separatedBy: #"string "Medication Reminder""#).count == 2)
        #expect(try sandbox.chime("dose", "take", occurrence).status == 4)
        #expect(await runner.terminate() == 0)
    }

    /// Answered from a terminal, with and without a runner: the alert on screen is replaced in
    /// place by what was recorded, so that nobody takes the dose twice, and a press on an alert
    /// the terminal answered already says so.
    @Test("A dose taken from the terminal: its alert says so in place, with the runner up and with none")
    func doseTakenFromTheTerminalConfirmsOnTheAlert() async throws {
        let server = try NotificationServer()
        defer { server.stop() }
        let sandbox = try Sandbox(extra: server.environment)
        var utc = Calendar(identifier: .gregorian)
        utc.timeZone = TimeZone(identifier: "UTC")!
        let nextMinute = try #require(utc.nextDate(after: Date(), matching: DateComponents(second: 0), matchingPolicy: .nextTime))
        let at = String(format: "%02d:%02d", utc.component(.hour, from: nextMinute), utc.component(.minute, from: nextMinute))
        let aspirin = try addScheduled(in: sandbox, name: "Aspirin", at: at)
        let zinc = try addScheduled(in: sandbox, name: "Zinc", at: at)
        try moveDose(aspirin, to: Date().addingTimeInterval(1), store: sandbox.store)
        try moveDose(zinc, to: Date().addingTimeInterval(1), store: sandbox.store)

        // Given both alerts on screen, each titled with its medication
        let runner = try sandbox.startRunner("--notifier", "desktop")
        #expect(await runner.waitUntilStarted(), "\(runner.stderr)")
        #expect(
            await server.waitForLog { log in
                Set(NotificationServer.notifyCalls(in: log).map(\.summary)).isSuperset(of: ["Aspirin 100 mg", "Zinc 100 mg"])
            },
            "\(runner.stderr)"
        )

        // When Aspirin is taken from the terminal with the runner up, its alert says so in place
        let taken = try sandbox.chime("dose", "take", aspirin)
        #expect(taken.status == 0, "\(taken.stderr)")
        #expect(await server.waitForConfirmation { $0.summary.hasPrefix("✓ Aspirin 100 mg taken at ") }, "\(runner.stderr)")

        // And with no runner (stopped; Zinc's alert stays on screen, as sticky alerts do), the
        // command replaces it itself, by the server's id
        #expect(await runner.terminate() == 0)
        let zincID = try #require(NotificationServer.notifyCalls(in: server.monitorLog).firstIndex { $0.summary == "Zinc 100 mg" })
        let zincServerID = NotificationServer.serverIDs(in: server.monitorLog)[zincID]
        // (A runner that stops closes nothing of the ledger's: only its live notes.)
        #expect(!NotificationServer.closedSignals(in: server.monitorLog).contains { $0.id == zincServerID })
        let skipped = try sandbox.chime("dose", "skip", zinc)
        #expect(skipped.status == 0, "\(skipped.stderr)")
        #expect(
            await server.waitForConfirmation { $0.summary == "Zinc 100 mg skipped" && $0.replacesID == zincServerID },
            "\(server.monitorLog)"
        )
        // And nothing else was shown: two alerts, two confirmations
        #expect(NotificationServer.notifyCalls(in: server.monitorLog).count == 4, "\(server.monitorLog)")
    }

    /// Replaces the server's dunst with one whose context menu chooses "Mark as Taken"; returns
    /// its pid (the caller stops it by pid) once it owns the name.
    func startDunstTakingDoses(_ server: NotificationServer) throws -> pid_t {
        try server.restartDunst(choosingWith: "#!/bin/sh\nexec grep -m 1 -F 'Mark as Taken'\n", name: "doses")
    }
}

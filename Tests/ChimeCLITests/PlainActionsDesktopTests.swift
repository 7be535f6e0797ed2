import ChimeCore
import ChimeStore
import Foundation
import GRDB
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension DesktopTests {
    /// Actions on plain reminders through dunst: the alert reaches the real server with its look
    /// (urgency, icon) and the actions Done and Snooze; Snooze from the alert brings it back
    /// once, ten minutes on; `chime done` and `chime snooze` answer it from a terminal and close
    /// it; `chime cancel` of a one-shot still showing closes it (exit 8: too late to cancel it).
    ///
    /// dunst invokes an action of an alert with several through its context menu, which feeds
    /// the labels to its `dmenu` command: the test's dunst gets a chooser that picks the label
    /// written in a file, as a person would in the menu (see ``startDunstTakingDoses(_:)``).
    @Test("Actions on plain reminders through dunst: Snooze and Done from the alert and the terminal, cancel closes a showing one-shot")
    func plainReminderActionsThroughDunst() async throws {
        let server = try NotificationServer()
        defer { server.stop() }
        let choice = server.directory.appendingPathComponent("choice")
        let dunst = try startDunst(choosingFrom: choice, server)
        defer {
            kill(dunst, SIGKILL)
            _ = NotificationServer.wait(dunst)
        }
        let sandbox = try Sandbox(extra: server.environment)
        let runner = try sandbox.startRunner("--notifier", "desktop")
        #expect(await runner.waitUntilStarted(), "\(runner.stderr)")
        let store = try ReminderStore(path: sandbox.store, schemas: chimeSchemas)

        // A reminder with its look: kept with the reminder, and shown with the actions
        let scheduled = try sandbox.chime(
            "in",
            "1s",
            "Tea is ready",
            "--id",
            "tea",
            "--urgency",
            "critical",
            "--icon",
            "appointment-soon",
            "--sound",
            "bell",
            "--json"
        )
        #expect(scheduled.status == 0, "\(scheduled.stderr)")
        let reminder = try #require(try jsonObject(scheduled.stdout)["reminder"] as? [String: Any])
        #expect(reminder["urgency"] as? String == "critical")
        #expect(reminder["icon"] as? String == "appointment-soon")
        #expect(reminder["sound"] as? String == "bell")
        #expect(await server.waitForLog { $0.contains(#"string "Tea is ready""#) }, "\(runner.stderr)")
        let call = try #require(server.monitorLog.components(separatedBy: "member=Notify\n").last)
        for expected in [
            #"string "appointment-soon""#, #"string "done""#, #"string "Done""#, #"string "snooze""#, #"string "Snooze 10 min""#,
        ] {
            #expect(call.contains(expected), "\(expected) not in \(call)")
        }
        #expect(call.contains(#"string "urgency""#) && call.contains("byte 2"), "not critical: \(call)")
        // dunst plays no sounds (no `sound` capability): no sound-name hint (a terminal gets a bell instead)
        #expect(!call.contains("sound-name"), "\(call)")

        // Snooze from the alert: recorded, and the alert comes back once, ten minutes on
        try "Snooze".write(to: choice, atomically: true, encoding: .utf8)
        try server.dunstctl("context")
        #expect(await server.waitForLog { $0.contains("member=ActionInvoked") }, "\(server.monitorLog)")
        let invoked = try #require(server.monitorLog.components(separatedBy: "member=ActionInvoked\n").last)
        #expect(invoked.contains(#"string "snooze""#), "\(invoked)")
        let snoozed = try await ledger(of: "tea", in: store) { $0.count == 2 }
        #expect(snoozed.map(\.response) == ["snooze", nil], "\(runner.stderr)")
        #expect(snoozed.map(\.state) == ["posted", "due"])
        let firstShown = try #require(snoozed.first?.postedAt)
        let back = snoozed[1].due.timeIntervalSince(firstShown)
        #expect(back >= 600 && back < 630, "comes back \(back) s after it was shown")
        // And the alert, kept by the server after the press, says until when in its place
        #expect(await server.waitForConfirmation { $0.summary.hasPrefix("Snoozed until ") && $0.body == "Tea is ready" })

        // Brought forward to now (rather than waiting ten minutes), the runner shows it again
        try store.write { db in
            let now = Date().micros
            try db.execute(sql: "UPDATE occurrence SET due_us = ?1, next_attempt_us = ?1 WHERE state = 'due'", arguments: [now])
        }
        #expect(try sandbox.chime("in", "1h", "Poke", "--id", "poke").status == 0)
        #expect(
            await server.waitForLog { NotificationServer.notifyCalls(in: $0).filter { $0.summary == "Tea is ready" }.count == 2 },
            "\(runner.stderr)"
        )

        // Done from the terminal: recorded, and the runner replaces the alert by "✓ Done"
        let done = try sandbox.chime("done", "tea")
        #expect(done.status == 0, "\(done.stderr)")
        #expect(done.stdout == "Done: tea  Tea is ready\n")
        #expect(await server.waitForConfirmation { $0.summary == "✓ Done" && $0.body == "Tea is ready" }, "\(runner.stderr)")
        // It goes by itself (the server expires it), and its going is no answer
        #expect(await server.waitForConfirmationToExpire { $0.summary == "✓ Done" && $0.body == "Tea is ready" }, "\(server.monitorLog)")
        #expect(try await ledger(of: "tea", in: store) { $0.last?.response == "done" }.map(\.response) == ["snooze", "done"])
        // Answered already (exit 4); nothing shown for an id (exit 3)
        let again = try sandbox.chime("done", "tea")
        #expect(again.status == 4, "\(again.stderr)")
        #expect(again.stderr.contains("was already answered (done)"), "\(again.stderr)")
        #expect(try sandbox.chime("snooze", "poke").status == 3)

        // Done from the alert
        #expect(try sandbox.chime("in", "1s", "Kettle", "--id", "kettle").status == 0)
        #expect(await server.waitForLog { $0.contains(#"string "Kettle""#) }, "\(runner.stderr)")
        try "Done".write(to: choice, atomically: true, encoding: .utf8)
        try server.dunstctl("context")
        #expect(try await ledger(of: "kettle", in: store) { $0.first?.response != nil }.map(\.response) == ["done"])
        #expect(await server.waitForConfirmation { $0.summary == "✓ Done" && $0.body == "Kettle" }, "\(runner.stderr)")

        // Snooze from the terminal: the alert says until when in its place
        #expect(try sandbox.chime("in", "1s", "Pot", "--id", "pot").status == 0)
        #expect(await server.waitForLog { $0.contains(#"string "Pot""#) }, "\(runner.stderr)")
        let snooze = try sandbox.chime("snooze", "pot", "5m", "--json")
        #expect(snooze.status == 0, "\(snooze.stderr)")
        #expect(try jsonObject(snooze.stdout)["response"] as? String == "snooze")
        #expect(await server.waitForConfirmation { $0.summary.hasPrefix("Snoozed until ") && $0.body == "Pot" }, "\(runner.stderr)")
        #expect(try store.ledger(id: "pot").map(\.response) == ["snooze", nil])

        // Cancel of a one-shot still showing closes it, and says it came too late for it (exit 8)
        #expect(try sandbox.chime("in", "1s", "Lamp", "--id", "lamp").status == 0)
        #expect(await server.waitForLog { $0.contains(#"string "Lamp""#) }, "\(runner.stderr)")
        let closesBeforeCancel = server.monitorLog.components(separatedBy: "member=CloseNotification").count
        let cancel = try sandbox.chime("cancel", "lamp")
        #expect(cancel.status == 8, "\(cancel.stderr)")
        #expect(cancel.stderr.hasPrefix("chime: too late: 'lamp' was shown at "), "\(cancel.stderr)")
        #expect(await server.waitForLog { $0.components(separatedBy: "member=CloseNotification").count > closesBeforeCancel })
        #expect(try store.ledger(id: "lamp").map(\.response) == ["cancelled"])

        // `chime snooze` of a dose's alert snoozes the dose, and the alert says until when
        var utc = Calendar(identifier: .gregorian)
        utc.timeZone = TimeZone(identifier: "UTC")!
        let nextMinute = try #require(utc.nextDate(after: Date(), matching: DateComponents(second: 0), matchingPolicy: .nextTime))
        let at = String(format: "%02d:%02d", utc.component(.hour, from: nextMinute), utc.component(.minute, from: nextMinute))
        let occurrence = try addScheduled(in: sandbox, name: "Aspirin", at: at)
        try moveDose(occurrence, to: Date().addingTimeInterval(1), store: sandbox.store)
        #expect(try sandbox.chime("in", "2h", "Poke again", "--id", "poke").status == 0)
        #expect(await server.waitForLog { $0.contains(#"string "Medication Reminder""#) }, "\(runner.stderr)")
        let doseCall = try #require(server.monitorLog.components(separatedBy: "member=Notify\n").last)
        // Its own icon: the pill from the source tree's Resources/icons (a development build)
        #expect(doseCall.contains("dose.svg"), "\(doseCall)")
        let doseSnooze = try sandbox.chime("snooze", occurrence, "15m", "--json")
        #expect(doseSnooze.status == 0, "\(doseSnooze.stderr)")
        let snoozedDose = try jsonObject(doseSnooze.stdout)
        #expect(snoozedDose["kind"] as? String == "dose")
        let until = try #require(snoozedDose["snoozed_until"] as? String)
        #expect(await server.waitForConfirmation { $0.summary.hasPrefix("Aspirin 100 mg snoozed until ") }, "\(runner.stderr)")
        let listing = try jsonObject(try sandbox.chime("doses", "--json").stdout)
        let dose = (listing["doses"] as? [[String: Any]])?.first { $0["occurrence"] as? String == occurrence }
        #expect(dose?["snoozed_until"] as? String == until)
        #expect(await runner.terminate() == 0)
    }

    /// The ledger of reminder `id`, once `done` holds of it (bounded: 5 s).
    func ledger(of id: String, in store: ReminderStore, until done: ([LedgerEntry]) -> Bool) async throws -> [LedgerEntry] {
        for _ in 0..<100 {
            let ledger = try store.ledger(id: id)
            if done(ledger) { return ledger }
            try await Task.sleep(for: .milliseconds(50))
        }
        return try store.ledger(id: id)
    }

    /// Replaces the server's dunst with one whose context menu chooses the label written in
    /// `choice`; returns its pid (the caller stops it by pid) once it owns the name.
    func startDunst(choosingFrom choice: URL, _ server: NotificationServer) throws -> pid_t {
        try server.restartDunst(choosingWith: "#!/bin/sh\nexec grep -m 1 -F -f '\(choice.path)'\n", name: "choosing")
    }
}

import ChimeCore
import ChimePostgres
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension DesktopTests {
    /// What `plainReminderActionsThroughDunst` proves on SQLite, on a PostgreSQL store (issue
    /// 33): a runner on the database shows plain reminders with Done and Snooze on a real
    /// notification server (dunst); Snooze from the alert records the answer and its re-alert in
    /// the ledger, which a runner shows once; `chime done` from a terminal (any host) is told to
    /// the runner over `NOTIFY chime_alerts`, which replaces the alert by "✓ Done"; a second
    /// answer is refused (exit 4); `chime cancel` of a one-shot still showing closes it (exit 8);
    /// and quiet from `chime quiet` holds an alert in the ledger until `chime quiet off`.
    @Test("On PostgreSQL: Snooze and Done from the alert and the terminal, cancel closes a showing one-shot, quiet holds")
    func postgresAnswersAndQuietThroughDunst() async throws {
        try await withFreshCLIDatabase { url in
            let server = try NotificationServer()
            defer { server.stop() }
            let choice = server.directory.appendingPathComponent("choice")
            let dunst = try startDunst(choosingFrom: choice, server)
            defer {
                kill(dunst, SIGKILL)
                _ = NotificationServer.wait(dunst)
            }
            var environment = server.environment
            environment["CHIME_STORE"] = url.description
            let sandbox = try Sandbox(extra: environment)
            let runner = try sandbox.startRunner("--notifier", "desktop")
            #expect(await runner.waitUntilStarted(), "\(runner.stderr)")
            let store = PostgresStore(url)
            defer { store.client.reset() }
            func ledger(_ id: String) throws -> [(state: String, response: String?, snoozeOf: Int64?)] {
                try store.client.rows(
                    """
                    SELECT o.state, o.response, o.snooze_of_us FROM occurrence o JOIN reminder r ON r.key = o.reminder_key
                    WHERE r.id = \(id) ORDER BY o.due_us
                    """
                ).map { try $0.decode((String, String?, Int64?).self) }
            }
            func waitFor(_ condition: () throws -> Bool) async -> Bool {
                let deadline = Date().addingTimeInterval(20)
                while Date() < deadline {
                    if (try? condition()) == true { return true }
                    try? await Task.sleep(for: .milliseconds(50))
                }
                return (try? condition()) == true
            }

            // Shown with its actions
            #expect(try sandbox.chime("in", "1s", "Tea is ready", "--id", "tea").status == 0)
            #expect(await server.waitForLog { $0.contains(#"string "Tea is ready""#) }, "\(runner.stderr)")
            let call = try #require(server.monitorLog.components(separatedBy: "member=Notify\n").last)
            for expected in [#"string "done""#, #"string "Done""#, #"string "snooze""#, #"string "Snooze 10 min""#] {
                #expect(call.contains(expected), "\(expected) not in \(call)")
            }

            // Snooze from the alert: the answer and one re-alert in the ledger, and the alert says until when
            try "Snooze".write(to: choice, atomically: true, encoding: .utf8)
            try server.dunstctl("context")
            #expect(await waitFor { try ledger("tea").count == 2 }, "\(runner.stderr)")
            let snoozed = try ledger("tea")
            #expect(snoozed.map(\.response) == ["snooze", nil], "\(snoozed)")
            #expect(snoozed.map(\.state) == ["posted", "pending"], "\(snoozed)")
            #expect(snoozed[1].snoozeOf != nil)
            #expect(await server.waitForConfirmation { $0.summary.hasPrefix("Snoozed until ") && $0.body == "Tea is ready" })
            // `chime list` starts with the snoozed alert, as on SQLite
            let listed = try sandbox.chime("list", "--json")
            let waiting = try #require(try jsonObject(listed.stdout)["waiting"] as? [[String: Any]], "\(listed)")
            #expect(waiting.map { $0["id"] as? String } == ["tea"], "\(waiting)")

            // Brought forward to now (rather than waiting ten minutes), a runner shows it again
            try store.client.run("UPDATE occurrence SET due_us = chime_now_us() WHERE snooze_of_us IS NOT NULL AND state = 'pending'")
            try store.client.run("SELECT pg_notify(\(PostgresStore.changesChannel), 'test')")
            #expect(
                await server.waitForLog { NotificationServer.notifyCalls(in: $0).filter { $0.summary == "Tea is ready" }.count == 2 },
                "\(runner.stderr)"
            )
            #expect(await waitFor { try ledger("tea").map(\.state) == ["posted", "posted"] })

            // Done from the terminal: recorded, and the runner replaces the alert by "✓ Done"
            let done = try sandbox.chime("done", "tea")
            #expect(done.status == 0, "\(done.stderr)")
            #expect(done.stdout == "Done: tea  Tea is ready\n")
            #expect(await server.waitForConfirmation { $0.summary == "✓ Done" && $0.body == "Tea is ready" }, "\(runner.stderr)")
            #expect(try ledger("tea").map(\.response) == ["snooze", "done"])
            // Answered already (exit 4); nothing shown for an id (exit 3)
            let again = try sandbox.chime("done", "tea")
            #expect(again.status == 4, "\(again.stderr)")
            #expect(again.stderr.contains("was already answered (done)"), "\(again.stderr)")
            #expect(try sandbox.chime("in", "1h", "Poke", "--id", "poke").status == 0)
            #expect(try sandbox.chime("snooze", "poke").status == 3)

            // Cancel of a one-shot still showing closes it, and says it came too late for it (exit 8)
            #expect(try sandbox.chime("in", "1s", "Lamp", "--id", "lamp").status == 0)
            #expect(await server.waitForLog { $0.contains(#"string "Lamp""#) }, "\(runner.stderr)")
            #expect(await waitFor { try ledger("lamp").map(\.state) == ["posted"] })
            let closesBeforeCancel = server.monitorLog.components(separatedBy: "member=CloseNotification").count
            let cancel = try sandbox.chime("cancel", "lamp")
            #expect(cancel.status == 8, "\(cancel.stderr)")
            #expect(await server.waitForLog { $0.components(separatedBy: "member=CloseNotification").count > closesBeforeCancel })
            #expect(try ledger("lamp").map(\.response) == ["cancelled"])

            // Quiet for an hour: an alert due meanwhile is held in the ledger, and comes when it ends
            let quiet = try sandbox.chime("quiet", "1h", "--json")
            #expect(quiet.status == 0, "\(quiet.stderr)")
            #expect(try jsonObject(quiet.stdout)["quiet"] as? Bool == true, "\(quiet.stdout)")
            #expect(try sandbox.chime("in", "1s", "Held kettle", "--id", "kettle").status == 0)
            #expect(
                await waitFor {
                    let status = try sandbox.chime("quiet", "status", "--json")
                    return try jsonObject(status.stdout)["held"] as? Int == 1
                },
                "\(runner.stderr)"
            )
            #expect(!server.monitorLog.contains(#"string "Held kettle""#), "shown while quiet")
            #expect(try sandbox.chime("quiet", "off").status == 0)
            #expect(await server.waitForLog { $0.contains(#"string "Held kettle""#) }, "\(runner.stderr)")
            #expect(await waitFor { try ledger("kettle").map(\.state) == ["posted"] })
            #expect(await runner.terminate() == 0, "\(runner.stderr)")
        }
    }
}

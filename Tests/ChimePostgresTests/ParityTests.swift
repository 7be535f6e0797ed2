import ChimeCore
import ChimePostgres
import Foundation
import Synchronization
import Testing

/// What `chime import`, `chime edit` and `chime doctor` need of the PostgreSQL store,
/// as the SQLite store does them. Time is the database's, moved with ``PostgresStore/advanceClock(by:)``.
@Suite struct ParityTests {
    static let utc = TimeZone(identifier: "UTC")!

    static func stream(
        _ store: PostgresStore,
        _ chunks: [[NewReminder]],
        replace: Bool = true,
        pastOneShots: Bool = false
    )
        throws -> PostgresStore.Streamed
    {
        try store.scheduleStream(
            replace: replace,
            now: try store.databaseNow(),
            systemZone: utc,
            pastOneShots: pastOneShots,
            name: { "f.json: reminder \($0 + 1)" },
            produce: { deliver in for chunk in chunks { try deliver(chunk) } }
        )
    }

    @Test func aStreamIsScheduledInOneTransactionEachDueByTheDatabaseClock() async throws {
        try await withFreshDatabase { url in
            try await PostgresStore.withStore(url) { store in
                let now = try store.databaseNow()
                try store.schedule(NewReminder(id: "keep", title: "Old", trigger: .once(now.addingTimeInterval(60))), systemZone: Self.utc)
                let streamed = try Self.stream(
                    store,
                    [
                        [NewReminder(id: "a", title: "A", trigger: .once(now.addingTimeInterval(600)))],
                        [
                            NewReminder(title: "B", trigger: .interval(seconds: 3600, anchor: now)),
                            NewReminder(id: "keep", title: "New", trigger: .once(now.addingTimeInterval(900))),
                        ],
                    ]
                )
                #expect(streamed.count == 3 && streamed.replaced == 1 && streamed.ids.count == 3)
                let pending = try store.pending()
                #expect(pending.map(\.title).sorted() == ["A", "B", "New"])
                // Each has its first occurrence in the ledger, as schedule records it.
                #expect(try store.ledger(id: "a").map(\.state) == ["pending"])
                #expect(try store.ledger(id: "keep").map(\.state) == ["cancelled", "pending"])
                #expect(try store.pending().first { $0.id == "a" }?.nextDue == now.addingTimeInterval(600))
                try store.advanceClock(by: 601)
                #expect(try store.claim(owner: "r", lease: .seconds(30)).map(\.occurrence.reminderID) == ["a"])
            }
        }
    }

    @Test func aBadReminderLateInTheStreamChangesNothing() async throws {
        try await withFreshDatabase { url in
            try await PostgresStore.withStore(url) { store in
                let now = try store.databaseNow()
                try store.schedule(NewReminder(id: "keep", title: "Old", trigger: .once(now.addingTimeInterval(60))), systemZone: Self.utc)
                let good = (0..<5).map { NewReminder(id: "r\($0)", title: "R\($0)", trigger: .once(now.addingTimeInterval(600))) }
                var error: ChimeError?
                do {
                    _ = try Self.stream(
                        store,
                        [good, [NewReminder(id: "keep", title: "", trigger: .once(now.addingTimeInterval(600)))]]
                    )
                } catch let thrown as ChimeError { error = thrown }
                #expect(error?.code == .usage && error?.message.hasPrefix("f.json: reminder 6: ") == true, "\(String(describing: error))")
                // An id given twice: named by both positions, nothing scheduled.
                error = nil
                do { _ = try Self.stream(store, [good, [good[2]]]) } catch let thrown as ChimeError { error = thrown }
                #expect(
                    error?.message == "f.json: reminder 6: the id 'r2' is also reminder 3's: give each reminder its own id",
                    "\(String(describing: error))"
                )
                // A taken id without replace: a conflict, nothing scheduled.
                error = nil
                do {
                    _ = try Self.stream(
                        store,
                        [good, [NewReminder(id: "keep", title: "K", trigger: .once(now.addingTimeInterval(9)))]],
                        replace: false
                    )
                } catch let thrown as ChimeError { error = thrown }
                #expect(error?.code == .conflict, "\(String(describing: error))")
                #expect(try store.pending().map(\.id) == ["keep"])
                #expect(try store.count("SELECT count(*) FROM occurrence") == 1)
                #expect(try store.ledger(id: "keep").map(\.state) == ["pending"])
            }
        }
    }

    @Test func aPassedOneShotFiresAtItsTimeWithPastFireAndIsRefusedWithout() async throws {
        try await withFreshDatabase { url in
            try await PostgresStore.withStore(url) { store in
                let past = try store.databaseNow().addingTimeInterval(-120)
                let late = NewReminder(id: "late", title: "Late", trigger: .once(past))
                #expect(throws: ChimeError.self) { try Self.stream(store, [[late]]) }
                #expect(try Self.stream(store, [[late]], pastOneShots: true).count == 1)
                #expect(try store.ledger(id: "late").map(\.due) == [past.micros])
                #expect(try store.claim(owner: "r", lease: .seconds(30)).map(\.occurrence.reminderID) == ["late"])
            }
        }
    }

    @Test func anEditMovesAOneShotAndItsOccurrenceAndChangesItsText() async throws {
        try await withFreshDatabase { url in
            try await PostgresStore.withStore(url) { store in
                let now = try store.databaseNow()
                try store.schedule(NewReminder(id: "tea", title: "Tea", trigger: .once(now.addingTimeInterval(600))), systemZone: Self.utc)
                let moved = try store.edit(id: "tea", title: "Green tea", body: "3 min", at: now.addingTimeInterval(1200))
                #expect(moved.title == "Green tea" && moved.body == "3 min" && moved.nextDue == now.addingTimeInterval(1200))
                #expect(try store.reminder(id: "tea").title == "Green tea")
                // Not at the old time; once at the new.
                try store.advanceClock(by: 601)
                #expect(try store.claim(owner: "r", lease: .seconds(30)).isEmpty)
                // Back to a time it had (its occurrence cancelled by the first move): pending again.
                let back = try store.databaseNow().addingTimeInterval(60)
                try store.edit(id: "tea", title: nil, body: nil, at: back)
                try store.advanceClock(by: 61)
                let claimed = try store.claim(owner: "r", lease: .seconds(30))
                #expect(claimed.map(\.occurrence.reminderID) == ["tea"])
                #expect(try store.ledger(id: "tea").filter { $0.state != "cancelled" }.count == 1)

                // What the SQLite store refuses, refused the same way.
                try store.schedule(
                    NewReminder(id: "daily", title: "D", trigger: .interval(seconds: 86_400, anchor: now)),
                    systemZone: Self.utc
                )
                #expect(throws: ChimeError.self) { try store.edit(id: "daily", title: nil, body: nil, at: now.addingTimeInterval(9_999)) }
                #expect(throws: ChimeError.self) { try store.edit(id: "nosuch", title: "x", body: nil, at: nil) }
                #expect(throws: ChimeError.self) { try store.edit(id: "daily", title: "", body: nil, at: nil) }
                try store.schedule(NewReminder(id: "soon", title: "S", trigger: .once(now.addingTimeInterval(9_999))), systemZone: Self.utc)
                #expect(throws: ChimeError.self) { try store.edit(id: "soon", title: nil, body: nil, at: now.addingTimeInterval(-60)) }
                #expect(try store.reminder(id: "soon").nextDue == now.addingTimeInterval(9_999))
            }
        }
    }

    @Test(arguments: MarkPath.allCases)
    func anEditWhileARunnerPostsItNeverShowsItTwiceOrNever(_ path: MarkPath) async throws {
        try await withFreshDatabase { url in
            try await PostgresStore.withStore(url) { store in
                let now = try store.databaseNow()
                try store.schedule(NewReminder(id: "tea", title: "Tea", trigger: .once(now.addingTimeInterval(600))), systemZone: Self.utc)
                try store.advanceClock(by: 601)
                let claimed = try store.claim(owner: "a", lease: .seconds(30))
                #expect(claimed.count == 1)
                // A new time while it is being shown: refused, the claim left alone.
                var error: ChimeError?
                do {
                    try store.edit(id: "tea", title: nil, body: nil, at: try store.databaseNow().addingTimeInterval(3600))
                } catch let thrown as ChimeError { error = thrown }
                #expect(error?.code == .tooLate, "\(String(describing: error))")
                #expect(try store.ledger(id: "tea").map(\.state) == ["posting"])
                // A new title is taken (the runner shows the text it claimed).
                #expect(try store.edit(id: "tea", title: "Green tea", body: nil, at: nil).title == "Green tea")
                #expect(try store.stillWanted(claimed.map(\.occurrence.key), owner: "a").wanted == claimed.map(\.occurrence.key))
                #expect(try store.mark(claimed, via: path, owner: "a", noteID: "n").posted.count == 1)
                // Shown once: nothing left to claim, the reminder no longer pending.
                try store.advanceClock(by: 7200)
                #expect(try store.claim(owner: "b", lease: .seconds(30)).isEmpty)
                #expect(try store.pending().isEmpty)
            }
        }
    }

    /// The order of the locks: a runner's mark locks the occurrence, then the reminder it
    /// advances. An edit that locked the reminder first would deadlock with it (PostgreSQL
    /// aborts one: a mark lost, or an edit failing with SQLSTATE 40P01).
    @Test(.timeLimit(.minutes(1)))
    func anEditAsARunnerMarksItWaitsForTheMarkWithoutADeadlock() async throws {
        try await withFreshDatabase { url in
            let editor = PostgresStore(url, options: PostgresConnectionOptions(applicationName: "chime edit under test"))
            let runner = PostgresStore(url)
            let watcher = PostgresStore(url)
            defer { for store in [editor, runner, watcher] { store.client.reset() } }
            let now = try runner.databaseNow()
            try runner.schedule(NewReminder(id: "tea", title: "Tea", trigger: .once(now.addingTimeInterval(600))), systemZone: Self.utc)
            try runner.advanceClock(by: 601)
            let claimed = try runner.claim(owner: "r", lease: .seconds(30))
            #expect(claimed.count == 1)
            let outcome = Mutex<Result<Reminder, any Error>?>(nil)
            let done = DispatchSemaphore(value: 0)
            try runner.client.transaction { mark in
                // The mark's first step: the occurrence, locked until this commits.
                try mark.run("UPDATE occurrence SET state = 'posted', posted_at = now() WHERE state = 'posting'")
                let edit = Thread {
                    let result = Result { try editor.edit(id: "tea", title: nil, body: nil, at: now.addingTimeInterval(7200)) }
                    outcome.withLock { $0 = result }
                    done.signal()
                }
                edit.start()
                // Until the edit waits for a lock (polled, at most 10 s).
                var waiting = false
                for _ in 0..<1_000 where !waiting {
                    waiting =
                        try watcher.count(
                            """
                            SELECT count(*) FROM pg_stat_activity
                            WHERE application_name = 'chime edit under test' AND wait_event_type = 'Lock'
                            """
                        ) == 1
                    if !waiting { usleep(10_000) }
                }
                #expect(waiting)
                // Its second: the reminder, done.
                try mark.run("UPDATE reminder SET state = 'done', next_due_us = NULL WHERE id = 'tea'")
            }
            done.wait()
            let result = try #require(outcome.withLock { $0 })
            // Shown, so no longer pending: the edit is told so (never a deadlock, never a second occurrence).
            #expect(throws: ChimeError.self) { try result.get() }
            if case .failure(let error as ChimeError) = result { #expect(error.code == .notFound, "\(error)") }
            #expect(try runner.ledger(id: "tea").map(\.state) == ["posted"])
        }
    }

    @Test func pendingCountForDoctor() async throws {
        try await withFreshDatabase { url in
            try await PostgresStore.withStore(url) { store in
                #expect(try store.pendingCount() == 0)
                let now = try store.databaseNow()
                try store.schedule(NewReminder(id: "a", title: "A", trigger: .once(now.addingTimeInterval(60))), systemZone: Self.utc)
                try store.schedule(NewReminder(id: "b", title: "B", trigger: .once(now.addingTimeInterval(60))), systemZone: Self.utc)
                try store.cancel(id: "b")
                #expect(try store.pendingCount() == 1)
            }
        }
    }
}

extension ParityTests {
    @Test func anImportedAppsReminderKeepsItsAppIDAndItsOwnButtons() async throws {
        try await withFreshDatabase { url in
            try await PostgresStore.withStore(url) { store in
                let now = try store.databaseNow()
                let notes = NewReminder(
                    id: "notes",
                    title: "Notes",
                    trigger: .once(now.addingTimeInterval(600)),
                    presentation: Presentation(actions: [Note.Action(key: "open", label: "Open")]),
                    appID: "org.example.Notes"
                )
                #expect(try Self.stream(store, [[notes]]).count == 1)
                let stored = try #require(try store.pending().first { $0.id == "notes" })
                #expect(stored.appID == "org.example.Notes")
                #expect(stored.presentation.actions == [Note.Action(key: "open", label: "Open")])
                var bad = notes
                bad.id = "bad"
                bad.appID = "notes"
                let error = try #require(throws: ChimeError.self) { try Self.stream(store, [[bad]]) }
                #expect(error.message.contains("invalid app-id 'notes'"), "\(error.message)")
                #expect(try store.pending().map(\.id) == ["notes"])
            }
        }
    }
}

import ChimeCore
import ChimePostgres
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The PostgreSQL store against a real server (scripts/postgres-server, started once per run by
/// scripts/test), each test on a database of its own. Time is the database's: tests move it by
/// rewriting stored instants (``PostgresStore/advanceClock(by:)``) or ending leases in SQL, and
/// never sleep for it; the one test of a real lease waits for a 50 ms lease, polling, bounded.
@Suite struct PostgresStoreTests {
    static let utc = TimeZone(identifier: "UTC")!

    @Test func missingServerFailsWithOneLineSayingHowToStartIt() throws {
        #expect {
            _ = try TestServer.url(environment: [:])
        } throws: { error in
            let text = String(describing: error)
            return text.contains("CHIME_TEST_POSTGRES_URL is not set") && text.contains("scripts/postgres-server start")
                && !text.contains("\n")
        }
    }

    @Test func migrationsAreNamedForwardOnlyAndIdempotent() async throws {
        try await withFreshDatabase(migrated: false) { url in
            let names = PostgresSchema.migrations.map(\.name)
            // Two `store init`s at once, on two clients: each migration is applied once.
            async let first = PostgresStore.withStore(url) { try $0.migrate() }
            async let second = PostgresStore.withStore(url) { try $0.migrate() }
            let (a, b) = try await (first, second)
            #expect((a + b).sorted() == names.sorted())
            #expect(a.isEmpty || b.isEmpty)
            try await PostgresStore.withStore(url) { store in
                #expect(try store.migrate() == [])
                #expect(try store.migrate() == [])
                #expect(try store.appliedMigrations() == names)
                #expect(try store.count("SELECT count(*) FROM chime_migrations") == names.count)
                // A database made by a newer Chime: refused, nothing changed.
                try store.client.run("INSERT INTO chime_migrations (name) VALUES ('9999-from-the-future')")
                #expect {
                    try store.migrate()
                } throws: { error in
                    (error as? ChimeError)?.code == .store && "\(error)".contains("9999-from-the-future")
                }
                #expect(try store.count("SELECT count(*) FROM chime_migrations") == names.count + 1)
            }
        }
    }

    @Test func scheduleListAndCancelRoundTrip() async throws {
        try await withFreshDatabase { url in
            try await PostgresStore.withStore(url) { store in
                let now = try store.databaseNow()
                let eight = LocalTime(hour: 8, minute: 0)!
                let triggers: [(String, Trigger)] = [
                    ("tea", .once(now.addingTimeInterval(3600))),
                    ("stretch", .interval(seconds: 1800, anchor: now)),
                    ("standup", .weekly(times: [eight], days: .weekdays, zone: .fixed("Europe/Berlin"))),
                    ("rent", .calendar(CalendarRule(month: nil, day: 1, times: [eight], zone: .floating))),
                    ("pills", .bounded(.weekly(times: [eight], days: .everyDay, zone: .floating), .count(5, start: now))),
                ]
                var scheduled: [Reminder] = []
                for (id, trigger) in triggers {
                    scheduled.append(
                        try store.schedule(NewReminder(id: id, title: "Do \(id)", body: "b", trigger: trigger), systemZone: Self.utc)
                            .reminder
                    )
                }
                let generated = try store.schedule(
                    NewReminder(title: "No id", trigger: .once(now.addingTimeInterval(60))),
                    systemZone: Self.utc
                ).reminder
                #expect(generated.id.hasPrefix("r"))
                let pending = try store.pending()
                #expect(Set(pending.map(\.id)) == Set(triggers.map(\.0) + [generated.id]))
                // The trigger comes back as it went in (ChimeCore's TriggerColumns, both ways).
                for reminder in scheduled {
                    let back = try #require(pending.first { $0.id == reminder.id })
                    #expect(back.trigger == reminder.trigger)
                    #expect(back.nextDue == reminder.nextDue)
                    #expect(back.title == reminder.title && back.body == "b")
                }
                #expect(pending.map(\.nextDue) == pending.map(\.nextDue).sorted { ($0 ?? .distantFuture) < ($1 ?? .distantFuture) })

                let cancelled = try store.cancel(id: "tea")
                #expect(cancelled.cancelled.id == "tea" && cancelled.inFlight == 0)
                #expect(try store.pending().contains { $0.id == "tea" } == false)
                #expect(try store.ledger(id: "tea").map(\.state) == ["cancelled"])
                #expect {
                    try store.cancel(id: "tea")
                } throws: { error in
                    (error as? ChimeError)?.code == .notFound && "\(error)".contains("it was cancelled")
                }
                #expect {
                    try store.cancel(id: "nothing")
                } throws: { error in
                    (error as? ChimeError)?.code == .notFound
                }
                // Same id again: a conflict without replace; replaced with it.
                let again = NewReminder(id: "stretch", title: "Stretch again", trigger: .once(now.addingTimeInterval(600)))
                #expect {
                    try store.schedule(again, replace: false, systemZone: Self.utc)
                } throws: { error in
                    (error as? ChimeError)?.code == .conflict
                }
                try store.schedule(again, systemZone: Self.utc)
                #expect(try store.pending().filter { $0.id == "stretch" }.map(\.title) == ["Stretch again"])
                #expect(try store.ledger(id: "stretch").map(\.state).sorted() == ["cancelled", "pending"])
                // A time already past (by the database's clock) never fires.
                #expect {
                    try store.schedule(NewReminder(title: "Late", trigger: .once(now.addingTimeInterval(-1))), systemZone: Self.utc)
                } throws: { error in
                    (error as? ChimeError)?.code == .usage
                }
            }
        }
    }

    @Test func twoHostsSchedulingTheSameIdAtOnceGetOneReminderAndOneConflict() async throws {
        try await withFreshDatabase { url in
            try await PostgresStore.withStore(url) { a in
                try await PostgresStore.withStore(url) { b in
                    let now = try a.databaseNow()
                    for round in 0..<20 {
                        let new = NewReminder(id: "same-\(round)", title: "Same", trigger: .once(now.addingTimeInterval(600)))
                        @Sendable func attempt(_ store: PostgresStore) async throws -> Bool {
                            do {
                                try store.schedule(new, replace: false, systemZone: Self.utc)
                                return true
                            } catch let error as ChimeError where error.code == .conflict {
                                return false
                            }
                        }
                        async let first = attempt(a)
                        async let second = attempt(b)
                        let outcomes = try await [first, second]
                        #expect(outcomes.filter { $0 }.count == 1, "round \(round)")
                    }
                    #expect(try a.pending().count == 20)
                }
            }
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func scheduleAndCancelNotifyTheChangesChannel() async throws {
        try await withFreshDatabase { url in
            try await PostgresStore.withStore(url) { store in
                // A session of its own listening first, then the changes.
                let listener = PostgresStore(url)
                try listener.client.withSession { try $0.listen(PostgresStore.changesChannel) }
                let now = try store.databaseNow()
                try store.schedule(NewReminder(id: "ping", title: "Ping", trigger: .once(now.addingTimeInterval(60))), systemZone: Self.utc)
                try store.cancel(id: "ping")
                var payloads: [String] = []
                while payloads.count < 2 {
                    let received = try listener.client.withSession { session in
                        var fd = pollfd(fd: session.socket, events: Int16(POLLIN), revents: 0)
                        _ = poll(&fd, 1, 10_000)
                        return try session.notifications()
                    }
                    #expect(received.allSatisfy { $0.channel == PostgresStore.changesChannel })
                    payloads += received.map(\.payload)
                }
                #expect(payloads == ["ping", "ping"])
            }
        }
    }

    @Test func timeComparisonsUseTheDatabaseClock() async throws {
        try await withFreshDatabase { url in
            try await PostgresStore.withStore(url) { store in
                let now = try store.databaseNow()
                // Ten minutes ahead and moved on in steps of five: real time passing between the
                // statements (seconds, on a loaded machine) cannot bring it due before its step.
                let due = now.addingTimeInterval(600)
                try store.schedule(NewReminder(id: "soon", title: "Soon", trigger: .once(due)), systemZone: Self.utc)
                #expect(try store.nextDeadlines().due == Date(micros: due.micros))
                #expect(try store.claimDue(owner: "a", lease: .seconds(30)).isEmpty)
                try store.advanceClock(by: 300)
                #expect(try store.claimDue(owner: "a", lease: .seconds(30)).isEmpty)
                try store.advanceClock(by: 300.5)
                let claimed = try store.claimDue(owner: "a", lease: .seconds(30))
                #expect(claimed.map(\.reminderID) == ["soon"])
                // The lease runs on the database's clock too: 30 s from its now, not yet reapable.
                #expect(try store.reapExpiredLeases() == 0)
                let lease = try #require(try store.nextDeadlines().leaseEnds)
                let dbNow = try store.databaseNow()
                #expect(abs(lease.timeIntervalSince(dbNow) - 30) < 5)
            }
        }
    }

    @Test func aRealShortLeaseExpiresOnTheDatabaseClockAndIsReaped() async throws {
        try await withFreshDatabase { url in
            try await PostgresStore.withStore(url) { store in
                let now = try store.databaseNow()
                try store.schedule(
                    NewReminder(id: "x", title: "X", trigger: .once(now.addingTimeInterval(600))),
                    systemZone: Self.utc
                )
                try store.advanceClock(by: 601)
                #expect(try store.claimDue(owner: "a", lease: .milliseconds(50)).count == 1)
                // Polled, bounded: a 50 ms lease on the database's clock is reaped within 5 s.
                var reaped = 0
                let clock = ContinuousClock()
                let deadline = clock.now.advanced(by: .seconds(5))
                while reaped == 0, clock.now < deadline {
                    reaped = try store.reapExpiredLeases()
                    if reaped == 0 { try await Task.sleep(for: .milliseconds(10)) }
                }
                // Once more after the deadline: under a loaded test run this task may not have
                // run at all for the whole wait (its statements block a thread of Swift's pool).
                if reaped == 0 { reaped = try store.reapExpiredLeases() }
                #expect(reaped == 1)
                #expect(try store.ledger(id: "x").map(\.state) == ["pending"])
            }
        }
    }

    @Test func twoConcurrentClaimersNeverClaimTheSameOccurrence() async throws {
        try await withFreshDatabase { url in
            let rounds = 4
            let perRound = 250
            let limit = 7
            try await PostgresStore.withStore(url) { seeder in
                for round in 0..<rounds {
                    let now = try seeder.databaseNow()
                    for index in 0..<perRound {
                        let due = now.addingTimeInterval(600 + Double(index % 10) / 1000)
                        try seeder.schedule(
                            NewReminder(id: "r\(round)-\(index)", title: "R", trigger: .once(due)),
                            systemZone: Self.utc
                        )
                    }
                    try seeder.advanceClock(by: 601)
                    // Two runners, each on a client (and connections) of its own, claiming in small batches.
                    @Sendable func drain(_ owner: String) async throws -> [OccurrenceKey] {
                        try await PostgresStore.withStore(url) { store in
                            var keys: [OccurrenceKey] = []
                            while true {
                                let batch = try store.claimDue(owner: owner, lease: .seconds(60), limit: limit)
                                #expect(batch.count <= limit)
                                if batch.isEmpty { return keys }
                                keys += batch.map(\.key)
                            }
                        }
                    }
                    async let a = drain("a\(round)")
                    async let b = drain("b\(round)")
                    let (keysA, keysB) = try await (a, b)
                    let claimedTwice = Set(keysA).intersection(keysB).count
                    #expect(claimedTwice == 0, "round \(round): \(claimedTwice) occurrences claimed by both runners")
                    #expect(keysA.count + keysB.count == perRound, "round \(round)")
                    #expect(Set(keysA + keysB).count == perRound)
                    let posting = try seeder.count("SELECT count(*) FROM occurrence WHERE state = 'posting'")
                    #expect(posting == perRound * (round + 1))
                }
            }
        }
    }

    @Test(arguments: MarkPath.allCases)
    func aFencedMarkAfterTheLeaseWasReapedAndReclaimedUpdatesNothingAndIsCounted(_ path: MarkPath) async throws {
        try await withFreshDatabase { url in
            try await PostgresStore.withStore(url) { a in
                try await PostgresStore.withStore(url) { b in
                    let now = try a.databaseNow()
                    try a.schedule(
                        NewReminder(id: "once", title: "Once", trigger: .once(now.addingTimeInterval(600))),
                        systemZone: Self.utc
                    )
                    try a.advanceClock(by: 601)
                    let claimedA = try a.claim(owner: "runner-a", lease: .seconds(30))
                    #expect(claimedA.count == 1)
                    // Runner A stalls past its lease; B reaps it and claims the occurrence again.
                    try a.expireLeases()
                    #expect(try b.reapExpiredLeases() == 1)
                    let claimedB = try b.claim(owner: "runner-b", lease: .seconds(30))
                    #expect(claimedB.map(\.occurrence.key) == claimedA.map(\.occurrence.key))
                    // A wakes and marks: fenced, nothing written, counted as a lost lease.
                    let markA = try a.mark(claimedA, via: path, owner: "runner-a", noteID: "note-a")
                    #expect(markA.posted.isEmpty)
                    #expect(markA.leaseLost == claimedA.map(\.occurrence.key))
                    let markB = try b.mark(claimedB, via: path, owner: "runner-b", noteID: "note-b")
                    #expect(markB.posted == claimedB.map(\.occurrence.key) && markB.leaseLost.isEmpty)
                    let ledger = try a.ledger(id: "once")
                    #expect(ledger.map(\.state) == ["posted"])
                    #expect(ledger.map(\.note) == ["note-b"])
                    #expect(try a.pending().isEmpty)
                    // A mark repeated by the holder itself after it was recorded changes nothing either.
                    let again = try b.mark(claimedB, via: path, owner: "runner-b", noteID: "note-b2")
                    #expect(again.posted.isEmpty && again.leaseLost.count == 1)
                }
            }
        }
    }

    @Test(arguments: MarkPath.allCases)
    func aCancelWhileAnOccurrenceIsBeingPostedLeavesItToItsRunnerAndTheReaperCancelsItOnceExpired(_ path: MarkPath) async throws {
        try await withFreshDatabase { url in
            try await PostgresStore.withStore(url) { store in
                let now = try store.databaseNow()
                for id in ["shown", "stalled"] {
                    try store.schedule(
                        NewReminder(id: id, title: id, trigger: .once(now.addingTimeInterval(600))),
                        systemZone: Self.utc
                    )
                }
                try store.advanceClock(by: 601)
                let claimed = try store.claim(owner: "a", lease: .seconds(30))
                #expect(claimed.map(\.occurrence.reminderID).sorted() == ["shown", "stalled"])
                // Cancelled from another host while being posted: in flight, not pulled from under the runner.
                for id in ["shown", "stalled"] {
                    #expect(try store.cancel(id: id).inFlight == 1)
                    #expect(try store.ledger(id: id).map(\.state) == ["posting"])
                }
                // The runner showed one: the ledger says so (what a person saw).
                let shown = claimed.filter { $0.occurrence.reminderID == "shown" }
                #expect(try store.mark(shown, via: path, owner: "a", noteID: "n").posted == shown.map(\.occurrence.key))
                // The other's runner died: once its lease is over, the reaper cancels it rather than
                // returning it to be claimed.
                try store.expireLeases()
                #expect(try store.reapExpiredLeases() == 1)
                #expect(try store.ledger(id: "stalled").map(\.state) == ["cancelled"])
                #expect(try store.ledger(id: "shown").map(\.state) == ["posted"])
                #expect(try store.claim(owner: "b", lease: .seconds(30)).isEmpty)
                #expect(try store.pending().isEmpty)
            }
        }
    }

    @Test(arguments: MarkPath.allCases)
    func aRecurringReminderGetsItsNextOccurrenceExactlyOnceWhenTwoOwnersRace(_ path: MarkPath) async throws {
        try await withFreshDatabase { url in
            try await PostgresStore.withStore(url) { a in
                try await PostgresStore.withStore(url) { b in
                    let now = try a.databaseNow()
                    let scheduled = try a.schedule(
                        NewReminder(id: "water", title: "Water", trigger: .interval(seconds: 60, anchor: now)),
                        systemZone: Self.utc
                    ).reminder
                    var due = try #require(scheduled.nextDue).micros
                    let rounds = 25
                    for round in 0..<rounds {
                        try a.advanceClock(by: 60)
                        due -= 60_000_000
                        // Both hold a claim on the same occurrence: A's expired and was reaped, B took it.
                        let claimedA = try a.claim(owner: "a", lease: .seconds(30))
                        #expect(claimedA.map(\.occurrence.key.dueMicros) == [due], "round \(round)")
                        try a.expireLeases()
                        async let reapA = a.reapExpiredLeases()
                        async let reapB = b.reapExpiredLeases()
                        #expect(try await reapA + reapB == 1)
                        let claimedB = try b.claim(owner: "b", lease: .seconds(30))
                        #expect(claimedB.map(\.occurrence.key) == claimedA.map(\.occurrence.key))
                        // Both mark at once.
                        async let markA = a.mark(claimedA, via: path, owner: "a", noteID: "a")
                        async let markB = b.mark(claimedB, via: path, owner: "b", noteID: "b")
                        let (resultA, resultB) = try await (markA, markB)
                        #expect(resultA.posted.isEmpty && resultA.leaseLost.count == 1)
                        #expect(resultB.posted.count == 1 && resultB.materialized == 1)
                        due += 60_000_000
                    }
                    let ledger = try a.ledger(id: "water")
                    #expect(ledger.count == rounds + 1)
                    #expect(ledger.filter { $0.state == "posted" }.count == rounds)
                    #expect(ledger.filter { $0.state == "pending" }.map(\.due) == [due])
                    #expect(Set(ledger.map(\.due)).count == ledger.count)
                    #expect(try a.pending().map(\.nextDue) == [Date(micros: due)])
                }
            }
        }
    }

    @Test(arguments: MarkPath.allCases)
    func aRecurringReminderMarkedTwiceByRacingMarksRecordsItsNextOccurrenceOnce(_ path: MarkPath) async throws {
        // Without any stale owner: two marks of the same lease at once (a retried request) still
        // record one next occurrence, the ledger's key deciding.
        try await withFreshDatabase { url in
            try await PostgresStore.withStore(url) { a in
                try await PostgresStore.withStore(url) { b in
                    let now = try a.databaseNow()
                    try a.schedule(
                        NewReminder(id: "tick", title: "Tick", trigger: .interval(seconds: 10, anchor: now)),
                        systemZone: Self.utc
                    )
                    for _ in 0..<20 {
                        try a.advanceClock(by: 10)
                        let claimed = try a.claim(owner: "same", lease: .seconds(30))
                        #expect(claimed.count == 1)
                        async let one = a.mark(claimed, via: path, owner: "same", noteID: "1")
                        async let two = b.mark(claimed, via: path, owner: "same", noteID: "2")
                        let (r1, r2) = try await (one, two)
                        #expect(r1.posted.count + r2.posted.count == 1)
                        #expect(r1.materialized + r2.materialized == 1)
                    }
                    let ledger = try a.ledger(id: "tick")
                    #expect(ledger.count == 21 && ledger.filter { $0.state == "pending" }.count == 1)
                }
            }
        }
    }

    /// One case of ``theOneStatementMarkLeavesWhatTheTransactionLeaves(_:)``: a trigger, and
    /// how far the database's clock moves before each claim and mark.
    struct MarkCase: Sendable, CustomTestStringConvertible {
        var name: String
        var trigger: @Sendable (Date) -> Trigger
        var steps: [Double]
        /// The reminder's state at the end.
        var state: String
        var testDescription: String { name }

        static let all = [
            MarkCase(name: "a one-shot ends", trigger: { .once($0.addingTimeInterval(600)) }, steps: [601], state: "done"),
            MarkCase(
                name: "every minute, marked on time",
                trigger: { .interval(seconds: 60, anchor: $0) },
                steps: [60, 60, 60],
                state: "pending"
            ),
            // 90 s after the due: the next one (60 s after it) is already past, the one after is not.
            MarkCase(
                name: "every minute, marked 90 s late",
                trigger: { .interval(seconds: 60, anchor: $0) },
                steps: [150],
                state: "pending"
            ),
            // Ten minutes late: the next ones past the database's now fold into the latest.
            MarkCase(
                name: "every minute, caught up after ten",
                trigger: { .interval(seconds: 60, anchor: $0) },
                steps: [60, 600, 60],
                state: "pending"
            ),
        ]
    }

    /// The runner's mark (one statement, its reminder's next occurrence worked out from the
    /// trigger read with the claim) leaves the ledger and the reminder as the transaction does,
    /// and says the same: two reminders alike, one marked each way, compared after every mark.
    @Test(arguments: MarkCase.all)
    func theOneStatementMarkLeavesWhatTheTransactionLeaves(_ markCase: MarkCase) async throws {
        try await withFreshDatabase { url in
            try await PostgresStore.withStore(url) { store in
                let now = try store.databaseNow()
                for id in ["transaction", "statement"] {
                    try store.schedule(NewReminder(id: id, title: id, trigger: markCase.trigger(now)), systemZone: Self.utc)
                }
                for (round, step) in markCase.steps.enumerated() {
                    try store.advanceClock(by: step)
                    let claimed = try store.claim(owner: "o", lease: .seconds(30))
                    #expect(claimed.map(\.occurrence.reminderID).sorted() == ["statement", "transaction"], "round \(round)")
                    var results: [String: MarkResult] = [:]
                    for one in claimed {
                        let id = one.occurrence.reminderID
                        let path: MarkPath = id == "statement" ? .oneStatement : .transaction
                        results[id] = try store.mark([one], via: path, owner: "o", noteID: "n")
                    }
                    let (viaTransaction, viaStatement) = (try #require(results["transaction"]), try #require(results["statement"]))
                    #expect(viaStatement.posted.count == 1 && viaStatement.leaseLost.isEmpty, "round \(round)")
                    #expect(viaStatement.posted.count == viaTransaction.posted.count, "round \(round)")
                    #expect(viaStatement.materialized == viaTransaction.materialized, "round \(round)")
                    #expect(try store.markedState(id: "statement") == store.markedState(id: "transaction"), "round \(round)")
                }
                let end = try store.markedState(id: "statement")
                #expect(end.reminder.state == markCase.state)
                #expect(end.reminder.ended == (markCase.state == "done"))
                #expect(end.ledger.filter { $0.state == "posted" }.count == markCase.steps.count)
            }
        }
    }
}

@Suite struct PostgresURLTests {
    @Test func aSocketDirectoryInTheHostParameter() throws {
        let url = try PostgresURL("postgresql:///chime?host=/tmp/pg%20dir&user=postgres", environment: [:])
        #expect(url.endpoint == .socket(path: "/tmp/pg dir/.s.PGSQL.5432"))
        #expect(url.user == "postgres" && url.database == "chime" && url.password == nil)
    }

    @Test func aTCPHostAndThePasswordFromTheEnvironment() throws {
        let url = try PostgresURL("postgres://chime@db.example:6543/reminders", environment: ["PGPASSWORD": "s3cret"])
        #expect(url.endpoint == .tcp(host: "db.example", port: 6543))
        #expect(url.user == "chime" && url.database == "reminders" && url.password == "s3cret")
    }

    @Test(arguments: [
        "mysql:///chime", "postgresql:///chime?sslmode=require",
        "postgresql:///chime?port=http", "postgresql://host:0/chime", "postgresql:///a/b",
    ])
    func badURLsAreRefusedNamingTheValue(_ text: String) {
        #expect {
            _ = try PostgresURL(text, environment: [:])
        } throws: { error in
            guard let error = error as? ChimeError else { return false }
            return error.code == .usage && error.message.contains("'\(text)'") && error.message.contains("expected")
        }
    }

    @Test(arguments: [
        ("postgresql://u:s3cret@host/chime", "'postgresql://u:***@host/chime'"),
        ("postgresql:///chime?user=u&password=s3cret", "'postgresql:///chime?user=u&password=***'"),
        ("postgresql://u:s3/cret@host/chime", "'postgresql://u:***@host/chime'"),
    ])
    func aPasswordIsRefusedAndNamedRedacted(_ text: String, _ shown: String) {
        #expect {
            _ = try PostgresURL(text, environment: [:])
        } throws: { error in
            guard let error = error as? ChimeError else { return false }
            return error.code == .usage && error.message.contains(shown) && !error.message.contains("s3cret")
        }
    }
}

/// How a test records a post: the transaction (``PostgresStore/markPosted(_:owner:noteID:systemZone:)-([OccurrenceKey],_,_,_)``,
/// what the runner falls back to) or the one statement the runner sends.
enum MarkPath: String, CaseIterable, Sendable {
    case transaction, oneStatement
}

extension PostgresStore {
    /// Records `claimed` as posted by `owner` along `path` (one at a time on the one statement).
    func mark(_ claimed: [ClaimedOccurrence], via path: MarkPath, owner: String, noteID: String) throws -> MarkResult {
        let utc = TimeZone(identifier: "UTC")!
        switch path {
        case .transaction:
            return try markPosted(claimed.map(\.occurrence.key), owner: owner, noteID: noteID, systemZone: utc)
        case .oneStatement:
            var total = MarkResult()
            for one in claimed {
                let result = try markPosted(one, owner: owner, noteID: noteID, systemZone: utc)
                total.posted += result.posted
                total.leaseLost += result.leaseLost
                total.materialized += result.materialized
            }
            return total
        }
    }

    /// What a mark leaves of reminder `id`: its row (state, next and last due, whether it ended)
    /// and its ledger (due, state, missed count), for comparing two reminders alike.
    func markedState(id: String) throws -> MarkedState {
        var state = MarkedState()
        for row in try client.rows("SELECT state, next_due_us, last_due_us, ended_us IS NOT NULL FROM reminder WHERE id = \(id)") {
            let (reminderState, next, last, ended) = try row.decode((String, Int64?, Int64?, Bool).self)
            state.reminder = MarkedState.Row(state: reminderState, next: next, last: last, ended: ended)
        }
        let rows = try client.rows(
            """
            SELECT o.due_us, o.state, o.missed_count FROM occurrence o JOIN reminder r ON r.key = o.reminder_key
            WHERE r.id = \(id) ORDER BY o.due_us
            """
        )
        for row in rows {
            let (due, occurrenceState, missed) = try row.decode((Int64, String, Int).self)
            state.ledger.append(MarkedState.Occurrence(due: due, state: occurrenceState, missed: missed))
        }
        return state
    }
}

struct MarkedState: Equatable {
    struct Row: Equatable {
        var state = ""
        var next: Int64?
        var last: Int64?
        var ended = false
    }
    struct Occurrence: Equatable {
        var due: Int64
        var state: String
        var missed: Int
    }
    var reminder = Row()
    var ledger: [Occurrence] = []
}

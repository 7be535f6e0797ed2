import ChimeCore
import ChimePostgres
import Foundation
import Testing

/// The store's side of the runner loop (migration 0002): channels, failed posts with a retry
/// time, the check just before a post, and the deadlines on the database's clock.
@Suite struct PostgresChannelRetryTests {
    static let utc = TimeZone(identifier: "UTC")!

    @Test func theSecondMigrationAddsChannelsAndRetriesAndKeepsTheFirst() async throws {
        try await withFreshDatabase { url in
            try await PostgresStore.withStore(url) { store in
                #expect(
                    try store.appliedMigrations() == [
                        "0001-reminders-and-ledger", "0002-channels-and-retries", "0003-pending-retries-index",
                        "0004-pending-by-due-then-claimed", "0005-presentation", "0006-answers-and-quiet",
                        "0007-commands", "0008-app-id-and-actions",
                    ]
                )
                let columns = try store.count(
                    """
                    SELECT count(*) FROM information_schema.columns
                    WHERE (table_name, column_name) IN (('reminder', 'channel'), ('occurrence', 'retry_at'), ('occurrence', 'last_error'))
                    """
                )
                #expect(columns == 3)
            }
        }
    }

    @Test(arguments: ["", "Desk", "desk top", "désk", "a/b", String(repeating: "x", count: 65), "line\nbreak"])
    func badChannelsAreRefusedNamingTheValue(_ channel: String) async throws {
        #expect {
            try PostgresStore.validateChannel(channel)
        } throws: { error in
            guard let error = error as? ChimeError else { return false }
            // The value named as typed, a control character escaped (ChimeError keeps it one line).
            let named = "'\(ChimeError.escapingControlCharacters(channel))'"
            return error.code == .usage && error.message.contains(named) && error.message.contains("a-z, 0-9")
                && !error.message.contains("\n")
        }
    }

    @Test func aChannelIsStoredAndReadBack() async throws {
        try await withFreshDatabase { url in
            try await PostgresStore.withStore(url) { store in
                let now = try store.databaseNow()
                for channel in ["desk", "ops.pager", "a-b_c.9", String(repeating: "z", count: 64)] {
                    try PostgresStore.validateChannel(channel)
                }
                try store.schedule(
                    NewReminder(id: "plain", title: "P", trigger: .once(now.addingTimeInterval(60))),
                    systemZone: Self.utc
                )
                try store.schedule(
                    NewReminder(id: "paged", title: "Q", trigger: .once(now.addingTimeInterval(120))),
                    systemZone: Self.utc,
                    channel: "ops.pager"
                )
                #expect {
                    try store.schedule(
                        NewReminder(id: "bad", title: "B", trigger: .once(now.addingTimeInterval(60))),
                        systemZone: Self.utc,
                        channel: "Ops"
                    )
                } throws: { error in
                    (error as? ChimeError)?.code == .usage && "\(error)".contains("'Ops'")
                }
                let pending = try store.pendingWithChannels()
                #expect(pending.map(\.reminder.id) == ["plain", "paged"])
                #expect(pending.map(\.channel) == ["default", "ops.pager"])
                #expect(try store.pending().map(\.id) == ["plain", "paged"])
            }
        }
    }

    @Test func aClaimTakesOnlyTheChannelsItServes() async throws {
        try await withFreshDatabase { url in
            try await PostgresStore.withStore(url) { store in
                let now = try store.databaseNow()
                for (index, channel) in ["default", "desk", "ops", "desk"].enumerated() {
                    try store.schedule(
                        NewReminder(id: "\(channel)-\(index)", title: "T", trigger: .once(now.addingTimeInterval(600 + Double(index)))),
                        systemZone: Self.utc,
                        channel: channel
                    )
                }
                try store.advanceClock(by: 610)
                let desk = try store.claimDue(owner: "a", lease: .seconds(30), channels: ["desk", "nothing-here"])
                #expect(desk.map(\.reminderID) == ["desk-1", "desk-3"])
                #expect(try store.claimDue(owner: "a", lease: .seconds(30), channels: ["desk"]).isEmpty)
                #expect(try store.claimDue(owner: "b", lease: .seconds(30)).map(\.reminderID) == ["default-0"])
                #expect(
                    try store.claimDue(owner: "c", lease: .seconds(30), channels: ["ops", "default"]).map(\.reminderID) == ["ops-2"]
                )
            }
        }
    }

    @Test func aFailedPostIsFencedGoesBackWithARetryTimeAndIsClaimedAgainOnlyAfterIt() async throws {
        try await withFreshDatabase { url in
            try await PostgresStore.withStore(url) { store in
                let now = try store.databaseNow()
                try store.schedule(
                    NewReminder(id: "hook", title: "H", trigger: .once(now.addingTimeInterval(600))),
                    systemZone: Self.utc
                )
                try store.advanceClock(by: 601)
                let keys = try store.claimDue(owner: "a", lease: .seconds(30)).map(\.key)
                #expect(keys.count == 1)
                // Not the lease holder: nothing written, the key returned as lost.
                #expect(try store.markFailed(keys, owner: "b", retryAfter: .seconds(60), error: "x") == keys)
                #expect(try store.ledger(id: "hook").map(\.state) == ["posting"])
                // The holder: back to pending, one attempt, ready in a minute by the database's clock.
                #expect(try store.markFailed(keys, owner: "a", retryAfter: .seconds(60), error: "HTTP 503").isEmpty)
                let ledger = try store.ledger(id: "hook")
                #expect(ledger.map(\.state) == ["pending"] && ledger.map(\.owner) == [nil])
                #expect(try store.count("SELECT count(*) FROM occurrence WHERE attempts = 1 AND last_error = 'HTTP 503'") == 1)
                #expect(try store.claimDue(owner: "a", lease: .seconds(30)).isEmpty)
                let deadlines = try store.nextDeadlines()
                let retryIn = try #require(deadlines.due).timeIntervalSince(deadlines.now)
                #expect(retryIn > 55 && retryIn <= 60)
                // Once the retry time has come: claimed again, saying it is the second attempt.
                try store.advanceClock(by: 61)
                let again = try store.claimDue(owner: "b", lease: .seconds(30))
                #expect(again.map(\.reminderID) == ["hook"] && again.map(\.attempts) == [1])
                // A second mark of the same failure by the old holder changes nothing.
                let late = again.map(\.key)
                #expect(try store.markFailed(late, owner: "a", retryAfter: .seconds(60), error: "late") == late)
            }
        }
    }

    /// `oneAtATime`: each key checked alone, as the runner does before each post (a prepared
    /// statement of its own); otherwise all in one call.
    @Test(arguments: [false, true])
    func theCheckBeforeThePostTellsWantedCancelledAndLostApartAndRecordsTheCancelled(oneAtATime: Bool) async throws {
        @Sendable func stillWanted(_ store: PostgresStore, _ keys: [OccurrenceKey]) async throws -> PostgresStore.PostCheck {
            guard oneAtATime else { return try store.stillWanted(keys, owner: "a") }
            var check = PostgresStore.PostCheck()
            for key in keys {
                let one = try store.stillWanted([key], owner: "a")
                #expect(one.wanted.count + one.cancelled.count + one.leaseLost.count == 1)
                check.wanted += one.wanted
                check.cancelled += one.cancelled
                check.leaseLost += one.leaseLost
            }
            return check
        }
        try await withFreshDatabase { url in
            try await PostgresStore.withStore(url) { store in
                let now = try store.databaseNow()
                for (index, id) in ["keep", "drop", "moved", "taken"].enumerated() {
                    try store.schedule(
                        NewReminder(id: id, title: id, trigger: .once(now.addingTimeInterval(600 + Double(index) / 10))),
                        systemZone: Self.utc
                    )
                }
                try store.advanceClock(by: 601)
                let claimed = try store.claimDue(owner: "a", lease: .seconds(30), limit: 3)
                #expect(claimed.map(\.reminderID) == ["keep", "drop", "moved"])
                let taken = try store.claimDue(owner: "b", lease: .seconds(30))
                #expect(taken.map(\.reminderID) == ["taken"])
                // From another host, after the claims: one cancelled, one replaced.
                #expect(try store.cancel(id: "drop").inFlight == 1)
                try store.schedule(
                    NewReminder(id: "moved", title: "again", trigger: .once(now.addingTimeInterval(3600))),
                    systemZone: Self.utc
                )
                let keys = (claimed + taken).map(\.key)
                let check = try await stillWanted(store, keys)
                #expect(check.wanted == [keys[0]])
                #expect(check.cancelled == [keys[1], keys[2]])
                #expect(check.leaseLost == [keys[3]])
                #expect(try store.ledger(id: "keep").map(\.state) == ["posting"])
                #expect(try store.ledger(id: "drop").map(\.state) == ["cancelled"])
                #expect(try store.ledger(id: "moved").map(\.state) == ["cancelled", "pending"])
                #expect(try store.ledger(id: "taken").map(\.state) == ["posting"])
                // Asked again: the cancelled are no longer this owner's to post.
                let again = try await stillWanted(store, keys)
                #expect(again.wanted == [keys[0]] && again.cancelled.isEmpty && again.leaseLost.count == 3)
                // A lease that is over (not yet reaped) is not posted either.
                try store.expireLeases()
                #expect(try store.stillWanted([keys[0]], owner: "a").leaseLost == [keys[0]])
            }
        }
    }

    @Test func theDeadlinesComeWithTheDatabasesNowAndFollowChannelsAndRetries() async throws {
        try await withFreshDatabase { url in
            try await PostgresStore.withStore(url) { store in
                let empty = try store.nextDeadlines()
                #expect(empty.due == nil && empty.leaseEnds == nil && empty.next == nil)
                #expect(abs(empty.now.timeIntervalSince(try store.databaseNow())) < 5)
                let now = try store.databaseNow()
                try store.schedule(
                    NewReminder(id: "soon", title: "S", trigger: .once(now.addingTimeInterval(600))),
                    systemZone: Self.utc
                )
                try store.schedule(
                    NewReminder(id: "desk", title: "D", trigger: .once(now.addingTimeInterval(300))),
                    systemZone: Self.utc,
                    channel: "desk"
                )
                let all = try store.nextDeadlines()
                #expect(all.due.map { $0.timeIntervalSince(all.now) }.map { $0 > 290 && $0 <= 300 } == true)
                let defaults = try store.nextDeadlines(channels: ["default"])
                #expect(defaults.due.map { $0.timeIntervalSince(defaults.now) }.map { $0 > 590 && $0 <= 600 } == true)
                #expect(try store.nextDeadlines(channels: ["other"]).due == nil)
                // A failed post waits for its retry time, not its (past) due time.
                try store.advanceClock(by: 601)
                let keys = try store.claimDue(owner: "a", lease: .seconds(30)).map(\.key)
                #expect(keys.count == 1)
                let leased = try store.nextDeadlines(channels: ["default"])
                #expect(leased.due == nil)
                #expect(leased.leaseEnds.map { $0.timeIntervalSince(leased.now) }.map { $0 > 25 && $0 <= 30 } == true)
                try store.markFailed(keys, owner: "a", retryAfter: .seconds(120), error: "down")
                let retry = try store.nextDeadlines(channels: ["default"])
                #expect(retry.due.map { $0.timeIntervalSince(retry.now) }.map { $0 > 115 && $0 <= 120 } == true)
                #expect(retry.leaseEnds == nil)
            }
        }
    }

    /// The claim on a few thousand rows, most of them posted, half the pending in another
    /// channel: the planner scans the pending-by-due partial index (and stops at the LIMIT).
    @Test func theClaimScansThePendingByDueIndex() async throws {
        try await withFreshDatabase { url in
            try await PostgresStore.withStore(url) { store in
                let statements = [
                    """
                    INSERT INTO reminder (id, title, trigger_kind, at_us, created_us, next_due_us, channel, state)
                    SELECT 'g' || i, 'G', 'once', chime_now_us() + (i - 18000)::bigint * 1000000, chime_now_us(),
                        chime_now_us() + (i - 18000)::bigint * 1000000, CASE WHEN i % 2 = 0 THEN 'default' ELSE 'desk' END,
                        CASE WHEN i <= 16000 THEN 'done' ELSE 'pending' END
                    FROM generate_series(1, 20000) i
                    """,
                    """
                    INSERT INTO occurrence (reminder_key, due_us, state)
                    SELECT key, next_due_us, CASE WHEN state = 'done' THEN 'posted' ELSE 'pending' END FROM reminder
                    """,
                    "ANALYZE reminder",
                    "ANALYZE occurrence",
                ]
                for statement in statements {
                    try store.client.run(PostgresQuery(unsafeSQL: statement))
                }
                let claim = PostgresStore.claimQuery(owner: "a", lease: .seconds(30), channels: ["default"], limit: 32)
                var plan: [String] = []
                var explain = claim
                explain.sql = "EXPLAIN " + claim.sql
                for row in try store.client.rows(explain) { plan.append(try row.decode(String.self)) }
                let text = plan.joined(separator: "\n")
                #expect(text.contains("occurrence_pending_due"), "\(text)")
                #expect(!text.contains("Seq Scan on occurrence"), "\(text)")
                // The order (due, then claimed before) is the index's: nothing sorts the pending.
                #expect(!text.contains("Sort"), "\(text)")
            }
        }
    }

    /// A dead runner's occurrences, returned by the reaper, are claimed before the others due
    /// at the same instant (a burst of 5,000, analysed, so that the planner reads the index as
    /// a runner's claim does): they do not wait behind the backlog.
    @Test func occurrencesTheReaperReturnedAreClaimedBeforeOthersDueAtTheSameInstant() async throws {
        try await withFreshDatabase { url in
            try await PostgresStore.withStore(url) { store in
                let statements = [
                    """
                    INSERT INTO reminder (id, title, trigger_kind, at_us, created_us, next_due_us)
                    SELECT 'b' || i, 'Burst', 'once', chime_now_us() - 1000000, chime_now_us(), chime_now_us() - 1000000
                    FROM generate_series(1, 5000) i
                    """,
                    "INSERT INTO occurrence (reminder_key, due_us) SELECT key, next_due_us FROM reminder",
                    "ANALYZE reminder",
                    "ANALYZE occurrence",
                ]
                for statement in statements {
                    try store.client.run(PostgresQuery(unsafeSQL: statement))
                }
                let dead = try store.claimDue(owner: "dead", lease: .seconds(30), limit: 3)
                #expect(dead.count == 3)
                try store.expireLeases()
                #expect(try store.reapExpiredLeases() == 3)
                let next = try store.claimDue(owner: "alive", lease: .seconds(30), limit: 3)
                #expect(Set(next.map(\.key)) == Set(dead.map(\.key)))
                // Then the ones never claimed.
                let more = try store.claimDue(owner: "alive", lease: .seconds(30), limit: 32)
                #expect(more.count == 32 && Set(more.map(\.key)).isDisjoint(with: dead.map(\.key)))
            }
        }
    }
}

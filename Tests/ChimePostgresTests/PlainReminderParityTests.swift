import ChimeCore
import ChimePostgres
import Foundation
import Testing

/// What plain reminders do on SQLite, on the PostgreSQL store too: a reminder's
/// presentation kept and handed to the runner with the claim, a cancel of a one-shot already
/// shown (too late), and the reminder's detail and ledger for `chime show` and `chime history`.
@Suite struct PlainReminderParityTests {
    static let utc = TimeZone(identifier: "UTC")!

    @Test func thePresentationIsKeptAndComesBackWithTheClaim() async throws {
        try await withFreshDatabase { url in
            try await PostgresStore.withStore(url) { store in
                let now = try store.databaseNow()
                let look = Presentation(urgency: .critical, sticky: true, icon: "appointment-soon", sound: "bell")
                let scheduled = try store.schedule(
                    NewReminder(id: "tea", title: "Tea", trigger: .once(now.addingTimeInterval(60)), presentation: look),
                    systemZone: Self.utc
                )
                #expect(scheduled.reminder.presentation == look)
                try store.schedule(
                    NewReminder(id: "plain", title: "Plain", trigger: .once(now.addingTimeInterval(60))),
                    systemZone: Self.utc
                )
                #expect(try store.reminder(id: "tea").presentation == look)
                #expect(try store.pending().first { $0.id == "plain" }?.presentation == Presentation())
                try store.advanceClock(by: 61)
                let claimed = try store.claimDue(owner: "runner", lease: .seconds(30))
                let byID = Dictionary(uniqueKeysWithValues: claimed.map { ($0.reminderID, $0.presentation) })
                #expect(byID == ["tea": look, "plain": Presentation()])
                // What the Scheduler does with it: the Note shows it.
                var note = Note(id: "n", title: "Tea", postedAt: now)
                byID["tea"]?.apply(to: &note)
                #expect(note.urgency == .critical && note.sticky && note.icon == "appointment-soon" && note.sound == "bell")
            }
        }
    }

    @Test func aCancelOfAOneShotAlreadyShownIsTooLateOnceAndThenNotFound() async throws {
        try await withFreshDatabase { url in
            try await PostgresStore.withStore(url) { store in
                let now = try store.databaseNow()
                try store.schedule(NewReminder(id: "tea", title: "Tea", trigger: .once(now.addingTimeInterval(60))), systemZone: Self.utc)
                try store.advanceClock(by: 61)
                let claimed = try store.claim(owner: "runner", lease: .seconds(30))
                #expect(try store.markPosted(claimed[0], owner: "runner", noteID: "n1", systemZone: Self.utc).posted.count == 1)
                let outcome = try store.cancelReporting(ids: ["tea"])
                #expect(outcome.cancelled.map(\.id) == ["tea"] && outcome.inFlight.isEmpty)
                #expect(outcome.closed.map(\.reminderID) == ["tea"])
                #expect(outcome.closed.first?.due.micros == claimed[0].occurrence.key.dueMicros)
                let history = try Self.history(store, id: "tea")
                #expect(history.map(\.response) == ["cancelled"])
                #expect(history.first?.answeredAt != nil)
                // Answered now: nothing is showing, as on SQLite: not found, saying it fired.
                #expect {
                    try store.cancelReporting(ids: ["tea"])
                } throws: { error in
                    (error as? ChimeError)?.code == .notFound && "\(error)".contains("it has already fired")
                }
            }
        }
    }

    @Test func aOneShotShownOverADayAgoIsNotShowingAnyMore() async throws {
        try await withFreshDatabase { url in
            try await PostgresStore.withStore(url) { store in
                let now = try store.databaseNow()
                try store.schedule(NewReminder(id: "tea", title: "Tea", trigger: .once(now.addingTimeInterval(60))), systemZone: Self.utc)
                try store.advanceClock(by: 61)
                let claimed = try store.claim(owner: "runner", lease: .seconds(30))
                _ = try store.markPosted(claimed[0], owner: "runner", noteID: "n1", systemZone: Self.utc)
                try store.run("UPDATE occurrence SET posted_at = now() - interval '86401 seconds'")
                #expect(throws: ChimeError.self) { try store.cancelReporting(ids: ["tea"]) }
                #expect(try Self.history(store, id: "tea").map(\.response) == [nil])
            }
        }
    }

    @Test func detailSaysStateEndAndHowManyWereShown() async throws {
        try await withFreshDatabase { url in
            try await PostgresStore.withStore(url) { store in
                let now = try store.databaseNow()
                #expect {
                    try store.detail(id: "stretch")
                } throws: { error in
                    (error as? ChimeError)?.code == .notFound && "\(error)".contains("no reminder has ever had the id 'stretch'")
                }
                #expect(try store.hasEverHad(id: "stretch") == false)
                try store.schedule(
                    NewReminder(
                        id: "stretch",
                        title: "Stretch",
                        trigger: .interval(seconds: 600, anchor: now),
                        presentation: Presentation(sticky: true)
                    ),
                    systemZone: Self.utc
                )
                try store.advanceClock(by: 601)
                let claimed = try store.claim(owner: "runner", lease: .seconds(30))
                _ = try store.markPosted(claimed[0], owner: "runner", noteID: "n1", systemZone: Self.utc)
                let pending = try store.detail(id: "stretch")
                #expect(pending.state == "pending" && pending.endedAt == nil && pending.shownCount == 1)
                #expect(pending.reminder.presentation.sticky)
                try store.cancel(id: "stretch")
                let cancelled = try store.detail(id: "stretch")
                #expect(cancelled.state == "cancelled" && cancelled.endedAt != nil && cancelled.shownCount == 1)
                #expect(try store.hasEverHad(id: "stretch"))
            }
        }
    }

    @Test func historyListsWhatWasDueOldestFirstAsTheSQLiteLedgerDoes() async throws {
        try await withFreshDatabase { url in
            try await PostgresStore.withStore(url) { store in
                let now = try store.databaseNow()
                try store.schedule(
                    NewReminder(id: "stretch", title: "Stretch", trigger: .interval(seconds: 600, anchor: now)),
                    systemZone: Self.utc
                )
                try store.schedule(
                    NewReminder(id: "later", title: "Later", trigger: .once(now.addingTimeInterval(3600))),
                    systemZone: Self.utc
                )
                try store.schedule(
                    NewReminder(id: "gone", title: "Gone", trigger: .once(now.addingTimeInterval(3600))),
                    systemZone: Self.utc
                )
                try store.cancel(id: "gone")
                // Nothing due yet: the occurrences recorded ahead are not in the history.
                #expect(try Self.history(store).isEmpty)
                try store.advanceClock(by: 601)
                let first = try store.claim(owner: "runner", lease: .seconds(30))
                _ = try store.markPosted(first[0], owner: "runner", noteID: "n1", systemZone: Self.utc)
                try store.advanceClock(by: 600)
                // The second is due, not yet shown; a failed post says so.
                let second = try store.claim(owner: "runner", lease: .seconds(30))
                try store.markFailed([second[0].occurrence.key], owner: "runner", retryAfter: .seconds(60), error: "no server")
                let all = try Self.history(store)
                #expect(all.map(\.reminderID) == ["stretch", "stretch"])
                #expect(all.map(\.state) == ["posted", "due"])
                #expect(all[0].postedAt != nil && all[1].postedAt == nil)
                #expect(all[1].attempts == 1 && all[1].lastError == "no server")
                #expect(all.allSatisfy { $0.response == nil && $0.kind == "plain" && $0.detail == nil })
                #expect(try Self.history(store, limit: 1).map(\.due) == [all[1].due])
                #expect(try Self.history(store, since: all[1].due).count == 1)
                #expect(try Self.history(store, id: "later").isEmpty)
            }
        }
    }

    static func history(
        _ store: PostgresStore,
        id: String? = nil,
        since: Date? = nil,
        limit: Int? = nil
    ) throws -> [HistoryEntry] {
        var entries: [HistoryEntry] = []
        try store.eachHistory(id: id, since: since, limit: limit) { entries.append($0) }
        return entries
    }
}

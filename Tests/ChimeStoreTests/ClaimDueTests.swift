import ChimeCore
import ChimeStore
import Foundation
import Testing

/// The store's side of exactly-once delivery: claimDue, markPosted, markFailed, nextWake.
struct ClaimDueTests {
    let directory: TemporaryDirectory
    let store: ReminderStore

    init() throws {
        directory = try TemporaryDirectory()
        store = try ReminderStore(path: directory.file("chime.sqlite"), schemas: [])
    }

    private func cleanUp() { directory.remove() }

    private func claim(at seconds: TimeInterval, zone: TimeZone = Fixture.utc) throws -> [PendingOccurrence] {
        try store.claimDue(now: Fixture.at(seconds), systemZone: zone)
    }

    @Test func oneShotIsClaimedUntilPostedAndRecordedOnce() throws {
        defer { cleanUp() }
        try store.schedule(Fixture.once("tea", at: 60, title: "Tea"), now: Fixture.t0, systemZone: Fixture.utc)

        // Before its due time nothing is claimed or recorded
        #expect(try claim(at: 59.999).isEmpty)
        #expect(try store.ledger().isEmpty)

        // At its due time it is claimed, and again at the same or a later instant while unposted
        let first = try claim(at: 60)
        #expect(first.count == 1)
        let occurrence = try #require(first.first)
        #expect(occurrence.reminderID == "tea")
        #expect(occurrence.title == "Tea")
        #expect(occurrence.due == Fixture.at(60))
        #expect(occurrence.missedCount == 0)
        #expect(occurrence.attempts == 0)
        #expect(try claim(at: 60) == first)
        #expect(try claim(at: 500) == first)
        let ledger = try store.ledger()
        #expect(ledger.count == 1)
        #expect(ledger.first?.state == "due")
        #expect(ledger.first?.postedAt == nil)
        // the one-shot is finished: no longer pending
        #expect(try store.pendingCount() == 0)

        // When it is posted
        try store.markPosted([occurrence.key], at: Fixture.at(501), noteID: "tea")

        // Then it never comes back, and the ledger has it once, posted
        #expect(try claim(at: 501).isEmpty)
        #expect(try claim(at: 86_400).isEmpty)
        let after = try store.ledger(id: "tea")
        #expect(after.count == 1)
        #expect(after.first?.state == "posted")
        #expect(after.first?.postedAt == Fixture.at(501))
        #expect(after.first?.attempts == 0)
        #expect(try store.nextWake() == nil)
    }

    @Test func markPostedTwiceKeepsTheFirstPost() throws {
        defer { cleanUp() }
        try store.schedule(Fixture.once("tea", at: 60), now: Fixture.t0, systemZone: Fixture.utc)
        let key = try #require(try claim(at: 60).first).key

        try store.markPosted([key], at: Fixture.at(61), noteID: "tea")
        try store.markPosted([key], at: Fixture.at(99), noteID: "tea")

        #expect(try store.ledger().map(\.postedAt) == [Fixture.at(61)])
    }

    @Test func missedIntervalOccurrencesFoldIntoTheLatest() throws {
        defer { cleanUp() }
        // Given an hourly reminder anchored at t0 (due +1h, +2h, +3h, …)
        try store.schedule(
            NewReminder(id: "stretch", title: "Stretch", trigger: .interval(seconds: 3_600, anchor: Fixture.t0)),
            now: Fixture.t0,
            systemZone: Fixture.utc
        )

        // When the store is first asked 3 h 5 min later (three occurrences missed)
        let ready = try claim(at: 3 * 3_600 + 300)

        // Then one occurrence is recorded, the latest, counting the two before it
        #expect(ready.count == 1)
        #expect(ready.first?.due == Fixture.at(3 * 3_600))
        #expect(ready.first?.missedCount == 2)
        let ledger = try store.ledger(id: "stretch")
        #expect(ledger.count == 1)
        #expect(ledger.first?.due == Fixture.at(3 * 3_600))
        #expect(ledger.first?.missedCount == 2)
        // and the reminder moves on to the first occurrence after now
        let reminder = try store.reminder(id: "stretch")
        #expect(reminder.lastDue == Fixture.at(3 * 3_600))
        #expect(reminder.nextDue == Fixture.at(4 * 3_600))
        #expect(try #require(reminder.nextDue) > Fixture.at(3 * 3_600 + 300))
    }

    @Test func catchUpLandingExactlyOnAnOccurrenceRecordsThatOne() throws {
        defer { cleanUp() }
        try store.schedule(
            NewReminder(id: "stretch", title: "Stretch", trigger: .interval(seconds: 3_600, anchor: Fixture.t0)),
            now: Fixture.t0,
            systemZone: Fixture.utc
        )

        let ready = try claim(at: 2 * 3_600)

        #expect(ready.map(\.due) == [Fixture.at(2 * 3_600)])
        #expect(ready.map(\.missedCount) == [1])
        #expect(try store.reminder(id: "stretch").nextDue == Fixture.at(3 * 3_600))
    }

    @Test func longDowntimeCapsTheMissedCount() throws {
        defer { cleanUp() }
        // Given an every-minute reminder and a runner down for 30 days (43,200 occurrences)
        try store.schedule(
            NewReminder(id: "blink", title: "Blink", trigger: .interval(seconds: 60, anchor: Fixture.t0)),
            now: Fixture.t0,
            systemZone: Fixture.utc
        )
        let now = 30 * 86_400.0 + 30

        // When it catches up
        let ready = try claim(at: now)

        // Then it fires once, for the latest occurrence, and says "10000 missed" (the documented cap)
        #expect(ready.map(\.due) == [Fixture.at(30 * 86_400)])
        #expect(ready.first?.missedCount == 10_000)
        #expect(try store.reminder(id: "blink").nextDue == Fixture.at(30 * 86_400 + 60))
    }

    @Test func weeklyReminderAdvancesDayByDayInItsZone() throws {
        defer { cleanUp() }
        // Given Mon/Thu 08:00 in Berlin (UTC+1 in January), scheduled Monday 2026-01-05 09:00 UTC
        let trigger = Trigger.weekly(times: [LocalTime(hour: 8, minute: 0)!], days: [.monday, .thursday], zone: .fixed("Europe/Berlin"))
        let result = try store.schedule(NewReminder(id: "gym", title: "Gym", trigger: trigger), now: Fixture.t0, systemZone: Fixture.utc)
        let expected = [
            utcInstant(2026, 1, 8, 7),  // Thu
            utcInstant(2026, 1, 12, 7),  // Mon
            utcInstant(2026, 1, 15, 7),  // Thu
            utcInstant(2026, 1, 19, 7),  // Mon
        ]
        #expect(result.reminder.nextDue == expected[0])

        // When each occurrence is claimed at its due time and posted
        for (index, due) in expected.dropLast().enumerated() {
            let ready = try store.claimDue(now: due, systemZone: Fixture.utc)
            #expect(ready.map(\.due) == [due])
            #expect(ready.map(\.missedCount) == [0])
            try store.markPosted(ready.map(\.key), at: due, noteID: "gym")
            // Then the reminder moves to the next one
            #expect(try store.reminder(id: "gym").nextDue == expected[index + 1])
            #expect(try store.nextWake() == expected[index + 1])
        }
        #expect(try store.ledger(id: "gym").map(\.due) == Array(expected.dropLast()))
        #expect(try store.ledger(id: "gym").allSatisfy { $0.state == "posted" })
    }

    @Test func weeklyReminderKeepsLocalTimeAcrossDST() throws {
        defer { cleanUp() }
        // Every day 08:00 in Berlin, over the spring-forward night of 2026-03-29 (UTC+1 -> UTC+2)
        let trigger = Trigger.weekly(times: [LocalTime(hour: 8, minute: 0)!], days: .everyDay, zone: .fixed("Europe/Berlin"))
        try store.schedule(
            NewReminder(id: "pill", title: "Pill", trigger: trigger),
            now: utcInstant(2026, 3, 27, 0),
            systemZone: Fixture.utc
        )
        let expected = [utcInstant(2026, 3, 27, 7), utcInstant(2026, 3, 28, 7), utcInstant(2026, 3, 29, 6), utcInstant(2026, 3, 30, 6)]

        for due in expected {
            #expect(try store.reminder(id: "pill").nextDue == due)
            let ready = try store.claimDue(now: due, systemZone: Fixture.utc)
            #expect(ready.map(\.due) == [due])
            try store.markPosted(ready.map(\.key), at: due, noteID: "pill")
        }
        #expect(try store.ledger(id: "pill").count == 4)
    }

    @Test func failedOccurrenceComesBackOnlyAtItsRetryTime() throws {
        defer { cleanUp() }
        try store.schedule(Fixture.once("tea", at: 60), now: Fixture.t0, systemZone: Fixture.utc)
        let key = try #require(try claim(at: 60).first).key

        // When the post fails and a retry is set 5 s later
        try store.markFailed([key], at: Fixture.at(60), retryAt: Fixture.at(65), error: "no notification server")

        // Then the occurrence stays due, with the attempt and error recorded
        let entry = try #require(try store.ledger().first)
        #expect(entry.state == "due")
        #expect(entry.attempts == 1)
        #expect(entry.lastError == "no notification server")
        #expect(try store.nextWake() == Fixture.at(65))
        // and is not ready before the retry time
        #expect(try claim(at: 64.999).isEmpty)
        // but is at and after it, saying how many attempts failed
        let retry = try claim(at: 65)
        #expect(retry.map(\.key) == [key])
        #expect(retry.map(\.attempts) == [1])
        #expect(try claim(at: 70).map(\.key) == [key])
        #expect(try store.ledger().count == 1)

        try store.markFailed([key], at: Fixture.at(65), retryAt: Fixture.at(67), error: "still none")
        #expect(try store.ledger().first?.attempts == 2)
        #expect(try store.ledger().first?.lastError == "still none")
    }

    @Test func nextWakeIsTheEarliestDueOrRetryTime() throws {
        defer { cleanUp() }
        // An empty store never needs to wake
        #expect(try store.nextWake() == nil)

        _ = try store.scheduleBatch(
            [
                Fixture.once("a", at: 100), Fixture.once("b", at: 50),
                NewReminder(id: "c", title: "C", trigger: .interval(seconds: 1_000, anchor: Fixture.t0)),
            ],
            now: Fixture.t0,
            systemZone: Fixture.utc
        )
        #expect(try store.nextWake() == Fixture.at(50))

        // b comes due and fails, retry far away: the next due time wins
        let b = try claim(at: 50)
        #expect(b.map(\.reminderID) == ["b"])
        try store.markFailed(b.map(\.key), at: Fixture.at(50), retryAt: Fixture.at(200), error: "x")
        #expect(try store.nextWake() == Fixture.at(100))

        // a retry sooner than any due time wins
        try store.markFailed(b.map(\.key), at: Fixture.at(50), retryAt: Fixture.at(80), error: "x")
        #expect(try store.nextWake() == Fixture.at(80))

        // posted occurrences no longer count
        try store.markPosted(b.map(\.key), at: Fixture.at(80), noteID: "b")
        #expect(try store.nextWake() == Fixture.at(100))
        try store.cancel(id: "a", now: Fixture.at(81))
        #expect(try store.nextWake() == Fixture.at(1_000))
    }

    @Test func batchOfTenThousandIsScheduledInOneCall() throws {
        defer { cleanUp() }
        let batch = (0..<10_000).map { Fixture.once("dose-\($0)", at: TimeInterval(60 + $0 % 3_600), title: "Dose \($0)") }

        let results = try store.scheduleBatch(batch, now: Fixture.t0, systemZone: Fixture.utc)

        #expect(results.count == 10_000)
        #expect(results.map(\.reminder.id) == batch.map(\.id!))
        #expect(try store.pendingCount() == 10_000)
        #expect(try store.nextWake() == Fixture.at(60))
        #expect(try store.pending(limit: 3).map(\.id) == ["dose-0", "dose-3600", "dose-7200"])
    }

    enum Invalid: String, CaseIterable, Sendable {
        case emptyTitle, pastTime, badID
    }

    @Test(arguments: Invalid.allCases)
    func batchWithOneInvalidEntryWritesNothing(_ invalid: Invalid) throws {
        defer { cleanUp() }
        var batch = (0..<10_000).map { Fixture.once("dose-\($0)", at: TimeInterval(60 + $0), title: "Dose \($0)") }
        switch invalid {
        case .emptyTitle: batch[7_777].title = " "
        case .pastTime: batch[7_777].trigger = .once(Fixture.at(-60))
        case .badID: batch[7_777].id = "dose 7777"
        }

        let error = #expect(throws: ChimeError.self) { try store.scheduleBatch(batch, now: Fixture.t0, systemZone: Fixture.utc) }

        #expect(error?.code == .usage)
        #expect(try store.pendingCount() == 0)
        #expect(try store.nextWake() == nil)
    }
}

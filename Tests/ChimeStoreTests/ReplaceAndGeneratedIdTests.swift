import ChimeCore
import ChimeStore
import Foundation
import Testing

/// Scheduling over a taken id: replacing by id, and drawing another generated id. Both paths
/// retry the INSERT that just failed on the unique index of pending ids.
struct ReplaceAndGeneratedIdTests {
    let directory: TemporaryDirectory
    let store: ReminderStore

    init() throws {
        directory = try TemporaryDirectory()
        store = try ReminderStore(path: directory.file("chime.sqlite"), schemas: [])
    }

    private func cleanUp() { directory.remove() }

    @Test func replacingByIdEndsTheOldOneAndCancelsItsUndeliveredOccurrences() throws {
        defer { cleanUp() }
        // Given a recurring "tea" with one posted and one undelivered occurrence
        let hourly = Trigger.interval(seconds: 3_600, anchor: Fixture.t0)
        try store.schedule(NewReminder(id: "tea", title: "Old tea", trigger: hourly), now: Fixture.t0, systemZone: Fixture.utc)
        let first = try store.claimDue(now: Fixture.at(3_600), systemZone: Fixture.utc)
        try store.markPosted(first.map(\.key), at: Fixture.at(3_600), noteID: "tea")
        let second = try store.claimDue(now: Fixture.at(7_200), systemZone: Fixture.utc)
        #expect(second.map(\.due) == [Fixture.at(7_200)])

        // When "tea" is scheduled again
        let result = try store.schedule(
            NewReminder(id: "tea", title: "New tea", trigger: .once(Fixture.at(9_000))),
            now: Fixture.at(7_300),
            systemZone: Fixture.utc
        )

        // Then it replaced the old one: one pending "tea", the new one
        #expect(result.replaced)
        #expect(result.reminder.id == "tea")
        #expect(result.reminder.title == "New tea")
        #expect(try store.pending().map(\.title) == ["New tea"])
        // the posted occurrence stays posted, the undelivered one is cancelled
        let ledger = try store.ledger(id: "tea")
        #expect(ledger.map(\.due) == [Fixture.at(3_600), Fixture.at(7_200)])
        #expect(ledger.map(\.state) == ["posted", "cancelled"])
        // and the old reminder never fires again: only the new one is claimed
        let later = try store.claimDue(now: Fixture.at(20_000), systemZone: Fixture.utc)
        #expect(later.map(\.title) == ["New tea"])
        #expect(later.map(\.due) == [Fixture.at(9_000)])
        #expect(later.map(\.missedCount) == [0])
    }

    @Test func replacingAPendingOneShotKeepsOnePendingReminder() throws {
        defer { cleanUp() }
        try store.schedule(Fixture.once("tea", at: 60, title: "Old tea"), now: Fixture.t0, systemZone: Fixture.utc)

        let result = try store.schedule(Fixture.once("tea", at: 90, title: "New tea"), now: Fixture.at(1), systemZone: Fixture.utc)

        #expect(result.replaced)
        #expect(try store.pendingCount() == 1)
        #expect(try store.reminder(id: "tea").nextDue == Fixture.at(90))
        let fired = try store.claimDue(now: Fixture.at(3_600), systemZone: Fixture.utc)
        #expect(fired.map(\.title) == ["New tea"])
        #expect(fired.map(\.due) == [Fixture.at(90)])
        try store.markPosted(fired.map(\.key), at: Fixture.at(3_600), noteID: "tea")
        // The id's latest reminder has fired (posted): its alert is closed, once; then it has fired.
        let closed = try store.cancelReporting(ids: ["tea"], now: Fixture.at(3_601))
        #expect(closed.closed.map(\.reminderID) == ["tea"])
        #expect(try store.ledger(id: "tea").compactMap(\.response) == ["cancelled"])
        let error = #expect(throws: ChimeError.self) { try store.cancel(id: "tea", now: Fixture.at(3_602)) }
        #expect(error?.message.hasSuffix("it has already fired") == true)
    }

    @Test func aTakenIdInsideAMultiRowChunkIsReplacedAndTheRestInserted() throws {
        defer { cleanUp() }
        // Given "r-100" pending, and a batch of 200 (several 64-row statements) that includes it
        try store.schedule(Fixture.once("r-100", at: 30, title: "Old"), now: Fixture.t0, systemZone: Fixture.utc)
        let batch = (0..<200).map { Fixture.once("r-\($0)", at: TimeInterval(60 + $0), title: "New \($0)") }

        // When it is scheduled with replace, then the one taken id is replaced and all 200 are pending
        let results = try store.scheduleBatch(batch, now: Fixture.at(1), systemZone: Fixture.utc)
        #expect(results.map(\.reminder.id) == batch.map(\.id!))
        #expect(results.filter(\.replaced).map(\.reminder.id) == ["r-100"])
        #expect(try store.pendingCount() == 200)
        #expect(try store.reminder(id: "r-100").title == "New 100")

        // And without replace the same batch is a conflict that writes nothing
        let again = (0..<200).map { Fixture.once("s-\($0)", at: TimeInterval(60 + $0), title: "S \($0)") } + [Fixture.once("r-5", at: 90)]
        #expect(throws: ChimeError.self) { try store.scheduleBatch(again, replace: false, now: Fixture.at(2), systemZone: Fixture.utc) }
        #expect(try store.pendingCount() == 200)
    }

    @Test func replacingTwiceInOneBatchKeepsTheLast() throws {
        defer { cleanUp() }
        let results = try store.scheduleBatch(
            [
                Fixture.once("tea", at: 60, title: "One"), Fixture.once("tea", at: 70, title: "Two"),
                Fixture.once("tea", at: 80, title: "Three"),
            ],
            now: Fixture.t0,
            systemZone: Fixture.utc
        )

        #expect(results.map(\.replaced) == [false, true, true])
        #expect(try store.pending().map(\.title) == ["Three"])
    }

    @Test func refusedScheduleDoesNotSpoilTheNextOne() throws {
        defer { cleanUp() }
        try store.schedule(Fixture.once("tea", at: 60, title: "Tea"), now: Fixture.t0, systemZone: Fixture.utc)

        #expect(throws: ChimeError.self) {
            try store.schedule(Fixture.once("tea", at: 90), replace: false, now: Fixture.t0, systemZone: Fixture.utc)
        }
        try store.schedule(Fixture.once("cake", at: 90, title: "Cake"), now: Fixture.t0, systemZone: Fixture.utc)

        #expect(try store.pending().map(\.title) == ["Tea", "Cake"])
    }

    @Test func generatedIdsNeverCollideWithPendingOnes() throws {
        defer { cleanUp() }
        // 10,000 ids drawn from 31^4 four-letter ones: about 54 collisions are expected, so the
        // redraw path certainly runs.
        let batch = (0..<10_000).map { Fixture.once(nil, at: TimeInterval(60 + $0), title: "n\($0)") }

        let results = try store.scheduleBatch(batch, now: Fixture.t0, systemZone: Fixture.utc)
        let more = try (0..<200).map { index in
            try store.schedule(Fixture.once(nil, at: 20_000, title: "m\(index)"), now: Fixture.t0, systemZone: Fixture.utc)
        }

        let ids = (results + more).map(\.reminder.id)
        #expect(Set(ids).count == 10_200)
        #expect(ids.allSatisfy { $0.wholeMatch(of: /r[2-9a-z]{4,}/) != nil })
        #expect((results + more).allSatisfy { !$0.replaced })
        #expect(try store.pendingCount() == 10_200)
        #expect(Set(try store.pending().map(\.id)) == Set(ids))
        // Each reminder kept its own title: no generated id overwrote another.
        #expect(Set(try store.pending().map(\.title)).count == 10_200)
    }
}

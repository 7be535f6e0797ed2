import ChimeCore
import ChimeStore
import ChimeTesting
import Foundation
import Synchronization
import Testing

/// A real store whose writes can be made to fail, as a full disk or another process's lock
/// makes them fail: reads still work. (The end-to-end store-fault tests fill a real tmpfs;
/// this one lets the scheduler's passes be driven step by step on the manual clock.)
final class OutageStore: SchedulerStore {
    struct DiskFull: Error, CustomStringConvertible {
        var description: String { "database or disk is full" }
    }

    let base: ReminderStore
    private let failing = Mutex(false)
    private let writes = Mutex(0)

    init(_ base: ReminderStore) { self.base = base }

    /// Whether writes fail from now on.
    func failWrites(_ fail: Bool) { failing.withLock { $0 = fail } }

    private func write() throws {
        writes.withLock { $0 += 1 }
        if failing.withLock({ $0 }) { throw DiskFull() }
    }

    func claimDue(now: Date, horizon: Date, systemZone: TimeZone) throws -> [PendingOccurrence] {
        try write()
        return try base.claimDue(now: now, horizon: horizon, systemZone: systemZone)
    }

    func dueWithoutClaiming(now: Date) throws -> [PendingOccurrence] { try base.dueWithoutClaiming(now: now) }

    func recordShown(_ key: OccurrenceKey, at postedAt: Date, noteID: String, serverID: UInt32?, systemZone: TimeZone) throws {
        try write()
        try base.recordShown(key, at: postedAt, noteID: noteID, serverID: serverID, systemZone: systemZone)
    }

    func markPosted(_ keys: [OccurrenceKey], at: Date, noteID: String, serverID: UInt32?) throws {
        // As SQLite on a full disk: an UPDATE that matches no row writes nothing and succeeds.
        let recorded = Set(try base.ledger().filter { $0.state == "due" }.map(\.due.micros))
        if keys.contains(where: { recorded.contains($0.dueMicros) }) { try write() }
        try base.markPosted(keys, at: at, noteID: noteID, serverID: serverID)
    }

    func recordResponse(_ response: NoteResponse, at instant: Date) throws -> String? {
        try write()
        return try base.recordResponse(response, at: instant)
    }

    func shownAlerts(id: String) throws -> [PostedNote] { try base.shownAlerts(id: id) }

    func markFailed(_ keys: [OccurrenceKey], at: Date, retryAt: Date, error: String) throws {
        try write()
        try base.markFailed(keys, at: at, retryAt: retryAt, error: error)
    }

    func nextDeadlines() throws -> (due: Date?, ready: Date?) { try base.nextDeadlines() }
}

/// The store fails while reminders fall due: every alert is still shown, once, and the ledger
/// catches up when the store takes writes again.
struct StoreOutageTests {
    let h: Harness
    /// The scheduler's view of the store, whose writes the tests make fail.
    let store: OutageStore

    init() throws {
        var outage: OutageStore?
        h = try Harness { base in
            outage = OutageStore(base)
            return outage!
        }
        store = try #require(outage)
    }

    var base: ReminderStore { h.store }
    var notifier: RecordingNotifier { h.notifier }
    var clock: ManualWallClock { h.clock }
    var events: EventLog { h.events }
    var scheduler: Scheduler { h.scheduler }
    var directory: TemporaryDirectory { h.directory }

    func at(_ seconds: TimeInterval) -> Date { Harness.t0.addingTimeInterval(seconds) }

    func schedule(_ id: String, _ trigger: Trigger) throws {
        try base.schedule(NewReminder(id: id, title: "Title \(id)", trigger: trigger), now: clock.now(), systemZone: Harness.utc)
    }

    func shown(_ id: String) -> Int {
        notifier.posts.reduce(0) { $0 + $1.deliveries.filter { $0.reminderID == id }.count }
    }

    @Test func shownButNotRecordedIsNeverShownAgainAndIsRecordedOnRecovery() async throws {
        defer { directory.remove() }
        try schedule("dose", .once(at(10)))
        clock.advance(to: at(9.99))
        await scheduler.runPass()  // recorded as due ahead of its instant

        // The disk fills between recording and posting: the alert is shown, its post not recorded
        store.failWrites(true)
        clock.advance(to: at(10))
        await scheduler.runPass()
        #expect(shown("dose") == 1)
        #expect(try base.ledger().map(\.state) == ["due"])

        // Passes during the outage do not show it again
        for second in 11...20 {
            clock.advance(to: at(TimeInterval(second)))
            await scheduler.runPass()
        }
        #expect(shown("dose") == 1)

        // Space comes back: the next pass records the post as it happened, without showing it again
        store.failWrites(false)
        clock.advance(to: at(21))
        #expect(await scheduler.runPass() == nil)
        #expect(shown("dose") == 1)
        let entry = try #require(try base.ledger().first)
        #expect(entry.state == "posted")
        #expect(entry.postedAt == at(10))
        // The outage is logged once, and its end once
        #expect(events.all == [.storeFailed("database or disk is full"), .storeRecovered])
    }

    @Test func dueWhileTheStoreCannotBeWrittenIsShownOnceFromAReadThenRecorded() async throws {
        defer { directory.remove() }
        try schedule("pill", .once(at(10)))
        try schedule("later", .once(at(600)))
        store.failWrites(true)

        // The claim fails: what is due is still shown, once, on time
        clock.advance(to: at(10))
        #expect(await scheduler.runPass() == at(11))
        #expect(notifier.posts.map(\.id) == ["pill"])
        #expect(notifier.posts[0].postedAt == at(10))
        #expect(try base.ledger().isEmpty)
        for second in 11...30 {
            clock.advance(to: at(TimeInterval(second)))
            await scheduler.runPass()
        }
        #expect(notifier.posts.map(\.id) == ["pill"])

        // Recovery: the claim records it, the scheduler marks it posted instead of showing it again
        store.failWrites(false)
        clock.advance(to: at(31))
        #expect(await scheduler.runPass() == at(600).addingTimeInterval(-0.025))
        #expect(notifier.posts.map(\.id) == ["pill"])
        let entries = try base.ledger()
        #expect(entries.map(\.reminderID) == ["pill"])
        #expect(entries.map(\.state) == ["posted"])
        #expect(entries.first?.postedAt == at(10))

        // And what falls due afterwards goes the normal way
        clock.advance(to: at(600))
        await scheduler.runPass()
        #expect(notifier.posts.map(\.id) == ["pill", "later"])
        #expect(try base.ledger().map(\.state) == ["posted", "posted"])
    }

    @Test func recurringReminderInAnOutageIsShownOnceThenCaughtUpOnce() async throws {
        defer { directory.remove() }
        try schedule("water", .interval(seconds: 60, anchor: at(0)))
        store.failWrites(true)

        // Due at 60 s: shown once from the read; the stored reminder cannot advance
        clock.advance(to: at(60))
        await scheduler.runPass()
        clock.advance(to: at(100))
        await scheduler.runPass()
        #expect(shown("water") == 1)

        // Recovered at 200 s: the one shown at 60 s is recorded, and the reminder moves past it;
        // the occurrences at 120 and 180 s (not shown) fold into one late alert, one missed
        store.failWrites(false)
        clock.advance(to: at(200))
        #expect(await scheduler.runPass() == at(240).addingTimeInterval(-0.025))
        #expect(shown("water") == 2)
        let caughtUp = try #require(notifier.posts.last?.deliveries.first)
        #expect(caughtUp.due == at(180))
        #expect(caughtUp.missedCount == 1)
        let ledger = try base.ledger()
        #expect(ledger.map(\.due) == [at(60), at(180)])
        #expect(ledger.map(\.state) == ["posted", "posted"])
        #expect(ledger.first?.postedAt == at(60))
    }
}

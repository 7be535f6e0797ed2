import ChimeCore
import ChimeStore
import ChimeTesting
import Foundation
import Synchronization
import Testing

/// One pass of the scheduler at a time, on a real store, a recording notifier and a manual clock.
struct SchedulerPassTests {
    @Test func passFiresDueOccurrencesInDueOrderExactlyOnce() async throws {
        let h = try Harness()
        defer { h.cleanUp() }
        // Given three one-shots scheduled out of order
        try h.once("c", at: 30)
        try h.once("a", at: 10)
        try h.once("b", at: 20)

        // Nothing fires before its due time
        h.clock.advance(to: h.at(9))
        #expect(await h.scheduler.runPass() == h.wake(10))
        #expect(h.notifier.attempts == 0)

        // When the clock passes a and b
        h.clock.advance(to: h.at(25))
        let next = await h.scheduler.runPass()

        // Then they fire in due order, each with its own lateness, and the pass wakes for c
        let notes = h.notifier.posts
        #expect(notes.map(\.id) == ["a", "b"])
        #expect(notes.map(\.isSummary) == [false, false])
        #expect(notes.map(\.postedAt) == [h.at(25), h.at(25)])
        #expect(notes.flatMap(\.deliveries).map(\.due) == [h.at(10), h.at(20)])
        #expect(notes.map { $0.lateness(of: $0.deliveries[0]) } == [.seconds(15), .seconds(5)])
        #expect(next == h.wake(30))

        // A second pass at the same instant fires nothing again
        #expect(await h.scheduler.runPass() == h.wake(30))
        #expect(h.notifier.attempts == 2)

        // c fires exactly at its due time: not late
        h.clock.advance(to: h.at(30))
        #expect(await h.scheduler.runPass() == nil)
        let c = try #require(h.notifier.posts.last)
        #expect(c.id == "c")
        #expect(c.title == "Title c")
        #expect(c.lateness(of: c.deliveries[0]) == .zero)

        // Each occurrence posted once, recorded once
        #expect(h.notifier.posts.map(\.id) == ["a", "b", "c"])
        let ledger = try h.store.ledger()
        #expect(ledger.map(\.reminderID) == ["a", "b", "c"])
        #expect(ledger.map(\.state) == ["posted", "posted", "posted"])
        #expect(ledger.map(\.postedAt) == [h.at(25), h.at(25), h.at(30)])
        #expect(h.events.all.isEmpty)
    }

    @Test func catchUpAfterDowntimeFiresEachMissedOneOnceAndLate() async throws {
        let h = try Harness()
        defer { h.cleanUp() }
        // Given two one-shots scheduled at t0, and the runner down past both
        try h.once("tea", at: 60)
        try h.once("cake", at: 120)
        h.clock.advance(to: h.at(3_600))

        // When it comes back
        let next = await h.scheduler.runPass()

        // Then each fires once, late by the time it was down for it
        let notes = h.notifier.posts
        #expect(notes.map(\.id) == ["tea", "cake"])
        #expect(notes.map { $0.lateness(of: $0.deliveries[0]) } == [.seconds(3_540), .seconds(3_480)])
        #expect(next == nil)
        await h.scheduler.runPass()
        #expect(h.notifier.attempts == 2)
        #expect(try h.store.ledger().map(\.state) == ["posted", "posted"])
    }

    @Test(arguments: [(late: 3, summary: false), (late: 4, summary: true), (late: 8, summary: true)])
    func moreLateOnesThanTheThresholdCollapseIntoOneSummary(late: Int, summary: Bool) async throws {
        var configuration = Scheduler.Configuration()
        configuration.summaryThreshold = 3
        let h = try Harness(configuration: configuration)
        defer { h.cleanUp() }
        // Given `late` one-shots due in the past and one due exactly now
        let lateIDs = (0..<late).map { "late\($0)" }
        for (index, id) in lateIDs.enumerated() { try h.once(id, at: TimeInterval(60 + index)) }
        try h.once("ontime", at: 600)
        h.clock.advance(to: h.at(600))

        // When the scheduler catches up
        await h.scheduler.runPass()

        let notes = h.notifier.posts
        if summary {
            // Then one summary delivers all late ones, then the on-time one comes on its own
            #expect(notes.map(\.id) == ["summary", "ontime"])
            let summaryNote = try #require(notes.first)
            #expect(summaryNote.isSummary)
            #expect(summaryNote.title == "\(late) missed reminders")
            #expect(summaryNote.deliveries.map(\.reminderID) == lateIDs)
            #expect(summaryNote.deliveries.map(\.due) == (0..<late).map { h.at(TimeInterval(60 + $0)) })
        } else {
            // Then at the threshold each late one still comes on its own
            #expect(notes.map(\.id) == lateIDs + ["ontime"])
            #expect(notes.allSatisfy { !$0.isSummary })
        }
        #expect(notes.last?.deliveries.map(\.reminderID) == ["ontime"])
        for id in lateIDs + ["ontime"] { #expect(h.postCount(of: id) == 1, "posts of \(id)") }
        let ledger = try h.store.ledger()
        #expect(ledger.count == late + 1)
        #expect(ledger.allSatisfy { $0.state == "posted" && $0.postedAt == h.at(600) })
    }

    @Test func failedPostStaysDueAndIsRetriedWithBackoff() async throws {
        let h = try Harness()
        defer { h.cleanUp() }
        try h.once("tea", at: 10)
        h.notifier.failNext(2)
        h.clock.advance(to: h.at(10))

        // First attempt fails: still due, retry after 1 s
        #expect(await h.scheduler.runPass() == h.at(11))
        var entry = try #require(try h.store.ledger().first)
        #expect(entry.state == "due")
        #expect(entry.attempts == 1)
        #expect(entry.lastError == "no notification server")
        #expect(try h.store.nextWake() == h.at(10 + TimeInterval(h.scheduler.backoff(afterAttempts: 1).components.seconds)))

        // Not retried before its time
        h.clock.advance(to: h.at(10.5))
        #expect(await h.scheduler.runPass() == h.at(11))
        #expect(h.notifier.attempts == 1)

        // Second attempt fails: retry after 2 s more
        h.clock.advance(to: h.at(11))
        #expect(await h.scheduler.runPass() == h.at(13))
        entry = try #require(try h.store.ledger().first)
        #expect(entry.state == "due")
        #expect(entry.attempts == 2)
        #expect(h.notifier.posts.isEmpty)

        // Third attempt goes through, once, saying how late it is
        h.clock.advance(to: h.at(13))
        #expect(await h.scheduler.runPass() == nil)
        #expect(h.notifier.attempts == 3)
        let note = try #require(h.notifier.posts.first)
        #expect(h.notifier.posts.count == 1)
        #expect(note.id == "tea")
        #expect(note.lateness(of: note.deliveries[0]) == .seconds(3))
        // The delivery says which post this is (a webhook sends it) and the reminder's kind.
        #expect(note.deliveries[0].attempt == 3)
        #expect(note.deliveries[0].kind == "plain")
        entry = try #require(try h.store.ledger().first)
        #expect(entry.state == "posted")
        #expect(entry.attempts == 2)
        #expect(entry.postedAt == h.at(13))

        h.clock.advance(to: h.at(100))
        await h.scheduler.runPass()
        #expect(h.notifier.attempts == 3)
        #expect(
            h.events.all == [
                .deliveryFailed(ids: ["tea"], attempt: 1, retryAt: h.at(11), error: "no notification server"),
                .deliveryFailed(ids: ["tea"], attempt: 2, retryAt: h.at(13), error: "no notification server"),
            ]
        )
    }

    @Test(arguments: [(0, 1), (1, 1), (2, 2), (3, 4), (4, 8), (9, 256), (10, 300), (64, 300)])
    func backoffDoublesUpToTheMaximum(attempts: Int, seconds: Int) throws {
        let h = try Harness()
        defer { h.cleanUp() }
        #expect(h.scheduler.backoff(afterAttempts: attempts) == .seconds(seconds))
    }

    @Test func serverDownThenBackDeliversEachPendingOccurrenceOnce() async throws {
        let h = try Harness()
        defer { h.cleanUp() }
        try h.once("a", at: 10)
        try h.once("b", at: 20)
        try h.once("c", at: 30)

        // Given no notification server for two minutes, the scheduler retrying as it is told
        h.notifier.failAlways()
        var wake = await h.scheduler.runPass()
        var passes = 0
        while let next = wake, next <= h.at(120) {
            h.clock.advance(to: next)
            wake = await h.scheduler.runPass()
            passes += 1
        }
        #expect(passes > 10)
        #expect(h.notifier.posts.isEmpty)
        let failing = try h.store.ledger()
        #expect(failing.map(\.reminderID) == ["a", "b", "c"])
        #expect(failing.allSatisfy { $0.state == "due" && $0.attempts >= 3 })
        // the next wake is the earliest retry
        let retryAt = try #require(wake)
        #expect(retryAt > h.at(120))

        // When the server comes back
        h.notifier.failAlways(nil)
        h.clock.advance(to: retryAt)
        wake = await h.scheduler.runPass()
        while let next = wake {
            h.clock.advance(to: next)
            wake = await h.scheduler.runPass()
        }

        // Then each pending occurrence goes out exactly once
        #expect(h.notifier.posts.flatMap(\.deliveries).map(\.reminderID).sorted() == ["a", "b", "c"])
        for id in ["a", "b", "c"] { #expect(h.postCount(of: id) == 1, "posts of \(id)") }
        #expect(try h.store.ledger().allSatisfy { $0.state == "posted" })
        h.clock.advance(by: 86_400)
        #expect(await h.scheduler.runPass() == nil)
        #expect(h.notifier.posts.flatMap(\.deliveries).count == 3)
    }

    @Test func withNoServerAnOccurrenceWaitsWithoutATimerAndGoesToTheServerOnceWhenOneAppears() async throws {
        let h = try Harness()
        defer { h.cleanUp() }
        try h.once("tea", at: 10)
        try h.once("later", at: 50)
        h.notifier.setServer(present: false)
        h.clock.advance(to: h.at(10))

        // When it falls due with no server, it stays due and the scheduler sets no timer for it
        #expect(await h.scheduler.runPass() == h.wake(50))
        var entry = try #require(try h.store.ledger().first)
        #expect(entry.state == "due" && entry.attempts == 1)
        #expect(try h.store.undeliveredCount() == 1)
        h.clock.advance(to: h.at(50))
        #expect(await h.scheduler.runPass() == nil)
        #expect(h.notifier.attempts == 2)
        h.clock.advance(to: h.at(3_600))
        #expect(await h.scheduler.runPass() == nil)
        #expect(h.notifier.attempts == 2)
        #expect(h.notifier.posts.isEmpty)

        // Then when a server appears, each waiting occurrence goes to it at once, once
        h.notifier.setServer(present: true)
        await h.scheduler.notifierBecameAvailable()
        #expect(await h.scheduler.runPass() == nil)
        #expect(h.notifier.posts.flatMap(\.deliveries).map(\.reminderID).sorted() == ["later", "tea"])
        #expect(try h.store.ledger().allSatisfy { $0.state == "posted" && $0.postedAt == h.at(3_600) })
        entry = try #require(try h.store.ledger().first)
        #expect(entry.attempts == 1)
        h.clock.advance(by: 86_400)
        await h.scheduler.notifierBecameAvailable()
        #expect(await h.scheduler.runPass() == nil)
        #expect(h.notifier.posts.count == 2)
        #expect(
            h.events.all == [
                .deliveryWaiting(ids: ["tea"], error: "no notification server"),
                .deliveryWaiting(ids: ["later"], error: "no notification server"),
            ]
        )
    }

    @Test func cancelledBeforeDueIsNeverPosted() async throws {
        let h = try Harness()
        defer { h.cleanUp() }
        try h.once("a", at: 60)
        try h.once("b", at: 90)
        h.clock.advance(to: h.at(30))
        try h.store.cancel(id: "a", now: h.clock.now())

        h.clock.advance(to: h.at(120))
        #expect(await h.scheduler.runPass() == nil)

        #expect(h.postCount(of: "a") == 0)
        #expect(h.notifier.posts.map(\.id) == ["b"])
        #expect(try h.store.ledger(id: "a").isEmpty)
    }

    @Test func cancelledWhileWaitingForARetryIsNotRetried() async throws {
        let h = try Harness()
        defer { h.cleanUp() }
        // Given a recurring reminder whose first post failed
        try h.store.schedule(
            NewReminder(id: "water", title: "Water", trigger: .interval(seconds: 3_600, anchor: Harness.t0)),
            now: h.clock.now(),
            systemZone: Harness.utc
        )
        h.notifier.failNext()
        h.clock.advance(to: h.at(3_600))
        #expect(await h.scheduler.runPass() == h.at(3_601))
        #expect(try h.store.ledger(id: "water").map(\.state) == ["due"])

        // When it is cancelled while waiting for its retry
        try h.store.cancel(id: "water", now: h.clock.now())

        // Then the retry never happens, and nothing is left to wake for
        #expect(try h.store.ledger(id: "water").map(\.state) == ["cancelled"])
        h.clock.advance(to: h.at(3 * 3_600))
        #expect(await h.scheduler.runPass() == nil)
        #expect(h.notifier.attempts == 1)
        #expect(h.notifier.posts.isEmpty)
    }

    @Test func recurringReminderFiresOncePerOccurrenceAndFoldsMissedOnes() async throws {
        let h = try Harness()
        defer { h.cleanUp() }
        try h.store.schedule(
            NewReminder(id: "stretch", title: "Stretch", trigger: .interval(seconds: 600, anchor: Harness.t0)),
            now: h.clock.now(),
            systemZone: Harness.utc
        )

        // On time: one note per occurrence
        h.clock.advance(to: h.at(600))
        #expect(await h.scheduler.runPass() == h.wake(1_200))
        h.clock.advance(to: h.at(1_200))
        #expect(await h.scheduler.runPass() == h.wake(1_800))
        #expect(h.notifier.posts.map { $0.deliveries.map(\.due) } == [[h.at(600)], [h.at(1_200)]])

        // After 35 minutes asleep: one late note for the latest, counting the two missed before it
        h.clock.advance(to: h.at(3_300))
        #expect(await h.scheduler.runPass() == h.wake(3_600))
        let late = try #require(h.notifier.posts.last)
        #expect(h.notifier.posts.count == 3)
        #expect(late.deliveries.map(\.due) == [h.at(3_000)])
        #expect(late.deliveries.map(\.missedCount) == [2])
        #expect(late.lateness(of: late.deliveries[0]) == .seconds(300))
        #expect(try h.store.ledger(id: "stretch").map(\.state) == ["posted", "posted", "posted"])
    }
}

/// A notifier with no server whose server appears while a post is failing (the scheduler is
/// told between the failed call and the ledger's write), once.
struct AppearingMidPostNotifier: Notifier {
    final class Box: Sendable {
        let scheduler = Mutex<Scheduler?>(nil)
        let appearances = Mutex(1)
    }
    let box = Box()

    func post(_ note: Note) async throws -> PostedNote {
        let appears = box.appearances.withLock { count in
            defer { count = max(count - 1, 0) }
            return count > 0
        }
        if appears, let scheduler = box.scheduler.withLock({ $0 }) { await scheduler.notifierBecameAvailable() }
        throw NotifierUnavailable("no notification server")
    }

    func withdraw(_ shown: PostedNote) async throws {}

    var responses: AsyncStream<NoteResponse> { AsyncStream { $0.finish() } }
}

struct AvailabilityRaceTests {
    @Test func aServerAppearingWhileAPostFailsGetsTheRetryItsBackoffNotAWaitForTheNextOne() async throws {
        let h = try Harness()
        defer { h.cleanUp() }
        let notifier = AppearingMidPostNotifier()
        let events = EventLog()
        let scheduler = Scheduler(
            store: h.store,
            notifier: notifier,
            clock: h.clock,
            systemZone: { Harness.utc },
            log: { events.record($0) }
        )
        notifier.box.scheduler.withLock { $0 = scheduler }
        try h.once("tea", at: 10)
        h.clock.advance(to: h.at(10))

        // The appearance came after the server was found missing: retried after its backoff
        #expect(await scheduler.runPass() == h.at(11))
        #expect(events.all == [.deliveryFailed(ids: ["tea"], attempt: 1, retryAt: h.at(11), error: "no notification server")])

        // No appearance this time: it waits for the next one, without a timer
        h.clock.advance(to: h.at(11))
        #expect(await scheduler.runPass() == nil)
        #expect(events.all.last == .deliveryWaiting(ids: ["tea"], error: "no notification server"))
        let entry = try #require(try h.store.ledger().first)
        #expect(entry.state == "due" && entry.attempts == 2)
    }
}

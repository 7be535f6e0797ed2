import ChimeCore
import ChimeStore
import ChimeTesting
import Foundation
import Synchronization
import Testing

/// The scheduler's loop, `run(waker:)`, parked on the manual clock. The test moves the clock only
/// once the loop is parked, and awaits posts instead of polling.
struct SchedulerLoopTests {
    @Test(.timeLimit(.minutes(1)))
    func loopParksFiresPicksUpChangesAndSurvivesClockSets() async throws {
        let h = try Harness()
        defer { h.cleanUp() }
        try h.once("tea", at: 60)
        let loop = Task { await h.scheduler.run(waker: h.clock) }

        // The loop parks until the first deadline
        #expect(await h.clock.parked() == h.wake(60))
        #expect(h.notifier.attempts == 0)

        // When the clock reaches it, the note arrives, on time
        h.clock.advance(to: h.at(60))
        let tea = await h.notifier.nextPost()
        #expect(tea.id == "tea")
        #expect(tea.postedAt == h.at(60))
        #expect(tea.lateness(of: tea.deliveries[0]) == .zero)
        // and the loop parks with nothing to wait for
        #expect(await h.clock.parked() == nil)

        // A reminder scheduled by the CLI is picked up on the poke
        try h.once("cake", at: 120)
        h.clock.poke()
        #expect(await h.clock.parked() == h.wake(120))

        // The clock set back an hour: the loop wakes, fires nothing twice, and waits for cake again
        h.clock.set(to: h.at(60 - 3_600))
        #expect(await h.clock.parked() == h.wake(120))
        #expect(h.notifier.posts.map(\.id) == ["tea"])

        // The clock set forward an hour past cake: it fires once, late
        h.clock.set(to: h.at(60 + 3_600))
        let cake = await h.notifier.nextPost()
        #expect(cake.id == "cake")
        #expect(cake.postedAt == h.at(3_660))
        #expect(cake.lateness(of: cake.deliveries[0]) == .seconds(3_540))
        #expect(await h.clock.parked() == nil)

        // Shutdown ends the loop
        h.clock.shutdown()
        await loop.value
        #expect(h.notifier.posts.map(\.id) == ["tea", "cake"])
        #expect(h.notifier.attempts == 2)
        #expect(try h.store.ledger().map(\.state) == ["posted", "posted"])
    }

    @Test(.timeLimit(.minutes(1)))
    func loopFiresARecurringReminderAtEachDeadline() async throws {
        let h = try Harness()
        defer { h.cleanUp() }
        try h.store.schedule(
            NewReminder(id: "stretch", title: "Stretch", trigger: .interval(seconds: 900, anchor: Harness.t0)),
            now: h.clock.now(),
            systemZone: Harness.utc
        )
        let loop = Task { await h.scheduler.run(waker: h.clock) }

        for k in 1...4 {
            let deadline = await h.clock.parked()
            #expect(deadline == h.wake(TimeInterval(900 * k)))
            // Moving short of the deadline wakes nothing
            h.clock.advance(to: h.at(TimeInterval(900 * k) - 1))
            #expect(await h.clock.parked() == deadline)
            #expect(h.notifier.attempts == k - 1)
            h.clock.advance(to: h.at(TimeInterval(900 * k)))
            let note = await h.notifier.nextPost()
            #expect(note.deliveries.map(\.due) == [h.at(TimeInterval(900 * k))])
            #expect(note.deliveries.map(\.missedCount) == [0])
        }
        #expect(await h.clock.parked() == h.wake(4_500))

        h.clock.shutdown()
        await loop.value
        #expect(h.notifier.posts.count == 4)
        #expect(try h.store.ledger(id: "stretch").count == 4)
    }

    @Test(.timeLimit(.minutes(1)))
    func loopRetriesAFailedPostAtTheBackoffDeadline() async throws {
        let h = try Harness()
        defer { h.cleanUp() }
        try h.once("tea", at: 60)
        h.notifier.failNext(2)
        let loop = Task { await h.scheduler.run(waker: h.clock) }

        #expect(await h.clock.parked() == h.wake(60))
        h.clock.advance(to: h.at(60))
        // First failure: parks until 1 s later
        #expect(await h.clock.parked() == h.at(61))
        h.clock.advance(to: h.at(61))
        // Second failure: parks until 2 s later
        #expect(await h.clock.parked() == h.at(63))
        h.clock.advance(to: h.at(63))
        let note = await h.notifier.nextPost()
        #expect(note.id == "tea")
        #expect(note.lateness(of: note.deliveries[0]) == .seconds(3))
        #expect(await h.clock.parked() == nil)

        h.clock.shutdown()
        await loop.value
        #expect(h.notifier.attempts == 3)
        #expect(h.notifier.posts.count == 1)
        #expect(try h.store.ledger().map(\.attempts) == [2])
    }

    @Test(.timeLimit(.minutes(1)))
    func loopRecordsAheadThenPostsAtTheInstant() async throws {
        let h = try Harness()
        defer { h.cleanUp() }
        #expect(h.scheduler.configuration.lookahead > .zero)
        try h.once("tea", at: 60)
        let loop = Task { await h.scheduler.run(waker: h.clock) }

        // Woken its look-ahead early, the scheduler records the occurrence and parks at the instant
        let early = try #require(await h.clock.parked())
        #expect(early == h.wake(60))
        h.clock.advance(to: early)
        #expect(await h.clock.parked() == h.at(60))
        #expect(try h.store.ledger().map(\.state) == ["due"])
        #expect(h.notifier.attempts == 0)

        // At the instant it posts, on time, once
        h.clock.advance(to: h.at(60))
        let note = await h.notifier.nextPost()
        #expect(note.id == "tea")
        #expect(note.postedAt == h.at(60))
        #expect(await h.clock.parked() == nil)
        #expect(try h.store.ledger().map(\.state) == ["posted"])

        h.clock.shutdown()
        await loop.value
        #expect(h.notifier.attempts == 1)
    }

    @Test(.timeLimit(.minutes(1)))
    func pokeAfterCancellingDropsWhatWasStaged() async throws {
        let h = try Harness()
        defer { h.cleanUp() }
        try h.store.schedule(
            NewReminder(id: "water", title: "Water", trigger: .interval(seconds: 600, anchor: Harness.t0)),
            now: h.clock.now(),
            systemZone: Harness.utc
        )
        let loop = Task { await h.scheduler.run(waker: h.clock) }

        // Given the 600 s occurrence recorded ahead and waiting for its instant
        let early = try #require(await h.clock.parked())
        h.clock.advance(to: early)
        #expect(await h.clock.parked() == h.at(600))

        // When the CLI cancels the reminder and pokes
        try h.store.cancel(id: "water", now: h.clock.now())
        h.clock.poke()

        // Then nothing is left to wake for, and nothing is posted at the instant
        #expect(await h.clock.parked() == nil)
        h.clock.advance(to: h.at(3_600))
        h.clock.shutdown()
        await loop.value
        #expect(h.notifier.attempts == 0)
        #expect(try h.store.ledger(id: "water").map(\.state) == ["cancelled"])
    }

    @Test(.timeLimit(.minutes(1)))
    func aPokeWaitingAtTheInstantIsReadBeforeWhatWasStagedIsPosted() async throws {
        let h = try Harness()
        defer { h.cleanUp() }
        try h.once("tea", at: 60)
        try h.once("cake", at: 60)
        let waker = PokeWaitingWaker(clock: h.clock)
        let loop = Task { await h.scheduler.run(waker: waker) }

        // Given both recorded ahead and waiting for their instant
        h.clock.advance(to: try #require(await h.clock.parked()))
        #expect(await h.clock.parked() == h.at(60))

        // When the CLI cancels tea and its poke is still unread as the instant comes (the
        // runner had no CPU across it)
        try h.store.cancel(id: "tea", now: h.clock.now())
        waker.leavePokeWaiting()
        h.clock.advance(to: h.at(60))

        // Then the store is read first: cake fires, on time; tea does not
        let cake = await h.notifier.nextPost()
        #expect(cake.id == "cake")
        #expect(cake.postedAt == h.at(60))
        #expect(await h.clock.parked() == nil)
        h.clock.shutdown()
        await loop.value
        #expect(h.notifier.posts.map(\.id) == ["cake"])
        #expect(try h.store.ledger(id: "tea").map(\.state) == ["cancelled"])
    }

    @Test(.timeLimit(.minutes(1)))
    func shutdownBeforeTheFirstParkEndsTheLoopAtOnce() async throws {
        let h = try Harness()
        defer { h.cleanUp() }
        try h.once("tea", at: 60)

        h.clock.shutdown()
        await h.scheduler.run(waker: h.clock)

        #expect(h.clock.waits == 1)
        #expect(h.notifier.attempts == 0)
    }
}

/// The manual clock as the scheduler's waker, with a poke that can be left unread, as the
/// runner's socket holds one the poll thread has not read yet.
struct PokeWaitingWaker: Waker {
    let clock: ManualWallClock
    private final class Flag: Sendable { let waiting = Mutex(false) }
    private let flag = Flag()

    init(clock: ManualWallClock) { self.clock = clock }

    func leavePokeWaiting() { flag.waiting.withLock { $0 = true } }

    func wait(until deadline: Date?) async -> WakeReason {
        if flag.waiting.withLock({ waiting in
            defer { waiting = false }
            return waiting
        }) {
            return .poked
        }
        return await clock.wait(until: deadline)
    }

    func hasPendingWake() -> Bool { flag.waiting.withLock { $0 } }

    func takeQueries() -> [DeliveryQuery] { clock.takeQueries() }

    func poke() { clock.poke() }
}

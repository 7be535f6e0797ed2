import ChimeCore
import ChimeStore
import ChimeTesting
import Foundation
import Synchronization
import Testing

/// A notifier that lets a test act at the instant a post goes out (before it reaches the
/// recording notifier): a cancel that commits after the runner's last look at the store.
struct InterceptingNotifier: Notifier {
    let base: RecordingNotifier
    let onPost: @Sendable (Note) -> Void

    func post(_ note: Note) async throws -> PostedNote {
        onPost(note)
        return try await base.post(note)
    }

    func withdraw(_ shown: PostedNote) async throws { try await base.withdraw(shown) }

    var responses: AsyncStream<NoteResponse> { base.responses }
}

/// `chime cancel` against a runner that has staged the occurrence for its instant: the cancel
/// commits, then asks the runner which of the occurrences it caught in flight were shown. What
/// it is told and what the ledger says agree with what the person saw.
struct CancelInFlightTests {
    /// Runs the loop to where it has recorded the occurrence due at 60 s, 25 ms ahead, and parks
    /// until that instant.
    static func stage(_ h: Harness, sourceLocation: SourceLocation = #_sourceLocation) async {
        #expect(await h.clock.parked() == h.wake(60), sourceLocation: sourceLocation)
        h.clock.advance(to: h.wake(60))
        #expect(await h.clock.parked() == h.at(60), sourceLocation: sourceLocation)
    }

    /// The scheduler's loop on the harness's store and clock, posting through `notifier`.
    static func loop(_ h: Harness, notifier: any Notifier) -> (Scheduler, Task<Void, Never>) {
        let scheduler = Scheduler(store: h.store, notifier: notifier, clock: h.clock, systemZone: { Harness.utc })
        return (scheduler, Task { await scheduler.run(waker: h.clock) })
    }

    @Test("A cancel that commits as the alert is being shown is told it came too late, and the ledger says posted", .timeLimit(.minutes(1)))
    func cancelDuringThePost() async throws {
        let h = try Harness()
        defer { h.cleanUp() }
        try h.once("tea", at: 60)
        let store = h.store
        let clock = h.clock
        let question = Mutex<(keys: [OccurrenceKey], answer: Task<[OccurrenceKey: Date], Never>?)>(([], nil))
        let notifier = InterceptingNotifier(base: h.notifier) { _ in
            // The cancel commits after the runner's last look at the store, as the post goes out
            let keys = (try? store.cancelReporting(ids: ["tea"], now: clock.now()).inFlight.map(\.key)) ?? []
            question.withLock { $0 = (keys, Task { await clock.ask(keys) }) }
        }
        let (_, loop) = Self.loop(h, notifier: notifier)

        // The runner records tea ahead of its instant and parks until the instant
        await Self.stage(h)
        h.clock.advance(to: h.at(60))
        #expect(await h.notifier.nextPost().id == "tea")

        // The cancel caught tea in flight, and the runner says it was shown at its instant
        let (keys, asked) = question.withLock { $0 }
        #expect(keys.count == 1)
        let answer = await asked?.value ?? [:]
        #expect(answer == [keys[0]: h.at(60)])
        // The ledger records what the person saw: posted, at the instant (not "cancelled" and never posted)
        let ledger = try h.store.ledger(id: "tea")
        #expect(ledger.map(\.state) == ["posted"], "\(ledger)")
        #expect(ledger.first?.postedAt == h.at(60))
        // And it is shown once, and nothing more
        _ = await h.clock.parked()
        #expect(h.notifier.posts.count == 1)
        h.clock.shutdown()
        await loop.value
    }

    @Test("A cancel that commits before the instant is told 'not shown', and the alert never comes", .timeLimit(.minutes(1)))
    func cancelBeforeTheInstant() async throws {
        let h = try Harness()
        defer { h.cleanUp() }
        try h.once("tea", at: 60)
        let (_, loop) = Self.loop(h, notifier: h.notifier)
        await Self.stage(h)

        // Staged for 09:01:00, cancelled 25 ms before it
        let cancellation = try h.store.cancelReporting(ids: ["tea"], now: h.clock.now())
        #expect(cancellation.inFlight.map(\.reminderID) == ["tea"])
        let answer = await h.clock.ask(cancellation.inFlight.map(\.key))
        #expect(answer.isEmpty)

        // Time passes the instant: nothing is shown, and the ledger says cancelled
        #expect(await h.clock.parked() == nil)
        h.clock.advance(to: h.at(120))
        #expect(await h.clock.parked() == nil)
        #expect(h.notifier.posts.isEmpty)
        #expect(try h.store.ledger(id: "tea").map(\.state) == ["cancelled"])
        h.clock.shutdown()
        await loop.value
    }

    @Test(
        "A recurring reminder cancelled as one occurrence is shown: that one is posted and reported, none after it",
        .timeLimit(.minutes(1))
    )
    func recurringCancelDuringThePost() async throws {
        let h = try Harness()
        defer { h.cleanUp() }
        try h.store.schedule(
            NewReminder(id: "stretch", title: "Stretch", trigger: .interval(seconds: 60, anchor: Harness.t0)),
            now: h.clock.now(),
            systemZone: Harness.utc
        )
        let store = h.store
        let clock = h.clock
        let asked = Mutex<Task<[OccurrenceKey: Date], Never>?>(nil)
        let notifier = InterceptingNotifier(base: h.notifier) { _ in
            let keys = (try? store.cancelReporting(ids: ["stretch"], now: clock.now()).inFlight.map(\.key)) ?? []
            asked.withLock { $0 = Task { await clock.ask(keys) } }
        }
        let (_, loop) = Self.loop(h, notifier: notifier)
        await Self.stage(h)
        h.clock.advance(to: h.at(60))
        _ = await h.notifier.nextPost()
        let answer = await asked.withLock { $0 }?.value ?? [:]
        #expect(answer.values.map { $0 } == [h.at(60)])

        // Later instants pass: nothing more, and the ledger has the one shown occurrence as posted
        _ = await h.clock.parked()
        h.clock.advance(to: h.at(300))
        _ = await h.clock.parked()
        #expect(h.notifier.posts.count == 1)
        #expect(try h.store.ledger(id: "stretch").map(\.state) == ["posted"])
        h.clock.shutdown()
        await loop.value
    }

    @Test("A cancel during a pass: what the runner has not posted yet is withdrawn and never shown", .timeLimit(.minutes(1)))
    func cancelDuringAPass() async throws {
        let h = try Harness()
        defer { h.cleanUp() }
        for id in ["first", "second", "third"] { try h.once(id, at: 60) }
        let store = h.store
        let clock = h.clock
        let told = Mutex<[OccurrenceKey: Date]?>(nil)
        let asked = Mutex(false)
        let notifier = InterceptingNotifier(base: h.notifier) { note in
            // While the first of three is being shown, the other two are cancelled
            guard note.id == "first", !asked.withLock({ $0 }) else { return }
            asked.withLock { $0 = true }
            let keys = (try? store.cancelReporting(ids: ["second", "third"], now: clock.now()).inFlight.map(\.key)) ?? []
            clock.ask(DeliveryQuery(keys: keys) { answer in told.withLock { $0 = answer } })
        }
        let (_, loop) = Self.loop(h, notifier: notifier)
        await Self.stage(h)
        h.clock.advance(to: h.at(60))
        #expect(await h.notifier.nextPost().id == "first")

        // The question is answered before the next post: neither was shown, and neither is
        _ = await h.clock.parked()
        #expect(told.withLock { $0 } == [:])
        h.clock.advance(to: h.at(120))
        _ = await h.clock.parked()
        #expect(h.notifier.posts.map(\.id) == ["first"])
        #expect(try h.store.ledger(id: "second").map(\.state) == ["cancelled"])
        #expect(try h.store.ledger(id: "third").map(\.state) == ["cancelled"])
        h.clock.shutdown()
        await loop.value
    }

    @Test("A command's request to withdraw an alert reaches the notifier with the server's id", .timeLimit(.minutes(1)))
    func withdrawThroughTheNotifier() async throws {
        let h = try Harness()
        defer { h.cleanUp() }
        try h.once("tea", at: 60)
        let notifier = ServerIDNotifier(base: h.notifier, serverID: 42)
        let (_, loop) = Self.loop(h, notifier: notifier)
        await Self.stage(h)
        h.clock.advance(to: h.at(60))
        #expect(await h.notifier.nextPost().id == "tea")
        _ = await h.clock.parked()

        // When a command asks the runner to withdraw tea's alert
        h.clock.withdraw(["tea", "never-shown"])
        _ = await h.clock.parked()

        // Then the notifier is asked to close it, by the id the server gave it
        #expect(notifier.withdrawn == [PostedNote(id: "tea", serverID: 42)])
        h.clock.shutdown()
        await loop.value
    }
}

/// A notifier whose server gives every alert the id `serverID` (as a desktop's does), and that
/// keeps what it was asked to withdraw.
struct ServerIDNotifier: Notifier {
    let base: RecordingNotifier
    let serverID: UInt32
    private final class Withdrawn: Sendable { let alerts = Mutex<[PostedNote]>([]) }
    private let box = Withdrawn()

    init(base: RecordingNotifier, serverID: UInt32) {
        self.base = base
        self.serverID = serverID
    }

    var withdrawn: [PostedNote] { box.alerts.withLock { $0 } }

    func post(_ note: Note) async throws -> PostedNote {
        _ = try await base.post(note)
        return PostedNote(id: note.id, serverID: serverID)
    }

    func withdraw(_ shown: PostedNote) async throws { box.alerts.withLock { $0.append(shown) } }

    var responses: AsyncStream<NoteResponse> { base.responses }
}

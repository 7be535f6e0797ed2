import ChimeCore
import ChimeDoses
import ChimeStore
import ChimeTesting
import Foundation
import Testing

/// Dose alerts and quiet, in the scheduler's loop on the manual clock: they come through quiet by
/// default; when the person chose `wait`, the alert and its repeats wait for the end and come on
/// their own, with their actions: a medication reminder is never dropped.
struct DoseQuietTests {
    static let t = DoseRunnerTests.t
    static let occurrence = DoseRunnerTests.occurrence

    static func at(_ minutes: Double) -> Date { DoseRunnerTests.at(minutes) }

    /// A harness a minute before Aspirin's 08:00 dose, with `quiet` in the store before the loop starts.
    static func started(_ quiet: (inout QuietState) -> Void) async throws -> (DoseHarness, DoseLoop) {
        let h = try DoseHarness(now: at(-1))
        try h.add("Aspirin", at: "08:00")
        try h.store.updateQuiet { quiet(&$0) }
        let loop = DoseLoop(h)
        return (h, loop)
    }

    @Test(.timeLimit(.minutes(1)))
    func dosesComeThroughQuietByDefault() async throws {
        let (h, loop) = try await Self.started { $0.until = Self.at(60) }
        defer { h.cleanUp() }
        #expect(await h.clock.parked() == DoseLoop.wake(Self.t))
        h.clock.advance(to: Self.t)
        let note = await loop.notifier.nextPost()
        #expect(note.id == Self.occurrence)
        #expect(note.postedAt == Self.t)
        await loop.stop()
    }

    @Test(.timeLimit(.minutes(1)))
    func aDoseThatWaitsComesAtTheEndWithItsActionsAndThenRepeats() async throws {
        let (h, loop) = try await Self.started {
            $0.settings.essential = .wait
            $0.until = Self.at(20)
        }
        defer { h.cleanUp() }
        #expect(await h.clock.parked() == DoseLoop.wake(Self.t))
        h.clock.advance(to: Self.t)
        // Held: the loop waits for the end of the quiet, and no repeat is planned meanwhile
        #expect(await h.clock.parked() == Self.at(20))
        #expect(loop.notifier.posts.isEmpty)
        #expect(try h.store.heldOccurrences().map(\.reminderID) == [Self.occurrence])
        #expect(try h.stored(Self.occurrence)?.status == "pending")

        h.clock.advance(to: Self.at(20))
        let note = await loop.notifier.nextPost()
        #expect(note.id == Self.occurrence)
        #expect(note.actions.map(\.key) == ["take", "snooze", "skip"])
        #expect(note.postedAt == Self.at(20))
        // Shown: its repeat is planned from now
        #expect(await h.clock.parked() == DoseLoop.wake(Self.at(35)))
        await loop.stop()
        #expect(loop.notifier.posts.count == 1)
    }

    @Test(.timeLimit(.minutes(1)))
    func aRepeatThatFallsInQuietWaitsForTheEndRatherThanVanish() async throws {
        let (h, loop) = try await Self.started { $0.settings.essential = .wait }
        defer { h.cleanUp() }
        #expect(await h.clock.parked() == DoseLoop.wake(Self.t))
        h.clock.advance(to: Self.t)
        #expect(await loop.notifier.nextPost().id == Self.occurrence)
        #expect(await h.clock.parked() == DoseLoop.wake(Self.at(15)))

        // Quiet from 08:05 to 08:40 (`chime quiet until 08:40` pokes the runner)
        h.clock.advance(to: Self.at(5))
        try h.store.updateQuiet { $0.until = Self.at(40) }
        h.clock.poke()
        #expect(await h.clock.parked() == DoseLoop.wake(Self.at(15)))
        h.clock.advance(to: Self.at(15))
        #expect(await h.clock.parked() == Self.at(40))
        #expect(loop.notifier.posts.count == 1)

        h.clock.advance(to: Self.at(40))
        let repeated = await loop.notifier.nextPost()
        #expect(repeated.id == Self.occurrence)
        #expect(repeated.postedAt == Self.at(40))
        #expect(repeated.deliveries.count == 1)
        await loop.stop()
        #expect(try h.store.ledger(id: Self.occurrence).map(\.state) == ["posted", "posted"])
    }
}

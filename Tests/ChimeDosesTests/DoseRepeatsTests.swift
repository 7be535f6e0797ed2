import ChimeCore
import ChimeDoses
import ChimeTesting
import Foundation
import Testing

/// The repeats of an unanswered dose alert follow the book's ``DoseRepeats`` (the config
/// file's `doses.repeat_every` and `repeat_count`), not only the built-in 15 minutes × 3.
struct DoseRepeatsTests {
    @Test(.timeLimit(.minutes(1)))
    func anUnansweredAlertRepeatsAsConfigured() async throws {
        let h = try DoseHarness(now: DoseRunnerTests.at(-1))
        defer { h.cleanUp() }
        try h.add("Aspirin", at: "08:00")
        let book = DoseBook(store: h.store, clock: h.clock, systemZone: h.systemZone, repeats: DoseRepeats(interval: 300, count: 1))
        let loop = DoseLoop(h, book: book)
        #expect(await h.clock.parked() == DoseLoop.wake(DoseRunnerTests.t))
        for minutes in [0.0, 5] {
            h.clock.advance(to: DoseRunnerTests.at(minutes))
            let note = await loop.notifier.nextPost()
            #expect(note.id == DoseRunnerTests.occurrence, "at +\(minutes)m")
            #expect(note.postedAt == DoseRunnerTests.at(minutes), "at +\(minutes)m")
        }
        // One repeat only: the next wake is tomorrow's dose.
        #expect(await h.clock.parked() == DoseLoop.wake(DoseRunnerTests.at(24 * 60)))
        await loop.stop()
        #expect(loop.notifier.posts.count == 2)
    }

    @Test func theDefaultsAreTheRules() {
        #expect(DoseRepeats() == DoseRepeats(interval: DoseRules.repeatInterval, count: DoseRules.maxRepeats))
    }
}

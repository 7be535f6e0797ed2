import ChimeCore
import ChimeStore
import ChimeTesting
import Foundation
import Synchronization
import Testing

/// A family of the tests' own: its alerts get `urgency`; `isEssential` as a dose's are; it holds
/// ordinary alerts while `holding` (as a focus session does).
final class QuietTestFamily: ReminderFamily {
    let kind: String
    let isEssential: Bool
    let urgency: Note.Urgency
    let holding = Mutex(false)

    init(kind: String, isEssential: Bool = false, urgency: Note.Urgency = .normal) {
        (self.kind, self.isEssential, self.urgency) = (kind, isEssential, urgency)
    }

    func prepare(reason: WakeReason) throws {}

    func decorate(_ note: inout Note, for occurrence: PendingOccurrence) { note.urgency = urgency }

    func hold() throws -> FamilyHold? { holding.withLock { $0 } ? FamilyHold(reason: "test session") : nil }
}

/// Quiet hours, quiet by hand and a family's hold, on the manual clock: what is held stays due in
/// the ledger, the loop wakes exactly when quiet ends and posts one summary; critical alerts and
/// essential ones (doses) come through, or, when the person chose `wait`, come at the end on
/// their own: never dropped.
struct QuietHoldTests {
    let pill = QuietTestFamily(kind: "pill", isEssential: true)
    let alarm = QuietTestFamily(kind: "alarm", urgency: .critical)
    let session = QuietTestFamily(kind: "session")

    func scheduler(_ h: Harness) -> Scheduler {
        let events = h.events
        return Scheduler(
            store: h.store,
            notifier: h.notifier,
            clock: h.clock,
            systemZone: { Harness.utc },
            log: { events.record($0) },
            families: [pill, alarm, session]
        )
    }

    func once(_ h: Harness, _ id: String, at seconds: TimeInterval, kind: String = "plain") throws {
        try h.store.schedule(
            NewReminder(id: id, title: "Title \(id)", trigger: .once(h.at(seconds)), kind: kind),
            now: h.clock.now(),
            systemZone: Harness.utc
        )
    }

    @Test(.timeLimit(.minutes(1)))
    func quietHoursHoldOrdinaryAlertsAndPostOneSummaryWhenTheyEnd() async throws {
        let h = try Harness()
        defer { h.cleanUp() }
        // t0 is 09:00 UTC: the window 08:30-10:00 is in effect and ends at t0 + 3600
        try h.store.updateQuiet {
            $0.settings.hours = QuietSettings.Window(start: LocalTime(hour: 8, minute: 30)!, end: LocalTime(hour: 10, minute: 0)!)
        }
        try once(h, "tea", at: 60)
        try once(h, "cake", at: 120)
        try once(h, "fire", at: 180, kind: "alarm")
        try once(h, "dose", at: 240, kind: "pill")
        let scheduler = scheduler(h)
        let loop = Task { await scheduler.run(waker: h.clock) }

        for step in [60.0, 120] {
            #expect(await h.clock.parked() == h.wake(step))
            h.clock.advance(to: h.at(step))
        }
        // Held: nothing posted, both still due in the ledger
        #expect(await h.clock.parked() == h.wake(180))
        #expect(h.notifier.attempts == 0)
        #expect(try h.store.heldOccurrences().map(\.reminderID) == ["tea", "cake"])
        #expect(try h.store.ledger().map(\.state) == ["due", "due"])

        // A critical alert and a dose come through on time
        h.clock.advance(to: h.at(180))
        #expect(await h.notifier.nextPost().id == "fire")
        #expect(await h.clock.parked() == h.wake(240))
        h.clock.advance(to: h.at(240))
        #expect(await h.notifier.nextPost().id == "dose")

        // The loop wakes exactly at the end of the quiet (a deadline, not polling), and posts one summary
        #expect(await h.clock.parked() == h.at(3_600))
        h.clock.advance(to: h.at(3_600))
        let summary = await h.notifier.nextPost()
        #expect(summary.title == "2 reminders held while quiet")
        #expect(summary.deliveries.map(\.reminderID) == ["tea", "cake"])
        #expect(summary.postedAt == h.at(3_600))
        #expect(await h.clock.parked() == nil)
        h.clock.shutdown()
        await loop.value
        #expect(h.notifier.posts.map(\.id) == ["fire", "dose", "summary"])
        // The runner's log says what was held, until when, and when it came
        #expect(
            h.events.all == [
                .held(ids: ["tea"], until: h.at(3_600)), .held(ids: ["cake"], until: h.at(3_600)), .released(ids: ["tea", "cake"]),
            ]
        )
        #expect(try h.store.ledger().map(\.state) == ["posted", "posted", "posted", "posted"])
        #expect(try h.store.heldOccurrences().isEmpty)
    }

    @Test(.timeLimit(.minutes(1)))
    func dosesThatWaitComeAtTheEndOnTheirOwnAfterARestartNeverDroppedNorTwice() async throws {
        let h = try Harness()
        defer { h.cleanUp() }
        try h.store.updateQuiet {
            $0.settings.essential = .wait
            $0.until = h.at(1_800)
        }
        try once(h, "dose", at: 60, kind: "pill")
        try once(h, "tea", at: 90)
        let first = scheduler(h)
        let loop = Task { await first.run(waker: h.clock) }
        #expect(await h.clock.parked() == h.wake(60))
        h.clock.advance(to: h.at(60))
        #expect(await h.clock.parked() == h.wake(90))
        h.clock.advance(to: h.at(90))
        // Both held, and the loop waits for the end of the quiet
        #expect(await h.clock.parked() == h.at(1_800))
        #expect(h.notifier.attempts == 0)
        // The runner stops (a restart) while they are held
        h.clock.shutdown()
        await loop.value

        let clock = ManualWallClock(now: h.at(600))
        let second = Scheduler(store: h.store, notifier: h.notifier, clock: clock, systemZone: { Harness.utc }, families: [pill])
        let again = Task { await second.run(waker: clock) }
        #expect(await clock.parked() == h.at(1_800))
        #expect(h.notifier.attempts == 0)
        #expect(try h.store.heldOccurrences().map(\.reminderID) == ["dose", "tea"])
        clock.advance(to: h.at(1_800))
        // The dose on its own (its own alert), then the ordinary one (alone: its own too)
        let posts = await h.notifier.nextPosts(2)
        #expect(posts.map(\.id) == ["dose", "tea"])
        #expect(posts.map(\.deliveries.count) == [1, 1])
        #expect(await clock.parked() == nil)
        clock.shutdown()
        await again.value
        #expect(h.postCount(of: "dose") == 1)
        #expect(h.postCount(of: "tea") == 1)
        #expect(try h.store.ledger().map(\.state) == ["posted", "posted"])
    }

    @Test(.timeLimit(.minutes(1)))
    func quietOffEndsItNowAndTheSummaryComes() async throws {
        let h = try Harness()
        defer { h.cleanUp() }
        try h.store.updateQuiet { $0.until = h.at(7_200) }
        for (index, id) in ["a", "b", "c"].enumerated() { try once(h, id, at: TimeInterval(60 * (index + 1))) }
        let scheduler = scheduler(h)
        let loop = Task { await scheduler.run(waker: h.clock) }
        for step in [60.0, 120, 180] {
            #expect(await h.clock.parked() == h.wake(step))
            h.clock.advance(to: h.at(step))
        }
        #expect(await h.clock.parked() == h.at(7_200))
        // The clock set back an hour changes nothing: still held, still until the same end
        h.clock.set(to: h.at(180 - 3_600))
        #expect(await h.clock.parked() == h.at(7_200))
        #expect(h.notifier.attempts == 0)
        h.clock.set(to: h.at(300))
        #expect(await h.clock.parked() == h.at(7_200))

        // `chime quiet off`: the store changes and the runner is poked
        try h.store.updateQuiet { $0.until = nil }
        h.clock.poke()
        let summary = await h.notifier.nextPost()
        #expect(summary.title == "3 reminders held while quiet")
        #expect(summary.deliveries.map(\.reminderID) == ["a", "b", "c"])
        #expect(summary.postedAt == h.at(300))
        #expect(await h.clock.parked() == nil)
        h.clock.shutdown()
        await loop.value
        #expect(h.notifier.attempts == 1)
    }

    @Test(.timeLimit(.minutes(1)))
    func aFamilysHoldKeepsPlainRemindersUntilItLetsGoUnlessTurnedOff() async throws {
        let h = try Harness()
        defer { h.cleanUp() }
        session.holding.withLock { $0 = true }
        try once(h, "a", at: 60)
        try once(h, "b", at: 120)
        try once(h, "own", at: 150, kind: "session")
        try once(h, "dose", at: 180, kind: "pill")
        let scheduler = scheduler(h)
        let loop = Task { await scheduler.run(waker: h.clock) }
        for step in [60.0, 120, 150] {
            #expect(await h.clock.parked() == h.wake(step))
            h.clock.advance(to: h.at(step))
        }
        // The family's own alert comes; the plain ones are held with no end
        #expect(await h.notifier.nextPost().id == "own")
        #expect(await h.clock.parked() == h.wake(180))
        h.clock.advance(to: h.at(180))
        #expect(await h.notifier.nextPost().id == "dose")
        #expect(await h.clock.parked() == nil)
        #expect(try h.store.heldOccurrences().map(\.readyAt) == [.distantFuture, .distantFuture])

        // The session ends (the family pokes): one summary
        h.clock.advance(to: h.at(900))
        session.holding.withLock { $0 = false }
        h.clock.poke()
        let summary = await h.notifier.nextPost()
        #expect(summary.deliveries.map(\.reminderID) == ["a", "b"])
        #expect(summary.postedAt == h.at(900))

        // With the hold turned off, a new session holds nothing
        try h.store.updateQuiet { $0.settings.familyHold = false }
        session.holding.withLock { $0 = true }
        try once(h, "c", at: 960)
        h.clock.poke()
        #expect(await h.clock.parked() == h.wake(960))
        h.clock.advance(to: h.at(960))
        #expect(await h.notifier.nextPost().id == "c")
        h.clock.shutdown()
        await loop.value
        #expect(h.notifier.posts.map(\.id) == ["own", "dose", "summary", "c"])
    }

    @Test func theQuietPeriodFollowsTheWindowAcrossMidnightAndOff() throws {
        let window = try QuietSettings.Window.parse("22:00-07:00")
        var state = QuietState(settings: QuietSettings(hours: window))
        let utc = Harness.utc
        // 09:00: not quiet; 23:30: quiet until 07:00 the next morning
        #expect(state.period(at: Harness.t0, zone: utc) == nil)
        let late = Harness.t0.addingTimeInterval(14.5 * 3_600)
        #expect(state.period(at: late, zone: utc)?.end == Harness.t0.addingTimeInterval(22 * 3_600))
        // Off for tonight: not quiet until the window's end, then quiet again the next evening
        state.windowOffUntil = Harness.t0.addingTimeInterval(22 * 3_600)
        #expect(state.period(at: late, zone: utc) == nil)
        #expect(state.period(at: Harness.t0.addingTimeInterval(37 * 3_600), zone: utc)?.reasons == [.hours])
        // Bad windows are refused, naming the value
        for bad in ["22:00", "22:00-22:00", "25:00-07:00", "x"] {
            let error = #expect(throws: ChimeError.self) { try QuietSettings.Window.parse(bad) }
            #expect(error?.message.contains("'\(bad)'") == true)
        }
    }
}

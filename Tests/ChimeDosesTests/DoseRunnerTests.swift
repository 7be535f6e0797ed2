import ChimeCore
import ChimeDoses
import ChimeStore
import ChimeTesting
import Foundation
import Testing

/// Dose alerts in the scheduler's loop (what the runner runs), on the manual clock: the alert
/// posts at its time with its actions, answers come back through the notifier, unanswered
/// alerts repeat in place, and doses that fell due while nothing ran collapse into one summary.
struct DoseRunnerTests {
    /// Monday 2026-01-05 08:00 UTC: the dose's time.
    static let t = DoseHarness.instant(2026, 1, 5, 8, 0)
    static let occurrence = "med-1-20260105-0800"

    static func at(_ minutes: Double) -> Date { t.addingTimeInterval(minutes * 60) }

    /// A harness a minute before the dose, Aspirin added, the loop started and parked.
    static func started() async throws -> (DoseHarness, DoseLoop) {
        let h = try DoseHarness(now: at(-1))
        try h.add("Aspirin", at: "08:00") { $0.instructions = "With food" }
        let loop = DoseLoop(h)
        #expect(await h.clock.parked() == DoseLoop.wake(t))
        return (h, loop)
    }

    @Test(.timeLimit(.minutes(1)))
    func theAlertPostsAtItsTimeWithItsActionsAndTakeEndsIt() async throws {
        let (h, loop) = try await Self.started()
        defer { h.cleanUp() }
        h.clock.advance(to: Self.t)
        let note = await loop.notifier.nextPost()
        #expect(note.id == Self.occurrence)
        // The title names the medication (two alerts, and a server's menu of their buttons, tell apart).
        #expect(note.title == "Aspirin 100 mg")
        #expect(note.body == "Medication Reminder\nWith food")
        #expect(note.actions.map(\.key) == ["take", "snooze", "skip"])
        #expect(note.actions.map(\.label) == ["Mark as Taken", "Snooze 10 min", "Skip"])
        #expect(note.category == "x-chime.dose")
        #expect(note.sticky)
        #expect(note.postedAt == Self.t)
        // Unanswered, a repeat is planned 15 minutes on.
        #expect(await h.clock.parked() == DoseLoop.wake(Self.at(15)))

        h.clock.advance(to: Self.at(2))
        await loop.act("take", on: Self.occurrence)
        // Taken: no repeat; the next wake is tomorrow's dose.
        #expect(await h.clock.parked() == DoseLoop.wake(Self.at(24 * 60)))
        let dose = try #require(try h.stored(Self.occurrence))
        #expect(dose.status == "taken")
        let taken = try h.book.doses(DoseFilter(status: .taken))
        #expect(taken.map(\.dose.takenAt) == [Self.at(2)])
        #expect(try h.store.ledger(id: Self.occurrence).map(\.response) == ["take"])
        // And the alert is replaced by what was recorded: no buttons, gone by itself.
        let confirmation = try #require(loop.notifier.confirmations.last)
        #expect(confirmation.id == Self.occurrence)
        #expect(confirmation.title == "✓ Aspirin 100 mg taken at 08:02")
        #expect(confirmation.actions.isEmpty)
        #expect(!confirmation.sticky)
        #expect(confirmation.timeout == Note.confirmationTimeout)

        // A second press (the alert answered already): the alert says so, and nothing changes.
        await loop.act("take", on: Self.occurrence)
        #expect(loop.notifier.confirmations.map(\.title) == ["✓ Aspirin 100 mg taken at 08:02", Scheduler.alreadyAnswered])
        #expect(try h.book.doses(DoseFilter(status: .taken)).map(\.dose.takenAt) == [Self.at(2)])

        h.clock.advance(to: Self.at(60))
        await loop.stop()
        #expect(loop.notifier.posts.count == 1)
    }

    @Test(.timeLimit(.minutes(1)))
    func skipMarksTheDoseSkippedAndEndsTheRepeats() async throws {
        let (h, loop) = try await Self.started()
        defer { h.cleanUp() }
        h.clock.advance(to: Self.t)
        #expect(await loop.notifier.nextPost().id == Self.occurrence)
        #expect(await h.clock.parked() == DoseLoop.wake(Self.at(15)))
        h.clock.advance(to: Self.at(5))
        await loop.act("skip", on: Self.occurrence)
        #expect(await h.clock.parked() == DoseLoop.wake(Self.at(24 * 60)))
        #expect(try h.stored(Self.occurrence)?.status == "skipped")
        #expect(loop.notifier.confirmations.map(\.title) == ["Aspirin 100 mg skipped"])
        h.clock.advance(to: Self.at(60))
        await loop.stop()
        #expect(loop.notifier.posts.count == 1)
    }

    @Test(.timeLimit(.minutes(1)))
    func snoozeRealertsTenMinutesLaterUnderTheSameId() async throws {
        let (h, loop) = try await Self.started()
        defer { h.cleanUp() }
        h.clock.advance(to: Self.t)
        #expect(await loop.notifier.nextPost().title == "Aspirin 100 mg")
        #expect(await h.clock.parked() == DoseLoop.wake(Self.at(15)))
        h.clock.advance(to: Self.at(2))
        await loop.act("snooze", on: Self.occurrence)
        #expect(await h.clock.parked() == DoseLoop.wake(Self.at(12)))
        #expect(loop.notifier.confirmations.map(\.title) == ["Aspirin 100 mg snoozed until 08:12"])
        let snoozed = try #require(try h.book.doses(DoseFilter()).first)
        #expect(snoozed.dose.status == .pending)
        #expect(snoozed.dose.snoozeUntil == Self.at(12))

        h.clock.advance(to: Self.at(12))
        let again = await loop.notifier.nextPost()
        #expect(again.id == Self.occurrence)
        #expect(again.title == "Aspirin 100 mg (snoozed)")
        #expect(again.body == "Medication Reminder\nWith food\nDue at 08:00")
        #expect(again.actions.map(\.key) == ["take", "snooze", "skip"])
        #expect(again.postedAt == Self.at(12))
        // Still unanswered: repeated from the snoozed alert on.
        #expect(await h.clock.parked() == DoseLoop.wake(Self.at(27)))
        await loop.act("take", on: Self.occurrence)
        #expect(await h.clock.parked() == DoseLoop.wake(Self.at(24 * 60)))
        #expect(try h.stored(Self.occurrence)?.status == "taken")
        await loop.stop()
        #expect(loop.notifier.posts.count == 2)
    }

    @Test(.timeLimit(.minutes(1)))
    func anUnansweredAlertRepeatsInPlaceThreeTimesThenTheDoseIsMissed() async throws {
        let (h, loop) = try await Self.started()
        defer { h.cleanUp() }
        for minutes in [0.0, 15, 30, 45] {
            h.clock.advance(to: Self.at(minutes))
            let note = await loop.notifier.nextPost()
            #expect(note.id == Self.occurrence, "at +\(minutes)m")
            // The repeats say which they are.
            let expected = minutes == 0 ? "Aspirin 100 mg" : "Aspirin 100 mg (repeat \(Int(minutes / 15)) of 3)"
            #expect(note.title == expected, "at +\(minutes)m")
            #expect(note.postedAt == Self.at(minutes), "at +\(minutes)m")
            #expect(note.actions.count == 3)
        }
        // No fourth repeat: the next wake is tomorrow's dose.
        #expect(await h.clock.parked() == DoseLoop.wake(Self.at(24 * 60)))
        #expect(try h.stored(Self.occurrence)?.status == "pending")
        #expect(try h.store.ledger(id: Self.occurrence).map(\.state) == ["posted", "posted", "posted", "posted"])

        // Four hours on the window has passed: the runner's next settle marks it missed.
        h.clock.advance(to: Self.at(4 * 60))
        h.clock.poke()
        #expect(await h.clock.parked() == DoseLoop.wake(Self.at(24 * 60)))
        let missed = try #require(try h.stored(Self.occurrence))
        #expect(missed.status == "missed")
        #expect(missed.autoMissed)
        h.clock.advance(to: Self.at(23 * 60))
        await loop.stop()
        #expect(loop.notifier.posts.count == 4)
    }

    @Test(.timeLimit(.minutes(1)))
    func dosesThatFellDueWhileNothingRanCollapseIntoOneSummary() async throws {
        // Monday 2026-01-05 07:59 UTC: settled, then nothing runs for three hours.
        let h = try DoseHarness(now: Self.at(-1))
        defer { h.cleanUp() }
        let a = try h.add("Aspirin", at: "08:00,09:00,10:00").schedules[0].id
        let b = try h.add("Biotin", at: "08:30").schedules[0].id
        let c = try h.add("Calcium", at: "10:54").schedules[0].id
        try h.book.settle()
        h.clock.advance(to: Self.at(179))

        let loop = DoseLoop(h)
        // The late alert is shown, and its first repeat planned 15 minutes on.
        #expect(await h.clock.parked() == DoseLoop.wake(Self.at(194)))
        await loop.stop()
        let posts = loop.notifier.posts
        let summaries = posts.filter { $0.id.hasPrefix("med-summary-") }
        #expect(summaries.map(\.id) == ["med-summary-20260105-105900"])
        let summary = try #require(summaries.first)
        #expect(summary.title == "Medication Reminder")
        #expect(summary.actions.isEmpty)
        // No late alerts of their own for doses past their grace window.
        let individual = posts.filter { !$0.id.hasPrefix("med-summary-") }
        #expect(individual.map(\.id) == ["med-\(c)-20260105-1054"])
        // Only five minutes late: its own alert, late, with its actions.
        #expect(individual.first?.actions.count == 3)
        #expect(individual.first?.deliveries.first?.due == DoseHarness.instant(2026, 1, 5, 10, 54))
        #expect(posts.count == 2)

        // Past their window (the next dose of the same medication came): missed.
        let doses = try h.storedDoses()
        func dose(_ id: String) -> StoredDose? { doses.first { $0.occurrence == id } }
        #expect(dose("med-\(a)-20260105-0800")?.status == "missed")
        #expect(dose("med-\(a)-20260105-0900")?.status == "missed")
        #expect(dose("med-\(a)-20260105-1000")?.status == "pending")
        #expect(dose("med-\(b)-20260105-0830")?.status == "pending")
        #expect(dose("med-\(c)-20260105-1054")?.status == "pending")
        // The summary lists every dose that fell due while nothing ran and is past its grace
        // window, in time order, the missed ones too.
        let overdueB = try #require(dose("med-\(b)-20260105-0830")).id
        let overdueA = try #require(dose("med-\(a)-20260105-1000")).id
        #expect(
            summary.body.split(separator: "\n").map(String.init) == [
                "While Chime was not running, 4 doses fell due:",
                "• Aspirin (100 mg), Mon 2026-01-05 08:00 +00:00: missed",
                "• Biotin (100 mg), Mon 2026-01-05 08:30 +00:00: overdue, 'chime dose take \(overdueB)'",
                "• Aspirin (100 mg), Mon 2026-01-05 09:00 +00:00: missed",
                "• Aspirin (100 mg), Mon 2026-01-05 10:00 +00:00: overdue, 'chime dose take \(overdueA)'",
            ]
        )
    }
}

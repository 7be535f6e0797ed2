import ChimeCore
import ChimeDoses
import ChimeStore
import ChimeTesting
import Foundation
import GRDB
import Testing

/// `--after-last 6h`: each dose falls due one interval after the last dose taken, not at clock
/// times; nothing before the first dose taken; a skipped dose counts from its time; after a
/// missed one nothing comes until the next dose taken. On the injected clock.
struct DoseAfterLastTests {
    static func at(_ hour: Int, _ minute: Int = 0, day: Int = 0) -> Date {
        DoseHarness.instant(2026, 1, 5 + day, hour, minute)
    }

    @discardableResult
    static func addAfterLast(
        _ h: DoseHarness,
        _ name: String = "Paracetamol",
        every seconds: Int = 6 * 3_600,
        max: Int? = nil
    ) throws
        -> MedicationDetail
    {
        var schedule = ScheduleDraft(times: [])
        schedule.afterLast = seconds
        schedule.maxPerDay = max
        return try h.book.addMedication(h.draft(name, amount: "500"), schedule: schedule)
    }

    @Test func theNextDoseComesOneIntervalAfterTheLastTakenNotAtClockTimes() throws {
        let h = try DoseHarness(now: Self.at(8, 0))
        defer { h.cleanUp() }
        let added = try Self.addAfterLast(h)
        let scheduleID = added.schedules[0].id
        #expect(added.schedules[0].summary == "6h after each dose taken")
        // Before the first dose taken: no dose, no alert, nothing coming.
        #expect(try h.storedDoses().isEmpty)
        #expect(try h.pendingAlerts().isEmpty)
        #expect(try h.book.nextDoses(count: 5).isEmpty)
        #expect(added.nextDose == nil)
        #expect(
            MedicationText.lines(added, full: false, now: h.clock.now(), zone: DoseHarness.utc).last
                == "    No alert until a dose is taken: 'chime dose take Paracetamol' starts the interval"
        )

        // The first, taken by name: logged (outside adherence); the next at 14:00 with its alert.
        h.clock.advance(to: Self.at(8, 5))
        let first = try h.book.answer(.take, .medication("Paracetamol"))
        #expect(first.previous == nil && first.entry.dose.occurrence == nil)
        let second = "med-\(scheduleID)-20260105-1405"
        #expect(try h.pendingAlerts().map(\.id) == [second])
        #expect(try h.pendingAlerts().map(\.due) == [Self.at(14, 5)])
        #expect(try h.book.nextDoses(count: 5).map(\.due) == [Self.at(14, 5)])
        #expect(try h.book.medication("Paracetamol").nextDose == Self.at(14, 5))

        // Taken 10 minutes late: the next 6 hours after the Take, not after its time.
        h.clock.advance(to: Self.at(14, 15))
        let taken = try h.book.answer(.take, .medication("Paracetamol"))
        #expect(taken.entry.dose.occurrence == second && taken.entry.dose.status == .taken)
        let third = "med-\(scheduleID)-20260105-2015"
        #expect(try h.pendingAlerts().map(\.id) == [third])

        // Skipped: the next one interval after the skipped dose's time.
        h.clock.advance(to: Self.at(20, 20))
        _ = try h.book.answer(.skip, .medication("Paracetamol"))
        let fourth = "med-\(scheduleID)-20260106-0215"
        #expect(try h.pendingAlerts().map(\.id) == [fourth])

        // Unanswered: missed 4 hours after its time; then nothing until the next dose taken.
        h.clock.advance(to: Self.at(6, 30, day: 1))
        let settled = try h.book.settle()
        #expect(try h.stored(fourth)?.status == "missed")
        #expect(settled.missed.count == 1)
        // (Never shown, with no runner here: the summary alert says it was missed; no dose alert.)
        let doseAlerts = { try h.pendingAlerts().filter { $0.id.hasPrefix("med-\(scheduleID)-") } }
        #expect(try doseAlerts().isEmpty)
        #expect(try h.book.nextDoses(count: 5).isEmpty)
        h.clock.advance(to: Self.at(20, 0, day: 1))
        try h.book.settle()
        #expect(try h.storedDoses().filter { $0.status == "pending" }.isEmpty)

        // Taken by name with nothing due: a new dose logged (the missed one stays missed), and
        // the interval starts again from it.
        let again = try h.book.answer(.take, .medication("Paracetamol"))
        #expect(again.previous == nil)
        #expect(try h.stored(fourth)?.status == "missed")
        #expect(try doseAlerts().map(\.due) == [Self.at(2, 0, day: 2)])

        // Adherence: the scheduled doses only (1 taken, 1 skipped, 1 missed), not the logged ones.
        let adherence = try h.book.adherence(from: nil).overall
        #expect(adherence == Adherence(taken: 1, missed: 1, skipped: 1, pending: 0))
    }

    @Test func anAfterLastDoseRepeatsAndEndsItsWindowLikeAScheduledOne() throws {
        let h = try DoseHarness(now: Self.at(8, 0))
        defer { h.cleanUp() }
        try Self.addAfterLast(h, every: 3_600)
        _ = try h.book.answer(.take, .medication("Paracetamol"))
        let due = try #require(try h.storedDoses().first { $0.status == "pending" })
        #expect(due.scheduled == Self.at(9, 0))
        // Overdue after the grace window (30 minutes), missed 4 hours after its time.
        h.clock.advance(to: Self.at(9, 31))
        #expect(try h.book.overdueDoses().map(\.dose.id) == [due.id])
        h.clock.advance(to: Self.at(13, 0))
        try h.book.settle()
        #expect(try h.stored(due.occurrence!)?.status == "missed")
    }

    /// In the runner's loop, during quiet hours (doses come through by default): the alert comes
    /// one interval after the Take, repeats while unanswered, and its Take (the alert's action)
    /// brings the next alert one interval after that Take.
    @Test(.timeLimit(.minutes(1)))
    func theRunnerShowsRepeatsAndFollowsTheAlertsTakeThroughQuietHours() async throws {
        let h = try DoseHarness(now: Self.at(7, 0))
        defer { h.cleanUp() }
        let scheduleID = try Self.addAfterLast(h, every: 3_600).schedules[0].id
        try h.store.updateQuiet { $0.until = Self.at(12, 0) }
        _ = try h.book.answer(.take, .medication("Paracetamol"))
        let loop = DoseLoop(h)
        let first = "med-\(scheduleID)-20260105-0800"
        #expect(await h.clock.parked() == DoseLoop.wake(Self.at(8, 0)))
        h.clock.advance(to: Self.at(8, 0))
        let note = await loop.notifier.nextPost()
        #expect(note.id == first && note.title == "Paracetamol 500 mg")
        #expect(note.actions.map(\.key) == ["take", "snooze", "skip"])
        // Unanswered: repeated 15 minutes later.
        #expect(await h.clock.parked() == DoseLoop.wake(Self.at(8, 15)))
        h.clock.advance(to: Self.at(8, 15))
        let repeated = await loop.notifier.nextPost()
        #expect(repeated.id == first && repeated.title == "Paracetamol 500 mg (repeat 1 of 3)")
        // Taken from the alert at 08:20: the next alert at 09:20.
        _ = await h.clock.parked()
        h.clock.advance(to: Self.at(8, 20))
        await loop.act("take", on: first)
        #expect(try h.stored(first)?.status == "taken")
        #expect(await h.clock.parked() == DoseLoop.wake(Self.at(9, 20)))
        #expect(try h.pendingAlerts().map(\.id) == ["med-\(scheduleID)-20260105-0920"])
        await loop.stop()
    }

    @Test func aReactivatedMedicationMissesNothingFromWhileItWasInactive() throws {
        let h = try DoseHarness(now: Self.at(8, 0))
        defer { h.cleanUp() }
        try Self.addAfterLast(h)
        _ = try h.book.answer(.take, .medication("Paracetamol"))
        h.clock.advance(to: Self.at(9, 0))
        _ = try h.book.setActive("Paracetamol", false)
        #expect(try h.storedDoses().filter { $0.status == "pending" }.isEmpty)
        // Back before the next dose's time: it comes at 14:00 as before.
        h.clock.advance(to: Self.at(10, 0))
        _ = try h.book.setActive("Paracetamol", true)
        #expect(try h.book.nextDoses(count: 1).map(\.due) == [Self.at(14, 0)])
        // Back after it: not made, not missed; nothing until the next dose taken.
        _ = try h.book.setActive("Paracetamol", false)
        h.clock.advance(to: Self.at(10, 0, day: 1))
        _ = try h.book.setActive("Paracetamol", true)
        try h.book.settle()
        #expect(try h.storedDoses().map(\.status) == ["taken"])
        #expect(try h.book.nextDoses(count: 1).isEmpty)
        _ = try h.book.answer(.take, .medication("Paracetamol"))
        #expect(try h.book.nextDoses(count: 1).map(\.due) == [Self.at(16, 0, day: 1)])
    }

    @Test func sixHoursAcrossADaylightSavingChangeAreSixHoursElapsed() throws {
        // Berlin springs forward on 2026-03-29 at 02:00: taken at 00:30 (+01:00), due at 07:30 (+02:00).
        let berlin = DoseHarness.berlin
        let taken = DoseHarness.instant(2026, 3, 29, 0, 30, in: berlin)
        let h = try DoseHarness(now: taken, zone: berlin)
        defer { h.cleanUp() }
        let scheduleID = try Self.addAfterLast(h).schedules[0].id
        _ = try h.book.answer(.take, .medication("Paracetamol"))
        let next = try #require(try h.book.nextDoses(count: 1).first)
        #expect(next.due == taken.addingTimeInterval(6 * 3_600))
        #expect(next.occurrence == "med-\(scheduleID)-20260329-0730")
        #expect(TimeText.local(next.due, in: berlin) == "Sun 2026-03-29 07:30 +02:00")
    }

    @Test func afterLastRefusesClockTimesAndAsNeeded() throws {
        var timed = ScheduleDraft(times: [LocalTime(hour: 8, minute: 0)!])
        timed.afterLast = 6 * 3_600
        #expect(throws: ChimeError.self) { try timed.validated() }
        do {
            _ = try timed.validated()
        } catch {
            #expect(error.code == .usage)
            #expect(
                error.message
                    == "--after-last and --at contradict each other: each dose comes 6h after the last one taken, not at clock times"
            )
        }
        var asNeeded = ScheduleDraft(times: [], asNeeded: true)
        asNeeded.afterLast = 6 * 3_600
        #expect(throws: ChimeError.self) { try asNeeded.validated() }
        var short = ScheduleDraft(times: [])
        short.afterLast = 30
        #expect(throws: ChimeError.self) { try short.validated() }
        // --max is for as-needed and after-last medications only.
        var capped = ScheduleDraft(times: [LocalTime(hour: 8, minute: 0)!])
        capped.maxPerDay = 4
        #expect(throws: ChimeError.self) { try capped.validated() }
        // An edit of other fields keeps the after-last schedule; times given replace it.
        let h = try DoseHarness(now: Self.at(8, 0))
        defer { h.cleanUp() }
        try Self.addAfterLast(h, max: 4)
        var rename = MedicationChanges()
        rename.name = "Pain"
        rename.scheduleChange = ScheduleChange(minInterval: nil)
        let kept = try h.book.editMedication("Paracetamol", rename).schedules.last(where: \.isEnabled)
        #expect(kept?.afterLast == 6 * 3_600 && kept?.maxPerDay == 4)
        var clock = MedicationChanges()
        clock.scheduleChange = ScheduleChange(times: [LocalTime(hour: 9, minute: 0)!])
        let timed2 = try h.book.editMedication("Pain", clock).schedules.last(where: \.isEnabled)
        #expect(timed2?.afterLast == nil && timed2?.maxPerDay == nil && timed2?.times.count == 1)
    }
}

/// `--max 4/day`: a dose taken past the maximum in any 24 hours (a rolling window) is refused
/// with when the next is allowed.
struct DoseMaximumTests {
    static func at(_ hour: Int, _ minute: Int = 0, day: Int = 0) -> Date { DoseAfterLastTests.at(hour, minute, day: day) }

    @Test func aTakePastTheMaximumIsRefusedWithTheTimeTheNextIsAllowed() throws {
        let h = try DoseHarness(now: Self.at(8, 0))
        defer { h.cleanUp() }
        _ = try h.book.addMedication(
            h.draft("Ibuprofen", amount: "400"),
            schedule: ScheduleDraft(times: [], asNeeded: true, maxPerDay: 3)
        )
        for hour in [8, 14, 20] {
            h.clock.advance(to: Self.at(hour, 30))
            _ = try h.book.answer(.take, .medication("Ibuprofen"))
        }
        h.clock.advance(to: Self.at(23, 0))
        do {
            _ = try h.book.answer(.take, .medication("Ibuprofen"))
            Issue.record("a fourth dose in 24 hours was logged")
        } catch {
            #expect(error.code == .conflict)
            #expect(
                error.message == "Ibuprofen is at its maximum of 3 in 24 hours: 3 taken since 08:30; the next is allowed tomorrow at 08:30"
            )
        }
        #expect(try h.book.doses(DoseFilter()).count == 3)
        // Rolling: at 08:30 the next day the first leaves the window.
        h.clock.advance(to: Self.at(8, 29, day: 1))
        #expect(throws: ChimeError.self) { try h.book.answer(.take, .medication("Ibuprofen")) }
        h.clock.advance(to: Self.at(8, 31, day: 1))
        #expect(try h.book.answer(.take, .medication("Ibuprofen")).entry.dose.status == .taken)
        #expect(try h.book.medication("Ibuprofen").schedules[0].summary == "as needed, at most 3 in 24h")
    }

    @Test func anAfterLastDoseIsRefusedPastItsMaximumAndStaysDue() throws {
        let h = try DoseHarness(now: Self.at(8, 0))
        defer { h.cleanUp() }
        try DoseAfterLastTests.addAfterLast(h, every: 3_600, max: 2)
        _ = try h.book.answer(.take, .medication("Paracetamol"))
        h.clock.advance(to: Self.at(9, 0))
        _ = try h.book.answer(.take, .medication("Paracetamol"))
        h.clock.advance(to: Self.at(10, 0))
        let due = try #require(try h.book.dueDoses().first)
        #expect(throws: ChimeError.self) { try h.book.answer(.take, .id(due.dose.id)) }
        #expect(try h.book.dueDoses().map(\.dose.id) == [due.dose.id])
    }

    @Test func maximumsParse() throws {
        #expect(try DoseMaximum.parse("4/day") == 4)
        #expect(try DoseMaximum.parse("4") == 4)
        #expect(try DoseMaximum.parse(" 6/24h") == 6)
        for bad in ["0/day", "four", "4/week", "-1", "101"] {
            #expect(throws: ChimeError.self, "\(bad)") { try DoseMaximum.parse(bad) }
        }
        do {
            _ = try DoseMaximum.parse("4/week")
        } catch {
            #expect(error.message == "invalid max '4/week': expected a count of doses in 24 hours from 1 to 100, such as 4/day (or 4)")
        }
    }
}

/// `--taper "10mg until 01-07, 5mg until 01-09, then stop"`: the amount of each day in the
/// alerts, the preview, the list and the export; the medication ends after the last day.
struct DoseTaperTests {
    static func at(_ hour: Int, _ minute: Int = 0, day: Int = 0) -> Date { DoseAfterLastTests.at(hour, minute, day: day) }
    static let today = CivilDay.of(at(0), in: DoseHarness.utc)

    @Test func theAmountChangesOnItsDatesAndTheMedicationStopsAfterTheLast() throws {
        let h = try DoseHarness(now: Self.at(7, 0))
        defer { h.cleanUp() }
        var draft = h.draft("Prednisone", amount: "")
        draft.taper = try DoseTaper.parse("10mg until 01-07, 5 mg until 2026-01-09, then stop", from: Self.today)
        let added = try h.book.addMedication(draft, schedule: ScheduleDraft(times: [LocalTime(hour: 8, minute: 0)!]))
        #expect(added.medication.amount == 10)
        #expect(added.medication.endDay == Self.today + 4)
        #expect(added.medication.taper?.summary(unit: "mg") == "10 mg until 2026-01-07, 5 mg until 2026-01-09, then stop")

        // The preview: 10 mg for three days, 5 mg for two, then nothing.
        let next = try h.book.nextDoses(count: 10)
        #expect(next.map(\.amount) == [10, 10, 10, 5, 5])
        #expect(next.last?.label == "Prednisone (5 mg)")
        // Today's alert says 10 mg; on the 8th, 5 mg.
        #expect(try h.store.pending().map(\.title) == ["Prednisone 10 mg"])
        let lines = MedicationText.lines(added, full: true, now: h.clock.now(), zone: DoseHarness.utc)
        #expect(lines.first == "\(added.medication.id)  Prednisone (10 mg)")
        #expect(lines.contains("    Taper: 10 mg until 2026-01-07, 5 mg until 2026-01-09, then stop"))
        for day in 0...2 {
            h.clock.advance(to: Self.at(8, 1, day: day))
            _ = try h.book.answer(.take, .medication("Prednisone"))
        }
        h.clock.advance(to: Self.at(7, 0, day: 3))
        try h.book.settle()
        #expect(try h.store.pending().map(\.title) == ["Prednisone 5 mg"])
        let detail = try h.book.medication("Prednisone")
        #expect(
            MedicationText.lines(detail, full: false, now: h.clock.now(), zone: DoseHarness.utc).first
                == "\(detail.medication.id)  Prednisone (5 mg)"
        )

        // The export: each dose with the amount of its day.
        h.clock.advance(to: Self.at(8, 1, day: 3))
        _ = try h.book.answer(.take, .medication("Prednisone"))
        let entries = try h.book.doses(DoseFilter(status: .taken))
        let csv = DoseExport.csv(entries, medications: [detail.medication.id: detail.medication])
        let amounts = csv.split(separator: "\r\n").dropFirst().map { $0.split(separator: ",")[4] }
        #expect(amounts == ["10", "10", "10", "5"])

        // The last day's dose missed, the day over: the medication is deactivated.
        h.clock.advance(to: Self.at(12, 30, day: 4))
        try h.book.settle()
        #expect(try h.book.medication("Prednisone").medication.isActive)
        h.clock.advance(to: Self.at(0, 1, day: 5))
        try h.book.settle()
        #expect(try h.book.medication("Prednisone").medication.isActive == false)
        #expect(try h.book.medications().isEmpty)
    }

    @Test func withoutThenStopTheLastAmountGoesOn() throws {
        let taper = try DoseTaper.parse("10mg until 01-07, 5mg until 01-09", from: Self.today)
        #expect(taper.amount(on: Self.today) == 10)
        #expect(taper.amount(on: Self.today + 2) == 10)
        #expect(taper.amount(on: Self.today + 3) == 5)
        #expect(taper.amount(on: Self.today + 400) == 5)
        #expect(taper.lastDay == nil)
        let stops = try DoseTaper.parse("10mg until 01-07, then stop", from: Self.today)
        #expect(stops.amount(on: Self.today + 3) == nil)
        // MM-DD: the first such date on or after the start; a later one after the one before.
        let overNewYear = try DoseTaper.parse("2mg until 12-31, 1mg until 01-02", from: CivilDay.parse("2026-12-01", field: "d"))
        #expect(overNewYear.steps.map { $0.until.map(CivilDay.format) } == ["2026-12-31", "2027-01-02"])
        #expect(DoseTaper(stored: overNewYear.stored)?.steps.map(\.until) == overNewYear.steps.map(\.until))
    }

    @Test func aBadTaperNamesItsPieceAndNothingIsStored() throws {
        let h = try DoseHarness(now: Self.at(7, 0))
        defer { h.cleanUp() }
        for (text, piece) in [
            ("10mg untl 01-07", "10mg untl 01-07"), ("10mg until 01-07, 5mg until 01-32", "5mg until 01-32"),
            ("then stop", "then stop"), ("10mg until 01-07, then stop, 5mg until 01-09", "then stop"),
            ("ten mg until 01-07", "ten mg until 01-07"),
        ] {
            do {
                _ = try DoseTaper.parse(text, from: Self.today)
                Issue.record("\(text) parsed")
            } catch {
                #expect(error.code == .usage)
                #expect(error.message.hasPrefix("invalid taper piece '\(piece)': expected "), "\(error.message)")
            }
        }
        // Out of order: the second date before the first.
        #expect(throws: ChimeError.self) { try DoseTaper.parse("10mg until 2026-01-09, 5mg until 2026-01-07", from: Self.today) }
        // Another unit than the medication's.
        var draft = h.draft("Prednisone", amount: "")
        draft.taper = try DoseTaper.parse("10ml until 01-07", from: Self.today)
        do {
            _ = try h.book.addMedication(draft, schedule: ScheduleDraft(times: [LocalTime(hour: 8, minute: 0)!]))
            Issue.record("a taper in ml was taken for a medication in mg")
        } catch {
            #expect(error.message == "invalid taper piece '10ml': expected amounts in the medication's unit, mg")
        }
        #expect(try h.book.medications(includeInactive: true).isEmpty)
    }
}

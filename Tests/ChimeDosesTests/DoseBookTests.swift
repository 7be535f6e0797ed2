import ChimeCore
import ChimeDoses
import ChimeStore
import ChimeTesting
import Foundation
import Testing

/// Adherence, as-needed doses, stock and refills, and a medication's life (deactivated,
/// reactivated, deleted) on a real store and an injected clock.
struct DoseBookTests {
    static let utc = DoseHarness.utc

    /// 2026-01-05 (a Monday) plus `day` days, at `hour:minute` in `zone`.
    static func at(day: Int = 0, _ hour: Int, _ minute: Int = 0, in zone: TimeZone = utc) -> Date {
        DoseHarness.instant(2026, 1, 5 + day, hour, minute, in: zone)
    }

    // MARK: - Adherence

    @Test func adherenceIsNilWhileNothingCountsAndPendingIsShownApart() throws {
        let h = try DoseHarness(now: Self.at(7, 59))
        defer { h.cleanUp() }
        try h.add("Aspirin", at: "08:00")
        // Nothing due yet: the future dose is not counted, not even as pending.
        let before = try h.book.adherence(from: nil).overall
        #expect(before == Adherence())
        #expect(before.rate == nil)
        #expect(before.percentText == "—")

        h.clock.advance(to: Self.at(8, 5))
        let pending = try h.book.adherence(from: nil).overall
        #expect(pending.pending == 1)
        #expect(pending.counted == 0)
        #expect(pending.rate == nil)
    }

    @Test func takenThreeMissedOneSkippedOneIsSixtyPercent() throws {
        let h = try DoseHarness(now: Self.at(7, 59))
        defer { h.cleanUp() }
        let id = try h.add("Multi", at: "08:00,09:00,10:00,11:00,12:00") { $0.missedAfter = 3_600 }.schedules[0].id
        _ = try h.book.addMedication(h.draft("Ibuprofen"), schedule: ScheduleDraft(times: [], asNeeded: true))
        for (hour, answer) in [(8, DoseAnswer.take), (9, .take), (10, .take), (11, .skip)] {
            h.clock.advance(to: Self.at(hour, 1))
            let answered = try h.book.answer(answer, .occurrence("med-\(id)-20260105-\(hour < 10 ? "0" : "")\(hour)00"))
            #expect(answered.previous == .pending)
        }
        // As needed: logged when taken, never in adherence.
        _ = try h.book.answer(.take, .medication("Ibuprofen"))
        // The 12:00 dose is left unanswered: missed at 13:00.
        h.clock.advance(to: Self.at(13, 0))
        let today = DoseRange.last(days: 1, now: h.clock.now(), zone: Self.utc)
        let report = try h.book.adherence(from: today.from, to: today.to)
        // Tomorrow's dose exists already (the settle made it), and is not counted.
        #expect(try h.storedDoses().contains { $0.scheduled == Self.at(day: 1, 8) && $0.status == "pending" })
        #expect(report.overall == Adherence(taken: 3, missed: 1, skipped: 1, pending: 0))
        #expect(report.overall.rate == 0.6)
        #expect(report.overall.percentText == "60%")
        #expect(report.to == h.clock.now())
        #expect(report.medications.map(\.name) == ["Multi"])
        #expect(report.days.map(\.day) == [CivilDay.of(Self.at(0, 0), in: Self.utc)])
        #expect(try h.book.adherence(from: nil, medication: "Ibuprofen").overall == Adherence())
    }

    @Test func adherenceDaysAreLocalDays() throws {
        let ny = DoseHarness.newYork
        let h = try DoseHarness(now: Self.at(7, 59, in: ny), zone: ny)
        defer { h.cleanUp() }
        let id = try h.add("Aspirin", at: "08:00,23:00").schedules[0].id
        h.clock.advance(to: Self.at(8, 0, in: ny))
        _ = try h.book.answer(.take, .occurrence("med-\(id)-20260105-0800"))
        // 23:00 in New York is 04:00 UTC the next day: still Monday's dose.
        h.clock.advance(to: Self.at(23, 0, in: ny))
        _ = try h.book.answer(.skip, .occurrence("med-\(id)-20260105-2300"))
        h.clock.advance(to: Self.at(day: 1, 8, 0, in: ny))
        _ = try h.book.answer(.take, .occurrence("med-\(id)-20260106-0800"))
        h.clock.advance(to: Self.at(day: 1, 8, 30, in: ny))

        let range = DoseRange.last(days: 2, now: h.clock.now(), zone: ny)
        #expect(range.from == Self.at(0, 0, in: ny))
        let report = try h.book.adherence(from: range.from, to: range.to)
        let monday = CivilDay.of(Self.at(12, 0, in: ny), in: ny)
        #expect(report.days.map(\.day) == [monday, monday + 1])
        #expect(report.days.map(\.adherence) == [Adherence(taken: 1, skipped: 1), Adherence(taken: 1)])
        #expect(report.overall == Adherence(taken: 2, skipped: 1))
    }

    // MARK: - As needed

    @Test func asNeededDosesAreLoggedWhenTakenWithAWarningWithinTheMinimumInterval() throws {
        let h = try DoseHarness(now: Self.at(8, 0))
        defer { h.cleanUp() }
        let detail = try h.book.addMedication(
            h.draft("Ibuprofen", amount: "200"),
            schedule: ScheduleDraft(times: [], asNeeded: true, minInterval: 6 * 3_600)
        )
        #expect(detail.schedules.map(\.frequency) == [.asNeeded])
        #expect(detail.schedules.first?.summary == "as needed (at least 6h apart)")
        #expect(detail.nextDose == nil)
        // No reminders, no doses until one is taken.
        #expect(try h.store.pendingCount() == 0)
        #expect(try h.storedDoses().isEmpty)
        #expect(try h.book.nextDoses(count: 5).isEmpty)

        let first = try h.book.answer(.take, .medication("ibuprofen"))
        #expect(first.warning == nil)
        #expect(first.previous == nil)
        #expect(first.entry.dose.status == .taken)
        #expect(first.entry.dose.takenAt == Self.at(8, 0))
        #expect(first.entry.dose.occurrence == nil)
        #expect(first.entry.label == "Ibuprofen (200 mg)")

        h.clock.advance(to: Self.at(10, 0))
        let second = try h.book.answer(.take, .medication("Ibuprofen"))
        let warning = try #require(second.warning)
        #expect(warning.hasPrefix("Ibuprofen was last taken 2h"))
        #expect(warning.hasSuffix("sooner than its minimum interval of 6h (next from 14:00)"))
        #expect(second.entry.dose.status == .taken)

        h.clock.advance(to: Self.at(16, 1))
        #expect(try h.book.answer(.take, .medication("Ibuprofen")).warning == nil)
        #expect(try h.storedDoses().map(\.status) == ["taken", "taken", "taken"])
        #expect(try h.book.settle().created == 0)
        #expect(try h.store.pendingCount() == 0)
    }

    // MARK: - Stock

    @Test func takingUsesStockAndTheRefillThresholdSchedulesOneRefillReminder() throws {
        let h = try DoseHarness(now: Self.at(7, 59))
        defer { h.cleanUp() }
        let medication = try h.add("Aspirin", at: "08:00") {
            $0.stock = 9
            $0.refillDays = 7
        }.medication
        let refill = "refill-\(medication.id)"

        h.clock.advance(to: Self.at(8, 1))
        let day1 = try h.book.answer(.take, .medication("Aspirin"))
        #expect(day1.refill == nil)
        #expect(try h.book.medication("Aspirin").medication.stock == 8)
        #expect(try h.reminderRows(id: refill) == 0)

        // Seven days left: at the threshold.
        h.clock.advance(to: Self.at(day: 1, 8, 1))
        let day2 = try h.book.answer(.take, .medication("Aspirin"))
        #expect(day2.refill == "7 doses of Aspirin left, about 7 days: time to refill")
        #expect(try h.book.medication("Aspirin").medication.stock == 7)
        let reminder = try h.store.reminder(id: refill)
        #expect(reminder.title == "Refill Aspirin")
        #expect(reminder.nextDue == Self.at(day: 1, 8, 1))

        // Further below: no second refill reminder.
        h.clock.advance(to: Self.at(day: 2, 8, 1))
        let day3 = try h.book.answer(.take, .medication("Aspirin"))
        #expect(day3.refill == nil)
        #expect(try h.book.medication("Aspirin").medication.stock == 6)
        #expect(try h.reminderRows(id: refill) == 1)

        // Reset: the dose is pending again and its stock is given back.
        let reset = try h.book.answer(.reset, .id(day3.entry.dose.id))
        #expect(reset.entry.dose.status == .pending)
        #expect(reset.entry.dose.takenAt == nil)
        #expect(try h.book.medication("Aspirin").medication.stock == 7)
        #expect(try h.reminderRows(id: refill) == 1)
    }

    // MARK: - A medication's life

    @Test func deactivatedNoDosesNoAlertsReactivatedFromNowDeletedWithItsHistory() throws {
        let h = try DoseHarness(now: Self.at(7, 0))
        defer { h.cleanUp() }
        try h.add("Aspirin", at: "08:00")
        #expect(try h.pendingAlerts().map(\.id) == ["med-1-20260105-0800"])

        h.clock.advance(to: Self.at(7, 30))
        let inactive = try h.book.setActive("Aspirin", false)
        #expect(!inactive.medication.isActive)
        #expect(inactive.nextDose == nil)
        #expect(try h.store.pendingCount() == 0)
        #expect(try h.storedDoses().isEmpty)
        #expect(try h.book.nextDoses(count: 3).isEmpty)
        #expect(try h.book.medications().isEmpty)
        #expect(try h.book.medications(includeInactive: true).count == 1)

        // Three days inactive: no doses, no alerts, nothing missed.
        h.clock.advance(to: Self.at(day: 3, 9, 0))
        #expect(try h.book.settle().created == 0)
        #expect(try h.storedDoses().isEmpty)
        #expect(try h.store.pendingCount() == 0)

        let active = try h.book.setActive("Aspirin", true)
        #expect(active.medication.isActive)
        #expect(active.nextDose == Self.at(day: 4, 8))
        #expect(try h.storedDoses().map(\.occurrence) == ["med-1-20260109-0800"])
        #expect(try h.pendingAlerts().map(\.id) == ["med-1-20260109-0800"])
        #expect(try h.book.adherence(from: nil).overall == Adherence())

        h.clock.advance(to: Self.at(day: 4, 8, 5))
        _ = try h.book.answer(.take, .medication("Aspirin"))
        #expect(try h.storedDoses().count == 2)
        #expect(try h.pendingAlerts().map(\.id) == ["med-1-20260110-0800"])

        let impact = try h.book.deleteMedication("Aspirin")
        #expect(impact.doses == 2)
        #expect(impact.schedules == 1)
        #expect(try h.storedDoses().isEmpty)
        #expect(try h.store.pendingCount() == 0)
        #expect(try h.book.doses(DoseFilter()).isEmpty)
        let gone = #expect(throws: ChimeError.self) { try h.book.medication("Aspirin") }
        #expect(gone?.code == .notFound)
    }
}

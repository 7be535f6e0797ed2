import ChimeCore
import ChimeDoses
import ChimeStore
import ChimeTesting
import Foundation
import Testing

/// Dose alerts are the dose's, not plain reminders; every alert id
/// `chime med next` shows names a dose; a medication's name finds its missed dose to take it
/// late; adherence draws no day before the first medication.
struct DoseAlertIdTests {
    static let utc = DoseHarness.utc

    /// 2026-01-05 (a Monday) plus `day` days, at `hour:minute` UTC.
    static func at(day: Int = 0, _ hour: Int, _ minute: Int = 0) -> Date {
        DoseHarness.instant(2026, 1, 5 + day, hour, minute)
    }

    // MARK: - Every alert id `med next` shows

    @Test func everyAlertIdOfTheNextDosesNamesADose() throws {
        let h = try DoseHarness(now: Self.at(7, 0))
        defer { h.cleanUp() }
        try h.add("Aspirin", at: "08:00,20:00")
        let planned = try h.book.nextDoses(count: 10)
        #expect(planned.count == 10)
        // Only the first is made as a dose yet; each of the others is made when named.
        for dose in planned {
            let answered = try h.book.answer(.skip, .occurrence(dose.occurrence))
            #expect(answered.entry.dose.occurrence == dose.occurrence)
            #expect(answered.entry.dose.scheduled == dose.due)
            #expect(answered.entry.dose.status == .skipped)
        }
        // Skipped ahead: when they fall due, the schedule finds them made, and no alert comes.
        h.clock.advance(to: Self.at(day: 2, 21, 0))
        try h.book.settle()
        let stored = try h.storedDoses()
        for dose in planned where dose.due <= h.clock.now() {
            #expect(stored.filter { $0.occurrence == dose.occurrence }.map(\.status) == ["skipped"], "\(dose.occurrence)")
        }
        #expect(try h.pendingAlerts().map(\.id).allSatisfy { id in !planned.contains { $0.occurrence == id } })
    }

    @Test func aFutureDoseCannotBeTakenAndNamingItChangesNothing() throws {
        let h = try DoseHarness(now: Self.at(7, 0))
        defer { h.cleanUp() }
        let id = try h.add("Aspirin", at: "08:00").schedules[0].id
        let before = try h.storedDoses()
        let error = #expect(throws: ChimeError.self) { try h.book.answer(.take, .occurrence("med-\(id)-20260108-0800")) }
        #expect(error?.code == .conflict)
        #expect(error?.message.contains("not due yet") == true)
        #expect(try h.storedDoses() == before)
    }

    @Test func anIdNoScheduleMakesIsNotFound() throws {
        let h = try DoseHarness(now: Self.at(7, 0))
        defer { h.cleanUp() }
        let id = try h.add("Aspirin", at: "08:00").schedules[0].id
        // 09:00 is not one of its times; schedule 99 does not exist; a day in the past.
        for occurrence in ["med-\(id)-20260106-0900", "med-99-20260106-0800", "med-\(id)-20260101-0800"] {
            let error = #expect(throws: ChimeError.self) { try h.book.answer(.skip, .occurrence(occurrence)) }
            #expect(error?.code == .notFound, "\(occurrence)")
        }
    }

    @Test func aDoseSkippedAheadAndResetGetsItsAlertBack() throws {
        let h = try DoseHarness(now: Self.at(7, 0))
        defer { h.cleanUp() }
        let id = try h.add("Aspirin", at: "08:00").schedules[0].id
        let tomorrow = "med-\(id)-20260106-0800"
        _ = try h.book.answer(.skip, .occurrence(tomorrow))
        #expect(!(try h.pendingAlerts().contains { $0.id == tomorrow }))
        _ = try h.book.answer(.reset, .occurrence(tomorrow))
        #expect(try h.pendingAlerts().contains { $0.id == tomorrow && $0.due == Self.at(day: 1, 8) })
    }

    // MARK: - Take NAME finds a missed dose

    @Test func takeByNameFindsTheLatestDoseWhenItWasMissed() throws {
        let h = try DoseHarness(now: Self.at(7, 0))
        defer { h.cleanUp() }
        try h.add("Aspirin", at: "08:00,20:00") { $0.missedAfter = 3_600 }
        // 08:00 unanswered: missed at 09:00. At 09:30 the person took it late.
        h.clock.advance(to: Self.at(9, 30))
        let taken = try h.book.answer(.take, .medication("Aspirin"))
        #expect(taken.previous == .missed)
        #expect(taken.entry.dose.scheduled == Self.at(8, 0))
        #expect(taken.entry.dose.status == .taken)
        // As by its number: the same dose, now taken, is not taken twice.
        let again = #expect(throws: ChimeError.self) { try h.book.answer(.take, .medication("Aspirin")) }
        #expect(again?.code == .notFound)
    }

    @Test func takeByNameDoesNotReachAMissedDoseOnceTheNextOneFellDue() throws {
        let h = try DoseHarness(now: Self.at(7, 0))
        defer { h.cleanUp() }
        try h.add("Aspirin", at: "08:00,20:00") { $0.missedAfter = 3_600 }
        // 08:00 missed, 20:00 missed too (21:00): the name means the latest, 20:00.
        h.clock.advance(to: Self.at(21, 30))
        let taken = try h.book.answer(.take, .medication("Aspirin"))
        #expect(taken.entry.dose.scheduled == Self.at(20, 0))
        // The 08:00 one is then named by its number only.
        let error = #expect(throws: ChimeError.self) { try h.book.answer(.take, .medication("Aspirin")) }
        #expect(error?.code == .notFound)
        #expect(try h.storedDoses().first { $0.scheduled == Self.at(8, 0) }?.status == "missed")
    }

    @Test func skipByNameDoesNotReachAMissedDose() throws {
        let h = try DoseHarness(now: Self.at(7, 0))
        defer { h.cleanUp() }
        try h.add("Aspirin", at: "08:00") { $0.missedAfter = 3_600 }
        h.clock.advance(to: Self.at(9, 30))
        let error = #expect(throws: ChimeError.self) { try h.book.answer(.skip, .medication("Aspirin")) }
        #expect(error?.code == .notFound)
    }

    // MARK: - Cancel refused, list title

    @Test func cancelOfADoseAlertIsRefusedNamingDoseSkip() throws {
        let h = try DoseHarness(now: Self.at(7, 0))
        defer { h.cleanUp() }
        let id = try h.add("Aspirin", at: "08:00").schedules[0].id
        // The alert scheduled, a dose's id made already, one a schedule will make.
        for occurrence in ["med-\(id)-20260105-0800", "med-\(id)-20260109-0800"] {
            let error = #expect(throws: ChimeError.self) { try h.book.refuseCancel(["keep", occurrence]) }
            #expect(error?.code == .conflict)
            #expect(error?.message.contains("'chime dose skip \(occurrence)'") == true, "\(error?.message ?? "")")
        }
        // Plain ids, and an id of the form no schedule makes, are the reminders' business.
        try h.book.refuseCancel(["keep", "refill-\(id)", "med-99-20260105-0800"])
    }

    @Test func aDoseAlertIsListedWithItsMedication() {
        let alert = Reminder(
            id: "med-3-20260105-0800",
            title: DoseBook.alertTitle,
            body: "Zinc (25 mg)\nafter lunch",
            trigger: .once(Self.at(8, 0)),
            kind: DoseBook.kind,
            createdAt: Self.at(7, 0),
            nextDue: Self.at(8, 0)
        )
        #expect(DoseBook.listTitle(of: alert) == "Medication Reminder: Zinc (25 mg)")
        var plain = alert
        plain.kind = "plain"
        #expect(DoseBook.listTitle(of: plain) == "Medication Reminder")
        var refill = alert
        refill.id = "refill-3"
        refill.title = "Refill Zinc"
        #expect(DoseBook.listTitle(of: refill) == "Refill Zinc")
        // As this Chime stores them: the title names the medication, and is the list's title.
        var titled = alert
        titled.title = "Zinc 25 mg"
        titled.body = "Medication Reminder\nafter lunch"
        #expect(DoseBook.listTitle(of: titled) == "Zinc 25 mg")
    }

    // MARK: - Adherence days

    @Test func adherenceDrawsNoDayBeforeTheFirstMedication() throws {
        let h = try DoseHarness(now: Self.at(7, 0))
        defer { h.cleanUp() }
        try h.add("Aspirin", at: "08:00")
        h.clock.advance(to: Self.at(day: 2, 9, 0))
        let range = DoseRange.last(days: 30, now: h.clock.now(), zone: Self.utc)
        let report = try h.book.adherence(from: range.from, to: range.to)
        // Three days since it was added (Monday to Wednesday), not thirty.
        #expect(report.days.map(\.day) == (0...2).map { CivilDay.of(Self.at(day: $0, 0), in: Self.utc) })
        #expect(report.overall.counted + report.overall.pending == 3)
    }

    @Test func adherenceOfAnEmptyStoreDrawsNoDay() throws {
        let h = try DoseHarness(now: Self.at(7, 0))
        defer { h.cleanUp() }
        let range = DoseRange.last(days: 30, now: h.clock.now(), zone: Self.utc)
        #expect(try h.book.adherence(from: range.from, to: range.to).days.isEmpty)
    }
}

import ChimeCore
import ChimeStore
import ChimeTesting
import Foundation
import Testing

@testable import ChimeDoses

/// `chime med edit`'s use case: a schedule change is merged over the schedule as it is when
/// the edit is written, so an edit that races another change loses neither.
struct MedicationEditTests {
    static let utc = DoseHarness.utc

    /// 2026-01-05 (a Monday) at `hour`:00 UTC.
    static func monday(_ hour: Int) -> Date { DoseHarness.instant(2026, 1, 5, hour, 0) }

    @Test func scheduleEditRacingAnotherChangeKeepsBoth() throws {
        // Given Aspirin at 08:00 on weekdays, and a second process on the same store.
        let h = try DoseHarness(now: Self.monday(7))
        defer { h.cleanUp() }
        try h.add("Aspirin", at: "08:00", days: try WeekdaySet.parse("mon-fri"))
        let other = try h.reopened()
        // When that process moves Aspirin to weekends while this edit moves it to 09:00
        // (committed after this edit's checks, before its write).
        var book = h.book
        book.beforeEditWrite = {
            var days = MedicationChanges()
            days.scheduleChange = ScheduleChange(days: try? WeekdaySet.parse("weekend"))
            _ = try? other.editMedication("Aspirin", days)
        }
        var times = MedicationChanges()
        times.scheduleChange = ScheduleChange(times: [LocalTime(hour: 9, minute: 0)!])
        let edited = try book.editMedication("Aspirin", times)
        // Then the schedule has both changes: 09:00 on weekends.
        for detail in [edited, try h.book.medication("Aspirin")] {
            let enabled = try #require(detail.schedules.last { $0.isEnabled })
            #expect(enabled.times == [LocalTime(hour: 9, minute: 0)!])
            #expect(enabled.days == (try WeekdaySet.parse("weekend")))
            #expect(detail.schedules.filter(\.isEnabled).count == 1)
        }
    }

    @Test func scheduleChangeKeepsWhatItDoesNotGive() throws {
        let h = try DoseHarness(now: Self.monday(7))
        defer { h.cleanUp() }
        try h.add("Aspirin", at: "08:00,20:00", days: try WeekdaySet.parse("mon-fri"), zone: .fixed("Europe/Berlin"))
        var changes = MedicationChanges()
        changes.scheduleChange = ScheduleChange(times: [LocalTime(hour: 9, minute: 0)!])
        let edited = try h.book.editMedication("Aspirin", changes)
        let enabled = try #require(edited.schedules.last { $0.isEnabled })
        #expect(enabled.times == [LocalTime(hour: 9, minute: 0)!])
        #expect(enabled.days == (try WeekdaySet.parse("mon-fri")))
        #expect(enabled.zone == .fixed("Europe/Berlin"))
    }

    @Test func asNeededStaysAsNeededUntilTimesAreGiven() throws {
        let h = try DoseHarness(now: Self.monday(7))
        defer { h.cleanUp() }
        _ = try h.book.addMedication(h.draft("Ibuprofen"), schedule: ScheduleDraft(times: [], asNeeded: true, minInterval: 6 * 3_600))
        var interval = MedicationChanges()
        interval.scheduleChange = ScheduleChange(minInterval: 4 * 3_600)
        let asNeeded = try #require(try h.book.editMedication("Ibuprofen", interval).schedules.last { $0.isEnabled })
        #expect(asNeeded.frequency == .asNeeded)
        #expect(asNeeded.minInterval == 4 * 3_600)

        var days = MedicationChanges()
        days.scheduleChange = ScheduleChange(days: .everyDay)
        #expect(throws: ChimeError.self) { try h.book.editMedication("Ibuprofen", days) }

        var times = MedicationChanges()
        times.scheduleChange = ScheduleChange(times: [LocalTime(hour: 8, minute: 0)!])
        let scheduled = try #require(try h.book.editMedication("Ibuprofen", times).schedules.last { $0.isEnabled })
        #expect(scheduled.frequency != .asNeeded)
        #expect(scheduled.days == .everyDay)
        #expect(scheduled.zone == .floating)
    }

    @Test func aNewMedicationsScheduleDefaultsToEveryDayFloating() throws {
        let draft = try ScheduleChange(times: [LocalTime(hour: 8, minute: 0)!]).merged()
        #expect(draft == ScheduleDraft(times: [LocalTime(hour: 8, minute: 0)!]))
        #expect(throws: ChimeError.self) { try ScheduleChange(zone: .floating, asNeeded: true).merged() }
    }
}

import ChimeCore
import ChimeDoses
import ChimeStore
import ChimeTesting
import Foundation
import Testing

/// What `chime doses`, `med show`, `adherence` and `export` print, computed here: counts by
/// status, days of stock, each schedule's next dose, the per-day chart and the CSV.
struct DoseReportsTests {
    static let utc = DoseHarness.utc

    /// 2026-01-05 (a Monday) plus `day` days, at `hour:minute` UTC.
    static func at(day: Int = 0, _ hour: Int, _ minute: Int = 0) -> Date { DoseHarness.instant(2026, 1, 5 + day, hour, minute) }

    @Test func countsByStatusWithOverdueApart() throws {
        let h = try DoseHarness(now: Self.at(7, 0))
        defer { h.cleanUp() }
        let aspirin = try h.add("Aspirin", at: "08:00").schedules[0].id
        let vitamin = try h.add("Vitamin", at: "08:00").schedules[0].id
        try h.add("Iron", at: "08:00") { $0.grace = 1_800 }
        h.clock.advance(to: Self.at(8, 1))
        _ = try h.book.answer(.take, .occurrence("med-\(aspirin)-20260105-0800"))
        _ = try h.book.answer(.skip, .occurrence("med-\(vitamin)-20260105-0800"))
        h.clock.advance(to: Self.at(8, 45))
        let now = h.clock.now()
        let entries = try h.book.doses(DoseFilter(from: Self.at(0, 0), to: Self.at(day: 1, 0)))
        let counts = DoseCounts(entries, now: now)
        // Iron is pending and past its 30-minute grace window: overdue, and still pending.
        #expect(counts == DoseCounts(pending: 1, taken: 1, missed: 0, skipped: 1, overdue: 1, total: 3))
        #expect(counts[.taken] == 1)
        #expect(counts[.missed] == 0)
    }

    @Test(arguments: [(60, "08:00,20:00", 30), (7, "08:00", 7), (5, "08:00,12:00,20:00", 1)])
    func stockLastsWholeDaysAtTheSchedulesPace(stock: Int, times: String, days: Int) throws {
        let h = try DoseHarness(now: Self.at(7, 0))
        defer { h.cleanUp() }
        let detail = try h.add("Aspirin", at: times) { $0.stock = stock }
        #expect(detail.stockDaysLeft == days)
    }

    @Test func noDaysOfStockWithoutAStockOrASchedule() throws {
        let h = try DoseHarness(now: Self.at(7, 0))
        defer { h.cleanUp() }
        #expect(try h.add("Aspirin", at: "08:00").stockDaysLeft == nil)
        var draft = h.draft("Ibuprofen")
        draft.stock = 20
        #expect(try h.book.addMedication(draft, schedule: ScheduleDraft(times: [], asNeeded: true)).stockDaysLeft == nil)
        // Weekdays only: 5 doses a week, 10 last 14 days.
        #expect(try h.add("Metformin", at: "08:00", days: try WeekdaySet.parse("mon-fri")) { $0.stock = 10 }.stockDaysLeft == 14)
    }

    @Test func nextDoseOfEachEnabledSchedule() throws {
        let h = try DoseHarness(now: Self.at(8, 30))
        defer { h.cleanUp() }
        let first = try h.add("Aspirin", at: "08:00,20:00")
        #expect(try h.book.nextDoseBySchedule("Aspirin") == [first.schedules[0].id: Self.at(20, 0)])
        // A replaced schedule has none; the new one has its own.
        var changes = MedicationChanges()
        changes.scheduleChange = ScheduleChange(times: [LocalTime(hour: 9, minute: 0)!])
        let edited = try h.book.editMedication("Aspirin", changes)
        let enabled = try #require(edited.schedules.last { $0.isEnabled })
        #expect(try h.book.nextDoseBySchedule("Aspirin") == [enabled.id: Self.at(9, 0)])
        // Inactive: no next dose.
        _ = try h.book.setActive("Aspirin", false)
        #expect(try h.book.nextDoseBySchedule("Aspirin").isEmpty)
        #expect(throws: ChimeError.self) { try h.book.nextDoseBySchedule("Nothing") }
    }

    @Test func chartShowsTheNewestDayFirstWithABarFittedToTheWidth() {
        let monday = CivilDay.of(Self.at(12, 0), in: Self.utc)
        let days: [(day: Int, adherence: Adherence)] = [
            (monday, Adherence(taken: 1, missed: 1, skipped: 0, pending: 0)),
            (monday + 1, Adherence(taken: 0, missed: 0, skipped: 0, pending: 2)),
        ]
        #expect(
            AdherenceChart.lines(days, columns: 40) == [
                "Per day",
                "  Tue 01-06  —  (2 pending)",
                "  Mon 01-05  █████░░░░░   50%  1/2",
            ]
        )
        let many = (0..<40).map { (day: monday + $0, adherence: Adherence(taken: 1, missed: 0, skipped: 0, pending: 0)) }
        let lines = AdherenceChart.lines(many, columns: 10)
        #expect(lines.first == "Per day, the last 31 of 40 days")
        #expect(lines.count == 32)
        #expect(lines[1] == "  Fri 02-13  █████  100%  1/1")
    }

    @Test func csvHasTheColumnsAndQuotesWhatNeedsIt() throws {
        let h = try DoseHarness(now: Self.at(7, 0))
        defer { h.cleanUp() }
        let id = try h.add("Aspirin, \"low\"", at: "08:00").schedules[0].id
        h.clock.advance(to: Self.at(8, 2))
        _ = try h.book.answer(.take, .occurrence("med-\(id)-20260105-0800"), notes: "with food, water")
        let entries = try h.book.doses(DoseFilter(from: Self.at(0, 0), to: Self.at(day: 1, 0)))
        let medications = Dictionary(uniqueKeysWithValues: try h.book.medications().map { ($0.medication.id, $0.medication) })
        let csv = DoseExport.csv(entries, medications: medications)
        let dose = try #require(entries.first?.dose)
        #expect(
            csv == "date,time,zone,medication,amount,unit,status,taken_at,notes,dose_id\r\n"
                + "2026-01-05,08:00,\(dose.zone),\"Aspirin, \"\"low\"\"\",100,mg,taken,2026-01-05T08:02:00.000Z,\"with food, water\",\(dose.id)\r\n"
        )
        #expect(DoseExport.csv([], medications: [:]) == "date,time,zone,medication,amount,unit,status,taken_at,notes,dose_id\r\n")
    }
}

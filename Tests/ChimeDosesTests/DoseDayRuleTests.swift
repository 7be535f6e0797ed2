import ChimeCore
import ChimeDoses
import ChimeStore
import ChimeTesting
import Foundation
import GRDB
import Testing

/// Schedules every N days and in on/off cycles: which days have doses (calendar days, local),
/// through month ends and DST days as the daily schedule reads them, their windows, adherence
/// (the days without doses are not missed), the parsers and the merge of a change.
struct DoseDayRuleTests {
    static let utc = DoseHarness.utc
    static let berlin = DoseHarness.berlin

    static func day(_ text: String) throws -> Int { try CivilDay.parse(text, field: "date") }

    static func utcInstant(_ month: Int, _ day: Int, _ hour: Int, _ minute: Int) -> Date {
        DoseHarness.instant(2026, month, day, hour, minute)
    }

    @Test func nextDayIsTheFirstIncludedDayAfter() {
        for rule in [
            DoseDayRule.every(days: 3, from: 100), .every(days: 14, from: 7), .cycle(on: 21, off: 7, from: 50),
            .cycle(on: 1, off: 1, from: 0),
        ] {
            for day in 0..<200 {
                let expected = (day + 1...day + 400).first(where: rule.includes)
                #expect(rule.nextDay(after: day) == expected, "\(rule) after \(day)")
            }
            #expect(!rule.includes(rule.anchor - 1))
            #expect(rule.includes(rule.anchor))
        }
    }

    @Test func everyThreeDaysAcrossAMonthEndAndSpringForward() throws {
        // Friday 2026-03-20 in Berlin; every 3 days from Monday 03-23 at 02:30 and 08:00. Clocks
        // jump from 02:00 to 03:00 on Sunday 03-29, one of its days; April starts between.
        let h = try DoseHarness(now: DoseHarness.instant(2026, 3, 20, 12, 0, in: Self.berlin), zone: Self.berlin)
        defer { h.cleanUp() }
        var draft = h.draft("Every3")
        draft.startDay = try Self.day("2026-03-23")
        draft.missedAfter = 7 * 86_400
        let detail = try h.book.addMedication(
            draft,
            schedule: ScheduleDraft(times: try LocalTime.parseList("02:30,08:00"), dayRule: .every(days: 3, from: draft.startDay))
        )
        let id = detail.schedules[0].id
        #expect(detail.schedules[0].summary == "every 3 days from 2026-03-23 02:30,08:00")
        let expected = [
            Self.utcInstant(3, 23, 1, 30), Self.utcInstant(3, 23, 7, 0), Self.utcInstant(3, 26, 1, 30), Self.utcInstant(3, 26, 7, 0),
            // 02:30 does not exist on 03-29: 03:30 CEST, as the daily schedule reads it; 08:00 CEST.
            Self.utcInstant(3, 29, 1, 30), Self.utcInstant(3, 29, 6, 0), Self.utcInstant(4, 1, 0, 30), Self.utcInstant(4, 1, 6, 0),
            Self.utcInstant(4, 4, 0, 30), Self.utcInstant(4, 4, 6, 0),
        ]
        let ids = ["20260323", "20260326", "20260329", "20260401", "20260404"].flatMap { ["med-\(id)-\($0)-0230", "med-\(id)-\($0)-0800"] }
        let next = try h.book.nextDoses(count: 10)
        #expect(next.map(\.due) == expected)
        #expect(next.map(\.occurrence) == ids)
        #expect(next[4].resolution == .shiftedForward(seconds: 3_600, requested: try LocalTime.parse("02:30")))
        #expect(next.allSatisfy { $0.medicationName == "Every3" && $0.amount == 100 && $0.unit == "mg" })
        #expect(detail.nextDose == expected[0])

        // The runner's path: settling every few hours makes the same doses, and no others.
        var now = h.clock.now()
        while now < Self.utcInstant(4, 4, 12, 0) {
            now = now.addingTimeInterval(5 * 3_600)
            h.clock.advance(to: now)
            try h.book.settle()
        }
        let stored = try h.storedDoses().filter { $0.scheduled <= Self.utcInstant(4, 4, 12, 0) }
        #expect(stored.map(\.scheduled) == expected)
        #expect(stored.map(\.occurrence) == ids)
        // A dose's window ends at the medication's next dose, three days on, not the next day.
        let missedAt = try h.store.read { db in
            try Int64.fetchOne(db, sql: "SELECT missed_us FROM dose WHERE occurrence = ?", arguments: ["med-\(id)-20260323-0800"])
        }
        #expect(missedAt == Self.utcInstant(3, 26, 1, 30).micros)
    }

    @Test func twentyOneSevenCycleTwiceAndAdherenceLeavesOffDaysOut() throws {
        // From Thursday 2026-01-01 (UTC): 21 days on at 08:00, 7 off, twice.
        let start = try Self.day("2026-01-01")
        let h = try DoseHarness(now: Self.utcInstant(1, 1, 0, 0))
        defer { h.cleanUp() }
        let detail = try h.book.addMedication(
            h.draft("Pill", amount: "1", unit: "tablet"),
            schedule: ScheduleDraft(times: [LocalTime(hour: 8, minute: 0)!], dayRule: .cycle(on: 21, off: 7, from: start))
        )
        let id = detail.schedules[0].id
        #expect(detail.schedules[0].summary == "21 days on, 7 off from 2026-01-01 08:00")
        #expect(detail.dosesPerDay == 0.75)
        let onDays = Array(0..<21) + Array(28..<49)
        let eight = LocalTime(hour: 8, minute: 0)!
        func occurrence(_ offset: Int) -> String {
            DoseOccurrenceID.make(scheduleID: id, local: CivilDateTime(dayNumber: start + offset, time: eight))
        }
        func due(_ offset: Int) -> Date { Self.utcInstant(1, 1, 8, 0).addingTimeInterval(Double(offset) * 86_400) }
        let next = try h.book.nextDoses(count: 42)
        #expect(next.map(\.due) == onDays.map(due))
        #expect(next.map(\.occurrence) == onDays.map(occurrence))
        #expect(next.last?.occurrence == "med-\(id)-20260218-0800")

        // Each day at 08:01: the on days' doses taken, but for day 30's (missed 4 hours on).
        for offset in 0..<56 {
            h.clock.advance(to: due(offset).addingTimeInterval(60))
            if onDays.contains(offset), offset != 30 {
                _ = try h.book.answer(.take, .occurrence(occurrence(offset)))
            } else {
                try h.book.settle()
            }
        }
        h.clock.advance(to: due(56).addingTimeInterval(-8 * 3_600 - 1))
        let range = (from: DoseRange.start(of: start, Self.utc), to: h.clock.now())
        let report = try h.book.adherence(from: range.from, to: range.to)
        #expect(report.overall == Adherence(taken: 41, missed: 1, skipped: 0, pending: 0))
        #expect(report.overall.counted == 42)
        // The off days have no doses at all: nothing to count, nothing missed.
        let offDays = Set((21..<28).map { start + $0 } + (49..<56).map { start + $0 })
        #expect(report.days.count == 56)
        #expect(report.days.filter { offDays.contains($0.day) }.allSatisfy { $0.adherence == Adherence() })
        #expect(report.days.filter { !offDays.contains($0.day) }.allSatisfy { $0.adherence.counted == 1 })
        let stored = try h.storedDoses()
        #expect(stored.filter { $0.scheduled < due(56) }.map(\.occurrence) == onDays.map(occurrence))
        #expect(stored.filter { $0.status == "missed" }.map(\.occurrence) == [occurrence(30)])
        // The third cycle's first dose is made, pending.
        #expect(stored.last?.occurrence == occurrence(56))
    }

    @Test func parsersNameTheBadValueAndWhatIsAccepted() throws {
        #expect(try DoseDayRule.every("3d") == 3)
        #expect(try DoseDayRule.every("3") == 3)
        #expect(try DoseDayRule.every("2w") == 14)
        #expect(try DoseDayRule.every("10 days") == 10)
        for bad in ["1d", "0", "366d", "abc", "3x", "-3d", "", "53w"] {
            #expect(throws: ChimeError.self) { try DoseDayRule.every(bad) }
        }
        do {
            _ = try DoseDayRule.every("1d")
            Issue.record("every 1d was taken")
        } catch {
            #expect(error.code == .usage)
            #expect(
                error.message
                    == "invalid every '1d': expected a number of days from 2 to 365, such as 3d (every third day), or weeks such as 2w"
            )
        }
        let cycle = try DoseDayRule.cycle("21/7")
        #expect(cycle.on == 21 && cycle.off == 7)
        let spaced = try DoseDayRule.cycle(" 5 / 2 ")
        #expect(spaced.on == 5 && spaced.off == 2)
        for bad in ["21-7", "21/0", "0/7", "21", "21/7/7", "366/1", "a/b", "/7"] {
            do {
                _ = try DoseDayRule.cycle(bad)
                Issue.record("cycle \(bad) was taken")
            } catch {
                #expect(error.code == .usage)
                #expect(error.message == "invalid cycle '\(bad)': expected ON/OFF days, each from 1 to 365, e.g. 21/7 (21 days on, 7 off)")
            }
        }
    }

    @Test func aChangeKeepsTheRuleUnlessDaysReplaceItAndRefusesTwoWays() throws {
        let eight = LocalTime(hour: 8, minute: 0)!
        let nine = LocalTime(hour: 9, minute: 0)!
        let rule = DoseDayRule.cycle(on: 21, off: 7, from: 20_000)
        let h = try DoseHarness(now: Self.utcInstant(1, 1, 0, 0))
        defer { h.cleanUp() }
        let current = try #require(
            try h.book.addMedication(h.draft("Pill"), schedule: ScheduleDraft(times: [eight], dayRule: rule)).schedules.first
        )
        #expect(try ScheduleChange(times: [nine]).merged(over: current) == ScheduleDraft(times: [nine], dayRule: rule))
        #expect(try ScheduleChange(days: .weekdays).merged(over: current) == ScheduleDraft(times: [eight], days: .weekdays))
        #expect(
            try ScheduleChange(anchorDay: 20_010).merged(over: current)
                == ScheduleDraft(times: [eight], dayRule: .cycle(on: 21, off: 7, from: 20_010))
        )
        #expect(
            try ScheduleChange(dayRule: .every(days: 2, from: 20_005)).merged(over: current)
                == ScheduleDraft(times: [eight], dayRule: .every(days: 2, from: 20_005))
        )
        let exclusive =
            "--every, --cycle and --days are mutually exclusive: choose the days one way (every N days, an on/off cycle, or days of the week)"
        #expect(throws: ChimeError(.usage, exclusive)) {
            try ScheduleChange(times: [eight], days: .weekdays, dayRule: rule).merged()
        }
        #expect(throws: ChimeError(.usage, exclusive)) {
            try ScheduleDraft(times: [eight], days: .weekdays, dayRule: rule).validated()
        }
        #expect(
            throws: ChimeError(
                .usage,
                "invalid schedule: --days, --every, --cycle and --zone are for scheduled medications, not --as-needed"
            )
        ) {
            try ScheduleChange(asNeeded: true, dayRule: rule).merged()
        }
    }

    @Test func aNewStartDateMovesTheCycleAndItsComingDoses() throws {
        let h = try DoseHarness(now: Self.utcInstant(1, 1, 0, 0))
        defer { h.cleanUp() }
        let start = try Self.day("2026-01-01")
        _ = try h.book.addMedication(
            h.draft("Pill"),
            schedule: ScheduleDraft(times: [LocalTime(hour: 8, minute: 0)!], dayRule: .cycle(on: 2, off: 5, from: start))
        )
        #expect(
            try h.book.nextDoses(count: 3).map(\.due) == [
                Self.utcInstant(1, 1, 8, 0), Self.utcInstant(1, 2, 8, 0), Self.utcInstant(1, 8, 8, 0),
            ]
        )
        var changes = MedicationChanges()
        changes.startDay = start + 3
        let edited = try h.book.editMedication("Pill", changes)
        #expect(edited.schedules.filter(\.isEnabled).map(\.dayRule) == [.cycle(on: 2, off: 5, from: start + 3)])
        #expect(
            try h.book.nextDoses(count: 3).map(\.due) == [
                Self.utcInstant(1, 4, 8, 0), Self.utcInstant(1, 5, 8, 0), Self.utcInstant(1, 11, 8, 0),
            ]
        )
        // The dose of 01-01, not due yet, is gone with the old first day; the new first dose is made.
        #expect(try h.storedDoses().map(\.scheduled) == [Self.utcInstant(1, 4, 8, 0)])
    }
}

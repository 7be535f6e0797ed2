import ChimeCore
import ChimeDoses
import ChimeStore
import ChimeTesting
import Foundation
import Testing

/// When the next doses fall due: weekday sets, DST days, fixed and floating zones, travel; and
/// the identifier of each occurrence, made once whatever settles it.
struct DoseScheduleTests {
    static let utc = DoseHarness.utc
    static let berlin = DoseHarness.berlin

    static func instant(_ year: Int, _ month: Int, _ day: Int, _ hour: Int, _ minute: Int, in zone: TimeZone = utc) -> Date {
        DoseHarness.instant(year, month, day, hour, minute, in: zone)
    }

    @Test func weekdaySetsFromAFridayEvening() throws {
        // Friday 2026-01-09 19:00 UTC.
        let h = try DoseHarness(now: Self.instant(2026, 1, 9, 19, 0))
        defer { h.cleanUp() }
        let mwf = try h.add("MonWedFri", at: "08:00", days: [.monday, .wednesday, .friday])
        let weekdays = try h.add("Weekdays", at: "08:00", days: .weekdays)
        let weekends = try h.add("Weekends", at: "08:00", days: .weekend)
        let evening = try h.add("Evening", at: "20:00")
        #expect(mwf.nextDose == Self.instant(2026, 1, 12, 8, 0))
        #expect(weekdays.nextDose == Self.instant(2026, 1, 12, 8, 0))
        #expect(weekends.nextDose == Self.instant(2026, 1, 10, 8, 0))
        #expect(evening.nextDose == Self.instant(2026, 1, 9, 20, 0))

        let next = try h.book.nextDoses(count: 4, medication: "MonWedFri")
        #expect(
            next.map(\.due) == [(2026, 1, 12), (2026, 1, 14), (2026, 1, 16), (2026, 1, 19)].map { Self.instant($0.0, $0.1, $0.2, 8, 0) }
        )
        #expect(next.map(\.occurrence) == ["20260112", "20260114", "20260116", "20260119"].map { "med-\(mwf.schedules[0].id)-\($0)-0800" })
        #expect(
            try h.book.nextDoses(count: 3, medication: "Weekends").map(\.due) == [
                Self.instant(2026, 1, 10, 8, 0), Self.instant(2026, 1, 11, 8, 0), Self.instant(2026, 1, 17, 8, 0),
            ]
        )
        // All medications, in time order.
        #expect(try h.book.nextDoses(count: 3).map(\.label) == ["Evening (100 mg)", "Weekends (100 mg)", "Evening (100 mg)"])
        // The doses settled so far: each schedule's first future one, no more.
        #expect(
            try h.storedDoses().map(\.scheduled) == [
                Self.instant(2026, 1, 9, 20, 0), Self.instant(2026, 1, 10, 8, 0), Self.instant(2026, 1, 12, 8, 0),
                Self.instant(2026, 1, 12, 8, 0),
            ]
        )
    }

    @Test func springForwardFiresTheMissingTimeOnceAnHourLaterKeepingItsId() throws {
        // Saturday 2026-03-28 12:00 in Berlin; clocks jump from 02:00 to 03:00 on Sunday.
        let h = try DoseHarness(now: Self.instant(2026, 3, 28, 12, 0, in: Self.berlin), zone: Self.berlin)
        defer { h.cleanUp() }
        let detail = try h.add("Night", at: "02:30")
        let id = detail.schedules[0].id
        let next = try h.book.nextDoses(count: 2)
        // 02:30 does not exist: read with the offset before the gap (+01:00), 03:30 CEST.
        #expect(next.map(\.due) == [Self.instant(2026, 3, 29, 1, 30), Self.instant(2026, 3, 30, 0, 30)])
        #expect(next.map(\.occurrence) == ["med-\(id)-20260329-0230", "med-\(id)-20260330-0230"])
        #expect(next.first?.resolution == .shiftedForward(seconds: 3_600, requested: try LocalTime.parse("02:30")))
        #expect(detail.nextDose == Self.instant(2026, 3, 29, 1, 30))

        // Through the day: one dose, at 03:30 local, with the id of 02:30.
        for hour in [0, 1, 2, 3, 4, 12, 23] {
            h.clock.advance(to: Self.instant(2026, 3, 29, hour, 0))
            try h.book.settle()
        }
        let sunday = try h.storedDoses().filter { $0.occurrence?.contains("-20260329-") == true }
        #expect(sunday.map(\.occurrence) == ["med-\(id)-20260329-0230"])
        #expect(sunday.map(\.scheduled) == [Self.instant(2026, 3, 29, 1, 30)])
        #expect(try h.storedDoses().count == 2)
    }

    @Test func fallBackFiresTheRepeatedTimeOnceAtItsFirstOccurrence() throws {
        // Saturday 2026-10-24 12:00 in Berlin; clocks go back from 03:00 to 02:00 on Sunday.
        let h = try DoseHarness(now: Self.instant(2026, 10, 24, 12, 0, in: Self.berlin), zone: Self.berlin)
        defer { h.cleanUp() }
        let id = try h.add("Night", at: "02:30").schedules[0].id
        let next = try h.book.nextDoses(count: 2)
        // 02:30 CEST (+02:00) is 00:30 UTC; 02:30 CET (+01:00), an hour later, is not a dose.
        #expect(next.map(\.due) == [Self.instant(2026, 10, 25, 0, 30), Self.instant(2026, 10, 26, 1, 30)])
        #expect(next.map(\.occurrence) == ["med-\(id)-20261025-0230", "med-\(id)-20261026-0230"])
        #expect(next.first?.resolution == .firstOfRepeated)

        for (hour, minute) in [(0, 0), (0, 31), (1, 0), (1, 30), (1, 31), (2, 0), (12, 0)] {
            h.clock.advance(to: Self.instant(2026, 10, 25, hour, minute))
            try h.book.settle()
        }
        let doses = try h.storedDoses()
        #expect(doses.map(\.occurrence) == ["med-\(id)-20261025-0230", "med-\(id)-20261026-0230"])
        #expect(doses.first?.scheduled == Self.instant(2026, 10, 25, 0, 30))
    }

    @Test func aFixedZoneKeepsItsOwnTimeAFloatingOneFollowsTheSystemZone() throws {
        // Monday 2026-01-05 00:00 UTC; New York is at -05:00 in January.
        let h = try DoseHarness(now: Self.instant(2026, 1, 5, 0, 0))
        defer { h.cleanUp() }
        let fixed = try h.add("Fixed", at: "08:00", zone: .fixed("America/New_York"))
        let floating = try h.add("Floating", at: "08:00")
        #expect(fixed.nextDose == Self.instant(2026, 1, 5, 13, 0))
        #expect(floating.nextDose == Self.instant(2026, 1, 5, 8, 0))
        #expect(try h.stored("med-\(fixed.schedules[0].id)-20260105-0800")?.zone == "America/New_York")
        #expect(try h.stored("med-\(floating.schedules[0].id)-20260105-0800")?.zone == Self.utc.identifier)

        // The system zone becomes Berlin: the floating one moves to 08:00 Berlin, the fixed one stays.
        h.zone.set(Self.berlin)
        #expect(try h.book.medication("Fixed").nextDose == Self.instant(2026, 1, 5, 13, 0))
        #expect(try h.book.medication("Floating").nextDose == Self.instant(2026, 1, 5, 7, 0))
    }

    @Test func afterTravelTheFutureFloatingDoseIsMadeAgainAtTheSameLocalTime() throws {
        // Monday 2026-01-05 18:00 UTC: 19:00 in Berlin, 13:00 in New York.
        let h = try DoseHarness(now: Self.instant(2026, 1, 5, 18, 0), zone: Self.berlin)
        defer { h.cleanUp() }
        let id = try h.add("Aspirin", at: "08:00").schedules[0].id
        let occurrence = "med-\(id)-20260106-0800"
        #expect(try h.storedDoses().map(\.scheduled) == [Self.instant(2026, 1, 6, 7, 0)])
        #expect(try h.pendingAlerts().map(\.due) == [Self.instant(2026, 1, 6, 7, 0)])

        h.zone.set(DoseHarness.newYork)
        let settled = try h.book.settle()
        #expect(settled.created == 1)
        let doses = try h.storedDoses()
        #expect(doses.map(\.occurrence) == [occurrence])
        #expect(doses.map(\.scheduled) == [Self.instant(2026, 1, 6, 13, 0)])
        #expect(doses.map(\.zone) == ["America/New_York"])
        let alerts = try h.pendingAlerts()
        #expect(alerts.map(\.id) == [occurrence])
        #expect(alerts.map(\.due) == [Self.instant(2026, 1, 6, 13, 0)])
        #expect(try h.book.nextDoses(count: 1).map(\.due) == [Self.instant(2026, 1, 6, 13, 0)])
        // Settling again in the same zone changes nothing.
        #expect(try h.book.settle().created == 0)
        #expect(try h.storedDoses() == doses)
    }

    @Test func theIdentifierSchemeAndOneDosePerOccurrenceAcrossSettlesAndRestarts() throws {
        // Monday 2026-01-05 07:00 UTC.
        let h = try DoseHarness(now: Self.instant(2026, 1, 5, 7, 0))
        defer { h.cleanUp() }
        _ = try h.add("Vitamin", at: "06:00")
        let detail = try h.add("Aspirin", at: "08:00,20:30")
        let id = detail.schedules[0].id
        #expect(id == 2)
        #expect(DoseOccurrenceID.make(scheduleID: id, local: CivilDateTime(year: 2026, month: 1, day: 5, hour: 8)) == "med-2-20260105-0800")
        #expect(DoseOccurrenceID.matches("med-2-20260105-0800"))
        #expect(!DoseOccurrenceID.matches("med-summary-20260105-080000"))
        #expect(!DoseOccurrenceID.matches("refill-2"))
        #expect(try h.pendingAlerts().map(\.id) == ["med-2-20260105-0800", "med-1-20260106-0600"])

        // Settling again, and again after time passed, never makes a second dose for an occurrence.
        #expect(try h.book.settle().created == 0)
        h.clock.advance(to: Self.instant(2026, 1, 5, 8, 0))
        #expect(try h.book.settle().created == 1)
        #expect(try h.book.settle().created == 0)
        // A restart: a new book on the same file.
        let restarted = try h.reopened()
        #expect(try restarted.settle().created == 0)
        h.clock.advance(to: Self.instant(2026, 1, 5, 21, 0))
        #expect(try restarted.settle().created == 1)
        #expect(try h.book.settle().created == 0)

        let occurrences = try h.storedDoses().compactMap(\.occurrence)
        #expect(occurrences == ["med-2-20260105-0800", "med-2-20260105-2030", "med-1-20260106-0600", "med-2-20260106-0800"])
        #expect(Set(occurrences).count == occurrences.count)
        for occurrence in occurrences {
            #expect(try h.reminderRows(id: occurrence) == 1, "\(occurrence)")
        }
    }
}

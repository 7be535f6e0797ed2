import ChimeCore
import ChimeDoses
import ChimeStore
import ChimeTesting
import Foundation
import GRDB
import Testing

/// `chime dose postpone`: one coming dose moves later, its alert with it, its windows from the
/// new time; the schedule and the other doses stay.
struct DosePostponeTests {
    static func at(_ hour: Int, _ minute: Int = 0, day: Int = 0) -> Date {
        DoseHarness.instant(2026, 1, 5 + day, hour, minute)
    }

    @Test func aComingDoseMovesWithItsAlertAndWindowsAndTheScheduleStays() throws {
        let h = try DoseHarness(now: Self.at(7, 0))
        defer { h.cleanUp() }
        let id = try h.add("Aspirin", at: "08:00,20:00").schedules[0].id
        let occurrence = "med-\(id)-20260105-0800"
        let postponed = try h.book.postpone(.medication("Aspirin"), .by(2 * 3_600))
        #expect(postponed.previous == Self.at(8, 0))
        #expect(postponed.entry.dose.occurrence == occurrence)
        #expect(postponed.entry.dose.scheduled == Self.at(10, 0))
        #expect(postponed.entry.dose.overdueAt == Self.at(10, 30))
        #expect(try h.pendingAlerts().filter { $0.id == occurrence }.map(\.due) == [Self.at(10, 0)])
        // The preview shows it at its new time; the schedule's other doses stay.
        #expect(try h.book.nextDoses(count: 3).map(\.due) == [Self.at(10, 0), Self.at(20, 0), Self.at(8, 0, day: 1)])
        #expect(try h.book.medication("Aspirin").schedules.count == 1)

        // --to: a time of day on its own day, after its time and before the next dose (20:00).
        let again = try h.book.postpone(.occurrence(occurrence), .to(LocalTime(hour: 11, minute: 15)!))
        #expect(again.previous == Self.at(10, 0))
        #expect(again.entry.dose.scheduled == Self.at(11, 15))
        #expect(throws: ChimeError.self) { try h.book.postpone(.occurrence(occurrence), .to(LocalTime(hour: 21, minute: 0)!)) }
        do {
            _ = try h.book.postpone(.occurrence(occurrence), .to(LocalTime(hour: 9, minute: 0)!))
            Issue.record("postponed to an earlier time")
        } catch {
            #expect(error.code == .usage)
            #expect(
                error.message
                    == "invalid postponement '09:00': expected a time after the dose's 11:15 and before the next dose, Mon 2026-01-05 20:00 +00:00"
            )
        }

        // Not overdue before its new grace window ends; missed 4 hours after its new time.
        h.clock.advance(to: Self.at(11, 40))
        #expect(
            try h.book.doses(DoseFilter(from: nil, to: nil)).first { $0.dose.occurrence == occurrence }?.dose.isOverdue(at: h.clock.now())
                == false
        )
        // Due now: postponing is refused (snooze it).
        h.clock.advance(to: Self.at(11, 50))
        #expect(throws: ChimeError.self) { try h.book.postpone(.occurrence(occurrence), .by(600)) }
        h.clock.advance(to: Self.at(15, 16))
        try h.book.settle()
        #expect(try h.stored(occurrence)?.status == "missed")
        #expect(try h.stored(occurrence)?.scheduled == Self.at(11, 15))
    }

    @Test func aDoseNotYetMadeIsMadeWithItsAlert() throws {
        let h = try DoseHarness(now: Self.at(7, 0))
        defer { h.cleanUp() }
        let id = try h.add("Zinc", at: "08:00").schedules[0].id
        // Two days ahead: not made yet by the runner.
        let occurrence = "med-\(id)-20260107-0800"
        #expect(try h.stored(occurrence) == nil)
        let postponed = try h.book.postpone(.occurrence(occurrence), .by(30 * 60))
        #expect(postponed.entry.dose.scheduled == Self.at(8, 30, day: 2))
        #expect(try h.pendingAlerts().filter { $0.id == occurrence }.map(\.due) == [Self.at(8, 30, day: 2)])
        #expect(throws: ChimeError(.usage, "invalid postponement '25h': expected from 1m to 24h, such as 2h")) {
            try h.book.postpone(.occurrence(occurrence), .by(25 * 3_600))
        }
    }
}

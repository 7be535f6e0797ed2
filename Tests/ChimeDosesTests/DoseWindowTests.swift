import ChimeCore
import ChimeDoses
import ChimeStore
import ChimeTesting
import Foundation
import Testing

/// A dose's window on an injected clock, no scheduler: pending, overdue after the grace window,
/// missed by itself at four hours or at the next dose, and still answerable afterwards.
struct DoseWindowTests {
    /// Monday 2026-01-05 08:00 UTC.
    static let t = DoseHarness.instant(2026, 1, 5, 8, 0)

    static func at(_ minutes: Double) -> Date { t.addingTimeInterval(minutes * 60) }

    @Test func pendingThenOverdueAfterTheGraceWindowThenMissedAtFourHours() throws {
        let h = try DoseHarness(now: Self.at(-1))
        defer { h.cleanUp() }
        try h.add("Aspirin", at: "08:00")
        let occurrence = "med-1-20260105-0800"

        h.clock.advance(to: Self.at(29))
        #expect(try h.book.overdueDoses().isEmpty)
        let dose = try #require(try h.book.doses(DoseFilter(status: .pending)).first?.dose)
        #expect(dose.occurrence == occurrence)
        #expect(dose.overdueAt == Self.at(30))
        #expect(dose.missedAt == Self.at(240))
        #expect(!dose.isOverdue(at: h.clock.now()))

        h.clock.advance(to: Self.at(30))
        #expect(try h.book.overdueDoses().map(\.dose.occurrence) == [occurrence])
        #expect(try h.stored(occurrence)?.status == "pending")

        // Nothing shows alerts here (no runner): past its grace window it goes in a summary.
        h.clock.advance(to: Self.at(240 - 1.0 / 60))
        let stale = try h.book.settle()
        #expect(stale.summarized == [dose.id])
        #expect(stale.summaryID == "med-summary-20260105-115959")
        #expect(try h.book.overdueDoses().map(\.dose.occurrence) == [occurrence])
        h.clock.advance(to: Self.at(240))
        let settled = try h.book.settle()
        #expect(settled.missed == [dose.id])
        // Listed once already (below), not in a second summary.
        #expect(settled.summaryID == nil)
        #expect(try h.book.overdueDoses().isEmpty)
        let missed = try #require(try h.book.doses(DoseFilter(status: .missed)).first?.dose)
        #expect(missed.occurrence == occurrence)
        #expect(missed.autoMissed)
        // Its alert is cancelled with it.
        #expect(try !h.pendingAlerts().contains { $0.id == occurrence })
    }

    @Test func theNextDoseOfTheSameMedicationEndsTheWindowFirst() throws {
        let h = try DoseHarness(now: Self.at(-1))
        defer { h.cleanUp() }
        try h.add("Aspirin", at: "08:00,10:00")
        let first = "med-1-20260105-0800"
        let entry = try #require(try h.book.doses(DoseFilter()).first { $0.dose.occurrence == first })
        #expect(entry.dose.missedAt == Self.at(120))

        h.clock.advance(to: Self.at(119))
        try h.book.settle()
        #expect(try h.stored(first)?.status == "pending")
        h.clock.advance(to: Self.at(120))
        try h.book.settle()
        #expect(try h.stored(first)?.status == "missed")
        #expect(try h.stored(first)?.autoMissed == true)
        #expect(try h.stored("med-1-20260105-1000")?.status == "pending")
        // The 10:00 dose's window runs its full four hours (the next one is tomorrow).
        let second = try #require(try h.book.doses(DoseFilter()).first { $0.dose.occurrence == "med-1-20260105-1000" })
        #expect(second.dose.missedAt == Self.at(120 + 240))
    }

    @Test func aMissedDoseAnsweredLaterIsRecordedTaken() throws {
        let h = try DoseHarness(now: Self.at(-1))
        defer { h.cleanUp() }
        try h.add("Aspirin", at: "08:00")
        h.clock.advance(to: Self.at(300))
        let missed = try #require(try h.book.doses(DoseFilter(status: .missed)).first)
        #expect(missed.dose.autoMissed)

        let answered = try h.book.answer(.take, .id(missed.dose.id), notes: "took it late")
        #expect(answered.previous == .missed)
        #expect(answered.entry.dose.status == .taken)
        #expect(answered.entry.dose.takenAt == Self.at(300))
        #expect(answered.entry.dose.notes == "took it late")
        #expect(!answered.entry.dose.autoMissed)
        // A later settle leaves the answer as it is.
        h.clock.advance(to: Self.at(360))
        try h.book.settle()
        #expect(try h.stored("med-1-20260105-0800")?.status == "taken")
        let again = #expect(throws: ChimeError.self) { try h.book.answer(.take, .id(missed.dose.id)) }
        #expect(again?.code == .conflict)
    }
}

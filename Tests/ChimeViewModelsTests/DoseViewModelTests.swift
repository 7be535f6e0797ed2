import ChimeCore
import ChimeDoses
import ChimeStore
import ChimeTesting
import ChimeViewModels
import Foundation
import Testing

/// The medication list and the dose history with adherence (the seed's MedicationListViewModel
/// and DoseHistoryViewModel) over the doses family, on a real store and the injected clock.
struct DoseViewModelTests {
    static func at(day: Int = 0, _ hour: Int, _ minute: Int = 0) -> Date { ViewModelHarness.instant(day: day, hour, minute) }

    @Test func theListSearchesByNameAndShowsActiveOnesUnlessAskedForAll() throws {
        let h = try ViewModelHarness(now: Self.at(7, 0))
        defer { h.cleanUp() }
        let model = MedicationListViewModel(book: h.book)
        #expect(model.state.medications.isEmpty)
        #expect(model.state.emptyText == "No medications yet.")
        #expect(model.state.showActiveOnly)

        let aspirin = try h.addMedication("Aspirin", at: "08:00").medication.id
        try h.addMedication("vitamin D", at: "09:00")
        let iron = try h.addMedication("Iron", at: "20:00").medication.id
        let all = model.refresh()
        #expect(all.medications.map(\.name) == ["Aspirin", "Iron", "vitamin D"])
        #expect(all.emptyText == nil)
        let first = try #require(all.medications.first)
        #expect(first.label == "Aspirin (100 mg)")
        #expect(first.lines.first == "\(aspirin)  Aspirin (100 mg)")
        #expect(first.lines.last == "    Next dose: Mon 2026-01-05 08:00 +00:00 (in 1h)")
        #expect(first.nextDose == Self.at(8, 0))

        // Search: part of the name, any case.
        #expect(model.search("IN").medications.map(\.name) == ["Aspirin", "vitamin D"])
        #expect(model.search("ron").medications.map(\.name) == ["Iron"])
        let none = model.search("zzz")
        #expect(none.medications.isEmpty)
        #expect(none.emptyText == "No medication matches 'zzz'.")
        #expect(model.search("").medications.count == 3)

        // Active only: a deactivated medication leaves the list until the filter is off.
        let deactivated = model.deactivate(iron)
        #expect(deactivated.medications.map(\.name) == ["Aspirin", "vitamin D"])
        let everything = model.toggleActiveFilter()
        #expect(!everything.showActiveOnly)
        let inactive = try #require(everything.medications.first { $0.id == iron })
        #expect(!inactive.isActive)
        #expect(
            inactive.lines == [
                "\(iron)  Iron (100 mg)  (inactive)", inactive.lines[1], "    No doses while inactive: 'chime med reactivate \(iron)'",
            ]
        )
        #expect(model.reactivate(iron).medications.first { $0.id == iron }?.isActive == true)
        #expect(model.delete(aspirin).medications.map(\.name) == ["Iron", "vitamin D"])
        let missing = model.delete(aspirin)
        #expect(missing.error?.code == .notFound)
        #expect(missing.medications.count == 2)
    }

    @Test func historyCountsStatusesOverdueAndAdherenceAndTheAnswersChangeThem() throws {
        let h = try ViewModelHarness(now: Self.at(7, 0))
        defer { h.cleanUp() }
        let model = DoseHistoryViewModel(book: h.book)
        #expect(model.state.emptyText == "No doses in last 7 days.")
        #expect(model.state.adherencePercentage == "—")
        #expect(model.state.adherenceRate == nil)

        try h.addMedication("Aspirin", at: "08:00")
        try h.addMedication("Vitamin", at: "08:00")
        let iron = try h.addMedication("Iron", at: "08:00").medication.id
        h.wall.advance(to: Self.at(8, 1))
        let due = model.refresh()
        #expect(due.doses.map(\.label) == ["Aspirin (100 mg)", "Iron (100 mg)", "Vitamin (100 mg)"])
        #expect(due.days.map(\.heading) == ["Mon 2026-01-05"])
        let ids = Dictionary(uniqueKeysWithValues: due.doses.map { ($0.label, $0.id) })
        model.markAsTaken(ids["Aspirin (100 mg)"]!, notes: "with breakfast")
        model.markAsSkipped(ids["Vitamin (100 mg)"]!)

        // Iron is pending past its 30-minute grace window: overdue, and still pending.
        h.wall.advance(to: Self.at(8, 45))
        let state = model.refresh()
        #expect(state.counts == DoseCounts(pending: 1, taken: 1, missed: 0, skipped: 1, overdue: 1, total: 3))
        #expect(state.summary == "3 doses: 1 pending, 1 taken, 1 skipped (1 overdue)")
        #expect(state.doses.map(\.statusText) == ["taken at 08:01", "overdue", "skipped"])
        #expect(state.doses.map(\.time) == ["08:00", "08:00", "08:00"])
        #expect(state.doses[0].notes == "with breakfast")
        #expect(state.overdue.map(\.label) == ["Iron (100 mg)"])
        #expect(state.overdueCount == 1)
        // Adherence: taken ÷ (taken + missed + skipped); pending doses are not counted.
        #expect(state.adherence == Adherence(taken: 1, missed: 0, skipped: 1, pending: 1))
        #expect(state.adherencePercentage == "50%")

        // Filters: by status, by medication; adherence follows the medication, not the status.
        let taken = model.filterByStatus(.taken)
        #expect(taken.doses.map(\.label) == ["Aspirin (100 mg)"])
        #expect(taken.adherencePercentage == "50%")
        let ironOnly = model.clearFilters()
        #expect(ironOnly.doses.count == 3)
        let byMedication = model.filterByMedication(iron)
        #expect(byMedication.doses.map(\.label) == ["Iron (100 mg)"])
        #expect(byMedication.adherencePercentage == "—")
        model.clearFilters()

        // Past its missed-after window (4 hours), the family marks it missed: no answer.
        h.wall.advance(to: Self.at(12, 30))
        let missed = model.refresh()
        #expect(missed.doses.map(\.statusText) == ["taken at 08:01", "missed (no answer)", "skipped"])
        #expect(missed.adherencePercentage == "33%")
        #expect(missed.overdue.isEmpty)

        // Reset a dose, and a dose that is not there.
        let reset = model.resetToPending(ids["Aspirin (100 mg)"]!)
        #expect(reset.takenCount == 0)
        #expect(reset.pendingCount == 1)
        let unknown = model.markAsTaken(9_999)
        #expect(unknown.error?.code == .notFound)
        #expect(unknown.totalDoses == 3)
    }

    @Test func rangesAreLocalDaysAsTheCLISays() throws {
        let h = try ViewModelHarness(now: Self.at(7, 0))
        defer { h.cleanUp() }
        try h.addMedication("Aspirin", at: "08:00")
        h.wall.advance(to: Self.at(day: 1, 9, 0))
        let model = DoseHistoryViewModel(book: h.book, range: .last30Days)
        #expect(model.state.days.map(\.heading) == ["Mon 2026-01-05", "Tue 2026-01-06"])
        #expect(model.setLastMonth().emptyText == "No doses in last month.")
        #expect(model.state.range.title == "last month")
        // This month runs to its end: tomorrow's dose, already planned, is in it; the last 7
        // days end with today.
        #expect(model.setCurrentMonth().doses.map(\.scheduled) == [Self.at(8, 0), Self.at(day: 1, 8, 0), Self.at(day: 2, 8, 0)])
        #expect(model.state.doses.last?.statusText == "pending")
        #expect(model.setLast7Days().doses.map(\.scheduled) == [Self.at(8, 0), Self.at(day: 1, 8, 0)])
    }
}

import ChimeCore
import ChimeDoses
import Foundation
import Synchronization

/// What the medication list shows (the seed's `MedicationListViewModel` outputs).
public struct MedicationListState: Sendable, Hashable {
    /// One row: the medication and its lines as `chime med list` prints them.
    public struct Row: Sendable, Hashable, Identifiable {
        public var id: Int64
        public var name: String
        /// `Aspirin (100 mg)`.
        public var label: String
        public var isActive: Bool
        public var nextDose: Date?
        /// The heading, each enabled schedule, the next dose (`    Next dose: … (in 2h)`).
        public var lines: [String]
        public var detail: MedicationDetail
        /// As needed or after-last, and active: a dose may be taken now from the list (``DosesTodayViewModel/takeNow(_:)``).
        public var canTakeNow: Bool {
            detail.medication.isActive && detail.schedules.contains { $0.isEnabled && ($0.frequency == .asNeeded || $0.afterLast != nil) }
        }
    }

    /// The medications shown: by name, filtered by ``searchText`` and ``showActiveOnly``.
    public var medications: [Row]
    public var searchText: String
    /// The seed's filter toggle: on, inactive medications are left out (as `chime med list`
    /// without `--all`).
    public var showActiveOnly: Bool
    /// Shown instead of an empty list: `No medications yet.` or `No medication matches 'x'.`
    public var emptyText: String?
    public var error: ChimeError?
    /// The last action's outcome: `Refilled Aspirin: 0 doses + 30 = 30 doses, about 30 days
    /// left.`, as `chime med refill` says it (and its warning, if any).
    public var message: String? = nil
}

/// The medication list (the seed's `MedicationListViewModel`) over ``DoseBook``: search by
/// name, active only, deactivate, reactivate and delete.
public final class MedicationListViewModel: Sendable {
    public let book: DoseBook
    private let current: Mutex<MedicationListState>

    public init(book: DoseBook) {
        self.book = book
        current = Mutex(MedicationListState(medications: [], searchText: "", showActiveOnly: true, emptyText: nil, error: nil))
        refresh()
    }

    public var state: MedicationListState { current.withLock { $0 } }

    /// Filters by part of the name (any case); an empty text shows all.
    @discardableResult
    public func search(_ text: String) -> MedicationListState {
        current.withLock { $0.searchText = text }
        return refresh()
    }

    @discardableResult
    public func setShowActiveOnly(_ on: Bool) -> MedicationListState {
        current.withLock { $0.showActiveOnly = on }
        return refresh()
    }

    @discardableResult
    public func toggleActiveFilter() -> MedicationListState { setShowActiveOnly(!state.showActiveOnly) }

    @discardableResult
    public func deactivate(_ id: Int64) -> MedicationListState {
        act { () throws(ChimeError) in _ = try book.setActive(String(id), false) }
    }

    @discardableResult
    public func reactivate(_ id: Int64) -> MedicationListState { act { () throws(ChimeError) in _ = try book.setActive(String(id), true) } }

    /// Deletes the medication with its schedules and history (a view asks first, saying how
    /// many doses go with it: ``DoseBook/deletionImpact(_:)``).
    @discardableResult
    public func delete(_ id: Int64) -> MedicationListState { act { () throws(ChimeError) in _ = try book.deleteMedication(String(id)) } }

    /// Adds a box of `count` doses (as typed: `chime med refill`'s rule, 1 to 100000) to the
    /// medication's stock; ``MedicationListState/message`` says the stock now.
    @discardableResult
    public func refill(_ id: Int64, count text: String) -> MedicationListState {
        var message: String?
        _ = act { () throws(ChimeError) in
            let count = try Refill.count(text)
            message = Self.refilled(try book.refill(String(id), adding: count))
        }
        current.withLock { $0.message = message }
        return state
    }

    /// `Refilled Aspirin: 0 doses + 30 = 30 doses, about 30 days left.` (`chime med refill`'s line),
    /// then its low-stock warning, if any.
    static func refilled(_ refill: Refill) -> String {
        let detail = refill.detail
        let stock = detail.medication.stock ?? 0
        var line = "Refilled \(UserText.oneLine(detail.medication.name)): \(count(refill.previous, "dose")) + \(refill.added) = "
        line += count(stock, "dose")
        line += detail.stockDaysLeft.map { ", about \(count($0, "day")) left" } ?? " (as needed: no daily pace to count days by)"
        line += "."
        if let warning = detail.lowStockWarning { line += " Warning: \(UserText.oneLine(warning))" }
        return line
    }

    private static func count(_ value: Int, _ noun: String) -> String { "\(value) \(noun)\(value == 1 ? "" : "s")" }

    /// Reads the list again (after an edit, or a signal from the runner).
    @discardableResult
    public func refresh() -> MedicationListState {
        let (text, activeOnly) = current.withLock { ($0.searchText, $0.showActiveOnly) }
        let search = text.trimmingCharacters(in: .whitespaces)
        do {
            let details = try book.medications(search: search.isEmpty ? nil : search, includeInactive: !activeOnly)
            let now = book.clock.now()
            let zone = book.systemZone()
            let rows = details.map { detail in
                MedicationListState.Row(
                    id: detail.medication.id,
                    name: detail.medication.name,
                    // A taper's amount of today.
                    label: detail.medication.on(day: CivilDay.of(now, in: zone)).label,
                    isActive: detail.medication.isActive,
                    nextDose: detail.nextDose,
                    lines: MedicationText.lines(detail, full: false, now: now, zone: zone),
                    detail: detail
                )
            }
            current.withLock { state in
                state.message = nil
                state.medications = rows
                state.emptyText =
                    rows.isEmpty ? (search.isEmpty ? MedicationText.noMedications : MedicationText.noMatch(search)) : nil
                state.error = nil
            }
        } catch {
            current.withLock { $0.error = error }
        }
        return state
    }

    private func act(_ action: () throws(ChimeError) -> Void) -> MedicationListState {
        do {
            try action()
            return refresh()
        } catch {
            refresh()
            current.withLock { $0.error = error }
            return state
        }
    }
}

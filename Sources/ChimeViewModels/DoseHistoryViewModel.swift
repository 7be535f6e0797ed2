import ChimeCore
import ChimeDoses
import Foundation
import Synchronization

/// The seed's quick ranges, as local days.
public enum DoseHistoryRange: String, Sendable, Hashable, CaseIterable {
    case last7Days, last30Days, thisMonth, lastMonth

    /// As `chime doses` heads its listing: `last 7 days`, `this month`.
    public var title: String {
        switch self {
        case .last7Days: "last 7 days"
        case .last30Days: "last 30 days"
        case .thisMonth: "this month"
        case .lastMonth: "last month"
        }
    }

    /// `[from, to)` at `now` in `zone` (the family's ``DoseRange``).
    public func bounds(now: Date, zone: TimeZone) -> (from: Date, to: Date) {
        switch self {
        case .last7Days: DoseRange.last(days: 7, now: now, zone: zone)
        case .last30Days: DoseRange.last(days: 30, now: now, zone: zone)
        case .thisMonth: DoseRange.month(monthsBack: 0, now: now, zone: zone)
        case .lastMonth: DoseRange.month(monthsBack: 1, now: now, zone: zone)
        }
    }
}

/// What the dose history shows (the seed's `DoseHistoryViewModel` outputs).
public struct DoseHistoryState: Sendable, Hashable {
    /// One dose, as a line of `chime doses` says it.
    public struct Row: Sendable, Hashable, Identifiable {
        public var id: Int64
        public var medicationID: Int64
        /// `Aspirin (100 mg)`.
        public var label: String
        public var scheduled: Date
        /// `08:00` in the dose's zone.
        public var time: String
        public var status: DoseStatus
        public var isOverdue: Bool
        /// `overdue`, `taken at 08:05`, `missed (no answer)`.
        public var statusText: String
        public var notes: String
    }

    /// The doses of one local day (the seed's `dosesByDate()`).
    public struct Day: Sendable, Hashable {
        /// `Mon 2026-01-05`.
        public var heading: String
        public var doses: [Row]
    }

    public var range: DoseHistoryRange
    public var statusFilter: DoseStatus?
    /// A medication's number.
    public var medicationFilter: Int64?
    /// The doses in the range matching the filters, in time order.
    public var doses: [Row]
    public var days: [Day]
    public var counts: DoseCounts
    /// `5 doses: 1 pending, 3 taken, 1 missed (1 overdue)`.
    public var summary: String
    /// `No doses in last 7 days.` when there are none.
    public var emptyText: String?
    /// Over the range (and medication), whatever the status filter: taken ÷ (taken + missed +
    /// skipped) of doses already due.
    public var adherence: Adherence
    /// `92%`, or `—` while nothing counts.
    public var adherencePercentage: String { adherence.percentText }
    public var adherenceRate: Double? { adherence.rate }
    /// Pending doses past their grace window, any range (the seed's `overdueDoses`).
    public var overdue: [Row]
    public var error: ChimeError?

    /// One day's adherence (a bar of the page's chart), as `chime adherence` draws it.
    public struct DayAdherence: Sendable, Hashable {
        /// The local day's number (``CivilDay``).
        public var day: Int
        /// `Mon 01-05`.
        public var label: String
        /// `Mon`.
        public var weekday: String
        public var adherence: Adherence
        /// `Mon 01-05: 100% (1 of 1 taken)`, or `Mon 01-05: nothing due`.
        public var text: String
    }

    /// One medication's adherence over the range.
    public struct MedicationAdherence: Sendable, Hashable {
        public var medicationID: Int64
        public var name: String
        public var adherence: Adherence
        /// `100% (1 taken, 0 missed, 0 skipped)`, or `— (nothing due yet)`.
        public var figure: String
        /// `Aspirin: 100% (1 taken, 0 missed, 0 skipped)`.
        public var text: String { "\(UserText.oneLine(name)): \(figure)" }
    }

    /// The range's days, oldest first, from the first medication's day (`chime adherence`'s days).
    public var adherenceByDay: [DayAdherence] = []
    public var adherenceByMedication: [MedicationAdherence] = []

    /// `Adherence, last 7 days: 100% (1 taken, 0 missed, 0 skipped)`, or `Adherence, last 7
    /// days: — (nothing due yet)`.
    public var adherenceText: String {
        "Adherence, \(range.title): " + Self.figure(adherence)
    }

    /// The chart's words, for a screen reader: `Adherence by day, last 7 days: Mon 01-05: 100%
    /// (1 of 1 taken); Tue 01-06: nothing due`.
    public var chartDescription: String {
        guard !adherenceByDay.isEmpty else { return "Adherence by day, \(range.title): nothing due yet" }
        return "Adherence by day, \(range.title): " + adherenceByDay.map(\.text).joined(separator: "; ")
    }

    /// `100% (1 taken, 0 missed, 0 skipped)`, or `— (nothing due yet)`.
    static func figure(_ adherence: Adherence) -> String {
        guard adherence.counted > 0 else { return "— (nothing due yet)" }
        return "\(adherence.percentText) (\(adherence.taken) taken, \(adherence.missed) missed, \(adherence.skipped) skipped)"
    }

    public var totalDoses: Int { counts.total }
    public var takenCount: Int { counts.taken }
    public var missedCount: Int { counts.missed }
    public var skippedCount: Int { counts.skipped }
    public var pendingCount: Int { counts.pending }
    public var overdueCount: Int { overdue.count }
}

/// The dose history and adherence (the seed's `DoseHistoryViewModel`) over ``DoseBook``:
/// ranges, filters, marking a dose taken, skipped or missed, or pending again.
public final class DoseHistoryViewModel: Sendable {
    public let book: DoseBook
    private let current: Mutex<DoseHistoryState>

    public init(book: DoseBook, range: DoseHistoryRange = .last7Days) {
        self.book = book
        current = Mutex(
            DoseHistoryState(
                range: range,
                statusFilter: nil,
                medicationFilter: nil,
                doses: [],
                days: [],
                counts: DoseCounts(),
                summary: "",
                emptyText: nil,
                adherence: Adherence(),
                overdue: [],
                error: nil
            )
        )
        refresh()
    }

    public var state: DoseHistoryState { current.withLock { $0 } }

    // MARK: - Ranges and filters

    @discardableResult
    public func setRange(_ range: DoseHistoryRange) -> DoseHistoryState {
        current.withLock { $0.range = range }
        return refresh()
    }

    @discardableResult public func setLast7Days() -> DoseHistoryState { setRange(.last7Days) }
    @discardableResult public func setLast30Days() -> DoseHistoryState { setRange(.last30Days) }
    @discardableResult public func setCurrentMonth() -> DoseHistoryState { setRange(.thisMonth) }
    @discardableResult public func setLastMonth() -> DoseHistoryState { setRange(.lastMonth) }

    @discardableResult
    public func filterByStatus(_ status: DoseStatus?) -> DoseHistoryState {
        current.withLock { $0.statusFilter = status }
        return refresh()
    }

    @discardableResult
    public func filterByMedication(_ id: Int64?) -> DoseHistoryState {
        current.withLock { $0.medicationFilter = id }
        return refresh()
    }

    /// No status or medication filter (the range stays).
    @discardableResult
    public func clearFilters() -> DoseHistoryState {
        current.withLock {
            $0.statusFilter = nil
            $0.medicationFilter = nil
        }
        return refresh()
    }

    // MARK: - Answers

    @discardableResult
    public func markAsTaken(_ id: Int64, notes: String? = nil) -> DoseHistoryState { answer(.take, id, notes) }
    @discardableResult
    public func markAsSkipped(_ id: Int64, notes: String? = nil) -> DoseHistoryState { answer(.skip, id, notes) }
    @discardableResult
    public func markAsMissed(_ id: Int64, notes: String? = nil) -> DoseHistoryState { answer(.miss, id, notes) }
    @discardableResult
    public func resetToPending(_ id: Int64) -> DoseHistoryState { answer(.reset, id, nil) }

    private func answer(_ answer: DoseAnswer, _ id: Int64, _ notes: String?) -> DoseHistoryState {
        do {
            _ = try book.answer(answer, .id(id), notes: notes)
            return refresh()
        } catch {
            refresh()
            current.withLock { $0.error = error }
            return state
        }
    }

    // MARK: - Reading

    /// Reads the history again at the clock's now (the family settles first: missed doses are
    /// marked, as for `chime doses`).
    @discardableResult
    public func refresh() -> DoseHistoryState {
        let (range, status, medication) = current.withLock { ($0.range, $0.statusFilter, $0.medicationFilter) }
        let now = book.clock.now()
        let zone = book.systemZone()
        let bounds = range.bounds(now: now, zone: zone)
        do {
            let filter = DoseFilter(from: bounds.from, to: bounds.to, status: status, medication: medication.map(String.init))
            let entries = try book.doses(filter)
            let report = try book.adherence(from: bounds.from, to: bounds.to, medication: medication.map(String.init))
            let adherence = report.overall
            let byDay = report.days.map(Self.day)
            let byMedication = report.medications.map {
                DoseHistoryState.MedicationAdherence(
                    medicationID: $0.medicationID,
                    name: $0.name,
                    adherence: $0.adherence,
                    figure: DoseHistoryState.figure($0.adherence)
                )
            }
            let overdue = try book.overdueDoses().map { Self.row($0, now: now) }
            let rows = entries.map { Self.row($0, now: now) }
            var days: [DoseHistoryState.Day] = []
            var dayNumber: Int?
            for (entry, row) in zip(entries, rows) {
                let zone = entry.dose.timeZone
                let local = CivilDay.of(entry.dose.scheduled, in: zone)
                if local != dayNumber {
                    dayNumber = local
                    days.append(DoseHistoryState.Day(heading: String(TimeText.local(entry.dose.scheduled, in: zone).prefix(14)), doses: []))
                }
                days[days.count - 1].doses.append(row)
            }
            let counts = DoseCounts(entries, now: now)
            current.withLock { state in
                state.doses = rows
                state.days = days
                state.counts = counts
                state.summary = counts.summary
                state.emptyText = entries.isEmpty ? "No doses in \(range.title)." : nil
                state.adherence = adherence
                state.adherenceByDay = byDay
                state.adherenceByMedication = byMedication
                state.overdue = overdue
                state.error = nil
            }
        } catch {
            current.withLock { $0.error = error }
        }
        return state
    }

    static let weekdays = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]

    static func day(_ day: (day: Int, adherence: Adherence)) -> DoseHistoryState.DayAdherence {
        let civil = ZoneMath.civilFromDays(day.day)
        let weekday = weekdays[ZoneMath.isoWeekday(dayNumber: day.day) - 1]
        let label = "\(weekday) " + String(format: "%02d-%02d", civil.month, civil.day)
        let a = day.adherence
        let text = a.counted > 0 ? "\(label): \(a.percentText) (\(a.taken) of \(a.counted) taken)" : "\(label): nothing due"
        return DoseHistoryState.DayAdherence(day: day.day, label: label, weekday: weekday, adherence: a, text: text)
    }

    static func row(_ entry: DoseEntry, now: Date) -> DoseHistoryState.Row {
        let dose = entry.dose
        return DoseHistoryState.Row(
            id: dose.id,
            medicationID: dose.medicationID,
            label: entry.label,
            scheduled: dose.scheduled,
            time: TimeText.clock(dose.scheduled, in: dose.timeZone),
            status: dose.status,
            isOverdue: dose.isOverdue(at: now),
            statusText: dose.statusText(at: now),
            notes: dose.notes
        )
    }
}

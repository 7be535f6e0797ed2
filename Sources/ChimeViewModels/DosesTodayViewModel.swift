import ChimeCore
import ChimeDoses
import Foundation
import Synchronization

/// What the Doses page's "Today" list shows: today's doses (local days in the system zone),
/// each with what can be done with it, or its answer once answered.
public struct DosesTodayState: Sendable, Hashable {
    /// One dose of today.
    public struct Row: Sendable, Hashable, Identifiable {
        public var id: Int64
        public var medicationID: Int64
        /// `Aspirin (100 mg)`.
        public var label: String
        /// `08:00` in the dose's zone.
        public var time: String
        public var status: DoseStatus
        /// `pending`, `overdue`, `taken at 08:05`, `missed (no answer)`, as `chime doses` says
        /// it; a snoozed dose adds `, snoozed until 08:10`.
        public var statusText: String
        /// Pending and within its grace window (a dose cannot be taken ahead of that).
        public var canTake: Bool
        /// Pending (a dose may be skipped ahead).
        public var canSkip: Bool
        /// Pending, due, with an alert to snooze.
        public var canSnooze: Bool

        /// Answered (taken, skipped or missed): its answer is shown instead of its buttons.
        public var isAnswered: Bool { status != .pending }
        /// `Aspirin (100 mg), due 08:00`: what the row's buttons add to their verb for a
        /// screen reader ("Take Aspirin (100 mg), due 08:00").
        public var spokenName: String { "\(label), due \(time)" }
    }

    public var doses: [Row]
    /// `No doses today.` when there are none.
    public var emptyText: String?
    /// The last answer, as the dose's alert confirms it: `✓ Aspirin 100 mg taken at 08:05`.
    public var message: String?
    /// The last answer's alert (`med-3-20261122-0800`) and what should replace it on the
    /// desktop, as its button would have (`chime dose take` does the same); nil with no alert.
    public var answeredAlert: AnsweredAlertText?
    public var error: ChimeError?
}

/// A dose alert answered in the app, and the confirmation that replaces it on the desktop.
public struct AnsweredAlertText: Sendable, Hashable {
    public var occurrence: String
    public var confirmation: Withdrawal.Confirmation
}

/// Today's doses with Take, Skip and Snooze (the seed's `DoseHistoryViewModel` answers, for
/// the day) over ``DoseBook``.
public final class DosesTodayViewModel: Sendable {
    public static let noDosesToday = "No doses today."

    public let book: DoseBook
    private let current: Mutex<DosesTodayState>

    public init(book: DoseBook) {
        self.book = book
        current = Mutex(DosesTodayState(doses: [], emptyText: nil, message: nil, answeredAlert: nil, error: nil))
        refresh()
    }

    public var state: DosesTodayState { current.withLock { $0 } }

    @discardableResult
    public func take(_ id: Int64) -> DosesTodayState { answer(.take, .id(id)) }

    @discardableResult
    public func skip(_ id: Int64) -> DosesTodayState { answer(.skip, .id(id)) }

    /// A dose of an as-needed or after-last medication taken now, as `chime dose take NAME`
    /// (its due dose, else a new one logged); refused past its daily maximum, with the library's words.
    @discardableResult
    public func takeNow(_ medication: String) -> DosesTodayState { answer(.take, .medication(medication)) }

    /// Its alert comes again in 10 minutes (``DoseRules/snoozeMinutes``).
    @discardableResult
    public func snooze(_ id: Int64) -> DosesTodayState {
        do {
            let entry = try book.snooze(.id(id))
            let confirmation = DoseFamily.confirmation(DoseFamily.snooze, entry: entry, refill: nil, at: book.clock.now())
            refresh()
            current.withLock {
                $0.message = confirmation.title
                $0.answeredAlert = entry.dose.occurrence.map { AnsweredAlertText(occurrence: $0, confirmation: confirmation) }
            }
        } catch {
            refresh()
            current.withLock { $0.error = error }
        }
        return state
    }

    private func answer(_ answer: DoseAnswer, _ reference: DoseReference) -> DosesTodayState {
        do {
            let answered = try book.answer(answer, reference)
            let confirmation = DoseFamily.confirmation(
                answer.rawValue,
                entry: answered.entry,
                refill: answered.refill,
                at: book.clock.now()
            )
            refresh()
            current.withLock {
                $0.message = [confirmation.title, answered.warning, answered.refill].compactMap { $0 }.joined(separator: ". ")
                $0.answeredAlert = answered.entry.dose.occurrence.map { AnsweredAlertText(occurrence: $0, confirmation: confirmation) }
            }
        } catch {
            refresh()
            current.withLock { $0.error = error }
        }
        return state
    }

    /// Reads today's doses again at the clock's now (the family settles first). Clears the
    /// last message, answered alert and error.
    @discardableResult
    public func refresh() -> DosesTodayState {
        let now = book.clock.now()
        let zone = book.systemZone()
        let today = DoseRange.last(days: 1, now: now, zone: zone)
        do {
            let entries = try book.doses(DoseFilter(from: today.from, to: today.to))
            let graces = Dictionary(
                try book.medications(includeInactive: true).map { ($0.medication.id, $0.medication.grace) },
                uniquingKeysWith: { first, _ in first }
            )
            let rows = entries.map { Self.row($0, grace: graces[$0.dose.medicationID] ?? DoseRules.defaultGrace, now: now) }
            current.withLock { state in
                state.doses = rows
                state.emptyText = rows.isEmpty ? Self.noDosesToday : nil
                state.message = nil
                state.answeredAlert = nil
                state.error = nil
            }
        } catch {
            current.withLock { $0.error = error }
        }
        return state
    }

    static func row(_ entry: DoseEntry, grace: Int, now: Date) -> DosesTodayState.Row {
        let dose = entry.dose
        let pending = dose.status == .pending
        var statusText = dose.statusText(at: now)
        if pending, let until = dose.snoozeUntil, until > now {
            statusText += ", snoozed until \(TimeText.clock(until, in: dose.timeZone))"
        }
        return DosesTodayState.Row(
            id: dose.id,
            medicationID: dose.medicationID,
            label: entry.label,
            time: TimeText.clock(dose.scheduled, in: dose.timeZone),
            status: dose.status,
            statusText: statusText,
            canTake: pending && dose.scheduled.timeIntervalSince(now) <= TimeInterval(grace),
            canSkip: pending,
            canSnooze: pending && dose.occurrence != nil && dose.scheduled <= now
        )
    }
}

import ChimeCore
import ChimeDoses
import ChimeFocus
import ChimeStore
import Foundation
import Synchronization

/// What the Today page shows: the next reminders, today's doses with their answers (read-only:
/// the Doses page answers them), and the focus session when one is open. Each row names the
/// page that opens it.
public struct TodayState: Sendable, Hashable {
    public struct Row: Sendable, Hashable, Identifiable {
        /// The reminder's id, the dose's number, or the session's reminder id.
        public var id: String
        public var title: String
        public var subtitle: String
        /// The page that opens it.
        public var page: AppPage
    }

    /// A dose of today, with its answer.
    public struct DoseRow: Sendable, Hashable, Identifiable {
        public var id: Int64
        /// "08:00".
        public var time: String
        /// "Aspirin (100 mg)".
        public var label: String
        /// `chime doses`'s status: "taken at 08:05", "skipped", "missed (no answer)", "pending", "overdue".
        public var status: String
        public var answer: DoseStatus
        public var page: AppPage { .doses }
    }

    /// The next plain reminders, the earliest first (at most ``TodayViewModel/reminderLimit``).
    public var reminders: [Row]
    /// Whether more reminders are pending than shown.
    public var moreReminders: Bool
    public var doses: [DoseRow]
    /// The focus session, when one is open.
    public var focus: Row?
    public var reminderEmptyText: String?
    public var doseEmptyText: String?
    public var error: ChimeError?
}

/// The Today page's view model over the store, the doses family and the focus timer, on the
/// injected wall clock (the doses' day in `zone`).
public final class TodayViewModel: Sendable {
    public static let reminderLimit = 5
    public static let noReminders = "No reminders pending."
    public static let noDoses = "No doses today."

    public let store: ReminderStore
    public let book: DoseBook
    public let timer: FocusTimer
    public let clock: any WallClock
    public let zone: TimeZone
    private let current: Mutex<TodayState>

    public init(
        store: ReminderStore,
        book: DoseBook,
        timer: FocusTimer,
        clock: any WallClock = SystemWallClock(),
        zone: TimeZone = .current
    ) {
        self.store = store
        self.book = book
        self.timer = timer
        self.clock = clock
        self.zone = zone
        current = Mutex(TodayState(reminders: [], moreReminders: false, doses: [], focus: nil, error: nil))
        refresh()
    }

    public var state: TodayState { current.withLock { $0 } }

    /// Reads everything again.
    @discardableResult
    public func refresh() -> TodayState {
        let now = clock.now()
        var state = TodayState(reminders: [], moreReminders: false, doses: [], focus: nil, error: nil)
        do throws(ChimeError) {
            try store.eachPending { reminder in
                guard reminder.kind == PlainReminders.plainKind else { return }
                guard state.reminders.count < Self.reminderLimit else {
                    state.moreReminders = true
                    return
                }
                let row = ReminderListViewModel.row(reminder, now: now, zone: zone)
                state.reminders.append(.init(id: row.id, title: row.title, subtitle: row.subtitle, page: .reminders))
            }
            let day = CivilDay.of(now, in: zone)
            let filter = DoseFilter(from: DoseRange.start(of: day, zone), to: DoseRange.start(of: day + 1, zone))
            state.doses = try book.doses(filter).map { entry in
                let dose = entry.dose
                return .init(
                    id: dose.id,
                    time: TimeText.clock(dose.scheduled, in: dose.timeZone),
                    label: UserText.oneLine(entry.label),
                    status: dose.statusText(at: now),
                    answer: dose.status
                )
            }
            state.focus = Self.focusRow(TimerViewModel(timer: timer, zone: zone).refresh(), now: now, zone: zone)
        } catch {
            state.error = error
        }
        if state.reminders.isEmpty { state.reminderEmptyText = Self.noReminders }
        if state.doses.isEmpty { state.doseEmptyText = Self.noDoses }
        current.withLock { $0 = state }
        return state
    }

    /// The focus session's row: "Ends at 09:25" while it runs (true until it is paused, so the
    /// page need not tick), "Paused, 12:34 left"; nil when none is open.
    static func focusRow(_ timer: TimerState, now: Date, zone: TimeZone) -> TodayState.Row? {
        guard let id = timer.sessionID else { return nil }
        switch timer.phase {
        case .active:
            let end = now.addingTimeInterval(TimeInterval(timer.remainingSeconds))
            return .init(id: "focus-\(id)", title: "Focus session", subtitle: "Ends at \(TimeText.clock(end, in: zone))", page: .focus)
        case .paused:
            return .init(id: "focus-\(id)", title: "Focus session", subtitle: "Paused, \(timer.countdown) left", page: .focus)
        default:
            return nil
        }
    }
}

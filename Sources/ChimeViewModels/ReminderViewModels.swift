import ChimeCore
import ChimeDoses
import ChimeStore
import Foundation
import Synchronization

/// What the Reminders page shows: the pending plain reminders as `chime list` words them, the
/// alerts showing or snoozed (Snooze answers one as `chime snooze` does), and the latest alerts
/// of the ledger as `chime history` words them, the most recent first.
public struct ReminderListState: Sendable, Hashable {
    /// A pending reminder.
    public struct Row: Sendable, Hashable, Identifiable {
        public var id: String
        /// `chime list`'s title: "[exec] Tea" when it runs a command.
        public var title: String
        /// Its own title (what Edit starts from).
        public var plainTitle: String
        /// `chime list`'s NEXT: "Tue 2026-05-12 14:30".
        public var when: String
        /// "in 25m".
        public var relative: String
        /// `chime list`'s TRIGGER: "once", "every weekday 08:00".
        public var repeats: String
        public var isRecurring: Bool
        public var runsCommand: Bool
        public var nextDue: Date?
        /// A one-shot's time can be changed (`chime edit --at`); a rule's cannot.
        public var canEditTime: Bool { !isRecurring }
        /// Its subtitle: "Tue 2026-05-12 14:30 (in 25m)", with the rule when it repeats.
        public var subtitle: String {
            var text = when + (relative.isEmpty ? "" : " (\(relative))")
            if isRecurring { text += " · \(repeats)" }
            return text
        }
    }

    /// An alert shown and not answered yet (Snooze applies), or a snoozed one coming back.
    public struct AlertRow: Sendable, Hashable, Identifiable {
        public var id: String
        public var title: String
        /// "Shown at 14:30" or "Snoozed until 14:40".
        public var status: String
        /// Whether Snooze applies (shown, not answered).
        public var canSnooze: Bool
    }

    /// An alert of the ledger, as `chime history` words it.
    public struct HistoryRow: Sendable, Hashable, Identifiable {
        /// Its place in the list (the ledger has no single key per entry).
        public var id: Int
        public var reminderID: String
        /// `chime history`'s TITLE ("[dose] Aspirin 100 mg" for a family's).
        public var title: String
        /// "Tue 2026-05-12 14:30:00 · on time · desktop · done".
        public var line: String
        /// `chime history`'s RESULT.
        public var result: String
    }

    public var reminders: [Row]
    public var alerts: [AlertRow]
    public var history: [HistoryRow]
    /// Shown instead of an empty list of reminders.
    public var emptyText: String?
    /// What the last action did ("Cancelled 'Tea'."), for a toast.
    public var message: String?
    public var error: ChimeError?
}

/// The Reminders page's list: pending reminders, the alerts showing, the history; Cancel
/// (through an injected canceller, the use case `chime cancel` runs: ``RunnerControl``'s, which
/// also asks the runner whether it was too late) and Snooze (`chime snooze`: the alert shown
/// last comes back after ``snoozeLength``). Times on the injected clock, in `zone`.
public final class ReminderListViewModel: Sendable {
    /// Cancels reminder `id` at `now`; throws what `chime cancel` would say.
    /// (Untyped: anything else it throws is shown as its description.)
    public typealias Canceller = @Sendable (_ id: String, _ now: Date) throws -> Void

    /// How many alerts of the ledger the page shows.
    public static let historyLimit = 30
    public static let emptyText = "No pending reminders. Add one with Add, or 'chime in 25m \"Tea is ready\"'."

    public let store: ReminderStore
    public let clock: any WallClock
    public let zone: TimeZone
    public let snoozeLength: Duration
    private let canceller: Canceller
    private let current: Mutex<ReminderListState>

    public init(
        store: ReminderStore,
        clock: any WallClock = SystemWallClock(),
        zone: TimeZone = .current,
        snoozeLength: Duration = PlainReminders.defaultSnoozeLength,
        canceller: Canceller? = nil
    ) {
        self.store = store
        self.clock = clock
        self.zone = zone
        self.snoozeLength = snoozeLength
        self.canceller = canceller ?? { id, now in _ = try store.cancel(ids: [id], now: now) }
        current = Mutex(ReminderListState(reminders: [], alerts: [], history: [], emptyText: nil, message: nil, error: nil))
        refresh()
    }

    public var state: ReminderListState { current.withLock { $0 } }

    /// Reads everything again.
    @discardableResult
    public func refresh() -> ReminderListState {
        let now = clock.now()
        var state = ReminderListState(reminders: [], alerts: [], history: [], emptyText: nil, message: nil, error: nil)
        do throws(ChimeError) {
            try store.eachPending { reminder in
                guard reminder.kind == PlainReminders.plainKind else { return }
                state.reminders.append(Self.row(reminder, now: now, zone: zone))
            }
            var seen: Set<String> = []
            for alert in try store.showing(now: now) where alert.kind == PlainReminders.plainKind {
                seen.insert(alert.reminderID)
                state.alerts.append(
                    .init(
                        id: alert.reminderID,
                        title: alert.title,
                        status: "Shown at \(TimeText.clock(alert.postedAt, in: zone))",
                        canSnooze: true
                    )
                )
            }
            let waiting: [WaitingAlert]
            do { waiting = try store.waitingAlerts() } catch { throw ChimeError(.store, String(describing: error)) }
            for alert in waiting where alert.isSnoozed && alert.occurrence.kind == PlainReminders.plainKind {
                let id = alert.occurrence.reminderID
                guard seen.insert(id).inserted else { continue }
                state.alerts.append(
                    .init(
                        id: id,
                        title: alert.occurrence.title,
                        status: "Snoozed until \(TimeText.clock(alert.due, in: zone))",
                        canSnooze: false
                    )
                )
            }
            let entries = try store.history(limit: Self.historyLimit)
            state.history = entries.reversed().enumerated().map { index, entry in
                let cells = ReportText.historyCells(entry, zone: zone)
                return .init(
                    id: index,
                    reminderID: entry.reminderID,
                    title: cells[5],
                    line: cells[0..<4].joined(separator: " · "),
                    result: cells[3]
                )
            }
        } catch {
            state.error = error
        }
        if state.reminders.isEmpty && state.error == nil { state.emptyText = Self.emptyText }
        current.withLock { $0 = state }
        return state
    }

    /// A pending reminder's row.
    static func row(_ reminder: Reminder, now: Date, zone: TimeZone) -> ReminderListState.Row {
        .init(
            id: reminder.id,
            title: ReportText.listTitle(reminder, title: DoseBook.listTitle(of: reminder)),
            plainTitle: reminder.title,
            when: ReportText.next(of: reminder, zone: zone),
            relative: reminder.nextDue.map { TimeText.relative($0, from: now) } ?? "",
            repeats: reminder.trigger.summary,
            isRecurring: reminder.trigger.isRecurring,
            runsCommand: reminder.command != nil,
            nextDue: reminder.nextDue
        )
    }

    /// Cancels reminder `id` (as `chime cancel ID`).
    @discardableResult
    public func cancel(_ id: String) -> ReminderListState {
        let title = state.reminders.first { $0.id == id }?.plainTitle ?? id
        return act(
            message: { "Cancelled '\(UserText.oneLine(title))'." },
            body: { () throws(ChimeError) in
                do {
                    try canceller(id, clock.now())
                } catch let error as ChimeError {
                    throw error
                } catch {
                    throw ChimeError(.failure, String(describing: error))
                }
            }
        )
    }

    /// Snoozes the alert shown last for `id` (as `chime snooze ID`): it comes back after
    /// ``snoozeLength``. For the plain reminders' alerts that ``ReminderListState/alerts`` lists
    /// (a family's alert is answered on its own page).
    @discardableResult
    public func snooze(_ id: String) -> ReminderListState {
        let now = clock.now()
        let until = now.addingTimeInterval(TimeInterval(snoozeLength.components.seconds))
        return act(
            message: { "Snoozed until \(TimeText.clock(until, in: zone))." },
            body: { () throws(ChimeError) in
                _ = try store.answerShown(id: id, action: PlainReminders.snooze, snoozeUntil: until, now: now)
            }
        )
    }

    private func act(message: () -> String, body: () throws(ChimeError) -> Void) -> ReminderListState {
        do throws(ChimeError) {
            try body()
            var state = refresh()
            state.message = message()
            current.withLock { $0.message = state.message }
            return state
        } catch {
            var state = refresh()
            state.error = error
            current.withLock { $0.error = error }
            return state
        }
    }
}

/// How the form reads its time: `chime in`'s duration or `chime at`'s time.
public enum ReminderWhen: String, Sendable, Hashable, CaseIterable {
    case inDuration = "in"
    case atTime = "at"

    /// The choice's label in the form.
    public var label: String {
        switch self {
        case .inDuration: "In (a duration)"
        case .atTime: "At (a time or date)"
        }
    }

    /// The hint under the time entry.
    public var placeholder: String {
        switch self {
        case .inDuration: "25m, 1h30m, 2d"
        case .atTime: "14:30, 9am, tomorrow 09:00, 2030-12-24 18:00"
        }
    }
}

/// What the Add and Edit form holds.
public struct ReminderDraft: Sendable, Hashable {
    public var title: String
    public var body: String
    public var mode: ReminderWhen
    /// The duration (`in`) or time (`at`) as typed.
    public var when: String

    public init(title: String = "", body: String = "", mode: ReminderWhen = .inDuration, when: String = "") {
        (self.title, self.body, self.mode, self.when) = (title, body, mode, when)
    }
}

/// The Add and Edit form (`chime in`, `chime at`, `chime edit`): reads the time with ChimeCore's
/// parsers, so a bad value gets the command line's words, then schedules or edits through the
/// store's use cases. Nothing is written when anything is refused.
public final class ReminderFormViewModel: Sendable {
    public let store: ReminderStore
    public let clock: any WallClock
    public let zone: TimeZone

    public init(store: ReminderStore, clock: any WallClock = SystemWallClock(), zone: TimeZone = .current) {
        self.store = store
        self.clock = clock
        self.zone = zone
    }

    /// The instant `text` names in `mode` at `now`, as `chime in` and `chime at` read it.
    /// - Throws: `.usage` naming the bad value and what is accepted.
    public func instant(_ mode: ReminderWhen, _ text: String, now: Date) throws(ChimeError) -> Date {
        let words = text.split(whereSeparator: \.isWhitespace).map(String.init)
        switch mode {
        case .inDuration:
            guard !words.isEmpty else { throw ChimeError(.usage, "missing duration: expected one such as 25m, 1h30m or 2d") }
            // "5 minutes" gets `chime in`'s hint ("did you mean '5m'?"); other extra words are refused whole.
            _ = try TimeParsing.leadingDuration(words)
            return now.addingTimeInterval(TimeInterval(try TimeParsing.duration(words.count == 1 ? words[0] : text)))
        case .atTime:
            guard !words.isEmpty else { throw ChimeError(.usage, "missing time: expected one such as 14:30, 9am or tomorrow 09:00") }
            return try TimeParsing.spoken(words.joined(separator: " "), now: now, zone: zone).instant
        }
    }

    /// Schedules `draft` as a new one-shot reminder (`chime in` / `chime at`).
    public func add(_ draft: ReminderDraft) -> Result<Reminder, ChimeError> {
        let now = clock.now()
        do throws(ChimeError) {
            let due = try instant(draft.mode, draft.when, now: now)
            let new = try NewReminder(title: draft.title, body: draft.body, trigger: .once(due)).validated()
            return .success(try store.schedule(new, now: now, systemZone: zone).reminder)
        } catch {
            return .failure(error)
        }
    }

    /// Changes pending reminder `id` (`chime edit ID --title … --at …`): its title when it
    /// differs from `original`, its time when `draft.when` is not empty.
    public func edit(id: String, original: String, _ draft: ReminderDraft) -> Result<Reminder, ChimeError> {
        let now = clock.now()
        do throws(ChimeError) {
            let trimmed = draft.when.trimmingCharacters(in: .whitespaces)
            let at = trimmed.isEmpty ? nil : try instant(draft.mode, trimmed, now: now)
            let title = draft.title == original ? nil : draft.title
            guard title != nil || at != nil else {
                throw ChimeError(.usage, "nothing to change: give a new title or a new time")
            }
            return .success(try store.edit(id: id, title: title, body: nil, at: at, now: now))
        } catch {
            return .failure(error)
        }
    }
}

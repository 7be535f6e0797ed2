import ChimeApp
import ChimeCore
import ChimeFocus
import ChimePostgres
import ChimeRunner
import ChimeStore
import Foundation

/// What the D-Bus service (``RemindersService``) needs of a store: ChimeCore's
/// ``ReminderScheduling`` (schedule, cancel, pending, a reminder by id), and around it what the
/// command line does with those on each store (a cancel that waits for the runner's word, an
/// answer that reaches the runner showing the alert), the apps' ids, the quiet state, the
/// soonest reminders and the focus session. One per store: ``SQLiteServedStore`` and
/// ``PostgresServedStore``.
///
/// Synchronous, where ``ReminderScheduling`` is async: the service calls it from its worker
/// thread, which stays off Swift's cooperative pool (see ``Worker``); both stores' own APIs are
/// synchronous, and ``ReminderScheduling``'s methods forward to them.
public protocol ServedStore: ReminderScheduling {
    /// The store's clock: the host's on SQLite, the database's on PostgreSQL (the runners').
    func clock() throws(ChimeError) -> Date
    /// Schedules `new` (replacing a pending reminder with its id), its first occurrence after `now`.
    func schedule(replacing new: NewReminder, now: Date, systemZone: TimeZone) throws(ChimeError) -> ScheduleResult
    /// Cancels reminder `id` as `chime cancel` does, the runner asked about an occurrence it was
    /// posting as the cancel committed.
    func cancelAsked(id: String) throws(ChimeError) -> ServedCancel
    /// Each pending reminder, soonest first.
    func eachPendingReminder(_ body: (Reminder) -> Void) throws(ChimeError)
    /// The pending reminder `id`. - Throws: `.notFound`, saying what became of it.
    func pendingReminder(id: String) throws(ChimeError) -> Reminder
    /// The soonest pending reminder, and the soonest dose (nil where there are no doses).
    func soonest() throws(ChimeError) -> (next: Reminder?, dose: Reminder?)
    /// The app id of the latest reminder with `id`, pending or not; nil for none.
    func appID(ofReminderWithID id: String) throws(ChimeError) -> String?
    /// The app ids of the pending reminders scheduled by apps, sorted.
    func pendingAppIDList() throws(ChimeError) -> [String]
    /// Answers the alert shown last for reminder `id` as `chime done` (`snoozeFor` nil) or
    /// `chime snooze` does, the alert on the desktop replaced by the confirmation.
    func answer(id: String, snoozeFor: TimeInterval?, zone: TimeZone) throws(ChimeError) -> AnsweredAlert
    /// The quiet settings now.
    func currentQuietState() throws(ChimeError) -> QuietState
    /// The open focus session, read without settling it; nil on a store without focus sessions.
    func openFocusSession(clock: any MachineClock) throws(ChimeError) -> FocusSession?
    /// The break running at `now` (after a completed focus session), read without settling; nil
    /// on a store without focus sessions.
    func runningFocusBreak(at now: Date) throws(ChimeError) -> FocusBreak?
}

extension ServedStore {
    public func runningFocusBreak(at now: Date) throws(ChimeError) -> FocusBreak? { nil }
}

/// What ``ServedStore/cancelAsked(id:)`` did.
public struct ServedCancel: Sendable, Hashable {
    /// The ids cancelled.
    public var cancelled: [String]
    /// `cancelled`, `too-late` (its alert had been shown: the command line's exit 8) or
    /// `unconfirmed` (a runner was posting it and did not say in time whether it showed it).
    public var outcome: String

    public init(cancelled: [String], outcome: String) {
        self.cancelled = cancelled
        self.outcome = outcome
    }
}

/// The embedded SQLite store, with its families (focus sessions, doses) and its one runner,
/// reached over its wake-up socket.
public struct SQLiteServedStore: ServedStore {
    public let store: ReminderStore
    private let reminders: SQLiteReminders
    private let now: @Sendable () -> Date
    private let environment: [String: String]

    public init(
        store: ReminderStore,
        clock: @escaping @Sendable () -> Date = { Date() },
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) {
        self.store = store
        self.reminders = SQLiteReminders(store: store, clock: clock)
        self.now = clock
        self.environment = environment
    }

    // ReminderScheduling
    public func now() async throws -> Date { try await reminders.now() }
    public func schedule(_ new: NewReminder, replace: Bool, systemZone: TimeZone) async throws -> ScheduleResult {
        try await reminders.schedule(new, replace: replace, systemZone: systemZone)
    }
    public func cancel(ids: [String]) async throws -> [Reminder] { try await reminders.cancel(ids: ids) }
    public func pending(limit: Int?) async throws -> [Reminder] { try await reminders.pending(limit: limit) }
    public func reminder(id: String) async throws -> Reminder { try await reminders.reminder(id: id) }

    public func clock() throws(ChimeError) -> Date { now() }

    public func schedule(replacing new: NewReminder, now: Date, systemZone: TimeZone) throws(ChimeError) -> ScheduleResult {
        try store.schedule(new, replace: true, now: now, systemZone: systemZone)
    }

    public func cancelAsked(id: String) throws(ChimeError) -> ServedCancel {
        try ChimeApp.refuseCancel([id], store: store)
        let outcome = try RunnerControl.cancel(ids: [id], store: store, now: now(), environment: environment)
        RunnerControl.withdrawThroughRunner(ids: outcome.cancelled.map(\.id), store: store, environment: environment)
        let word = !outcome.shown.isEmpty ? "too-late" : !outcome.unconfirmed.isEmpty ? "unconfirmed" : "cancelled"
        return ServedCancel(cancelled: outcome.cancelled.map(\.id), outcome: word)
    }

    public func eachPendingReminder(_ body: (Reminder) -> Void) throws(ChimeError) {
        try store.eachPending { body($0) }
    }

    public func pendingReminder(id: String) throws(ChimeError) -> Reminder { try store.reminder(id: id) }

    public func soonest() throws(ChimeError) -> (next: Reminder?, dose: Reminder?) {
        var next: Reminder?
        var dose: Reminder?
        try store.eachPending { reminder in
            guard let due = reminder.nextDue else { return }
            if next == nil || due < next!.nextDue! { next = reminder }
            if reminder.kind == "dose", dose == nil || due < dose!.nextDue! { dose = reminder }
        }
        return (next, dose)
    }

    public func appID(ofReminderWithID id: String) throws(ChimeError) -> String? { try store.appID(ofReminder: id) }

    public func pendingAppIDList() throws(ChimeError) -> [String] { try store.pendingAppIDs() }

    public func answer(id: String, snoozeFor: TimeInterval?, zone: TimeZone) throws(ChimeError) -> AnsweredAlert {
        let now = now()
        let until = snoozeFor.map { now.addingTimeInterval($0) }
        let answer = try ChimeApp.answerReminder(id: id, snoozeUntil: until, store: store, now: now)
        let confirmation =
            if let until {
                PlainReminders.snoozedConfirmation(until: until, title: answer.alert.title, zone: zone)
            } else {
                PlainReminders.doneConfirmation(title: answer.alert.title)
            }
        RunnerControl.confirmThroughRunner(id: id, confirmation: confirmation, store: store, environment: environment)
        return answer
    }

    public func currentQuietState() throws(ChimeError) -> QuietState {
        do {
            return try store.quietState()
        } catch let error as ChimeError {
            throw error
        } catch {
            throw ChimeError(.store, String(describing: error))
        }
    }

    public func openFocusSession(clock: any MachineClock) throws(ChimeError) -> FocusSession? {
        // Read, not settled: settling here could complete the session before the runner's focus
        // part does, and its "Tree planted!" would then come as a new alert, not in place.
        try FocusTimer(store: store, clock: clock).openWithoutSettling()
    }

    public func runningFocusBreak(at now: Date) throws(ChimeError) -> FocusBreak? {
        try FocusTimer(store: store).runningBreakWithoutSettling(at: now)
    }
}

/// The PostgreSQL store, shared by several runners: its clock is the database's; a cancel waits
/// for the runner that was posting the occurrence (as `chime cancel` does there); an answer
/// reaches the runner that showed the alert over `NOTIFY chime_alerts`. The families keep to
/// SQLite: no doses, no focus session.
public struct PostgresServedStore: ServedStore {
    public let store: PostgresStore

    public init(store: PostgresStore) { self.store = store }

    // ReminderScheduling
    public func now() async throws -> Date { try store.now() }
    public func schedule(_ new: NewReminder, replace: Bool, systemZone: TimeZone) async throws -> ScheduleResult {
        try store.schedule(new, replace: replace, systemZone: systemZone)
    }
    public func cancel(ids: [String]) async throws -> [Reminder] { try store.cancel(ids: ids) }
    public func pending(limit: Int?) async throws -> [Reminder] { try store.pending(limit: limit) }
    public func reminder(id: String) async throws -> Reminder { try store.reminder(id: id) }

    /// `body` with the database's errors in one line, as the command line gives them.
    private func checked<Result>(_ body: () throws -> Result) throws(ChimeError) -> Result {
        do {
            return try body()
        } catch let error as ChimeError {
            throw error
        } catch {
            throw PostgresStore.storeError(error, url: store.url)
        }
    }

    public func clock() throws(ChimeError) -> Date { try checked { try store.databaseNow() } }

    /// On the database's clock (`now` is its too).
    public func schedule(replacing new: NewReminder, now: Date, systemZone: TimeZone) throws(ChimeError) -> ScheduleResult {
        try checked { try store.schedule(new, replace: true, systemZone: systemZone, channel: PostgresStore.defaultChannel) }
    }

    public func cancelAsked(id: String) throws(ChimeError) -> ServedCancel {
        try checked {
            let outcome = try store.cancelReporting(ids: [id])
            let settled = try store.settleBlocking(outcome.inFlight, timeout: .seconds(RunnerControl.answerTimeout))
            let shown = !outcome.closed.isEmpty || settled.contains { if case .posted = $0 { true } else { false } }
            let word = shown ? "too-late" : settled.contains(.unknown) ? "unconfirmed" : "cancelled"
            return ServedCancel(cancelled: outcome.cancelled.map(\.id), outcome: word)
        }
    }

    public func eachPendingReminder(_ body: (Reminder) -> Void) throws(ChimeError) {
        try checked { try store.eachPending { body($0) } }
    }

    public func pendingReminder(id: String) throws(ChimeError) -> Reminder { try checked { try store.reminder(id: id) } }

    /// Pending reminders are read soonest first: the first. (No doses on PostgreSQL.)
    public func soonest() throws(ChimeError) -> (next: Reminder?, dose: Reminder?) {
        (try checked { try store.pending(limit: 1) }.first, nil)
    }

    public func appID(ofReminderWithID id: String) throws(ChimeError) -> String? {
        try checked { try store.appID(ofReminder: id) }
    }

    public func pendingAppIDList() throws(ChimeError) -> [String] { try checked { try store.pendingAppIDs() } }

    /// As `chime done` and `chime snooze` on PostgreSQL: a family's alert is refused.
    public func answer(id: String, snoozeFor: TimeInterval?, zone: TimeZone) throws(ChimeError) -> AnsweredAlert {
        try ReminderIdentifier.validate(id)
        return try checked {
            if let shown = try store.lastShown(id: id), shown.kind != PlainReminders.plainKind {
                throw ChimeError(.conflict, "'\(id)' is a \(shown.kind) alert, not a reminder's")
            }
            let action = snoozeFor == nil ? PlainReminders.done : PlainReminders.snooze
            return try store.answerShown(id: id, action: action, snoozeFor: snoozeFor) { answered in
                if let until = answered.snoozedUntil {
                    PlainReminders.snoozedConfirmation(until: until, title: answered.alert.title, zone: zone)
                } else {
                    PlainReminders.doneConfirmation(title: answered.alert.title)
                }
            }
        }
    }

    public func currentQuietState() throws(ChimeError) -> QuietState { try checked { try store.quietState() } }

    /// None: focus sessions keep to the SQLite store.
    public func openFocusSession(clock: any MachineClock) throws(ChimeError) -> FocusSession? { nil }
}

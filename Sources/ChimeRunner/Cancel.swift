import ChimeCore
import ChimeStore
import Foundation

/// What `chime cancel` did, once the runner has had its say.
public struct CancelOutcome: Sendable {
    /// The reminders cancelled (all of those named: a cancel is all or nothing).
    public var cancelled: [Reminder]
    /// Whether a runner serves the store (and was told).
    public var runner: Bool
    /// Occurrences that were in flight at the cancel and that the runner had already shown:
    /// the cancel came too late for them (the ledger records them as posted).
    public var shown: [Shown]
    /// Occurrences in flight that the runner did not say anything about in time.
    public var unconfirmed: [ReminderStore.Cancellation.InFlight]

    public struct Shown: Sendable, Hashable {
        public var reminderID: String
        public var due: Date
        public var posted: Date
    }
}

extension RunnerControl {
    /// Closes the alerts shown for reminders `ids` (cancelled, or answered from the command line): the
    /// store's runner withdraws them through its notifier; with no runner up,
    /// `closeWithoutRunner` (the desktop helper) closes them by the server's ids.
    public static func withdrawAlerts(
        ids: [String],
        store: ReminderStore,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        closeWithoutRunner: ([PostedNote]) async -> Void
    ) async {
        let shown = ids.flatMap { (try? store.shownAlerts(id: $0)) ?? [] }
        guard !shown.isEmpty else { return }
        if withdrawThroughRunner(shown, store: store, environment: environment) { return }
        await closeWithoutRunner(shown)
    }

    /// Asks the store's runner to close the alerts shown for reminders `ids`, without waiting
    /// (from the runner's own process too: its D-Bus service); false when no runner took it.
    @discardableResult
    public static func withdrawThroughRunner(
        ids: [String],
        store: ReminderStore,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> Bool {
        withdrawThroughRunner(ids.flatMap { (try? store.shownAlerts(id: $0)) ?? [] }, store: store, environment: environment)
    }

    private static func withdrawThroughRunner(_ shown: [PostedNote], store: ReminderStore, environment: [String: String]) -> Bool {
        guard !shown.isEmpty, let socket = socket(storePath: store.path, environment: environment) else { return false }
        return WakeSocket.withdraw(path: socket, ids: Array(Set(shown.map(\.id))).sorted())
    }

    /// Replaces the alert shown for reminder `id` (answered from the command line) by
    /// `confirmation`, as its buttons would have: the store's runner does it through its
    /// notifier; with no runner up, `confirmWithoutRunner` (the desktop helper) replaces it by
    /// the server's id.
    public static func confirmAnswer(
        id: String,
        confirmation: Withdrawal.Confirmation,
        store: ReminderStore,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        confirmWithoutRunner: ([PostedNote], Withdrawal.Confirmation) async -> Void
    ) async {
        let shown = (try? store.shownAlerts(id: id)) ?? []
        guard !shown.isEmpty else { return }
        if confirmThroughRunner(id: id, confirmation: confirmation, store: store, environment: environment) { return }
        await confirmWithoutRunner(shown, confirmation)
    }

    /// Asks the store's runner to replace the alert shown for `id` by `confirmation`, without
    /// waiting (from the runner's own process too: its D-Bus service); false when no runner took it.
    @discardableResult
    public static func confirmThroughRunner(
        id: String,
        confirmation: Withdrawal.Confirmation,
        store: ReminderStore,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> Bool {
        guard let socket = socket(storePath: store.path, environment: environment) else { return false }
        return WakeSocket.withdraw(path: socket, [Withdrawal(id: id, confirmation: confirmation)])
    }

    /// How long `cancel` waits for a running runner's answer: longer than one desktop post can
    /// take (two D-Bus calls with a 1 s timeout each) and a store write.
    public static let answerTimeout: TimeInterval = 5

    /// Cancels `ids` (all or none), and makes what the person is told agree with what the runner
    /// does: an occurrence the runner had recorded ahead of its instant (or was retrying) may be
    /// on its way to the screen as the cancel commits, so the runner is asked, after the commit,
    /// which of those it has shown. It answers between two posts; what it has not shown by then
    /// it never will (it withdraws them, and every later pass reads the store, where they are
    /// cancelled).
    ///
    /// A runner that dies or is stopped (Ctrl-Z, SIGSTOP) before it answers cannot show anything
    /// more once it resumes (a waiting question is read before anything staged is posted): the
    /// ledger then says what it showed. Only a runner frozen inside a post is not told apart.
    ///
    /// - Throws: `.notFound` for an id with nothing to cancel, `.store` when the store fails.
    public static func cancel(
        ids: [String],
        store: ReminderStore,
        now: Date,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        timeout: TimeInterval = answerTimeout
    ) throws(ChimeError) -> CancelOutcome {
        let cancellation = try store.cancelReporting(ids: ids, now: now)
        // A one-shot that had fired and was still showing: too late too (its alert is closed).
        let closed = cancellation.closed.map { CancelOutcome.Shown(reminderID: $0.reminderID, due: $0.due, posted: $0.posted) }
        var outcome = CancelOutcome(cancelled: cancellation.cancelled, runner: false, shown: closed, unconfirmed: [])
        let paths = RunnerPaths(storePath: store.path, environment: environment)
        guard let holder = RunnerLock.holder(at: paths.lock) else { return outcome }
        let socket = holder.socket ?? paths.socket
        guard !cancellation.inFlight.isEmpty else {
            outcome.runner = WakeSocket.poke(path: socket)
            return outcome
        }
        // The question wakes the runner as a poke does.
        let answer = WakeSocket.ask(path: socket, keys: cancellation.inFlight.map(\.key), timeout: timeout) {
            RunnerLock.holder(at: paths.lock) != nil && !(holder.pid.map(Self.isStopped) ?? false)
        }
        let shown: [OccurrenceKey: Date]
        switch answer {
        case .noRunner:
            // Gone since its lock was read: a runner started later reads the store, where they are cancelled.
            return outcome
        case .answered(let told):
            shown = told
        case .gaveUp:
            // Dead or stopped: what it showed is in the ledger (a stopped one reads the question first when it resumes).
            shown = try store.postedTimes(of: cancellation.inFlight.map(\.key))
        case .noAnswer:
            outcome.runner = true
            outcome.unconfirmed = cancellation.inFlight
            return outcome
        }
        outcome.runner = true
        outcome.shown += cancellation.inFlight.compactMap { occurrence in
            shown[occurrence.key].map { CancelOutcome.Shown(reminderID: occurrence.reminderID, due: occurrence.due, posted: $0) }
        }
        return outcome
    }

    /// Whether process `pid` is stopped (by SIGSTOP, Ctrl-Z or a debugger): `T` or `t` in
    /// `/proc/PID/stat`.
    static func isStopped(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return false }
        let state = stat[stat.index(after: close)...].dropFirst().first
        return state == "T" || state == "t"
    }
}

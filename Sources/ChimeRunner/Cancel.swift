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
    /// How long `cancel` waits for the runner's answer: longer than one desktop post can take
    /// (every D-Bus call has a 1 s timeout), so a runner showing an alert still answers.
    public static let answerTimeout: TimeInterval = 3

    /// Cancels `ids` (all or none), and makes what the person is told agree with what the runner
    /// does: an occurrence the runner had recorded ahead of its instant (or was retrying) may be
    /// on its way to the screen as the cancel commits, so the runner is asked, after the commit,
    /// which of those it has shown. It answers between two passes; what it has not shown by then
    /// it never will (every later pass reads the store, where they are cancelled).
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
        var outcome = CancelOutcome(cancelled: cancellation.cancelled, runner: false, shown: [], unconfirmed: [])
        guard let socket = socket(storePath: store.path, environment: environment) else { return outcome }
        guard !cancellation.inFlight.isEmpty else {
            outcome.runner = WakeSocket.poke(path: socket)
            return outcome
        }
        // The question wakes the runner as a poke does.
        switch WakeSocket.ask(path: socket, keys: cancellation.inFlight.map(\.key), timeout: timeout) {
        case .noRunner:
            // Gone since its lock was read: a runner started later reads the store, where they are cancelled.
            break
        case .noAnswer:
            outcome.runner = true
            outcome.unconfirmed = cancellation.inFlight
        case .answered(let shown):
            outcome.runner = true
            outcome.shown = cancellation.inFlight.compactMap { occurrence in
                shown[occurrence.key].map { CancelOutcome.Shown(reminderID: occurrence.reminderID, due: occurrence.due, posted: $0) }
            }
        }
        return outcome
    }
}

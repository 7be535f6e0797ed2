import Foundation

/// A reminder family's part in the scheduler (focus sessions, doses): keeping its own state in
/// step with time before each pass, and dressing its alerts.
///
/// A family turns intent into ordinary reminders of its ``kind`` (a focus session's completion
/// alert is a one-shot reminder): the scheduler fires them like any other, exactly once.
public protocol ReminderFamily: Sendable {
    /// The ``Reminder/kind`` of the reminders it owns.
    var kind: String { get }
    /// Called before every pass, with why the scheduler woke (``WakeReason/poked`` for the
    /// first): e.g. a focus session moves its alert after a suspend, or completes. Errors are
    /// the store's, logged once per outage by the scheduler.
    func prepare(reason: WakeReason) throws
    /// Adds the family's look (an icon, a category, actions) to the alert for one of its occurrences.
    func decorate(_ note: inout Note, for occurrence: PendingOccurrence)
    /// Handles what a person did with one of the family's alerts (a dose's "Mark as Taken").
    /// Returns true when the response was the family's and it changed something; the runner
    /// then wakes the scheduler so it sees the change.
    func respond(to response: NoteResponse, at instant: Date) throws -> Bool
}

extension ReminderFamily {
    public func decorate(_ note: inout Note, for occurrence: PendingOccurrence) {}

    public func respond(to response: NoteResponse, at instant: Date) throws -> Bool { false }
}

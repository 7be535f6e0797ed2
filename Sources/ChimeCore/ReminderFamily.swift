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
    /// Handles what a person did with one of the family's alerts (a dose's "Mark as Taken"):
    /// the scheduler hands it only answers to alerts of the family's ``kind``. Returns true when
    /// it changed something; the scheduler then looks at the store again.
    func respond(to response: NoteResponse, at instant: Date) throws -> Bool
    /// Handles an answer as ``respond(to:at:)`` does, and says what the alert shows afterwards:
    /// the scheduler replaces the answered alert by the returned confirmation ("✓ Zinc 25 mg
    /// taken at 16:19"), so a person sees what was recorded. By default it calls
    /// ``respond(to:at:)`` and confirms nothing (the alert stays as the server keeps it).
    func answer(_ response: NoteResponse, at instant: Date) throws -> FamilyAnswer
    /// Told right after one of the family's alerts was shown and recorded, to take its next step
    /// at once (plan a dose's repeat, make its next dose); the scheduler's next deadline then
    /// includes what it wrote.
    func didPost(_ occurrences: [PendingOccurrence], at instant: Date) throws
    /// Shows, updates in place or withdraws the family's live notes through `notifier`: notes
    /// outside the ledger that show a state rather than an occurrence (a focus session's tree
    /// and time left). Called after every pass; returns the next instant the family needs this
    /// call again (a stage change), which the scheduler includes in its next wake, or nil.
    /// What it has shown is kept in memory only: a new process shows the current state once.
    /// `nonisolated(nonsending)`: it runs on the scheduler's own thread, so a pass with nothing
    /// to show does not hop to Swift's global pool (the idle runner stays idle).
    nonisolated(nonsending) func updateLiveNotes(through notifier: any Notifier, at instant: Date) async -> Date?
    /// Whether `noteID` names one of the family's live notes: an answer to it (an action, a
    /// close) goes to ``respond(to:at:)``, though the ledger knows no such alert.
    func ownsLiveNote(_ noteID: String) -> Bool
    /// Closes the family's live notes: the scheduler is stopping (their buttons would answer
    /// to no one). The next process shows them again.
    nonisolated(nonsending) func closeLiveNotes(through notifier: any Notifier) async
    /// Whether the family's alerts must reach the person (a medication dose): quiet lets them
    /// through unless the person chose ``QuietSettings/Essential/wait``, and then each waits
    /// for the end and comes on its own, never folded into a summary. False by default.
    var isEssential: Bool { get }
    /// Asks the scheduler to hold the ordinary alerts of other kinds while something of the
    /// family's runs (a focus session), or nil. Asked at every pass, after ``prepare(reason:)``:
    /// when it answers nil again, what was held comes as one summary. Honoured unless the person
    /// turned it off (``QuietSettings/familyHold``). Errors are the store's, logged once per
    /// outage by the scheduler (the family then holds nothing for that pass).
    func hold() throws -> FamilyHold?
}

extension ReminderFamily {
    public func decorate(_ note: inout Note, for occurrence: PendingOccurrence) {}

    public func respond(to response: NoteResponse, at instant: Date) throws -> Bool { false }

    public func answer(_ response: NoteResponse, at instant: Date) throws -> FamilyAnswer {
        FamilyAnswer(changed: try respond(to: response, at: instant))
    }

    public func didPost(_ occurrences: [PendingOccurrence], at instant: Date) throws {}

    public nonisolated(nonsending) func updateLiveNotes(through notifier: any Notifier, at instant: Date) async -> Date? { nil }

    public func ownsLiveNote(_ noteID: String) -> Bool { false }

    public nonisolated(nonsending) func closeLiveNotes(through notifier: any Notifier) async {}
    public var isEssential: Bool { false }

    public func hold() throws -> FamilyHold? { nil }
}

/// What a family did with an answer to one of its alerts (``ReminderFamily/answer(_:at:)``).
public struct FamilyAnswer: Sendable, Hashable {
    /// It changed the store: the scheduler looks at it again.
    public var changed: Bool
    /// What replaces the answered alert (``Note/confirmation(id:title:body:at:)``), or nil to
    /// leave it as it is.
    public var confirmation: Note?

    public init(changed: Bool, confirmation: Note? = nil) {
        self.changed = changed
        self.confirmation = confirmation
    }
}

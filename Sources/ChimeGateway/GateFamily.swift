import ChimeCore
import ChimeStore
import Foundation

/// The gateway in the runner: the reminder in use of a gated program (`--remind-after 20m`).
///
/// `chime gate open` schedules a one-shot reminder of this ``kind`` when it starts a program
/// whose rule has a reminder (``GateBook/startRun(programID:name:pid:remindAfter:)``), and
/// cancels it when the program exits (``GateBook/endRun(id:)``), so it never fires after. The
/// runner fires it as any reminder; this family dresses it ("20 min in Firefox", with Exit and
/// Keep going) and takes the answers:
/// - **Keep going**: the next reminder comes after another interval, from the press.
/// - **Exit**: no more reminders for this run, and the alert says "Close Firefox when you are
///   ready.": Chime closes nothing by force; the person closes the program.
/// - Closed without an answer: nothing more for this run.
public final class GateFamily: ReminderFamily {
    public let kind = GateBook.kind
    public let book: GateBook
    /// The keys of the alert's actions.
    public static let exitAction = "gate-exit"
    public static let keepGoingAction = "gate-keep-going"

    public init(book: GateBook) {
        self.book = book
    }

    public func prepare(reason: WakeReason) throws {}

    public func decorate(_ note: inout Note, for occurrence: PendingOccurrence) {
        note.category = "x-chime.gate"
        guard let id = GateRun.runID(reminderID: occurrence.reminderID) else { return }
        note.actions = [
            Note.Action(key: Self.exitAction, label: "Exit"), Note.Action(key: Self.keepGoingAction, label: "Keep going"),
        ]
        note.answerInstead = "Close the program when you are ready (run \(id))"
    }

    public func respond(to response: NoteResponse, at instant: Date) throws -> Bool {
        try answer(response, at: instant).changed
    }

    /// Keep going schedules the next reminder and says when; Exit stops the reminders and asks
    /// the person to close the program.
    public func answer(_ response: NoteResponse, at instant: Date) throws -> FamilyAnswer {
        guard case .action(let key) = response.kind, let id = GateRun.runID(reminderID: response.noteID),
            let run = try book.run(id: id)
        else { return FamilyAnswer(changed: false) }
        switch key {
        case Self.keepGoingAction:
            guard try book.keepGoing(runID: id) != nil, let every = run.remindAfter else {
                return FamilyAnswer(changed: false)
            }
            return FamilyAnswer(
                changed: true,
                confirmation: Note.confirmation(
                    id: response.noteID,
                    title: "Keep going: \(run.name)",
                    body: "Another reminder in \(every) min.",
                    at: instant
                )
            )
        case Self.exitAction:
            try book.stopReminding(runID: id)
            return FamilyAnswer(
                changed: true,
                confirmation: Note.confirmation(id: response.noteID, title: GateRun.exitLine(name: run.name), at: instant)
            )
        default:
            return FamilyAnswer(changed: false)
        }
    }
}

extension GateBook {
    /// The ``Reminder/kind`` of the reminders in use (``GateFamily``).
    public static let kind = "gate"
}

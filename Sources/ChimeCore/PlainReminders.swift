import Foundation

/// The reminders of `chime in`, `at` and `every` (kind `plain`) as a family of the scheduler:
/// their alerts carry the actions "Done" and "Snooze 10 min", and a snooze brings the alert
/// back once, ``snoozeLength`` later (then the reminder keeps its own schedule).
///
/// The answer itself is recorded in the ledger by the scheduler (the first answer stands), so
/// a snooze pressed twice, or from the alert and from `chime snooze`, brings it back once.
public final class PlainReminders: ReminderFamily {
    /// The kind of the reminders `chime in|at|every` make.
    public static let plainKind = "plain"
    /// The keys of the alert's actions, as the ledger records them.
    public static let done = "done"
    public static let snooze = "snooze"
    /// How long a snooze lasts when nothing says otherwise (the config file's `reminders.snooze`
    /// and `$CHIME_SNOOZE` override it).
    public static let defaultSnoozeLength: Duration = .seconds(600)

    /// A snooze's length as people type it (`chime snooze ID 30m`, D-Bus `Snooze`), in seconds:
    /// from 1m to 24h.
    public static func parseSnoozeLength(_ text: String) throws(ChimeError) -> Int64 {
        let seconds: Int64
        do {
            seconds = try TimeParsing.duration(text)
        } catch {
            throw ChimeError.invalid("duration", text, expected: "a duration such as 10m, 90s or 1h30m, from 1m to 24h")
        }
        guard (60...86_400).contains(seconds) else {
            throw ChimeError.invalid("duration", text, expected: "a duration from 1m to 24h, such as 10m")
        }
        return seconds
    }

    public let kind = PlainReminders.plainKind
    public let store: any SchedulerStore
    public let snoozeLength: Duration
    private let onSnooze: @Sendable (_ id: String, _ until: Date) -> Void
    /// The zone the confirmations' times are told in ("Snoozed until 16:29").
    private let systemZone: @Sendable () -> TimeZone

    /// - Parameter onSnooze: told when an alert's snooze recorded its re-alert (the runner logs it).
    public init(
        store: any SchedulerStore,
        snoozeLength: Duration = PlainReminders.defaultSnoozeLength,
        systemZone: @escaping @Sendable () -> TimeZone = { TimeZone.current },
        onSnooze: @escaping @Sendable (_ id: String, _ until: Date) -> Void = { _, _ in }
    ) {
        self.store = store
        self.snoozeLength = snoozeLength
        self.systemZone = systemZone
        self.onSnooze = onSnooze
    }

    public func prepare(reason: WakeReason) throws {}

    /// The icon-theme name of Chime's icon, its application id, as the desktop entry names it
    /// (`Icon=io.github.chime.Chime`; the package installs it to
    /// hicolor/scalable/apps/io.github.chime.Chime.svg): a plain reminder's alert carries it
    /// unless the reminder names its own (`--icon`).
    public static let icon = ApplicationID.current

    public func decorate(_ note: inout Note, for occurrence: PendingOccurrence) {
        if note.icon == nil || note.icon?.isEmpty == true { note.icon = Self.icon }
        // A reminder's own actions (``Presentation/actions``) stand instead of Done and Snooze.
        if note.actions.isEmpty {
            note.actions = [
                Note.Action(key: Self.done, label: "Done"),
                Note.Action(key: Self.snooze, label: "Snooze \(Self.label(snoozeLength))"),
            ]
        }
        note.answerInstead = "Answer: chime done \(occurrence.reminderID) (or chime snooze \(occurrence.reminderID))"
    }

    /// "10 min", as the button says it; "1h 30m" for other lengths.
    static func label(_ length: Duration) -> String {
        let seconds = length.components.seconds
        return seconds % 60 == 0 && seconds < 3600 ? "\(seconds / 60) min" : formatDuration(length)
    }

    /// "Snooze": the alert comes back once, ``snoozeLength`` from now. "Done" is recorded by the
    /// scheduler and needs nothing more.
    public func respond(to response: NoteResponse, at instant: Date) throws -> Bool {
        try answer(response, at: instant).changed
    }

    /// As ``respond(to:at:)``, and the alert then reads "✓ Done" or "Snoozed until 16:29", with
    /// the reminder's title below.
    public func answer(_ response: NoteResponse, at instant: Date) throws -> FamilyAnswer {
        guard case .action(let key) = response.kind, key == Self.done || key == Self.snooze else {
            return FamilyAnswer(changed: false)
        }
        let title = (try? store.shownTitle(id: response.noteID)) ?? ""
        guard key == Self.snooze else {
            let text = Self.doneConfirmation(title: title)
            return FamilyAnswer(
                changed: false,
                confirmation: .confirmation(id: response.noteID, title: text.title, body: text.body, at: instant)
            )
        }
        let seconds = Double(snoozeLength.components.seconds) + Double(snoozeLength.components.attoseconds) / 1e18
        let until = instant.addingTimeInterval(seconds)
        guard try store.snoozeShown(id: response.noteID, until: until, at: instant) else { return FamilyAnswer(changed: false) }
        onSnooze(response.noteID, until)
        let text = Self.snoozedConfirmation(until: until, title: title, zone: systemZone())
        return FamilyAnswer(
            changed: true,
            confirmation: .confirmation(id: response.noteID, title: text.title, body: text.body, at: instant)
        )
    }

    /// What a reminder's alert reads once marked done (from its button or `chime done`).
    public static func doneConfirmation(title: String) -> Withdrawal.Confirmation {
        Withdrawal.Confirmation(title: "✓ Done", body: title)
    }

    /// What a reminder's alert reads once snoozed (from its button or `chime snooze`).
    public static func snoozedConfirmation(until: Date, title: String, zone: TimeZone) -> Withdrawal.Confirmation {
        Withdrawal.Confirmation(title: "Snoozed until \(TimeText.clock(until, in: zone))", body: title)
    }
}

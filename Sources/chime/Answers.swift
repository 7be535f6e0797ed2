import ArgumentParser
import ChimeApp
import ChimeConfig
import ChimeCore
import ChimeDoses
import ChimeLibnotify
import ChimeRunner
import ChimeStore
import Foundation

struct Snooze: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "snooze",
        abstract: "Snooze a reminder's alert: it comes again in 10 min.",
        discussion: """
            What the alert's "Snooze 10 min" button does: the alert shown last for ID
            comes back once, DURATION from now. Nothing showing: exit 3; answered: exit 4.
            Example (a runner runs 3 s to show it, then it is snoozed for 30 minutes):
              chime in 1s Tea --id tea && timeout 3 chime run; chime snooze tea 30m
            More: man chime (chime snooze)
            """
    )

    @Argument(help: "The reminder's identifier (or a dose's alert id).", completion: Completion.snoozable) var id: String
    @Argument(
        help: ArgumentHelp(
            "How long until it comes back: 90s, 10m, 1h30m (from 1m to 24h; default 10m, or the config file's reminders.snooze).",
            valueName: "duration"
        )
    )
    var duration: String?
    @OptionGroup var global: GlobalOptions

    func validate() throws {
        try asValidation { () throws(ChimeError) in
            try ReminderIdentifier.validate(id)
            // (The default comes from the config file, checked after parsing.)
            if duration != nil { _ = try length() }
        }
    }

    /// The snooze's length in seconds: DURATION, else `$CHIME_SNOOZE`, the config file's
    /// `reminders.snooze`, else the default.
    func length() throws(ChimeError) -> Int64 {
        guard let duration else { return try Settings.current().seconds(.snooze) }
        return try PlainReminders.parseSnoozeLength(duration)
    }

    func run() async throws {
        let seconds = try length()
        if let url = try global.postgresURL() { return try await runPostgres(url, seconds: seconds) }
        let store = try global.openStore(.update)
        let now = Date()
        let shown = try store.lastShown(id: id)
        if shown?.kind == DoseBook.kind || (shown == nil && DoseOccurrenceID.matches(id)) {
            try await snoozeDose(seconds: seconds, store: store)
            return
        }
        let until = now.addingTimeInterval(TimeInterval(seconds))
        let answered = try ChimeApp.answerReminder(id: id, snoozeUntil: until, store: store, now: now)
        let running = pokeRunner(store, json: global.json)
        // Answered here: the alert says until when, as its button would (the runner replaces it;
        // with none, the desktop helper).
        let confirmation = PlainReminders.snoozedConfirmation(until: until, title: answered.alert.title, zone: .current)
        await confirmAnswered(id, confirmation, store: store)
        emit(AlertAnswered(answered, runner: running), json: global.json)
    }

    /// A dose's alert id: the dose is snoozed by its family, and the alert says until when.
    func snoozeDose(seconds: Int64, store: ReminderStore) async throws {
        guard seconds % 60 == 0, (1...240).contains(seconds / 60) else {
            throw ChimeError.invalid(
                "duration",
                duration ?? Trigger.formatInterval(seconds),
                expected: "whole minutes from 1m to 4h for a dose, such as 15m"
            )
        }
        let book = DoseBook(
            store: store,
            clock: SystemWallClock(),
            systemZone: { TimeZone.current },
            repeats: Settings.ifValid?.doseRepeats ?? DoseRepeats()
        )
        let entry = try book.snooze(.occurrence(id), minutes: Int(seconds / 60))
        let running = pokeRunner(store, json: global.json)
        await confirmAnswered(id, DoseFamily.confirmation(DoseFamily.snooze, entry: entry, refill: nil, at: Date()), store: store)
        let title = "\(entry.label) (dose \(entry.dose.id))"
        emit(
            AlertAnswered(id: id, kind: DoseBook.kind, title: title, snoozedUntil: entry.dose.snoozeUntil, runner: running),
            json: global.json
        )
    }
}

struct Done: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "done",
        abstract: "Mark the alert showing for a reminder done.",
        discussion: """
            What the alert's "Done" button does: the alert shown last for ID is
            recorded as done. Nothing showing: exit 3; answered already: exit 4.
            Example (a runner runs 3 s to show it, then it is marked done):
              chime in 1s Stretch --id stretch && timeout 3 chime run; chime done stretch
            More: man chime (chime done)
            """
    )

    @Argument(help: "The reminder's identifier.", completion: Completion.answerable) var id: String
    @OptionGroup var global: GlobalOptions

    func validate() throws {
        try asValidation { () throws(ChimeError) in try ReminderIdentifier.validate(id) }
    }

    func run() async throws {
        if let url = try global.postgresURL() { return try await runPostgres(url) }
        let store = try global.openStore(.update)
        let answered = try ChimeApp.answerReminder(id: id, snoozeUntil: nil, store: store, now: Date())
        let running = RunnerControl.isRunning(storePath: store.path)
        await confirmAnswered(id, PlainReminders.doneConfirmation(title: answered.alert.title), store: store)
        emit(AlertAnswered(answered, runner: running), json: global.json)
    }
}

/// Replaces the alert shown for `id`, answered from the command line, by `confirmation`, as
/// its buttons would: the runner does it through its notifier; with none, the desktop helper
/// by the server's id (nothing when no server runs).
func confirmAnswered(_ id: String, _ confirmation: Withdrawal.Confirmation, store: ReminderStore) async {
    await RunnerControl.confirmAnswer(id: id, confirmation: confirmation, store: store, confirmWithoutRunner: LibnotifyNotifier.confirm)
}

/// An alert answered from the command line: which, with what, and when a snoozed one comes back.
struct AlertAnswered: Report {
    var id: String
    var kind: String
    var title: String
    var response: String
    @Nullable var snoozedUntil: String?
    var runner: Bool
    private var until: Date?

    enum CodingKeys: String, CodingKey {
        case id, kind, title, response, runner
        case snoozedUntil = "snoozed_until"
    }

    init(_ answered: AnsweredAlert, runner: Bool) {
        self.init(
            id: answered.alert.reminderID,
            kind: answered.alert.kind,
            title: answered.alert.title,
            response: answered.response,
            snoozedUntil: answered.snoozedUntil,
            runner: runner
        )
    }

    init(id: String, kind: String, title: String, response: String = PlainReminders.snooze, snoozedUntil: Date?, runner: Bool) {
        self.id = id
        self.kind = kind
        self.title = title
        self.response = response
        self.snoozedUntil = snoozedUntil.map(TimeText.iso)
        self.runner = runner
        until = snoozedUntil
    }

    var lines: [String] {
        let what = "\(id)  \(UserText.oneLine(title))"
        guard let until else { return ["Done: \(what)"] }
        return ["Snoozed \(what): it comes back at \(TimeText.local(until, in: .current, seconds: true))."]
    }
}

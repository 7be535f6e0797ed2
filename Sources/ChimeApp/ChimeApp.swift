import ChimeConfig
import ChimeCore
import ChimeDoses
import ChimeFocus
import ChimeGateway
import ChimeStore
import Foundation
import Logging

/// Chime's composition root: what every program of Chime's opens the same way, listed
/// once. `chime` (its commands and its runner), `chime-bench` and the tests import it rather than
/// keeping their own lists. The layers below it (ChimeCore, ChimeStore, ChimeRunner,
/// ChimePostgres) name no family; the families are named here.
public enum ChimeApp {
    /// The reminder families' tables: every command opens the store with them (a store made by
    /// this chime holds them all). A new family adds its schema here and its runner part below.
    public static let schemas: [StoreSchema] = [.focus, .doses, .gateway]

    /// The reminder families the runner serves, in the order they are prepared before each
    /// pass; each logs what it did on its own (the composition root: a new family is added here).
    /// - Parameter snoozeLength: how long an alert's "Snooze" lasts (the config file's `reminders.snooze`).
    /// - Parameter doseRepeats: how an unanswered dose alert repeats (`doses.repeat_every`, `repeat_count`).
    /// - Parameter focusBreaks: the breaks between focus sessions (`focus.short_break` …).
    /// - Parameter idle: where the desktop says the person is idle (nil: none; `focus.idle_pause`
    ///   and `focus.wait_for_activity` then do nothing).
    /// - Parameter focusIdle: `focus.idle_pause`.
    /// - Parameter doseTeller: sends the messages to someone else about doses not taken (`med add --tell`).
    /// - Parameter dosePerson: who those messages name (`doses.person_name`).
    public static func families(
        store: ReminderStore,
        logger log: Logger,
        liveAlerts: Bool = true,
        snoozeLength: Duration = PlainReminders.defaultSnoozeLength,
        doseRepeats: DoseRepeats = DoseRepeats(),
        focusBreaks: FocusBreaks = FocusBreaks(),
        idle: (any IdleSource)? = nil,
        focusIdle: FocusIdle = FocusIdle(),
        doseTeller: (any DoseTeller)? = nil,
        dosePerson: String = DoseFamily.defaultPerson
    ) -> [any ReminderFamily] {
        let focus = FocusFamily(
            timer: FocusTimer(store: store, breaks: focusBreaks),
            liveAlert: liveAlerts,
            idle: idle,
            idleSettings: focusIdle,
            onChange: { settled in
                switch settled {
                case .completed(let session):
                    log.info("Focus session completed", metadata: ["session.id": "\(session.id)"])
                case .abandoned(let session):
                    log.notice("Focus session abandoned: the machine restarted during it", metadata: ["session.id": "\(session.id)"])
                case .none, .open:
                    break
                }
            }
        )
        let doses = DoseFamily(
            book: DoseBook(store: store, repeats: doseRepeats),
            onChange: { settled in
                if !settled.missed.isEmpty {
                    log.notice("Doses missed: their window passed unanswered", metadata: ["dose.ids": "\(settled.missed)"])
                }
                if let summary = settled.summaryID {
                    log.notice(
                        "Doses fell due while nothing ran: one summary alert",
                        metadata: ["reminder.id": .string(summary), "dose.ids": "\(settled.summarized)"]
                    )
                }
            },
            onAnswer: { event in
                if let entry = event.entry {
                    log.info(
                        "Dose answered from its alert",
                        metadata: [
                            "dose.id": "\(entry.dose.id)", "action": .string(event.action), "status": .string(entry.dose.status.rawValue),
                        ]
                    )
                } else if let refused = event.refused {
                    log.notice("Dose answer changed nothing", metadata: ["action": .string(event.action), "reason": .string(refused)])
                }
            },
            teller: doseTeller,
            person: dosePerson,
            onTell: { event in
                var metadata: Logger.Metadata = [:]
                if let tell = event.tell {
                    metadata = ["dose.id": "\(tell.doseID)", "tell": .string(tell.kind.rawValue), "channel": .string(tell.channel.shown)]
                }
                switch event.outcome {
                case .sent: log.notice("Someone else told about a dose", metadata: metadata)
                case .failed(let reason):
                    metadata["reason"] = .string(reason)
                    log.warning("Telling someone else about a dose failed; tried again later", metadata: metadata)
                }
            }
        )
        let gate = GateFamily(book: GateBook(store: store))
        return [focus, doses, gate, plainReminders(store: store, logger: log, snoozeLength: snoozeLength)]
    }

    /// Plain reminders' part of the runner (their alerts' Done and Snooze), on either store's
    /// ledger: the one family a PostgreSQL runner serves.
    public static func plainReminders(
        store: any SchedulerStore,
        logger log: Logger,
        snoozeLength: Duration = PlainReminders.defaultSnoozeLength
    ) -> PlainReminders {
        PlainReminders(
            store: store,
            snoozeLength: snoozeLength,
            onSnooze: { id, until in
                log.info("Reminder snoozed from its alert", metadata: ["reminder.id": .string(id), "until": .string(TimeText.iso(until))])
            }
        )
    }
}

extension ChimeApp {
    /// Every key of the config file, in the file's order: each layer's own (the runner's, the
    /// store's, plain reminders', quiet's) and each family's.
    public static let configKeys: [ConfigKey] =
        [.notifier, .webhookURL] + ConfigKey.pushKeys + [.store, .snooze] + FocusFamily.configKeys + DoseFamily.configKeys + [.quietHours]
        + GateBook.configKeys + ConfigKey.hooks

    /// Reads the config file and the environment, for every key (``Config/load(keys:environment:)``).
    public static func loadConfig(environment: [String: String] = ProcessInfo.processInfo.environment) throws(ChimeError) -> Config {
        try Config.load(keys: configKeys, environment: environment)
    }
}

extension Config {
    /// How an unanswered dose alert repeats (the doses family's keys).
    public var doseRepeats: DoseRepeats { DoseRepeats.configured { setting($0).value } }

    /// Who the messages to someone else about doses name (`doses.person_name`, else the account's name).
    public var dosePerson: String { DoseFamily.person { setting($0).value } }

    /// The breaks between focus sessions (the focus family's break keys).
    public var focusBreaks: FocusBreaks { FocusBreaks.configured { setting($0).value } }

    /// When a focus session pauses because the person is idle (`focus.idle_pause`).
    public var focusIdle: FocusIdle { FocusIdle.configured { setting($0).value } }

    /// The gate's profile before `chime gate setup` (the gateway's keys).
    public var gateDefaults: GateProfile { GateBook.configuredDefaults { setting($0).value } }

    /// The commented example of every key (`chime config example`).
    public static var example: String { example(keys: ChimeApp.configKeys) }
}

extension ChimeApp {
    /// The commands that change reminders of `kind`, for a family's kind (nil for another).
    public static func commands(ofKind kind: String) -> String? {
        switch kind {
        case DoseBook.kind: DoseFamily.commands
        case FocusTimer.kind: FocusFamily.commands
        default: nil
        }
    }

    /// `error`, naming the family's commands when it refused to edit a family's reminder.
    public static func namingFamily(_ error: ChimeError) -> ChimeError {
        guard let family = error.cause as? FamilyReminder, let commands = commands(ofKind: family.kind) else { return error }
        return ChimeError.notEditable(id: family.id, kind: family.kind, commands: commands)
    }
}

extension ChimeApp {
    /// How `chime list` titles a reminder: a family's own words where it has some (a dose's
    /// alert with its medication).
    public static func listTitle(of reminder: Reminder) -> String { DoseBook.listTitle(of: reminder) }

    /// The line under `chime list`'s table counting a family's reminders: "Doses: 3 scheduled
    /// (chime doses)".
    public static func familyLine(kind: String, count: Int) -> String {
        switch kind {
        case DoseBook.kind: "Doses: \(count) scheduled (chime doses)"
        case FocusTimer.kind: "Focus: \(count) session alert\(count == 1 ? "" : "s") (chime focus status)"
        case GateBook.kind: "Gateway: \(count) reminder\(count == 1 ? "" : "s") in use (chime gate stats)"
        default: "\(kind): \(count) scheduled (chime list --json)"
        }
    }

    /// Refuses, before anything is cancelled, ids that a family answers rather than cancels (a
    /// dose's alert: `chime dose skip`): exit 4.
    public static func refuseCancel(_ ids: [String], store: ReminderStore) throws(ChimeError) {
        try DoseBook(store: store).refuseCancel(ids)
    }
}

extension ChimeApp {
    /// The families as a command asks them what holds alerts (a read, as at a runner's pass),
    /// for `chime list` and `chime quiet status`: those that may hold (a focus session). Their
    /// settle may complete a session: `focusBreaks` gives the break that then begins.
    public static func holdingFamilies(store: ReminderStore, focusBreaks: FocusBreaks = FocusBreaks()) -> [any ReminderFamily] {
        [FocusFamily(timer: FocusTimer(store: store, breaks: focusBreaks), liveAlert: false)]
    }
}

extension ChimeApp {
    /// Answers the alert shown last for reminder `id` as its "Done" or "Snooze" button would
    /// (`chime done`, `chime snooze` on a reminder's alert, and the D-Bus service): another family's
    /// alert is refused (`.conflict`), naming how to answer it.
    /// - Parameter snoozeUntil: when the alert comes back (a snooze), nil for done.
    public static func answerReminder(id: String, snoozeUntil: Date?, store: ReminderStore, now: Date) throws(ChimeError) -> AnsweredAlert {
        try ReminderIdentifier.validate(id)
        if let shown = try store.lastShown(id: id), shown.kind != PlainReminders.plainKind {
            if snoozeUntil != nil {
                throw ChimeError(.conflict, "'\(id)' is a \(shown.kind) alert: only reminders (chime in|at|every) and doses are snoozed")
            }
            let hint = shown.kind == DoseBook.kind ? ": answer a dose with 'chime dose take \(id)'" : ""
            throw ChimeError(.conflict, "'\(id)' is a \(shown.kind) alert, not a reminder's\(hint)")
        }
        let action = snoozeUntil == nil ? PlainReminders.done : PlainReminders.snooze
        return try store.answerShown(id: id, action: action, snoozeUntil: snoozeUntil, now: now)
    }
}

import Foundation

/// One occurrence in the delivery ledger as `chime history` shows it: what fired, when it was
/// due, when it was shown and through which channel, and what the person did. The same on both
/// stores: each store's history yields these.
///
/// A hook's run (``HookEvent``, the SQLite store's only) is an entry too, of kind `hook`: its
/// event's subject as `reminderID`, the event's name as `title` (`gate.exit`), its `CHIME_TITLE`
/// as `detail`, the event's time as `due`, when the hook started as `postedAt`, `hook` as `via`,
/// and its run as `command`.
public struct HistoryEntry: Sendable, Hashable {
    public var reminderID: String
    /// The reminder's family: `plain`, `dose`, `focus`…; `hook` for a hook's run.
    public var kind: String
    public var title: String
    /// For a family's alert, the first line of its body: a dose alert's medication
    /// ("Aspirin 100 mg"), whose title is the same for every dose. Nil for a plain reminder.
    public var detail: String?
    public var due: Date
    /// `due` (recorded, not shown yet), `posted` or `cancelled`; a hook's, its run's state
    /// (`running`, `exited`, `timed_out`, `interrupted`, `failed`).
    public var state: String
    /// Earlier occurrences folded into this one while nothing ran.
    public var missedCount: Int
    public var postedAt: Date?
    /// The channel that showed it (`desktop`, `console`, `json`); nil when not recorded.
    public var via: String?
    public var attempts: Int
    public var lastError: String?
    /// An action's key, or `closed:<reason>`.
    public var response: String?
    public var answeredAt: Date?
    /// The run of its reminder's command for this occurrence, if it had one; a hook's run.
    public var command: CommandRun?
    /// For a hook's run: the command the config named for its event, as it ran. Nil for an alert.
    public var hookCommand: ReminderCommand?

    public init(
        reminderID: String,
        kind: String,
        title: String,
        detail: String?,
        due: Date,
        state: String,
        missedCount: Int,
        postedAt: Date?,
        via: String?,
        attempts: Int,
        lastError: String?,
        response: String?,
        answeredAt: Date?,
        command: CommandRun? = nil,
        hookCommand: ReminderCommand? = nil
    ) {
        self.command = command
        self.hookCommand = hookCommand
        self.reminderID = reminderID
        self.kind = kind
        self.title = title
        self.detail = detail
        self.due = due
        self.state = state
        self.missedCount = missedCount
        self.postedAt = postedAt
        self.via = via
        self.attempts = attempts
        self.lastError = lastError
        self.response = response
        self.answeredAt = answeredAt
    }

    /// The ``kind`` of a hook's run.
    public static let hookKind = "hook"

    /// Whether it is a hook's run rather than an alert.
    public var isHook: Bool { hookCommand != nil }

    /// How late it was shown (posted − due), in seconds; nil when not shown.
    public var lateness: TimeInterval? { postedAt.map { $0.timeIntervalSince(due) } }

    /// What became of it, in one word a person reads: `taken`, `snoozed`, `done`, `skipped`,
    /// `dismissed`, `expired`, `closed` (an answer); `shown` (no answer); `cancelled`;
    /// `failing` (not shown yet, the notifier failing) or `due`. A hook's run: how it ended
    /// (`exit 0`, `exit 137`, `timed out`, `interrupted`, `failed`) or `running`.
    public var outcome: String {
        if isHook, let run = command {
            switch run.state {
            case .exited: return run.summary
            case .timedOut: return "timed out"
            default: return run.state.rawValue
            }
        }
        switch state {
        case "cancelled": return "cancelled"
        case "due": return attempts > 0 ? "failing" : "due"
        default: break
        }
        guard let response else { return "shown" }
        return Self.outcome(ofResponse: response)
    }

    /// A response as a word: the families' and plain reminders' action keys (`take`, `snooze`,
    /// `skip`, `done`…) in the past tense, a close by its reason; any other key as it is.
    public static func outcome(ofResponse response: String) -> String {
        if response.hasPrefix("closed:") {
            let reason = response.dropFirst("closed:".count)
            return reason == "expired" || reason == "dismissed" ? String(reason) : "closed"
        }
        let key = response.lowercased()
        let known: [String: String] = [
            "take": "taken", "taken": "taken",
            "snooze": "snoozed", "snoozed": "snoozed",
            "skip": "skipped", "skipped": "skipped",
            "done": "done", "default": "opened",
        ]
        if let word = known[key] { return word }
        // "snooze-10m", "snooze:600": a snooze with its length.
        if key.hasPrefix("snooze") { return "snoozed" }
        return response
    }
}

extension CommandRun {
    /// A run as a store reads it back: its state's word and columns; nil when it never started.
    public init?(
        state: String?,
        startedMicros: Int64?,
        endedMicros: Int64?,
        pid: Int64?,
        exitStatus: Int64?,
        output: String?,
        error: String?
    ) {
        guard let state, let parsed = State(rawValue: state), let startedMicros else { return nil }
        self.init(
            state: parsed,
            startedAt: Date(micros: startedMicros),
            finishedAt: endedMicros.map(Date.init(micros:)),
            pid: pid.map { Int32(truncatingIfNeeded: $0) },
            exitStatus: exitStatus.map { Int32(truncatingIfNeeded: $0) },
            output: output ?? "",
            error: error
        )
    }
}

/// Everything about one reminder for `chime show`: the latest reminder with the id, in any state.
public struct ReminderDetail: Sendable, Hashable {
    public var reminder: Reminder
    /// `pending`, `done`, `cancelled` or `replaced`.
    public var state: String
    public var endedAt: Date?
    /// How many of its occurrences were shown.
    public var shownCount: Int

    public init(reminder: Reminder, state: String, endedAt: Date?, shownCount: Int) {
        self.reminder = reminder
        self.state = state
        self.endedAt = endedAt
        self.shownCount = shownCount
    }
}

import ChimeCore
import Foundation
import GRDB

/// One occurrence in the delivery ledger as `chime history` shows it: what fired, when it was
/// due, when it was shown and through which channel, and what the person did.
public struct HistoryEntry: Sendable, Hashable {
    public var reminderID: String
    /// The reminder's family: `plain`, `dose`, `focus`…
    public var kind: String
    public var title: String
    /// For a family's alert, the first line of its body: a dose alert's medication
    /// ("Aspirin 100 mg"), whose title is the same for every dose. Nil for a plain reminder.
    public var detail: String?
    public var due: Date
    /// `due` (recorded, not shown yet), `posted` or `cancelled`.
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
        answeredAt: Date?
    ) {
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

    /// How late it was shown (posted − due), in seconds; nil when not shown.
    public var lateness: TimeInterval? { postedAt.map { $0.timeIntervalSince(due) } }

    /// What became of it, in one word a person reads: `taken`, `snoozed`, `done`, `skipped`,
    /// `dismissed`, `expired`, `closed` (an answer); `shown` (no answer); `cancelled`;
    /// `failing` (not shown yet, the notifier failing) or `due`.
    public var outcome: String {
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

extension ReminderStore {
    /// The ledger, oldest first: of reminder `id` (every reminder that had it) or of all, the
    /// occurrences due at or after `since`, at most the `limit` latest.
    public func history(id: String? = nil, since: Date? = nil, limit: Int? = nil) throws(ChimeError) -> [HistoryEntry] {
        var entries: [HistoryEntry] = []
        try eachHistory(id: id, since: since, limit: limit) { entries.append($0) }
        return entries
    }

    /// Calls `body` with each entry ``history(id:since:limit:)`` returns, in its order, in one
    /// read transaction, holding one at a time: `chime history --json` of 200,000 alerts.
    public func eachHistory(
        id: String? = nil,
        since: Date? = nil,
        limit: Int? = nil,
        _ body: (HistoryEntry) throws -> Void
    ) throws(ChimeError) {
        try read { db in
            let select = """
                SELECT r.id, r.kind, r.title, o.due_us, o.state, o.missed_count, o.posted_us, o.via, o.attempts,
                       o.last_error, o.response, o.answered_us, r.body
                FROM occurrence o JOIN reminder r ON r.key = o.reminder_key
                WHERE (?1 IS NULL OR r.id = ?1) AND o.due_us >= ?2
                """
            // The latest `limit`, turned oldest first; without a limit, one sort rather than two
            // (SQLite's sorter held both: 67 MB for 200,000 alerts, 17 MB more than one).
            let sql =
                limit == nil
                ? select + " ORDER BY o.due_us, r.id"
                : "SELECT * FROM (" + select + " ORDER BY o.due_us DESC, r.id DESC LIMIT ?3) ORDER BY due_us, id"
            // SQLite's sorter keeps up to the page cache's size in memory before it spills to a
            // temporary file: 2 MiB while it sorts the ledger, so that memory stays flat however long.
            let cacheSize = try Int.fetchOne(db, sql: "PRAGMA cache_size") ?? -2_000
            try db.execute(sql: "PRAGMA cache_size = -2048")
            defer { try? db.execute(sql: "PRAGMA cache_size = \(cacheSize)") }
            var arguments: StatementArguments = [id, since?.micros ?? Int64.min]
            if let limit { arguments += [limit] }
            let rows = try Row.fetchCursor(db, sql: sql, arguments: arguments)
            while let row = try rows.next() {
                let kind: String = row[1]
                let text: String = row[12]
                let firstLine = text.prefix { $0 != "\n" }
                try body(
                    HistoryEntry(
                        reminderID: row[0],
                        kind: kind,
                        title: row[2],
                        detail: kind == "plain" || firstLine.isEmpty ? nil : String(firstLine),
                        due: Date(micros: row[3]),
                        state: row[4],
                        missedCount: row[5],
                        postedAt: (row[6] as Int64?).map(Date.init(micros:)),
                        via: row[7],
                        attempts: row[8],
                        lastError: row[9],
                        response: row[10],
                        answeredAt: (row[11] as Int64?).map(Date.init(micros:))
                    )
                )
            }
        }
    }

    /// Whether any reminder ever had the id `id`.
    public func hasEverHad(id: String) throws(ChimeError) -> Bool {
        try read { db in try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM reminder WHERE id = ?)", arguments: [id]) ?? false }
    }

    /// The latest reminder with the id `id`, pending or not. - Throws: `.notFound` when none ever had it.
    public func detail(id: String) throws(ChimeError) -> ReminderDetail {
        try read { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT * FROM reminder WHERE id = ? ORDER BY key DESC LIMIT 1", arguments: [id])
            else {
                throw ChimeError(.notFound, "no reminder has ever had the id '\(id)': see 'chime list' and 'chime history'")
            }
            let shown =
                try Int.fetchOne(
                    db,
                    sql: "SELECT count(*) FROM occurrence WHERE reminder_key = ? AND state = 'posted'",
                    arguments: [row["key"] as Int64]
                ) ?? 0
            return ReminderDetail(
                reminder: try Self.reminder(from: row),
                state: row["state"],
                endedAt: (row["ended_us"] as Int64?).map(Date.init(micros:)),
                shownCount: shown
            )
        }
    }

    /// Changes the pending plain reminder `id` in place, keeping its id and its ledger: its
    /// title, its body, and (a one-shot's) its time. All in one transaction; nothing changes
    /// when anything is refused.
    /// - Throws: `.usage` for a bad title or body, a time not after `now`, or `at` for a
    ///   recurring reminder; `.notFound` when no reminder with the id is pending; `.conflict`
    ///   for a family's reminder (a dose alert, a focus session), naming the family's command.
    @discardableResult
    public func edit(id: String, title: String?, body: String?, at: Date?, now: Date) throws(ChimeError) -> Reminder {
        try write { db in
            guard let row = try Self.fetchPendingRow(id: id, in: db) else { throw try Self.notFound(id: id, in: db) }
            var reminder = try Self.reminder(from: row)
            guard reminder.kind == "plain" else { throw ChimeError.notEditable(id: id, kind: reminder.kind) }
            let checked = try NewReminder(
                id: id,
                title: title ?? reminder.title,
                body: body ?? reminder.body,
                trigger: reminder.trigger
            ).validated()
            if let at {
                guard case .once = reminder.trigger else {
                    throw ChimeError(
                        .usage,
                        "'\(id)' repeats (\(reminder.trigger.summary)): --at moves a one-shot only; "
                            + "to change a rule, schedule it again with the same --id"
                    )
                }
                guard at > now else { throw ChimeError(.usage, "the new time is in the past: give a future time") }
                guard try Self.moveOnce(id: id, to: at, in: db) else { throw try Self.notFound(id: id, in: db) }
                reminder.trigger = .once(at)
                reminder.nextDue = at
            }
            try db.execute(
                sql: "UPDATE reminder SET title = ?, body = ? WHERE key = ?",
                arguments: [checked.title, checked.body, row["key"] as Int64]
            )
            reminder.title = checked.title
            reminder.body = checked.body
            return reminder
        }
    }
}

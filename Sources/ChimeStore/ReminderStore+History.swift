import ChimeCore
import Foundation
import GRDB

extension ReminderStore {
    /// The ledger, oldest first: of reminder `id` (every reminder that had it) or of all, the
    /// occurrences due at or after `since`, at most the `limit` latest. Without an `id`, the
    /// hooks' runs (``HookEvent``) are among them, by their event's time: each hook that started,
    /// as an entry of kind `hook` (see ``HistoryEntry``); not one that waits for a runner.
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
            // The alerts, then the hooks that started (a hook's row: its subject as the id, its
            // event as the title, the event's time as the due time, its start as the posted
            // time), with `hook` 0 for an alert and the hook's row id for a hook: the last key
            // of the order.
            let select = """
                SELECT r.id AS id, r.kind, r.title, o.due_us AS due_us, o.state, o.missed_count, o.posted_us, o.via,
                       o.attempts, o.last_error, o.response, o.answered_us, r.body, o.command_state, o.command_started_us,
                       o.command_ended_us, o.command_pid, o.command_exit, o.command_output, o.command_error,
                       NULL AS hook_command, NULL AS hook_environment, 0 AS hook
                FROM occurrence o JOIN reminder r ON r.key = o.reminder_key
                WHERE (?1 IS NULL OR r.id = ?1) AND o.due_us >= ?2
                UNION ALL
                SELECT h.subject, 'hook', h.event, h.recorded_us, h.state, 0, h.started_us, 'hook',
                       0, NULL, NULL, NULL, '', h.state, h.started_us,
                       h.ended_us, h.pid, h.exit, h.output, h.error,
                       h.command, h.environment, h.id
                FROM hook_run h
                WHERE ?1 IS NULL AND h.state <> 'pending' AND h.recorded_us >= ?2
                """
            // The latest `limit`, turned oldest first; without a limit, one sort rather than two
            // (SQLite's sorter held both: 67 MB for 200,000 alerts, 17 MB more than one).
            let sql =
                limit == nil
                ? select + " ORDER BY due_us, id, hook"
                : "SELECT * FROM (" + select + " ORDER BY due_us DESC, id DESC, hook DESC LIMIT ?3) ORDER BY due_us, id, hook"
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
                let run = CommandRun(
                    state: row[13],
                    startedMicros: row[14],
                    endedMicros: row[15],
                    pid: row[16],
                    exitStatus: row[17],
                    output: row[18],
                    error: row[19]
                )
                if (row[22] as Int64) != 0 {
                    try body(Self.hookEntry(row, run: run))
                    continue
                }
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
                        answeredAt: (row[11] as Int64?).map(Date.init(micros:)),
                        command: run
                    )
                )
            }
        }
    }

    /// A hook's run from its row of ``eachHistory(id:since:limit:_:)``.
    private static func hookEntry(_ row: Row, run: CommandRun?) -> HistoryEntry {
        let text: String = row[21] ?? "{}"
        let environment = ((try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: String]) ?? [:]
        // A row from before its command was recorded cannot be: it is recorded as it starts.
        let command = (row[20] as String?).flatMap(ReminderCommand.init(stored:)) ?? ReminderCommand(.argv(["?"]))
        return HistoryEntry(
            reminderID: row[0],
            kind: HistoryEntry.hookKind,
            title: row[2],
            detail: environment["CHIME_TITLE"].flatMap { $0.isEmpty ? nil : $0 },
            due: Date(micros: row[3]),
            state: row[4],
            missedCount: 0,
            postedAt: (row[6] as Int64?).map(Date.init(micros:)),
            via: row[7],
            attempts: 0,
            lastError: nil,
            response: nil,
            answeredAt: nil,
            command: run,
            hookCommand: command
        )
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
    public func edit(
        id: String,
        title: String?,
        body: String?,
        at: Date?,
        command: CommandEdit? = nil,
        now: Date
    ) throws(ChimeError) -> Reminder {
        try write { db in
            guard let row = try Self.fetchPendingRow(id: id, in: db) else { throw try Self.notFound(id: id, in: db) }
            let reminder = try Self.reminder(from: row).edited(title: title, body: body, at: at, command: command, now: now)
            if let at { guard try Self.moveOnce(id: id, to: at, in: db) else { throw try Self.notFound(id: id, in: db) } }
            try db.execute(
                sql: "UPDATE reminder SET title = ?, body = ?, command = ? WHERE key = ?",
                arguments: [reminder.title, reminder.body, reminder.command?.stored, row["key"] as Int64]
            )
            return reminder
        }
    }
}

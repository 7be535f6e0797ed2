import ChimeCore
import Foundation

// `chime show` and `chime history` on the PostgreSQL store: the reminder table and the ledger
// (`occurrence`) read as the SQLite store's `detail(id:)` and `eachHistory(id:since:limit:)` read
// theirs. The CLI renders both stores' answers the same way.

extension PostgresStore {
    /// Whether any reminder ever had the id `id`.
    public func hasEverHad(id: String) throws -> Bool {
        for row in try client.rows("SELECT EXISTS (SELECT 1 FROM reminder WHERE id = \(id))") {
            return try row.decode(Bool.self)
        }
        return false
    }

    /// The latest reminder with the id `id`, pending or not, and how many of its occurrences
    /// were shown.
    /// - Throws: `.notFound` when none ever had it (the SQLite store's words).
    public func detail(id: String) throws -> ReminderDetail {
        try ReminderIdentifier.validate(id)
        let rows = try client.rows(
            """
            SELECT \(unescaped: Self.reminderColumns), state, ended_us,
                (SELECT count(*) FROM occurrence o WHERE o.reminder_key = reminder.key AND o.state = 'posted') AS shown
            FROM reminder WHERE id = \(id) ORDER BY key DESC LIMIT 1
            """
        )
        for row in rows {
            let r = row.makeRandomAccess()
            return ReminderDetail(
                reminder: try Self.reminder(from: row).reminder,
                state: try r["state"].decode(String.self),
                endedAt: try r["ended_us"].decode(Int64?.self).map(Date.init(micros:)),
                shownCount: Int(try r["shown"].decode(Int64.self))
            )
        }
        throw ChimeError(.notFound, "no reminder has ever had the id '\(id)': see 'chime list' and 'chime history'")
    }

    /// Calls `body` with each occurrence of the ledger, oldest first (by due instant, then id),
    /// as the rows arrive: of reminder `id` (every reminder that had it) or of all, those due at
    /// or after `since`, at most the `limit` latest.
    ///
    /// The ledger here records a reminder's next occurrence ahead, when it is scheduled or the
    /// one before it is shown; the SQLite ledger records one only once it is due. So that both
    /// list the same alerts, an occurrence is listed once it was due: a pending one due by the
    /// database's now, a cancelled one due by its reminder's end (the cancel or replace), or one a
    /// runner claimed.
    public func eachHistory(id: String? = nil, since: Date? = nil, limit: Int? = nil, _ body: (HistoryEntry) throws -> Void) throws {
        // The latest `limit`, turned oldest first (an Int spliced, never text from outside).
        let head = limit == nil ? "" : "SELECT * FROM ("
        let tail =
            limit.map { " ORDER BY o.due_us DESC, r.id DESC LIMIT \($0)) latest ORDER BY due_us, id" } ?? " ORDER BY o.due_us, r.id"
        let query: PostgresQuery = """
            \(unescaped: head)SELECT r.id, r.kind, r.title, o.due_us, o.state, o.missed_count,
                (extract(epoch FROM o.posted_at) * 1000000)::bigint AS posted_us, o.attempts, o.last_error, o.response,
                (extract(epoch FROM o.answered_at) * 1000000)::bigint AS answered_us, r.body, o.via, o.command_state,
                o.command_started_us, o.command_ended_us, o.command_pid, o.command_exit, o.command_output, o.command_error
            FROM occurrence o JOIN reminder r ON r.key = o.reminder_key
            WHERE (\(id)::text IS NULL OR r.id = \(id)) AND o.due_us >= \(since?.micros ?? Int64.min)
              AND (o.claimed_at IS NOT NULL OR o.snooze_of_us IS NOT NULL
                   OR o.due_us <= least(chime_now_us(), CASE WHEN o.state = 'cancelled' THEN r.ended_us END))\(unescaped: tail)
            """
        try client.forEachRow(query) { row in
            let kind = try row["kind"].decode(String.self)
            let text = try row["body"].decode(String.self)
            let firstLine = text.prefix { $0 != "\n" }
            let state = try row["state"].decode(String.self)
            try body(
                HistoryEntry(
                    reminderID: try row["id"].decode(String.self),
                    kind: kind,
                    title: try row["title"].decode(String.self),
                    detail: kind == "plain" || firstLine.isEmpty ? nil : String(firstLine),
                    due: Date(micros: try row["due_us"].decode(Int64.self)),
                    state: state == "pending" || state == "posting" ? "due" : state,
                    missedCount: try row["missed_count"].decode(Int.self),
                    postedAt: try row["posted_us"].decode(Int64?.self).map(Date.init(micros:)),
                    via: try row["via"].decode(String?.self),
                    attempts: try row["attempts"].decode(Int.self),
                    lastError: try row["last_error"].decode(String?.self),
                    response: try row["response"].decode(String?.self),
                    answeredAt: try row["answered_us"].decode(Int64?.self).map(Date.init(micros:)),
                    command: CommandRun(
                        state: try row["command_state"].decode(String?.self),
                        startedMicros: try row["command_started_us"].decode(Int64?.self),
                        endedMicros: try row["command_ended_us"].decode(Int64?.self),
                        pid: try row["command_pid"].decode(Int64?.self),
                        exitStatus: try row["command_exit"].decode(Int64?.self),
                        output: try row["command_output"].decode(String?.self),
                        error: try row["command_error"].decode(String?.self)
                    )
                )
            )
        }
    }
}

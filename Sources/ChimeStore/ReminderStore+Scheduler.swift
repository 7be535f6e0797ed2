import ChimeCore
import Foundation
import GRDB

extension ReminderStore: SchedulerStore {

    public func claimDue(now: Date, horizon: Date, systemZone: TimeZone) throws -> [PendingOccurrence] {
        let nowMicros = now.micros
        let horizonMicros = max(horizon.micros, nowMicros)
        return try write { db in
            let due = try Row.fetchAll(
                db,
                sql: """
                    SELECT * FROM reminder WHERE state = 'pending' AND next_due_us <= ? ORDER BY next_due_us LIMIT ?
                    """,
                arguments: [horizonMicros, Scheduler.claimBatch]
            )
            if !due.isEmpty {
                let record = try db.cachedStatement(
                    sql: """
                        INSERT INTO occurrence (reminder_key, due_us, state, missed_count, recorded_us, next_attempt_us)
                        VALUES (?, ?, 'due', ?, ?, ?) ON CONFLICT DO NOTHING
                        """
                )
                let finish = try db.cachedStatement(
                    sql: """
                        UPDATE reminder SET state = 'done', last_due_us = next_due_us, next_due_us = NULL, ended_us = ? WHERE key = ?
                        """
                )
                let advance = try db.cachedStatement(sql: "UPDATE reminder SET last_due_us = ?, next_due_us = ? WHERE key = ?")
                for row in due {
                    let key: Int64 = row["key"]
                    let dueMicros: Int64 = row["next_due_us"]
                    let trigger = try TriggerColumns.trigger(from: row)
                    guard trigger.isRecurring else {
                        try record.execute(arguments: [key, dueMicros, 0, nowMicros, max(dueMicros, nowMicros)])
                        try finish.execute(arguments: [nowMicros, key])
                        continue
                    }
                    // Fold the occurrences missed while down into the latest one: it fires once, late.
                    let (latest, missed) = trigger.caughtUp(from: Date(micros: dueMicros), through: now, systemZone: systemZone)
                    try record.execute(arguments: [key, latest.micros, missed, nowMicros, max(latest.micros, nowMicros)])
                    if let next = trigger.nextOccurrence(after: latest, systemZone: systemZone) {
                        try advance.execute(arguments: [latest.micros, next.micros, key])
                    } else {
                        try finish.execute(arguments: [nowMicros, key])
                    }
                }
            }
            return try Self.recordedDue(db, readyBy: horizonMicros)
        }
    }

    /// Occurrences recorded as due and ready at or before `micros`, by ready time (at most a
    /// claim batch).
    static func recordedDue(_ db: Database, readyBy micros: Int64) throws -> [PendingOccurrence] {
        try Row.fetchAll(
            db,
            sql: """
                SELECT \(pendingColumns)
                FROM occurrence o JOIN reminder r ON r.key = o.reminder_key
                WHERE o.state = 'due' AND o.next_attempt_us <= ? ORDER BY o.next_attempt_us, o.due_us LIMIT ?
                """,
            arguments: [micros, Scheduler.claimBatch]
        ).map(pendingOccurrence)
    }

    /// The columns ``pendingOccurrence(_:)`` reads, from `occurrence o JOIN reminder r`.
    static let pendingColumns = """
        o.reminder_key, o.due_us, o.missed_count, o.attempts, r.id, r.kind, r.title, r.body, o.next_attempt_us,
        r.urgency, r.sticky, r.icon, r.sound, r.actions, o.held_us, CASE WHEN o.snooze_of_us IS NULL THEN r.command END AS command
        """

    /// An occurrence recorded as due, from a row of ``pendingColumns``: one held until a family
    /// lets it go (no ready time) is ready at `distantFuture`.
    static func pendingOccurrence(_ row: Row) -> PendingOccurrence {
        PendingOccurrence(
            key: OccurrenceKey(reminderKey: row[0], dueMicros: row[1]),
            reminderID: row[4],
            kind: row[5],
            title: row[6],
            body: row[7],
            missedCount: row[2],
            attempts: row[3],
            readyAt: (row[8] as Int64?).map(Date.init(micros:)) ?? .distantFuture,
            presentation: presentation(from: row),
            heldSince: (row["held_us"] as Int64?).map(Date.init(micros:)),
            command: (row["command"] as String?).flatMap(ReminderCommand.init(stored:))
        )
    }

    public func dueWithoutClaiming(now: Date) throws -> [PendingOccurrence] {
        try read { db in
            let limit = Scheduler.claimBatch
            let recorded = try Self.recordedDue(db, readyBy: now.micros)
            let unrecorded = try Row.fetchAll(
                db,
                sql: """
                    SELECT key, next_due_us, id, kind, title, body, urgency, sticky, icon, sound, actions FROM reminder
                    WHERE state = 'pending' AND next_due_us <= ? ORDER BY next_due_us LIMIT ?
                    """,
                arguments: [now.micros, limit]
            ).map { row in
                PendingOccurrence(
                    key: OccurrenceKey(reminderKey: row[0], dueMicros: row[1]),
                    reminderID: row[2],
                    kind: row[3],
                    title: row[4],
                    body: row[5],
                    presentation: Self.presentation(from: row)
                )
            }
            return recorded + unrecorded
        }
    }

    public func recordShown(_ key: OccurrenceKey, at postedAt: Date, noteID: String, serverID: UInt32?, systemZone: TimeZone) throws {
        try write { db in
            try db.execute(
                sql: """
                    INSERT INTO occurrence (reminder_key, due_us, state, missed_count, recorded_us, posted_us, note_id, server_id)
                    VALUES (?, ?, 'posted', 0, ?, ?, ?, ?)
                    ON CONFLICT DO UPDATE SET state = 'posted', posted_us = excluded.posted_us, note_id = excluded.note_id,
                        server_id = excluded.server_id, next_attempt_us = NULL
                    WHERE state IN ('due', 'cancelled')
                    """,
                arguments: [key.reminderKey, key.dueMicros, postedAt.micros, postedAt.micros, noteID, serverID.map { Int64($0) }]
            )
            guard
                let row = try Row.fetchOne(
                    db,
                    sql: "SELECT * FROM reminder WHERE key = ? AND state = 'pending' AND next_due_us = ?",
                    arguments: [key.reminderKey, key.dueMicros]
                )
            else { return }
            let shown = Date(micros: key.dueMicros)
            if let next = try TriggerColumns.trigger(from: row).nextOccurrence(after: shown, systemZone: systemZone) {
                try db.execute(
                    sql: "UPDATE reminder SET last_due_us = ?, next_due_us = ? WHERE key = ?",
                    arguments: [key.dueMicros, next.micros, key.reminderKey]
                )
            } else {
                try db.execute(
                    sql: """
                        UPDATE reminder SET state = 'done', last_due_us = next_due_us, next_due_us = NULL, ended_us = ? WHERE key = ?
                        """,
                    arguments: [postedAt.micros, key.reminderKey]
                )
            }
        }
    }

    public func clampRetries(now: Date, maxWait: (_ attempts: Int) -> TimeInterval) throws {
        try write { db in
            // Only occurrences waiting for a retry (few, found through occurrence_undelivered);
            // one recorded ahead of its instant (no attempt yet) keeps waiting for that instant.
            let waiting = try Row.fetchAll(
                db,
                sql: """
                    SELECT reminder_key, due_us, attempts, next_attempt_us FROM occurrence
                    WHERE state = 'due' AND next_attempt_us > ? AND attempts > 0
                    """,
                arguments: [now.micros]
            )
            let update = try db.cachedStatement(sql: "UPDATE occurrence SET next_attempt_us = ? WHERE reminder_key = ? AND due_us = ?")
            for row in waiting {
                let limit = now.addingTimeInterval(maxWait(row[2])).micros
                let retry: Int64 = row[3]
                if retry > limit { try update.execute(arguments: [limit, row[0], row[1]] as StatementArguments) }
            }
        }
    }

    /// Records what was shown. An occurrence cancelled while it was being shown (the cancel
    /// committed between the runner's last look and its post) is recorded as posted too: the
    /// ledger says what a person saw, and the runner tells the cancel it came too late.
    public func markPosted(_ keys: [OccurrenceKey], at postedAt: Date, noteID: String, serverID: UInt32?) throws {
        try markPosted(keys, at: postedAt, noteID: noteID, serverID: serverID, via: nil)
    }

    public func markPosted(_ keys: [OccurrenceKey], at postedAt: Date, noteID: String, serverID: UInt32?, via: String?) throws {
        try write { db in
            let statement = try db.cachedStatement(
                sql: """
                    UPDATE occurrence SET state = 'posted', posted_us = ?, note_id = ?, server_id = ?, via = ?, next_attempt_us = NULL
                    WHERE reminder_key = ? AND due_us = ? AND state IN ('due', 'cancelled')
                    """
            )
            let server = serverID.map { Int64($0) }
            for key in keys {
                try statement.execute(arguments: [postedAt.micros, noteID, server, via, key.reminderKey, key.dueMicros])
            }
        }
    }

    public func markFailed(_ keys: [OccurrenceKey], at: Date, retryAt: Date, error: String) throws {
        try write { db in
            let statement = try db.cachedStatement(
                sql: """
                    UPDATE occurrence SET attempts = attempts + 1, next_attempt_us = ?, last_error = ?
                    WHERE reminder_key = ? AND due_us = ? AND state = 'due'
                    """
            )
            for key in keys {
                try statement.execute(arguments: [retryAt.micros, error, key.reminderKey, key.dueMicros])
            }
        }
    }

    /// Records what a person did with the alert shown for reminder `noteID` (its latest posted
    /// occurrence): an action invoked, or the alert closed. The first answer stands. Returns
    /// the reminder's kind when an answer was recorded, nil when none matched.
    @discardableResult
    public func recordResponse(_ response: NoteResponse, at: Date) throws -> String? {
        let text: String =
            switch response.kind {
            case .action(let key): key
            case .closed(let reason): "closed:" + reason.rawValue
            }
        return try write { db in
            guard
                let shown = try Row.fetchOne(
                    db,
                    sql: """
                        SELECT o.reminder_key, o.due_us, r.kind FROM occurrence o JOIN reminder r ON r.key = o.reminder_key
                        WHERE r.id = ? AND o.state = 'posted' ORDER BY o.posted_us DESC LIMIT 1
                        """,
                    arguments: [response.noteID]
                )
            else { return nil }
            try db.execute(
                sql: """
                    UPDATE occurrence SET response = ?, answered_us = ?
                    WHERE reminder_key = ? AND due_us = ? AND response IS NULL
                    """,
                arguments: [text, at.micros, shown[0], shown[1]] as StatementArguments
            )
            return db.changesCount > 0 ? shown[2] as String : nil
        }
    }

    /// The alerts shown for reminder `id` (every reminder that had that id: a family's repeats
    /// and snoozed re-alerts are new reminders under the same id) that have a server id: what
    /// may still be on a desktop.
    public func shownAlerts(id: String) throws -> [PostedNote] {
        try read { db in
            try Int64.fetchAll(
                db,
                sql: """
                    SELECT DISTINCT o.server_id FROM reminder r JOIN occurrence o ON o.reminder_key = r.key
                    WHERE r.id = ? AND o.state = 'posted' AND o.server_id IS NOT NULL
                    """,
                arguments: [id]
            ).compactMap { UInt32(exactly: $0).map { PostedNote(id: id, serverID: $0) } }
        }
    }

    public func nextDeadlines() throws -> (due: Date?, ready: Date?) {
        try read { db in
            let due = try Int64.fetchOne(db, sql: "SELECT min(next_due_us) FROM reminder WHERE state = 'pending'")
            let ready = try Int64.fetchOne(db, sql: "SELECT min(next_attempt_us) FROM occurrence WHERE state = 'due'")
            return (due.map(Date.init(micros:)), ready.map(Date.init(micros:)))
        }
    }

    // MARK: Commands

    public func beginCommand(_ key: OccurrenceKey, at instant: Date) throws -> Bool {
        try write { db in
            try db.execute(
                sql: """
                    UPDATE occurrence SET command_state = 'running', command_started_us = ?
                    WHERE reminder_key = ? AND due_us = ? AND command_state IS NULL
                    """,
                arguments: [instant.micros, key.reminderKey, key.dueMicros]
            )
            return db.changesCount > 0
        }
    }

    public func commandSpawned(_ key: OccurrenceKey, pid: Int32) throws {
        try write { db in
            try db.execute(
                sql: "UPDATE occurrence SET command_pid = ? WHERE reminder_key = ? AND due_us = ? AND command_state = 'running'",
                arguments: [Int64(pid), key.reminderKey, key.dueMicros]
            )
        }
    }

    public func finishCommand(_ key: OccurrenceKey, _ run: CommandRun) throws {
        try write { db in
            try db.execute(
                sql: """
                    UPDATE occurrence SET command_state = ?, command_ended_us = ?, command_exit = ?, command_output = ?, command_error = ?
                    WHERE reminder_key = ? AND due_us = ? AND command_state = 'running'
                    """,
                arguments: [
                    run.state.rawValue, (run.finishedAt ?? run.startedAt).micros, run.exitStatus.map { Int64($0) }, run.output,
                    run.error, key.reminderKey, key.dueMicros,
                ]
            )
        }
    }

    /// One runner per store: what is recorded as running at start-up was left by a runner that stopped.
    public func interruptCommands(at instant: Date) throws -> [String] {
        try write { db in
            let ids = try String.fetchAll(
                db,
                sql: """
                    SELECT r.id FROM occurrence o JOIN reminder r ON r.key = o.reminder_key
                    WHERE o.command_state = 'running' ORDER BY o.command_started_us
                    """
            )
            guard !ids.isEmpty else { return [] }
            try db.execute(
                sql: """
                    UPDATE occurrence SET command_state = 'interrupted', command_ended_us = ?, command_error = ?
                    WHERE command_state = 'running'
                    """,
                arguments: [instant.micros, CommandRun.interruptedReason]
            )
            return ids
        }
    }
}

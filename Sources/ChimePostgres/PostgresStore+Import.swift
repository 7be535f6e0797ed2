import ChimeCore
import Foundation

// `chime import` and `chime edit` on the PostgreSQL store, as on SQLite: a stream of
// reminders in one transaction, all of them or none; a pending plain reminder changed in place.

extension PostgresStore {
    /// What ``scheduleStream(replace:now:systemZone:keepIds:pastOneShots:channel:name:produce:)`` scheduled.
    public struct Streamed: Sendable, Hashable {
        public var count = 0
        /// How many replaced a pending reminder with the same id.
        public var replaced = 0
        /// The ids scheduled, in order (with `keepIds`).
        public var ids: [String] = []
    }

    /// Schedules the reminders `produce` hands over, a chunk at a time (ChimeCore's
    /// `ReminderImport.Reader`), in one transaction: a bad reminder anywhere, or an error of
    /// `produce`, rolls back every one before it. Each is scheduled as
    /// ``schedule(_:replace:systemZone:channel:)`` schedules one, its first occurrence the
    /// trigger's first instant after `now`; one NOTIFY at the commit wakes the runners.
    /// - Parameters:
    ///   - now: the database's clock (``databaseNow()``), which the reader also judged "passed" by.
    ///   - pastOneShots: a one-shot whose time has passed is scheduled at that time (shown at
    ///     once, late: `--past fire`) rather than refused.
    ///   - name: prefixes the message of an error about the reminder at an index ("f.json: reminder 3").
    /// - Throws: `.usage` naming the reminder for a bad one or an id given twice; `.conflict`
    ///   for a taken id without `replace`.
    public func scheduleStream(
        replace: Bool = true,
        now: Date,
        systemZone: TimeZone,
        keepIds: Bool = true,
        pastOneShots: Bool = false,
        channel: String = PostgresStore.defaultChannel,
        name: @escaping (Int) -> String,
        produce: (_ chunk: ([NewReminder]) throws -> Void) throws -> Void
    ) throws -> Streamed {
        try Self.validateChannel(channel)
        return try transaction { connection in
            let nowMicros = now.micros
            var rng = SystemRandomNumberGenerator()
            var streamed = Streamed()
            try produce { chunk in
                for new in chunk {
                    let index = streamed.count
                    do {
                        let checked = try new.validated()
                        let due: Int64
                        if pastOneShots, case .once(let at) = checked.trigger, at <= now {
                            due = at.micros
                        } else if let next = checked.trigger.nextOccurrence(after: now, systemZone: systemZone) {
                            due = next.micros
                        } else if case .bounded(_, let end) = checked.trigger {
                            throw ChimeError(
                                .usage,
                                "'\(checked.title)' would never fire: its rule ends (\(end.summary)) before its first occurrence"
                            )
                        } else {
                            throw ChimeError(.usage, "'\(checked.title)' would never fire: its time is in the past")
                        }
                        let result = try Self.insert(
                            checked,
                            nextDue: due,
                            replace: replace,
                            nowMicros: nowMicros,
                            channel: channel,
                            rng: &rng,
                            connection,
                            taken: { id, key in
                                try Self.streamPosition(key: key, connection).map { position in
                                    ChimeError(.usage, "the id '\(id)' is also reminder \(position)'s: give each reminder its own id")
                                }
                            }
                        )
                        streamed.count += 1
                        if result.replaced { streamed.replaced += 1 }
                        if keepIds { streamed.ids.append(result.reminder.id) }
                    } catch let error as ChimeError {
                        throw ChimeError(error.code, "\(name(index)): \(error.message)")
                    }
                }
            }
            if streamed.count > 0 { try Self.notifyChange(id: "", connection) }
            return streamed
        }
    }

    /// When the pending reminder `key` was inserted by this transaction: its position among
    /// those this transaction inserted (1 for the first). Nil for a reminder of before.
    /// (The rows this transaction wrote carry its id as `xmin`; the reminders it replaced are
    /// no longer pending.)
    static func streamPosition(key: Int64, _ connection: PostgresSession) throws -> Int? {
        let rows = try connection.rows(
            """
            SELECT count(*) FROM reminder
            WHERE xmin = xid(pg_current_xact_id()) AND state = 'pending' AND key <= \(key)
              AND EXISTS (SELECT 1 FROM reminder WHERE key = \(key) AND xmin = xid(pg_current_xact_id()))
            """
        )
        for row in rows {
            let count = try row.decode(Int64.self)
            return count > 0 ? Int(count) : nil
        }
        return nil
    }

    /// Changes the pending plain reminder `id` in place, keeping its id: its title, its body,
    /// and (a one-shot's) its time, as the SQLite store's `edit` does. All in one transaction;
    /// nothing changes when anything is refused. Notifies ``changesChannel``.
    ///
    /// A runner that has the reminder's occurrence claimed (it is being shown now) keeps it: a
    /// new time is refused then (`.tooLate`), since moving it would show it twice, and cancelling
    /// the claim could show it never. Its occurrences are locked first (a claim skips them until
    /// the edit commits, then finds only the new time), before the reminder, as a mark locks them.
    /// - Parameter at: the new time, compared with the database's clock.
    /// - Throws: `.usage` for a bad title or body, a time not in the future, or `at` for a
    ///   recurring reminder; `.notFound`; `.conflict` for a family's reminder; `.tooLate`.
    @discardableResult
    /// - Parameter command: the command it runs from now on, or none (nil: unchanged).
    public func edit(id: String, title: String?, body: String?, at: Date?, command: CommandEdit? = nil) throws -> Reminder {
        try ReminderIdentifier.validate(id)
        return try transaction { connection in
            // With a new time, its occurrences are locked before the reminder, in the order a
            // runner's mark locks them (the occurrence, then the reminder it advances): the
            // other order could deadlock with a mark, and PostgreSQL would abort one of the two.
            var lockedOccurrences: [(due: Int64, state: String)] = []
            var pendingKey: Int64?
            if at != nil {
                for row in try connection.rows("SELECT key FROM reminder WHERE id = \(id) AND state = 'pending'") {
                    pendingKey = try row.decode(Int64.self)
                }
                if let pendingKey {
                    let occurrences = try connection.rows(
                        """
                        SELECT due_us, state FROM occurrence WHERE reminder_key = \(pendingKey) AND state IN ('pending', 'posting')
                        FOR UPDATE
                        """
                    )
                    for row in occurrences {
                        let (due, state) = try row.decode((Int64, String).self)
                        lockedOccurrences.append((due, state))
                    }
                }
            }
            var found: (key: Int64, reminder: Reminder)?
            let rows = try connection.rows(
                "SELECT \(unescaped: Self.reminderColumns) FROM reminder WHERE id = \(id) AND state = 'pending' FOR UPDATE"
            )
            for row in rows { found = try Self.reminder(from: row) }
            guard let (key, old) = found else { throw try Self.notFound(id: id, connection) }
            if at != nil && pendingKey != key {
                // Replaced (scheduled again with its id) between the two reads.
                throw ChimeError(.conflict, "'\(id)' was scheduled again from elsewhere as it was edited: edit it again")
            }
            let reminder = try old.edited(
                title: title,
                body: body,
                at: at,
                command: command,
                now: Date(micros: try Self.now(connection))
            )
            if let at {
                // Locked above: a runner's claim skips them until this commits (and then finds
                // the old one cancelled and the new one not yet due); a mark waits for it.
                if let posting = lockedOccurrences.first(where: { $0.state == "posting" })?.due {
                    throw ChimeError(
                        .tooLate,
                        "too late: '\(id)' (due \(TimeText.iso(Date(micros: posting)))) is being shown by a runner now: its time can no longer be moved"
                    )
                }
                try connection.run(
                    "UPDATE occurrence SET state = 'cancelled' WHERE reminder_key = \(key) AND state = 'pending'"
                )
                // Moved back to a time it had: that occurrence, cancelled by the first move, is pending again.
                try connection.run(
                    """
                    INSERT INTO occurrence (reminder_key, due_us) VALUES (\(key), \(at.micros))
                    ON CONFLICT (reminder_key, due_us) DO UPDATE SET state = 'pending', attempts = 0, missed_count = 0,
                        lease_owner = NULL, lease_until = NULL, retry_at = NULL, last_error = NULL, held_us = NULL
                    WHERE occurrence.state = 'cancelled'
                    """
                )
                try connection.run(
                    "UPDATE reminder SET at_us = \(at.micros), next_due_us = \(at.micros) WHERE key = \(key)"
                )
            }
            try connection.run(
                """
                UPDATE reminder SET title = \(reminder.title), body = \(reminder.body), command = \(reminder.command?.stored)
                WHERE key = \(key)
                """
            )
            try Self.notifyChange(id: id, connection)
            return reminder
        }
    }
}

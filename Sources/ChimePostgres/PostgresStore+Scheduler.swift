import ChimeCore
import Foundation
import Logging
import PostgresNIO

/// What ``PostgresStore/markPosted(_:owner:noteID:systemZone:)`` did.
public struct MarkResult: Sendable, Hashable {
    /// Recorded as posted by this call.
    public var posted: [OccurrenceKey] = []
    /// Not recorded: this owner no longer held their lease (it expired, was reaped, and maybe
    /// another runner claimed and posted them). The caller counts them: each is a possible
    /// duplicate alert.
    public var leaseLost: [OccurrenceKey] = []
    /// Next occurrences of recurring reminders this call recorded in the ledger.
    public var materialized: Int = 0
}

extension PostgresStore {
    /// Most occurrences one recurring reminder folds together when catching up (as the SQLite store).
    static let missedCountCap = 10_000

    /// Claims up to `limit` occurrences due at the database's `now()`, soonest first, for
    /// `owner` until `now() + lease`: they become `posting`, and no other runner's claim sees
    /// them until ``reapExpiredLeases()`` returns them after the lease.
    ///
    /// One statement: the inner SELECT locks the rows it picks `FOR UPDATE SKIP LOCKED`
    /// (PostgreSQL 15 docs, SELECT, "The Locking Clause": rows another transaction has locked
    /// are skipped rather than waited for; an inconsistent view, "suitable for queue-like
    /// tables"), and the UPDATE takes the lease on exactly those. The selection is a
    /// `MATERIALIZED` CTE that the UPDATE's `IN` reads: with the sub-SELECT written inside the
    /// `IN`, the planner may run it more than once in a nested loop and update more rows than
    /// the LIMIT (a known surprise with SKIP LOCKED, reported e.g. as LIMIT "ignored" under load).
    public func claimDue(owner: String, lease: Duration, limit: Int = Scheduler.claimBatch) async throws -> [PendingOccurrence] {
        let leaseMicros = Self.micros(lease)
        let rows = try await client.rows(
            """
            WITH picked AS MATERIALIZED (
                SELECT reminder_key, due_us FROM occurrence
                WHERE state = 'pending' AND due_us <= chime_now_us()
                ORDER BY due_us LIMIT \(Int64(limit)) FOR UPDATE SKIP LOCKED)
            UPDATE occurrence o SET state = 'posting', lease_owner = \(owner),
                lease_until = now() + \(leaseMicros) * interval '1 microsecond', claimed_at = now()
            FROM reminder r
            WHERE (o.reminder_key, o.due_us) IN (SELECT reminder_key, due_us FROM picked) AND r.key = o.reminder_key
            RETURNING o.reminder_key, o.due_us, o.missed_count, o.attempts, r.id, r.kind, r.title, r.body
            """,
            logger: logger
        )
        var claimed: [PendingOccurrence] = []
        for row in rows {
            let (key, due, missed, attempts, id, kind, title, body) = try row.decode(
                (Int64, Int64, Int, Int, String, String, String, String).self
            )
            claimed.append(
                PendingOccurrence(
                    key: OccurrenceKey(reminderKey: key, dueMicros: due),
                    reminderID: id,
                    kind: kind,
                    title: title,
                    body: body,
                    missedCount: missed,
                    attempts: attempts
                )
            )
        }
        return claimed.sorted { ($0.key.dueMicros, $0.key.reminderKey) < ($1.key.dueMicros, $1.key.reminderKey) }
    }

    /// Records `keys` as posted by `owner`, fenced on the lease: only occurrences still
    /// `posting` under `owner`'s lease are recorded (`WHERE state = 'posting' AND lease_owner =
    /// owner`); the others are returned in ``MarkResult/leaseLost``. In the same transaction,
    /// for each recorded occurrence that is its reminder's next due one, the reminder advances:
    /// a one-shot is done; a recurring reminder's next occurrence after it (those already past
    /// the database's `now()` folded into the latest, as the SQLite store folds them) is
    /// recorded as pending in the ledger, whose key (reminder, due instant) makes that once
    /// however runners race.
    public func markPosted(_ keys: [OccurrenceKey], owner: String, noteID: String, systemZone: TimeZone) async throws -> MarkResult {
        guard !keys.isEmpty else { return MarkResult() }
        let reminderKeys = keys.map(\.reminderKey)
        let dues = keys.map(\.dueMicros)
        return try await transaction { connection in
            var result = MarkResult()
            let rows = try await connection.rows(
                """
                UPDATE occurrence SET state = 'posted', posted_at = now(), note_id = \(noteID), lease_until = NULL
                WHERE state = 'posting' AND lease_owner = \(owner)
                  AND (reminder_key, due_us) IN (SELECT * FROM unnest(\(reminderKeys)::bigint[], \(dues)::bigint[]))
                RETURNING reminder_key, due_us
                """,
                logger: logger
            )
            var posted = Set<OccurrenceKey>()
            for row in rows {
                let (key, due) = try row.decode((Int64, Int64).self)
                posted.insert(OccurrenceKey(reminderKey: key, dueMicros: due))
            }
            result.posted = keys.filter { posted.contains($0) }
            result.leaseLost = keys.filter { !posted.contains($0) }
            guard !result.posted.isEmpty else { return result }
            let nowMicros = try await Self.now(connection, logger)
            for key in result.posted {
                if try await Self.advance(after: key, nowMicros: nowMicros, systemZone: systemZone, connection, logger) {
                    result.materialized += 1
                }
            }
            return result
        }
    }

    /// Advances the reminder of `key` past it when `key` is its next due occurrence: finishes a
    /// one-shot (or a rule that ended), or records the next occurrence. Returns whether it
    /// recorded one (false also when the ledger already had it).
    static func advance(
        after key: OccurrenceKey,
        nowMicros: Int64,
        systemZone: TimeZone,
        _ connection: PostgresConnection,
        _ logger: Logger
    ) async throws -> Bool {
        let rows = try await connection.rows(
            """
            SELECT \(unescaped: reminderColumns) FROM reminder
            WHERE key = \(key.reminderKey) AND state = 'pending' AND next_due_us = \(key.dueMicros) FOR UPDATE
            """,
            logger: logger
        )
        var found: Reminder?
        for row in rows { found = try reminder(from: row).reminder }
        guard let reminder = found else { return false }
        let due = Date(micros: key.dueMicros)
        guard var next = reminder.trigger.nextOccurrence(after: due, systemZone: systemZone) else {
            try await connection.run(
                """
                UPDATE reminder SET state = 'done', last_due_us = next_due_us, next_due_us = NULL, ended_us = \(nowMicros)
                WHERE key = \(key.reminderKey)
                """,
                logger: logger
            )
            return false
        }
        // Occurrences already past the database's now fold into the latest of them: it fires
        // once, late, saying how many it stands for.
        var missed = 0
        while next.micros <= nowMicros, missed < missedCountCap,
            let after = reminder.trigger.nextOccurrence(after: next, systemZone: systemZone), after.micros <= nowMicros
        {
            next = after
            missed += 1
        }
        let inserted = try await connection.rows(
            """
            INSERT INTO occurrence (reminder_key, due_us, missed_count) VALUES (\(key.reminderKey), \(next.micros), \(missed))
            ON CONFLICT (reminder_key, due_us) DO NOTHING RETURNING 1
            """,
            logger: logger
        )
        var recorded = false
        recorded = !inserted.isEmpty
        try await connection.run(
            "UPDATE reminder SET last_due_us = \(key.dueMicros), next_due_us = \(next.micros) WHERE key = \(key.reminderKey)",
            logger: logger
        )
        return recorded
    }

    /// Returns every occurrence whose lease has expired by the database's `now()` to `pending`
    /// (or to `cancelled`, when its reminder was cancelled meanwhile), for any runner to claim.
    /// Any runner may call it at any time: there is no leader. Returns how many it returned.
    @discardableResult
    public func reapExpiredLeases() async throws -> Int {
        let rows = try await client.rows(
            """
            UPDATE occurrence o
            SET state = CASE WHEN r.state = 'cancelled' THEN 'cancelled' ELSE 'pending' END,
                lease_owner = NULL, lease_until = NULL
            FROM reminder r
            WHERE r.key = o.reminder_key AND o.state = 'posting' AND o.lease_until < now()
            RETURNING 1
            """,
            logger: logger
        )
        var count = 0
        count = rows.count
        return count
    }

    /// The earliest due instant of a pending occurrence, and the earliest end of a lease
    /// (when the reaper has something to do), for a runner's timer.
    public func nextDeadlines() async throws -> (due: Date?, leaseEnds: Date?) {
        let rows = try await client.rows(
            """
            SELECT (SELECT min(due_us) FROM occurrence WHERE state = 'pending'),
                   (SELECT (extract(epoch FROM min(lease_until)) * 1000000)::bigint FROM occurrence WHERE state = 'posting')
            """,
            logger: logger
        )
        for row in rows {
            let (due, lease) = try row.decode((Int64?, Int64?).self)
            return (due.map(Date.init(micros:)), lease.map(Date.init(micros:)))
        }
        return (nil, nil)
    }

    /// A duration in whole microseconds (rounded down).
    static func micros(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1_000_000 + attoseconds / 1_000_000_000_000
    }
}

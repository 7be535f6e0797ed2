// postgres: the SQL the bench runs itself: the seed and the burst (one INSERT … SELECT from
// generate_series each), the ledger's figures, the claim and mark of the pgbench floor (the
// store's own claim statement), and nextDeadlines' statement for EXPLAIN.
import ChimeCore
import ChimePostgres
import Foundation

enum BenchSQL {
    /// `count` pending one-shots `PREFIXn` and their first occurrences, due at `dueExpression`
    /// (SQL over `i`, 1…count, and `now_us`, the database's clock), in one statement: the columns
    /// `PostgresStore.schedule` writes for a one-shot (its trigger's other columns stay NULL, as
    /// `TriggerColumns(.once)` leaves them, and `channel` its default, `default`, as `schedule`
    /// writes without --channel), then a NOTIFY on the changes channel in the same
    /// transaction, as `schedule` does, so that runners re-read their deadlines.
    static func insertOneShots(count: Int, prefix: String, title: String, dueExpression: String) -> String {
        """
        WITH s AS (SELECT i, now_us, \(dueExpression) AS due
                   FROM (SELECT chime_now_us() AS now_us) n, generate_series(1, \(count)) AS i),
        r AS (INSERT INTO reminder (id, kind, title, body, trigger_kind, at_us, created_us, next_due_us)
              SELECT '\(prefix)' || i, 'plain', '\(title) ' || i, '', 'once', due, now_us, due FROM s
              RETURNING key, next_due_us)
        INSERT INTO occurrence (reminder_key, due_us) SELECT key, next_due_us FROM r;
        SELECT pg_notify('\(PostgresStore.changesChannel)', '\(prefix)');
        """
    }

    /// What is left to post of the occurrences due by `lastDue` (µs): pending and due, or being
    /// posted. Both counts read a small partial index (`occurrence_pending_due`,
    /// `occurrence_posting_lease`), never the 1,000,000 rows: the bench polls it while runners work.
    static func remaining(lastDue: Int64) -> String {
        """
        SELECT (SELECT count(*) FROM occurrence WHERE state = 'pending' AND due_us <= \(lastDue))
             + (SELECT count(*) FROM occurrence WHERE state = 'posting')
        """
    }

    /// The ledger's figures for the posted occurrences that match `filter`: how many, seconds
    /// from the first `posted_at` to the last, and lateness (`posted_at - due`, ms) p50, p99, max.
    static func ledger(filter: String = "true") -> String {
        """
        SELECT count(*), coalesce(extract(epoch FROM max(posted_at) - min(posted_at)), 0),
               coalesce(percentile_cont(0.5) WITHIN GROUP (ORDER BY late), 'NaN'),
               coalesce(percentile_cont(0.99) WITHIN GROUP (ORDER BY late), 'NaN'), coalesce(max(late), 'NaN')
        FROM (SELECT posted_at, (extract(epoch FROM posted_at) * 1000000 - due_us) / 1000.0 AS late
              FROM occurrence WHERE state = 'posted' AND \(filter)) x
        """
    }

    /// The store's claim statement (`PostgresStore.claimQuery`, what `claimDue` sends) with its
    /// parameters written in: the channel `default`, `limit`, `owner` (SQL: a literal, or pgbench's
    /// `'pgbench ' || :client_id`) and the lease. The parameters are numbered in the order the
    /// statement interpolates them; the result is checked to have none left.
    static func claim(owner: String, leaseMicros: Int64, limit: Int) throws -> String {
        let query = PostgresStore.claimQuery(
            owner: "owner",
            lease: .microseconds(leaseMicros),
            channels: [PostgresStore.defaultChannel],
            limit: limit
        )
        let values = ["ARRAY['\(PostgresStore.defaultChannel)']", "\(limit)", owner, "\(leaseMicros)"]
        guard query.values.count == values.count else {
            throw ChimeError(.failure, "PostgresStore.claimQuery has \(query.values.count) parameters, the bench knows \(values.count)")
        }
        var sql = query.sql
        for (index, value) in values.enumerated().reversed() { sql = sql.replacingOccurrences(of: "$\(index + 1)", with: value) }
        guard !sql.contains("$") else { throw ChimeError(.failure, "a parameter of PostgresStore.claimQuery is left: \(sql)") }
        return sql
    }

    /// `PostgresStore.nextDeadlines(channels:)`' statement as PostgresStore+Scheduler.swift writes
    /// it (inline there, so copied here), for a runner serving the channel `default`.
    static let nextDeadlines = """
        SELECT chime_now_us(),
            (SELECT o.due_us FROM occurrence o JOIN reminder r ON r.key = o.reminder_key
             WHERE o.state = 'pending' AND o.retry_at IS NULL AND (false OR r.channel = ANY(ARRAY['\(PostgresStore.defaultChannel)']::text[]))
             ORDER BY o.due_us LIMIT 1),
            (SELECT min(greatest(o.due_us, (extract(epoch FROM o.retry_at) * 1000000)::bigint))
             FROM occurrence o JOIN reminder r ON r.key = o.reminder_key
             WHERE o.state = 'pending' AND o.retry_at IS NOT NULL AND (false OR r.channel = ANY(ARRAY['\(PostgresStore.defaultChannel)']::text[]))),
            (SELECT (extract(epoch FROM min(lease_until)) * 1000000)::bigint FROM occurrence WHERE state = 'posting')
        """

    /// The pgbench script of the floor: the bare claim of one occurrence (the store's statement
    /// with LIMIT 1, wrapped so that it always returns one row: pgbench's `\gset` needs one, and a
    /// client that finds nothing left must go on rather than abort), then, when it claimed one,
    /// the fenced mark (`WHERE state = 'posting' AND lease_owner = me`), each in a transaction of
    /// its own, as a runner's claim and mark are. Nothing else: no notifier, no next occurrence.
    static func floorScript(leaseMicros: Int64) throws -> String {
        let owner = "'pgbench ' || :client_id"
        let claimed = try claim(owner: owner, leaseMicros: leaseMicros, limit: 1)
        // The claim's CTE and UPDATE, as a second CTE whose rows are counted.
        let body = claimed.replacingOccurrences(of: "\nUPDATE occurrence o", with: ",\nclaimed AS (UPDATE occurrence o")
        return """
            \(body))
            SELECT count(*) AS n, coalesce(min(reminder_key), 0) AS rk, coalesce(min(due_us), 0) AS du FROM claimed
            \\gset
            \\if :n > 0
            UPDATE occurrence SET state = 'posted', posted_at = now(), note_id = 'pgbench', lease_until = NULL
            WHERE state = 'posting' AND lease_owner = \(owner) AND reminder_key = :rk AND due_us = :du;
            \\endif

            """
    }
}

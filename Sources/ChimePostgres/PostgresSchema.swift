import ChimeCore

/// One named, forward-only step of the PostgreSQL schema. Applied once, in order, recorded by
/// name in `chime_migrations`; never edited once shipped (a change is a new migration).
public struct PostgresMigration: Sendable, Hashable {
    public var name: String
    /// One statement each: a statement with parameters goes with the extended protocol, which
    /// takes a single statement (PostgreSQL 15 docs, 55.2.3 "Extended Query").
    public var statements: [String]
}

/// The schema of the PostgreSQL store.
///
/// The reminder table has the SQLite store's columns for a trigger (ChimeCore's
/// ``TriggerColumns``) and its states; times are microseconds since 1970 (`*_us`), as in the
/// SQLite store, so that an ``OccurrenceKey`` is the same on both. The ledger (`occurrence`) is
/// unique on (reminder, due instant): an occurrence is recorded once, however many runners race.
/// Lease times are `timestamptz`, compared only with the database's `now()`.
public enum PostgresSchema {
    public static let migrations: [PostgresMigration] = [
        PostgresMigration(
            name: "0001-reminders-and-ledger",
            statements: [
                // The database's clock, in the store's unit: every comparison with "now" goes
                // through it, so runners whose clocks disagree agree on what is due. extract()
                // returns numeric since PostgreSQL 14, so the product is exact.
                """
                CREATE FUNCTION chime_now_us() RETURNS bigint LANGUAGE sql STABLE
                AS 'SELECT (extract(epoch FROM now()) * 1000000)::bigint'
                """,
                """
                CREATE TABLE reminder (
                    key bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                    id text NOT NULL,
                    kind text NOT NULL DEFAULT 'plain',
                    title text NOT NULL,
                    body text NOT NULL DEFAULT '',
                    state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'done', 'cancelled', 'replaced')),
                    trigger_kind text NOT NULL,
                    at_us bigint, times text, days integer, zone text, interval_s bigint, anchor_us bigint,
                    by_month integer, by_month_day integer, until_day integer, rule_count integer, count_start_us bigint,
                    created_us bigint NOT NULL,
                    next_due_us bigint,
                    last_due_us bigint,
                    ended_us bigint
                )
                """,
                "CREATE UNIQUE INDEX reminder_pending_id ON reminder (id) WHERE state = 'pending'",
                """
                CREATE TABLE occurrence (
                    reminder_key bigint NOT NULL REFERENCES reminder (key),
                    due_us bigint NOT NULL,
                    state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'posting', 'posted', 'cancelled')),
                    missed_count integer NOT NULL DEFAULT 0,
                    attempts integer NOT NULL DEFAULT 0,
                    lease_owner text,
                    lease_until timestamptz,
                    claimed_at timestamptz,
                    posted_at timestamptz,
                    note_id text,
                    PRIMARY KEY (reminder_key, due_us)
                )
                """,
                // What claimDue scans (the pending, by due time) and what the reaper scans.
                "CREATE INDEX occurrence_pending_due ON occurrence (due_us) WHERE state = 'pending'",
                "CREATE INDEX occurrence_posting_lease ON occurrence (lease_until) WHERE state = 'posting'",
            ]
        ),
        PostgresMigration(
            name: "0002-channels-and-retries",
            statements: [
                // The channel that shows a reminder: a runner claims only the channels it serves
                // (desktop alerts by a runner in that user's session, server-side ones by any).
                // ADD COLUMN with a constant default rewrites no rows (PostgreSQL 11+).
                "ALTER TABLE reminder ADD COLUMN channel text NOT NULL DEFAULT 'default'",
                // A failed post: the occurrence is pending again, not ready before retry_at (NULL:
                // ready at its due time); last_error says why, for a person reading the ledger.
                "ALTER TABLE occurrence ADD COLUMN retry_at timestamptz",
                "ALTER TABLE occurrence ADD COLUMN last_error text",
            ]
        ),
        PostgresMigration(
            name: "0003-pending-retries-index",
            statements: [
                // nextDeadlines' earliest retry: without it, a Seq Scan of the whole ledger after
                // every pass (152 ms on a million occurrences: chime-bench postgres, EXPLAIN). Few
                // occurrences are waiting for a retry, so the index is small.
                "CREATE INDEX occurrence_pending_retry ON occurrence (retry_at) WHERE state = 'pending' AND retry_at IS NOT NULL"
            ]
        ),
        PostgresMigration(
            name: "0004-pending-by-due-then-claimed",
            statements: [
                // The claim takes the pending by due instant, then those claimed before first
                // (claimed_at is set by a claim and kept when the reaper returns the occurrence;
                // NULL, never claimed, sorts last). Among equal due instants the index kept heap
                // order, and a returned occurrence, a new row version, came after all the others:
                // in a burst of 50,000 due at once, a dead runner's occurrences waited for the
                // whole backlog (chime-bench postgres, failover: 5 of 10 not posted 45 s after
                // the kill). CREATE INDEX blocks writes to the ledger while it builds (about 2 s
                // on a million pending); `chime store init` is run while runners are stopped.
                "DROP INDEX occurrence_pending_due",
                "CREATE INDEX occurrence_pending_due ON occurrence (due_us, claimed_at) WHERE state = 'pending'",
            ]
        ),
        PostgresMigration(
            name: "0005-presentation",
            statements: [
                // How a reminder's alert looks, as the SQLite store keeps it (its v7): low, normal
                // or critical (NULL: normal); stays until answered; an icon-theme name or an
                // absolute path; a sound-theme name. The claim returns them to the runner.
                "ALTER TABLE reminder ADD COLUMN urgency text CHECK (urgency IN ('low', 'normal', 'critical'))",
                "ALTER TABLE reminder ADD COLUMN sticky boolean NOT NULL DEFAULT false",
                "ALTER TABLE reminder ADD COLUMN icon text",
                "ALTER TABLE reminder ADD COLUMN sound text",
                // The answer recorded for a posted occurrence, as the SQLite ledger's `response`
                // and `answered_us`: only `cancelled` so far (`chime cancel` of a one-shot that
                // fired and is still showing; a second cancel then finds nothing showing).
                "ALTER TABLE occurrence ADD COLUMN response text",
                "ALTER TABLE occurrence ADD COLUMN answered_at timestamptz",
            ]
        ),
        PostgresMigration(
            name: "0006-answers-and-quiet",
            statements: [
                // The notification server's own id for a posted alert (the desktop's), so that
                // the runner that showed it can close it or replace it by a confirmation once a
                // command answered or cancelled it.
                "ALTER TABLE occurrence ADD COLUMN server_id bigint",
                // The channel that showed it (`desktop`, `json`, `webhook`...), for `chime history`.
                "ALTER TABLE occurrence ADD COLUMN via text",
                // A snooze's re-alert: one more occurrence of the same reminder, due at the
                // snooze's end; snooze_of_us is the due instant of the alert snoozed, at most one
                // re-alert each (as the SQLite ledger's `occurrence_snooze`).
                "ALTER TABLE occurrence ADD COLUMN snooze_of_us bigint",
                "CREATE UNIQUE INDEX occurrence_snooze ON occurrence (reminder_key, snooze_of_us) WHERE snooze_of_us IS NOT NULL",
                // Held by quiet since this instant (the database's clock): pending, not ready
                // before retry_at ('infinity': until released), and in the summary when it ends.
                "ALTER TABLE occurrence ADD COLUMN held_us bigint",
                "CREATE INDEX occurrence_held ON occurrence (due_us) WHERE state = 'pending' AND held_us IS NOT NULL",
                // What `chime done`, `snooze` and the alerts' answers look up: a reminder's posted
                // occurrences by id, the latest first.
                "CREATE INDEX reminder_id ON reminder (id)",
                "CREATE INDEX occurrence_posted ON occurrence (reminder_key, posted_at) WHERE state = 'posted'",
                // The quiet settings and the quiet asked for by hand, as the SQLite store's
                // `quiet` table: one row, read by every runner at every pass.
                """
                CREATE TABLE quiet (
                    id integer PRIMARY KEY CHECK (id = 1),
                    hours_start text,
                    hours_end text,
                    essential text NOT NULL DEFAULT 'come' CHECK (essential IN ('come', 'wait')),
                    family_hold boolean NOT NULL DEFAULT true,
                    until_us bigint,
                    window_off_until_us bigint,
                    CHECK ((hours_start IS NULL) = (hours_end IS NULL))
                )
                """,
            ]
        ),
        PostgresMigration(
            name: "0007-commands",
            statements: [
                // The command a reminder runs when it fires, as the SQLite store keeps it (its
                // v10): ReminderCommand's JSON (argv or shell, time limit).
                "ALTER TABLE reminder ADD COLUMN command text",
                // Each occurrence's run of it, recorded as running before it is spawned (only by
                // the runner that posted the occurrence, once: the UPDATE's WHERE command_state IS
                // NULL), so that a runner killed while it runs is reported (interrupted) rather
                // than run again. The columns are the SQLite ledger's: its pid, start and end
                // (the database's clock), exit status (128 + N for signal N), the first lines of
                // its output, why it did not start or what interrupted it.
                """
                ALTER TABLE occurrence ADD COLUMN command_state text
                    CHECK (command_state IN ('running', 'exited', 'timed_out', 'interrupted', 'failed'))
                """,
                "ALTER TABLE occurrence ADD COLUMN command_pid integer",
                "ALTER TABLE occurrence ADD COLUMN command_started_us bigint",
                "ALTER TABLE occurrence ADD COLUMN command_ended_us bigint",
                "ALTER TABLE occurrence ADD COLUMN command_exit integer",
                "ALTER TABLE occurrence ADD COLUMN command_output text",
                "ALTER TABLE occurrence ADD COLUMN command_error text",
                // The runner that runs it (its owner name, `host:pid:xxxx`): a run whose runner has
                // no connection to the database any more is recorded as interrupted by whichever
                // runner looks (docs/postgresql.md, "Commands run on firing").
                "ALTER TABLE occurrence ADD COLUMN command_owner text",
                "CREATE INDEX occurrence_command_running ON occurrence (command_owner) WHERE command_state = 'running'",
            ]
        ),
        PostgresMigration(
            name: "0008-app-id-and-actions",
            statements: [
                // As the SQLite store's v11: the D-Bus application id of the program that
                // scheduled a reminder (NULL: chime's own command line), and its own buttons
                // instead of Done and Snooze (JSON: [{"key": …, "label": …}]), as the runner's
                // D-Bus service schedules them.
                "ALTER TABLE reminder ADD COLUMN app_id text",
                "ALTER TABLE reminder ADD COLUMN actions text",
            ]
        ),
    ]

    /// A key for `pg_advisory_xact_lock`, so that two `store init`s at once apply each
    /// migration once (the second waits, then finds them applied). "chime" in ASCII.
    static let migrationLock: Int64 = 0x63_68_69_6D_65
}

extension PostgresStore {
    /// Brings the database's schema up to date (`chime store init`): applies, in one
    /// transaction, each migration of ``PostgresSchema/migrations`` not yet recorded in
    /// `chime_migrations`. Running it again changes nothing.
    /// - Returns: the names of the migrations it applied (empty when up to date).
    /// - Throws: `.store` when the database has a migration this Chime does not know (it was
    ///   made by a newer Chime): nothing is changed then.
    @discardableResult
    public func migrate() throws -> [String] {
        try transaction { connection in
            // A migration may build an index on a million rows: no statement timeout for these.
            try connection.run("SET LOCAL statement_timeout = 0")
            try connection.run("SELECT pg_advisory_xact_lock(\(PostgresSchema.migrationLock))")
            try connection.run(
                """
                CREATE TABLE IF NOT EXISTS chime_migrations (
                    name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())
                """
            )
            var applied: [String] = []
            for row in try connection.rows("SELECT name FROM chime_migrations") {
                applied.append(try row.decode(String.self))
            }
            let known = Set(PostgresSchema.migrations.map(\.name))
            if let unknown = applied.sorted().first(where: { !known.contains($0) }) {
                throw ChimeError(
                    .store,
                    "the database has the migration '\(unknown)', which this Chime does not know: it was made by a newer Chime"
                )
            }
            var done: [String] = []
            for migration in PostgresSchema.migrations where !applied.contains(migration.name) {
                for statement in migration.statements {
                    try connection.run(PostgresQuery(unsafeSQL: statement))
                }
                try connection.run("INSERT INTO chime_migrations (name) VALUES (\(migration.name))")
                done.append(migration.name)
            }
            return done
        }
    }

    /// The migrations this Chime knows that the database has not applied (an older Chime made
    /// it, or `chime store init` was not run after an upgrade), in order.
    public func missingMigrations() throws -> [String] {
        let applied = Set(try appliedMigrations())
        return PostgresSchema.migrations.map(\.name).filter { !applied.contains($0) }
    }

    /// The names of the migrations recorded in the database, in the order they were applied.
    public func appliedMigrations() throws -> [String] {
        var names: [String] = []
        let rows = try client.rows("SELECT name FROM chime_migrations ORDER BY applied_at, name")
        for row in rows {
            let name = try row.decode(String.self)
            names.append(name)
        }
        return names
    }
}

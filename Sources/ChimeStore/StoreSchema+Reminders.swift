import GRDB

extension StoreSchema {
    /// The store's own tables: reminders and the delivery ledger. Never edit a migration that
    /// has shipped: add another (numbered after every family's too).
    static let reminders = StoreSchema(
        owner: "reminders and their delivery ledger",
        migrations: [
            Migration("v1: reminders and delivery ledger") { db in
                try db.execute(
                    sql: """
                        CREATE TABLE reminder (
                            key INTEGER PRIMARY KEY,
                            id TEXT NOT NULL,
                            title TEXT NOT NULL,
                            body TEXT NOT NULL DEFAULT '',
                            kind TEXT NOT NULL DEFAULT 'plain',
                            trigger_kind TEXT NOT NULL CHECK (trigger_kind IN ('once', 'weekly', 'interval')),
                            at_us INTEGER,
                            times TEXT,
                            days INTEGER,
                            zone TEXT,
                            interval_s INTEGER,
                            anchor_us INTEGER,
                            state TEXT NOT NULL CHECK (state IN ('pending', 'done', 'cancelled', 'replaced')),
                            created_us INTEGER NOT NULL,
                            next_due_us INTEGER,
                            last_due_us INTEGER,
                            ended_us INTEGER
                        );
                        -- An id names at most one pending reminder; history keeps the rest.
                        CREATE UNIQUE INDEX reminder_pending_id ON reminder(id) WHERE state = 'pending';
                        -- The scheduler's queue: the earliest pending due time is one index step away.
                        CREATE INDEX reminder_pending_due ON reminder(next_due_us) WHERE state = 'pending';
                        -- Floating rules, recomputed when the system zone changes: few, found without a scan.
                        CREATE INDEX reminder_floating ON reminder(key) WHERE state = 'pending' AND trigger_kind = 'weekly' AND zone IS NULL;

                        -- The delivery ledger: one row per occurrence, due -> posted (or cancelled).
                        CREATE TABLE occurrence (
                            reminder_key INTEGER NOT NULL REFERENCES reminder(key) ON DELETE CASCADE,
                            due_us INTEGER NOT NULL,
                            state TEXT NOT NULL CHECK (state IN ('due', 'posted', 'cancelled')),
                            missed_count INTEGER NOT NULL DEFAULT 0,
                            recorded_us INTEGER NOT NULL,
                            posted_us INTEGER,
                            attempts INTEGER NOT NULL DEFAULT 0,
                            next_attempt_us INTEGER,
                            last_error TEXT,
                            note_id TEXT,
                            PRIMARY KEY (reminder_key, due_us)
                        ) WITHOUT ROWID;
                        CREATE INDEX occurrence_undelivered ON occurrence(next_attempt_us) WHERE state = 'due';
                        """
                )
            },
            Migration("v2: what people did with alerts") { db in
                try db.execute(
                    sql: """
                        -- An action's key, or closed:<reason>; and when.
                        ALTER TABLE occurrence ADD COLUMN response TEXT;
                        ALTER TABLE occurrence ADD COLUMN answered_us INTEGER;
                        """
                )
            },
            Migration("v5: the server's alert id") { db in
                try db.execute(
                    sql: """
                        -- The notification server's own id for a shown alert (the desktop's), to close
                        -- it later from any process; it was written into note_id as 'desktop:N'.
                        ALTER TABLE occurrence ADD COLUMN server_id INTEGER;
                        UPDATE occurrence SET server_id = CAST(substr(note_id, 9) AS INTEGER), note_id = NULL
                        WHERE note_id LIKE 'desktop:%';
                        """
                )
            },
            Migration("v7: how a reminder's alert looks, and snoozed re-alerts") { db in
                try db.execute(
                    sql: """
                        -- low, normal or critical (NULL: normal); stays until answered; an icon-theme name
                        -- or an absolute path; a sound-theme name.
                        ALTER TABLE reminder ADD COLUMN urgency TEXT CHECK (urgency IN ('low', 'normal', 'critical'));
                        ALTER TABLE reminder ADD COLUMN sticky INTEGER NOT NULL DEFAULT 0;
                        ALTER TABLE reminder ADD COLUMN icon TEXT;
                        ALTER TABLE reminder ADD COLUMN sound TEXT;
                        -- A snoozed alert's re-alert: the due instant of the occurrence it brings back,
                        -- at most once each.
                        ALTER TABLE occurrence ADD COLUMN snooze_of_us INTEGER;
                        CREATE UNIQUE INDEX occurrence_snooze ON occurrence(reminder_key, snooze_of_us) WHERE snooze_of_us IS NOT NULL;
                        """
                )
            },
            Migration("v8: monthly and yearly rules, rule ends, the channel an alert went through") { db in
                try db.execute(
                    sql: """
                        -- SQLite cannot change trigger_kind's CHECK without rebuilding the table (and every
                        -- family's index on it): a monthly or yearly rule is a 'weekly' row (its times and
                        -- zone; days every day, unused) that by_month_day narrows to one day of every month,
                        -- or with by_month of one month. Floating ones stay under reminder_floating, so they
                        -- follow the system zone as the weekly rules do.
                        ALTER TABLE reminder ADD COLUMN by_month INTEGER CHECK (by_month BETWEEN 1 AND 12);
                        ALTER TABLE reminder ADD COLUMN by_month_day INTEGER CHECK (by_month_day BETWEEN 1 AND 31);
                        -- A recurring rule's end (RFC 5545): through a local day (days since 1970-01-01), or
                        -- after its first rule_count occurrences following count_start_us.
                        ALTER TABLE reminder ADD COLUMN until_day INTEGER;
                        ALTER TABLE reminder ADD COLUMN rule_count INTEGER CHECK (rule_count > 0);
                        ALTER TABLE reminder ADD COLUMN count_start_us INTEGER;
                        -- The channel that showed a posted alert: desktop, console, json.
                        ALTER TABLE occurrence ADD COLUMN via TEXT;
                        """
                )
            },
            Migration("v9: quiet hours") { db in
                try db.execute(
                    sql: """
                        -- When quiet held an occurrence back: it stays due (next_attempt_us is the end of
                        -- the quiet, or NULL while a family holds) and comes in the end-of-quiet summary.
                        ALTER TABLE occurrence ADD COLUMN held_us INTEGER;
                        CREATE INDEX occurrence_held ON occurrence(reminder_key) WHERE state = 'due' AND held_us IS NOT NULL;
                        -- One row: the quiet settings (chime quiet hours|doses|focus-hold) and the quiet
                        -- asked for by hand (chime quiet 1h|until|off).
                        CREATE TABLE quiet (
                            id INTEGER PRIMARY KEY CHECK (id = 1),
                            hours_start TEXT,
                            hours_end TEXT,
                            essential TEXT NOT NULL DEFAULT 'come' CHECK (essential IN ('come', 'wait')),
                            family_hold INTEGER NOT NULL DEFAULT 1,
                            until_us INTEGER,
                            window_off_until_us INTEGER,
                            CHECK ((hours_start IS NULL) = (hours_end IS NULL))
                        );
                        """
                )
            },
            Migration("v10: commands run when reminders fire") { db in
                try db.execute(
                    sql: """
                        -- The command a reminder runs when it fires (ReminderCommand's JSON: argv or shell, time limit).
                        ALTER TABLE reminder ADD COLUMN command TEXT;
                        -- Each occurrence's run of it, recorded as running before it is spawned, so that a
                        -- runner killed while it runs reports it (interrupted) rather than running it again.
                        ALTER TABLE occurrence ADD COLUMN command_state TEXT CHECK (command_state IN ('running', 'exited', 'timed_out', 'interrupted', 'failed'));
                        ALTER TABLE occurrence ADD COLUMN command_pid INTEGER;
                        ALTER TABLE occurrence ADD COLUMN command_started_us INTEGER;
                        ALTER TABLE occurrence ADD COLUMN command_ended_us INTEGER;
                        -- Its exit status (128 + N when signal N ended it), the first lines of its output, why
                        -- it did not start or what interrupted it.
                        ALTER TABLE occurrence ADD COLUMN command_exit INTEGER;
                        ALTER TABLE occurrence ADD COLUMN command_output TEXT;
                        ALTER TABLE occurrence ADD COLUMN command_error TEXT;
                        CREATE INDEX occurrence_command_running ON occurrence(reminder_key) WHERE command_state = 'running';
                        """
                )
            },
            Migration("v11: the app that scheduled a reminder, and its own actions") { db in
                try db.execute(
                    sql: """
                        -- The D-Bus application id of the program that scheduled it (NULL: chime's own command
                        -- line): its answers go back to that app, and only it lists and cancels it over D-Bus.
                        ALTER TABLE reminder ADD COLUMN app_id TEXT;
                        -- Its own buttons instead of Done and Snooze (JSON: [{"key": …, "label": …}]; NULL: none).
                        ALTER TABLE reminder ADD COLUMN actions TEXT;
                        -- An app's pending reminders (few), found without a scan: its List, and the app ids a
                        -- caller of the D-Bus service may own.
                        CREATE INDEX reminder_app ON reminder(app_id) WHERE state = 'pending' AND app_id IS NOT NULL;
                        """
                )
            },
            Migration("v12: hooks run on the families' events") { db in
                try db.execute(
                    sql: """
                        -- One family event a hook may follow (HookEvent: focus.completed, dose.taken…), recorded by
                        -- the family in the transaction that makes it happen; the runner runs the config's hook for
                        -- it once: pending, then running (recorded before it is spawned), then how it ended.
                        CREATE TABLE hook_run (
                            id INTEGER PRIMARY KEY AUTOINCREMENT,
                            event TEXT NOT NULL,
                            -- What it is about: a focus session's or a dose's id (CHIME_ID).
                            subject TEXT NOT NULL,
                            -- The hook's environment beyond CHIME_EVENT and CHIME_ID (JSON object of strings).
                            environment TEXT NOT NULL DEFAULT '{}',
                            recorded_us INTEGER NOT NULL,
                            state TEXT NOT NULL DEFAULT 'pending'
                                CHECK (state IN ('pending', 'running', 'exited', 'timed_out', 'interrupted', 'failed')),
                            -- The command as it ran (ReminderCommand's JSON), its process, times, exit status
                            -- (128 + N for signal N), first lines of output, and why it failed or stopped.
                            command TEXT,
                            pid INTEGER,
                            started_us INTEGER,
                            ended_us INTEGER,
                            exit INTEGER,
                            output TEXT,
                            error TEXT
                        );
                        CREATE INDEX hook_run_open ON hook_run(state) WHERE state IN ('pending', 'running');
                        """
                )
            },
        ]
    )
}

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
        ]
    )
}

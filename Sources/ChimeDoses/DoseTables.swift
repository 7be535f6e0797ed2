import ChimeStore
import GRDB

extension DoseBook {
    /// The name of the migration of after-last schedules, daily maximums and tapers (one
    /// constant: the lead renumbers migrations on merge).
    public static let afterLastMigration = "v19: doses after the last taken, daily maximums and tapers"
}

extension StoreSchema {
    /// The medications, their schedules and the doses, registered into the store's migrator by
    /// every process that opens a store (`ReminderStore(path:schemas:)`). A dose alert's
    /// reminders and their ledger rows are found by the alert's id: the store indexes the
    /// reminders of kind "dose" by id for it. Never edit a migration that has shipped: add
    /// another.
    public static let doses = StoreSchema(
        owner: "medications and doses",
        migrations: [
            Migration("v4: medications, schedules and doses", indexingRemindersOfKind: DoseBook.kind) { db in
                try db.execute(
                    sql: """
                        -- A medication (ChimeDoses). Days are civil day numbers (days since 1970-01-01,
                        -- local), durations in seconds.
                        CREATE TABLE medication (
                            id INTEGER PRIMARY KEY AUTOINCREMENT,
                            name TEXT NOT NULL,
                            amount REAL NOT NULL CHECK (amount > 0),
                            unit TEXT NOT NULL,
                            instructions TEXT NOT NULL DEFAULT '',
                            prescribed_by TEXT NOT NULL DEFAULT '',
                            start_day INTEGER NOT NULL,
                            end_day INTEGER CHECK (end_day IS NULL OR end_day > start_day),
                            active INTEGER NOT NULL DEFAULT 1,
                            -- Overdue after grace_s; missed by itself after missed_after_s (or at the
                            -- medication's next dose, whichever comes first).
                            grace_s INTEGER NOT NULL DEFAULT 1800,
                            missed_after_s INTEGER NOT NULL DEFAULT 14400,
                            -- Doses left, when counted; a refill reminder refill_days before they run out.
                            stock INTEGER,
                            refill_days INTEGER NOT NULL DEFAULT 7,
                            refill_alerted INTEGER NOT NULL DEFAULT 0,
                            created_us INTEGER NOT NULL
                        );
                        CREATE UNIQUE INDEX medication_name ON medication(name COLLATE NOCASE);

                        -- When a medication is taken: times of day x weekdays, in a fixed zone or
                        -- floating (zone NULL: the system zone), or as needed (no reminders).
                        CREATE TABLE dose_schedule (
                            id INTEGER PRIMARY KEY AUTOINCREMENT,
                            medication_id INTEGER NOT NULL REFERENCES medication(id) ON DELETE CASCADE,
                            frequency TEXT NOT NULL CHECK (frequency IN ('daily', 'weekly', 'as-needed')),
                            times TEXT NOT NULL DEFAULT '',
                            days INTEGER NOT NULL DEFAULT 127,
                            zone TEXT,
                            min_interval_s INTEGER,
                            enabled INTEGER NOT NULL DEFAULT 1,
                            created_us INTEGER NOT NULL,
                            -- Occurrences up to this instant are doses already (or were before the
                            -- schedule existed).
                            cursor_us INTEGER NOT NULL
                        );
                        CREATE INDEX dose_schedule_by_medication ON dose_schedule(medication_id);

                        -- One dose: a scheduled occurrence (occurrence = its alert's id,
                        -- med-{schedule}-{yyyyMMdd-HHmm}, unique), or an as-needed dose logged when taken.
                        CREATE TABLE dose (
                            id INTEGER PRIMARY KEY AUTOINCREMENT,
                            medication_id INTEGER NOT NULL REFERENCES medication(id) ON DELETE CASCADE,
                            schedule_id INTEGER,
                            occurrence TEXT UNIQUE,
                            scheduled_us INTEGER NOT NULL,
                            zone TEXT NOT NULL,
                            status TEXT NOT NULL CHECK (status IN ('pending', 'taken', 'missed', 'skipped')),
                            taken_us INTEGER,
                            notes TEXT NOT NULL DEFAULT '',
                            overdue_us INTEGER NOT NULL,
                            missed_us INTEGER NOT NULL,
                            -- Marked missed by Chime (its window passed unanswered), not by a person.
                            auto_missed INTEGER NOT NULL DEFAULT 0,
                            -- A person set its status at least once: never marked missed by itself again.
                            answered INTEGER NOT NULL DEFAULT 0,
                            -- The latest snooze: when asked, and until when.
                            snoozed_us INTEGER,
                            snooze_until_us INTEGER,
                            -- Its alert came in one summary after downtime, not on its own.
                            summarized INTEGER NOT NULL DEFAULT 0,
                            -- Logged when taken (an as-needed medication): not in adherence.
                            as_needed INTEGER NOT NULL DEFAULT 0,
                            updated_us INTEGER NOT NULL
                        );
                        -- History by date (doses, adherence) reads this index alone.
                        CREATE INDEX dose_by_time ON dose(scheduled_us, as_needed, medication_id, status);
                        CREATE INDEX dose_by_medication ON dose(medication_id, scheduled_us);
                        -- Doses still open: settled before every read.
                        CREATE INDEX dose_pending ON dose(scheduled_us) WHERE status = 'pending';
                        """
                )
            },
            Migration("v14: dose schedules every N days and in on/off cycles") { db in
                try db.execute(
                    sql: """
                        -- Days counted from anchor_day (a civil day number): every every_days days, or
                        -- cycle_on days on then cycle_off days off. NULL: the days of the week in days.
                        -- Such a schedule's frequency is 'daily' (its times on the days the rule includes).
                        ALTER TABLE dose_schedule ADD COLUMN every_days INTEGER CHECK (every_days IS NULL OR every_days BETWEEN 2 AND 365);
                        ALTER TABLE dose_schedule ADD COLUMN cycle_on INTEGER CHECK (cycle_on IS NULL OR cycle_on BETWEEN 1 AND 365);
                        ALTER TABLE dose_schedule ADD COLUMN cycle_off INTEGER CHECK (cycle_off IS NULL OR cycle_off BETWEEN 1 AND 365);
                        ALTER TABLE dose_schedule ADD COLUMN anchor_day INTEGER;
                        """
                )
            },
            Migration(DoseBook.afterLastMigration) { db in
                try db.execute(
                    sql: """
                        -- after_last_s: each dose falls due this long after the last dose taken (or
                        -- skipped), not at clock times (times is empty, frequency 'daily').
                        -- max_per_day: at most this many doses taken in any 24 hours (as needed or after-last).
                        ALTER TABLE dose_schedule ADD COLUMN after_last_s INTEGER CHECK (after_last_s IS NULL OR after_last_s BETWEEN 60 AND 604800);
                        ALTER TABLE dose_schedule ADD COLUMN max_per_day INTEGER CHECK (max_per_day IS NULL OR max_per_day BETWEEN 1 AND 100);
                        -- A taper: the amount changes on dates ("10@20432,5@20442,stop": amount@last civil
                        -- day, then 'stop' or nothing: the last amount goes on). NULL: amount every day.
                        ALTER TABLE medication ADD COLUMN taper TEXT;
                        -- The amount of the dose's day (a taper); NULL: the medication's amount.
                        ALTER TABLE dose ADD COLUMN amount REAL CHECK (amount IS NULL OR amount > 0);
                        """
                )
            },
            Migration(DoseTellRules.migration) { db in
                try db.execute(
                    sql: """
                        -- Someone else told about a medication's doses (Medisafe's Medfriend): where
                        -- ("ntfy:TOPIC" or a webhook URL without user info or query: never a token, which
                        -- comes from the config when sent), and when (after_s after a dose's time if still
                        -- unanswered; NULL: once it is missed). Doses due before since_us are never told.
                        CREATE TABLE medication_tell (
                            medication_id INTEGER PRIMARY KEY REFERENCES medication(id) ON DELETE CASCADE,
                            channel TEXT NOT NULL,
                            after_s INTEGER CHECK (after_s IS NULL OR after_s BETWEEN 60 AND 604800),
                            since_us INTEGER NOT NULL
                        );

                        -- One message to that person about one dose, recorded by a settle and sent once by
                        -- the runner: 'not_taken', then 'answered' when a dose told about is taken or skipped
                        -- afterwards. pending (tried at next_us) -> sent, or dropped (answered before it
                        -- went; too old when first seen), or failed (not delivered within a day).
                        CREATE TABLE dose_tell (
                            id INTEGER PRIMARY KEY AUTOINCREMENT,
                            dose_id INTEGER NOT NULL REFERENCES dose(id) ON DELETE CASCADE,
                            kind TEXT NOT NULL CHECK (kind IN ('not_taken', 'answered')),
                            channel TEXT NOT NULL,
                            state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'sent', 'dropped', 'failed')),
                            recorded_us INTEGER NOT NULL,
                            next_us INTEGER NOT NULL,
                            attempts INTEGER NOT NULL DEFAULT 0,
                            sent_us INTEGER,
                            -- Why it was dropped, or the last attempt's failure (no secret: ChimeError .delivery).
                            error TEXT,
                            UNIQUE (dose_id, kind)
                        );
                        CREATE INDEX dose_tell_pending ON dose_tell(next_us) WHERE state = 'pending';
                        """
                )
            },
        ]
    )
}

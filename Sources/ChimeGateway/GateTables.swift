import ChimeStore
import GRDB

extension StoreSchema {
    /// The gateway's tables: the person's choices from onboarding, and the usage events (every
    /// gate's outcome), registered into the store's migrator by every process that opens a
    /// store (`ReminderStore(path:schemas:)`). Never edit a migration that has shipped: add
    /// another.
    public static let gateway = StoreSchema(
        owner: "the mindful gateway",
        migrations: [
            Migration("v6: the mindful gateway") { db in
                try db.execute(
                    sql: """
                        -- What the person chose at onboarding ('chime gate setup'): one row.
                        CREATE TABLE gate_profile (
                            id INTEGER PRIMARY KEY CHECK (id = 1),
                            -- 1 to 10: sets the pause, 15 to 45 s.
                            determination INTEGER NOT NULL CHECK (determination BETWEEN 1 AND 10),
                            -- A pause of the person's own, 1 to 120 s, in place of the determination's.
                            pause_s INTEGER CHECK (pause_s BETWEEN 1 AND 120),
                            -- Quote interests, comma-separated (stoicism,productivity,...).
                            interests TEXT NOT NULL,
                            -- After Proceed, the same program opens without a gate this long.
                            grace_s INTEGER NOT NULL CHECK (grace_s BETWEEN 0 AND 86400),
                            -- With no focus session running, Exit starts one.
                            focus_on_exit INTEGER NOT NULL DEFAULT 0,
                            -- A program's typical session, for "hours reclaimed".
                            session_s INTEGER NOT NULL CHECK (session_s BETWEEN 60 AND 86400),
                            updated_us INTEGER NOT NULL
                        );

                        -- One usage event: a pause's outcome, or a launch that was not gated.
                        CREATE TABLE gate_event (
                            id INTEGER PRIMARY KEY,
                            -- The desktop entry id ("firefox"), or the command's name.
                            program TEXT NOT NULL,
                            at_us INTEGER NOT NULL,
                            -- Time spent in this event's pause (0 when not gated).
                            pause_us INTEGER NOT NULL,
                            outcome TEXT NOT NULL CHECK (outcome IN ('exit', 'deepen', 'proceed', 'closed', 'not_gated')),
                            -- not_gated: why (grace after a Proceed, no display and no terminal…).
                            reason TEXT,
                            -- The quote the pause showed.
                            quote_text TEXT,
                            quote_author TEXT,
                            quote_source TEXT,
                            quote_interest TEXT
                        );
                        -- Stats read events by time, from this index alone (the rows hold quotes);
                        -- the grace reads a program's latest Proceed.
                        CREATE INDEX gate_event_by_time ON gate_event(at_us, outcome, pause_us);
                        CREATE INDEX gate_event_proceed ON gate_event(program, at_us) WHERE outcome = 'proceed';
                        """
                )
            },
            Migration("v15: the gateway's schedules and budgets") { db in
                try db.execute(
                    sql: """
                        -- When and how much a program is gated ('chime gate add ID --hours --days --budget');
                        -- a gated program without a row is gated always, without a budget.
                        CREATE TABLE gate_rule (
                            -- The desktop entry id, as gate_event.program.
                            program TEXT PRIMARY KEY,
                            -- The hours, minutes into the local day; both or neither. End before start
                            -- crosses midnight.
                            hours_start_min INTEGER CHECK (hours_start_min BETWEEN 0 AND 1439),
                            hours_end_min INTEGER CHECK (hours_end_min BETWEEN 0 AND 1439),
                            -- The days, ISO weekdays as bits (Monday 1 ... Sunday 64); NULL for every day.
                            days INTEGER CHECK (days BETWEEN 1 AND 127),
                            -- Opens per local day before the pause grows; NULL for none.
                            budget_per_day INTEGER CHECK (budget_per_day BETWEEN 1 AND 1000),
                            updated_us INTEGER NOT NULL,
                            CHECK ((hours_start_min IS NULL) = (hours_end_min IS NULL))
                        );
                        """
                )
            },
            Migration(StoreSchema.gateRunsMigration) { db in
                try db.execute(
                    sql: """
                        -- Minutes per day before the pause grows ('--budget 60m/day'), and the reminder
                        -- in use ('--remind-after 20m'): minutes after which a run is reminded.
                        ALTER TABLE gate_rule ADD COLUMN budget_min_per_day INTEGER CHECK (budget_min_per_day BETWEEN 1 AND 1440);
                        ALTER TABLE gate_rule ADD COLUMN remind_after_min INTEGER CHECK (remind_after_min BETWEEN 1 AND 1440);

                        -- One run of a gated program: from its start by 'chime gate open' (which stays as
                        -- its watching parent) to the end of the process it started. Written in one
                        -- statement at the start, and end_us in one at the end: a watcher killed in
                        -- between leaves end_us NULL (the run counts until now, until the program's
                        -- next run closes it at its own start).
                        CREATE TABLE gate_run (
                            id INTEGER PRIMARY KEY,
                            program TEXT NOT NULL,
                            -- The program's name as people see it, for the reminder in use.
                            name TEXT NOT NULL,
                            -- The process started (the watcher's child).
                            pid INTEGER NOT NULL,
                            start_us INTEGER NOT NULL,
                            end_us INTEGER CHECK (end_us >= start_us),
                            -- The reminder in use's interval, as the rule said at the start; NULL for none.
                            remind_after_min INTEGER
                        );
                        CREATE INDEX gate_run_by_program ON gate_run(program, start_us);
                        CREATE INDEX gate_run_by_time ON gate_run(start_us);
                        """
                )
            },
        ]
    )

    /// The name of the migration that added the runs of gated programs (the lead renumbers it
    /// on merge: tests refer to it by this constant).
    public static let gateRunsMigration = "v17: the gateway's runs, minutes budgets and reminders in use"
}

import ChimeStore
import GRDB

extension StoreSchema {
    /// The focus sessions' table, registered into the store's migrator by every process that
    /// opens a store (`ReminderStore(path:schemas:)`). Never edit a migration that has shipped:
    /// add another.
    public static let focus = StoreSchema(
        owner: "focus sessions",
        migrations: [
            Migration("v3: focus sessions") { db in
                try db.execute(
                    sql: """
                        -- One focus session (ChimeFocus). Times in microseconds: wall clock (_us) for
                        -- what people see; focus time counted on CLOCK_MONOTONIC, which stops while the
                        -- machine sleeps, within one boot.
                        CREATE TABLE focus_session (
                            id INTEGER PRIMARY KEY AUTOINCREMENT,
                            state TEXT NOT NULL CHECK (state IN ('active', 'paused', 'completed', 'abandoned')),
                            length_s INTEGER NOT NULL CHECK (length_s > 0),
                            started_us INTEGER NOT NULL,
                            -- When it was completed or abandoned.
                            ended_us INTEGER,
                            -- Focus time: before the running segment while active; all of it once ended.
                            focus_us INTEGER NOT NULL DEFAULT 0,
                            -- Time spent paused (not focus time), and when the current pause began.
                            paused_us INTEGER NOT NULL DEFAULT 0,
                            paused_at_us INTEGER,
                            -- The running segment (while active): its boot, and CLOCK_MONOTONIC and the
                            -- wall clock when it began.
                            boot_id TEXT,
                            segment_awake_us INTEGER,
                            segment_wall_us INTEGER,
                            -- Abandoned: 'gave-up' or 'restarted' (the machine restarted mid-session).
                            end_reason TEXT
                        );
                        -- One session at a time, whatever races: at most one row is active or paused.
                        CREATE UNIQUE INDEX focus_session_open ON focus_session(state IN ('active', 'paused'))
                            WHERE state IN ('active', 'paused');
                        -- The forest (newest first), the stats and the counts by state read this index
                        -- alone. (Not a partial index on completed rows: without ANALYZE statistics,
                        -- SQLite's planner preferred an index on state alone and read every row.)
                        CREATE INDEX focus_session_by_state ON focus_session(state, ended_us, focus_us);
                        """
                )
            },
            Migration("v13: focus breaks") { db in
                try db.execute(
                    sql: """
                        -- One break after a completed focus session (ChimeFocus). Wall-clock times in
                        -- microseconds: a break is only a timer.
                        CREATE TABLE focus_break (
                            id INTEGER PRIMARY KEY AUTOINCREMENT,
                            session_id INTEGER NOT NULL,
                            kind TEXT NOT NULL CHECK (kind IN ('short', 'long')),
                            -- The place in the cycle of the session it follows (1 to long_break_every).
                            position INTEGER NOT NULL CHECK (position > 0),
                            length_s INTEGER NOT NULL CHECK (length_s > 0),
                            started_us INTEGER NOT NULL,
                            ends_us INTEGER NOT NULL,
                            -- 'running' until its end; 'taken' when it ran to its end, 'skipped' when ended early.
                            state TEXT NOT NULL CHECK (state IN ('running', 'taken', 'skipped')),
                            ended_us INTEGER
                        );
                        CREATE INDEX focus_break_by_state ON focus_break(state);
                        """
                )
            },
            Migration(FocusTimer.labelMigration) { db in
                try db.execute(
                    sql: """
                        -- What the session was for ('chime focus start --label thesis'): trimmed, 1 to 40
                        -- characters, no control characters (FocusLabel); NULL without one.
                        ALTER TABLE focus_session ADD COLUMN label TEXT CHECK (label IS NULL OR length(label) > 0);
                        """
                )
            },
            Migration(FocusIdleMigration.name) { db in
                try db.execute(
                    sql: """
                        -- Why the current pause began: 'idle' when the person was away for [focus]
                        -- idle_pause (NULL: their own pause); and how many times the session was paused
                        -- so.
                        ALTER TABLE focus_session ADD COLUMN pause_reason TEXT CHECK (pause_reason IN ('idle'));
                        ALTER TABLE focus_session ADD COLUMN idle_pauses INTEGER NOT NULL DEFAULT 0;
                        """
                )
            },
            Migration(FocusIdleMigration.returnName) { db in
                try db.execute(
                    sql: """
                        -- When the person came back during a pause for idleness (NULL while away, and
                        -- for any other pause): "Paused while you were away N min" is paused_at_us to
                        -- it, the same after a runner restart.
                        ALTER TABLE focus_session ADD COLUMN back_us INTEGER;
                        """
                )
            },
        ]
    )
}

/// The migration of idle pauses (one constant: the lead renumbers migrations on merge).
public enum FocusIdleMigration {
    public static let name = "v18: focus idle pauses"
    /// The moment the person came back from an idle pause (`back_us`).
    public static let returnName = "v21: focus idle returns"
}

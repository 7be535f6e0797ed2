import ChimeCore
import Foundation

// The runs of reminders' commands (`--exec`) in the ledger (migration 0007-commands), as the
// SQLite store records them (its v10), with the runner that runs each: several runners share
// the ledger, and only the one that posted an occurrence runs its command.

extension PostgresStore {
    /// What a run records as its error when another runner found its runner gone.
    public static let runnerGoneReason = "its runner was gone while it ran"

    /// Records that `owner` starts the command of occurrence `key` at `instant`, before it is
    /// spawned: only when `owner` posted the occurrence (`posted` under its name, the fence the
    /// mark's `lease_owner` leaves) and no run was recorded for it (`command_state IS NULL`).
    /// Returns whether it recorded it: true once per occurrence, however many runners ask.
    public func beginCommand(_ key: OccurrenceKey, owner: String, at instant: Date) throws -> Bool {
        let changed = try client.run(
            """
            UPDATE occurrence SET command_state = 'running', command_started_us = \(instant.micros), command_owner = \(owner)
            WHERE reminder_key = \(key.reminderKey) AND due_us = \(key.dueMicros) AND state = 'posted'
              AND lease_owner = \(owner) AND command_state IS NULL
            """
        )
        return changed == 1
    }

    /// Records the process id of the command `owner` started for `key`.
    public func commandSpawned(_ key: OccurrenceKey, owner: String, pid: Int32) throws {
        try client.run(
            """
            UPDATE occurrence SET command_pid = \(pid)
            WHERE reminder_key = \(key.reminderKey) AND due_us = \(key.dueMicros) AND command_state = 'running'
              AND command_owner = \(owner)
            """
        )
    }

    /// Records how the run `owner` started for `key` ended. A run another runner recorded as
    /// interrupted because `owner` seemed gone (``runnerGoneReason``: its connections had
    /// dropped) gets its real end.
    public func finishCommand(_ key: OccurrenceKey, owner: String, _ run: CommandRun) throws {
        try client.run(
            """
            UPDATE occurrence SET command_state = \(run.state.rawValue), command_ended_us = \((run.finishedAt ?? run.startedAt).micros),
                command_exit = \(run.exitStatus.map(Int64.init))::integer, command_output = \(run.output),
                command_error = \(run.error)::text
            WHERE reminder_key = \(key.reminderKey) AND due_us = \(key.dueMicros) AND command_owner = \(owner)
              AND (command_state = 'running' OR (command_state = 'interrupted' AND command_error = \(Self.runnerGoneReason)))
            """
        )
    }

    /// Records as interrupted, at `instant`, each run recorded as running whose runner is gone:
    /// `owner`'s own (this runner's name, when it starts: what a run under it left), and any
    /// whose runner has no connection to this database (neither "chime run OWNER" nor its
    /// "listen" connection in `pg_stat_activity`: it was killed, or its host lost the database).
    /// None is ever run again. Returns their reminder ids, the earliest started first.
    public func interruptCommands(owner: String?, at instant: Date) throws -> [String] {
        let prefix = Self.runnerApplicationName + " "
        let rows = try client.rows(
            """
            UPDATE occurrence o SET command_state = 'interrupted', command_ended_us = \(instant.micros),
                command_error = CASE WHEN o.command_owner = \(owner)::text THEN \(CommandRun.interruptedReason)
                                     ELSE \(Self.runnerGoneReason) END
            FROM reminder r
            WHERE r.key = o.reminder_key AND o.command_state = 'running'
              AND (o.command_owner IS NULL OR o.command_owner = \(owner)::text OR NOT EXISTS (
                  SELECT 1 FROM pg_stat_activity a
                  WHERE a.datname = current_database()
                    AND (a.application_name IN (\(prefix) || o.command_owner, \(prefix) || o.command_owner || ' listen')
                         -- the server keeps 63 bytes of an application name
                         OR (octet_length(a.application_name) >= 63
                             AND starts_with(\(prefix) || o.command_owner || ' listen', a.application_name)))))
            RETURNING r.id, o.command_started_us
            """
        )
        var runs: [(id: String, started: Int64)] = []
        for row in rows {
            let (id, started) = try row.decode((String, Int64?).self)
            runs.append((id, started ?? 0))
        }
        return runs.sorted { ($0.started, $0.id) < ($1.started, $1.id) }.map(\.id)
    }
}

import ChimeCore
import Foundation
import GRDB

extension ReminderStore {
    /// Records family event `event` in the caller's transaction (the one that makes it happen),
    /// for the runner to run its hook once.
    public static func recordHook(_ event: HookEvent, at instant: Date, in db: Database) throws {
        let data = (try? JSONSerialization.data(withJSONObject: event.environment, options: [.sortedKeys])) ?? Data("{}".utf8)
        try db.execute(
            sql: "INSERT INTO hook_run (event, subject, environment, recorded_us) VALUES (?, ?, ?, ?)",
            arguments: [event.name, event.subject, String(decoding: data, as: UTF8.self), instant.micros]
        )
    }

    /// Every hook row, newest first (at most `limit`): for tests and `chime doctor`-like views.
    public func hookRuns(limit: Int = 100) throws -> [(event: HookEvent, run: CommandRun?)] {
        try read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT event, subject, environment, recorded_us, state, pid, started_us, ended_us, exit, output, error
                    FROM hook_run ORDER BY id DESC LIMIT ?
                    """,
                arguments: [limit]
            ).map { row in
                let event = Self.hookEvent(row)
                let state = (row["state"] as String?).flatMap(CommandRun.State.init(rawValue:))
                let run = state.map { state in
                    CommandRun(
                        state: state,
                        startedAt: Date(micros: row["started_us"] ?? row["recorded_us"]),
                        finishedAt: (row["ended_us"] as Int64?).map(Date.init(micros:)),
                        pid: (row["pid"] as Int64?).map { Int32($0) },
                        exitStatus: (row["exit"] as Int64?).map { Int32($0) },
                        output: row["output"] ?? "",
                        error: row["error"]
                    )
                }
                return (event, run)
            }
        }
    }

    static func hookEvent(_ row: Row) -> HookEvent {
        let text: String = row["environment"] ?? "{}"
        let environment = ((try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: String]) ?? [:]
        return HookEvent(row["event"], subject: row["subject"], environment: environment)
    }

    public func pendingHooks() throws -> [HookRecord] {
        try read { db in
            try Row.fetchAll(
                db,
                sql: "SELECT id, event, subject, environment, recorded_us FROM hook_run WHERE state = 'pending' ORDER BY id"
            ).map { row in HookRecord(id: row["id"], event: Self.hookEvent(row), recordedAt: Date(micros: row["recorded_us"])) }
        }
    }

    public func beginHook(_ id: Int64, command: ReminderCommand, at instant: Date) throws -> Bool {
        try write { db in
            try db.execute(
                sql: "UPDATE hook_run SET state = 'running', command = ?, started_us = ? WHERE id = ? AND state = 'pending'",
                arguments: [command.stored, instant.micros, id]
            )
            return db.changesCount > 0
        }
    }

    public func hookSpawned(_ id: Int64, pid: Int32) throws {
        try write { db in
            try db.execute(sql: "UPDATE hook_run SET pid = ? WHERE id = ? AND state = 'running'", arguments: [Int64(pid), id])
        }
    }

    public func finishHook(_ id: Int64, _ run: CommandRun) throws {
        try write { db in
            try db.execute(
                sql: """
                    UPDATE hook_run SET state = ?, ended_us = ?, exit = ?, output = ?, error = ?
                    WHERE id = ? AND state = 'running'
                    """,
                arguments: [
                    run.state.rawValue, (run.finishedAt ?? run.startedAt).micros, run.exitStatus.map { Int64($0) }, run.output,
                    run.error, id,
                ]
            )
        }
    }

    public func dropHook(_ id: Int64) throws {
        try write { db in try db.execute(sql: "DELETE FROM hook_run WHERE id = ? AND state = 'pending'", arguments: [id]) }
    }

    /// One runner per store: a hook recorded as running at start-up was left by a runner that stopped.
    public func interruptHooks(at instant: Date) throws -> [String] {
        try write { db in
            let events = try String.fetchAll(db, sql: "SELECT event FROM hook_run WHERE state = 'running' ORDER BY id")
            guard !events.isEmpty else { return [] }
            try db.execute(
                sql: "UPDATE hook_run SET state = 'interrupted', ended_us = ?, error = ? WHERE state = 'running'",
                arguments: [instant.micros, CommandRun.interruptedReason]
            )
            return events
        }
    }
}

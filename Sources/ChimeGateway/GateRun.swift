import ChimeCore
import ChimeStore
import Foundation
import GRDB

#if canImport(Glibc)
import Glibc
#endif

/// One run of a gated program: from the instant `chime gate open` started it to the end of the
/// process it started.
///
/// **How the running time is measured: a watching parent.** After Proceed (or a launch without
/// a gate), `chime gate open` starts the program as its child, with the signals, terminal,
/// process group and environment it would have had had chime replaced itself with it (as it did
/// before minutes were measured), and stays as a small parent that only waits for it: it
/// forwards SIGTERM, SIGHUP, SIGUSR1 and SIGUSR2 to it, ignores Ctrl-C and Ctrl-\ (the terminal
/// sends those to the program too, as `system(3)` does), records the run's start and end, and
/// exits with the program's status (or by its signal). Chosen over a transient systemd scope
/// (`systemd-run --user --scope`) because it works wherever chime does: without a systemd user
/// manager (containers, other init systems, the tests), without a D-Bus round trip before the
/// program starts, and with the end known at the instant it happens rather than read back
/// afterwards from a unit that the manager may already have garbage-collected.
///
/// **What is measured**: the lifetime of the process chime started, not of its descendants. A
/// program that hands its work to an instance already running and exits (Firefox's remote, a
/// second `code` window) counts only those few seconds: the running instance's time is counted
/// by the run that started it. A program that forks into the background and exits at once is
/// counted until its first process exits.
///
/// **A watcher killed (kill -9, a power cut)**: the start is one row written at the start, the
/// end one update at the end, each in its own transaction, so nothing is ever half-written. A run
/// whose end never came counts until now (it may still run), until the program's next run
/// starts and closes it at that instant, once the process it started is gone; its reminder in
/// use is cancelled then too. Runs of the same program that overlap (two windows opened through
/// two launches) count once: the minutes of a day are those of the union of its runs.
public struct GateRun: Sendable, Equatable {
    public var id: Int64
    public var programID: String
    /// The program's name as people see it ("Firefox Web Browser").
    public var name: String
    /// The process started.
    public var pid: Int32
    public var start: Date
    /// Nil while it runs (or when its watcher was killed before the end, see above).
    public var end: Date?
    /// The reminder in use's interval in minutes, as the rule said at the start.
    public var remindAfter: Int?

    public init(
        id: Int64,
        programID: String,
        name: String,
        pid: Int32,
        start: Date,
        end: Date? = nil,
        remindAfter: Int? = nil
    ) {
        (self.id, self.programID, self.name, self.pid, self.start, self.end) = (id, programID, name, pid, start, end)
        self.remindAfter = remindAfter
    }

    /// Whether process `pid` runs: it exists (`kill(pid, 0)`, under this user or another) and
    /// is not a zombie waiting to be reaped (its state in `/proc/PID/stat`).
    public static func isRunning(_ pid: Int32) -> Bool {
        guard pid > 0, kill(pid, 0) == 0 || errno == EPERM else { return false }
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return true }
        return stat[stat.index(after: close)...].split(separator: " ").first != "Z"
    }

    /// The id of the run's reminder in use: "gate-run-12".
    public var reminderID: String { Self.reminderID(id) }

    public static func reminderID(_ id: Int64) -> String { "gate-run-\(id)" }

    /// 12 for "gate-run-12".
    public static func runID(reminderID: String) -> Int64? {
        guard reminderID.hasPrefix("gate-run-") else { return nil }
        return Int64(reminderID.dropFirst("gate-run-".count)).flatMap { $0 > 0 ? $0 : nil }
    }

    /// The seconds in `from..<to` covered by at least one of `runs` (overlapping runs count
    /// once), an unfinished run counting until `now`. A run with its end before its start (a
    /// clock set back) counts nothing.
    public static func seconds(of runs: [GateRun], from: Date, to: Date, now: Date) -> TimeInterval {
        let spans =
            runs.compactMap { run -> (Date, Date)? in
                let start = max(run.start, from)
                let end = min(run.end ?? max(now, run.start), to)
                return end > start ? (start, end) : nil
            }
            .sorted { $0.0 < $1.0 }
        var total: TimeInterval = 0
        var current: (Date, Date)?
        for span in spans {
            if let (start, end) = current, span.0 <= end {
                current = (start, max(end, span.1))
            } else {
                if let (start, end) = current { total += end.timeIntervalSince(start) }
                current = span
            }
        }
        if let (start, end) = current { total += end.timeIntervalSince(start) }
        return total
    }

    /// The reminder in use's title: "20 min in Firefox".
    public static func reminderTitle(minutes: Int, name: String) -> String { "\(minutes) min in \(name)" }

    /// Its body: what its two actions do.
    public static func reminderBody(name: String, every minutes: Int) -> String {
        "Exit: close \(name) when you are ready. Keep going: another reminder in \(minutes) min."
    }

    /// What the alert says after Exit: Chime closes nothing itself.
    public static func exitLine(name: String) -> String { "Close \(name) when you are ready." }
}

extension GateBook {
    /// Records the start of a run of `programID` (process `pid`) now, closing at this instant the
    /// runs of the same program whose end never came and whose process is gone (their watcher
    /// was killed) and cancelling their reminders, and, when the program's rule sets one,
    /// scheduling the run's reminder in use `remindAfter` minutes from now. One transaction.
    /// - Parameter isRunning: whether a process still runs (a run of the same program still
    ///   going, in another window, is left open; its watcher writes its end).
    @discardableResult
    public func startRun(
        programID: String,
        name: String,
        pid: Int32,
        remindAfter: Int?,
        isRunning: (Int32) -> Bool = GateRun.isRunning
    ) throws(ChimeError) -> GateRun {
        let now = clock.now()
        return try store.write { db in
            let unfinished = try Row.fetchAll(
                db,
                sql: "SELECT id, pid FROM gate_run WHERE program = ? AND end_us IS NULL",
                arguments: [programID]
            ).compactMap { row -> Int64? in isRunning(row["pid"]) ? nil : row["id"] }
            for id in unfinished {
                try db.execute(
                    sql: "UPDATE gate_run SET end_us = max(start_us, ?) WHERE id = ?",
                    arguments: [Self.micros(now), id]
                )
                _ = try ReminderStore.cancel(id: GateRun.reminderID(id), at: Self.micros(now), in: db)
            }
            try db.execute(
                sql: "INSERT INTO gate_run (program, name, pid, start_us, remind_after_min) VALUES (?, ?, ?, ?, ?)",
                arguments: [programID, name, pid, Self.micros(now), remindAfter]
            )
            let run = GateRun(
                id: db.lastInsertedRowID,
                programID: programID,
                name: name,
                pid: pid,
                start: now,
                remindAfter: remindAfter
            )
            if let remindAfter {
                try Self.scheduleReminder(of: run, at: now.addingTimeInterval(TimeInterval(remindAfter * 60)), now: now, in: db)
            }
            return run
        }
    }

    /// Records the end of run `id` now, and cancels its reminder in use (it never fires after
    /// the program has ended). One transaction.
    public func endRun(id: Int64) throws(ChimeError) {
        let now = clock.now()
        try store.write { db in
            try db.execute(sql: "UPDATE gate_run SET end_us = max(start_us, ?) WHERE id = ?", arguments: [Self.micros(now), id])
            _ = try ReminderStore.cancel(id: GateRun.reminderID(id), at: Self.micros(now), in: db)
        }
    }

    /// Run `id`, or nil.
    public func run(id: Int64) throws(ChimeError) -> GateRun? {
        try store.read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM gate_run WHERE id = ?", arguments: [id]).map(Self.run)
        }
    }

    /// The runs that overlap `from..<to` (an unfinished one overlaps every instant after its
    /// start), oldest first.
    public func runs(from: Date, to: Date) throws(ChimeError) -> [GateRun] {
        try store.read { db in
            try Row.fetchAll(
                db,
                sql: "SELECT * FROM gate_run WHERE start_us < ? AND (end_us IS NULL OR end_us > ?) ORDER BY start_us, id",
                arguments: [Self.micros(to), Self.micros(from)]
            ).map(Self.run)
        }
    }

    /// Each program's running time on `now`'s local day in `zone`, in seconds (see
    /// ``GateRun/seconds(of:from:to:now:)``), by program id.
    public func minutesToday(zone: TimeZone) throws(ChimeError) -> [String: TimeInterval] {
        let now = clock.now()
        let (start, end) = Self.localDay(of: now, zone: zone)
        return Dictionary(grouping: try runs(from: start, to: end), by: \.programID)
            .mapValues { GateRun.seconds(of: $0, from: start, to: end, now: now) }
    }

    /// `programID`'s running time today, in seconds.
    public func usedToday(programID: String, zone: TimeZone) throws(ChimeError) -> TimeInterval {
        try minutesToday(zone: zone)[programID] ?? 0
    }

    /// Keep going, from run `id`'s reminder: the next reminder comes `remindAfter` minutes from
    /// now. Nil (nothing scheduled) when the run has ended or has no reminder.
    public func keepGoing(runID id: Int64) throws(ChimeError) -> Date? {
        let now = clock.now()
        return try store.write { db -> Date? in
            guard let run = try Row.fetchOne(db, sql: "SELECT * FROM gate_run WHERE id = ?", arguments: [id]).map(Self.run),
                run.end == nil, let every = run.remindAfter
            else { return nil }
            let due = now.addingTimeInterval(TimeInterval(every * 60))
            try Self.scheduleReminder(of: run, at: due, now: now, in: db)
            return due
        }
    }

    /// Exit, from run `id`'s reminder: no more reminders for this run (the program is left
    /// running: the person closes it).
    public func stopReminding(runID id: Int64) throws(ChimeError) {
        let now = clock.now()
        try store.write { db in _ = try ReminderStore.cancel(id: GateRun.reminderID(id), at: Self.micros(now), in: db) }
    }

    static func scheduleReminder(of run: GateRun, at due: Date, now: Date, in db: Database) throws {
        let minutes = Int((due.timeIntervalSince(run.start) / 60).rounded())
        let reminder = NewReminder(
            id: run.reminderID,
            title: GateRun.reminderTitle(minutes: minutes, name: run.name),
            body: GateRun.reminderBody(name: run.name, every: run.remindAfter ?? minutes),
            trigger: .once(due),
            kind: GateBook.kind
        )
        _ = try ReminderStore.scheduleOnce(reminder, now: now, in: db)
    }

    static func run(_ row: Row) -> GateRun {
        GateRun(
            id: row["id"],
            programID: row["program"],
            name: row["name"],
            pid: row["pid"],
            start: date(row["start_us"]),
            end: (row["end_us"] as Int64?).map(date),
            remindAfter: row["remind_after_min"]
        )
    }
}

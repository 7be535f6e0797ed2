import ChimeCore
import ChimeStore
import Foundation
import GRDB

/// The breaks between focus sessions (Pomodoro): after each completed session a short break,
/// after every `longEvery`-th completed session of the cycle a long one.
///
/// The design: a break is only a timer, so it starts by itself when a session completes (its
/// start is said in the completion alert, "Break: 5 min"); it ends with the alert "Break over:
/// plant the next tree" (Start / Skip). The next session waits for Start (or `chime focus
/// start`) unless `auto_start_sessions` is true; then it starts at the break's end (only when
/// the break ends while someone is there to see it: not when the runner was down and the break
/// ended more than ``FocusBreaks/autoStartWindow`` ago). Starting a session during a break,
/// or `chime focus skip`, ends the break early (it counts as skipped). The break's end is an
/// ordinary one-shot alert (`focus-break-ID`), fired by the same path as a session's end:
/// exactly once, and late once (saying how late) after a runner that was down.
public struct FocusBreaks: Sendable, Hashable {
    public static let defaultShortMinutes = 5
    public static let defaultLongMinutes = 15
    public static let defaultLongEvery = 4
    /// How late a break's end may be noticed for `auto_start_sessions` still to start a session.
    public static let autoStartWindow: Int64 = 60_000_000

    public var shortSeconds: Int
    public var longSeconds: Int
    /// A long break after every this many completed sessions (the cycle's length).
    public var longEvery: Int
    /// Whether the next session starts by itself at a break's end.
    public var autoStartSessions: Bool
    /// Whether what starts by itself waits until the person is active again when they are away
    /// (`[focus] wait_for_activity`): the break after a session that completes while they are
    /// away, and with ``autoStartSessions`` the session after a break that ends while they are.
    public var waitForActivity: Bool
    /// Whether a completed session starts no break now (the person is away, with
    /// ``waitForActivity``): set by the runner's settle only.
    var holdsBreaks = false

    public init(
        shortSeconds: Int = FocusBreaks.defaultShortMinutes * 60,
        longSeconds: Int = FocusBreaks.defaultLongMinutes * 60,
        longEvery: Int = FocusBreaks.defaultLongEvery,
        autoStartSessions: Bool = false,
        waitForActivity: Bool = false
    ) {
        self.shortSeconds = shortSeconds
        self.longSeconds = longSeconds
        self.longEvery = max(1, longEvery)
        self.autoStartSessions = autoStartSessions
        self.waitForActivity = waitForActivity
    }

    /// The config's `[focus]` break keys, read through `setting`.
    public static func configured(_ setting: (ConfigKey) -> ConfigValue) -> FocusBreaks {
        var breaks = FocusBreaks()
        if case .seconds(let short) = setting(.focusShortBreak) { breaks.shortSeconds = Int(short) }
        if case .seconds(let long) = setting(.focusLongBreak) { breaks.longSeconds = Int(long) }
        if case .number(let every) = setting(.focusLongBreakEvery) { breaks.longEvery = max(1, every) }
        if case .flag(let auto) = setting(.focusAutoStartSessions) { breaks.autoStartSessions = auto }
        if case .flag(let wait) = setting(.focusWaitForActivity) { breaks.waitForActivity = wait }
        return breaks
    }

    /// The kind of break after the completed session at `position` of the cycle.
    public func kind(afterPosition position: Int) -> FocusBreak.Kind { position >= longEvery ? .long : .short }

    public func seconds(of kind: FocusBreak.Kind) -> Int { kind == .long ? longSeconds : shortSeconds }
}

/// One break, as the store keeps it.
public struct FocusBreak: Sendable, Hashable, Identifiable {
    public enum Kind: String, Sendable, Hashable, Codable { case short, long }
    public enum State: String, Sendable, Hashable, Codable {
        /// Under way until ``FocusBreak/endsAt``.
        case running
        /// Ran to its end.
        case taken
        /// Ended early: `chime focus skip`, Skip Break, or a session started during it.
        case skipped
    }

    public var id: Int64
    /// The completed session it follows.
    public var sessionID: Int64
    public var kind: Kind
    /// The place in the cycle of the session it follows (1 to the cycle's length).
    public var position: Int
    public var lengthSeconds: Int
    public var startedAt: Date
    public var endsAt: Date
    public var state: State
    /// When it ended (its end when taken; the skip when skipped).
    public var endedAt: Date?

    /// The identifier of its "Break over" alert: `focus-break-3`.
    public var reminderID: String { Self.reminderID(id) }
    public static func reminderID(_ id: Int64) -> String { "focus-break-\(id)" }

    /// 3 for `focus-break-3`.
    public static func breakID(_ noteID: String) -> Int64? {
        guard noteID.hasPrefix("focus-break-") else { return nil }
        return Int64(noteID.dropFirst("focus-break-".count)).flatMap { $0 > 0 ? $0 : nil }
    }

    /// Whole seconds left at `now`, rounded up (0 once over).
    public func remainingSeconds(at now: Date) -> Int {
        guard state == .running else { return 0 }
        let micros = max(0, endsAt.micros - now.micros)
        return Int((micros + 999_999) / 1_000_000)
    }

    /// "Break: 5 min" / "Long break: 15 min".
    public var startText: String { FocusBreak.startText(kind: kind, seconds: lengthSeconds) }

    public static func startText(kind: Kind, seconds: Int) -> String {
        let minutes = (seconds + 59) / 60
        return (kind == .long ? "Long break: " : "Break: ") + "\(minutes) min"
    }

    public static let overTitle = "Break over: plant the next tree"
}

/// Where the person is in the cycle of sessions and breaks.
public struct FocusCycle: Sendable, Hashable {
    /// The running break, if any.
    public var runningBreak: FocusBreak?
    /// The session of the cycle now (while a session runs or a break follows one) or next.
    public var position: Int
    public var length: Int

    public init(runningBreak: FocusBreak?, position: Int, length: Int) {
        self.runningBreak = runningBreak
        self.position = position
        self.length = length
    }
}

/// How many breaks ran to their end and how many were skipped.
public struct BreakCounts: Sendable, Hashable {
    public var taken: Int
    public var skipped: Int

    public init(taken: Int, skipped: Int) {
        self.taken = taken
        self.skipped = skipped
    }
}

extension FocusTimer {
    /// The keys of break alerts' actions.
    public static let startAction = "start-session"
    public static let skipAction = "skip"
    public static let skipBreakAction = "skip-break"

    /// Ends the running break now (`chime focus skip`): recorded as skipped, its alert cancelled.
    /// - Throws: `.notFound` when no break runs.
    public func skipBreak() throws(ChimeError) -> FocusBreak {
        let time = clock.now()
        return try store.write { db in
            _ = try Self.settle(at: time, breaks: breaks, in: db)
            guard let running = try Self.fetchRunningBreak(in: db) else {
                let open = try Self.fetchOpen(in: db)
                throw ChimeError(
                    .notFound,
                    open == nil
                        ? "no break to skip: breaks follow completed sessions; start one with 'chime focus start'"
                        : "no break to skip: focus session #\(open!.id) is running (a break follows its end)"
                )
            }
            return try Self.endBreak(running, as: .skipped, at: time.wall, in: db)
        }
    }

    /// The running break, after settling (nil: none).
    public func runningBreak() throws(ChimeError) -> FocusBreak? {
        _ = try settle()
        return try store.read { db in try Self.fetchRunningBreak(in: db) }
    }

    /// The break running at `now`, as stored, without settling (a reader beside the runner: the
    /// D-Bus properties); nil once its end has come.
    public func runningBreakWithoutSettling(at now: Date) throws(ChimeError) -> FocusBreak? {
        try store.read { db in try Self.fetchRunningBreak(in: db) }.flatMap { $0.endsAt > now ? $0 : nil }
    }

    /// The cycle now, after settling.
    public func cycle() throws(ChimeError) -> FocusCycle {
        _ = try settle()
        return try store.read { db in
            let running = try Self.fetchRunningBreak(in: db)
            let length = breaks.longEvery
            if let running { return FocusCycle(runningBreak: running, position: min(running.position, length), length: length) }
            return FocusCycle(runningBreak: nil, position: try Self.nextPosition(longEvery: length, in: db), length: length)
        }
    }

    /// How many breaks were taken and skipped (only the breaks after sessions with `label`, when given).
    public func breakCounts(label: String? = nil) throws(ChimeError) -> BreakCounts {
        _ = try settle()
        return try store.read { db in
            let rows =
                try label.map { label in
                    try Row.fetchAll(
                        db,
                        sql: """
                            SELECT b.state, count(*) AS n FROM focus_break b JOIN focus_session s ON s.id = b.session_id
                            WHERE s.label = ? GROUP BY b.state
                            """,
                        arguments: [label]
                    )
                } ?? Row.fetchAll(db, sql: "SELECT state, count(*) AS n FROM focus_break GROUP BY state")
            var counts = BreakCounts(taken: 0, skipped: 0)
            for row in rows {
                switch row["state"] as String {
                case "taken": counts.taken = row["n"]
                case "skipped": counts.skipped = row["n"]
                default: break
                }
            }
            return counts
        }
    }

    // MARK: - In the caller's transaction

    /// The place in the cycle of the session completed next: after the last break's position,
    /// starting again at 1 after a long break.
    static func nextPosition(longEvery: Int, in db: Database) throws -> Int {
        guard let last = try Row.fetchOne(db, sql: "SELECT position, kind FROM focus_break ORDER BY id DESC LIMIT 1") else {
            return 1
        }
        let position: Int = last["position"]
        let kind: String = last["kind"]
        return kind == FocusBreak.Kind.long.rawValue || position >= longEvery ? 1 : position + 1
    }

    /// Starts the break after `session`, completed at its ``FocusSession/endedAt``, and
    /// schedules its "Break over" alert; the completion alert's body says "Break: 5 min".
    static func startBreak(after session: FocusSession, breaks: FocusBreaks, at time: MachineTime, in db: Database) throws {
        let position = try nextPosition(longEvery: breaks.longEvery, in: db)
        let kind = breaks.kind(afterPosition: position)
        let seconds = breaks.seconds(of: kind)
        let start = session.endedAt ?? time.wall
        let ends = Date(micros: start.micros + Int64(seconds) * 1_000_000)
        try db.execute(
            sql: """
                INSERT INTO focus_break (session_id, kind, position, length_s, started_us, ends_us, state)
                VALUES (?, ?, ?, ?, ?, ?, 'running')
                """,
            arguments: [session.id, kind.rawValue, position, seconds, start.micros, ends.micros]
        )
        let id = db.lastInsertedRowID
        let alert = NewReminder(
            id: FocusBreak.reminderID(id),
            title: FocusBreak.overTitle,
            body: breakOverBody(kind: kind, position: position, longEvery: breaks.longEvery, autoStart: breaks.autoStartSessions),
            trigger: .once(ends),
            kind: FocusTimer.kind
        )
        try ReminderStore.scheduleOnce(alert, now: time.wall, in: db)
        let body = completionBody(kind: kind, breaks: breaks)
        try db.execute(sql: "UPDATE reminder SET body = ? WHERE id = ? AND state = 'pending'", arguments: [body, session.reminderID])
    }

    /// "Great focus session! Break: 5 min."
    static func completionBody(kind: FocusBreak.Kind, breaks: FocusBreaks) -> String {
        "\(FocusTimer.alertBody) \(FocusBreak.startText(kind: kind, seconds: breaks.seconds(of: kind)))."
    }

    static func breakOverBody(kind: FocusBreak.Kind, position: Int, longEvery: Int, autoStart: Bool) -> String {
        let next = kind == .long || position >= longEvery ? 1 : position + 1
        return autoStart
            ? "Session \(next) of \(longEvery) has begun."
            : "Session \(next) of \(longEvery): Start when you are ready."
    }

    /// Settles the running break: taken at its end; then, with `auto_start_sessions`, the next
    /// session starts if its end is recent, as long as the one before the break and with its
    /// label (the cycle goes on with the same work). Returns the session it started, if any.
    static func settleBreak(at time: MachineTime, breaks: FocusBreaks, in db: Database) throws -> FocusSession? {
        guard let running = try fetchRunningBreak(in: db), running.endsAt <= time.wall else { return nil }
        let ended = try endBreak(running, as: .taken, at: running.endsAt, in: db)
        guard breaks.autoStartSessions, time.wall.micros - ended.endsAt.micros <= FocusBreaks.autoStartWindow,
            try fetchOpen(in: db) == nil,
            let last = try fetch(id: running.sessionID, in: db)
        else { return nil }
        return try insertSession(minutes: last.lengthSeconds / 60, label: last.label, breaks: breaks, at: time, in: db)
    }

    /// Ends `running` as `state` at `instant`; a skip cancels its alert.
    @discardableResult
    static func endBreak(_ running: FocusBreak, as state: FocusBreak.State, at instant: Date, in db: Database) throws -> FocusBreak {
        var ended = running
        ended.state = state
        ended.endedAt = instant
        try db.execute(
            sql: "UPDATE focus_break SET state = ?, ended_us = ? WHERE id = ?",
            arguments: [state.rawValue, instant.micros, running.id]
        )
        if state == .skipped { _ = try ReminderStore.cancel(id: running.reminderID, at: instant.micros, in: db) }
        return ended
    }

    /// Whether the running break has reached its end (a settle would write).
    static func breakNeedsWrite(at time: MachineTime, in db: Database) throws -> Bool {
        guard let running = try fetchRunningBreak(in: db) else { return false }
        return running.endsAt <= time.wall
    }

    static func fetchRunningBreak(in db: Database) throws -> FocusBreak? {
        try Row.fetchOne(db, sql: "SELECT * FROM focus_break WHERE state = 'running' ORDER BY id DESC LIMIT 1").map(focusBreak(from:))
    }

    static func fetchBreak(id: Int64, in db: Database) throws -> FocusBreak? {
        try Row.fetchOne(db, sql: "SELECT * FROM focus_break WHERE id = ?", arguments: [id]).map(focusBreak(from:))
    }

    static func focusBreak(from row: Row) throws -> FocusBreak {
        FocusBreak(
            id: row["id"],
            sessionID: row["session_id"],
            kind: FocusBreak.Kind(rawValue: row["kind"]) ?? .short,
            position: row["position"],
            lengthSeconds: row["length_s"],
            startedAt: Date(micros: row["started_us"]),
            endsAt: Date(micros: row["ends_us"]),
            state: FocusBreak.State(rawValue: row["state"]) ?? .taken,
            endedAt: (row["ended_us"] as Int64?).map(Date.init(micros:))
        )
    }
}

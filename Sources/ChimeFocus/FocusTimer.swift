import ChimeCore
import ChimeStore
import Foundation
import GRDB

/// The focus-session timer (the seed's `TimerViewModel`) over Chime's store: start, pause,
/// resume, give up, and completion, each one transaction that changes the session and its
/// completion alert together. The alert is an ordinary one-shot reminder (``FocusSession/reminderID``)
/// that the runner's scheduler fires; nothing here ticks.
///
/// Every reader settles first (``settle()``): an active session whose focus time has reached
/// its length becomes completed, one from before a reboot is abandoned, and the alert is moved
/// to the end the awake clock now gives (after a suspend or a clock change). The runner
/// settles before each pass (``FocusFamily``), so the alert fires at the end of focus time.
public struct FocusTimer: Sendable {
    public static let defaultMinutes = 25
    public static let minutesRange = 10...120
    /// The alert at completion (the seed's texts).
    public static let alertTitle = "Tree planted!"
    public static let alertBody = "Great focus session!"
    /// The reminder kind of completion alerts.
    public static let kind = "focus"
    /// The migration that gave sessions their label (one name, for the tests that look for it).
    public static let labelMigration = "v16: focus session labels"
    /// How far the alert's instant may drift from the end the awake clock gives before it is
    /// moved (the wall and awake clocks drift apart by NTP's slewing: parts per million).
    static let alertTolerance: Int64 = 10_000
    /// An active session this close to its end when the runner has posted its alert counts as
    /// completed (the alert fires at the instant, within the tolerance above).
    static let completionSlack: Int64 = 50_000

    public let store: ReminderStore
    public let clock: any MachineClock
    /// The breaks between sessions (the config's `[focus]` break keys; see ``FocusBreaks``).
    public let breaks: FocusBreaks
    /// Whether the person is away, as the runner's idle source last said (see `FocusIdle.swift`):
    /// with `wait_for_activity`, a break that ends while they are away starts no session.
    public let presence: FocusPresence

    public init(
        store: ReminderStore,
        clock: any MachineClock = SystemMachineClock(),
        breaks: FocusBreaks = FocusBreaks(),
        presence: FocusPresence = FocusPresence()
    ) {
        store.require(.focus)
        self.store = store
        self.clock = clock
        self.breaks = breaks
        self.presence = presence
    }

    /// The breaks as the runner's settle applies them now: with `wait_for_activity` and the
    /// person away, nothing starts by itself (the break or the session starts when they are
    /// back: ``startAfterAway(since:)``).
    var settlingBreaks: FocusBreaks {
        guard breaks.waitForActivity, presence.awaySince != nil else { return breaks }
        var waiting = breaks
        waiting.autoStartSessions = false
        waiting.holdsBreaks = true
        return waiting
    }

    /// What a settle found or did.
    public enum Settled: Sendable, Hashable {
        /// No session is open.
        case none
        /// The open session, still active or paused (its alert moved when it had to).
        case open(FocusSession)
        /// The session completed by this settle.
        case completed(FocusSession)
        /// The session abandoned by this settle (the machine restarted).
        case abandoned(FocusSession)

        public var openSession: FocusSession? {
            if case .open(let session) = self { return session }
            return nil
        }
    }

    // MARK: - Transitions

    /// Starts a session of `minutes` (10 to 120; 25 by default) with its `label` (see
    /// ``FocusLabel``; nil: none), scheduling its alert.
    /// - Throws: `.usage` for minutes out of range or a bad label; `.conflict` naming the session
    ///   already open.
    public func start(minutes: Int = FocusTimer.defaultMinutes, label: String? = nil) throws(ChimeError) -> FocusSession {
        guard Self.minutesRange.contains(minutes) else {
            throw ChimeError.invalid("minutes", String(minutes), expected: "a whole number of minutes from 10 to 120 (default 25)")
        }
        let label = try FocusLabel.validate(label)
        let time = clock.now()
        return try store.write { db in
            if let open = try Self.settle(at: time, breaks: breaks, in: db).openSession {
                throw Self.alreadyOpen(open, at: time)
            }
            // A session started during a break ends the break early.
            if let running = try Self.fetchRunningBreak(in: db) {
                try Self.endBreak(running, as: .skipped, at: time.wall, in: db)
            }
            return try Self.insertSession(minutes: minutes, label: label, breaks: breaks, at: time, in: db)
        }
    }

    /// Inserts an active session of `minutes` with `label` at `time` with its alert, in the
    /// caller's transaction.
    static func insertSession(
        minutes: Int,
        label: String?,
        breaks: FocusBreaks,
        at time: MachineTime,
        in db: Database
    ) throws -> FocusSession {
        try db.execute(
            sql: """
                INSERT INTO focus_session (state, length_s, started_us, boot_id, segment_awake_us, segment_wall_us, label)
                VALUES ('active', ?, ?, ?, ?, ?, ?)
                """,
            arguments: [minutes * 60, time.wall.micros, time.boot, time.awakeMicros, time.wall.micros, label]
        )
        let session = try fetch(id: db.lastInsertedRowID, in: db)!
        try scheduleAlert(for: session, breaks: breaks, at: time, in: db)
        try ReminderStore.recordHook(hookEvent("focus.started", session), at: time.wall, in: db)
        return session
    }

    /// Pauses the active session: its countdown stops and its alert is cancelled.
    public func pause() throws(ChimeError) -> FocusSession {
        try transition(to: .paused, verb: "pause") { session, time, db in
            var paused = session
            paused.state = .paused
            paused.focusMicros = session.focusMicros(at: time)
            paused.pausedAt = time.wall
            paused.segment = nil
            try Self.cancelAlert(of: session, at: time, in: db)
            return paused
        }
    }

    /// Resumes the paused session from its remaining time, scheduling its alert for the new end.
    public func resume() throws(ChimeError) -> FocusSession {
        try transition(to: .active, verb: "resume") { session, time, db in
            var active = session
            active.state = .active
            if let pausedAt = session.pausedAt {
                active.pausedMicros += max(0, time.wall.micros - pausedAt.micros)
            }
            active.pausedAt = nil
            active.pauseReason = nil
            active.backAt = nil
            active.segment = FocusSession.Segment(boot: time.boot, awakeMicros: time.awakeMicros, wall: time.wall)
            try Self.scheduleAlert(for: active, breaks: breaks, at: time, in: db)
            return active
        }
    }

    /// Gives up the open session: abandoned, with the focus time it had; its alert cancelled.
    public func giveUp() throws(ChimeError) -> FocusSession {
        try transition(to: .abandoned, verb: "give up") { session, time, db in
            var abandoned = session
            if let pausedAt = session.pausedAt {
                abandoned.pausedMicros += max(0, time.wall.micros - pausedAt.micros)
            }
            abandoned.state = .abandoned
            abandoned.focusMicros = session.focusMicros(at: time)
            abandoned.endedAt = time.wall
            abandoned.pausedAt = nil
            abandoned.pauseReason = nil
            abandoned.backAt = nil
            abandoned.segment = nil
            abandoned.endReason = .gaveUp
            try Self.cancelAlert(of: session, at: time, in: db)
            try ReminderStore.recordHook(Self.hookEvent("focus.given_up", abandoned), at: time.wall, in: db)
            return abandoned
        }
    }

    /// One transition of the open session, refused unless the seed's state machine allows it.
    private func transition(
        to target: SessionState,
        verb: String,
        _ change: (FocusSession, MachineTime, Database) throws -> FocusSession
    ) throws(ChimeError) -> FocusSession {
        let time = clock.now()
        return try store.write { db in
            let settled = try Self.settle(at: time, breaks: breaks, in: db)
            guard let session = settled.openSession else {
                throw try Self.nothingOpen(verb: verb, settled: settled, in: db)
            }
            guard session.state.canTransition(to: target) else {
                let left = "\(Self.countdown(session.remainingSeconds(at: time))) left"
                throw ChimeError(
                    .conflict,
                    session.state == .paused
                        ? "focus session #\(session.id) is already paused (\(left)): resume it with 'chime focus resume'"
                        : "focus session #\(session.id) is not paused: it is active (\(left)); pause it with 'chime focus pause'"
                )
            }
            let changed = try change(session, time, db)
            try Self.update(changed, in: db)
            return changed
        }
    }

    // MARK: - Reading

    /// Settles, then returns the open session (active or paused), if any.
    public func current() throws(ChimeError) -> Settled {
        try settle()
    }

    /// The open session (active or paused) as stored, without settling: a read only, for a
    /// reader beside the runner (the D-Bus properties), which must not complete a session the
    /// runner's focus part completes, with its alert, at its end.
    public func openWithoutSettling() throws(ChimeError) -> FocusSession? {
        try store.read { db in try Self.fetchOpen(in: db) }
    }

    /// The most recent session, whatever its state, as stored (without settling: see
    /// ``openWithoutSettling()``).
    public func latestWithoutSettling() throws(ChimeError) -> FocusSession? {
        try store.read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM focus_session ORDER BY id DESC LIMIT 1").map(Self.session(from:))
        }
    }

    /// The most recent session, whatever its state (after settling).
    public func latest() throws(ChimeError) -> FocusSession? {
        _ = try settle()
        return try store.read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM focus_session ORDER BY id DESC LIMIT 1").map(Self.session(from:))
        }
    }

    /// The session `id`, after settling. - Throws: `.notFound`.
    public func session(id: Int64) throws(ChimeError) -> FocusSession {
        _ = try settle()
        guard let session = try store.read({ db in try Self.fetch(id: id, in: db) }) else {
            throw ChimeError(.notFound, "no focus session has the id '\(id)': see 'chime forest' for completed sessions")
        }
        return session
    }

    /// Brings the open session in step with the clocks (see the type's discussion). Writes only
    /// when something changes, so a store that takes no writes can still be read.
    @discardableResult
    public func settle() throws(ChimeError) -> Settled {
        let time = clock.now()
        // One read decides; the write (which settles again, inside its transaction) only when needed.
        let (open, needsWrite) = try store.read { db in
            let open = try Self.fetchOpen(in: db)
            let sessionWrite = try open.map { try Self.needsWrite($0, at: time, in: db) } ?? false
            return (open, try sessionWrite || Self.breakNeedsWrite(at: time, in: db))
        }
        guard needsWrite else { return open.map(Settled.open) ?? .none }
        let breaks = settlingBreaks
        return try store.write { db in try Self.settle(at: time, breaks: breaks, in: db) }
    }

    /// Whether settling `session` would change the store.
    private static func needsWrite(_ session: FocusSession, at time: MachineTime, in db: Database) throws -> Bool {
        guard session.state == .active else { return false }
        guard let segment = session.segment, segment.boot == time.boot else { return true }
        if try isDone(session, at: time, in: db) { return true }
        guard let due = try ReminderStore.pendingDue(id: session.reminderID, in: db) else { return false }
        return abs(due.micros - expectedEnd(session, at: time).micros) > alertTolerance
    }

    /// Whether the active `session` has reached its length: by the awake clock, or within
    /// ``completionSlack`` of it once its alert has been shown (the alert fires at the end the
    /// wall clock gives, which may lie a few milliseconds before the awake clock's).
    private static func isDone(_ session: FocusSession, at time: MachineTime, in db: Database) throws -> Bool {
        let remaining = session.lengthMicros - session.uncappedFocusMicros(at: time)
        if remaining <= 0 { return true }
        return try remaining <= completionSlack && ReminderStore.wasShown(id: session.reminderID, in: db)
    }

    /// The settle, in the caller's transaction.
    static func settle(at time: MachineTime, breaks: FocusBreaks, in db: Database) throws -> Settled {
        guard var session = try fetchOpen(in: db) else {
            return try settleBreak(at: time, breaks: breaks, in: db).map(Settled.open) ?? .none
        }
        guard session.state == .active else { return .open(session) }
        guard let segment = session.segment, segment.boot == time.boot else {
            // The machine restarted mid-session: what it was awake for since the last start or
            // resume is unknown, so only the focus time counted before it is kept.
            session.state = .abandoned
            session.endReason = .restarted
            // Ended at the latest when this boot began (the wall clock minus the awake time).
            let bootStart = time.wall.micros - time.awakeMicros
            session.endedAt = Date(micros: max(bootStart, session.segment?.wall.micros ?? session.startedAt.micros))
            session.segment = nil
            try update(session, in: db)
            try cancelAlert(of: session, at: time, in: db)
            return .abandoned(session)
        }
        if try isDone(session, at: time, in: db) {
            let remaining = session.lengthMicros - session.uncappedFocusMicros(at: time)
            // Completed when its focus time reached the length: `-remaining` awake time ago.
            session.state = .completed
            session.endedAt = Date(micros: time.wall.micros + min(0, remaining))
            session.focusMicros = session.lengthMicros
            session.segment = nil
            try update(session, in: db)
            try ReminderStore.recordHook(hookEvent("focus.completed", session), at: time.wall, in: db)
            // The alert fires now if its instant still lies ahead (the clock was set back).
            if let due = try ReminderStore.pendingDue(id: session.reminderID, in: db), due > time.wall {
                _ = try ReminderStore.moveOnce(id: session.reminderID, to: time.wall, in: db)
            }
            // With wait_for_activity and the person away, the break starts when they are back
            // (``startAfterAway(since:)``).
            if !breaks.holdsBreaks { try startBreak(after: session, breaks: breaks, at: time, in: db) }
            // A break as short as a session that completed long ago may be over already.
            _ = try settleBreak(at: time, breaks: FocusBreaks(autoStartSessions: false), in: db)
            return .completed(session)
        }
        let end = expectedEnd(session, at: time)
        if let due = try ReminderStore.pendingDue(id: session.reminderID, in: db), abs(due.micros - end.micros) > alertTolerance {
            _ = try ReminderStore.moveOnce(id: session.reminderID, to: end, in: db)
        }
        return .open(session)
    }

    /// A session's event for its hook (``HookEvent``): `CHIME_ID` its number, `CHIME_TITLE`,
    /// `CHIME_FOCUS_MINUTES` its length, `CHIME_FOCUS_SECONDS` the focus time it had, and
    /// `CHIME_FOCUS_LABEL` its label when it has one.
    static func hookEvent(_ name: String, _ session: FocusSession) -> HookEvent {
        var environment = [
            "CHIME_TITLE": "Focus session #\(session.id)",
            "CHIME_FOCUS_MINUTES": String(session.lengthMicros / 60_000_000),
            "CHIME_FOCUS_SECONDS": String(session.focusMicros / 1_000_000),
        ]
        if let label = session.label { environment["CHIME_FOCUS_LABEL"] = label }
        return HookEvent(name, subject: String(session.id), environment: environment)
    }

    /// The wall-clock instant the active `session` ends, read at `time`.
    static func expectedEnd(_ session: FocusSession, at time: MachineTime) -> Date {
        Date(micros: time.wall.micros + session.remainingMicros(at: time))
    }

    // MARK: - Alert

    /// Schedules the completion alert of `session`; its body says the break that will follow
    /// ("Break: 5 min"): an alert may be claimed by the runner just before the session
    /// completes, so the body is written now (and again at the completion, in case the config
    /// changed meanwhile).
    private static func scheduleAlert(for session: FocusSession, breaks: FocusBreaks, at time: MachineTime, in db: Database) throws {
        let kind = breaks.kind(afterPosition: try nextPosition(longEvery: breaks.longEvery, in: db))
        let alert = NewReminder(
            id: session.reminderID,
            title: FocusTimer.alertTitle,
            body: completionBody(kind: kind, breaks: breaks),
            trigger: .once(expectedEnd(session, at: time)),
            kind: FocusTimer.kind
        )
        try ReminderStore.scheduleOnce(alert, now: time.wall, in: db)
    }

    static func cancelAlert(of session: FocusSession, at time: MachineTime, in db: Database) throws {
        _ = try ReminderStore.cancel(id: session.reminderID, at: time.wall.micros, in: db)
    }

    // MARK: - Rows

    static func fetchOpen(in db: Database) throws -> FocusSession? {
        try Row.fetchOne(
            db.cachedStatement(sql: "SELECT * FROM focus_session WHERE state IN ('active', 'paused')")
        ).map(session(from:))
    }

    static func fetch(id: Int64, in db: Database) throws -> FocusSession? {
        try Row.fetchOne(db, sql: "SELECT * FROM focus_session WHERE id = ?", arguments: [id]).map(session(from:))
    }

    static func update(_ session: FocusSession, in db: Database) throws {
        try db.execute(
            sql: """
                UPDATE focus_session SET state = ?, ended_us = ?, focus_us = ?, paused_us = ?, paused_at_us = ?,
                    boot_id = ?, segment_awake_us = ?, segment_wall_us = ?, end_reason = ?, pause_reason = ?, idle_pauses = ?,
                    back_us = ?
                WHERE id = ?
                """,
            arguments: [
                session.state.rawValue, session.endedAt?.micros, session.focusMicros, session.pausedMicros,
                session.pausedAt?.micros, session.segment?.boot, session.segment?.awakeMicros, session.segment?.wall.micros,
                session.endReason?.rawValue, session.pauseReason?.rawValue, session.idlePauses, session.backAt?.micros, session.id,
            ]
        )
    }

    static func session(from row: Row) throws -> FocusSession {
        let stateText: String = row["state"]
        guard let state = SessionState(rawValue: stateText) else {
            throw ChimeError(.store, "unknown focus session state '\(stateText)' in the store")
        }
        var segment: FocusSession.Segment?
        if let boot: String = row["boot_id"], let awake: Int64 = row["segment_awake_us"], let wall: Int64 = row["segment_wall_us"] {
            segment = FocusSession.Segment(boot: boot, awakeMicros: awake, wall: Date(micros: wall))
        }
        return FocusSession(
            id: row["id"],
            state: state,
            lengthSeconds: row["length_s"],
            startedAt: Date(micros: row["started_us"]),
            endedAt: (row["ended_us"] as Int64?).map(Date.init(micros:)),
            focusMicros: row["focus_us"],
            pausedMicros: row["paused_us"],
            pausedAt: (row["paused_at_us"] as Int64?).map(Date.init(micros:)),
            segment: segment,
            endReason: (row["end_reason"] as String?).flatMap(EndReason.init(rawValue:)),
            label: row["label"],
            pauseReason: (row["pause_reason"] as String?).flatMap(PauseReason.init(rawValue:)),
            idlePauses: row["idle_pauses"],
            backAt: (row["back_us"] as Int64?).map(Date.init(micros:))
        )
    }

    // MARK: - Text

    /// `#12 (thesis), active, 18:32 left, started Sun 2026-11-22 14:02 +01:00`.
    static func describe(_ session: FocusSession, at time: MachineTime) -> String {
        let started = TimeText.local(session.startedAt, in: .current)
        let label = session.label.map { " (\($0))" } ?? ""
        let left = countdown(session.remainingSeconds(at: time))
        return "#\(session.id)\(label), \(session.state.rawValue), \(left) left, started \(started)"
    }

    /// Why another session cannot start: one is open. A paused session still holds the one
    /// slot (pausing does not end it), so the way out is to resume it or give it up.
    static func alreadyOpen(_ open: FocusSession, at time: MachineTime) -> ChimeError {
        if open.state == .paused {
            return ChimeError(
                .conflict,
                "a focus session is paused: \(describe(open, at: time)); a paused session still counts as the one session: "
                    + "resume it ('chime focus resume') or give it up ('chime focus give-up') before starting another"
            )
        }
        return ChimeError(
            .conflict,
            "a focus session is already running: \(describe(open, at: time)): "
                + "let it finish or give it up ('chime focus give-up') before starting another"
        )
    }

    /// MM:SS (minutes past 59 stay minutes: 120:00).
    public static func countdown(_ seconds: Int) -> String {
        String(format: "%02d:%02d", seconds / 60, seconds % 60)
    }

    /// Not found, saying what became of the last session when there was one.
    private static func nothingOpen(verb: String, settled: Settled, in db: Database) throws -> ChimeError {
        let start = "start one with 'chime focus start'"
        let last: FocusSession? =
            switch settled {
            case .completed(let session), .abandoned(let session): session
            default: try Row.fetchOne(db, sql: "SELECT * FROM focus_session ORDER BY id DESC LIMIT 1").map(session(from:))
            }
        guard let last else { return ChimeError(.notFound, "no focus session to \(verb): \(start)") }
        let what =
            switch (last.state, last.endReason) {
            case (.completed, _): "the last one, #\(last.id), was completed"
            case (.abandoned, .restarted?): "the last one, #\(last.id), was abandoned when the machine restarted"
            default: "the last one, #\(last.id), was given up"
            }
        return ChimeError(.notFound, "no focus session to \(verb): \(what); \(start)")
    }
}

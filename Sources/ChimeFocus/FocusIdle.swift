import ChimeCore
import ChimeStore
import Foundation
import GRDB
import Synchronization

/// What an idle source tells the focus family.
public enum IdleEvent: Sendable, Hashable {
    /// The person has been idle (no keyboard or pointer input) for at least the threshold asked
    /// for: `idleMicros` since their last input, as the source reports it at this instant.
    case idle(idleMicros: Int64)
    /// Input again after an ``idle(idleMicros:)``: the person is back.
    case active
}

/// Where the desktop says how long the person has been idle: GNOME's Mutter IdleMonitor,
/// `org.freedesktop.ScreenSaver`, or logind's IdleHint (ChimeDBus implements them over GDBus;
/// the tests script one). A source is watched only while the focus family needs it (a session
/// runs, or one is paused because the person left, or a session waits for them to be back).
public protocol IdleSource: AnyObject, Sendable {
    /// What `chime doctor` calls it: "GNOME Mutter IdleMonitor".
    var name: String { get }
    /// Starts watching for `threshold` of idleness (replacing an earlier watch): `handler` is
    /// told ``IdleEvent/idle(idleMicros:)`` once the person has been idle that long (at once
    /// when they already are), then ``IdleEvent/active`` when they are back, and so on. Called
    /// on the runner's thread; `handler` may be called on any thread.
    func watch(threshold: Duration, handler: @escaping @Sendable (IdleEvent) -> Void)
    /// Stops watching: no more events, and a source that has to poll stops its timer.
    func unwatch()
}

/// The config's idle keys (`[focus] idle_pause`; `wait_for_activity` is with the breaks).
public struct FocusIdle: Sendable, Hashable {
    /// 10 minutes: a person reading or thinking away from the keyboard for a few minutes is
    /// still focusing (a shorter time would pause them while they read), and the pause is
    /// backdated to when the idleness began, so a longer threshold counts no time away as
    /// focus time: it only says it later.
    public static let defaultPauseSeconds: Int64 = 600

    /// Pause a session after this long idle; nil: never (`"off"`).
    public var pauseSeconds: Int64?

    public init(pauseSeconds: Int64? = FocusIdle.defaultPauseSeconds) {
        self.pauseSeconds = pauseSeconds
    }

    /// The config's `[focus] idle_pause`, read through `setting`.
    public static func configured(_ setting: (ConfigKey) -> ConfigValue) -> FocusIdle {
        if case .seconds(let seconds) = setting(.focusIdlePause) { return FocusIdle(pauseSeconds: seconds) }
        return FocusIdle(pauseSeconds: nil)
    }

    /// How long idle counts as away: `idle_pause`, or its default when it is off (for
    /// `wait_for_activity` alone).
    public var threshold: Duration { .seconds(pauseSeconds ?? Self.defaultPauseSeconds) }

    /// "Paused while you were away 12 min: resume?": the whole minutes away, rounded to the
    /// nearest (at least 1).
    public static func awayMinutes(seconds: Int64) -> Int { Int(max(1, (seconds + 30) / 60)) }

    /// How late after a break's end the person may come back for `wait_for_activity` still to
    /// start the next session: beyond an hour away, the cycle waits for Start (a person back
    /// the next morning does not want a session started by their first key press).
    public static let waitWindow: Int64 = 3_600_000_000
}

/// Whether the person is away, as the idle source last said: shared by the family (which hears
/// the source) and the timer (whose settle holds back `auto_start_sessions` while they are away).
public final class FocusPresence: Sendable {
    private let away = Mutex<Date?>(nil)

    public init() {}

    /// When the person went away (their last input), or nil when they are here (or no source says).
    public var awaySince: Date? { away.withLock { $0 } }

    func set(awaySince: Date?) { away.withLock { $0 = awaySince } }
}

extension FocusTimer {
    /// The person has been idle for `idleMicros`: the active session is paused back to when the
    /// idleness began (never before its start or last resume), recorded as paused for
    /// idleness (``PauseReason/idle``, and ``FocusSession/idlePauses`` counts it); its alert is
    /// cancelled as `chime focus pause` does. Nil when no session is active.
    @discardableResult
    public func pauseForIdle(idleMicros: Int64) throws(ChimeError) -> FocusSession? {
        let time = clock.now()
        let breaks = settlingBreaks
        return try store.write { db in
            guard let session = try Self.settle(at: time, breaks: breaks, in: db).openSession, session.state == .active else {
                return nil
            }
            let uncapped = session.uncappedFocusMicros(at: time)
            // Back to the idleness's start, within the running segment.
            let back = min(max(0, idleMicros), uncapped - session.focusMicros)
            var paused = session
            paused.state = .paused
            paused.focusMicros = min(session.lengthMicros, uncapped - back)
            paused.pausedAt = Date(micros: time.wall.micros - back)
            paused.segment = nil
            paused.pauseReason = .idle
            paused.backAt = nil
            paused.idlePauses += 1
            try Self.cancelAlert(of: session, at: time, in: db)
            try Self.update(paused, in: db)
            return paused
        }
    }

    /// The person is back while the open session is paused for idleness: the moment is recorded
    /// (``FocusSession/backAt``; their latest return, when they leave and come back again), from
    /// which the alert says how long they were away, in this runner and in one restarted later.
    /// Returns the session so marked, or nil when no session is paused for idleness.
    @discardableResult
    public func recordBack() throws(ChimeError) -> FocusSession? {
        let time = clock.now()
        let breaks = settlingBreaks
        return try store.write { db in
            guard var session = try Self.settle(at: time, breaks: breaks, in: db).openSession, session.state == .paused,
                session.pauseReason == .idle
            else { return nil }
            session.backAt = time.wall
            try Self.update(session, in: db)
            return session
        }
    }

    /// The person is back after being away since `since`: with `wait_for_activity`, what
    /// waited for them starts now (as long as they come back within ``FocusIdle/waitWindow``):
    /// the break after a session that completed while they were away, or, with
    /// `auto_start_sessions`, the session after a break that ended while they were away (as
    /// long as the one before the break). Returns the session started, if any.
    @discardableResult
    public func startAfterAway(since: Date) throws(ChimeError) -> FocusSession? {
        guard breaks.waitForActivity else { return nil }
        let time = clock.now()
        let breaks = breaks
        return try store.write { db in
            guard try Self.settle(at: time, breaks: breaks, in: db).openSession == nil, try Self.fetchRunningBreak(in: db) == nil,
                let latest = try Row.fetchOne(db, sql: "SELECT * FROM focus_session ORDER BY id DESC LIMIT 1").map(Self.session(from:))
            else { return nil }
            let last = try Row.fetchOne(db, sql: "SELECT * FROM focus_break ORDER BY id DESC LIMIT 1").map(Self.focusBreak(from:))
            func recent(_ ended: Date?) -> Bool {
                guard let ended else { return false }
                return ended >= since && time.wall.micros - ended.micros <= FocusIdle.waitWindow
            }
            // A session completed while they were away, its break held back: the break starts now.
            if latest.state == .completed, last.map({ $0.sessionID != latest.id }) ?? true, recent(latest.endedAt) {
                var from = latest
                from.endedAt = time.wall
                try Self.startBreak(after: from, breaks: breaks, at: time, in: db)
                return nil
            }
            // A break that ended while they were away: the next session starts now.
            guard breaks.autoStartSessions, let last, last.state == .taken, last.sessionID == latest.id, recent(last.endedAt) else {
                return nil
            }
            return try Self.insertSession(minutes: latest.lengthSeconds / 60, label: latest.label, breaks: breaks, at: time, in: db)
        }
    }
}

/// A person back from being away, whose session was paused for it: without a live alert, the
/// alert of its own "Paused while you were away 12 min: resume?" still to post (the live alert
/// reads it from the session, ``FocusSession/awayMinutes``).
struct AwayReturn: Sendable, Hashable {
    var sessionID: Int64
    var minutes: Int
}

extension FocusFamily {
    /// Watches the idle source while it is needed (``IdleSource``): while a session is active,
    /// or paused for idleness (to hear the person come back), with `wait_for_activity` while a
    /// break runs that starts a session, or while the person is away; otherwise not (a polling source then polls nothing). On the
    /// runner's thread, after each settle.
    func updateIdleWatch(activeSession: Bool, pausedForIdle: Bool, breakRunning: Bool) {
        guard let idle else { return }
        let breaks = timer.breaks
        let waits = breaks.waitForActivity
        let wanted =
            (idleSettings.pauseSeconds != nil && (activeSession || pausedForIdle))
            || (waits && (activeSession || (breakRunning && breaks.autoStartSessions) || timer.presence.awaySince != nil))
        let changed = watching.withLock { watching in
            defer { watching = wanted }
            return watching != wanted
        }
        guard changed else { return }
        if wanted {
            idle.watch(threshold: idleSettings.threshold) { [weak self] event in self?.idleChanged(event) }
        } else {
            idle.unwatch()
            // Not watching: nobody says when they come back, so they count as here.
            timer.presence.set(awaySince: nil)
        }
    }

    /// What the idle source said: away (pause the active session, backdated), or back (ask
    /// whether to resume a session paused for it; start the break or session `wait_for_activity`
    /// held back). Then the runner is poked to show it. Errors are the store's: the next pass's
    /// settle meets them and logs them.
    public func idleChanged(_ event: IdleEvent) {
        let now = timer.clock.now()
        switch event {
        case .idle(let idleMicros):
            timer.presence.set(awaySince: Date(micros: now.wall.micros - max(0, idleMicros)))
            if idleSettings.pauseSeconds != nil { _ = try? timer.pauseForIdle(idleMicros: idleMicros) }
        case .active:
            let since = timer.presence.awaySince
            timer.presence.set(awaySince: nil)
            if let session = try? timer.recordBack(), let minutes = session.awayMinutes, !liveAlert {
                awayReturn.withLock { $0 = AwayReturn(sessionID: session.id, minutes: minutes) }
            }
            if let since { _ = try? timer.startAfterAway(since: since) }
        }
        poke.withLock { $0 }?()
    }

    /// How the family wakes the runner when the idle source speaks (`Runner.poke`).
    public func connect(poke body: @escaping @Sendable () -> Void) {
        poke.withLock { $0 = body }
    }

    /// The idle source's name for `chime doctor` and the log, or nil when there is none.
    public var idleSourceName: String? { idle?.name }
}

extension FocusLiveAlert {
    /// The title of the alert when the person is back: "Paused while you were away 12 min: resume?".
    public static func awayTitle(minutes: Int) -> String { "Paused while you were away \(minutes) min: resume?" }

    /// The live alert of `session`, paused while the person was away `minutes`, once they are
    /// back: the question, the time left, Resume / Give up.
    public static func awayNote(
        _ session: FocusSession,
        minutes: Int,
        at time: MachineTime,
        postedAt: Date,
        icon: String?
    ) -> Note {
        var note = Note(
            id: session.reminderID,
            title: awayTitle(minutes: minutes),
            body: "Tree stage \(session.stage(at: time)) of 5, \(FocusTimer.countdown(session.remainingSeconds(at: time))) left.",
            actions: [Note.Action(key: resume, label: "Resume"), Note.Action(key: giveUp, label: "Give up")],
            postedAt: postedAt
        )
        note.answerInstead = "Resume: chime focus resume. Give up: chime focus give-up --yes"
        note.icon = icon
        note.category = category
        note.progress = progress(session, at: time)
        note.hints["x-dunst-stack-tag"] = "chime-\(session.reminderID)"
        note.hints["x-canonical-private-synchronous"] = "chime-\(session.reminderID)"
        note.sticky = true
        return note
    }
}

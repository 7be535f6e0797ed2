import ChimeCore
import ChimeFocus
import Foundation
import Synchronization

/// What the timer screen shows (the seed's `TimerViewModel` outputs), as one snapshot.
public struct TimerState: Sendable, Hashable {
    /// The seed's `currentState`, with "no session" as ``idle``.
    public enum Phase: String, Sendable, Hashable {
        /// No session: the screen offers to plant a tree.
        case idle
        case active, paused
        /// The session watched has ended: shown until ``TimerViewModel/dismiss()``.
        case completed, abandoned
    }

    public var phase: Phase
    /// The session shown (open, or just ended); nil when idle.
    public var sessionID: Int64?
    /// The session's length (idle: the length a start would plant).
    public var lengthSeconds: Int
    /// The countdown's whole seconds, rounded up (25:00 at the start, 00:00 only at the end).
    public var remainingSeconds: Int
    /// `24:59`: MM:SS, as `chime focus status` shows it.
    public var countdown: String
    /// The tree's stage, 1 to 5 (5 once completed).
    public var stage: Int
    /// Focus time over the session's length, 0 to 1.
    public var progress: Double
    /// A headline for the phase: `Tree planted!` once completed.
    public var headline: String?
    /// A sentence under it: `Great focus session!`, how a given-up session ended, or (idle) how
    /// the last one ended.
    public var message: String?
    /// The last action's failure, as the CLI words it (`no focus session to pause: …`); cleared
    /// by the next action.
    public var error: ChimeError?
    /// During the break after a completed session: `Break: 04:12 left` (`Long break: …`).
    public var breakLeft: String? = nil
    /// The label of the session shown (`thesis`); nil without one, or idle.
    public var label: String? = nil

    /// The seed's `isSessionActive`: the countdown runs (a view ticks only then).
    public var isSessionActive: Bool { phase == .active }
    /// Which buttons a view enables: Plant Tree, Pause, Resume, Give Up.
    public var canStart: Bool { phase == .idle || phase == .completed || phase == .abandoned }
    public var canPause: Bool { phase == .active }
    public var canResume: Bool { phase == .paused }
    public var canGiveUp: Bool { phase == .active || phase == .paused }
    public var canSkipBreak: Bool { breakLeft != nil }
    /// Whether a view redraws each second: a session's countdown, or a break's.
    public var ticks: Bool { isSessionActive || breakLeft != nil }
}

/// The focus timer's screen (the seed's `TimerViewModel`) over ``FocusTimer``: start, pause,
/// resume, give up, and the countdown and the tree's stage on the injected machine clock.
///
/// Nothing here ticks: a view calls ``refresh()`` once a second while
/// ``TimerState/isSessionActive`` (a countdown shown to a person may tick; the runner never
/// does). ``refresh()`` reads without settling, as the D-Bus properties do: the runner's focus
/// part completes a session at its end, with its alert; a reader beside it that settled could
/// complete it first. An active session at 00:00 shows as completed all the same.
public final class TimerViewModel: Sendable {
    /// The seed's confirmation before giving up (`chime focus give-up` asks it too).
    public static let giveUpQuestion = "This will kill your tree. Give up?"

    public let timer: FocusTimer
    /// The length a start plants, in minutes (the config file's `focus.length`; 25 by default).
    public var minutes: Int { length.withLock { $0 } }
    private let length: Mutex<Int>
    public let zone: TimeZone
    private let current: Mutex<TimerState>
    /// The session on screen, kept so that its end shows until dismissed.
    private let watching = Mutex<Int64?>(nil)

    public init(timer: FocusTimer, minutes: Int = FocusTimer.defaultMinutes, zone: TimeZone = .current) {
        self.timer = timer
        length = Mutex(minutes)
        self.zone = zone
        current = Mutex(Self.idle(minutes: minutes, note: nil))
        refresh()
    }

    /// The latest snapshot.
    public var state: TimerState { current.withLock { $0 } }

    // MARK: - What a person does

    /// Plant Tree: starts a session of ``minutes`` with `label` (the label entry's text: empty or
    /// blank is no label; otherwise checked as `chime focus start --label` checks it).
    @discardableResult
    public func start(label: String? = nil) -> TimerState {
        let label = label.flatMap { $0.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty ? nil : $0 }
        return act { () throws(ChimeError) in try timer.start(minutes: minutes, label: label) }
    }

    @discardableResult
    public func pause() -> TimerState { act { () throws(ChimeError) in try timer.pause() } }

    @discardableResult
    public func resume() -> TimerState { act { () throws(ChimeError) in try timer.resume() } }

    /// Give Up (after ``giveUpQuestion``): the session is abandoned with the focus time it had.
    @discardableResult
    public func giveUp() -> TimerState { act { () throws(ChimeError) in try timer.giveUp() } }

    /// Ends the running break now (as `chime focus skip`).
    @discardableResult
    public func skipBreak() -> TimerState {
        do {
            _ = try timer.skipBreak()
            return refresh()
        } catch {
            refresh()
            current.withLock { $0.error = error }
            return state
        }
    }

    /// After the completion or give-up screen: back to no session (the seed's reset).
    @discardableResult
    public func dismiss() -> TimerState {
        let phase = state.phase
        guard phase == .completed || phase == .abandoned else { return state }
        watching.withLock { $0 = nil }
        return refresh()
    }

    /// The length the next start plants changed (Preferences wrote the config file's
    /// `focus.length`): an idle screen shows it at once; a session on screen keeps its own.
    @discardableResult
    public func setMinutes(_ minutes: Int) -> TimerState {
        length.withLock { $0 = minutes }
        return refresh()
    }

    /// Reads the session again at the clock's now (each second while active; after the runner
    /// signals a change).
    @discardableResult
    public func refresh() -> TimerState {
        do {
            var next = try read()
            // The break after a completed session (read without settling, as the session is).
            if !next.isSessionActive && next.phase != .paused, let rest = try timer.runningBreakWithoutSettling(at: timer.clock.now().wall)
            {
                let left = FocusTimer.countdown(rest.remainingSeconds(at: timer.clock.now().wall))
                next.breakLeft = (rest.kind == .long ? "Long break: " : "Break: ") + "\(left) left"
            }
            current.withLock { $0 = next }
        } catch {
            current.withLock { $0.error = error }
        }
        return state
    }

    // MARK: - Reading

    private func act(_ action: () throws(ChimeError) -> FocusSession) -> TimerState {
        do {
            let session = try action()
            watching.withLock { $0 = session.id }
            let next = show(session, at: timer.clock.now())
            current.withLock { $0 = next }
        } catch {
            refresh()
            current.withLock { $0.error = error }
        }
        return state
    }

    private func read() throws(ChimeError) -> TimerState {
        let time = timer.clock.now()
        if let open = try timer.openWithoutSettling() {
            watching.withLock { $0 = open.id }
            return show(open, at: time)
        }
        let latest = try timer.latestWithoutSettling()
        if let latest, watching.withLock({ $0 }) == latest.id {
            return show(latest, at: time)
        }
        watching.withLock { $0 = nil }
        return Self.idle(minutes: minutes, note: latest.flatMap { FocusText.outcome($0, zone: zone) })
    }

    private func show(_ session: FocusSession, at time: MachineTime) -> TimerState {
        let remaining = session.remainingSeconds(at: time)
        // An active session at its end is complete, whether or not the runner has settled it yet.
        let completed = session.state == .completed || (session.state == .active && remaining == 0)
        let phase = completed ? .completed : TimerState.Phase(rawValue: session.state.rawValue) ?? .idle
        var headline: String?
        var message: String?
        switch phase {
        case .completed:
            headline = FocusTimer.alertTitle
            message = FocusTimer.alertBody
        case .abandoned:
            message =
                session.endReason == .restarted
                ? FocusText.outcome(session, zone: zone)
                : "Gave up focus session #\(session.id) after \(FocusText.minutes(session.focusMicros)) of focus. "
                    + "The tree did not make it."
        case .paused:
            message = "Paused with \(FocusTimer.countdown(remaining)) to go."
        case .active, .idle:
            break
        }
        return TimerState(
            phase: phase,
            sessionID: session.id,
            lengthSeconds: session.lengthSeconds,
            remainingSeconds: completed ? 0 : remaining,
            countdown: FocusTimer.countdown(completed ? 0 : remaining),
            stage: completed ? TreeStage.grown : session.stage(at: time),
            progress: completed
                ? 1 : session.lengthMicros > 0 ? Double(session.focusMicros(at: time)) / Double(session.lengthMicros) : 0,
            headline: headline,
            message: message,
            error: nil,
            label: session.label
        )
    }

    private static func idle(minutes: Int, note: String?) -> TimerState {
        TimerState(
            phase: .idle,
            sessionID: nil,
            lengthSeconds: minutes * 60,
            remainingSeconds: minutes * 60,
            countdown: FocusTimer.countdown(minutes * 60),
            stage: 1,
            progress: 0,
            headline: nil,
            message: note,
            error: nil
        )
    }
}

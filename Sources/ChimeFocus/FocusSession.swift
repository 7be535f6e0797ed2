import ChimeCore
import Foundation

/// Where a focus session is: the seed's `SessionState`, with its transitions.
public enum SessionState: String, Sendable, Hashable, Codable, CaseIterable {
    case active, paused, completed, abandoned

    public var displayName: String {
        switch self {
        case .active: "Active"
        case .paused: "Paused"
        case .completed: "Completed"
        case .abandoned: "Abandoned"
        }
    }

    /// The seed's `canTransitionTo`: completed and abandoned are terminal.
    public var canTransitionTo: [SessionState] {
        switch self {
        case .active: [.paused, .completed, .abandoned]
        case .paused: [.active, .abandoned]
        case .completed, .abandoned: []
        }
    }

    public func canTransition(to state: SessionState) -> Bool { canTransitionTo.contains(state) }

    /// Active or paused: the one session that may exist at a time.
    public var isOpen: Bool { self == .active || self == .paused }
}

/// Why a session was abandoned.
public enum EndReason: String, Sendable, Hashable, Codable {
    /// `chime focus give-up`.
    case gaveUp = "gave-up"
    /// The machine restarted while the session was running: its awake time since the last
    /// start or resume cannot be known, so the tree did not survive (the seed's rule).
    case restarted
}

/// Why a session is paused.
public enum PauseReason: String, Sendable, Hashable, Codable {
    /// The person was idle for `[focus] idle_pause` (an idle source said so): paused back to
    /// when the idleness began (see `FocusIdle.swift`).
    case idle
}

/// One focus session, as the store keeps it.
///
/// Focus time is counted on the machine's awake clock (``MachineTime/awakeMicros``) from the
/// start or the last resume: a suspended machine does not grow the tree, and a clock set by a
/// person or NTP changes nothing.
public struct FocusSession: Sendable, Hashable, Identifiable {
    /// The running part of an active session: from its start or last resume.
    public struct Segment: Sendable, Hashable {
        public var boot: String
        public var awakeMicros: Int64
        public var wall: Date

        public init(boot: String, awakeMicros: Int64, wall: Date) {
            self.boot = boot
            self.awakeMicros = awakeMicros
            self.wall = wall
        }
    }

    public var id: Int64
    public var state: SessionState
    /// The planned focus time, in whole seconds (25 minutes by default).
    public var lengthSeconds: Int
    public var startedAt: Date
    /// When it was completed (the instant its focus time reached the length) or abandoned.
    public var endedAt: Date?
    /// Focus time counted before the running segment; once paused or ended, all of it.
    public var focusMicros: Int64
    /// Time spent paused (the seed's `pausedDuration`): not focus time.
    public var pausedMicros: Int64
    /// When the current pause began.
    public var pausedAt: Date?
    public var segment: Segment?
    public var endReason: EndReason?
    /// What the session was for (`--label thesis`; see ``FocusLabel``); nil without one.
    public var label: String?
    /// Why the current pause began, when it was not the person's own `chime focus pause`.
    public var pauseReason: PauseReason?
    /// How many times it was paused because the person was away (idle).
    public var idlePauses: Int
    /// When the person came back during a pause for idleness (their last return, as the idle
    /// source said it): the alert's "away N min" runs from ``pausedAt`` to it. Nil while they
    /// are away, and for any other pause.
    public var backAt: Date?

    public init(
        id: Int64,
        state: SessionState,
        lengthSeconds: Int,
        startedAt: Date,
        endedAt: Date? = nil,
        focusMicros: Int64 = 0,
        pausedMicros: Int64 = 0,
        pausedAt: Date? = nil,
        segment: Segment? = nil,
        endReason: EndReason? = nil,
        label: String? = nil,
        pauseReason: PauseReason? = nil,
        idlePauses: Int = 0,
        backAt: Date? = nil
    ) {
        self.id = id
        self.state = state
        self.lengthSeconds = lengthSeconds
        self.startedAt = startedAt
        self.endedAt = endedAt
        self.focusMicros = focusMicros
        self.pausedMicros = pausedMicros
        self.pausedAt = pausedAt
        self.segment = segment
        self.endReason = endReason
        self.label = label
        self.pauseReason = pauseReason
        self.idlePauses = idlePauses
        self.backAt = backAt
    }

    /// The identifier of the session's completion alert: `focus-12`. Like every reminder's, it
    /// can be cancelled with `chime cancel`.
    public var reminderID: String { Self.reminderID(id) }

    public static func reminderID(_ id: Int64) -> String { "focus-\(id)" }

    public var lengthMicros: Int64 { Int64(lengthSeconds) * 1_000_000 }

    /// "Paused while you were away N min": the whole minutes from the pause (backdated to when
    /// the idleness began) to the person's return, read from the session alone, so a restarted
    /// runner says the same; nil unless it is paused for idleness and they are back.
    public var awayMinutes: Int? {
        guard state == .paused, pauseReason == .idle, let pausedAt, let backAt else { return nil }
        return FocusIdle.awayMinutes(seconds: max(0, backAt.micros - pausedAt.micros) / 1_000_000)
    }

    /// Focus time at `time`, not capped at the length: the running segment counts only within
    /// its own boot.
    public func uncappedFocusMicros(at time: MachineTime) -> Int64 {
        guard state == .active, let segment, segment.boot == time.boot else { return focusMicros }
        return focusMicros + max(0, time.awakeMicros - segment.awakeMicros)
    }

    /// Focus time at `time`, at most the session's length.
    public func focusMicros(at time: MachineTime) -> Int64 { min(lengthMicros, uncappedFocusMicros(at: time)) }

    /// Focus time still to go at `time`.
    public func remainingMicros(at time: MachineTime) -> Int64 { lengthMicros - focusMicros(at: time) }

    /// The countdown's whole seconds at `time`, rounded up: 25:00 at the start, 00:00 only at
    /// the end (a countdown that showed 00:00 early would be lying).
    public func remainingSeconds(at time: MachineTime) -> Int {
        let micros = remainingMicros(at: time)
        return Int((micros + 999_999) / 1_000_000)
    }

    /// The tree's stage at `time` (see ``TreeStage``); a completed session's tree is grown.
    public func stage(at time: MachineTime) -> Int {
        if state == .completed { return TreeStage.grown }
        return TreeStage.stage(remainingSeconds: remainingSeconds(at: time), lengthSeconds: lengthSeconds)
    }

    /// The seed's validity rule for the forest: completed, with an end time and focus time.
    public var isValidTree: Bool { state == .completed && endedAt != nil && focusMicros > 0 }
}

/// The tree's growth: stage 1 to 5 by focus time, the stage changing at each fifth of the
/// session. For 25 minutes, at 20:00, 15:00, 10:00 and 5:00 remaining (the seed's mapping:
/// stage 1 from 25:00 to 20:01, stage 2 from 20:00 to 15:01, …, stage 5 from 5:00 to 0:00).
public enum TreeStage {
    public static let grown = 5

    /// The stage with `remainingSeconds` of `lengthSeconds` to go (whole seconds, as the
    /// countdown shows them, so the tree and the clock agree).
    public static func stage(remainingSeconds: Int, lengthSeconds: Int) -> Int {
        guard lengthSeconds > 0 else { return grown }
        let elapsed = min(max(lengthSeconds - remainingSeconds, 0), lengthSeconds)
        return 1 + min(4, elapsed * 5 / lengthSeconds)
    }
}

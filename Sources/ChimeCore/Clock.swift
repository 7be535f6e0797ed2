import Foundation

/// Where the scheduler reads wall time. Production reads the system clock; tests inject
/// `ManualWallClock` from ChimeTesting and never sleep.
public protocol WallClock: Sendable {
    func now() -> Date
}

/// The system's real-time clock (`CLOCK_REALTIME`).
public struct SystemWallClock: WallClock {
    public init() {}
    public func now() -> Date { Date() }
}

/// Why a ``Waker`` returned.
public enum WakeReason: String, Sendable, Hashable {
    /// The deadline passed.
    case deadline
    /// The CLI changed the store and poked the runner.
    case poked
    /// The wall clock was set (or the machine resumed from suspend): deadlines must be recomputed.
    case clockChanged
    /// The system time zone changed (travel): floating reminders move with it.
    case zoneChanged
    /// The runner is shutting down.
    case shutdown
}

/// Parks the scheduler until a wall-clock deadline, a poke, a clock change or shutdown.
///
/// The runner's implementation sleeps on a timerfd (no wake-ups while idle); tests use a
/// manual clock that reports when the scheduler is parked.
public protocol Waker: Sendable {
    /// Returns when `deadline` has passed (never, when it is `nil`) or something else happened.
    func wait(until deadline: Date?) async -> WakeReason
    /// Whether a poke (or anything else) has arrived that the next ``wait(until:)`` would
    /// report at once: asked at a deadline, before posting what was recorded ahead, so that a
    /// reminder cancelled just before its instant is not shown.
    func hasPendingWake() -> Bool
}

extension Waker {
    public func hasPendingWake() -> Bool { false }
}

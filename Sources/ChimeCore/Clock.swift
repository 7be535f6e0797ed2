import Foundation

#if canImport(Glibc)
import Glibc
#endif

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
    /// Questions that came with a poke and are waiting for the scheduler's answer (a `chime
    /// cancel` asking whether the occurrences it cancelled in flight were already shown). Each
    /// is taken once; an implementation without them returns none.
    func takeQueries() -> [DeliveryQuery]
    /// Reminder ids whose shown alerts a command asked the runner to withdraw (a cancel) or to
    /// replace by a confirmation (a dose or reminder answered from the command line), each
    /// taken once.
    func takeWithdrawals() -> [Withdrawal]
    /// Wakes the parked scheduler from within the process, as the CLI's poke does from outside
    /// (a family changed the store while answering an alert); a poke while it runs is not lost.
    func poke()
}

extension Waker {
    public func hasPendingWake() -> Bool { false }
    public func takeQueries() -> [DeliveryQuery] { [] }
    public func takeWithdrawals() -> [Withdrawal] { [] }
}

/// A command's word to the runner about the alerts shown for a reminder: close them (a
/// cancel), or replace them by a confirmation of what the command recorded (an answer).
public struct Withdrawal: Sendable, Hashable {
    public var id: String
    /// The confirmation's title and body (``Note/confirmation(id:title:body:at:)``); nil: closed.
    public var confirmation: Confirmation?

    public struct Confirmation: Sendable, Hashable {
        public var title: String
        public var body: String
        public init(title: String, body: String = "") {
            self.title = title
            self.body = body
        }
    }

    public init(id: String, confirmation: Confirmation? = nil) {
        self.id = id
        self.confirmation = confirmation
    }
}

/// A question to the runner from a command that cancelled occurrences already recorded as due
/// (the runner may have staged them to post at their instant): which of them has it shown?
///
/// The command commits its cancel first, then asks. The scheduler answers between two passes:
/// what it has posted by then is *shown* (with the instant it was posted); what it has not will
/// never be, since every later pass reads the store, where they are cancelled. So a cancel
/// that is told "not shown" is never contradicted by an alert, and one told "shown" can say so.
public struct DeliveryQuery: Sendable {
    public var keys: [OccurrenceKey]
    /// Called once with the keys among ``keys`` that this runner has posted, and when.
    public var answer: @Sendable ([OccurrenceKey: Date]) -> Void

    public init(keys: [OccurrenceKey], answer: @escaping @Sendable ([OccurrenceKey: Date]) -> Void) {
        self.keys = keys
        self.answer = answer
    }
}

/// A reading of the machine's clocks for time that must not count sleep (focus time): the
/// wall clock, the time the machine has been awake in this boot, and which boot this is.
public struct MachineTime: Sendable, Hashable {
    public var wall: Date
    /// Microseconds awake since boot (Linux: CLOCK_MONOTONIC, which stops while suspended).
    public var awakeMicros: Int64
    /// Identifies the boot (Linux: /proc/sys/kernel/random/boot_id); awake time is comparable
    /// only within one boot.
    public var boot: String

    public init(wall: Date, awakeMicros: Int64, boot: String) {
        self.wall = wall
        self.awakeMicros = awakeMicros
        self.boot = boot
    }
}

/// Where focus sessions read time. Production reads the system; tests inject
/// `ManualMachineClock` from ChimeTesting (suspend, reboot, a clock set back) and never sleep.
public protocol MachineClock: Sendable {
    func now() -> MachineTime
}

#if canImport(Glibc)
/// The system's clocks: CLOCK_REALTIME, CLOCK_MONOTONIC (not CLOCK_BOOTTIME, which counts
/// suspend) and the kernel's boot id.
public struct SystemMachineClock: MachineClock {
    /// Read once per process: it changes only at a reboot.
    private static let boot: String = {
        let text = (try? String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8)) ?? ""
        let id = text.trimmingCharacters(in: .whitespacesAndNewlines)
        // Without /proc, the boot's start on the wall clock stands in (to the second).
        if !id.isEmpty { return id }
        var awake = timespec()
        clock_gettime(CLOCK_BOOTTIME, &awake)
        return "boot-at-\(Int(Date().timeIntervalSince1970) - awake.tv_sec)"
    }()

    public init() {}

    public func now() -> MachineTime {
        var awake = timespec()
        clock_gettime(CLOCK_MONOTONIC, &awake)
        let wall = Date()
        return MachineTime(
            wall: wall,
            awakeMicros: Int64(awake.tv_sec) * 1_000_000 + Int64(awake.tv_nsec) / 1_000,
            boot: Self.boot
        )
    }
}
#endif

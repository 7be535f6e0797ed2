import ChimeCore
import Foundation
import Synchronization

/// A wall clock that moves only when a test says so, and a ``Waker`` on it.
///
/// swift-clocks' `TestClock` models a monotonic clock; Chime's deadlines are wall-clock
/// instants and its runner must react to the wall clock being *set* (forward or back), which a
/// monotonic test clock cannot express, hence this small clock of its own.
///
/// The scheduler parks in ``wait(until:)``; a test awaits ``parked()`` before it moves the
/// clock, so it never races the scheduler and never sleeps.
public final class ManualWallClock: WallClock, Waker {
    private struct Parked {
        var deadline: Date?
        var continuation: CheckedContinuation<WakeReason, Never>
    }
    private struct State {
        var now: Date
        var parked: Parked?
        var parkedWatchers: [CheckedContinuation<Date?, Never>] = []
        var isShutDown = false
        var waits = 0
        /// Questions asked with ``ask(_:)`` and not yet taken by the scheduler.
        var queries: [DeliveryQuery] = []
        /// Ids given to ``withdraw(_:)`` and not yet taken.
        var withdrawals: [Withdrawal] = []
    }
    private let state: Mutex<State>

    public init(now: Date) {
        state = Mutex(State(now: now))
    }

    public func now() -> Date { state.withLock { $0.now } }

    /// How many times the scheduler has parked.
    public var waits: Int { state.withLock { $0.waits } }

    public func wait(until deadline: Date?) async -> WakeReason {
        await withCheckedContinuation { continuation in
            let (immediate, watchers): (WakeReason?, [CheckedContinuation<Date?, Never>]) = state.withLock { state in
                state.waits += 1
                if state.isShutDown { return (.shutdown, []) }
                // A question asked while the scheduler was busy wakes it at once, as a datagram
                // waiting on the runner's socket does.
                if !state.queries.isEmpty { return (.poked, []) }
                if let deadline, deadline <= state.now { return (.deadline, []) }
                state.parked = Parked(deadline: deadline, continuation: continuation)
                defer { state.parkedWatchers = [] }
                return (nil, state.parkedWatchers)
            }
            if let immediate { continuation.resume(returning: immediate) }
            for watcher in watchers { watcher.resume(returning: deadline) }
        }
    }

    /// Returns once the scheduler is parked, with the deadline it sleeps until.
    @discardableResult
    public func parked() async -> Date? {
        await withCheckedContinuation { continuation in
            let parkedDeadline: Date?? = state.withLock { state in
                if let parked = state.parked { return .some(parked.deadline) }
                state.parkedWatchers.append(continuation)
                return .none
            }
            if let parkedDeadline { continuation.resume(returning: parkedDeadline) }
        }
    }

    /// Time passes: wakes the scheduler when its deadline is reached.
    public func advance(by seconds: TimeInterval) {
        move { $0.addingTimeInterval(seconds) }
    }

    /// Time passes to `instant`.
    public func advance(to instant: Date) {
        move { _ in instant }
    }

    /// The wall clock is *set* (by a person, NTP, or resume from suspend): the scheduler wakes
    /// with ``WakeReason/clockChanged`` whatever its deadline, as timerfd's cancel-on-set does.
    public func set(to instant: Date) {
        let woken: Parked? = state.withLock { state in
            state.now = instant
            defer { state.parked = nil }
            return state.parked
        }
        woken?.continuation.resume(returning: .clockChanged)
    }

    /// The CLI's poke.
    public func poke() { wake(.poked) }

    /// A question as `chime cancel` asks it of the runner after committing a cancel: which of
    /// `keys` has the scheduler shown? Wakes the scheduler (at once if parked, else as soon as
    /// it parks) and returns its answer.
    public func ask(_ keys: [OccurrenceKey]) async -> [OccurrenceKey: Date] {
        await withCheckedContinuation { continuation in
            ask(DeliveryQuery(keys: keys) { continuation.resume(returning: $0) })
        }
    }

    /// ``ask(_:)`` without waiting: the query is there for the scheduler's next look (between two
    /// posts, or two passes) as soon as this returns.
    public func ask(_ query: DeliveryQuery) {
        state.withLock { $0.queries.append(query) }
        wake(.poked)
    }

    public func hasPendingWake() -> Bool { state.withLock { !$0.queries.isEmpty } }

    /// A command asks the runner to withdraw the alerts shown for `ids`; wakes the scheduler.
    public func withdraw(_ ids: [String]) {
        state.withLock { $0.withdrawals += ids.map { Withdrawal(id: $0) } }
        wake(.poked)
    }

    /// A command answered reminder `id` and asks the runner to replace its alert by `confirmation`.
    public func confirm(_ id: String, with confirmation: Withdrawal.Confirmation) {
        state.withLock { $0.withdrawals.append(Withdrawal(id: id, confirmation: confirmation)) }
        wake(.poked)
    }

    public func takeWithdrawals() -> [Withdrawal] {
        state.withLock { state in
            defer { state.withdrawals = [] }
            return state.withdrawals
        }
    }

    public func takeQueries() -> [DeliveryQuery] {
        state.withLock { state in
            defer { state.queries = [] }
            return state.queries
        }
    }

    /// The system time zone changed (the test changes what its `systemZone` closure returns first).
    public func zoneChanged() { wake(.zoneChanged) }

    /// Graceful shutdown: the parked scheduler returns, and any later wait returns at once.
    public func shutdown() {
        state.withLock { $0.isShutDown = true }
        wake(.shutdown)
    }

    private func wake(_ reason: WakeReason) {
        let woken: Parked? = state.withLock { state in
            defer { state.parked = nil }
            return state.parked
        }
        woken?.continuation.resume(returning: reason)
    }

    private func move(_ change: (Date) -> Date) {
        let woken: Parked? = state.withLock { state in
            state.now = change(state.now)
            guard let parked = state.parked, let deadline = parked.deadline, deadline <= state.now else { return nil }
            state.parked = nil
            return parked
        }
        woken?.continuation.resume(returning: .deadline)
    }
}

/// The machine's clocks in a test: wall time is `wall`'s (a ``ManualWallClock`` a scheduler
/// may share), awake time moves with it except across a suspend, and a reboot starts a new
/// boot. So `wall.advance(by:)` is time awake, ``suspend(for:)`` is not.
public final class ManualMachineClock: MachineClock {
    private struct State {
        /// Wall time minus awake time, in microseconds: grows by every suspend and clock change.
        var wallMinusAwake: Int64
        var boot: String
        var boots = 1
    }
    public let wall: ManualWallClock
    private let state: Mutex<State>

    /// - Parameter awake: how long the machine has been awake at `wall`'s now.
    public init(wall: ManualWallClock, awake: TimeInterval = 3_600) {
        self.wall = wall
        state = Mutex(State(wallMinusAwake: wall.now().micros - Int64(awake * 1_000_000), boot: "boot-1"))
    }

    public func now() -> MachineTime {
        let wallNow = wall.now()
        return state.withLock { MachineTime(wall: wallNow, awakeMicros: wallNow.micros - $0.wallMinusAwake, boot: $0.boot) }
    }

    /// The machine sleeps for `seconds` and resumes: the wall clock jumps (the scheduler wakes
    /// with ``WakeReason/clockChanged``, as after a real resume); awake time does not move.
    public func suspend(for seconds: TimeInterval) {
        state.withLock { $0.wallMinusAwake += Int64(seconds * 1_000_000) }
        wall.set(to: wall.now().addingTimeInterval(seconds))
    }

    /// A person (or NTP) sets the wall clock: awake time does not move.
    public func setWall(to instant: Date) {
        let delta = instant.micros - wall.now().micros
        state.withLock { $0.wallMinusAwake += delta }
        wall.set(to: instant)
    }

    /// The machine restarts, down for `seconds`: a new boot, awake time starting again near zero.
    public func reboot(downFor seconds: TimeInterval = 60) {
        let instant = wall.now().addingTimeInterval(seconds)
        state.withLock { state in
            state.boots += 1
            state.boot = "boot-\(state.boots)"
            state.wallMinusAwake = instant.micros - 20_000_000
        }
        wall.set(to: instant)
    }
}

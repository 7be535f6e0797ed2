import CLinux
import ChimeCore
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The runner's ``Waker``: sleeps until a wall-clock deadline on a timerfd, with no wake-ups
/// in between.
///
/// `Task.sleep` wakes the process about once a second however far its deadline (libdispatch
/// re-arms its own timer every second); a timerfd on `CLOCK_REALTIME` armed with
/// `TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET` does not wake at all until the deadline, and
/// wakes at once when the wall clock is set or the machine resumes from suspend. One
/// dedicated thread blocks in `poll(2)` on the timerfd, the wake-up socket and an eventfd
/// used for shutdown, and resumes the parked scheduler.
public final class TimerWaker: Waker {
    private struct State {
        var waiter: CheckedContinuation<WakeReason, Never>?
        var pending: WakeReason?
        /// A poke read off the socket by the poll thread and not yet delivered.
        var pokeRead = false
        var stopped = false
        var onSignal: (@Sendable () -> Void)?
        /// Questions read off the socket and not yet taken by the scheduler.
        var queries: [DeliveryQuery] = []
        /// Reminder ids whose alerts a command asked to withdraw, not yet taken.
        var withdrawals: [Withdrawal] = []
    }

    private let timerFD: Int32
    private let eventFD: Int32
    private let socketFD: Int32?
    private let signalFD: Int32
    /// inotify on /etc, for a change of the system time zone (-1 when unavailable).
    private let zoneFD: Int32
    private let state = Mutex(State())
    /// The thread that waits on the timerfd, when not the poll thread: see ``init(socketFD:timerThread:)``.
    private let timerThread: RunnerThread?

    /// - Parameters:
    ///   - socketFD: the bound wake-up socket, or nil (tests, `chime-bench`).
    ///   - timerThread: the thread the scheduler runs on, to wait on the timerfd itself while idle
    ///     (``RunnerThread/watch(_:onReadable:)``): at a deadline the kernel wakes the thread that
    ///     posts, as a `clock_nanosleep` thread is woken, instead of the poll thread, which would
    ///     then have to wake it (a second wake-up between the instant and the post). Nil: the poll
    ///     thread waits on it with the rest.
    public init(socketFD: Int32?, timerThread: RunnerThread? = nil) throws(ChimeError) {
        let timerFD = timerfd_create(CLOCK_REALTIME, chime_tfd_flags())
        guard timerFD >= 0 else { throw ChimeError(.failure, "timerfd_create failed: \(String(cString: strerror(errno)))") }
        let eventFD = eventfd(0, chime_efd_flags())
        guard eventFD >= 0 else {
            close(timerFD)
            throw ChimeError(.failure, "eventfd failed: \(String(cString: strerror(errno)))")
        }
        let signalFD = eventfd(0, chime_efd_flags())
        guard signalFD >= 0 else {
            close(timerFD)
            close(eventFD)
            throw ChimeError(.failure, "eventfd failed: \(String(cString: strerror(errno)))")
        }
        let zoneFD = chime_inotify_init()
        if zoneFD >= 0 && inotify_add_watch(zoneFD, "/etc", chime_inotify_zone_mask()) < 0 {
            close(zoneFD)
            self.zoneFD = -1
        } else {
            self.zoneFD = zoneFD
        }
        self.timerFD = timerFD
        self.eventFD = eventFD
        self.signalFD = signalFD
        self.socketFD = socketFD
        self.timerThread = timerThread
        let thread = Thread { [self] in self.pollLoop() }
        thread.name = "chime-waker"
        thread.start()
        timerThread?.watch(timerFD) { [weak self] in self?.timerReadable() }
    }

    public func wait(until deadline: Date?) async -> WakeReason {
        arm(deadline)
        return await withCheckedContinuation { continuation in
            let ready: WakeReason? = state.withLock { state in
                if state.stopped { return .shutdown }
                if let pending = state.pending {
                    state.pending = nil
                    return pending
                }
                state.waiter = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    /// A reason the poll thread delivered with no one waiting, or a poke still unread on the
    /// socket (a poll with no timeout: no wake-up, no blocking).
    public func hasPendingWake() -> Bool {
        // Under the lock the poll thread drains the socket with: a poke is on the socket, or
        // read and noted, never in between.
        state.withLock { state in
            if state.pending != nil || state.pokeRead { return true }
            guard let socketFD else { return false }
            var fd = pollfd(fd: socketFD, events: Int16(POLLIN), revents: 0)
            return poll(&fd, 1, 0) > 0 && fd.revents & Int16(POLLIN) != 0
        }
    }

    public func poke() { deliver(.poked) }

    /// Calls `body` (on the poll thread) each time a poke from another process (the CLI) is
    /// read from the socket: it changed the store.
    public func observePokes(_ body: @escaping @Sendable () -> Void) {
        pokeObserver.withLock { $0 = body }
    }
    private let pokeObserver = Mutex<(@Sendable () -> Void)?>(nil)

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

    /// Stops the poll thread; the parked scheduler (and any later wait) returns `.shutdown`.
    /// The descriptors stay open until the waker is released, so a late call never touches a
    /// descriptor number reused by another file.
    public func shutdown() {
        timerThread?.unwatch(timerFD)
        var one: UInt64 = 1
        _ = write(eventFD, &one, 8)
    }

    /// Remembers `signals` (SIGTERM, SIGINT) from now until ``relaySignals(_:to:)`` is called,
    /// which then hands a remembered one to its handler: a runner asked to stop while it starts
    /// stops cleanly once started, rather than being ended half-way by the signal's default
    /// action (exit status 143). Call it first thing.
    public static func rememberSignals(_ signals: [Int32]) {
        for signal in signals { _ = chime_remember_signal(signal) }
    }

    /// Whether a signal came since ``rememberSignals(_:)`` that no relay has handed on yet.
    static var hasRememberedSignal: Bool { chime_signal_remembered() != 0 }

    /// Relays `signals` (SIGTERM, SIGINT) to `handler`, called on the waker's thread; one that
    /// came since ``rememberSignals(_:)`` is handed on at once.
    ///
    /// Written by hand rather than through swift-service-lifecycle's `UnixSignals`: its
    /// dispatch sources run on a serial queue, and a serial queue's worker thread keeps
    /// libdispatch's thread-pool monitor ticking once a second for the life of the process,
    /// the very wake-ups an idle runner must not have (measured: `chime-bench idle`). Here a
    /// signal handler writes to an eventfd that the poll thread already watches.
    public func relaySignals(_ signals: [Int32], to handler: @escaping @Sendable () -> Void) {
        state.withLock { $0.onSignal = handler }
        for signal in signals { _ = chime_relay_signal(signal, signalFD) }
    }

    deinit {
        timerThread?.unwatch(timerFD)
        close(timerFD)
        close(eventFD)
        close(signalFD)
        if zoneFD >= 0 { close(zoneFD) }
    }

    private func arm(_ deadline: Date?) {
        var spec = itimerspec()
        if let deadline {
            let seconds = deadline.timeIntervalSince1970
            var whole = floor(seconds)
            var nanos = Int(((seconds - whole) * 1e9).rounded())
            if nanos >= 1_000_000_000 {
                whole += 1
                nanos -= 1_000_000_000
            }
            spec.it_value = timespec(tv_sec: max(Int(whole), 0), tv_nsec: nanos)
            if spec.it_value.tv_sec == 0 && spec.it_value.tv_nsec == 0 { spec.it_value.tv_nsec = 1 }
        }
        // An all-zero it_value disarms: nothing due, no wake-ups at all.
        _ = timerfd_settime(timerFD, chime_tfd_abstime_cancel_on_set(), &spec, nil)
    }

    private func pollLoop() {
        var fds = [
            // The timer thread's, when there is one (a negative descriptor is ignored).
            pollfd(fd: timerThread == nil ? timerFD : -1, events: Int16(POLLIN), revents: 0),
            pollfd(fd: eventFD, events: Int16(POLLIN), revents: 0),
            pollfd(fd: signalFD, events: Int16(POLLIN), revents: 0),
            // A negative descriptor is ignored by poll(2).
            pollfd(fd: zoneFD, events: Int16(POLLIN), revents: 0),
        ]
        if let socketFD { fds.append(pollfd(fd: socketFD, events: Int16(POLLIN), revents: 0)) }
        while true {
            let ready = poll(&fds, nfds_t(fds.count), -1)
            if ready < 0 {
                if errno == EINTR { continue }
                break
            }
            if fds[1].revents != 0 {
                deliver(.shutdown)
                return
            }
            // Everything that happened since the last poll is told at once, as the strongest
            // reason: a deadline that passed while a poke waited unread (the runner descheduled
            // across an instant) must not post what is staged before the store is read again,
            // or a reminder cancelled before its instant would be shown all the same.
            var reason: WakeReason?
            if fds[0].revents != 0 {
                var expirations: UInt64 = 0
                if read(timerFD, &expirations, 8) < 0 {
                    if errno == ECANCELED { reason = Self.stronger(reason, .clockChanged) }
                } else {
                    reason = Self.stronger(reason, .deadline)
                }
            }
            if fds[2].revents != 0 {
                var count: UInt64 = 0
                _ = read(signalFD, &count, 8)
                state.withLock { $0.onSignal }?()
            }
            if fds[3].revents != 0 && Self.zoneFileChanged(zoneFD) {
                // Foundation caches the system zone: forget it, so the next read sees the new one.
                NSTimeZone.resetSystemTimeZone()
                reason = Self.stronger(reason, .zoneChanged)
            }
            if fds.count > 4, fds[4].revents != 0, let socketFD {
                let own = getpid()
                let (poked, fromElsewhere) = state.withLock { state in
                    var fromElsewhere = false
                    let count = WakeSocket.drain(
                        socketFD,
                        queries: { state.queries += $0 },
                        withdrawals: { state.withdrawals += $0 },
                        sender: { fromElsewhere = fromElsewhere || $0 != own }
                    )
                    guard count > 0 else { return (false, false) }
                    state.pokeRead = true
                    return (true, fromElsewhere)
                }
                if poked { reason = Self.stronger(reason, .poked) }
                // The runner's own datagrams (its D-Bus service's) are told by the service itself.
                if fromElsewhere { pokeObserver.withLock { $0 }?() }
            }
            if let reason { deliver(reason) }
        }
        deliver(.shutdown)
    }

    /// Drains the inotify events; true when one names /etc/localtime or /etc/timezone.
    private static func zoneFileChanged(_ fd: Int32) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 4096)
        var changed = false
        while true {
            let count = read(fd, &buffer, buffer.count)
            guard count > 0 else { return changed }
            var offset = 0
            // struct inotify_event: wd, mask, cookie, len (4 bytes each), then len bytes of name.
            while offset + 16 <= count {
                let length = buffer[(offset + 12)..<(offset + 16)].reversed().reduce(0) { $0 << 8 | Int($1) }
                let nameBytes = buffer[(offset + 16)..<min(offset + 16 + length, count)].prefix { $0 != 0 }
                let name = String(decoding: nameBytes, as: UTF8.self)
                if name == "localtime" || name == "timezone" { changed = true }
                offset += 16 + length
            }
        }
    }

    /// The timerfd is readable, seen by the timer thread: the deadline passed, or the clock was set.
    private func timerReadable() {
        var expirations: UInt64 = 0
        if read(timerFD, &expirations, 8) < 0 {
            if errno == ECANCELED { deliver(.clockChanged) }
        } else {
            deliver(.deadline)
        }
    }

    private func deliver(_ reason: WakeReason) {
        let waiter: CheckedContinuation<WakeReason, Never>? = state.withLock { state in
            // A deadline told from the timer thread does not tell a poke the poll thread has read
            // meanwhile: that stays pending (``hasPendingWake()``) until the poll thread tells it.
            if reason != .deadline { state.pokeRead = false }
            if reason == .shutdown { state.stopped = true }
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            state.pending = Self.stronger(state.pending, reason)
            return nil
        }
        waiter?.resume(returning: reason)
    }

    private static func stronger(_ a: WakeReason?, _ b: WakeReason) -> WakeReason {
        let order: [WakeReason] = [.deadline, .poked, .clockChanged, .zoneChanged, .shutdown]
        guard let a else { return b }
        return order.firstIndex(of: a)! > order.firstIndex(of: b)! ? a : b
    }
}

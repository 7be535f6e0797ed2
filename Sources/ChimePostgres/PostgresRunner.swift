import ChimeCore
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A runner on the PostgreSQL store: one of several, on as many hosts, sharing one database,
/// with no leader. The engine is ChimeCore's Scheduler, the same as on SQLite; what is
/// PostgreSQL's is its ledger (``PostgresLedger``: leases, the check before a post, fenced
/// marks, the reaper, the database's clock) and what wakes it: a LISTEN connection of its own
/// (``PostgresListener``), whose notifications poke the same waker the Scheduler parks on, and
/// a jittered poll that covers notifications lost while that connection was down.
public final class PostgresRunner: Sendable {
    public let ledger: PostgresLedger
    public let scheduler: Scheduler
    let listener: PostgresListener

    /// The application name of a runner's connections: "chime run OWNER" (its statements) and
    /// "chime run OWNER listen" (its LISTEN connection, which `chime list` counts).
    public static func applicationName(owner: String) -> String { "\(PostgresStore.runnerApplicationName) \(owner)" }

    /// - Parameters:
    ///   - ledger: the runner's ledger (its store, owner, channels, lease and poll).
    ///   - configuration: the Scheduler's (its retry backoff, the late threshold, the summary).
    ///   - log: the Scheduler's events; `listenerLog`: one line each time the LISTEN connection
    ///     drops or comes back.
    ///   - commands: starts reminders' commands (`--exec`), as the SQLite runner's does
    ///     (ChimeRunner's `ProcessLauncher`); nil: none is run. Only the runner that posted an
    ///     occurrence runs its command, once (the ledger's ``PostgresLedger/beginCommand(_:at:)``).
    ///   - afterPass: called after each of the Scheduler's passes (the D-Bus service's properties).
    public init(
        ledger: PostgresLedger,
        notifier: any Notifier,
        families: [any ReminderFamily] = [],
        configuration: Scheduler.Configuration = PostgresRunner.defaultConfiguration,
        systemZone: @escaping @Sendable () -> TimeZone = { TimeZone.current },
        log: @escaping @Sendable (SchedulerEvent) -> Void = { _ in },
        listenerLog: @escaping @Sendable (PostgresListener.Event) -> Void = { _ in },
        commands: (any CommandLauncher)? = nil,
        afterPass: @escaping @Sendable () -> Void = {}
    ) {
        self.ledger = ledger
        self.scheduler = Scheduler(
            store: ledger,
            notifier: notifier,
            clock: ledger.clock,
            configuration: configuration,
            systemZone: systemZone,
            log: log,
            families: families,
            commands: commands,
            afterPass: afterPass
        )
        var options = ledger.store.client.options
        options.applicationName = Self.applicationName(owner: ledger.owner) + " listen"
        self.listener = PostgresListener(url: ledger.store.url, options: options, log: listenerLog)
        let listener = self.listener
        // A node that answered read-only (a failover): the LISTEN connection follows the
        // statements' connection to whichever node is the primary now.
        ledger.store.client.onReadOnly = { listener.renew() }
        // The database answers again after an outage: the LISTEN connection, whose backoff
        // may have grown to 30 s meanwhile, is made again now.
        ledger.store.client.onReconnect = { listener.retryNow() }
    }

    /// The Scheduler's configuration on PostgreSQL: no look-ahead (a claim takes a lease at the
    /// instant), and the failed post's backoff the runners used before (5 s, doubling, at most 10 min).
    public static var defaultConfiguration: Scheduler.Configuration {
        var configuration = Scheduler.Configuration()
        configuration.lookahead = .zero
        configuration.retryBase = .seconds(5)
        configuration.retryMax = .seconds(600)
        return configuration
    }

    /// Runs the Scheduler on `waker` until it says `.shutdown`; the LISTEN connection pokes
    /// `waker` on each notification and after each (re)connect. On return, what this runner
    /// claimed and did not post is handed back to the others.
    /// - Parameter onChange: called (on the listener's thread) after each notification that a
    ///   reminder or the quiet settings changed (``PostgresStore/changesChannel``), with the
    ///   server processes of the sessions that sent them: the D-Bus service's `Changed`.
    public func run(waker: any Waker, onChange: @escaping @Sendable (Set<Int32>) -> Void = { _ in }) async {
        let wrapped = DatabaseClockWaker(waker, clock: ledger.clock)
        listener.start(onWithdraw: wrapped.add, onChange: onChange) { waker.poke() }
        await scheduler.run(waker: wrapped)
        listener.stop()
        ledger.handBack()
    }

    /// Stops gracefully (SIGTERM): the alert being posted is posted and recorded, nothing more is
    /// posted, and a statement still waiting on the database after `grace` is cancelled
    /// (PQcancel), so the runner stops within about a second even while the database hangs.
    /// The caller then shuts the waker down.
    public func stop(grace: Duration = .milliseconds(500)) {
        ledger.stop()
        let client = ledger.store.client
        let (seconds, attoseconds) = grace.components
        let delay = Double(seconds) + Double(attoseconds) / 1e18
        Thread.detachNewThread {
            Thread.sleep(forTimeInterval: delay)
            client.cancel()
        }
    }
}

/// The Scheduler's waker on a PostgreSQL store: deadlines come on the database's clock, and the
/// host's timer is armed at the host instant that corresponds (hosts' clocks may be minutes off).
final class DatabaseClockWaker: Waker {
    let inner: any Waker
    let clock: DatabaseClock
    /// What commands asked of this runner's alerts over `NOTIFY chime_alerts`, not yet taken.
    private let withdrawals = Mutex<[Withdrawal]>([])

    init(_ inner: any Waker, clock: DatabaseClock) {
        self.inner = inner
        self.clock = clock
    }

    /// Adds what a command asked (the listener's thread); the poke that follows wakes the loop.
    func add(_ more: [Withdrawal]) {
        withdrawals.withLock { $0 += more }
    }

    func wait(until deadline: Date?) async -> WakeReason {
        await inner.wait(until: deadline.map(clock.hostInstant(for:)))
    }

    func hasPendingWake() -> Bool { inner.hasPendingWake() }
    func takeQueries() -> [DeliveryQuery] { inner.takeQueries() }
    func takeWithdrawals() -> [Withdrawal] {
        inner.takeWithdrawals()
            + withdrawals.withLock { taken in
                defer { taken = [] }
                return taken
            }
    }
    func poke() { inner.poke() }
}

/// A runner's LISTEN connection on ``PostgresStore/changesChannel``, on a thread of its own that
/// blocks in poll(2) on the connection's socket (no wake-up while nothing is sent). Each
/// notification, and each (re)connect, calls `onWake` (notifications sent while it was down are
/// lost: PostgreSQL 15 docs, NOTIFY, only sessions listening at commit receive them, so the
/// runner then makes a full pass). A dropped connection is made again with backoff (1 s, 2 s, …
/// 30 s).
public final class PostgresListener: @unchecked Sendable {
    public enum Event: Sendable, Hashable {
        /// Listening (the count of connections made so far: more than 1 is a reconnect).
        case listening(Int)
        /// The connection is down (why), made again in this many seconds.
        case down(String, retryIn: Duration)
    }

    let url: PostgresURL
    let options: PostgresConnectionOptions
    let log: @Sendable (Event) -> Void
    /// The first wait before re-making a dropped connection (doubled each time, at most 30 s).
    let reconnectBase: Duration
    /// Written to stop the thread ("s") or to renew its connection ("r"). `@unchecked Sendable`:
    /// the descriptors are set once in init; the thread is started once.
    private let control: (read: Int32, write: Int32)
    private let started = Mutex(false)
    /// Connections made.
    public let listens = Atomic(0)

    init(
        url: PostgresURL,
        options: PostgresConnectionOptions,
        reconnectBase: Duration = .seconds(1),
        log: @escaping @Sendable (Event) -> Void
    ) {
        self.url = url
        self.reconnectBase = reconnectBase
        var options = options
        options.statementTimeout = .seconds(10)
        self.options = options
        self.log = log
        var fds: [Int32] = [-1, -1]
        if pipe(&fds) == 0 {
            for fd in fds {
                _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
                _ = fcntl(fd, F_SETFL, O_NONBLOCK)
            }
        } else {
            fds = [-1, -1]
        }
        self.control = (fds[0], fds[1])
    }

    deinit {
        close(control.read)
        close(control.write)
    }

    func start(
        onWithdraw: @escaping @Sendable ([Withdrawal]) -> Void = { _ in },
        onChange: @escaping @Sendable (Set<Int32>) -> Void = { _ in },
        onWake: @escaping @Sendable () -> Void
    ) {
        let already = started.withLock { started in
            defer { started = true }
            return started
        }
        guard !already else { return }
        let thread = Thread { [self] in self.loop(onWithdraw, onChange, onWake) }
        thread.name = "chime-listen"
        thread.start()
    }

    /// Ends the thread (its connection closed); returns at once.
    func stop() { send("s") }

    /// Closes the connection and makes a new one (after a failover).
    func renew() { send("r") }

    /// Ends the wait before re-making a dropped connection (the database answers again).
    func retryNow() { send("n") }

    private func send(_ byte: Character) {
        var value = byte.asciiValue ?? 0
        _ = write(control.write, &value, 1)
    }

    /// Reads the control pipe: "s" (stop) wins over "r" (renew).
    private func readControl() -> (stop: Bool, renew: Bool) {
        var buffer = [UInt8](repeating: 0, count: 64)
        var result = (stop: false, renew: false)
        while true {
            let count = read(control.read, &buffer, buffer.count)
            guard count > 0 else { return result }
            if buffer[0..<count].contains(UInt8(ascii: "s")) { result.stop = true }
            if buffer[0..<count].contains(UInt8(ascii: "r")) { result.renew = true }
        }
    }

    /// Waits on the control pipe for `timeout` (nil: for ever) and `socket` (when given).
    /// Returns what happened.
    private func wait(socket: Int32?, timeout: Duration?) -> (control: Bool, socket: Bool) {
        var fds = [pollfd(fd: control.read, events: Int16(POLLIN), revents: 0)]
        if let socket { fds.append(pollfd(fd: socket, events: Int16(POLLIN), revents: 0)) }
        let milliseconds =
            timeout.map { Int32(clamping: $0.components.seconds * 1000 + $0.components.attoseconds / 1_000_000_000_000_000) } ?? -1
        while true {
            let ready = poll(&fds, nfds_t(fds.count), milliseconds)
            if ready < 0 && errno == EINTR { continue }
            return (fds[0].revents != 0, fds.count > 1 && fds[1].revents != 0)
        }
    }

    private func loop(
        _ onWithdraw: @Sendable ([Withdrawal]) -> Void,
        _ onChange: @Sendable (Set<Int32>) -> Void,
        _ onWake: @Sendable () -> Void
    ) {
        var failures = 0
        while true {
            var why = "the connection closed"
            do {
                let session = try PostgresSession(url: url, options: options)
                try session.listen(PostgresStore.changesChannel)
                try session.listen(PostgresStore.alertsChannel)
                failures = 0
                let count = listens.wrappingAdd(1, ordering: .relaxed).newValue
                log(.listening(count))
                onWake()
                listening: while true {
                    let (control, readable) = wait(socket: session.socket, timeout: nil)
                    if control {
                        let (stop, renew) = readControl()
                        if stop { return }
                        if renew {
                            why = "renewed to follow a failover (the database answered read-only)"
                            break listening
                        }
                    }
                    guard readable else { continue }
                    let received = try session.notifications()
                    let asked = received.filter { $0.channel == PostgresStore.alertsChannel }.compactMap {
                        PostgresStore.withdrawal(fromPayload: $0.payload)
                    }
                    if !asked.isEmpty { onWithdraw(asked) }
                    if !received.isEmpty { onWake() }
                    let changedBy = Set(received.filter { $0.channel == PostgresStore.changesChannel }.map(\.sender))
                    if !changedBy.isEmpty { onChange(changedBy) }
                }
            } catch {
                why = String(describing: error)
            }
            failures += 1
            let backoff = Scheduler.backoff(afterAttempts: failures, base: reconnectBase, max: .seconds(30))
            log(.down(why, retryIn: backoff))
            let (control, _) = wait(socket: nil, timeout: backoff)
            if control, readControl().stop { return }
        }
    }
}

import ChimeCore
import ChimeStore
import Foundation
import Logging
import ServiceLifecycle
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The long-running process for one store: store + scheduler + notifier, parked on a timerfd,
/// woken by the CLI over its socket, stopped gracefully by SIGTERM or SIGINT.
///
/// Construction takes the store's runner lock (a second runner on the same store fails with
/// `.runnerRunning`) and binds the wake-up socket; ``run()`` runs it as a swift-service-lifecycle
/// `Service`.
public final class Runner: Service {
    public let store: ReminderStore
    public let scheduler: Scheduler
    public let paths: RunnerPaths
    public let logger: Logger
    private let lock: RunnerLock
    private let waker: TimerWaker
    private let socketFD: Int32
    /// The service manager to tell READY and STOPPING (`$NOTIFY_SOCKET`), when one listens.
    private let serviceManager: ServiceManagerNotify?
    /// A `$NOTIFY_SOCKET` this cannot speak to, logged at start.
    private let unsupportedNotifySocket: String?
    /// Whether telling the service manager failed once already (logged once, then quiet).
    private let serviceManagerFailed = Atomic(false)

    /// - Parameters:
    ///   - families: the reminder families the runner serves, handed
    ///     in by the composition root (`chime run`), in the order they are prepared before each
    ///     pass; each gets the answers to its own alerts, by kind.
    public init(
        store: ReminderStore,
        notifier: any Notifier,
        families: [any ReminderFamily],
        hooks: [String: ReminderCommand] = [:],
        logger: Logger,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        observe: @escaping @Sendable (SchedulerEvent) -> Void = { _ in },
        afterPass: @escaping @Sendable () -> Void = {}
    ) throws(ChimeError) {
        let paths = RunnerPaths(storePath: store.path, environment: environment)
        // The lock first, beside the store: a second runner is refused before it touches the
        // socket of the first (which may be bound in another runtime directory).
        let lock = try RunnerLock(path: paths.lock, storePath: store.path)
        try paths.prepareDirectory()
        let socketFD = try WakeSocket.bind(path: paths.socket)
        lock.publish(socket: paths.socket)
        lock.publish(destination: Self.describe(notifier.destination))
        let waker: TimerWaker
        do {
            waker = try TimerWaker(socketFD: socketFD, timerThread: .shared)
        } catch {
            close(socketFD)
            unlink(paths.socket)
            throw error
        }
        self.store = store
        self.paths = paths
        self.logger = logger
        self.lock = lock
        self.socketFD = socketFD
        self.waker = waker
        self.serviceManager = ServiceManagerNotify(environment: environment)
        self.unsupportedNotifySocket = ServiceManagerNotify.unsupported(environment: environment)
        let log = logger
        store.onLogRecovered { message in log.notice("Store recovered", metadata: ["detail": .string(message)]) }
        let schedulerLog = Self.schedulerLog(log) { destination in lock.publish(destination: Self.describe(destination)) }
        self.scheduler = Scheduler(
            store: store,
            notifier: notifier,
            log: { event in
                schedulerLog(event)
                observe(event)
            },
            families: families,
            commands: ProcessLauncher(thread: .shared, workingDirectory: environment["HOME"]),
            hooks: hooks,
            afterPass: afterPass
        )
    }

    /// The Scheduler's events in the runner's log (both stores' runners). `onDestination`: told
    /// where alerts go each time the notifier says it changed.
    public static func schedulerLog(
        _ log: Logger,
        onDestination: @escaping @Sendable (String?) -> Void = { _ in }
    ) -> @Sendable (SchedulerEvent) -> Void {
        { event in
            switch event {
            case let .deliveryFailed(ids, attempt, retryAt, error):
                log.error(
                    "Reminder not delivered",
                    metadata: [
                        "reminder.ids": .string(ids.joined(separator: ",")), "attempt": "\(attempt)",
                        "retry.at": .string(TimeText.iso(retryAt)), "error": .string(error),
                    ]
                )
            case let .storeFailed(error):
                log.error("Store failed", metadata: ["error": .string(error)])
            case .storeRecovered:
                log.notice("Store recovered: what was shown meanwhile is recorded now")
            case let .deliveryWaiting(ids, error):
                log.notice(
                    "Reminder waits for a notification server",
                    metadata: ["reminder.ids": .string(ids.joined(separator: ",")), "error": .string(error)]
                )
            case let .notifierChanged(available, destination):
                // What `chime doctor` reports is what the runner uses now.
                onDestination(destination)
                if available {
                    log.notice("Alerts go to the \(Self.describe(destination)): what waited for it is shown now")
                } else {
                    log.notice("Notification server gone: alerts go to the \(Self.describe(destination))")
                }
            case let .held(ids, until):
                log.info(
                    "Alerts held while quiet",
                    metadata: [
                        "reminder.ids": .string(ids.joined(separator: ",")),
                        "until": .string(until.map(TimeText.iso) ?? "the end of the hold"),
                    ]
                )
            case let .released(ids):
                log.info("Held alerts come now", metadata: ["reminder.ids": .string(ids.joined(separator: ","))])
            case let .commandStarted(id, pid):
                log.info("Command started", metadata: ["reminder.id": .string(id), "pid": "\(pid)"])
            case let .commandEnded(id, outcome):
                log.info("Command ended", metadata: ["reminder.id": .string(id ?? "-"), "outcome": .string(outcome)])
            case let .hookStarted(event, subject, pid):
                log.info("Hook started", metadata: ["event": .string(event), "subject": .string(subject), "pid": "\(pid)"])
            case let .hookEnded(event, subject, outcome):
                log.info("Hook ended", metadata: ["event": .string(event), "subject": .string(subject), "outcome": .string(outcome)])
            case let .hooksInterrupted(events):
                log.warning(
                    "Hooks interrupted: the last runner stopped while they ran; not run again",
                    metadata: ["events": .string(events.joined(separator: ","))]
                )
            case let .commandsInterrupted(ids):
                log.warning(
                    "Commands interrupted: the last runner stopped while they ran; not run again",
                    metadata: ["reminder.ids": .string(ids.joined(separator: ","))]
                )
            case let .answered(id, response, recorded):
                let answer: String =
                    switch response {
                    case .action(let key): "action " + key
                    case .closed(let reason): "closed (\(reason.rawValue))"
                    }
                log.info("Alert answered", metadata: ["reminder.id": .string(id), "answer": .string(answer)])
                // (Every close of an alert answered already comes here: noise at any other level.)
                if !recorded { log.debug("Answer matched no shown alert", metadata: ["reminder.id": .string(id)]) }
            }
        }
    }

    /// Wakes the scheduler to read the store again, from this process (as a poke on the socket
    /// does from another): the D-Bus service after a change.
    public func poke() { waker.poke() }

    /// Calls `body` each time another process pokes the runner after changing the store.
    public func observePokes(_ body: @escaping @Sendable () -> Void) { waker.observePokes(body) }

    /// Where alerts go, for the lock and the log.
    static func describe(_ destination: String?) -> String { destination ?? "nowhere (waiting for a notification server)" }

    public func run() async throws {
        // Floating reminders follow the zone the system has now (08:00 stays 08:00 after travel).
        try? store.followSystemZone(TimeZone.current, now: Date())
        // (No count of pending reminders here: counting reads the whole queue index, and the
        // runner's memory must not grow with the number of reminders.)
        let next = (try? store.nextWake()).flatMap { $0 }.map(TimeText.iso) ?? "none"
        logger.info(
            "Runner started",
            metadata: [
                "store.path": .string(Redaction.redacted(store.path)), "socket.path": .string(paths.socket), "next.due": .string(next),
            ]
        )
        // The store is open and the wake-up socket bound (both in init): a `chime in` sent from
        // now on is seen, so a `Type=notify` unit may report the runner started.
        if let unsupportedNotifySocket {
            logger.warning(
                "Service manager not told: NOTIFY_SOCKET is neither a path nor an @name",
                metadata: ["notify.socket": .string(unsupportedNotifySocket)]
            )
        }
        tellServiceManager(["READY=1", "STATUS=Serving \(Redaction.redacted(store.path)); next due at start: \(next)"])
        await withGracefulShutdownHandler {
            await self.scheduler.run(waker: self.waker)
        } onGracefulShutdown: { [waker] in
            self.tellServiceManager(["STOPPING=1", "STATUS=Stopping"])
            waker.shutdown()
        }
        logger.info("Runner stopped")
    }

    /// Sends `assignments` to the service manager, if one listens; a failure is logged once and
    /// never stops the runner.
    private func tellServiceManager(_ assignments: [String]) {
        guard let serviceManager else { return }
        do {
            try serviceManager.send(assignments)
        } catch {
            guard !serviceManagerFailed.exchange(true, ordering: .relaxed) else { return }
            logger.warning("Service manager not told", metadata: ["error": .string(error.message)])
        }
    }

    /// Runs the runner until SIGTERM or SIGINT, which shut the service group down gracefully.
    public func runUntilSignalled() async throws {
        let group = ServiceGroup(
            configuration: .init(
                services: [.init(service: self, successTerminationBehavior: .gracefullyShutdownGroup)],
                logger: logger
            )
        )
        let logger = self.logger
        waker.relaySignals([SIGTERM, SIGINT]) {
            logger.info("Signal received: shutting down")
            Task { await group.triggerGracefulShutdown() }
        }
        try await group.run()
    }

    deinit {
        close(socketFD)
        unlink(paths.socket)
    }
}

/// What the CLI needs of a runner: whether one runs for a store, and to wake it. The runner is
/// found through the lock beside the store, whatever the CLI's own `XDG_RUNTIME_DIR`.
public enum RunnerControl {
    /// Pokes the store's runner so it sees a change at once. Returns false when none is running.
    @discardableResult
    public static func poke(storePath: String, environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        guard let socket = socket(storePath: storePath, environment: environment) else { return false }
        return WakeSocket.poke(path: socket)
    }

    /// The socket of the runner serving the store, or nil when none is running.
    public static func socket(storePath: String, environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        let paths = RunnerPaths(storePath: storePath, environment: environment)
        guard let holder = RunnerLock.holder(at: paths.lock) else { return nil }
        // A runner still starting has not written its socket yet: where this environment would bind it.
        return holder.socket ?? paths.socket
    }

    /// The pid of the runner serving the store, or nil when none is running.
    public static func runnerPID(storePath: String, environment: [String: String] = ProcessInfo.processInfo.environment) -> Int32? {
        RunnerLock.holder(at: RunnerPaths(storePath: storePath, environment: environment).lock, anyOwner: true)?.pid
    }

    /// Where the alerts of the runner serving the store go now, as it published it; nil when
    /// none is running (or it is a Chime that did not publish it).
    public static func destination(storePath: String, environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        RunnerLock.destination(at: RunnerPaths(storePath: storePath, environment: environment).lock)
    }

    /// Whether a runner holds the store's lock.
    public static func isRunning(storePath: String, environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        RunnerLock.isHeld(at: RunnerPaths(storePath: storePath, environment: environment).lock)
    }
}

import ArgumentParser
import ChimeApp
import ChimeConfig
import ChimeCore
import ChimeDBus
import ChimeLibnotify
import ChimePostgres
import ChimeRunner
import Foundation
import Logging
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// `chime run` on a PostgreSQL store: one of several runners sharing the database. The engine is
/// the one the SQLite runner has (ChimeCore's Scheduler, on the runner's thread, parked on the
/// same timerfd waker); its ledger is ChimePostgres's ``PostgresLedger`` (leases, the check before
/// a post, fenced marks, a reaper in every runner, the database's clock) and a LISTEN connection
/// pokes it. The families keep to SQLite; plain reminders only, with their commands (`--exec`).
/// It serves the D-Bus interface on its session bus as the SQLite runner does, on a connection of
/// its own (each runner on its own machine serves its own session).
extension Run {
    func runPostgres(_ url: PostgresURL, notifier chosen: NotifierChoice, config: Config, logger: Logger) async throws {
        for channel in channels { try PostgresStore.validateChannel(channel) }
        guard Set(channels).count == channels.count else {
            throw ChimeError(.usage, "a channel is given twice in --channel: each once")
        }
        // Unique among the runners: what the leases and the log name, and what `chime list`
        // counts in pg_stat_activity (the server keeps 63 bytes of an application name).
        let owner = Self.ownerName()
        let choice: NotifierChoice = chosen == .auto && global.json ? .json : chosen
        let signals = BusSignals()
        LibnotifyNotifier.onDefaultAction { page in signals.openApp(page: page) }
        let sink = try await choice.make(json: global.json, follow: true, webhook: webhook)
        let serving = channels.isEmpty ? [PostgresStore.defaultChannel] : channels
        let lease = Duration.seconds(lease?.seconds ?? 30)
        do {
            try await PostgresStore.withCheckedStore(url, applicationName: PostgresRunner.applicationName(owner: owner)) { store in
                // A runner on a schema an older Chime made would fail every pass: say so at once.
                let missing = try store.missingMigrations()
                guard missing.isEmpty else {
                    throw ChimeError(
                        .store,
                        "the PostgreSQL store \(url) has the schema of an older Chime (missing \(missing.joined(separator: ", "))): run 'chime store init', then start the runner again"
                    )
                }
                // The config file's quiet hours apply while 'chime quiet hours' stored none.
                store.setQuietHoursDefault(config.quietHours)
                let ledger = try PostgresLedger(
                    store: store,
                    owner: owner,
                    channels: serving,
                    lease: lease,
                    log: { event in
                        Self.log(event, logger)
                    }
                )
                let runner = PostgresRunner(
                    ledger: ledger,
                    notifier: SignallingNotifier(sink, signals: signals),
                    families: [
                        ChimeApp.plainReminders(store: ledger, logger: logger, snoozeLength: .seconds(config.seconds(.snooze)))
                    ],
                    log: { [log = Runner.schedulerLog(logger)] event in
                        log(event)
                        signals.observe(event)
                    },
                    listenerLog: { event in
                        switch event {
                        case .listening(let count) where count > 1:
                            logger.notice("listening again on \(PostgresStore.changesChannel): a full pass follows")
                        case .listening:
                            break
                        case let .down(why, retryIn):
                            logger.warning(
                                "the LISTEN connection is down (\(why)); re-making it in \(formatDuration(retryIn)), then a full pass"
                            )
                        }
                    },
                    // Reminders' commands, as the SQLite runner starts them (in the home directory).
                    commands: ProcessLauncher(thread: .shared, workingDirectory: ProcessInfo.processInfo.environment["HOME"]),
                    afterPass: signals.passed
                )
                logger.info(
                    "Runner started: \(owner) serving \(serving.joined(separator: ", ")) (lease \(formatDuration(lease)), poll \(formatDuration(ledger.poll)))",
                    metadata: ["store": "\(url)"]
                )
                let waker = try TimerWaker(socketFD: nil)
                // The service's statements go over a connection of their own, beside the runner's.
                let serviceStore = PostgresStore(
                    url,
                    options: PostgresConnectionOptions(applicationName: PostgresRunner.applicationName(owner: owner) + " dbus")
                )
                serviceStore.setQuietHoursDefault(config.quietHours)
                let bus = Self.startBus(signals: signals, logger: logger, launcher: Self.appLauncher(storePath: nil, config: config)) {
                    RemindersService(
                        served: PostgresServedStore(store: serviceStore),
                        poke: { waker.poke() },
                        changed: { signals.changed($0) },
                        answered: { signals.answered(id: $0, answer: $1) }
                    )
                }
                let finished = Atomic(false)
                waker.relaySignals([SIGTERM, SIGINT]) {
                    logger.info("Signal received: shutting down")
                    runner.stop()
                    waker.shutdown()
                    // A database that answers neither the statement nor its cancel (a server
                    // stopped with SIGSTOP, a network that drops everything) must not keep a
                    // stopping runner: after a second and a half it exits all the same. What it
                    // had claimed goes back to the other runners after the lease, as after a crash.
                    Thread.detachNewThread {
                        Thread.sleep(forTimeInterval: 1.5)
                        guard !finished.load(ordering: .acquiring) else { return }
                        logger.warning(
                            "stopping while the database answers neither the statement in flight nor its cancel: exiting; what this runner had claimed goes back to the other runners after its lease (\(formatDuration(lease)))"
                        )
                        Glibc.exit(0)
                    }
                }
                // A change another session made to the database (NOTIFY chime_changes, not sent by
                // the service's own connection, whose changes it signals by id): Changed([]).
                await runner.run(waker: waker) { senders in
                    if !senders.subtracting([serviceStore.client.backendPID]).isEmpty { signals.changed([]) }
                }
                withExtendedLifetime(bus) {}
                serviceStore.client.reset()
                finished.store(true, ordering: .releasing)
                if ledger.databaseFailing {
                    logger.warning(
                        "stopping while the database does not answer: what this runner had claimed goes back to the other runners after its lease (\(formatDuration(lease)))"
                    )
                }
                let counters = ledger.counters
                logger.info(
                    "Runner stopped",
                    metadata: [
                        "posted": "\(counters.posted)", "lease.lost": "\(counters.leaseLost)", "failed": "\(counters.failed)",
                        "cancelled.before.post": "\(counters.cancelledBeforePost)",
                    ]
                )
            }
        } catch {
            await NotifierChoice.shutDown(sink)
            throw error
        }
        await NotifierChoice.shutDown(sink)
    }

    /// What the ledger tells, in the runner's log.
    static func log(_ event: PostgresLedgerEvent, _ logger: Logger) {
        switch event {
        case .reaped(let count):
            logger.info("returned \(count) occurrences whose lease had expired")
        case let .leaseLost(id, due, when):
            logger.notice(
                "lost the lease on reminder \(id) due \(TimeText.iso(due)) \(when)",
                metadata: ["reminder": .string(id), "due": .string(TimeText.iso(due))]
            )
        case let .cancelledBeforePost(id, due):
            logger.info("not posting reminder \(id) due \(TimeText.iso(due)): cancelled after it was claimed")
        case .handedBack(let count):
            logger.info("handed back \(count) claimed occurrences on stopping")
        case .commandsInterrupted(let ids):
            logger.warning(
                "Commands interrupted: their runner is gone (no connection to the database); not run again",
                metadata: ["reminder.ids": .string(ids.joined(separator: ","))]
            )
        }
    }

    /// `host:pid:xxxx`: the host and process, and four random letters in case a pid is reused.
    static func ownerName() -> String {
        var name = [CChar](repeating: 0, count: 256)
        let host =
            gethostname(&name, name.count) == 0
            ? String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : "host"
        var rng = SystemRandomNumberGenerator()
        let suffix = String((0..<4).map { _ in "abcdefghijklmnopqrstuvwxyz".randomElement(using: &rng)! })
        return "\(host.prefix(32)):\(getpid()):\(suffix)"
    }
}

import ArgumentParser
import ChimeApp
import ChimeConfig
import ChimeCore
import ChimeDBus
import ChimeDoses
import ChimeFocus
import ChimeGateway
import ChimeLibnotify
import ChimeRunner
import ChimeStore
import ChimeViewModels
import Foundation
import Logging
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

struct Run: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run the runner: fire each occurrence when it is due.",
        discussion: """
            One runner per store: it sleeps until the next deadline, catches up on what
            it missed, and stops on SIGTERM or SIGINT. It reads the config file when it
            starts. Several runners may share a database store (--channel, --lease).
            Examples:
              chime run
              chime run --notifier json | jq -r .title
            A phone gets alerts with --notifier ntfy or gotify: their server and token come
            from the config file or the environment (ntfy_url, ntfy_topic, ntfy_token_file;
            gotify_url, gotify_token_file), never from the command line.
            More: man chime (chime run, POSTGRESQL STORE)
            """
    )

    @Option(
        help: ArgumentHelp(
            "Where alerts go: auto, desktop, console, json, webhook, ntfy or gotify (default: auto).",
            valueName: "notifier"
        )
    )
    var notifier: NotifierChoice?
    @OptionGroup var webhook: WebhookOptions
    @Option(
        name: .customLong("channel"),
        help: ArgumentHelp(
            "On a PostgreSQL store: a channel it serves (repeatable).",
            valueName: "channel"
        )
    )
    var channels: [String] = []
    @Option(
        help: ArgumentHelp(
            "On a PostgreSQL store: how long a claim lasts (30s).",
            valueName: "duration"
        )
    )
    var lease: DurationOption<RunnerLeaseLength>?
    @Option(
        help: ArgumentHelp("trace, debug, info, notice, warning, error or critical.", valueName: "level"),
        completion: .list(Logger.Level.allCases.map(\.rawValue))
    )
    var logLevel: String = ProcessInfo.processInfo.environment["CHIME_LOG_LEVEL"] ?? "info"
    @OptionGroup var global: GlobalOptions

    func validate() throws {
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw ValidationError(
                ChimeError.invalid("log level", logLevel, expected: Logger.Level.allCases.map(\.rawValue).joined(separator: ", ")).message
            )
        }
    }

    func run() async throws {
        let level = Logger.Level(rawValue: logLevel)!
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "chime.runner")
        let config = try Settings.current()
        // The notifier: the flag, else the environment or the config file (Settings), else auto,
        // on either store.
        let chosen = notifier ?? NotifierChoice(rawValue: config.text(.notifier)) ?? .auto
        if chosen == .auto || chosen == .desktop { Self.carryNotificationSettingsOver(logger: logger) }
        if let url = try global.postgresURL() { return try await runPostgres(url, notifier: chosen, config: config, logger: logger) }
        guard channels.isEmpty, lease == nil else {
            throw ChimeError(
                .usage,
                "\(channels.isEmpty ? "--lease" : "--channel") is for a PostgreSQL store, where runners share the work; a SQLite store has one runner"
            )
        }
        let store = try global.openStore(.create, runner: true)
        // `chime run --json` is the JSON stream, whatever the desktop offers.
        let choice: NotifierChoice = chosen == .auto && global.json ? .json : chosen
        let signals = BusSignals()
        // An alert's body, clicked on the desktop, opens the app at its page (through the service).
        LibnotifyNotifier.onDefaultAction { page in signals.openApp(page: page) }
        let sink = try await choice.make(json: global.json, follow: true, webhook: webhook)
        // The focus session's live alert is for a desktop, where it is replaced in place; a
        // console or JSON stream gets one line per alert, not one per stage, and a phone one
        // push per alert.
        let idle = Self.idleSource(config: config)
        let families = ChimeApp.families(
            store: store,
            logger: logger,
            liveAlerts: NotifierChoice.showsLiveAlerts(sink),
            snoozeLength: .seconds(config.seconds(.snooze)),
            doseRepeats: config.doseRepeats,
            focusBreaks: config.focusBreaks,
            idle: idle ?? nil,
            focusIdle: config.focusIdle,
            doseTeller: DoseTellSender(config: config),
            dosePerson: config.dosePerson
        )
        do {
            let runner = try Runner(
                store: store,
                notifier: SignallingNotifier(sink, signals: signals),
                families: families,
                hooks: config.hooks,
                logger: logger,
                observe: signals.observe,
                afterPass: signals.passed
            )
            // Said once the runner holds its store, runtime directory and lock: a refusal above is
            // one line.
            if let idle { logger.info("Idle source: \(idle?.name ?? IdleMonitors.noneText)") }
            // The idle source speaks on its own thread: a pass shows what it changed. Weakly: the
            // runner holds the families, and a runner kept alive by one would leave its socket.
            for case let focus as FocusFamily in families { focus.connect(poke: { [weak runner] in runner?.poke() }) }
            // Only once the store's lock is held: a second runner on the store stops above.
            let launcher = Self.appLauncher(storePath: store.path, config: config)
            let bus = Self.startBus(runner: runner, signals: signals, logger: logger, launcher: launcher)
            try await runner.runUntilSignalled()
            withExtendedLifetime(bus) {}
        } catch {
            await NotifierChoice.shutDown(sink)
            throw error
        }
        await NotifierChoice.shutDown(sink)
    }

    /// Where the desktop says the person is idle (IdleMonitors), looked for only when
    /// `[focus] idle_pause` or `wait_for_activity` needs it: `.some(nil)` when it is needed and
    /// none answers (the runner's log says so), nil when it is not needed.
    static func idleSource(config: Config) -> (any IdleSource)?? {
        let breaks = config.focusBreaks
        guard config.focusIdle.pauseSeconds != nil || breaks.waitForActivity else { return nil }
        return .some(IdleMonitors.detect())
    }

    /// A person's GNOME notification settings for Chime 0.2.0's desktop id, carried over to
    /// Chime's application id once (NotificationSettingsMigration); one line when it did.
    static func carryNotificationSettingsOver(logger: Logger) {
        switch NotificationSettingsMigration.runOnce() {
        case .carried(let keys):
            logger.info(
                "Notification settings carried over from \(ApplicationID.previous).desktop to \(ApplicationID.current).desktop: \(keys.joined(separator: ", "))"
            )
        case .failed(let reason):
            logger.warning("Notification settings of \(ApplicationID.previous).desktop not carried over: \(reason)")
        case .notApplicable, .ranBefore, .nothingToCarry: break
        }
    }

    /// The D-Bus service on the SQLite store, when a session bus exists (``startBus(signals:logger:service:)``).
    static func startBus(runner: Runner, signals: BusSignals, logger: Logger, launcher: AppLauncher) -> ChimeBusServer? {
        startBus(signals: signals, logger: logger, launcher: launcher) {
            runner.observePokes { signals.changed([]) }
            return RemindersService(
                store: runner.store,
                poke: { runner.poke() },
                changed: { signals.changed($0) },
                answered: { signals.answered(id: $0, answer: $1) }
            )
        }
    }

    /// The D-Bus service, when a session bus exists (one line in the log either way), on the
    /// service `service` makes; a name another process owns (another runner on this session
    /// bus, of either store), or a bus that cannot be reached, is logged, not fatal.
    static func startBus(
        signals: BusSignals,
        logger: Logger,
        launcher: AppLauncher,
        service: () -> RemindersService
    ) -> ChimeBusServer? {
        guard let address = SessionBusAddress.find() else {
            logger.info("No session bus: no D-Bus service")
            return nil
        }
        let service = service()
        do {
            let owned = Mutex(false)
            let server = try ChimeBusServer.start(
                address: address,
                service: service,
                launcher: launcher,
                log: { line, failed in failed ? logger.warning("\(line)") : logger.info("\(line)") },
                onName: { state in
                    switch state {
                    case .acquired:
                        owned.withLock { $0 = true }
                        logger.info("D-Bus service: \(ChimeBus.name) on the session bus")
                    case .lost where owned.withLock({ $0 }):
                        // (GDBus reports the name lost when the connection closes: the bus stopped.)
                        logger.warning("D-Bus service stopped: the session bus closed the connection")
                    case .lost:
                        logger.warning("D-Bus name \(ChimeBus.name) is owned by another process: no D-Bus service")
                    }
                }
            )
            signals.attach(server)
            return server
        } catch {
            logger.warning("No D-Bus service", metadata: ["error": .string(error.message)])
            return nil
        }
    }

    /// How the service starts the app when no window is open (org.freedesktop.Application,
    /// an alert's body): what `chime app` execs, the windows' executable in its app mode on
    /// `storePath` with the config's focus length, detached, with the runner's environment (less
    /// what the service manager gave the runner alone). Nil `storePath`: a store the app does
    /// not open (PostgreSQL), refused with the reason.
    static func appLauncher(storePath: String?, config: Config) -> AppLauncher {
        let minutes = Int(config.seconds(.focusLength) / 60)
        return AppLauncher { page throws(ChimeError) in
            guard let storePath else {
                throw ChimeError(.failure, "the app does not open a PostgreSQL store yet (it opens a SQLite store: chime app --store PATH)")
            }
            let helper = GateWindowProcess.helperPath(executable: GateContext.executable())
            guard access(helper, X_OK) == 0 else {
                throw ChimeError(
                    .notFound,
                    "no app window: '\(helper)' is missing (install chime-gate-window beside chime: scripts/quickstart)"
                )
            }
            var environment = ProcessInfo.processInfo.environment
            for name in ["NOTIFY_SOCKET", "LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES", "WATCHDOG_PID", "WATCHDOG_USEC"] {
                environment[name] = nil
            }
            let argv = [helper, "app"] + (page.map { [$0.rawValue] } ?? []) + ["--store", storePath, "--focus-minutes", String(minutes)]
            _ = try DetachedProcess.start(argv, environment: environment)
        }
    }
}

import ArgumentParser
import ChimeApp
import ChimeConfig
import ChimeCore
import ChimeDoses
import ChimeFocus
import ChimeGateway
import ChimeRunner
import ChimeStore
import Foundation
import Logging

struct Run: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run the reminder runner: fire each occurrence when due.",
        discussion: """
            One runner per store. It sleeps until the next deadline (no polling), wakes at once when \
            'chime' changes the store or the wall clock is set, catches up on what it missed while down \
            (once per occurrence, saying how late; many at once become one summary), and stops \
            gracefully on SIGTERM or SIGINT. Alerts go to standard output; logs to standard error.

            With --notifier auto and a session bus it follows the notification server: while none \
            owns org.freedesktop.Notifications each alert is printed on the console and stays due; \
            when a server appears it switches to the desktop and shows there, once, what was only \
            printed; when the server leaves, back to the console. 'chime doctor' says where the \
            running runner's alerts go now. With no session bus it is the console.

            The config file (chime config path) is read when the runner starts (its notifier, \
            snooze length, dose repeats, quiet hours, store): restart the runner after an edit.

            On a PostgreSQL store (--store or $CHIME_STORE a postgresql:// URL; 'chime store init' \
            first) any number of runners share the store, on as many hosts: each claims what is due \
            under a lease (--lease), only in the channels it serves (--channel), compares only with \
            the database's clock, and wakes on LISTEN/NOTIFY or a 30 s poll. Plain reminders only; \
            the families keep to SQLite.
            """
    )

    @Option(
        help: ArgumentHelp(
            "Where alerts go: auto (the desktop whenever a notification server runs, else the console), desktop, console (one line each), json (one JSON object per line) or webhook (a JSON POST each, to --webhook-url-file's URL, else $CHIME_WEBHOOK_URL, else the config file's webhook_url). Default: $CHIME_NOTIFIER, else the config file's notifier, else auto.",
            valueName: "notifier"
        )
    )
    var notifier: NotifierChoice?
    @OptionGroup var webhook: WebhookOptions
    @Option(
        name: .customLong("channel"),
        help: ArgumentHelp(
            "On a PostgreSQL store: a channel this runner serves (again for more). Default: default.",
            valueName: "channel"
        )
    )
    var channels: [String] = []
    @Option(
        help: ArgumentHelp(
            "On a PostgreSQL store: how long an occurrence this runner claimed stays its own; after it, any runner may post it (2s to 1h). Default: 30s.",
            valueName: "duration"
        )
    )
    var lease: DurationOption<RunnerLeaseLength>?
    @Option(
        help: ArgumentHelp("Log level: trace, debug, info, notice, warning, error, critical.", valueName: "level"),
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
        let sink = try await choice.make(json: global.json, follow: true, webhook: webhook)
        // The focus session's live alert is for a desktop, where it is replaced in place; a
        // console or JSON stream gets one line per alert, not one per stage.
        let families = ChimeApp.families(
            store: store,
            logger: logger,
            liveAlerts: !(sink is ConsoleNotifier),
            snoozeLength: .seconds(config.seconds(.snooze)),
            doseRepeats: config.doseRepeats
        )
        do {
            let runner = try Runner(store: store, notifier: sink, families: families, logger: logger)
            try await runner.runUntilSignalled()
        } catch {
            await NotifierChoice.shutDown(sink)
            throw error
        }
        await NotifierChoice.shutDown(sink)
    }
}

import ArgumentParser
import ChimeCore
import ChimeRunner
import ChimeStore
import Foundation
import Logging

struct Run: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the reminder runner: fire each occurrence when due.",
        discussion: """
            One runner per store. It sleeps until the next deadline (no polling), wakes at once when \
            'chime' changes the store or the wall clock is set, catches up on what it missed while down \
            (once per occurrence, saying how late; many at once become one summary), and stops \
            gracefully on SIGTERM or SIGINT. Alerts go to standard output; logs to standard error.
            """
    )

    @Option(
        help: ArgumentHelp(
            "Where alerts go: auto (the desktop when a notification server runs, else the console), desktop, console (one line each) or json (one JSON object per line).",
            valueName: "notifier"
        )
    )
    var notifier: NotifierChoice = .auto
    @Option(help: ArgumentHelp("Log level: trace, debug, info, notice, warning, error, critical.", valueName: "level"))
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
        let store = try global.openStore(.create, runner: true)
        // `chime run --json` is the JSON stream, whatever the desktop offers.
        let choice: NotifierChoice = notifier == .auto && global.json ? .json : notifier
        let sink = try await choice.make(json: global.json)
        let runner = try Runner(store: store, notifier: sink, logger: logger)
        try await runner.runUntilSignalled()
    }
}

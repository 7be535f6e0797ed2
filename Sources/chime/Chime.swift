import ArgumentParser
import ChimeCore
import ChimeRunner
import Foundation

#if canImport(Glibc)
import Glibc
#endif

struct Chime: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "chime",
        abstract: "Reminders and notifications for Linux, and a runner that fires them.",
        discussion: """
            Exit status: 0 success, 64 bad input, 3 not found, 4 conflict, 5 store
            unusable, 6 a runner already runs, 7 not delivered, 8 too late, 78 a bad
            config file, 1 anything else. The reference: man chime.
            """,
        version: ChimeVersion.string,
        groupedSubcommands: [
            CommandGroup(
                name: "Reminders",
                subcommands: [
                    In.self, At.self, Every.self, Import.self, List.self, Next.self, Show.self, Edit.self, Cancel.self, Snooze.self,
                    Done.self, History.self, Notify.self,
                ]
            ),
            CommandGroup(
                name: "Runner",
                subcommands: [Run.self, Status.self, Doctor.self, Quiet.self, ServiceCommand.self, ConfigCommand.self, StoreCommand.self]
            ),
            CommandGroup(name: "Focus", subcommands: [Focus.self, ForestCommand.self, Stats.self]),
            CommandGroup(
                name: "Doses",
                subcommands: [Med.self, DoseCommand.self, DosesCommand.self, AdherenceCommand.self, ExportCommand.self]
            ),
            CommandGroup(name: "Gateway", subcommands: [GateCommand.self]),
            CommandGroup(name: "App", subcommands: [AppCommand.self]),
        ]
    )
}

@main
enum Main {
    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        // A runner asked to stop while it starts (systemctl stop, Ctrl-C) stops cleanly once
        // started, on either store, rather than being ended half-way (see
        // TimerWaker.rememberSignals). Here, before anything else, not in Run.run.
        if arguments.first == "run" { TimerWaker.rememberSignals([SIGTERM, SIGINT]) }
        let wantsJSON = arguments.contains("--json")
        // A completion script asking for candidates at a TAB (see Completion): quiet and quick.
        let completing = Completion.isRequest(arguments)
        if completing { Completion.prepare() }
        do {
            // Every command runs on Chime's own thread rather than Swift's global pool (see RunnerThread).
            try await withTaskExecutorPreference(RunnerThread.shared) {
                // Help only alone: `chime in 5m -h` is a usage error, not help and exit 0.
                // (Not in a completion request: its words are the line being typed.)
                // The hot commands' plain forms skip argument-parser (see FastParse); they all
                // check the config file first, as below.
                switch completing ? nil : FastParse.parse(arguments) {
                case .version:
                    print(ChimeVersion.string)
                    return
                case .command(var fast):
                    _ = try Settings.current()
                    try await fast.run()
                    return
                case nil: break
                }
                if !completing { try CommandWords.checkHelp(arguments) }
                var command = try Chime.parseAsRoot(arguments)
                // No command runs on half a config: the whole file is checked first (but the
                // config commands, to fix it, and the gate's launch, which never locks out).
                if Settings.checksFirst(type(of: command)) { _ = try Settings.current() }
                PostgresStoreOption.running = PostgresStoreOption.commandWords(
                    arguments,
                    name: type(of: command).configuration.commandName
                )
                // A family's command on a PostgreSQL store: refused before it does anything.
                try PostgresStoreOption.refuseFamily(command)
                if var asyncCommand = command as? any AsyncParsableCommand {
                    try await asyncCommand.run()
                } else {
                    try command.run()
                }
            }
        } catch {
            if completing { Completion.finish(error) }
            exit(report(error, json: wantsJSON))
        }
    }

    /// One line on standard error naming the bad value (and, with --json, one JSON document on
    /// standard output); returns the exit status for the error's kind.
    static func report(_ error: any Error, json: Bool) -> Int32 {
        let code: ChimeError.Code
        let message: String
        // A command that printed its findings and fails as a whole (chime doctor).
        if let exit = error as? ExitCode { return exit.rawValue }
        if let error = error as? ChimeError {
            code = error.code
            message = error.message
        } else {
            let exitCode = Chime.exitCode(for: error)
            if exitCode == .success {
                // --help, --version: argument-parser prints them.
                Chime.exit(withError: error)
            }
            code = exitCode == .validationFailure ? .usage : .failure
            let full = Chime.message(for: error)
            let text = full.split(separator: "\n").first.map(String.init) ?? "\(error)"
            if code == .usage, let refusal = ArgumentRefusal.take(for: full) {
                // A value an option's type refused (DurationOption): Chime's line, not the parser's.
                message = refusal.message
            } else {
                message = code == .usage ? "\(text) (see 'chime --help')" : text
            }
        }
        FileHandle.standardError.write(Data("chime: \(message)\n".utf8))
        if json {
            struct Failure: Encodable {
                struct Detail: Encodable {
                    var code: String
                    var message: String
                    var exit: Int32
                }
                var error: Detail
            }
            Output.json(Failure(error: .init(code: code.rawValue, message: message, exit: code.exitStatus)))
        }
        return code.exitStatus
    }
}

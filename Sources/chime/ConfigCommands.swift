import ArgumentParser
import ChimeApp
import ChimeConfig
import ChimeCore
import ChimeGateway
import ChimeStore
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The config file, read once per process (lazily: `--help` and `--version` never read it).
enum Settings {
    private static let loaded: Result<Config, ChimeError> = Result { () throws(ChimeError) in try ChimeApp.loadConfig() }

    /// The settings, or the config file's one-line error (exit 78).
    static func current() throws(ChimeError) -> Config { try loaded.get() }

    /// The settings, or nil when the file is bad (for the paths that must go on without it:
    /// the gate's launch, `chime config path|edit`).
    static var ifValid: Config? { try? loaded.get() }

    /// Whether `command` checks the whole file before it runs: every command of Chime's tree
    /// but the ``RunsWithBadConfig`` ones (argument-parser's own `help` is not in the tree).
    static func checksFirst(_ command: any ParsableCommand.Type) -> Bool {
        guard !(command is any RunsWithBadConfig.Type) else { return false }
        func contains(_ tree: any ParsableCommand.Type) -> Bool {
            tree == command || tree.configuration.subcommands.contains(where: contains)
        }
        return contains(Chime.self)
    }
}

/// A command that runs with a bad config file: the config commands (so a person can fix it)
/// and the gate's launch (a wellbeing tool never locks a person out). Every other command
/// checks the whole file before it runs.
protocol RunsWithBadConfig {}

struct ConfigCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config",
        abstract: "The config file: path, effective settings, an editor.",
        discussion: """
            $XDG_CONFIG_HOME/chime/config.toml (TOML). Flags beat the environment, which
            beats the file, which beats the defaults. A bad file stops every command but
            'config', 'gate open' and 'app' (exit 78). 'chime run' reads it when it starts.
            Examples:
              chime config path
              chime config show --json
              chime config example
              chime config set focus.length 30m
            More: man chime (CONFIGURATION)
            """,
        subcommands: [ConfigShow.self, ConfigPath.self, ConfigEdit.self, ConfigExample.self, ConfigSet.self],
        defaultSubcommand: ConfigShow.self
    )
}

/// `--json` for the config commands (they open no store, so they take no --store but show's).
struct JSONOption: ParsableArguments {
    @Flag(name: .long, help: "Print one JSON document instead of human text.")
    var json = false
}

struct ConfigPath: AsyncParsableCommand, RunsWithBadConfig {
    static let configuration = CommandConfiguration(
        commandName: "path",
        abstract: "Print the config file's path (whether or not it exists).",
        discussion: """
            More: man chime (CONFIGURATION)
            """
    )
    @OptionGroup var output: JSONOption

    struct PathReport: Report {
        var path: String
        var exists: Bool
        var lines: [String] { [path] }
    }

    func run() async throws {
        let path = Config.path(environment: ProcessInfo.processInfo.environment)
        emit(PathReport(path: path, exists: FileManager.default.fileExists(atPath: path)), json: output.json)
    }
}

struct ConfigExample: AsyncParsableCommand, RunsWithBadConfig {
    static let configuration = CommandConfiguration(
        commandName: "example",
        abstract: "Print the commented example file: every key at its default (what 'config edit' writes).",
        discussion: """
            More: man chime (CONFIGURATION)
            """
    )
    @OptionGroup var output: JSONOption

    struct ExampleReport: Report {
        var example: String
        var lines: [String] { [String(example.dropLast())] }
    }

    func run() async throws { emit(ExampleReport(example: Config.example), json: output.json) }
}

struct ConfigShow: AsyncParsableCommand, RunsWithBadConfig {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Print each setting's effective value and where it came from (flag, stored, env, file, default).",
        discussion: """
            Secrets are shown as ***: tokens, the ntfy topic (on ntfy.sh it works as a
            password), the password and query values of URLs and a webhook URL's path;
            --secrets prints them as they are.
            With a bad file: the file's path, its one-line error, exit 78.
            More: man chime (CONFIGURATION)
            """
    )
    @Flag(name: .customLong("secrets"), help: "Print tokens, the ntfy topic and URLs whole, rather than as ***.")
    var secrets = false
    @OptionGroup var global: GlobalOptions

    struct SettingJSON: Encodable {
        var key: String
        var value: String
        var source: String
        var from: String
        var env: String
        @Nullable var line: Int?
    }

    struct ShowReport: Report {
        var path: String
        var exists: Bool
        var settings: [SettingJSON]
        /// Whether a value was shown as *** (a note says how to print it).
        var hidden = false

        enum CodingKeys: String, CodingKey { case path, exists, settings }

        var notes: [String] {
            hidden ? ["Secrets are shown as ***: 'chime config show --secrets' prints them (as anyone who sees your screen then can)."] : []
        }

        var lines: [String] {
            var lines = ["Config file: \(path)" + (exists ? "" : " (none: the defaults apply; 'chime config edit' makes one)")]
            let width = settings.map(\.key.count).max() ?? 0
            let valueWidth = min(40, settings.map(\.value.count).max() ?? 0)
            for setting in settings {
                let key = setting.key.padding(toLength: width, withPad: " ", startingAt: 0)
                let value =
                    setting.value.count >= valueWidth
                    ? setting.value : setting.value.padding(toLength: valueWidth, withPad: " ", startingAt: 0)
                lines.append("\(key)  \(value)  \(setting.from)")
            }
            return lines
        }
    }

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let config: Config
        do {
            config = try Settings.current()
        } catch {
            if !global.json { Output.line("Config file: \(Config.path(environment: environment))") }
            throw error
        }
        // The choices stored in the store, when there is one (it is never created here).
        var storedHours: QuietSettings.Window?
        var storedGate: GateProfile?
        let storePath = global.store.flatMap { $0.isEmpty ? nil : $0 } ?? config.text(.store)
        if FileManager.default.fileExists(atPath: storePath) {
            let store = try global.openStore(.read)
            storedHours = try? store.storedQuietHours()
            storedGate = try? GateBook(store: store).savedProfile()
        }
        var settings: [SettingJSON] = []
        var hidden = false
        for key in config.keys {
            var flag: (name: String, value: ConfigValue)?
            var stored: (command: String, value: ConfigValue)?
            switch key {
            case .store: flag = global.store.flatMap { $0.isEmpty ? nil : ("--store", .text($0)) }
            case .quietHours: stored = storedHours.map { ("chime quiet hours", .window($0)) }
            case .gateDetermination: stored = storedGate.map { ("chime gate setup", .number($0.determination)) }
            case .gateGrace: stored = storedGate.map { ("chime gate setup", .seconds(Int64($0.grace.length))) }
            case .gateSession: stored = storedGate.map { ("chime gate setup", .seconds(Int64($0.sessionLength))) }
            case .gateFocusOnExit: stored = storedGate.map { ("chime gate setup", .flag($0.focusOnExit)) }
            default: break
            }
            let setting = config.setting(key, flag: flag, stored: stored)
            var line: Int?
            if case .file(_, let at) = setting.source { line = at }
            let value = secrets ? setting.value.text : key.reported(setting.value.text)
            if value != setting.value.text { hidden = true }
            settings.append(
                SettingJSON(
                    key: key.rawValue,
                    value: value,
                    source: setting.source.kind,
                    from: setting.source.description,
                    env: key.environmentVariable,
                    line: line
                )
            )
        }
        emit(ShowReport(path: config.path, exists: config.fileExists, settings: settings, hidden: hidden), json: global.json)
    }
}

struct ConfigEdit: AsyncParsableCommand, RunsWithBadConfig {
    static let configuration = CommandConfiguration(
        commandName: "edit",
        abstract: "Open the config file in an editor (made first, from the example, when missing); then check it.",
        discussion: """
            The editor is $VISUAL, else $EDITOR, else sensible-editor, else vi. Then the
            file is checked: a bad one gives its one-line error and exit 78.
            More: man chime (CONFIGURATION)
            """
    )
    @OptionGroup var output: JSONOption

    struct Edited: Report {
        var path: String
        var created: Bool
        var valid: Bool
        var lines: [String] { ["\(path): " + (created ? "made from the example; " : "") + "valid."] }
    }

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let path = Config.path(environment: environment)
        let created = try Self.create(path)
        let editor = Self.editor(environment: environment)
        // Through the shell, as git and crontab run $EDITOR: it may carry arguments ("code -w").
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", editor + " \"$1\"", "sh", path]
        do {
            try process.run()
        } catch {
            throw ChimeError(.failure, "cannot start the editor '\(editor)': \(error.localizedDescription)")
        }
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw ChimeError(.failure, "the editor '\(editor)' exited with status \(process.terminationStatus); \(path) is as it left it")
        }
        _ = try ChimeApp.loadConfig(environment: environment)
        emit(Edited(path: path, created: created, valid: true), json: output.json)
    }

    /// $VISUAL, else $EDITOR, else sensible-editor when on the PATH, else vi.
    static func editor(environment: [String: String]) -> String {
        for name in ["VISUAL", "EDITOR"] {
            if let editor = environment[name], !editor.trimmingCharacters(in: .whitespaces).isEmpty { return editor }
        }
        let path = environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        let found = path.split(separator: ":").contains { access("\($0)/sensible-editor", X_OK) == 0 }
        return found ? "sensible-editor" : "vi"
    }

    /// Makes the file from the example when there is none (its directory too); never
    /// overwrites one. Returns whether it made it.
    static func create(_ path: String) throws(ChimeError) -> Bool {
        let directory = (path as NSString).deletingLastPathComponent
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw ChimeError(.config, "cannot make the directory \(directory): \(error.localizedDescription)")
        }
        // O_EXCL: made only where nothing is, even if another process makes it meanwhile.
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        if descriptor < 0 {
            if errno == EEXIST { return false }
            throw ChimeError(.config, "cannot make \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        let bytes = Array(Config.example.utf8)
        let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        guard written == bytes.count else {
            let reason = String(cString: strerror(errno))
            unlink(path)
            throw ChimeError(.config, "cannot write \(path): \(reason)")
        }
        return true
    }
}

struct ConfigSet: AsyncParsableCommand, RunsWithBadConfig {
    static let configuration = CommandConfiguration(
        commandName: "set",
        abstract: "Set a key in the config file (made from the example when missing), keeping the rest of it.",
        discussion: """
            The value as the environment takes it: 30m, 22:00-07:00 or off, 5, true. The file
            is checked whole and replaced at once; a bad value or a bad file changes nothing
            (a bad file: fix it with 'chime config edit'). Hooks are set with 'config edit'.
            Examples:
              chime config set focus.length 30m
              chime config set quiet.hours 22:00-07:00
            More: man chime (CONFIGURATION)
            """
    )
    @Argument(help: ArgumentHelp("The key, dotted as 'config show' names it: focus.length.", valueName: "key"))
    var key: String
    @Argument(help: ArgumentHelp("Its value.", valueName: "value"))
    var value: String
    @OptionGroup var output: JSONOption

    struct SetReport: Report {
        var path: String
        var key: String
        var value: String
        var lines: [String] { ["\(path): \(key) = \(value)"] }
    }

    func run() async throws {
        guard let configKey = ChimeApp.configKeys.first(where: { $0.rawValue == key }) else {
            throw ChimeError.invalid(
                "key",
                key,
                expected: "a key of 'chime config show': " + ChimeApp.configKeys.map(\.rawValue).joined(separator: ", ")
            )
        }
        let environment = ProcessInfo.processInfo.environment
        let config = try ConfigWriter.write([.init(configKey, value)], keys: ChimeApp.configKeys, environment: environment)
        // The file's value (a variable may beat it: 'config show' says which applies).
        let written = try ConfigWriter.value(configKey, value, environment: environment).text
        emit(SetReport(path: config.path, key: configKey.rawValue, value: configKey.reported(written)), json: output.json)
    }
}

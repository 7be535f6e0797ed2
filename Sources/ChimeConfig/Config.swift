import ChimeCore
import ChimeStore
import Foundation
import TOMLKit

#if canImport(Glibc)
import Glibc
#endif

/// Chime's settings, each with where it came from: a flag, a choice stored by a command
/// (`chime quiet hours`, `chime gate setup`), an environment variable, the config file
/// (`$XDG_CONFIG_HOME/chime/config.toml`), or the built-in default, in that order.
///
/// Loading reads and checks the whole file and the variable of every key at once, so no
/// command runs on half a config: the first bad value is one ``ChimeError/Code/config`` line.
/// The keys come from the layers that own them (ChimeCore's ``ConfigKey``), listed once by the
/// composition root (ChimeApp); this library names no family.
public struct Config: Sendable {
    /// Where a setting's value came from.
    public enum Source: Sendable, Hashable {
        /// A command-line flag, by its name.
        case flag(String)
        /// A choice a command stored (`chime quiet hours`), said as the command.
        case stored(String)
        /// An environment variable, by its name.
        case environment(String)
        /// The config file, and the key's line when it was found.
        case file(path: String, line: Int?)
        case builtIn

        /// `flag`, `stored`, `env`, `file` or `default`.
        public var kind: String {
            switch self {
            case .flag: "flag"
            case .stored: "stored"
            case .environment: "env"
            case .file: "file"
            case .builtIn: "default"
            }
        }

        /// "flag --store", "env CHIME_SNOOZE", "file /home/me/.config/chime/config.toml:7", "default".
        public var description: String {
            switch self {
            case .flag(let name): "flag \(name)"
            case .stored(let command): "stored by '\(command)'"
            case .environment(let name): "env \(name)"
            case .file(let path, let line): "file \(path)" + (line.map { ":\($0)" } ?? "")
            case .builtIn: "default"
            }
        }
    }

    /// A key's effective value and its source.
    public struct Setting: Sendable, Hashable {
        public var key: ConfigKey
        public var value: ConfigValue
        public var source: Source
    }

    /// The config file's path, whether or not it exists.
    public let path: String
    /// Whether the file was there (and read).
    public let fileExists: Bool
    /// The keys it knows, in the file's order.
    public let keys: [ConfigKey]
    private let file: [ConfigKey: (value: ConfigValue, line: Int?)]
    private let environmentValues: [ConfigKey: ConfigValue]
    private let environment: [String: String]

    /// `$XDG_CONFIG_HOME/chime/config.toml` (an absolute `$XDG_CONFIG_HOME` only, as the XDG
    /// spec says), else `~/.config/chime/config.toml`.
    public static func path(environment: [String: String]) -> String {
        if let config = environment["XDG_CONFIG_HOME"], config.hasPrefix("/") { return config + "/chime/config.toml" }
        let home = environment["HOME"] ?? NSHomeDirectory()
        return home + "/.config/chime/config.toml"
    }

    /// Reads the file (when there is one) and the environment, and checks them whole.
    /// - Throws: ``ChimeError/Code/config``: one line naming the file (and line), the key, the
    ///   value and what is accepted; or the TOML syntax error with its line and column.
    public static func load(
        keys: [ConfigKey],
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(ChimeError) -> Config {
        let path = path(environment: environment)
        return try Config(path: path, contents: try read(path), environment: environment, keys: keys)
    }

    /// The settings from `contents` (nil: no file) and `environment`, for `keys`.
    public init(path: String, contents: String?, environment: [String: String], keys: [ConfigKey]) throws(ChimeError) {
        self.path = path
        self.environment = environment
        self.keys = keys
        fileExists = contents != nil
        file =
            try contents.map { text throws(ChimeError) in try ConfigFile.parse(text, path: path, environment: environment, keys: keys) }
            ?? [:]
        var values: [ConfigKey: ConfigValue] = [:]
        for key in keys {
            guard let text = environment[key.environmentVariable], !text.isEmpty else { continue }
            // CHIME_STORE is taken as it always was: any path, relative to the working directory.
            let value = key == .store ? .text(text) : key.parse(text: text, searchPath: environment["PATH"])
            guard let value else {
                throw ChimeError(
                    .config,
                    "invalid \(key.environmentVariable) '\(ConfigTOMLValue.shortened(key.shown(text)))': expected \(key.accepted)"
                )
            }
            values[key] = value
        }
        environmentValues = values
    }

    /// The largest config file read: far more than every key with a long comment each takes.
    /// (A 30 MB file of comments cost TOMLKit 23 s and 610 MB, on every command.)
    public static let maxFileBytes = 1 << 20

    /// The file's text, or nil when there is no file.
    /// - Throws: ``ChimeError/Code/config`` when the path is a directory, a dangling symbolic
    ///   link, not a regular file (a device, a FIFO), larger than ``maxFileBytes``, cannot be
    ///   read, is not UTF-8 or holds a NUL byte.
    static func read(_ path: String) throws(ChimeError) -> String? {
        var status = stat()
        // No file: the defaults (a stat, so a command that finds none pays almost nothing).
        guard stat(path, &status) == 0 else {
            let error = errno
            if error == ENOENT || error == ENOTDIR {
                // A link whose target is gone is a file the person meant to have, not "no config":
                // its `store` would otherwise be ignored, and reminders go to another store.
                if let target = try? FileManager.default.destinationOfSymbolicLink(atPath: path) {
                    throw ChimeError(
                        .config,
                        "config file \(path): is a symbolic link to '\(target)', which does not exist: restore the target, or remove the link"
                    )
                }
                return nil
            }
            throw ChimeError(.config, "config file \(path): cannot be read (\(String(cString: strerror(error))))")
        }
        switch status.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFDIR:
            throw ChimeError(.config, "config file \(path): is a directory, expected a TOML file (see 'chime config edit')")
        default:
            throw ChimeError(
                .config,
                "config file \(path): is \(FileKind.describe(status.st_mode)), not a regular file: expected a TOML file (see 'chime config edit')"
            )
        }
        guard status.st_size <= Self.maxFileBytes else {
            throw ChimeError(
                .config,
                "config file \(path): is \(status.st_size) bytes, more than a config file may be (1 MiB): expected a short TOML file (see 'chime config edit')"
            )
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            let reason = access(path, R_OK) == 0 ? "unknown error" : String(cString: strerror(errno))
            throw ChimeError(.config, "config file \(path): cannot be read (\(reason))")
        }
        guard let text = String(validating: data, as: UTF8.self) else {
            throw ChimeError(.config, "config file \(path): is not UTF-8 text, expected a TOML file")
        }
        return text
    }

    /// The effective value of `key`.
    /// - Parameter flag: the value a flag gave, and the flag's name.
    /// - Parameter stored: the value a command stored (quiet hours, the gate's setup), and the command.
    public func setting(
        _ key: ConfigKey,
        flag: (name: String, value: ConfigValue)? = nil,
        stored: (command: String, value: ConfigValue)? = nil
    ) -> Setting {
        if let flag { return Setting(key: key, value: flag.value, source: .flag(flag.name)) }
        if let stored { return Setting(key: key, value: stored.value, source: .stored(stored.command)) }
        if let value = environmentValues[key] { return Setting(key: key, value: value, source: .environment(key.environmentVariable)) }
        if let entry = file[key] { return Setting(key: key, value: entry.value, source: .file(path: path, line: entry.line)) }
        return Setting(key: key, value: key.builtInDefault(environment: environment), source: .builtIn)
    }

    /// The value of a duration key, in seconds (flags and stored choices aside).
    public func seconds(_ key: ConfigKey) -> Int64 {
        setting(key).value.seconds ?? key.builtInDefault(environment: environment).seconds ?? 0
    }

    /// The value of a text key (the notifier, the store).
    public func text(_ key: ConfigKey) -> String {
        if case .text(let text) = setting(key).value { return text }
        return ""
    }

    /// The daily quiet window the file or the environment gives (nil: none).
    public var quietHours: QuietSettings.Window? {
        if case .window(let window) = setting(.quietHours).value { return window }
        return nil
    }

    /// The hooks the file or the environment names, by event (``HookEvent/names``).
    public var hooks: [String: ReminderCommand] {
        var hooks: [String: ReminderCommand] = [:]
        for name in HookEvent.names {
            guard let key = keys.first(where: { $0.rawValue == HookEvent.keyName(name) }) else { continue }
            if let command = setting(key).value.command { hooks[name] = command }
        }
        return hooks
    }

    /// Whether the store's path comes from the file (so its directory, named by a person, is not created).
    public var storeIsNamed: Bool { setting(.store).source != .builtIn }
}

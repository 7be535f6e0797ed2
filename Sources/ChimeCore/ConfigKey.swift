import Foundation

/// A key of the config file, with its environment variable, its built-in default, what it
/// accepts and its one comment line: what the file, the environment, `chime config show` and the
/// example are made from.
///
/// Each layer declares its own keys (nothing below the families names one): the keys
/// of plain reminders, quiet and the runner here, the store's in ChimeStore, and each family's
/// in its library (`FocusFamily.configKeys`, `DoseFamily.configKeys`, `GateBook.configKeys`).
/// The composition root (ChimeApp) lists them all, in the file's order. A key is known by its
/// dotted name (``rawValue``): two keys with the same name are the same key.
public struct ConfigKey: Sendable, Hashable, CustomStringConvertible {
    /// What a key's value may be.
    public enum Rule: Sendable, Hashable {
        /// One of these words.
        case choice([String])
        /// A webhook's URL (``WebhookURL``), or "" for none.
        case webhookURL
        /// A push server's URL (``WebhookURL/server(_:root:)``: no user info, query or fragment;
        /// with `root`, no path either), or "" for none.
        case serverURL(root: Bool)
        /// An ntfy topic (``PushSettings/isTopic(_:)``), or "" for none.
        case topic
        /// An access token (``PushSettings/isToken(_:)``), or "" for none; never shown.
        case token
        /// A person's name as a message names them: 1 to 64 characters on one line; or "" for
        /// the default.
        case name
        /// A file's path: absolute, or `~/…`; or "" for none.
        case path
        /// The store: an absolute path, `~/…`, or a PostgreSQL URL.
        case store
        /// A daily window "HH:MM-HH:MM", or "off".
        case window
        /// A whole number in a range (an integer in the file).
        case number(ClosedRange<Int>)
        /// true or false (a boolean in the file).
        case flag
        /// A length of time, by an option's rule (its range and unit).
        case duration(OptionDuration)
        /// A length of time as ``duration(_:)``, or "off" (the value `.text("off")`): a
        /// behaviour that a length turns on (`focus.idle_pause`).
        case durationOrOff(OptionDuration)
        /// A hook's command: an argv (an array of strings in the file), or a table with `argv`
        /// or `shell` and an optional `timeout`; `[]` for none (``HookEvent``).
        case command
    }

    /// The dotted name: `notifier`, `reminders.snooze`.
    public let rawValue: String
    /// The environment variable that beats the file.
    public let environmentVariable: String
    /// The flag (or stored choice) that beats the environment, where a command has one.
    public let flag: String?
    /// The one comment line above the key in the example: what it is.
    public let summary: String
    public let rule: Rule
    private let builtIn: @Sendable (_ environment: [String: String]) -> ConfigValue
    /// The default as the example file writes it, where it differs from the built-in one (a path
    /// that depends on the environment), and the example's note on it.
    private let example: (value: ConfigValue, note: String)?
    /// A value as a message may show it (a URL's password redacted).
    private let redact: (@Sendable (String) -> String)?
    /// Whether `chime config show` hides its value, as a token's (`***`), though a message
    /// about a bad one names it: a value that works as a password (the ntfy topic).
    public let secret: Bool

    public init(
        _ rawValue: String,
        environment: String,
        flag: String? = nil,
        summary: String,
        rule: Rule,
        example: (value: ConfigValue, note: String)? = nil,
        redact: (@Sendable (String) -> String)? = nil,
        secret: Bool = false,
        builtInDefault: @escaping @Sendable (_ environment: [String: String]) -> ConfigValue
    ) {
        self.secret = secret
        self.rawValue = rawValue
        self.environmentVariable = environment
        self.flag = flag
        self.summary = summary
        self.rule = rule
        self.example = example
        self.redact = redact
        self.builtIn = builtInDefault
    }

    public static func == (lhs: ConfigKey, rhs: ConfigKey) -> Bool { lhs.rawValue == rhs.rawValue }
    public func hash(into hasher: inout Hasher) { hasher.combine(rawValue) }
    public var description: String { rawValue }

    /// The table the key is in (nil: the top level).
    public var section: String? {
        let parts = rawValue.split(separator: ".", maxSplits: 1)
        return parts.count == 2 ? String(parts[0]) : nil
    }

    /// Its name in its table.
    public var name: String { String(rawValue.split(separator: ".").last!) }

    /// The built-in default: the constant the code uses when nothing says otherwise.
    /// - Parameter environment: for a default that depends on it (the store's location).
    public func builtInDefault(environment: [String: String]) -> ConfigValue { builtIn(environment) }

    /// The default as the example file writes it (the store's as `~/…`, not one person's path).
    public var exampleDefault: ConfigValue { example?.value ?? builtInDefault(environment: [:]) }

    /// The example's note on a default that depends on the environment.
    public var exampleNote: String? { example?.note }

    /// A value of this key as a message or `chime config show` may show it.
    public func shown(_ text: String) -> String { redact?(text) ?? text }

    /// A value of this key as `chime config show` shows it: ``shown(_:)``, or `***` for a
    /// ``secret`` one.
    public func reported(_ text: String) -> String { secret ? (text.isEmpty ? "" : "***") : shown(text) }

    /// What the key accepts, as the example and error lines say it.
    public var accepted: String {
        switch rule {
        case .choice(let words): return Self.list(words.map { "\"\($0)\"" })
        case .webhookURL: return WebhookURL.expected + ", or \"\" for none"
        case .serverURL(let root): return WebhookURL.serverExpected(root: root) + ", or \"\" for none"
        case .topic: return PushSettings.topicExpected + ", or \"\" for none"
        case .token: return PushSettings.tokenExpected + ", or \"\" for none"
        case .name: return "a name of 1 to 64 characters on one line, such as \"Alex\", or \"\" for your account's name"
        case .path: return "an absolute path or one starting with ~/, or \"\" for none"
        case .store: return "an absolute path, one starting with ~/, or a postgresql:// URL"
        case .window: return "\"HH:MM-HH:MM\" such as \"22:00-07:00\", or \"off\""
        case .number(let range): return "a whole number from \(range.lowerBound) to \(range.upperBound)"
        case .flag: return "true or false"
        case .duration(let rule):
            let lower = rule.range.lowerBound == 0 ? "0s" : Trigger.formatInterval(rule.range.lowerBound)
            let whole = rule.unit == .minute ? " in whole minutes" : ""
            return "a duration from \"\(lower)\" to \"\(Trigger.formatInterval(rule.range.upperBound))\"\(whole)"
        case .durationOrOff(let rule):
            return ConfigKey("", environment: "", summary: "", rule: .duration(rule), builtInDefault: { _ in .text("") }).accepted
                + ", or \"off\""
        case .command:
            return "an argv such as [\"notify-send\", \"Done\"] (its program found in PATH), or a table with argv or shell, "
                + "and timeout (\"1s\" to \"1d\", default \"10m\"); [] for none"
        }
    }

    /// "a", "a or b", "a, b or c".
    private static func list(_ items: [String]) -> String {
        guard items.count > 1 else { return items.first ?? "" }
        return items.dropLast().joined(separator: ", ") + " or " + items.last!
    }

    /// Reads a value from text (the environment's, or a string in the file).
    /// - Parameter home: what `~/` stands for in the store's path (nil: this process's `$HOME`).
    /// - Parameter searchPath: the PATH a hook's program is looked for in (nil: this process's).
    public func parse(text: String, home: String? = nil, searchPath: String? = nil) -> ConfigValue? {
        switch rule {
        case .choice(let words): return words.contains(text) ? .text(text) : nil
        case .webhookURL: return text.isEmpty || (try? WebhookURL(text)) != nil ? .text(text) : nil
        case .serverURL(let root): return text.isEmpty || (try? WebhookURL.server(text, root: root)) != nil ? .text(text) : nil
        case .topic: return text.isEmpty || PushSettings.isTopic(text) ? .text(text) : nil
        case .token: return text.isEmpty || PushSettings.isToken(text) ? .text(text) : nil
        case .name:
            let trimmed = text.trimmingCharacters(in: .whitespaces)
            let fits = trimmed.count <= 64 && !trimmed.unicodeScalars.contains { $0.properties.generalCategory == .control }
            return fits ? .text(trimmed) : nil
        case .path:
            if text.isEmpty { return .text(text) }
            guard !text.lowercased().hasPrefix("postgres") else { return nil }
            return Self.storePath(text, home: home).map(ConfigValue.text)
        case .store: return Self.storePath(text, home: home).map(ConfigValue.text)
        case .window:
            if text == "off" { return .window(nil) }
            return (try? QuietSettings.Window.parse(text)).map { .window($0) }
        case .number(let range):
            guard let number = Int(text), range.contains(number) else { return nil }
            return .number(number)
        case .flag:
            return text == "true" ? .flag(true) : text == "false" ? .flag(false) : nil
        case .duration(let rule):
            guard let seconds = try? rule.seconds(text) else { return nil }
            return .seconds(seconds)
        case .durationOrOff(let rule):
            if text == "off" { return .text("off") }
            guard let seconds = try? rule.seconds(text) else { return nil }
            return .seconds(seconds)
        case .command:
            // The environment's form: JSON, an array (argv) or an object like the file's table.
            if text.isEmpty || text == "[]" { return .command(nil) }
            guard let json = try? JSONSerialization.jsonObject(with: Data(text.utf8)) else { return nil }
            if let argv = json as? [String] { return Self.command(argv: argv, shell: nil, timeout: nil, searchPath: searchPath) }
            guard let object = json as? [String: String] else { return nil }
            guard Set(object.keys).isSubset(of: ["argv", "shell", "timeout"]) else { return nil }
            return Self.command(argv: nil, shell: object["shell"], timeout: object["timeout"], searchPath: searchPath)
        }
    }

    /// A hook's command from the file's or the environment's parts (`argv` or `shell`, and
    /// `timeout`), checked as `--exec` checks one; nil when it is not one.
    public static func command(argv: [String]?, shell: String?, timeout: String?, searchPath: String?) -> ConfigValue? {
        if argv?.isEmpty == true, shell == nil, timeout == nil { return .command(nil) }
        let program: ReminderCommand.Program
        switch (argv, shell) {
        case (let argv?, nil): program = .argv(argv)
        case (nil, let shell?): program = .shell(shell)
        default: return nil
        }
        var limit = ReminderCommand.defaultTimeout
        if let timeout {
            guard let seconds = try? ReminderCommand.timeoutRule.seconds(timeout) else { return nil }
            limit = .seconds(seconds)
        }
        let path = searchPath ?? ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return (try? ReminderCommand(program, timeout: limit).validated(searchPath: path)).map { .command($0) }
    }

    /// `~/…` under `$HOME`; an absolute path as it is; a PostgreSQL store's URL (checked where it
    /// is used); anything else is refused.
    public static func storePath(_ text: String, home: String? = nil) -> String? {
        let lowered = text.lowercased()
        if lowered.hasPrefix("postgresql://") || lowered.hasPrefix("postgres://") { return text }
        if text.hasPrefix("~/") {
            let home = home ?? ProcessInfo.processInfo.environment["HOME"] ?? NSHomeDirectory()
            return home + text.dropFirst()
        }
        return text.hasPrefix("/") && !text.contains("\0") ? text : nil
    }
}

/// A key's value, typed.
public enum ConfigValue: Sendable, Hashable {
    case text(String)
    case seconds(Int64)
    case number(Int)
    case flag(Bool)
    /// Quiet hours: a window, or nil for none.
    case window(QuietSettings.Window?)
    /// A hook's command, or nil for none.
    case command(ReminderCommand?)

    /// How the file writes it (and `config show` prints it): `"10m"`, `5`, `true`, `"off"`.
    public var text: String {
        switch self {
        case .text(let text): text
        case .seconds(let seconds): seconds == 0 ? "0s" : Trigger.formatInterval(seconds)
        case .number(let number): String(number)
        case .flag(let value): String(value)
        case .window(let window): window?.description ?? "off"
        case .command(let command): command.map(Self.commandTOML) ?? "[]"
        }
    }

    /// The TOML literal: quoted unless a number or a boolean.
    public var toml: String {
        switch self {
        case .number, .flag, .command: text
        default: "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
        }
    }

    public var seconds: Int64? { if case .seconds(let seconds) = self { seconds } else { nil } }

    /// A hook's command, nil for none (or another kind of value).
    public var command: ReminderCommand? { if case .command(let command) = self { command } else { nil } }

    /// A command as the file writes it: `["a", "b"]`, or `{ shell = "…", timeout = "30s" }`.
    static func commandTOML(_ command: ReminderCommand) -> String {
        func quoted(_ text: String) -> String {
            "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
        }
        let seconds = command.timeout.components.seconds
        let timeout =
            seconds == ReminderCommand.defaultTimeout.components.seconds ? "" : ", timeout = \(quoted(Trigger.formatInterval(seconds)))"
        switch command.program {
        case .argv(let argv):
            let list = "[" + argv.map(quoted).joined(separator: ", ") + "]"
            return timeout.isEmpty ? list : "{ argv = \(list)\(timeout) }"
        case .shell(let line): return "{ shell = \(quoted(line))\(timeout) }"
        }
    }
}

extension ConfigKey {
    /// Where `chime run` sends alerts.
    public static let notifier = ConfigKey(
        "notifier",
        environment: "CHIME_NOTIFIER",
        flag: "chime run --notifier",
        summary: "Where 'chime run' sends alerts",
        rule: .choice(["auto", "desktop", "console", "json", "webhook", "ntfy", "gotify"]),
        builtInDefault: { _ in .text("auto") }
    )

    /// Where `--notifier webhook` posts.
    public static let webhookURL = ConfigKey(
        "webhook_url",
        environment: "CHIME_WEBHOOK_URL",
        flag: "chime run --webhook-url-file (or --webhook-url, which ps shows)",
        summary: "Where --notifier webhook posts alerts (here a token stays out of ps)",
        rule: .webhookURL,
        // Its path too: Slack's and Discord's webhooks carry their token there.
        redact: { Redaction.redacted($0, queryValues: .all, path: true) },
        builtInDefault: { _ in .text("") }
    )

    /// How long a plain reminder's snooze lasts.
    public static let snooze = ConfigKey(
        "reminders.snooze",
        environment: "CHIME_SNOOZE",
        flag: "chime snooze ID DURATION",
        summary: "How long a snooze lasts (an alert's Snooze, 'chime snooze ID')",
        rule: .duration(OptionDuration(option: "reminders.snooze", unit: .minute, bareNumbers: false, range: 60...86_400)),
        builtInDefault: { _ in .seconds(PlainReminders.defaultSnoozeLength.components.seconds) }
    )

    /// The daily quiet window.
    public static let quietHours = ConfigKey(
        "quiet.hours",
        environment: "CHIME_QUIET_HOURS",
        flag: "chime quiet hours (stored; beats the file)",
        summary: "Daily quiet hours (until 'chime quiet hours' stores some)",
        rule: .window,
        builtInDefault: { _ in .window(QuietSettings().hours) }
    )
}

import ChimeCore
import ChimeDoses
import ChimeFocus
import ChimeGateway
import ChimeStore
import Foundation

/// A key of the config file, with its environment variable, its built-in default (the
/// families' own constants), what it accepts and its one comment line: the one table the file,
/// the environment, `chime config show` and the example are made from.
public enum ConfigKey: String, CaseIterable, Sendable, Hashable, Codable {
    case notifier
    case webhookURL = "webhook_url"
    case store
    case snooze = "reminders.snooze"
    case focusLength = "focus.length"
    case doseGrace = "doses.grace"
    case doseMissedAfter = "doses.missed_after"
    case doseRepeatEvery = "doses.repeat_every"
    case doseRepeatCount = "doses.repeat_count"
    case quietHours = "quiet.hours"
    case gateDetermination = "gate.determination"
    case gateGrace = "gate.grace"
    case gateSession = "gate.session"
    case gateFocusOnExit = "gate.focus_on_exit"

    /// The table the key is in (nil: the top level), and its name there.
    public var section: String? {
        let parts = rawValue.split(separator: ".", maxSplits: 1)
        return parts.count == 2 ? String(parts[0]) : nil
    }

    public var name: String { String(rawValue.split(separator: ".").last!) }

    /// The environment variable that beats the file (`CHIME_STORE` is the store's, as it always was).
    public var environmentVariable: String {
        switch self {
        case .notifier: "CHIME_NOTIFIER"
        case .webhookURL: "CHIME_WEBHOOK_URL"
        case .store: "CHIME_STORE"
        case .snooze: "CHIME_SNOOZE"
        case .focusLength: "CHIME_FOCUS_LENGTH"
        case .doseGrace: "CHIME_DOSE_GRACE"
        case .doseMissedAfter: "CHIME_DOSE_MISSED_AFTER"
        case .doseRepeatEvery: "CHIME_DOSE_REPEAT_EVERY"
        case .doseRepeatCount: "CHIME_DOSE_REPEAT_COUNT"
        case .quietHours: "CHIME_QUIET_HOURS"
        case .gateDetermination: "CHIME_GATE_DETERMINATION"
        case .gateGrace: "CHIME_GATE_GRACE"
        case .gateSession: "CHIME_GATE_SESSION"
        case .gateFocusOnExit: "CHIME_GATE_FOCUS_ON_EXIT"
        }
    }

    /// The flag that beats the environment, where a command has one.
    public var flag: String? {
        switch self {
        case .notifier: "chime run --notifier"
        case .webhookURL: "chime run --webhook-url-file (or --webhook-url, which ps shows)"
        case .store: "--store"
        case .snooze: "chime snooze ID DURATION"
        case .focusLength: "chime focus start --minutes"
        case .doseGrace: "chime med add --grace"
        case .doseMissedAfter: "chime med add --missed-after"
        case .doseRepeatEvery, .doseRepeatCount: nil
        case .quietHours: "chime quiet hours (stored; beats the file)"
        case .gateDetermination: "chime gate setup --determination (stored; beats the file)"
        case .gateGrace: "chime gate setup --grace (stored; beats the file)"
        case .gateSession: "chime gate setup --session (stored; beats the file)"
        case .gateFocusOnExit: "chime gate setup --focus-on-exit (stored; beats the file)"
        }
    }

    /// The one comment line above the key in the example: what it is.
    public var summary: String {
        switch self {
        case .notifier: "Where 'chime run' sends alerts"
        case .webhookURL: "Where --notifier webhook posts alerts (here a token stays out of ps)"
        case .store: "The store"
        case .snooze: "How long a snooze lasts (an alert's Snooze, 'chime snooze ID')"
        case .focusLength: "A focus session's length ('chime focus start')"
        case .doseGrace: "A dose is overdue this long after its time ('chime med add')"
        case .doseMissedAfter: "A dose unanswered this long after its time is missed ('chime med add')"
        case .doseRepeatEvery: "An unanswered dose alert comes again this often"
        case .doseRepeatCount: "At most this many times (0: never), until the dose is missed"
        case .quietHours: "Daily quiet hours (until 'chime quiet hours' stores some)"
        case .gateDetermination: "The gate's pause until 'chime gate setup', 1 (15 s) to 10 (45 s)"
        case .gateGrace: "After Proceed, the program opens without a gate this long"
        case .gateSession: "A gated program's typical session (for the hours reclaimed)"
        case .gateFocusOnExit: "The gate's Exit starts a focus session when none runs"
        }
    }

    /// What the key accepts, as the example and error lines say it.
    public var accepted: String {
        switch self {
        case .notifier: "\"auto\", \"desktop\", \"console\" or \"json\""
        case .webhookURL: WebhookURL.expected + ", or \"\" for none"
        case .store: "an absolute path, one starting with ~/, or a postgresql:// URL"
        case .quietHours: "\"HH:MM-HH:MM\" such as \"22:00-07:00\", or \"off\""
        case .gateDetermination: "a whole number from 1 to 10"
        case .doseRepeatCount: "a whole number from 0 to 10"
        case .gateFocusOnExit: "true or false"
        default: "a duration " + durationRange
        }
    }

    /// The rule of a duration key: its range and unit (the same as its flag's).
    var durationRule: OptionDuration? {
        switch self {
        case .snooze: OptionDuration(option: rawValue, unit: .minute, bareNumbers: false, range: 60...86_400)
        case .focusLength: OptionDuration(option: rawValue, unit: .minute, bareNumbers: false, range: 600...7_200)
        case .doseGrace: OptionDuration(option: rawValue, unit: .second, bareNumbers: false, range: 60...86_400)
        case .doseMissedAfter: OptionDuration(option: rawValue, unit: .second, bareNumbers: false, range: 60...604_800)
        case .doseRepeatEvery: OptionDuration(option: rawValue, unit: .minute, bareNumbers: false, range: 60...86_400)
        case .gateGrace: OptionDuration(option: rawValue, unit: .second, bareNumbers: false, range: 0...86_400)
        case .gateSession: OptionDuration(option: rawValue, unit: .second, bareNumbers: false, range: 60...86_400)
        default: nil
        }
    }

    private var durationRange: String {
        guard let rule = durationRule else { return "" }
        let lower = rule.range.lowerBound == 0 ? "0s" : Trigger.formatInterval(rule.range.lowerBound)
        let whole = rule.unit == .minute ? " in whole minutes" : ""
        return "from \"\(lower)\" to \"\(Trigger.formatInterval(rule.range.upperBound))\"\(whole)"
    }

    /// The built-in default: the constant the code uses when nothing says otherwise.
    /// - Parameter environment: for the store's default location (`$XDG_DATA_HOME`, `$HOME`).
    public func builtInDefault(environment: [String: String]) -> ConfigValue {
        switch self {
        case .notifier: return .text("auto")
        case .webhookURL: return .text("")
        case .store:
            var withoutOverride = environment
            withoutOverride["CHIME_STORE"] = nil
            return .text(ReminderStore.defaultPath(environment: withoutOverride))
        case .snooze: return .seconds(PlainReminders.defaultSnoozeLength.components.seconds)
        case .focusLength: return .seconds(Int64(FocusTimer.defaultMinutes) * 60)
        case .doseGrace: return .seconds(Int64(DoseRules.defaultGrace))
        case .doseMissedAfter: return .seconds(Int64(DoseRules.defaultMissedAfter))
        case .doseRepeatEvery: return .seconds(Int64(DoseRules.repeatInterval))
        case .doseRepeatCount: return .number(DoseRules.maxRepeats)
        case .quietHours: return .window(QuietSettings().hours)
        case .gateDetermination: return .number(GateProfile.defaults.determination)
        case .gateGrace: return .seconds(Int64(GateProfile.defaults.grace.length))
        case .gateSession: return .seconds(Int64(GateProfile.defaults.sessionLength))
        case .gateFocusOnExit: return .flag(GateProfile.defaults.focusOnExit)
        }
    }

    /// The default as the example file writes it (the store's as `~/…`, not one person's path).
    var exampleDefault: ConfigValue {
        switch self {
        case .store: .text("~/.local/share/chime/chime.sqlite")
        default: builtInDefault(environment: [:])
        }
    }

    /// The example's note on a default that depends on the environment.
    var exampleNote: String? {
        self == .store ? "default: $XDG_DATA_HOME/chime/chime.sqlite, else this" : nil
    }

    /// A value of this key as a message or `chime config show` may show it: a URL's password and
    /// a webhook's query values redacted (``Redaction``).
    public func shown(_ text: String) -> String {
        switch self {
        case .store: Redaction.redacted(text)
        case .webhookURL: WebhookURL.redacted(text)
        default: text
        }
    }

    /// Reads a value from the environment's text (the same words as the file's values).
    /// - Parameter home: what `~/` stands for in the store's path (nil: this process's `$HOME`).
    func parse(text: String, home: String? = nil) -> ConfigValue? {
        switch self {
        case .notifier: return ["auto", "desktop", "console", "json"].contains(text) ? .text(text) : nil
        case .webhookURL: return text.isEmpty || (try? WebhookURL(text)) != nil ? .text(text) : nil
        case .store: return Self.storePath(text, home: home).map(ConfigValue.text)
        case .quietHours:
            if text == "off" { return .window(nil) }
            return (try? QuietSettings.Window.parse(text)).map { .window($0) }
        case .gateDetermination, .doseRepeatCount:
            guard let number = Int(text), numberRange.contains(number) else { return nil }
            return .number(number)
        case .gateFocusOnExit:
            return text == "true" ? .flag(true) : text == "false" ? .flag(false) : nil
        default:
            guard let rule = durationRule, let seconds = try? rule.seconds(text) else { return nil }
            return .seconds(seconds)
        }
    }

    /// Reads a value from the file: a string for every key but the determination and the
    /// repeat count (integers) and focus-on-exit (a boolean).
    func parse(toml: ConfigTOMLValue, home: String? = nil) -> ConfigValue? {
        switch (self, toml) {
        case (.gateDetermination, .integer(let number)), (.doseRepeatCount, .integer(let number)):
            return numberRange.contains(number) ? .number(number) : nil
        case (.gateFocusOnExit, .boolean(let value)): return .flag(value)
        case (.gateDetermination, _), (.doseRepeatCount, _), (.gateFocusOnExit, _): return nil
        case (_, .string(let text)): return parse(text: text, home: home)
        default: return nil
        }
    }

    /// The whole numbers an integer key accepts.
    var numberRange: ClosedRange<Int> { self == .doseRepeatCount ? 0...10 : 1...10 }

    /// `~/…` under `$HOME`; an absolute path as it is; anything else is refused.
    static func storePath(_ text: String, home: String? = nil) -> String? {
        // A PostgreSQL store's URL, checked where it is used (chime's PostgresURL).
        let lowered = text.lowercased()
        if lowered.hasPrefix("postgresql://") || lowered.hasPrefix("postgres://") { return text }
        if text.hasPrefix("~/") {
            let home = home ?? ProcessInfo.processInfo.environment["HOME"] ?? NSHomeDirectory()
            return home + text.dropFirst()
        }
        return text.hasPrefix("/") && !text.contains("\0") ? text : nil
    }
}

/// A value of the file as TOML typed it (kept apart from TOMLKit's types so the rules above
/// are plain Swift).
enum ConfigTOMLValue: Sendable, Hashable {
    case string(String)
    case integer(Int)
    case boolean(Bool)
    case other(String)

    /// How the value was written, for the error line (a long one cut: a 5 MB value is not echoed).
    var written: String {
        switch self {
        case .string(let text): "\"\(Self.shortened(text))\""
        case .integer(let number): String(number)
        case .boolean(let value): String(value)
        case .other(let text): Self.shortened(text)
        }
    }

    /// `text`, or its first 60 characters and "…" with how many there are in all.
    static func shortened(_ text: String) -> String {
        guard text.count > 80 else { return text }
        return String(text.prefix(60)) + "… (\(text.count) characters)"
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

    /// How the file writes it (and `config show` prints it): `"10m"`, `5`, `true`, `"off"`.
    public var text: String {
        switch self {
        case .text(let text): text
        case .seconds(let seconds): seconds == 0 ? "0s" : Trigger.formatInterval(seconds)
        case .number(let number): String(number)
        case .flag(let value): String(value)
        case .window(let window): window?.description ?? "off"
        }
    }

    /// The TOML literal: quoted unless a number or a boolean.
    var toml: String {
        switch self {
        case .number, .flag: text
        default: "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
        }
    }

    public var seconds: Int64? { if case .seconds(let seconds) = self { seconds } else { nil } }
}

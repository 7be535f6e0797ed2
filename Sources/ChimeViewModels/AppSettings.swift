import ChimeConfig
import ChimeCore
import ChimeDoses
import ChimeFocus
import ChimeGateway
import Foundation

/// The config file's settings the app's pages use, read as the CLI reads them: a reminder's
/// snooze (`reminders.snooze`, as an alert's Snooze and `chime snooze`), the dose policy
/// (`doses.grace`, `doses.missed_after` for a new medication, as `chime med add`;
/// `doses.repeat_every` / `repeat_count`, as `chime dose` and `chime run`), the gate's profile
/// before its setup (`[gate]`, as `chime gate`) and the focus length. A bad file: its message in
/// ``problem`` and the built-in defaults, which the CLI's commands that go on without the file
/// use (`chime dose`'s repeats, the gate's launch).
public struct AppSettings: Sendable, Equatable {
    public var snoozeLength: Duration
    public var doseRepeats: DoseRepeats
    /// A new medication's grace window and when its pending dose counts as missed, in seconds.
    public var doseGrace: Int
    public var doseMissedAfter: Int
    public var gateDefaults: GateProfile
    public var focusMinutes: Int
    /// The config file's error when it is bad (these are then the defaults).
    public var problem: String?

    /// The settings of `config`.
    public init(_ config: Config) {
        snoozeLength = .seconds(config.seconds(.snooze))
        doseRepeats = DoseRepeats.configured { config.setting($0).value }
        doseGrace = Int(config.seconds(.doseGrace))
        doseMissedAfter = Int(config.seconds(.doseMissedAfter))
        gateDefaults = GateBook.configuredDefaults { config.setting($0).value }
        focusMinutes = max(1, Int(config.seconds(.focusLength) / 60))
        problem = nil
    }

    /// The built-in defaults of `keys` (no file, no environment), with the file's `problem`.
    public static func defaults(keys: [ConfigKey], problem: String? = nil) -> AppSettings {
        // Neither a file nor a variable: nothing to refuse.
        let config = try? Config(path: "", contents: nil, environment: [:], keys: keys)
        guard let config else { preconditionFailure("the built-in defaults are valid") }
        var settings = AppSettings(config)
        settings.problem = problem
        return settings
    }

    /// The settings `load` reads (``Config/load(keys:environment:)``), or the defaults and the
    /// file's message when it throws.
    public static func load(keys: [ConfigKey], _ load: () throws(ChimeError) -> Config) -> AppSettings {
        do {
            return AppSettings(try load())
        } catch {
            return defaults(keys: keys, problem: error.message)
        }
    }

    /// The config file's settings and the environment's, for `keys` (as the CLI reads them).
    public static func load(keys: [ConfigKey], environment: [String: String] = ProcessInfo.processInfo.environment) -> AppSettings {
        load(keys: keys) { () throws(ChimeError) in try Config.load(keys: keys, environment: environment) }
    }

    /// The Snooze button's label: `Snooze 10 min`, `Snooze 1 h`, `Snooze 1 h 30 min`.
    public var snoozeLabel: String { "Snooze " + Self.length(snoozeLength) }

    /// `10 min`, `1 h`, `1 h 30 min`, `90 s` (not whole minutes).
    public static func length(_ duration: Duration) -> String {
        let seconds = duration.components.seconds
        guard seconds % 60 == 0 else { return "\(seconds) s" }
        let minutes = seconds / 60
        let hours = minutes / 60
        switch (hours, minutes % 60) {
        case (0, let rest): return "\(rest) min"
        case (let hours, 0): return "\(hours) h"
        case (let hours, let rest): return "\(hours) h \(rest) min"
        }
    }
}

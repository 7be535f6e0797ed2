import ArgumentParser
import ChimeCore
import Synchronization

/// Which option a ``DurationOption`` is, and so its rule (``OptionDuration``).
protocol DurationRule {
    static var rule: OptionDuration { get }
}

/// The value of an option that is a length of time, parsed as `chime in` parses its duration
/// (`--minutes 25m` or `25`, `--grace 30m`, `--last 1w`, `--refill-days 7d` or `7`).
///
/// argument-parser reports a value its `init?(argument:)` refuses as "The value '25x' is invalid
/// for '--minutes <minutes>'", without Chime's reason; so the refusal is kept in
/// ``ArgumentRefusal`` and ``Main/report(_:json:)`` prints Chime's one line in its place.
struct DurationOption<Rule: DurationRule>: ExpressibleByArgument, Sendable, Hashable {
    let seconds: Int64

    init?(argument: String) {
        do {
            seconds = try Rule.rule.seconds(argument)
        } catch {
            ArgumentRefusal.record(error, value: argument)
            return nil
        }
    }

    init(seconds: Int64) { self.seconds = seconds }

    /// Whole minutes (for a rule in minutes), whole days (in days), else seconds.
    var count: Int { Int(seconds / Rule.rule.unit.rawValue) }

    var defaultValueDescription: String { Trigger.formatInterval(seconds) }
}

/// The reason the last value an option's type refused was refused, for ``Main/report(_:json:)``.
enum ArgumentRefusal {
    private static let last = Mutex<(error: ChimeError, value: String)?>(nil)

    static func record(_ error: ChimeError, value: String) { last.withLock { $0 = (error, value) } }

    /// The refusal of `value`, when the parser's message `text` is about it.
    static func take(for text: String) -> ChimeError? {
        last.withLock { last in
            defer { last = nil }
            guard let last, text.contains("'\(last.value)'") else { return nil }
            return last.error
        }
    }
}

// The duration options, each with its rule: the ranges are the libraries' own, said here so
// that the one line names them.
enum FocusMinutes: DurationRule {
    static let rule = OptionDuration(option: "--minutes", unit: .minute, bareNumbers: true, range: 600...7_200)
}

enum SnoozeMinutes: DurationRule {
    static let rule = OptionDuration(option: "--minutes", unit: .minute, bareNumbers: true, range: 60...14_400)
}

enum GraceWindow: DurationRule {
    static let rule = OptionDuration(option: "--grace", unit: .second, bareNumbers: false, range: 60...86_400)
}

enum MissedAfter: DurationRule {
    static let rule = OptionDuration(option: "--missed-after", unit: .second, bareNumbers: false, range: 60...604_800)
}

enum MinInterval: DurationRule {
    static let rule = OptionDuration(option: "--min-interval", unit: .second, bareNumbers: false, range: 60...604_800)
}

enum AfterLast: DurationRule {
    static let rule = OptionDuration(option: "--after-last", unit: .second, bareNumbers: false, range: 60...604_800)
}

enum RefillDays: DurationRule {
    static let rule = OptionDuration(option: "--refill-days", unit: .day, bareNumbers: true, range: 0...(365 * 86_400))
}

enum LastDays: DurationRule {
    static let rule = OptionDuration(option: "--last", unit: .day, bareNumbers: true, range: 86_400...OptionDuration.longest)
}

enum GateGraceLength: DurationRule {
    static let rule = OptionDuration(option: "--grace", unit: .second, bareNumbers: false, range: 0...86_400)
}

enum GateSessionLength: DurationRule {
    static let rule = OptionDuration(option: "--session", unit: .second, bareNumbers: false, range: 60...86_400)
}

/// `chime run --lease` (a PostgreSQL store): how long a claimed occurrence is the runner's.
enum RunnerLeaseLength: DurationRule {
    static let rule = OptionDuration(option: "--lease", unit: .second, bareNumbers: false, range: 2...3_600)
}

/// The rule of a command-line option whose value is a length of time (`--minutes`, `--grace`,
/// `--last`, `--refill-days`): one language on the whole command line.
///
/// Every such option takes the durations of `chime in` (`25m`, `1h30m`, `1w`: lowercase units
/// w, d, h, m, s, largest first). An option named after its unit (`--minutes`, `--refill-days`,
/// `--last` N days) also takes a bare number in that unit (`--minutes 25`, `--refill-days 7`). A
/// value must be a whole number of the option's unit and within its range; a refusal is one line
/// naming the option and the value, and saying what is accepted.
public struct OptionDuration: Sendable, Hashable {
    /// The unit a value is counted in (whole multiples of it only).
    public enum Unit: Int64, Sendable, Hashable {
        case second = 1
        case minute = 60
        case hour = 3_600
        case day = 86_400

        var plural: String {
            switch self {
            case .second: "seconds"
            case .minute: "minutes"
            case .hour: "hours"
            case .day: "days"
            }
        }
    }

    /// The option as typed: `--minutes`.
    public var option: String
    public var unit: Unit
    /// Whether a bare number counts in ``unit`` (`--minutes 25`); else it needs a unit (`30m`).
    public var bareNumbers: Bool
    /// The seconds accepted (a range that holds 0 accepts `0`, `0s`, `0m`).
    public var range: ClosedRange<Int64>

    /// The longest any option takes: 3,660 days (`--last 3660`), as for `chime doses`.
    public static let longest: Int64 = 3_660 * 86_400

    public init(option: String, unit: Unit, bareNumbers: Bool, range: ClosedRange<Int64>) {
        self.option = option
        self.unit = unit
        self.bareNumbers = bareNumbers
        self.range = range
    }

    /// The seconds `text` says.
    /// - Throws: `.usage`, "invalid --minutes '25x': expected a number of minutes (25) or a
    ///   duration such as 25m or 1h, from 10m to 2h".
    public func seconds(_ text: String) throws(ChimeError) -> Int64 {
        let trimmed = text.trimmingWhitespace()
        var seconds: Int64?
        if !trimmed.isEmpty, trimmed.allSatisfy(\.isASCIIDigit) {
            // A bare number: in the option's unit, where it has one; "0" is zero in any unit.
            if let number = Int64(trimmed), number <= Self.longest {
                seconds = bareNumbers ? number * unit.rawValue : (number == 0 ? 0 : nil)
            }
        } else {
            seconds = TimeParsing.durationSeconds(trimmed, max: Self.longest)
        }
        guard let seconds, seconds % unit.rawValue == 0, range.contains(seconds) else {
            throw ChimeError.invalid(option, text, expected: expected)
        }
        return seconds
    }

    /// What the option accepts, for its error message.
    public var expected: String {
        var forms: String
        switch unit {
        case .second, .hour: forms = "a duration such as 30m, 4h or 1h30m"
        case .minute:
            forms = bareNumbers ? "a number of minutes (25) or a duration such as 25m or 1h" : "a duration such as 30m, 4h or 1h30m"
        case .day: forms = bareNumbers ? "a number of days (7) or a duration such as 7d or 2w" : "a duration such as 7d or 2w"
        }
        if unit != .second { forms += ", in whole \(unit.plural)" }
        let lower = range.lowerBound == 0 ? "0" : Trigger.formatInterval(range.lowerBound)
        return forms + ", from \(lower) to \(Trigger.formatInterval(range.upperBound))"
    }
}

/// A set of ISO weekdays. Bit 0 = Monday ... bit 6 = Sunday.
///
/// Encodes (Codable) as its raw value.
public struct WeekdaySet: OptionSet, Sendable, Hashable, Codable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue & 0x7F }

    public static let monday = WeekdaySet(rawValue: 1 << 0)
    public static let tuesday = WeekdaySet(rawValue: 1 << 1)
    public static let wednesday = WeekdaySet(rawValue: 1 << 2)
    public static let thursday = WeekdaySet(rawValue: 1 << 3)
    public static let friday = WeekdaySet(rawValue: 1 << 4)
    public static let saturday = WeekdaySet(rawValue: 1 << 5)
    public static let sunday = WeekdaySet(rawValue: 1 << 6)
    public static let weekdays: WeekdaySet = [.monday, .tuesday, .wednesday, .thursday, .friday]
    public static let weekend: WeekdaySet = [.saturday, .sunday]
    public static let everyDay: WeekdaySet = [.weekdays, .weekend]

    /// The set holding one ISO weekday (1 = Monday ... 7 = Sunday).
    public init?(isoWeekday: Int) {
        guard (1...7).contains(isoWeekday) else { return nil }
        self.init(rawValue: 1 << UInt8(isoWeekday - 1))
    }

    /// 1 = Monday ... 7 = Sunday.
    public func contains(isoWeekday: Int) -> Bool {
        guard (1...7).contains(isoWeekday) else { return false }
        return rawValue & (1 << UInt8(isoWeekday - 1)) != 0
    }

    static let shortNames = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
    static let names: [String: Int] = [
        "mon": 1, "monday": 1, "mondays": 1,
        "tue": 2, "tues": 2, "tuesday": 2, "tuesdays": 2,
        "wed": 3, "wednesday": 3, "wednesdays": 3,
        "thu": 4, "thur": 4, "thurs": 4, "thursday": 4, "thursdays": 4,
        "fri": 5, "friday": 5, "fridays": 5,
        "sat": 6, "saturday": 6, "saturdays": 6,
        "sun": 7, "sunday": 7, "sundays": 7,
    ]
    static let groups: [String: WeekdaySet] = [
        "day": .everyDay, "days": .everyDay, "daily": .everyDay, "everyday": .everyDay,
        "weekday": .weekdays, "weekdays": .weekdays,
        "weekend": .weekend, "weekends": .weekend,
    ]

    static let expected =
        "day, daily, weekday, weekend, a day such as mon or monday, a list such as mon,wed,fri, or a range such as mon-fri"

    /// "day", "daily", "everyday", "weekday(s)", "weekend(s)", "mon", "monday", "mon,wed,fri",
    /// "mon-fri", "sat-sun" (a range may wrap: "fri-mon"). Case-insensitive.
    public static func parse(_ s: String) throws(ChimeError) -> WeekdaySet {
        let lower = s.trimmingWhitespace().lowercased()
        var result: WeekdaySet = []
        for rawItem in lower.split(separator: ",", omittingEmptySubsequences: false) {
            let item = rawItem.trimmingWhitespace()
            if let g = groups[item] {
                result.formUnion(g)
                continue
            }
            if let d = names[item] {
                result.insert(WeekdaySet(isoWeekday: d)!)
                continue
            }
            let ends = item.split(separator: "-", omittingEmptySubsequences: false)
            guard ends.count == 2,
                let a = names[ends[0].trimmingWhitespace()], let b = names[ends[1].trimmingWhitespace()]
            else { throw ChimeError.invalid("days", s, expected: expected) }
            var d = a
            while true {
                result.insert(WeekdaySet(isoWeekday: d)!)
                if d == b { break }
                d = d % 7 + 1
            }
        }
        guard !result.isEmpty else { throw ChimeError.invalid("days", s, expected: expected) }
        return result
    }

    /// What ``spoken(_:)`` accepts.
    public static let spokenExpected = "every day, weekdays, weekends, a range such as mon-fri, or a list such as mon,wed,fri"

    /// Days as people type them wherever Chime takes a set of days (`chime med add --days`,
    /// `chime gate add --days`): ``parse(_:)``'s forms, with a leading "every" allowed ("every
    /// day", "every mon,wed").
    public static func spoken(_ text: String) throws(ChimeError) -> WeekdaySet {
        var words = text.trimmingWhitespace()
        if words.lowercased().hasPrefix("every ") { words = String(words.dropFirst(6)).trimmingWhitespace() }
        do {
            return try parse(words)
        } catch {
            throw ChimeError.invalid("days", text, expected: spokenExpected)
        }
    }

    /// "day", "weekday", "weekend", or short names in ISO order: "mon,wed,fri" ("none" if empty).
    public var description: String {
        switch self {
        case .everyDay: return "day"
        case .weekdays: return "weekday"
        case .weekend: return "weekend"
        case []: return "none"
        default: return (1...7).filter { contains(isoWeekday: $0) }.map { Self.shortNames[$0 - 1] }.joined(separator: ",")
        }
    }
}

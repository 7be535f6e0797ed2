/// A wall-clock time of day, to the minute.
///
/// Encodes (Codable) as the string "HH:MM".
public struct LocalTime: Sendable, Hashable, Codable, Comparable, CustomStringConvertible {
    public var hour: Int
    public var minute: Int

    public init?(hour: Int, minute: Int) {
        guard (0...23).contains(hour), (0...59).contains(minute) else { return nil }
        self.hour = hour
        self.minute = minute
    }

    public static let midnight = LocalTime(hour: 0, minute: 0)!

    public var secondsIntoDay: Int { hour * 3_600 + minute * 60 }

    public static func < (a: LocalTime, b: LocalTime) -> Bool { a.secondsIntoDay < b.secondsIntoDay }

    static let expected = "HH:MM from 00:00 to 23:59"

    /// "08:00", "8:00", "23:59". Anything else → `invalid time '25:00': expected HH:MM from 00:00 to 23:59`.
    public static func parse(_ s: String) throws(ChimeError) -> LocalTime {
        let parts = s.trimmingWhitespace().split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2,
            (1...2).contains(parts[0].count), parts[1].count == 2,
            parts[0].allSatisfy(\.isASCIIDigit), parts[1].allSatisfy(\.isASCIIDigit),
            let h = Int(parts[0]), let m = Int(parts[1]),
            let t = LocalTime(hour: h, minute: m)
        else { throw ChimeError.invalid("time", s, expected: expected) }
        return t
    }

    /// What ``spoken(_:)`` accepts.
    public static let spokenExpected = "HH:MM from 00:00 to 23:59, 9am, 9:30pm, noon or midnight"

    /// A time of day as people type it, the one grammar wherever Chime takes one (`chime at`,
    /// `med add --at`, `every`, quiet hours): "08:00", "8:00", "9am", "9:30pm", "12am" (00:00),
    /// "12pm" and "noon" (12:00), "midnight" (00:00); any case. (``parse(_:)`` reads only
    /// HH:MM: the stored form.) A bare hour or "5 pm" is refused with the form it may mean.
    public static func spoken(_ s: String) throws(ChimeError) -> LocalTime {
        let text = s.trimmingWhitespace()
        if let time = try? parse(text) { return time }
        switch text.lowercased() {
        case "noon", "midday": return LocalTime(hour: 12, minute: 0)!
        case "midnight": return .midnight
        default: break
        }
        if let time = TimeParsing.twelveHourClock(text) { return time }
        if let hint = hint(text) { throw ChimeError(.usage, "invalid time '\(s)': did you mean \(hint)? (expected \(spokenExpected))") }
        throw ChimeError.invalid("time", s, expected: spokenExpected)
    }

    /// The forms a refused time may mean: "8" → '8am', '8pm' or '08:00'; "17" → '17:00';
    /// "5 pm" → '5pm'; "8.30" → '08:30'.
    static func hint(_ text: String) -> String? {
        let words = text.split(whereSeparator: \.isWhitespace).map { $0.lowercased() }
        if words.count == 2, ["am", "pm"].contains(words[1]), TimeParsing.twelveHourClock(words[0] + words[1]) != nil {
            return "'\(words[0] + words[1])'"
        }
        guard words.count == 1 else { return nil }
        let word = words[0]
        if (1...2).contains(word.count), word.allSatisfy(\.isASCIIDigit), let hour = Int(word), (0...23).contains(hour) {
            let clock = LocalTime(hour: hour, minute: 0)!.description
            return (1...12).contains(hour) ? "'\(hour)am', '\(hour)pm' or '\(clock)'" : "'\(clock)'"
        }
        if word.contains("."), let time = try? parse(String(word.map { $0 == "." ? ":" : $0 })) { return "'\(time)'" }
        return nil
    }

    /// "08:00,20:00" (spaces allowed around commas) → sorted, without duplicates.
    public static func parseList(_ s: String) throws(ChimeError) -> [LocalTime] {
        try list(s) { item throws(ChimeError) in try parse(item) }
    }

    /// "8am,8pm", "08:00, noon": a list of ``spoken(_:)`` times → sorted, without duplicates.
    public static func spokenList(_ s: String) throws(ChimeError) -> [LocalTime] {
        try list(s) { item throws(ChimeError) in try spoken(item) }
    }

    static func list(_ s: String, _ read: (String) throws(ChimeError) -> LocalTime) throws(ChimeError) -> [LocalTime] {
        let items = s.split(separator: ",", omittingEmptySubsequences: false).map { String($0).trimmingWhitespace() }
        guard !items.isEmpty, !items.allSatisfy(\.isEmpty) else {
            throw ChimeError.invalid("time", s, expected: "HH:MM or a list such as 08:00,20:00")
        }
        var out: [LocalTime] = []
        for item in items {
            guard !item.isEmpty else {
                throw ChimeError.invalid("time list", s, expected: "times HH:MM separated by commas, such as 08:00,20:00")
            }
            out.append(try read(item))
        }
        return Array(Set(out)).sorted()
    }

    /// "08:00"
    public var description: String {
        (hour < 10 ? "0" : "") + String(hour) + ":" + (minute < 10 ? "0" : "") + String(minute)
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        let s = try c.decode(String.self)
        do {
            self = try LocalTime.parse(s)
        } catch {
            throw DecodingError.dataCorruptedError(in: c, debugDescription: error.message)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(description)
    }
}

extension Character {
    var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}

extension StringProtocol {
    package func trimmingWhitespace() -> String {
        // Most text has nothing to trim: a printable ASCII byte at each end is not white space
        // (nor part of a white-space character), and Character.isWhitespace's look-up of Unicode
        // properties was 2% of `chime import`'s time (`perf`).
        let text = String(self)
        if let first = text.utf8.first, let last = text.utf8.last, (0x21..<0x7F).contains(first), (0x21..<0x7F).contains(last) {
            return text
        }
        var s = Substring(text)
        while let f = s.first, f.isWhitespace { s.removeFirst() }
        while let l = s.last, l.isWhitespace { s.removeLast() }
        return String(s)
    }
}

import Foundation

/// How Chime writes instants: ISO 8601 UTC for machines, local time with its offset for people.
public enum TimeText {
    /// `2026-11-22T13:30:00.000Z`: what every `--json` output uses, rounded to the nearest
    /// millisecond. (By hand rather than ISO8601FormatStyle, which truncates: 0.599 s, stored
    /// as 0.598999…, would print as .598 and not read back as the same instant.)
    public static func iso(_ date: Date) -> String {
        let raw = (date.timeIntervalSince1970 * 1000).rounded()
        let millis = Int(raw.isFinite ? min(max(raw, -1e16), 1e16) : 0)
        let seconds = ZoneMath.floorDiv(millis, 1000)
        let days = ZoneMath.floorDiv(seconds, 86_400)
        let (year, month, day) = ZoneMath.civilFromDays(days)
        let inDay = seconds - days * 86_400
        let fraction = millis - seconds * 1000
        if (0...9999).contains(year) {
            // Digit by digit: String(format:) made listing 100,000 trees as JSON take twice as long.
            return String(unsafeUninitializedCapacity: 24) { buffer in
                func put(_ value: Int, at offset: Int, digits: Int) {
                    var value = value
                    for index in stride(from: offset + digits - 1, through: offset, by: -1) {
                        buffer[index] = UInt8(ascii: "0") + UInt8(value % 10)
                        value /= 10
                    }
                }
                put(year, at: 0, digits: 4)
                put(month, at: 5, digits: 2)
                put(day, at: 8, digits: 2)
                put(inDay / 3_600, at: 11, digits: 2)
                put(inDay / 60 % 60, at: 14, digits: 2)
                put(inDay % 60, at: 17, digits: 2)
                put(fraction, at: 20, digits: 3)
                let (dash, colon) = (UInt8(ascii: "-"), UInt8(ascii: ":"))
                (buffer[4], buffer[7], buffer[10]) = (dash, dash, UInt8(ascii: "T"))
                (buffer[13], buffer[16], buffer[19], buffer[23]) = (colon, colon, UInt8(ascii: "."), UInt8(ascii: "Z"))
                return 24
            }
        }
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
            year,
            month,
            day,
            inDay / 3_600,
            inDay / 60 % 60,
            inDay % 60,
            fraction
        )
    }

    private static let weekdayNames = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]

    /// `Sun 2026-11-22 14:30 +01:00` in `zone`; seconds shown when `seconds` is true.
    public static func local(_ date: Date, in zone: TimeZone, seconds: Bool = false) -> String {
        let (local, offset) = ZoneMath.civil(date, in: zone)
        let weekday = weekdayNames[ZoneMath.isoWeekday(year: local.year, month: local.month, day: local.day) - 1]
        let year = (0...9999).contains(local.year) ? padded(local.year, 4) : String(format: "%04d", local.year)
        var text = weekday + " " + year + "-" + padded(local.month, 2) + "-" + padded(local.day, 2) + " "
        text += padded(local.hour, 2) + ":" + padded(local.minute, 2)
        if seconds { text += ":" + padded(local.second, 2) }
        return text + " " + ZoneMath.formatOffset(offset)
    }

    /// `08:00` in `zone`.
    public static func clock(_ date: Date, in zone: TimeZone) -> String {
        let local = ZoneMath.civil(date, in: zone).local
        return padded(local.hour, 2) + ":" + padded(local.minute, 2)
    }

    /// `value` (0 or more) in decimal, with zeros in front up to `digits`. By hand rather than
    /// `String(format: "%02d")`: Foundation's formatting (through NSString) cost about 280 K
    /// instructions a line, a fifth of a whole `chime list` of 10 reminders (valgrind
    /// --tool=callgrind: docs/performance.md).
    static func padded(_ value: Int, _ digits: Int) -> String {
        let text = String(value)
        return text.utf8.count >= digits ? text : String(repeating: "0", count: digits - text.utf8.count) + text
    }

    /// `in 25m`, `in 2h 5m`, `now`, `5m ago`: how far `date` is from `now`.
    public static func relative(_ date: Date, from now: Date) -> String {
        let seconds = date.timeIntervalSince(now)
        let span = formatDuration(.seconds(Int64(abs(seconds).rounded())))
        if abs(seconds) < 0.5 { return "now" }
        return seconds > 0 ? "in \(span)" : "\(span) ago"
    }
}

extension LocalResolution {
    /// What a person is told about a time of day read on a DST day (`chime next`, `chime med
    /// next`); nil for a time that exists once.
    public var note: String? {
        switch self {
        case .exact: nil
        case .shiftedForward(let seconds, let requested):
            "\(requested) does not exist that day (clocks go forward): shifted by \(formatDuration(.seconds(seconds)))"
        case .firstOfRepeated: "this time occurs twice that day (clocks go back): fires at the first"
        }
    }
}

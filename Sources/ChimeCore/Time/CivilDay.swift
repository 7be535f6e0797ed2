import Foundation

/// Local calendar days as day numbers (days since 1970-01-01): a medication's start and end,
/// a history's range, a trend's days. Shared by the families.
public enum CivilDay {
    /// `2026-11-22` → its day number. - Throws: `.usage` naming the value.
    public static func parse(_ text: String, field: String) throws(ChimeError) -> Int {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
            let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]),
            (1...12).contains(month), (1...ZoneMath.daysInMonth(year: year, month: month)).contains(day)
        else {
            throw ChimeError.invalid(field, text, expected: "a date as YYYY-MM-DD, such as 2026-11-22")
        }
        return ZoneMath.daysFromCivil(year: year, month: month, day: day)
    }

    /// `2026-11-22`.
    public static func format(_ day: Int) -> String {
        let civil = ZoneMath.civilFromDays(day)
        return "\(zeroPadded(civil.year, 4))-\(zeroPadded(civil.month, 2))-\(zeroPadded(civil.day, 2))"
    }

    /// The local day of `instant` in `zone`.
    public static func of(_ instant: Date, in zone: TimeZone) -> Int {
        ZoneMath.civil(instant, in: zone).local.dayNumber
    }
}

/// `value` in decimal with leading zeros to `width` digits (dates, alert ids).
public func zeroPadded(_ value: Int, _ width: Int) -> String {
    let text = String(value)
    return String(repeating: "0", count: max(0, width - text.count)) + text
}

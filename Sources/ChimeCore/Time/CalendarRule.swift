import Foundation

/// A day of every month (`month` nil), or a day of one month every year, at times of day.
///
/// As RFC 5545 has it, a month without that day is skipped (`every month on 31` fires in the
/// months that have a 31st; `every year on 02-29` only in leap years); it is not moved to the
/// month's last day. A local time in a DST gap or repeated is resolved as the weekly rules'.
public struct CalendarRule: Sendable, Hashable, Codable {
    /// 1 (January) ... 12, or nil for every month.
    public var month: Int?
    /// 1 ... 31.
    public var day: Int
    /// Non-empty, sorted.
    public var times: [LocalTime]
    public var zone: ZoneRule

    public init(month: Int?, day: Int, times: [LocalTime], zone: ZoneRule) {
        self.month = month
        self.day = day
        self.times = times.sorted()
        self.zone = zone
    }

    /// Whether some year has this day: a rule `every year on 02-30` never fires.
    public var isPossible: Bool {
        guard (1...31).contains(day), !times.isEmpty else { return false }
        guard let month else { return true }
        return (1...12).contains(month) && day <= ZoneMath.daysInMonth(year: 2000, month: month)
    }

    /// The first occurrence strictly after `instant`, read in `zone`.
    func next(after instant: Date, in zone: TimeZone) -> Occurrence? {
        guard isPossible else { return nil }
        let now = ZoneMath.civil(instant, in: zone).local
        // Months in order from the one before `instant`'s (a gap can push a time forward over
        // midnight): 14 months cover two skipped ones in a row (31st), 9 years a skipped leap
        // day across a century (2096-02-29, then 2104).
        let months: [(year: Int, month: Int)]
        if let month {
            months = ((now.year - 1)...(now.year + 9)).map { ($0, month) }
        } else {
            months = (-1...14).map { offset in
                let index = now.year * 12 + (now.month - 1) + offset
                return (ZoneMath.floorDiv(index, 12), ZoneMath.floorMod(index, 12) + 1)
            }
        }
        for (year, month) in months where day <= ZoneMath.daysInMonth(year: year, month: month) {
            var best: Occurrence?
            for time in times {
                let local = CivilDateTime(year: year, month: month, day: day, hour: time.hour, minute: time.minute)
                let r = ZoneMath.resolve(local, in: zone)
                guard r.instant > instant else { continue }
                if let b = best, b.instant < r.instant || (b.instant == r.instant && b.resolution == .exact) { continue }
                best = Occurrence(instant: r.instant, resolution: r.resolution)
            }
            if let best { return best }
        }
        return nil
    }

    /// "every month on 1 09:00", "every year on 12-24 18:00 (Europe/Berlin)".
    public var summary: String {
        var s = "every "
        if let month {
            s += "year on \(zeroPadded(month, 2))-\(zeroPadded(day, 2))"
        } else {
            s += "month on \(day)"
        }
        s += " " + times.map(\.description).joined(separator: ",")
        if case .fixed(let id) = zone { s += " (\(id))" }
        return s
    }
}

/// When a recurring rule stops (RFC 5545 `UNTIL` and `COUNT`).
public enum RuleEnd: Sendable, Hashable, Codable {
    /// Through this local day (days since 1970-01-01, in the rule's zone): its occurrences on
    /// that day still fire.
    case until(day: Int)
    /// The first `count` occurrences strictly after `start` (when the rule was scheduled).
    case count(Int, start: Date)

    /// The most occurrences a counted rule may have.
    public static let maxCount = 1_000

    /// "until 2027-01-31", "count 10": as ``TimeParsing/recurrence(_:now:zone:count:)`` reads them.
    public var summary: String {
        switch self {
        case .until(let day): "until \(CivilDay.format(day))"
        case .count(let n, _): "count \(n)"
        }
    }
}

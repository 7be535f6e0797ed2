import Foundation

/// A wall-clock date and time with no zone attached (proleptic Gregorian calendar).
public struct CivilDateTime: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var year: Int
    public var month: Int
    public var day: Int
    public var hour: Int
    public var minute: Int
    public var second: Int

    public init(year: Int, month: Int, day: Int, hour: Int = 0, minute: Int = 0, second: Int = 0) {
        self.year = year
        self.month = month
        self.day = day
        self.hour = hour
        self.minute = minute
        self.second = second
    }

    /// The civil date of `dayNumber` (days since 1970-01-01) at `time`.
    public init(dayNumber: Int, time: LocalTime) {
        let d = ZoneMath.civilFromDays(dayNumber)
        self.init(year: d.year, month: d.month, day: d.day, hour: time.hour, minute: time.minute)
    }

    /// Days since 1970-01-01 of this date.
    public var dayNumber: Int { ZoneMath.daysFromCivil(year: year, month: month, day: day) }

    /// Seconds since 1970-01-01T00:00 as if this wall-clock time were UTC.
    public var naiveSeconds: Int { dayNumber * 86_400 + hour * 3_600 + minute * 60 + second }

    public static func < (a: CivilDateTime, b: CivilDateTime) -> Bool {
        (a.year, a.month, a.day, a.hour, a.minute, a.second) < (b.year, b.month, b.day, b.hour, b.minute, b.second)
    }

    /// "2026-03-08T02:30:00"
    public var description: String {
        func p(_ v: Int, _ w: Int) -> String {
            let s = String(abs(v))
            return (v < 0 ? "-" : "") + String(repeating: "0", count: max(0, w - s.count)) + s
        }
        return "\(p(year, 4))-\(p(month, 2))-\(p(day, 2))T\(p(hour, 2)):\(p(minute, 2)):\(p(second, 2))"
    }
}

/// How a requested local time was mapped to an instant.
public enum LocalResolution: Sendable, Hashable {
    /// The local time exists exactly once.
    case exact
    /// The local time fell in a gap (spring forward, or a skipped day); it was read with the offset
    /// in effect before the gap, so the wall clock shows `requested` + `seconds`.
    case shiftedForward(seconds: Int, requested: LocalTime)
    /// The local time occurs twice (fall back); the first occurrence was taken.
    case firstOfRepeated
}

/// Calendar and zone arithmetic done by hand (Hinnant's civil algorithms plus
/// `TimeZone.secondsFromGMT(for:)`), so DST gaps and overlaps resolve the same on every platform.
public enum ZoneMath {
    static func floorDiv(_ a: Int, _ b: Int) -> Int {
        let q = a / b
        return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q
    }

    static func floorMod(_ a: Int, _ b: Int) -> Int { a - floorDiv(a, b) * b }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
    public static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = floorDiv(y, 400)
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// The proleptic Gregorian date of a day number (Howard Hinnant's `civil_from_days`).
    public static func civilFromDays(_ days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = floorDiv(z, 146_097)
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        let y = yoe + era * 400
        return (m <= 2 ? y + 1 : y, m, d)
    }

    /// ISO weekday of a day number: 1 = Monday ... 7 = Sunday.
    public static func isoWeekday(dayNumber: Int) -> Int {
        floorMod(dayNumber + 3, 7) + 1  // 1970-01-01 was a Thursday
    }

    /// ISO weekday: 1 = Monday ... 7 = Sunday.
    public static func isoWeekday(year: Int, month: Int, day: Int) -> Int {
        isoWeekday(dayNumber: daysFromCivil(year: year, month: month, day: day))
    }

    public static func isLeapYear(_ y: Int) -> Bool { (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 }

    public static func daysInMonth(year: Int, month: Int) -> Int {
        switch month {
        case 2: isLeapYear(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// The zone's UTC offset at `seconds` since 1970.
    static func offset(_ zone: TimeZone, at seconds: Int) -> Int {
        zone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(seconds)))
    }

    /// Maps a local wall-clock time to an instant, as RFC 5545 does: a time in a gap is read with
    /// the offset in effect before the gap (so it moves forward by the gap's length); a repeated time
    /// resolves to its first occurrence.
    public static func resolve(_ local: CivilDateTime, in zone: TimeZone) -> (instant: Date, resolution: LocalResolution) {
        let l = local.naiveSeconds
        let candidates = Set([offset(zone, at: l - 86_400), offset(zone, at: l), offset(zone, at: l + 86_400)])
        let valid = candidates.filter { offset(zone, at: l - $0) == $0 }
        if let o = valid.max() {  // largest offset = earliest instant
            let instant = Date(timeIntervalSince1970: TimeInterval(l - o))
            return (instant, valid.count > 1 ? .firstOfRepeated : .exact)
        }
        // Gap: use the offset in effect just before it.
        let oMax = candidates.max() ?? 0
        let before = offset(zone, at: l - oMax)
        let t = l - before
        let shift = offset(zone, at: t) - before
        let requested = LocalTime(hour: floorMod(local.hour, 24), minute: floorMod(local.minute, 60)) ?? .midnight
        return (Date(timeIntervalSince1970: TimeInterval(t)), .shiftedForward(seconds: shift, requested: requested))
    }

    /// The wall-clock time of `instant` in `zone` (fractional seconds truncated toward the past),
    /// and the UTC offset in effect.
    public static func civil(_ instant: Date, in zone: TimeZone) -> (local: CivilDateTime, offsetSeconds: Int) {
        let raw = instant.timeIntervalSince1970.rounded(.down)
        let t = Int(raw.isFinite ? min(max(raw, -1e13), 1e13) : 0)
        let off = offset(zone, at: t)
        let local = t + off
        let days = floorDiv(local, 86_400)
        let secs = local - days * 86_400
        let d = civilFromDays(days)
        return (
            CivilDateTime(
                year: d.year,
                month: d.month,
                day: d.day,
                hour: secs / 3_600,
                minute: (secs % 3_600) / 60,
                second: secs % 60
            ), off
        )
    }

    /// "+01:00", "-04:00", "+10:30", "+14:00" (seconds, if any, are dropped).
    public static func formatOffset(_ seconds: Int) -> String {
        let sign = seconds < 0 ? "-" : "+"
        let a = abs(seconds)
        let h = a / 3_600
        let m = (a % 3_600) / 60
        return sign + (h < 10 ? "0" : "") + String(h) + ":" + (m < 10 ? "0" : "") + String(m)
    }
}

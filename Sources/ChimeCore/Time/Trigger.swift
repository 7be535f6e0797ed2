import Foundation
import Synchronization

/// One firing of a trigger.
public struct Occurrence: Sendable, Hashable {
    public var instant: Date
    public var resolution: LocalResolution

    public init(instant: Date, resolution: LocalResolution) {
        self.instant = instant
        self.resolution = resolution
    }
}

/// When a reminder fires.
public enum Trigger: Sendable, Hashable, Codable {
    /// Once, at an absolute instant.
    case once(Date)
    /// On each day in `days`, at each of `times` (non-empty, sorted), read in `zone`.
    case weekly(times: [LocalTime], days: WeekdaySet, zone: ZoneRule)
    /// At `anchor + k * seconds` for k >= 1.
    case interval(seconds: Int64, anchor: Date)
    /// On one day of every month, or of one month every year, at each of `times`, read in
    /// `zone` (RFC 5545 `FREQ=MONTHLY;BYMONTHDAY` / `FREQ=YEARLY;BYMONTH;BYMONTHDAY`).
    case calendar(CalendarRule)
    /// A recurring trigger that stops: after a date (`UNTIL`) or a number of occurrences (`COUNT`).
    indirect case bounded(Trigger, RuleEnd)

    public var isRecurring: Bool {
        if case .once = self { return false }
        return true
    }

    /// The zone rule local times are read in: nil for a one-shot or an interval.
    public var zoneRule: ZoneRule? {
        switch self {
        case .once, .interval: nil
        case .weekly(_, _, let zone): zone
        case .calendar(let rule): rule.zone
        case .bounded(let base, _): base.zoneRule
        }
    }

    /// The first occurrence strictly after `instant`, or nil (a `.once` at or before `instant`,
    /// a weekly rule with no days or times, or a non-positive interval).
    public func nextOccurrence(after instant: Date, systemZone: TimeZone) -> Date? {
        next(after: instant, systemZone: systemZone)?.instant
    }

    /// Up to `count` occurrences strictly after `instant`, in order, each with how its local time
    /// was resolved.
    public func occurrences(after instant: Date, count: Int, systemZone: TimeZone) -> [Occurrence] {
        var out: [Occurrence] = []
        var cursor = instant
        while out.count < count, let o = next(after: cursor, systemZone: systemZone) {
            out.append(o)
            cursor = o.instant
        }
        return out
    }

    /// Up to `count` occurrences from `instant` on (`instant` itself included when it is one):
    /// a stored next due time and those after it, for `chime next` and `chime show`.
    ///
    /// The search starts at the largest instant before `instant` that a `Date` can hold, not
    /// 1 µs before it: past the year 2500 a `Date`'s step is larger than 1 µs, and the earlier
    /// instant was the same one, so the occurrence itself was skipped.
    public func occurrences(from instant: Date, count: Int, systemZone: TimeZone) -> [Occurrence] {
        let before = Date(timeIntervalSinceReferenceDate: instant.timeIntervalSinceReferenceDate.nextDown)
        return occurrences(after: before, count: count, systemZone: systemZone)
    }

    func next(after instant: Date, systemZone: TimeZone) -> Occurrence? {
        switch self {
        case .once(let date):
            return date > instant ? Occurrence(instant: date, resolution: .exact) : nil
        case .interval(let seconds, let anchor):
            return Self.nextInterval(seconds: seconds, anchor: anchor, after: instant).map {
                Occurrence(instant: $0, resolution: .exact)
            }
        case .weekly(let times, let days, let zoneRule):
            guard !times.isEmpty, !days.isEmpty else { return nil }
            let zone = zoneRule.resolve(system: systemZone)
            let sorted = times.sorted()
            let today = ZoneMath.civil(instant, in: zone).local.dayNumber
            var best: Occurrence?
            var foundDay: Int?
            for day in (today - 1)...(today + 15) {
                // Resolution is monotone in local time; one more day past the first hit covers
                // a gap that pushes a time onto the next day (Pacific/Apia 2011-12-30).
                if let f = foundDay, day > f + 1 { break }
                guard days.contains(isoWeekday: ZoneMath.isoWeekday(dayNumber: day)) else { continue }
                for time in sorted {
                    let r = ZoneMath.resolve(CivilDateTime(dayNumber: day, time: time), in: zone)
                    guard r.instant > instant else { continue }
                    if foundDay == nil { foundDay = day }
                    if let b = best {
                        // On a tie prefer the time that was asked for exactly.
                        if r.instant < b.instant || (r.instant == b.instant && b.resolution != .exact && r.resolution == .exact) {
                            best = Occurrence(instant: r.instant, resolution: r.resolution)
                        }
                    } else {
                        best = Occurrence(instant: r.instant, resolution: r.resolution)
                    }
                }
            }
            return best
        case .calendar(let rule):
            return rule.next(after: instant, in: rule.zone.resolve(system: systemZone))
        case .bounded(let base, let end):
            guard let o = base.next(after: instant, systemZone: systemZone) else { return nil }
            switch end {
            case .until(let day):
                let zone = base.zoneRule?.resolve(system: systemZone) ?? systemZone
                return CivilDay.of(o.instant, in: zone) <= day ? o : nil
            case .count(let count, let start):
                // COUNT counts from the rule's start: the occurrence must be among the first `count`.
                guard let last = CountedRule.last(of: base, start: start, count: count, systemZone: systemZone) else { return nil }
                return o.instant <= last ? o : nil
            }
        }
    }

    static func nextInterval(seconds: Int64, anchor: Date, after instant: Date) -> Date? {
        guard seconds > 0 else { return nil }
        let s = Double(seconds)
        let a = anchor.timeIntervalSince1970
        let t = instant.timeIntervalSince1970
        guard a.isFinite, t.isFinite else { return nil }
        if let next = nextIntervalInMicros(seconds: seconds, anchor: anchor, after: instant) { return next }
        var k = max(1, ((t - a) / s).rounded(.down) + 1)
        var candidate = Date(timeIntervalSince1970: a + k * s)
        // Guard against floating-point rounding: the result must be strictly after `instant`.
        for _ in 0..<4 where candidate <= instant {
            k += 1
            candidate = Date(timeIntervalSince1970: a + k * s)
        }
        return candidate > instant ? candidate : nil
    }

    /// Interval occurrences counted in whole microseconds from the anchor's microsecond, as the
    /// store keeps instants: `anchor + k * seconds` in floating point can land a fraction of a
    /// microsecond after an occurrence read back from the store, which then came back as its own
    /// next occurrence (counted twice as missed, or due again a microsecond later). Nil when the
    /// numbers do not fit (instants some 95,000 years from 1970, periods of as many millennia).
    static func nextIntervalInMicros(seconds: Int64, anchor: Date, after instant: Date) -> Date? {
        let limit = 3e12  // seconds either side of 1970 whose microseconds fit an Int64 with room to spare
        guard abs(anchor.timeIntervalSince1970) < limit, abs(instant.timeIntervalSince1970) < limit else { return nil }
        let (period, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000)
        guard !overflow, period > 0 else { return nil }
        let a = anchor.micros
        let t = instant.micros
        func occurrence(_ k: Int64) -> Date? {
            let (offset, o1) = k.multipliedReportingOverflow(by: period)
            let (micros, o2) = a.addingReportingOverflow(offset)
            return o1 || o2 ? nil : Date(micros: micros)
        }
        // The first k >= 1 with a + k * period > t; one earlier when `instant` lies a fraction of a
        // microsecond before that microsecond, one later when Date's precision makes it equal.
        var k = t >= a ? (t - a) / period + 1 : 1
        if k > 1, let earlier = occurrence(k - 1), earlier > instant { k -= 1 }
        for _ in 0..<4 {
            guard let candidate = occurrence(k) else { return nil }
            if candidate > instant { return candidate }
            k += 1
        }
        return nil
    }

    /// "once", "every weekday 08:00", "every mon,wed,fri 08:00,20:00 (Europe/Berlin)",
    /// "every 2h", "every 90m", "every 45s", "every 1d", "every 2w".
    public var summary: String {
        switch self {
        case .once:
            return "once"
        case .weekly(let times, let days, let zone):
            var s = "every \(days) " + times.sorted().map(\.description).joined(separator: ",")
            if case .fixed(let id) = zone { s += " (\(id))" }
            return s
        case .interval(let seconds, _):
            return "every " + Self.formatInterval(seconds)
        case .calendar(let rule):
            return rule.summary
        case .bounded(let base, let end):
            // The end before the zone, so that the summary reads back ('chime import' of a listing).
            let rule = base.summary
            if case .fixed(let id) = base.zoneRule, rule.hasSuffix(" (\(id))") {
                return rule.dropLast(id.count + 3) + " " + end.summary + " (\(id))"
            }
            return rule + " " + end.summary
        }
    }

    /// The largest single unit that divides `seconds` evenly: "2w", "1d", "2h", "90m", "45s".
    public static func formatInterval(_ seconds: Int64) -> String {
        for (unit, size) in [("w", Int64(604_800)), ("d", 86_400), ("h", 3_600), ("m", 60)]
        where seconds != 0 && seconds % size == 0 {
            return "\(seconds / size)\(unit)"
        }
        return "\(seconds)s"
    }
}

/// The last occurrence of counted rules, remembered: walking up to 1,000 occurrences for each
/// next one made previewing or catching up a whole counted rule take seconds (a million
/// steps). A rule's last occurrence depends only on the rule, its start, its count and the
/// zone it is read in.
enum CountedRule {
    struct Key: Hashable {
        var base: Trigger
        var start: Date
        var count: Int
        var zone: TimeZone
    }

    /// At most this many remembered (a store holds few counted rules; the map is emptied when full).
    static let capacity = 1_024
    static let remembered = Mutex<[Key: Date]>([:])

    static func last(of base: Trigger, start: Date, count: Int, systemZone: TimeZone) -> Date? {
        guard count > 0 else { return nil }
        let key = Key(base: base, start: start, count: count, zone: systemZone)
        if let known = remembered.withLock({ $0[key] }) { return known }
        guard let last = base.occurrences(after: start, count: count, systemZone: systemZone).last?.instant else { return nil }
        remembered.withLock { map in
            if map.count >= capacity { map.removeAll() }
            map[key] = last
        }
        return last
    }
}

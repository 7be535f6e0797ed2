import Foundation

/// Parsers for the CLI (kept in Core so they are tested without the argument parser).
public enum TimeParsing {
    static let durationExpected =
        "a positive duration such as 90s, 25m, 1h30m or 2d: lowercase units w, d, h, m, s, each at most once, largest first"
    static let maxDuration: Int64 = 366 * 86_400

    /// "25m", "1h30m", "90s", "2d", "1h 30m", "1w2d": positive, at most 366 days.
    ///
    /// Units are lowercase (`5M` is not five minutes or five months), each at most once and in
    /// descending order w, d, h, m, s (`1h1h` and `1m1h` are typing mistakes, not 2 hours).
    public static func duration(_ s: String) throws(ChimeError) -> Int64 {
        // Made only when thrown: building a message (and escaping it) costs more than parsing.
        guard let seconds = durationSeconds(s, max: maxDuration), seconds > 0 else {
            if let longer = durationSeconds(s, max: 1_000_000_000_000), longer > maxDuration {
                throw ChimeError.invalid("duration", s, expected: "at most 366 days (52w2d or 366d)")
            }
            throw ChimeError.invalid("duration", s, expected: durationExpected)
        }
        return seconds
    }

    /// The seconds `s` says by the rules of ``duration(_:)`` (zero included: "0s"), or nil when
    /// it does not parse or says more than `max` seconds. Units may also be spelled out, in
    /// one word with their number: "10min", "10mins", "10minutes", "2hr", "2hrs", "1hour",
    /// "30sec", "2days", "1week", "1hour30min".
    static func durationSeconds(_ s: String, max: Int64) -> Int64? {
        if let seconds = unitSeconds(s, max: max) { return seconds }
        guard let short = shortUnits(s) else { return nil }
        return unitSeconds(short, max: max)
    }

    /// The unit letter each spelled-out unit stands for (lowercase, as the letters).
    static let unitWords: [String: Character] = [
        "sec": "s", "secs": "s", "second": "s", "seconds": "s",
        "min": "m", "mins": "m", "minute": "m", "minutes": "m",
        "hr": "h", "hrs": "h", "hour": "h", "hours": "h",
        "day": "d", "days": "d",
        "wk": "w", "wks": "w", "week": "w", "weeks": "w",
    ]

    /// `s` with its spelled-out units written as letters ("10min" → "10m"), or nil when it has
    /// none or a word that is no unit.
    static func shortUnits(_ s: String) -> String? {
        var out = ""
        var word = ""
        var changed = false
        func flush() -> Bool {
            defer { word = "" }
            guard !word.isEmpty else { return true }
            if word.count == 1 {
                out += word
                return true
            }
            guard let letter = unitWords[word] else { return false }
            out.append(letter)
            changed = true
            return true
        }
        for ch in s {
            if ch.isASCII, ch.isLetter {
                word.append(ch)
                continue
            }
            guard flush() else { return nil }
            out.append(ch)
        }
        guard flush(), changed else { return nil }
        return out
    }

    /// What a duration typed as a number and a unit word apart ("5 minutes", "5 min") or as a
    /// bare number ("5") may mean: "5m"; nil for anything else (or when that is no duration).
    public static func durationHint(_ s: String, next: String?) -> String? {
        guard !s.isEmpty, s.allSatisfy(\.isASCIIDigit) else { return nil }
        var hint = s + "m"
        if let next {
            let unit = next.lowercased()
            if unit.count == 1, "smhdw".contains(unit) {
                hint = s + unit
            } else if let letter = unitWords[unit] {
                hint = s + String(letter)
            }
        }
        guard let seconds = durationSeconds(hint, max: maxDuration), seconds > 0 else { return nil }
        return hint
    }

    /// `chime in`'s duration: the first of `words` (its title and body follow). A number with
    /// its unit word apart ("5 minutes") is refused with the form it means, not read with
    /// "minutes" as the title: "invalid duration '5 minutes': did you mean '5m'?".
    public static func leadingDuration(_ words: [String]) throws(ChimeError) -> Int64 {
        let first = words.first ?? ""
        do {
            return try duration(first)
        } catch {
            let next = words.count > 1 ? words[1] : nil
            guard let hint = durationHint(first, next: next) else { throw error }
            let unitApart =
                next.map { word in
                    let lower = word.lowercased()
                    return unitWords[lower] != nil || (lower.count == 1 && "smhdw".contains(lower))
                } ?? false
            let typed = unitApart ? "\(first) \(next ?? "")" : first
            let why = unitApart ? "a number and its unit in one word" : "a number needs its unit"
            throw ChimeError(.usage, "invalid duration '\(typed)': did you mean '\(hint)'? (\(why), such as 90s, 25m, 1h30m or 2d)")
        }
    }

    /// ``durationSeconds(_:max:)`` with unit letters only.
    static func unitSeconds(_ s: String, max: Int64) -> Int64? {
        var total: Int64 = 0
        var number: Int64? = nil
        var sawUnit = false
        // The size of the last unit read: the next one must be smaller.
        var previous = Int64.max
        for ch in s {
            if ch.isWhitespace {
                guard number == nil else { return nil }  // "1 h" is not a duration
                continue
            }
            if ch.isASCIIDigit, let digit = ch.wholeNumberValue {
                let n = (number ?? 0) * 10 + Int64(digit)
                guard n <= max else { return nil }
                number = n
                continue
            }
            let size: Int64
            switch ch {
            case "s": size = 1
            case "m": size = 60
            case "h": size = 3_600
            case "d": size = 86_400
            case "w": size = 604_800
            default: return nil
            }
            guard let n = number, size < previous else { return nil }
            previous = size
            total += n * size
            guard total <= max else { return nil }
            number = nil
            sawUnit = true
        }
        guard sawUnit, number == nil else { return nil }
        return total
    }

    static let instantExpected =
        "HH:MM[:SS], YYYY-MM-DD HH:MM[:SS], or an ISO 8601 date-time such as 2026-12-24T18:00, 2026-12-24T18:00:00Z or 2026-12-24T18:00+01:00"

    /// `chime at`:
    /// - "14:30" or "14:30:15": today in `zone`, or tomorrow if that instant is not after `now`;
    /// - "YYYY-MM-DD HH:MM[:SS[.fff]]" or "YYYY-MM-DDTHH:MM[:SS[.fff]]": local in `zone`;
    /// - either of those with a "Z" or "±HH:MM" / "±HHMM" suffix: absolute.
    /// Local times resolve by the RFC 5545 rule (gap → moved forward, repeat → first).
    /// A date-time not after `now` is an error, unless `allowPast` (`chime import` of a backup
    /// tells the person what becomes of such a reminder).
    public static func instant(_ s: String, now: Date, zone: TimeZone, allowPast: Bool = false) throws(ChimeError) -> Date {
        let text = s.trimmingWhitespace()
        if !text.isEmpty, text.allSatisfy({ $0.isASCIIDigit || $0 == ":" }), text.contains(":") {
            // HH:MM, or HH:MM:SS as a date-time may carry seconds.
            var second = 0
            let time: LocalTime
            let parts = text.split(separator: ":", omittingEmptySubsequences: false)
            if parts.count == 3 {
                guard parts[2].count == 2, let value = Int(parts[2]), (0...59).contains(value),
                    let clock = try? LocalTime.parse(parts[0] + ":" + parts[1])
                else { throw ChimeError.invalid("time", s, expected: "HH:MM or HH:MM:SS, from 00:00 to 23:59:59") }
                (time, second) = (clock, value)
            } else {
                time = try LocalTime.parse(text)
            }
            let today = ZoneMath.civil(now, in: zone).local.dayNumber
            for day in today...(today + 2) {
                var local = CivilDateTime(dayNumber: day, time: time)
                local.second = second
                let r = ZoneMath.resolve(local, in: zone)
                if r.instant > now { return r.instant }
            }
            throw ChimeError.invalid("time", s, expected: instantExpected)  // unreachable in practice
        }
        func bad() -> ChimeError { ChimeError.invalid("time", s, expected: instantExpected) }
        // Bytes rather than Characters: `chime import` reads 100,000 of these.
        let chars = Array(text.utf8)
        guard chars.count >= 16 else { throw bad() }
        // YYYY-MM-DD
        func num(_ r: Range<Int>) -> Int? {
            guard r.upperBound <= chars.count else { return nil }
            var value = 0
            for byte in chars[r] {
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
        func char(_ index: Int) -> Character { Character(Unicode.Scalar(chars[index])) }
        guard let year = num(0..<4), char(4) == "-", let month = num(5..<7), char(7) == "-", let day = num(8..<10),
            char(10) == " " || char(10) == "T" || char(10) == "t",
            let hour = num(11..<13), char(13) == ":", let minute = num(14..<16)
        else { throw bad() }
        var i = 16
        var second = 0
        var fraction = 0.0
        if i < chars.count, char(i) == ":" {
            guard let sec = num(17..<19) else { throw bad() }
            second = sec
            i = 19
            // Fractional seconds, as Chime's own JSON (and JavaScript's toISOString) write them.
            if i < chars.count, char(i) == "." {
                let digits = chars[(i + 1)...].prefix { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
                guard (1...9).contains(digits.count), let value = num((i + 1)..<(i + 1 + digits.count)) else { throw bad() }
                fraction = Double(value) / pow(10, Double(digits.count))
                i += 1 + digits.count
            }
        }
        guard (1...12).contains(month), (1...ZoneMath.daysInMonth(year: year, month: month)).contains(day),
            (0...23).contains(hour), (0...59).contains(minute), (0...59).contains(second)
        else { throw bad() }
        let local = CivilDateTime(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        let result: Date
        let rest = String(decoding: chars[i...], as: UTF8.self)
        if rest.isEmpty {
            result = ZoneMath.resolve(local, in: zone).instant
        } else if rest == "Z" || rest == "z" {
            result = Date(timeIntervalSince1970: TimeInterval(local.naiveSeconds))
        } else {
            let r = Array(rest)
            guard r[0] == "+" || r[0] == "-" else { throw bad() }
            let digits = r.dropFirst().filter { $0 != ":" }
            guard digits.count == 4, digits.allSatisfy(\.isASCIIDigit),
                r.count == 5 || (r.count == 6 && r[3] == ":"),
                let oh = Int(String(digits.prefix(2))), let om = Int(String(digits.suffix(2))),
                oh <= 18, om <= 59
            else { throw bad() }
            let offset = (oh * 3_600 + om * 60) * (r[0] == "-" ? -1 : 1)
            result = Date(timeIntervalSince1970: TimeInterval(local.naiveSeconds - offset))
        }
        let precise = result.addingTimeInterval(fraction)
        guard allowPast || precise > now else {
            throw ChimeError(.usage, "'\(s)' is in the past: give a future time")
        }
        return precise
    }

    static let recurrenceExpected =
        "day, weekday, weekend, days such as mon,wed,fri or mon-fri followed by HH:MM, month on DAY HH:MM, year on MM-DD HH:MM, "
        + "or an interval such as 30m or 2h; optionally followed by until YYYY-MM-DD"

    /// `chime every`: the words after "every".
    /// - ["day", "08:00"], ["daily", "08:00"], ["weekday", "08:00,20:00"], ["mon,wed,fri", "08:00"],
    ///   ["mon-fri", "at", "08:00"], ["weekend", "09:00", "18:00"]: a weekly rule in `zone`;
    /// - ["month", "on", "1", "09:00"], ["year", "on", "12-24", "18:00"]: a ``CalendarRule`` in `zone`;
    /// - ["2h"], ["30m"], ["1h", "30m"]: an interval anchored at `now` (any positive duration, 1s or more);
    /// - any of those followed by ["until", "2027-01-31"]: it stops after that local day (RFC 5545
    ///   `UNTIL`, the day included); or, with `count` (or followed by ["count", "10"]), after that
    ///   many occurrences from `now` (`COUNT`, 1 to 1000).
    /// Words may also arrive joined ("day 08:00").
    public static func recurrence(_ words: [String], now: Date, zone: ZoneRule, count: Int? = nil) throws(ChimeError) -> Trigger {
        var tokens = words.flatMap { $0.split(whereSeparator: \.isWhitespace).map(String.init) }
        var end: RuleEnd?
        if let until = tokens.firstIndex(where: { $0.lowercased() == "until" }) {
            guard until > 0, tokens.count == until + 2 else {
                throw ChimeError(.usage, "'until' needs one date after it: expected until YYYY-MM-DD, such as until 2027-01-31")
            }
            end = .until(day: try CivilDay.parse(tokens[until + 1], field: "until date"))
            tokens.removeLast(2)
        }
        var count = count
        // "count 10" after the rule, as a listing prints it (`--count 10` on the command line).
        if let index = tokens.firstIndex(where: { $0.lowercased() == "count" }), index > 0 {
            guard tokens.count == index + 2, let n = Int(tokens[index + 1]) else {
                throw ChimeError(.usage, "'count' needs a number after it: expected count N, such as count 10")
            }
            guard count == nil, end == nil else {
                throw ChimeError(.usage, "a rule ends by 'until DATE' or by a count, not both (RFC 5545): give one of them")
            }
            count = n
            tokens.removeLast(2)
        }
        if let count {
            guard end == nil else {
                throw ChimeError(.usage, "a rule ends by 'until DATE' or by --count, not both (RFC 5545): give one of them")
            }
            guard (1...RuleEnd.maxCount).contains(count) else {
                throw ChimeError.invalid("count", String(count), expected: "a number of occurrences from 1 to \(RuleEnd.maxCount)")
            }
            end = .count(count, start: now)
        }
        let base = try baseRecurrence(tokens, words: words, now: now, zone: zone)
        return end.map { .bounded(base, $0) } ?? base
    }

    static func baseRecurrence(_ tokens: [String], words: [String], now: Date, zone: ZoneRule) throws(ChimeError) -> Trigger {
        guard let first = tokens.first else {
            throw ChimeError.invalid("recurrence", words.joined(separator: " "), expected: recurrenceExpected)
        }
        if first.first?.isASCIIDigit == true {
            // "08:00" first: times of day without their days ("every 08:00").
            if first.contains(":"), (try? LocalTime.parseList(first)) != nil {
                throw ChimeError(
                    .usage,
                    "missing days before '\(first)': expected DAYS TIMES such as 'day \(first)' or 'weekday \(first)' "
                        + "(days: day, weekday, weekend, mon-fri, mon,wed,fri)"
                )
            }
            let seconds = try duration(tokens.joined(separator: " "))
            return .interval(seconds: seconds, anchor: now)
        }
        if ["month", "monthly", "year", "yearly"].contains(first.lowercased()) {
            return .calendar(try calendarRule(tokens, zone: zone))
        }
        let days: WeekdaySet
        do throws(ChimeError) {
            days = try WeekdaySet.parse(first)
        } catch {
            throw ChimeError.invalid("recurrence", first, expected: recurrenceExpected)
        }
        var rest = Array(tokens.dropFirst())
        if rest.first?.lowercased() == "at" { rest.removeFirst() }
        guard !rest.isEmpty else {
            throw ChimeError(.usage, "missing time after '\(first)': expected HH:MM such as 08:00, or a list such as 08:00,20:00")
        }
        let times = try LocalTime.spokenList(rest.joined(separator: ","))
        return .weekly(times: times, days: days, zone: zone)
    }

    /// ["month", "on", "31", "09:00"], ["year", "on", "12-24", "18:00,20:00"] ("on" and "at" optional).
    static func calendarRule(_ tokens: [String], zone: ZoneRule) throws(ChimeError) -> CalendarRule {
        let yearly = tokens[0].lowercased().hasPrefix("year")
        var rest = Array(tokens.dropFirst())
        if rest.first?.lowercased() == "on" { rest.removeFirst() }
        let dayExpected = yearly ? "MM-DD such as 12-24 (02-29 fires in leap years only)" : "a day of the month from 1 to 31"
        guard let dayText = rest.first else {
            throw ChimeError(.usage, "missing day after '\(tokens[0])': expected \(dayExpected), then HH:MM")
        }
        rest.removeFirst()
        var month: Int?
        let day: Int
        if yearly {
            let parts = dayText.split(separator: "-", omittingEmptySubsequences: false)
            guard parts.count == 2, parts.allSatisfy({ $0.count == 2 && $0.allSatisfy(\.isASCIIDigit) }),
                let m = Int(parts[0]), let d = Int(parts[1]), (1...12).contains(m),
                (1...ZoneMath.daysInMonth(year: 2000, month: m)).contains(d)
            else { throw ChimeError.invalid("day of the year", dayText, expected: dayExpected) }
            (month, day) = (m, d)
        } else {
            guard (1...2).contains(dayText.count), dayText.allSatisfy(\.isASCIIDigit), let d = Int(dayText), (1...31).contains(d) else {
                throw ChimeError.invalid("day of the month", dayText, expected: dayExpected)
            }
            day = d
        }
        if rest.first?.lowercased() == "at" { rest.removeFirst() }
        guard !rest.isEmpty else {
            throw ChimeError(.usage, "missing time after '\(dayText)': expected HH:MM such as 09:00, or a list such as 09:00,18:00")
        }
        return CalendarRule(month: month, day: day, times: try LocalTime.spokenList(rest.joined(separator: ",")), zone: zone)
    }
}

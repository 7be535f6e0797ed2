import Foundation

/// A time as people type it for `chime at` and `chime edit --at`, and what was assumed.
public struct SpokenInstant: Sendable, Hashable {
    public var instant: Date
    /// How the local time was resolved (a DST gap or a repeated hour).
    public var resolution: LocalResolution
    /// A date was given without a time of day: it was read as ``TimeParsing/dateOnlyTime``.
    public var dateOnly: Bool
}

extension TimeParsing {
    /// The time of day a date given alone means.
    public static let dateOnlyTime = LocalTime(hour: 9, minute: 0)!

    static let spokenExpected =
        "HH:MM, 9am or 9:30pm, noon, midnight, tomorrow 09:00, a weekday such as mon 09:00, a date such as 2026-12-24 (09:00), "
        + "'YYYY-MM-DD HH:MM[:SS]', or ISO 8601 such as 2026-12-24T17:00Z"

    /// What `chime at` reads, in `zone`:
    /// - everything ``instant(_:now:zone:)`` reads ("14:30", "2026-12-24 18:00", "2026-12-24T17:00Z");
    /// - "9am", "9:30pm", "12am", "noon", "midnight" (``LocalTime/spoken(_:)``): today, or
    ///   tomorrow when it has passed;
    /// - "today 18:00", "tomorrow 09:00", "mon 09:00" / "monday 9am" (the next such day on which
    ///   that time is still ahead: today when it is), "2026-12-24 9pm";
    /// - a day alone ("tomorrow", "mon", "2026-12-24") at 09:00, with ``SpokenInstant/dateOnly`` set.
    /// Local times resolve as RFC 5545 does (gap → moved forward, repeat → the first). A time
    /// not after `now` is an error.
    public static func spoken(_ s: String, now: Date, zone: TimeZone) throws(ChimeError) -> SpokenInstant {
        let tokens = s.split(whereSeparator: \.isWhitespace).map(String.init)
        func exact(_ instant: Date) -> SpokenInstant { SpokenInstant(instant: instant, resolution: .exact, dateOnly: false) }
        func standard() throws(ChimeError) -> SpokenInstant {
            do throws(ChimeError) {
                return exact(try instant(s, now: now, zone: zone))
            } catch {
                // The older forms' general message lists only them: name every form this reads.
                // (A narrower one, such as an hour out of range, stays.)
                guard error.message == ChimeError.invalid("time", s, expected: instantExpected).message else { throw error }
                throw ChimeError.invalid("time", s, expected: spokenExpected)
            }
        }
        let today = CivilDay.of(now, in: zone)
        switch tokens.count {
        case 1:
            // HH:MM as `instant` reads it, here keeping how it was resolved (a DST note).
            if let time = try? LocalTime.spoken(tokens[0]) {
                // Today, or tomorrow when it has passed (two days ahead covers a skipped day).
                for day in today...(today + 2) {
                    let r = ZoneMath.resolve(CivilDateTime(dayNumber: day, time: time), in: zone)
                    if r.instant > now { return SpokenInstant(instant: r.instant, resolution: r.resolution, dateOnly: false) }
                }
            }
            if let day = try dayWord(tokens[0], today: today) {
                return try resolveOn(day, at: dateOnlyTime, text: s, now: now, zone: zone, dateOnly: true)
            }
            // "8", "17", "8.30": the forms it may mean.
            if LocalTime.hint(tokens[0]) != nil { _ = try LocalTime.spoken(tokens[0]) }
            return try standard()
        case 2:
            guard let day = try dayWord(tokens[0], today: today) else {
                // "5 pm": '5pm'.
                if LocalTime.hint(s) != nil { _ = try LocalTime.spoken(s) }
                return try standard()
            }
            guard let time = try? LocalTime.spoken(tokens[1]) else {
                // "2026-12-24 18:00:30" is an older form.
                if tokens[0].first?.isASCIIDigit == true { return try standard() }
                throw ChimeError.invalid("time of day", tokens[1], expected: "HH:MM, 9am, 9:30pm, noon or midnight after '\(tokens[0])'")
            }
            return try resolveOn(day, at: time, text: s, now: now, zone: zone, dateOnly: false)
        default:
            return try standard()
        }
    }

    /// A day as a word: `.fixed(day)` for today, tomorrow or a date; `.weekday(n)` for a day
    /// of the week; nil for anything else.
    enum DayWord {
        case fixed(Int)
        case weekday(Int)
    }

    static func dayWord(_ word: String, today: Int) throws(ChimeError) -> DayWord? {
        let lower = word.lowercased()
        switch lower {
        case "today": return .fixed(today)
        case "tomorrow": return .fixed(today + 1)
        default: break
        }
        if let weekday = WeekdaySet.names[lower] { return .weekday(weekday) }
        // YYYY-MM-DD alone (a date-time has more after it).
        if word.utf8.count == 10, word.first?.isASCIIDigit == true, Array(word)[4] == "-", Array(word)[7] == "-" {
            return .fixed(try CivilDay.parse(word, field: "date"))
        }
        return nil
    }

    static func resolveOn(
        _ day: DayWord,
        at time: LocalTime,
        text: String,
        now: Date,
        zone: TimeZone,
        dateOnly: Bool
    ) throws(ChimeError) -> SpokenInstant {
        let candidates: [Int]
        switch day {
        case .fixed(let d):
            candidates = [d]
        case .weekday(let weekday):
            // The next such weekday on which the time is still ahead: this week's, or next week's.
            let today = CivilDay.of(now, in: zone)
            let first = today + ZoneMath.floorMod(weekday - ZoneMath.isoWeekday(dayNumber: today), 7)
            candidates = [first, first + 7]
        }
        for d in candidates {
            let r = ZoneMath.resolve(CivilDateTime(dayNumber: d, time: time), in: zone)
            if r.instant > now { return SpokenInstant(instant: r.instant, resolution: r.resolution, dateOnly: dateOnly) }
        }
        let meant = dateOnly ? "'\(text)' (at \(dateOnlyTime))" : "'\(text)'"
        throw ChimeError(.usage, "\(meant) is in the past: give a future time")
    }

    /// "9am", "9:30pm", "12am" (00:00), "12pm" (noon); any case. Nil for anything else.
    public static func twelveHourClock(_ word: String) -> LocalTime? {
        let lower = word.lowercased()
        guard lower.hasSuffix("am") || lower.hasSuffix("pm") else { return nil }
        let pm = lower.hasSuffix("pm")
        let clock = lower.dropLast(2)
        let parts = clock.split(separator: ":", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), (1...2).contains(parts[0].count), parts[0].allSatisfy(\.isASCIIDigit),
            let hour = Int(parts[0]), (1...12).contains(hour)
        else { return nil }
        var minute = 0
        if parts.count == 2 {
            guard parts[1].count == 2, parts[1].allSatisfy(\.isASCIIDigit), let m = Int(parts[1]) else { return nil }
            minute = m
        }
        return LocalTime(hour: hour % 12 + (pm ? 12 : 0), minute: minute)
    }
}

extension TimeParsing {
    /// How many of `words` (a time, then a title and more) ``spoken(_:now:zone:)`` reads as the
    /// time: 2 for a day word and a clock typed unquoted (`tomorrow 09:00 "Title"`,
    /// `2026-12-24 18:00 "Title"`) when a title follows, and for a clock and its "am"/"pm"
    /// typed apart (`5 pm "Title"`, refused with the form it means), else 1.
    public static func spokenWordCount(_ words: [String]) -> Int {
        guard words.count >= 3 else { return 1 }
        if ["am", "pm"].contains(words[1].lowercased()), LocalTime.hint(words[0] + " " + words[1]) != nil { return 2 }
        guard (try? dayWord(words[0], today: 0)) != nil else { return 1 }
        let clock = words[1]
        if (try? LocalTime.spoken(clock)) != nil { return 2 }
        // HH:MM:SS after a date.
        let parts = clock.split(separator: ":")
        if parts.count == 3, parts.allSatisfy({ $0.allSatisfy(\.isASCIIDigit) && (1...2).contains($0.count) }) { return 2 }
        return 1
    }
}

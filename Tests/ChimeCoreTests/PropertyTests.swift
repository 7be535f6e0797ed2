import ChimeCore
import Foundation
import PropertyBased
import Testing

// Property-based tests of the time engine: generated bad input for the
// duration, time and recurrence parsers, and generated triggers, zones and instants for
// `nextOccurrence`, checked against slow references that share no code with the engine.
// A failure prints the input and a `.fixedSeed(…)` that replays it.

// MARK: - Generation

/// Random choices inside a generator's `run` closure.
private func pick<T>(_ items: [T], _ rng: inout some RandomNumberGenerator) -> T {
    items[Int.random(in: items.indices, using: &rng)]
}

private func chance(_ p: Double, _ rng: inout some RandomNumberGenerator) -> Bool {
    Double.random(in: 0..<1, using: &rng) < p
}

private enum Fuzz {
    /// Characters people type, and characters that only look like them (other digits, combining
    /// marks, a keycap, line and paragraph separators, a right-to-left override).
    static let characters: [Character] =
        Array("0123456789smhdwSMHDWTZtz:-+,._ ") + [
            "\t", "\n", "\r", "\r\n", "\u{0B}", "\u{85}", "\u{A0}", "\u{2028}", "\u{2029}", "\u{0}", "'", "\"", "\\", "%",
            "\u{663}", "\u{FF15}", "\u{BD}", "5\u{FE0F}\u{20E3}", "0\u{301}", "h\u{301}", " \u{301}", "\u{301}", "\u{17F}",
            "\u{212A}", "\u{130}", "\u{1F642}", "\u{202E}", "\u{FEFF}",
        ]

    /// Whole words and near misses of every accepted form.
    static let words: [String] = [
        "mon", "Tue", "WEDNESDAY", "thurs", "fri", "sat", "sun", "sundays", "day", "daily", "everyday", "weekday", "weekends",
        "at", "every", "mon-fri", "fri-mon", "sun-sun", "mon-", "-fri", ",", ",,", "mon,,fri", "mon,", "funday", "25:00", "24:00",
        "23:59", "00:00", "8:00", "08:0", "008:00", "8:60", ":30", "12:", "1h-5m", "99999999999d", "9223372036854775807s",
        "18446744073709551616m", "00000000000000000001s", "1h30", "h1", "1 h", "0m", "0s", "366d", "367d", "52w", "53w",
        "31622400s", "31622401s", "527040m", "2026-12-24", "2026-12-24T18:00", "2026-02-29 10:00", "2028-02-29 10:00",
        "2026-12-24 18:00:60", "2026-12-24 18:00:5", "+01:00", "-0530", "Z", "+99:99", "+18:59", "+19:00", "T", "1e5s",
        "0x10s", "-5m", "+5m", "1.5h", "∞s", "",
    ]

    /// Arbitrary text: mostly the characters above, some any Unicode scalar at all.
    static let text = Generator<String, Shrink.None<String>> { rng in
        var s = ""
        for _ in 0..<Int.random(in: 0...24, using: &rng) {
            if chance(0.25, &rng) {
                let v = chance(0.5, &rng) ? UInt32.random(in: 0...0xD7FF, using: &rng) : UInt32.random(in: 0xE000...0x10FFFF, using: &rng)
                s.unicodeScalars.append(Unicode.Scalar(v)!)
            } else {
                s.append(pick(characters, &rng))
            }
        }
        return s
    }

    /// Digits, units, words and separators run together: "1h-5m", "99999999999d", "mon-, 25:00".
    static let soup = Generator<String, Shrink.None<String>> { rng in
        var s = ""
        for _ in 0..<Int.random(in: 1...6, using: &rng) {
            switch Int.random(in: 0...4, using: &rng) {
            case 0: s += pick(words, &rng)
            case 1: s += String(Int.random(in: 0...99, using: &rng))
            case 2: s += String(UInt64.random(in: 0...UInt64.max, using: &rng) >> UInt64.random(in: 0...63, using: &rng))
            case 3: s.append(pick(Array("smhdwSMHDW"), &rng))
            default: s.append(pick(characters, &rng))
            }
            if chance(0.3, &rng) { s += pick(["", " ", ",", ":", "-", "  "], &rng) }
        }
        return s
    }

    /// Either kind of bad input.
    static let input = zip(Gen.bool, text, soup).map { choice in choice.0 ? choice.1 : choice.2 }
}

/// The named zones of the brief (a 30-minute DST, a skipped day, half-hour offsets) and any
/// other zone this machine knows.
private enum Zones {
    static let named = [
        "America/New_York", "Europe/Berlin", "Australia/Lord_Howe", "Pacific/Apia", "Asia/Kolkata", "America/St_Johns", "UTC",
    ]
    static let known = TimeZone.knownTimeZoneIdentifiers

    static func zone(_ id: String) -> TimeZone {
        guard let z = TimeZone(identifier: id) else { fatalError("time zone \(id) missing on this machine") }
        return z
    }

    static func random(_ rng: inout some RandomNumberGenerator) -> String {
        chance(0.5, &rng) ? pick(named, &rng) : pick(known, &rng)
    }

    /// An instant from 1971 to 2037, to the second.
    static func instant(_ rng: inout some RandomNumberGenerator) -> Int {
        Int.random(in: 31_536_000...2_145_916_800, using: &rng)
    }

    /// A DST or offset transition of `zone` at a random point of 1971-2037, if it has any then.
    static func transition(_ zone: TimeZone, _ rng: inout some RandomNumberGenerator) -> Int? {
        let from = Date(timeIntervalSince1970: TimeInterval(instant(&rng)))
        guard let t = zone.nextDaylightSavingTimeTransition(after: from), t.timeIntervalSince1970 < 2_145_916_800 else { return nil }
        return Int(t.timeIntervalSince1970)
    }
}

// MARK: - References

private func floorDiv(_ a: Int, _ b: Int) -> Int { a >= 0 ? a / b : -((-a + b - 1) / b) }

/// The Gregorian calendar in UTC, for day numbers and weekdays.
private let utcCalendar: Calendar = {
    var c = Calendar(identifier: .gregorian)
    c.timeZone = TimeZone(identifier: "UTC")!
    return c
}()

/// ISO weekday (1 = Monday … 7 = Sunday) of day `day` since 1970-01-01, by Foundation.
private func isoWeekday(ofDay day: Int) -> Int {
    let w = utcCalendar.component(.weekday, from: Date(timeIntervalSince1970: TimeInterval(day) * 86_400))
    return (w + 5) % 7 + 1  // Foundation: 1 = Sunday
}

/// A local date-time as seconds since 1970-01-01T00:00 read as if it were UTC, by Foundation.
private func naiveSeconds(year: Int, month: Int, day: Int, hour: Int = 0, minute: Int = 0, second: Int = 0) -> Int {
    let c = DateComponents(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
    return Int(utcCalendar.date(from: c)!.timeIntervalSince1970)
}

/// The wall clock of `instant` in `zone`, by Foundation's calendar.
private struct LocalReading {
    var naive: Int
    var day: Int { floorDiv(naive, 86_400) }
    var secondOfDay: Int { naive - day * 86_400 }
    var isoWeekday: Int

    init(_ instant: Date, in calendar: Calendar) {
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second, .weekday], from: instant)
        naive = naiveSeconds(year: c.year!, month: c.month!, day: c.day!, hour: c.hour!, minute: c.minute!, second: c.second!)
        isoWeekday = (c.weekday! + 5) % 7 + 1
    }
}

/// A zone's UTC offset over a span of instants, as piecewise-constant segments: sampled every
/// 30 minutes and each change bisected to the second. The ground truth the references work from.
private struct OffsetTimeline {
    /// `starts[i]` is where `offsets[i]` begins (the first segment also covers everything before).
    private(set) var starts: [Int] = []
    private(set) var offsets: [Int] = []

    init(_ zone: TimeZone, from lower: Int, to upper: Int) {
        func offset(_ t: Int) -> Int { zone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(t))) }
        starts = [lower]
        offsets = [offset(lower)]
        var a = lower
        while a < upper {
            let b = a + 1_800
            let ob = offset(b)
            if ob != offsets[offsets.count - 1] {
                var lo = a
                var hi = b
                while hi - lo > 1 {
                    let mid = lo + (hi - lo) / 2
                    if offset(mid) == ob { hi = mid } else { lo = mid }
                }
                starts.append(hi)
                offsets.append(ob)
            }
            a = b
        }
    }

    enum Kind: Equatable {
        case exact
        case repeated
        case gap(shift: Int)
    }

    /// RFC 5545: the instants whose wall clock reads `local`; the first of them if several; in a
    /// gap, `local` read with the offset before the gap.
    func resolve(_ local: Int) -> (instant: Int, kind: Kind)? {
        var hits: [Int] = []
        for i in offsets.indices {
            let t = local - offsets[i]
            let begins = i == 0 ? Int.min : starts[i]
            let ends = i + 1 < starts.count ? starts[i + 1] : Int.max
            if begins <= t && t < ends { hits.append(t) }
        }
        if let first = hits.min() { return (first, hits.count > 1 ? .repeated : .exact) }
        for i in starts.indices.dropFirst() {
            let before = offsets[i - 1]
            let after = offsets[i]
            if starts[i] + before <= local && local < starts[i] + after { return (local - before, .gap(shift: after - before)) }
        }
        return nil
    }

    /// The local day number of an instant.
    func localDay(_ t: Int) -> Int {
        let i = (starts.lastIndex { $0 <= t }) ?? 0
        return floorDiv(t + offsets[i], 86_400)
    }
}

/// Every occurrence of a weekly rule strictly between `after` and `before`, found by walking local
/// days: each selected day, each time, resolved by RFC 5545; one firing per instant.
private func referenceWeekly(times: [LocalTime], days: WeekdaySet, timeline: OffsetTimeline, after: Int, before: Int) -> [Int] {
    var instants = Set<Int>()
    for day in (timeline.localDay(after) - 2)...(timeline.localDay(before) + 2)
    where days.contains(isoWeekday: isoWeekday(ofDay: day)) {
        for time in times {
            guard let r = timeline.resolve(day * 86_400 + time.hour * 3_600 + time.minute * 60) else {
                Issue.record("the reference could not resolve day \(day) \(time)")
                continue
            }
            if r.instant > after && r.instant < before { instants.insert(r.instant) }
        }
    }
    return instants.sorted()
}

/// The documented duration grammar, read with nothing clever: parts `<ASCII digits><unit>`
/// (lowercase units w, d, h, m, s, each at most once, largest first), whitespace allowed between
/// parts only; a positive sum of at most 366 days.
private func referenceDuration(_ s: String) -> Int64? {
    if let total = referenceLetterDuration(s) { return total }
    return referenceSpelledOut(s).flatMap(referenceLetterDuration)
}

/// The documented spelled-out units (docs/reminders.md and chime(1): "10min, 2hrs,
/// 1hour"; TimeParsing.duration's documentation), each written in one word with its number.
private let referenceUnitWords: [String: String] = [
    "sec": "s", "secs": "s", "second": "s", "seconds": "s", "min": "m", "mins": "m", "minute": "m", "minutes": "m",
    "hr": "h", "hrs": "h", "hour": "h", "hours": "h", "day": "d", "days": "d", "wk": "w", "wks": "w", "week": "w",
    "weeks": "w",
]

/// `s` with each run of ASCII letters longer than one that is a spelled-out unit written as its
/// letter; nil when it has none, or a longer run that is no unit.
private func referenceSpelledOut(_ s: String) -> String? {
    var out = ""
    var run = ""
    var spelled = false
    func end() -> Bool {
        defer { run = "" }
        if run.count <= 1 {
            out += run
            return true
        }
        guard let letter = referenceUnitWords[run] else { return false }
        out += letter
        spelled = true
        return true
    }
    for ch in s {
        if ch.isASCII && ch.isLetter {
            run.append(ch)
        } else {
            guard end() else { return nil }
            out.append(ch)
        }
    }
    guard end(), spelled else { return nil }
    return out
}

/// The grammar with unit letters only.
private func referenceLetterDuration(_ s: String) -> Int64? {
    let units: [Character] = ["w", "d", "h", "m", "s"]
    let sizes: [Int64] = [604_800, 86_400, 3_600, 60, 1]
    var digits = ""
    var total: Int64 = 0
    var parts = 0
    var next = 0  // the first unit still allowed
    for ch in s {
        if ch.isWhitespace {
            guard digits.isEmpty else { return nil }
        } else if ch.unicodeScalars.count == 1, let a = ch.asciiValue, (48...57).contains(a) {
            digits.append(ch)
        } else if let unit = units.firstIndex(of: ch), !digits.isEmpty, unit >= next {
            let significant = digits.drop { $0 == "0" }
            guard significant.count <= 10, let n = Int64(significant.isEmpty ? "0" : String(significant)) else { return nil }
            total += n * sizes[unit]
            parts += 1
            next = unit + 1
            digits = ""
        } else {
            return nil
        }
    }
    guard digits.isEmpty, parts > 0, total > 0, total <= 366 * 86_400 else { return nil }
    return total
}

/// The documented HH:MM grammar: one or two ASCII digits, a colon, two ASCII digits, 00:00-23:59,
/// whitespace around it allowed.
private func referenceLocalTime(_ s: String) -> LocalTime? {
    let trimmed = s.drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed()
    let parts = String(trimmed).split(separator: ":", omittingEmptySubsequences: false)
    func digits(_ p: Substring, _ counts: ClosedRange<Int>) -> Int? {
        guard counts.contains(p.count), p.allSatisfy({ $0.unicodeScalars.count == 1 && $0.isASCII && $0.isNumber }) else { return nil }
        return Int(p)
    }
    guard parts.count == 2, let h = digits(parts[0], 1...2), let m = digits(parts[1], 2...2), h < 24, m < 60 else { return nil }
    return LocalTime(hour: h, minute: m)
}

// MARK: - Error messages

/// Whether `text` holds `part`, scalar by scalar (a value that starts with a combining mark joins
/// the quote before it into one Character, so Character-wise search would miss it).
private func containsScalars(_ text: String, _ part: String) -> Bool {
    let t = Array(text.unicodeScalars)
    let p = Array(part.unicodeScalars)
    guard !p.isEmpty else { return true }
    guard t.count >= p.count else { return false }
    return (0...(t.count - p.count)).contains { i in t[i..<(i + p.count)].elementsEqual(p) }
}

/// How a value appears inside an error message: as ChimeError shows it, control characters,
/// line breaks and bidirectional overrides escaped.
private func shown(_ value: String) -> String { ChimeError.escapingControlCharacters(value) }

/// A bad-input error: usage code, one line, naming the value (as `shown` renders it).
private func expectNamesValue(_ error: ChimeError, _ values: [String], sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(error.code == .usage, "\(error.message)", sourceLocation: sourceLocation)
    #expect(
        !error.message.contains { $0.isNewline },
        "message is not one line: \(error.message.debugDescription)",
        sourceLocation: sourceLocation
    )
    #expect(
        values.contains { containsScalars(error.message, "'" + shown($0) + "'") },
        "message does not name any of \(values.map(\.debugDescription)): \(error.message.debugDescription)",
        sourceLocation: sourceLocation
    )
}

private func attempt<T>(_ body: () throws(ChimeError) -> T) -> Result<T, ChimeError> {
    Result { () throws(ChimeError) -> T in try body() }
}

// MARK: - Parsers

@Suite("Properties: parsers")
struct ParserPropertyTests {
    @Test("duration: any text parses exactly as the documented grammar says, or is refused naming it")
    func durationMatchesGrammar() async {
        await propertyCheck(count: 3_000, input: Fuzz.input) { s in
            switch attempt({ () throws(ChimeError) in try TimeParsing.duration(s) }) {
            case .success(let seconds):
                #expect(seconds == referenceDuration(s), "duration(\(s.debugDescription)) = \(seconds)")
                #expect(seconds > 0 && seconds <= 366 * 86_400)
            case .failure(let error):
                #expect(referenceDuration(s) == nil, "refused \(s.debugDescription): \(error.message)")
                expectNamesValue(error, [s])
            }
        }
    }

    /// Parts such as `1h` or `030m`, with or without whitespace between parts; units in the
    /// documented order (a subset of w, d, h, m, s), and sometimes one out of order or uppercase.
    static let numbers = Gen.int(in: 0...1_000_000).array(of: 5)
    static let unitMask = Gen.int(in: 1...31)
    static let spaces = Gen<String?>.element(of: ["", " ", "  ", "\t"]).map { $0! }.array(of: 5)

    @Test("duration: parts built at random sum to the right seconds, or are refused when out of range or out of order")
    func durationFromParts() async {
        let zeros = Gen.int(in: 0...2)
        let mistake = Gen.int(in: 0...5)
        await propertyCheck(count: 2_000, input: Self.numbers, Self.unitMask, Self.spaces, zeros, mistake) {
            numbers,
            mask,
            spaces,
            zeros,
            mistake in
            let all: [(Character, Int64)] = [("w", 604_800), ("d", 86_400), ("h", 3_600), ("m", 60), ("s", 1)]
            var units = all.indices.filter { mask & (1 << $0) != 0 }.map { all[$0] }
            // 0: units out of order (when there are two); 1: an uppercase unit; else as documented.
            let misordered = mistake == 0 && units.count > 1
            let uppercase = mistake == 1
            if misordered { units.reverse() }
            var text = ""
            var expected: Int64 = 0
            for (i, (unit, size)) in units.enumerated() {
                // Small numbers mostly; sometimes large ones that overflow the 366-day bound.
                let value = i % 2 == 0 ? numbers[i] % 100 : numbers[i]
                let shown = uppercase && i == 0 ? Character(unit.uppercased()) : unit
                text += String(repeating: "0", count: zeros) + String(value) + String(shown) + spaces[i]
                expected += Int64(value) * size
            }
            let result = attempt { () throws(ChimeError) in try TimeParsing.duration(text) }
            if misordered || uppercase {
                #expect(throws: ChimeError.self, "\(text.debugDescription) should be refused (order or case)") { try result.get() }
            } else if expected > 0 && expected <= 366 * 86_400 {
                #expect((try? result.get()) == expected, "\(text.debugDescription)")
            } else {
                #expect(throws: ChimeError.self, "\(text.debugDescription) should be refused (\(expected) s)") { try result.get() }
            }
        }
    }

    @Test("duration: what Chime writes reads back (Trigger.formatInterval exactly, formatDuration to its precision)")
    func durationRoundTrip() async {
        await propertyCheck(count: 3_000, input: Gen.int64(in: 1...(366 * 86_400))) { seconds in
            let interval = Trigger.formatInterval(seconds)
            #expect((try? TimeParsing.duration(interval)) == seconds, "formatInterval(\(seconds)) = \(interval)")
            #expect(
                (try? TimeParsing.recurrence([interval], now: .distantPast, zone: .floating))
                    == .interval(seconds: seconds, anchor: .distantPast)
            )

            // formatDuration shows two units at most ("3d 4h", "2h 5m", "3m 12s"): it reads back as
            // `seconds` cut to its smallest shown unit.
            let human = formatDuration(.seconds(seconds))
            let precision: Int64 = seconds >= 86_400 ? 3_600 : seconds >= 3_600 ? 60 : 1
            #expect((try? TimeParsing.duration(human)) == seconds - seconds % precision, "formatDuration(\(seconds)) = \(human)")
        }
    }

    @Test("LocalTime: any text parses as HH:MM from 00:00 to 23:59 or is refused naming it; every time reads back")
    func localTimeMatchesGrammar() async {
        await propertyCheck(count: 2_000, input: Fuzz.input) { s in
            switch attempt({ () throws(ChimeError) in try LocalTime.parse(s) }) {
            case .success(let time): #expect(time == referenceLocalTime(s), "parse(\(s.debugDescription)) = \(time)")
            case .failure(let error):
                #expect(referenceLocalTime(s) == nil, "refused \(s.debugDescription)")
                expectNamesValue(error, [s])
            }
        }
        await propertyCheck(count: 500, input: Gen.int(in: 0...23), Gen.int(in: 0...59)) { h, m in
            let time = LocalTime(hour: h, minute: m)
            #expect(time != nil)
            #expect((try? LocalTime.parse(time?.description ?? "")) == time)
            #expect((try? LocalTime.parse(" \(h):\(m < 10 ? "0" : "")\(m)\t")) == time)
        }
    }

    @Test("Weekday sets: every non-empty set reads back from its description; any text is parsed or refused naming it")
    func weekdaySets() async throws {
        for raw in UInt8(1)...127 {
            let set = WeekdaySet(rawValue: raw)
            #expect(try WeekdaySet.parse(set.description) == set)
            #expect(try WeekdaySet.parse(set.description.uppercased()) == set)
        }
        await propertyCheck(count: 2_000, input: Fuzz.input) { s in
            switch attempt({ () throws(ChimeError) in try WeekdaySet.parse(s) }) {
            case .success(let set): #expect(!set.isEmpty)
            case .failure(let error): expectNamesValue(error, [s])
            }
        }
    }

    static let instantInput = zip(Fuzz.input, Gen<String?>.element(of: Zones.named + ["Asia/Kathmandu", "Pacific/Chatham"]).map { $0! })

    @Test("instant: any text gives a future instant or is refused naming it")
    func instantNeverCrashes() async {
        await propertyCheck(count: 3_000, input: Self.instantInput, Gen.int(in: 31_536_000...2_145_916_800)) { input, now in
            let (s, zoneID) = input
            let now = Date(timeIntervalSince1970: TimeInterval(now))
            switch attempt({ () throws(ChimeError) in try TimeParsing.instant(s, now: now, zone: Zones.zone(zoneID)) }) {
            case .success(let instant): #expect(instant > now, "instant(\(s.debugDescription)) = \(instant) is not after \(now)")
            // A bare time is named as it is read: without the whitespace around it.
            case .failure(let error):
                let trimmed = String(s.drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
                expectNamesValue(error, [s, trimmed])
            }
        }
    }

    struct DateTimeText: Sendable, CustomTestStringConvertible {
        var year, month, day, hour, minute, second: Int
        var withSeconds: Bool
        var separator: String
        /// nil: local in `zoneID`; else ±HH:MM or ±HHMM, or for 0 maybe `letter`.
        var offset: Int?
        var colon: Bool
        /// For offset 0: "Z" or "z" rather than "+00:00".
        var letter: String?
        /// Digits after the seconds' decimal point, if any.
        var fraction: String?
        var zoneID: String

        var fractionValue: Double { fraction.flatMap { Double("0." + $0) } ?? 0 }

        var local: Int {
            naiveSeconds(year: year, month: month, day: day, hour: hour, minute: minute, second: withSeconds ? second : 0)
        }

        var text: String {
            func p(_ v: Int, _ w: Int = 2) -> String { String(repeating: "0", count: max(0, w - String(v).count)) + String(v) }
            var s = "\(p(year, 4))-\(p(month))-\(p(day))\(separator)\(p(hour)):\(p(minute))"
            if withSeconds { s += ":" + p(second) + (fraction.map { "." + $0 } ?? "") }
            if let offset {
                if let letter, offset == 0 { return s + letter }
                let a = abs(offset)
                s += (offset < 0 ? "-" : "+") + p(a / 3_600) + (colon ? ":" : "") + p(a % 3_600 / 60)
            }
            return s
        }
        var testDescription: String { "\(text) in \(zoneID)" }
    }

    /// Date-times of 1971-2099, half of them local; local ones often in or next to a DST gap or
    /// repeated hour of their zone.
    static let dateTimes = Generator<DateTimeText, Shrink.None<DateTimeText>> { rng in
        let zoneID = Zones.random(&rng)
        var local = Int.random(in: 31_536_000...4_102_444_799, using: &rng)
        let hasOffset = chance(0.5, &rng)
        if !hasOffset, chance(0.6, &rng), let t = Zones.transition(Zones.zone(zoneID), &rng) {
            let zone = Zones.zone(zoneID)
            let before = zone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(t - 1)))
            let after = zone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(t)))
            local = Int.random(in: (t + min(before, after) - 120)...(t + max(before, after) + 120), using: &rng)
        }
        let c = utcCalendar.dateComponents(
            [.year, .month, .day, .hour, .minute, .second],
            from: Date(timeIntervalSince1970: TimeInterval(local))
        )
        return DateTimeText(
            year: c.year!,
            month: c.month!,
            day: c.day!,
            hour: c.hour!,
            minute: c.minute!,
            second: c.second!,
            withSeconds: chance(0.5, &rng),
            separator: pick([" ", "T", "t"], &rng),
            offset: hasOffset ? (chance(0.2, &rng) ? 0 : Int.random(in: -(18 * 60)...(18 * 60), using: &rng) * 60) : nil,
            colon: chance(0.5, &rng),
            letter: pick([nil, "Z", "z"], &rng),
            fraction: chance(0.3, &rng)
                ? String(UInt64.random(in: 0...UInt64.max, using: &rng)).prefix(Int.random(in: 1...9, using: &rng)).description : nil,
            zoneID: zoneID
        )
    }

    @Test("instant: a written date-time reads back as the instant it names, in any zone, gaps moved forward")
    func instantRoundTrip() async {
        await propertyCheck(count: 2_000, input: Self.dateTimes) { dt in
            let expected: Int
            if let offset = dt.offset {
                expected = dt.local - offset
            } else {
                let timeline = OffsetTimeline(Zones.zone(dt.zoneID), from: dt.local - 3 * 86_400, to: dt.local + 3 * 86_400)
                guard let r = timeline.resolve(dt.local) else {
                    Issue.record("no reference for \(dt.text) in \(dt.zoneID)")
                    return
                }
                expected = r.instant
            }
            let text = dt.text
            let zone = Zones.zone(dt.zoneID)
            let before = Date(timeIntervalSince1970: TimeInterval(expected - 1))
            let parsed = try? TimeParsing.instant(text, now: before, zone: zone)
            let seconds = dt.withSeconds ? dt.fractionValue : 0
            #expect(
                parsed.map { abs($0.timeIntervalSince1970 - (TimeInterval(expected) + seconds)) < 1e-6 } == true,
                "\(String(describing: parsed))"
            )
            // At or after that instant it is in the past, and the message names it.
            let at = Date(timeIntervalSince1970: TimeInterval(expected)).addingTimeInterval(seconds)
            switch attempt({ () throws(ChimeError) in try TimeParsing.instant(text, now: at, zone: zone) }) {
            case .success(let instant): Issue.record("\(text) at its own instant gave \(instant)")
            case .failure(let error): expectNamesValue(error, [text])
            }
        }
    }

    /// A zone, and an instant anywhere in 1971-2037 or within a day of one of its transitions.
    static let zonedNow = Generator<(String, Int), Shrink.None<(String, Int)>> { rng in
        let zoneID = Zones.random(&rng)
        if chance(0.5, &rng), let t = Zones.transition(Zones.zone(zoneID), &rng) {
            return (zoneID, t + Int.random(in: -86_400...86_400, using: &rng))
        }
        return (zoneID, Zones.instant(&rng))
    }

    @Test("instant: a bare HH:MM is the next time the wall clock reads it (gaps moved forward), within two days")
    func bareTimeIsTheNextOne() async {
        await propertyCheck(count: 1_500, input: Gen.int(in: 0...23), Gen.int(in: 0...59), Self.zonedNow) { h, m, zonedNow in
            let (zoneID, now) = zonedNow
            let zone = Zones.zone(zoneID)
            let timeline = OffsetTimeline(zone, from: now - 4 * 86_400, to: now + 4 * 86_400)
            let today = timeline.localDay(now)
            let expected = (today...(today + 2)).lazy.compactMap { timeline.resolve($0 * 86_400 + h * 3_600 + m * 60)?.instant }
                .first { $0 > now }
            let text = "\(h):\(m < 10 ? "0" : "")\(m)"
            let parsed = try? TimeParsing.instant(text, now: Date(timeIntervalSince1970: TimeInterval(now)), zone: zone)
            #expect(parsed.map { Int($0.timeIntervalSince1970) } == expected, "\(text) after \(now) in \(zoneID)")
            if let parsed {
                #expect(parsed.timeIntervalSince1970 > TimeInterval(now))
                #expect(parsed.timeIntervalSince1970 <= TimeInterval(now + 2 * 86_400))
            }
        }
    }

    static let wordsInput = Fuzz.input.array(of: 0...4)

    @Test("recurrence: any words give a well-formed trigger or are refused naming one of them")
    func recurrenceNeverCrashes() async {
        let now = Date(timeIntervalSince1970: 1_780_000_000.25)
        await propertyCheck(count: 3_000, input: Self.wordsInput) { words in
            switch attempt({ () throws(ChimeError) in try TimeParsing.recurrence(words, now: now, zone: .floating) }) {
            case .success(.weekly(let times, let days, let zone)):
                #expect(!days.isEmpty)
                #expect(!times.isEmpty)
                #expect(times == Array(Set(times)).sorted(), "\(times)")
                #expect(zone == .floating)
            case .success(.interval(let seconds, let anchor)):
                #expect(seconds > 0 && seconds <= 366 * 86_400)
                #expect(anchor == now)
            case .success(.once):
                Issue.record("\(words) gave a one-shot trigger")
            case .success(.calendar(let rule)):
                #expect(rule.isPossible)
                #expect(rule.zone == .floating)
            case .success(.bounded(let base, _)):
                #expect(base.isRecurring)
            case .failure(let error):
                // The word that is wrong, the words together, the times together, or one time of them.
                let tokens = words.flatMap { $0.split(whereSeparator: \.isWhitespace).map(String.init) }
                let times = tokens.dropFirst().filter { $0.lowercased() != "at" }.joined(separator: ",")
                let items = times.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                expectNamesValue(error, tokens + items + [words.joined(separator: " "), tokens.joined(separator: " "), times])
            }
        }
    }

    static let minutes = Gen.int(in: 0...1_439).array(of: 1...4)
    static let ruleZones = Gen<String??>.element(of: [String?]([nil]) + Zones.named.map { $0 }).map { $0! }

    @Test("recurrence: a rule's summary reads back as the same rule")
    func recurrenceRoundTrip() async throws {
        let days = Gen.uint8(in: 1...127)
        await propertyCheck(count: 1_000, input: days, Self.minutes, Self.ruleZones, Gen.bool) { raw, minutes, zoneID, withAt in
            let times = Array(Set(minutes.map { LocalTime(hour: $0 / 60, minute: $0 % 60)! })).sorted()
            let zone: ZoneRule = zoneID.map { .fixed($0) } ?? .floating
            let trigger = Trigger.weekly(times: times, days: WeekdaySet(rawValue: raw), zone: zone)
            // "every mon,wed 08:00,20:00 (Europe/Berlin)" → ["mon,wed", "08:00,20:00"]
            var words = trigger.summary.split(separator: " ").map(String.init)
            #expect(words.first == "every")
            words.removeFirst()
            if zoneID != nil { words.removeLast() }
            if withAt { words.insert("at", at: 1) }
            #expect((try? TimeParsing.recurrence(words, now: .now, zone: zone)) == trigger, "\(trigger.summary)")
            // Times given shuffled and repeated, as separate words.
            let shuffled = (minutes + minutes.prefix(1)).map { LocalTime(hour: $0 / 60, minute: $0 % 60)!.description }
            #expect((try? TimeParsing.recurrence([words[0]] + shuffled, now: .now, zone: zone)) == trigger, "\(shuffled)")
        }
    }

    @Test("zone rules: any text is a known zone or refused naming it; every known zone is accepted")
    func zoneRules() async throws {
        await propertyCheck(count: 1_000, input: Fuzz.input) { s in
            switch attempt({ () throws(ChimeError) in try ZoneRule.parse(s) }) {
            case .success(.fixed(let id)): #expect(TimeZone(identifier: id) != nil)
            case .success(.floating):
                #expect(["floating", "local"].contains(s.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()))
            case .failure(let error): expectNamesValue(error, [s])
            }
        }
        for id in Zones.known {
            guard case .fixed(let parsed) = try ZoneRule.parse(id) else {
                Issue.record("\(id) parsed as floating")
                continue
            }
            #expect(TimeZone(identifier: parsed)?.secondsFromGMT(for: .now) == Zones.zone(id).secondsFromGMT(for: .now), "\(id)")
        }
    }
}

// MARK: - Next occurrence

/// A weekly rule, a zone and a span of weeks starting at an instant that is often a few days
/// before a DST or offset transition, with times often chosen inside its gap or repeated hour.
struct WeeklyScenario: Sendable, CustomTestStringConvertible {
    var zoneID: String
    /// Fixed in `zoneID`, or floating with `zoneID` as the system zone.
    var floating: Bool
    var days: WeekdaySet
    var times: [LocalTime]
    var start: Int
    var weeks: Int

    var rule: ZoneRule { floating ? .floating : .fixed(zoneID) }
    /// For a fixed rule, some other system zone: it must not matter.
    var systemZone: TimeZone { floating ? Zones.zone(zoneID) : Zones.zone("Asia/Kathmandu") }
    var trigger: Trigger { .weekly(times: times, days: days, zone: rule) }
    var end: Int { start + weeks * 7 * 86_400 }

    var testDescription: String {
        "\(floating ? "floating in" : "fixed") \(zoneID), days \(days), times \(times), from \(start) "
            + "(\(Date(timeIntervalSince1970: TimeInterval(start)))) for \(weeks) weeks"
    }

    static let generator = Generator<WeeklyScenario, Shrink.None<WeeklyScenario>> { rng in
        let zoneID = Zones.random(&rng)
        let zone = Zones.zone(zoneID)
        let weeks = Int.random(in: 2...8, using: &rng)
        var start = Zones.instant(&rng)
        var transitionTimes: [Int] = []
        var days = WeekdaySet(rawValue: UInt8.random(in: 1...127, using: &rng))
        if chance(0.75, &rng), let t = Zones.transition(zone, &rng) {
            start = t - Int.random(in: 0..<(weeks * 7 * 86_400 - 3_600), using: &rng)
            // The wall-clock range the transition skips or repeats, and its edges.
            let before = zone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(t - 1)))
            let after = zone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(t)))
            let lo = t + min(before, after)
            let hi = t + max(before, after)
            for local in stride(from: floorDiv(lo + 59, 60) * 60 - 60, through: hi, by: 60) { transitionTimes.append(local) }
            // Mostly on the transition's own weekday.
            if chance(0.8, &rng), let day = WeekdaySet(isoWeekday: isoWeekday(ofDay: floorDiv(lo, 86_400))) { days.insert(day) }
        }
        var times: [LocalTime] = []
        for _ in 0..<Int.random(in: 1...4, using: &rng) {
            let local =
                !transitionTimes.isEmpty && chance(0.6, &rng)
                ? pick(transitionTimes, &rng) : Int.random(in: 0..<1_440, using: &rng) * 60
            let minuteOfDay = (local - floorDiv(local, 86_400) * 86_400) / 60
            times.append(LocalTime(hour: minuteOfDay / 60, minute: minuteOfDay % 60)!)
        }
        return WeeklyScenario(
            zoneID: zoneID,
            floating: chance(0.5, &rng),
            days: days,
            times: Array(Set(times)).sorted(),
            start: start,
            weeks: weeks
        )
    }
}

@Suite("Properties: next occurrence")
struct NextOccurrencePropertyTests {
    @Test("Weekly rules in any zone fire exactly when a walk over local days says: every selected day, never twice")
    func weeklyMatchesTheReference() async {
        await propertyCheck(count: 1_000, input: WeeklyScenario.generator) { s in
            let zone = Zones.zone(s.zoneID)
            let timeline = OffsetTimeline(zone, from: s.start - 4 * 86_400, to: s.end + 4 * 86_400)
            let expected = referenceWeekly(times: s.times, days: s.days, timeline: timeline, after: s.start, before: s.end)
            #expect(expected.count >= 2 * s.times.count - 1, "a span of two weeks or more has every weekday at least twice")

            // Walk nextOccurrence: each strictly after the last
            var walked: [Int] = []
            var cursor = Date(timeIntervalSince1970: TimeInterval(s.start))
            while walked.count <= expected.count + 5, let next = s.trigger.nextOccurrence(after: cursor, systemZone: s.systemZone),
                next.timeIntervalSince1970 < TimeInterval(s.end)
            {
                #expect(next > cursor, "after \(cursor): \(next)")
                guard next > cursor else { return }
                walked.append(Int(next.timeIntervalSince1970))
                cursor = next
            }
            #expect(
                walked == expected,
                "missing \(Set(expected).subtracting(walked).sorted()), extra \(Set(walked).subtracting(expected).sorted())"
            )

            // occurrences(after:count:) gives the same, and says truthfully how each was resolved
            let occurrences = s.trigger.occurrences(
                after: Date(timeIntervalSince1970: TimeInterval(s.start)),
                count: walked.count,
                systemZone: s.systemZone
            )
            #expect(occurrences.map { Int($0.instant.timeIntervalSince1970) } == walked)
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = zone
            for o in occurrences {
                let wall = LocalReading(o.instant, in: calendar)
                let t = Int(o.instant.timeIntervalSince1970)
                switch o.resolution {
                case .exact, .firstOfRepeated:
                    #expect(s.times.contains { $0.hour * 3_600 + $0.minute * 60 == wall.secondOfDay }, "\(o) reads \(wall.naive)")
                    #expect(s.days.contains(isoWeekday: wall.isoWeekday), "\(o) is on ISO weekday \(wall.isoWeekday)")
                    let r = timeline.resolve(wall.naive)
                    #expect(r?.instant == t)
                    #expect(r?.kind == (o.resolution == .exact ? .exact : .repeated), "\(o)")
                case .shiftedForward(let seconds, let requested):
                    #expect(s.times.contains(requested))
                    let local = wall.naive - seconds
                    #expect(floorDiv(local, 86_400) * 86_400 + requested.hour * 3_600 + requested.minute * 60 == local, "\(o)")
                    #expect(s.days.contains(isoWeekday: isoWeekday(ofDay: floorDiv(local, 86_400))), "\(o)")
                    let r = timeline.resolve(local)
                    #expect(r?.instant == t)
                    #expect(r?.kind == .gap(shift: seconds), "\(o)")
                }
            }
        }
    }

    @Test("Floating rules in the system zone fire as fixed rules in that zone")
    func floatingIsFixedInTheSystemZone() async {
        await propertyCheck(count: 300, input: WeeklyScenario.generator) { s in
            let floating = Trigger.weekly(times: s.times, days: s.days, zone: .floating)
            let fixed = Trigger.weekly(times: s.times, days: s.days, zone: .fixed(s.zoneID))
            let start = Date(timeIntervalSince1970: TimeInterval(s.start))
            #expect(
                floating.occurrences(after: start, count: 20, systemZone: Zones.zone(s.zoneID))
                    == fixed.occurrences(after: start, count: 20, systemZone: Zones.zone("Pacific/Apia"))
            )
        }
    }

    struct AnyTrigger: Sendable, CustomTestStringConvertible {
        var trigger: Trigger
        var instant: Date
        var systemZoneID: String
        var testDescription: String { "\(trigger) after \(instant.timeIntervalSince1970) (\(instant)), system zone \(systemZoneID)" }
    }

    static let anyTrigger = Generator<AnyTrigger, Shrink.None<AnyTrigger>> { rng in
        let zoneID = Zones.random(&rng)
        let zone = Zones.zone(zoneID)
        // Instants: 1971-2037 to the microsecond, at a transition ± a little, or far out.
        var seconds: Double
        switch Int.random(in: 0...9, using: &rng) {
        case 0...2:
            seconds =
                Date(micros: Int64(Zones.instant(&rng)) * 1_000_000 + Int64.random(in: 0..<1_000_000, using: &rng)).timeIntervalSince1970
        case 3...4: seconds = Double(Zones.instant(&rng)) + Double.random(in: 0..<1, using: &rng)
        case 5...7:
            seconds = Double(Zones.transition(zone, &rng) ?? Zones.instant(&rng)) + Double(Int.random(in: -7_200...7_200, using: &rng))
        case 8: seconds = Double.random(in: -1e11...1e11, using: &rng)
        default:
            seconds = pick([0, -1, 1e12, -1e12, Date.distantPast.timeIntervalSince1970, Date.distantFuture.timeIntervalSince1970], &rng)
        }
        let instant = Date(timeIntervalSince1970: seconds)
        let trigger: Trigger
        switch Int.random(in: 0...2, using: &rng) {
        case 0:
            trigger = .once(instant.addingTimeInterval(Double(Int.random(in: -3...3, using: &rng))))
        case 1:
            let period =
                chance(0.8, &rng) ? Int64.random(in: 1...(366 * 86_400), using: &rng) : Int64.random(in: 1...Int64.max, using: &rng)
            let anchor = instant.addingTimeInterval(Double.random(in: -1e9...1e6, using: &rng))
            trigger = .interval(seconds: period, anchor: anchor)
        default:
            let times = (0..<Int.random(in: 1...3, using: &rng)).map { _ in
                LocalTime(hour: Int.random(in: 0...23, using: &rng), minute: Int.random(in: 0...59, using: &rng))!
            }
            trigger = .weekly(
                times: Array(Set(times)).sorted(),
                days: WeekdaySet(rawValue: UInt8.random(in: 1...127, using: &rng)),
                zone: chance(0.5, &rng) ? .floating : .fixed(Zones.random(&rng))
            )
        }
        return AnyTrigger(trigger: trigger, instant: instant, systemZoneID: zoneID)
    }

    @Test("Any trigger at any instant: the next occurrence is strictly after it, also to the store's microsecond")
    func strictlyAfter() async {
        await propertyCheck(count: 3_000, input: Self.anyTrigger) { c in
            let zone = Zones.zone(c.systemZoneID)
            let next = c.trigger.nextOccurrence(after: c.instant, systemZone: zone)
            if let next {
                #expect(next > c.instant)
                // The store keeps instants in microseconds: from an instant it can hold, the next
                // one is later there too, and the one after an occurrence read back is a later one.
                if abs(c.instant.timeIntervalSince1970) < 1e11 && abs(next.timeIntervalSince1970) < 1e11 {
                    if Date(micros: c.instant.micros) == c.instant {
                        #expect(next.micros > c.instant.micros, "next \(next.micros) µs after \(c.instant.micros) µs")
                    }
                    if c.trigger.isRecurring {
                        let again = c.trigger.nextOccurrence(after: Date(micros: next.micros), systemZone: zone)
                        #expect(again.map { $0.micros > next.micros } ?? true, "after \(next.micros) µs: \(again?.micros ?? 0) µs")
                    }
                }
            }
            switch c.trigger {
            case .once(let date): #expect(next == (date > c.instant ? date : nil))
            case .interval: #expect(next != nil)
            case .weekly:
                // Within the years a person schedules in, a weekly rule always has a next one, within 8 days.
                if abs(c.instant.timeIntervalSince1970) < 4e9 {
                    #expect(next != nil)
                    #expect(next.map { $0.timeIntervalSince(c.instant) <= 8 * 86_400 } ?? false)
                }
            case .calendar, .bounded:
                break  // not generated here (CalendarRuleTests)
            }
            // Successive occurrences strictly increase.
            let occurrences = c.trigger.occurrences(after: c.instant, count: 8, systemZone: zone).map(\.instant)
            #expect(zip(occurrences, occurrences.dropFirst()).allSatisfy { $0 < $1 })
        }
    }

    struct IntervalCase: Sendable, CustomTestStringConvertible {
        var anchorMicros: Int64
        var period: Int64
        var afterMicros: Int64
        var testDescription: String { "every \(period) s from \(anchorMicros) µs, after \(afterMicros) µs" }
    }

    static let intervals = Generator<IntervalCase, Shrink.None<IntervalCase>> { rng in
        let anchor = Int64(Zones.instant(&rng)) * 1_000_000 + (chance(0.5, &rng) ? 0 : Int64.random(in: 0..<1_000_000, using: &rng))
        let anyPeriod = Int64.random(in: 1...(366 * 86_400), using: &rng)
        let period = pick([1, 45, 60, 900, 3_600, 86_400, 604_800, 366 * 86_400, anyPeriod] as [Int64], &rng)
        // Occurrences up to 2100: from 2106 on, a Date no longer holds every microsecond.
        let periods = Int64.random(in: -10...min(20_000, (4_102_444_800_000_000 - anchor) / (period * 1_000_000)), using: &rng)
        // Just before, at, just after an occurrence, or anywhere in between.
        let between = Int64.random(in: 0..<(period * 1_000_000), using: &rng)
        let jitter = pick([-1, 0, 1, between] as [Int64], &rng)
        return IntervalCase(anchorMicros: anchor, period: period, afterMicros: anchor + periods * period * 1_000_000 + jitter)
    }

    @Test("Interval occurrences are anchor + k·period, the first after the input, exactly one period apart")
    func intervalsArePeriodApart() async {
        await propertyCheck(count: 3_000, input: Self.intervals) { c in
            let trigger = Trigger.interval(seconds: c.period, anchor: Date(micros: c.anchorMicros))
            let p = c.period * 1_000_000
            let d = c.afterMicros - c.anchorMicros
            let k = max(1, (d >= 0 ? d / p : -((-d + p - 1) / p)) + 1)
            let occurrences = trigger.occurrences(after: Date(micros: c.afterMicros), count: 5, systemZone: Zones.zone("UTC"))
            #expect(occurrences.map(\.instant.micros) == (0..<5).map { c.anchorMicros + (k + $0) * p })
            #expect(occurrences.allSatisfy { $0.resolution == .exact })
        }
    }

    static let storeMicros = Generator<Int64, Shrink.None<Int64>> { rng in
        // Within 2^33 seconds of 2001 (1729 to 2273), where a Double still tells microseconds apart.
        let span: Int64 = 8_589_934_591_000_000
        return 978_307_200_000_000 + Int64.random(in: -span...span, using: &rng)
    }

    @Test("An instant read back from the store is the instant that was stored, to the microsecond")
    func storeMicrosRoundTrip() async {
        // Found by `strictlyAfter`: every 29,456,707 s from 1809, an occurrence stored as m + 1
        // came back as m, a microsecond before itself, and was due again.
        for m: Int64 in [-4_342_609_893_114_392, -4_342_609_893_114_391, 0, -1, 1, 978_307_200_000_000, 4_102_444_800_000_001] {
            #expect(Date(micros: m).micros == m, "\(m) µs")
        }
        await propertyCheck(count: 10_000, input: Self.storeMicros) { m in
            #expect(Date(micros: m).micros == m, "\(m) µs")
            #expect(Date(micros: m) < Date(micros: m + 1), "\(m) µs and the next")
        }
    }
}

// MARK: - What the properties found

@Suite("Properties: examples of what they found")
struct PropertyFindingsTests {
    @Test("A value with a line break or a control character is named on one line, escaped")
    func controlCharactersAreEscaped() {
        #expect(
            thrownChimeError { _ = try TimeParsing.duration("25m\nrm -rf") }?.message
                == "invalid duration '25m\\nrm -rf': expected a positive duration such as 90s, 25m, 1h30m or 2d: "
                + "lowercase units w, d, h, m, s, each at most once, largest first"
        )
        #expect(
            thrownChimeError { _ = try LocalTime.parse("8:6\r\n0") }?.message
                == "invalid time '8:6\\r\\n0': expected HH:MM from 00:00 to 23:59"
        )
        let messages = [
            thrownChimeError { _ = try TimeParsing.instant("\u{1B}[2J2026-12-24", now: utcInstant(2026, 1, 1), zone: TestZones.utc) },
            thrownChimeError { _ = try WeekdaySet.parse("mon\u{2028}fri") },
            thrownChimeError { _ = try ZoneRule.parse("Europe/\u{0}Berlin") },
            thrownChimeError { _ = try TimeParsing.recurrence(["mon\u{7}", "08:00"], now: utcInstant(2026, 1, 1), zone: .floating) },
        ].map { $0?.message ?? "no error" }
        for (message, value) in zip(messages, ["\u{1B}[2J2026-12-24", "mon\u{2028}fri", "Europe/\u{0}Berlin", "mon\u{7}"]) {
            #expect(!message.contains { $0.isNewline || $0.unicodeScalars.contains { $0.properties.generalCategory == .control } })
            #expect(message.contains("'" + ChimeError.escapingControlCharacters(value) + "'"), "\(message)")
        }
        // Letters of any script are kept as typed.
        #expect(
            thrownChimeError { _ = try TimeParsing.duration("5 Minuten ⏰") }?.message.hasPrefix("invalid duration '5 Minuten ⏰'") == true
        )
    }

    /// Found as: `interval(seconds: 8028844, anchor: 1988-11-14 01:32:08…) after 779545962.280035`
    /// gave an occurrence whose microsecond, read back as the store does, had that same
    /// occurrence as its next one. Counted in floating point, `anchor + k·period` drifts from the
    /// microsecond grid once instants pass 2^31 s (2038-01-19): a reminder made in 2026 then
    /// comes back as due at the microsecond it was just recorded at (the store would keep
    /// it due there for ever) or a microsecond later (fired twice).
    @Test("An hourly reminder made in 2026 still steps an hour at a time, at the microsecond, after 2038")
    func intervalAfter2038StaysOnItsMicrosecond() {
        let anchor: Int64 = 1_778_426_986_378_657  // 2026-05-10T15:29:46.378657Z
        let trigger = Trigger.interval(seconds: 3_600, anchor: Date(micros: anchor))
        let due: Int64 = 2_199_997_786_378_657  // 2039-09-18T22:29:46.378657Z, an occurrence
        #expect((due - anchor) % 3_600_000_000 == 0)
        // Before the fix: the same microsecond again.
        #expect(trigger.nextOccurrence(after: Date(micros: due), systemZone: TestZones.utc)?.micros == due + 3_600_000_000)
        #expect(trigger.nextOccurrence(after: Date(micros: due - 1), systemZone: TestZones.utc)?.micros == due)
        // As the store walks it: one hour at a time, each read back from its microseconds.
        var cursor = due
        for _ in 0..<1_000 {
            guard let next = trigger.nextOccurrence(after: Date(micros: cursor), systemZone: TestZones.utc)?.micros else {
                Issue.record("no occurrence after \(cursor)")
                return
            }
            #expect(next == cursor + 3_600_000_000)
            guard next == cursor + 3_600_000_000 else { return }
            cursor = next
        }
    }
}

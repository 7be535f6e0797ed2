import ChimeCore
import ChimeTesting
import Foundation
import Testing

/// Python's zoneinfo as the reference for the new time forms: it enumerates each rule on its
/// own (months, years, days, the next weekday) and maps local times to instants with `fold=0`,
/// which is RFC 5545's rule (PEP 495: a time in a gap is read with the offset before it, a
/// repeated time is its first occurrence). Chime's answers must be the same instants.
enum ZoneinfoReference {
    /// Runs python3 on `cases` (JSON) and returns, for each case, the instants (seconds since 1970).
    static func instants(_ cases: [[String: Any]]) throws -> [[Int]] {
        let script = #"""
            import json, sys
            from datetime import datetime, date, timedelta, timezone
            from zoneinfo import ZoneInfo

            def at(z, d, hm):
                h, m = map(int, hm.split(":"))
                return int(datetime(d.year, d.month, d.day, h, m, tzinfo=z, fold=0).timestamp())

            def days_in_month(y, m):
                return ((date(y + (m == 12), m % 12 + 1, 1)) - date(y, m, 1)).days

            def run(c):
                z = ZoneInfo(c["zone"])
                after = c["after"]
                today = datetime.fromtimestamp(after, z).date()
                kind = c["kind"]
                out = []
                if kind == "monthly":
                    y, m = today.year, today.month - 1
                    while len(out) < c["count"]:
                        if m == 0: y, m = y - 1, 12
                        if c["day"] <= days_in_month(y, m):
                            t = at(z, date(y, m, c["day"]), c["time"])
                            if t > after: out.append(t)
                        y, m = (y + 1, 1) if m == 12 else (y, m + 1)
                elif kind == "yearly":
                    y = today.year - 1
                    while len(out) < c["count"]:
                        if c["day"] <= days_in_month(y, c["month"]):
                            t = at(z, date(y, c["month"], c["day"]), c["time"])
                            if t > after: out.append(t)
                        y += 1
                elif kind == "daily":
                    d = today - timedelta(days=1)
                    until = date.fromisoformat(c["until"]) if "until" in c else date.max - timedelta(days=2)
                    while len(out) < c["count"] and d <= until:
                        t = at(z, d, c["time"])
                        if t > after: out.append(t)
                        d += timedelta(days=1)
                elif kind == "on":  # a day word: today, tomorrow, a weekday, a date
                    word = c["word"]
                    if word == "today": days = [today]
                    elif word == "tomorrow": days = [today + timedelta(days=1)]
                    elif "-" in word: days = [date.fromisoformat(word)]
                    else:
                        wd = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"].index(word) + 1
                        days = [today + timedelta(days=k) for k in range(14) if (today + timedelta(days=k)).isoweekday() == wd]
                    out = [next(t for t in (at(z, d, c["time"]) for d in days) if t > after)]
                return out

            print(json.dumps([run(c) for c in json.load(sys.stdin)]))
            """#
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script]
        // Python reads the zones from the same tzdata as Foundation (no pip package).
        // Its own home and XDG directories (IsolatedEnvironment), removed after it ran.
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("chime-zoneinfo-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        var environment = try IsolatedEnvironment.variables(root: root)
        environment["PYTHONTZPATH"] = "/usr/share/zoneinfo"
        process.environment = environment
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        input.fileHandleForWriting.write(try JSONSerialization.data(withJSONObject: cases))
        try input.fileHandleForWriting.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0, let result = try JSONSerialization.jsonObject(with: data) as? [[Int]] else {
            throw ChimeError(.failure, "python3 failed (\(process.terminationStatus)): \(String(decoding: data, as: UTF8.self))")
        }
        return result
    }
}

@Suite("New time forms against Python's zoneinfo, across DST")
struct ZoneinfoComparisonTests {
    /// A rule or a spoken time, as Chime reads it, and the same thing for the Python reference.
    struct Case: CustomTestStringConvertible {
        var zone: String
        var after: Date
        var chime: (TimeZone) throws -> [Date]
        var python: [String: Any]
        var testDescription: String
    }

    static func rule(_ words: String, zone: String, after: Date, count: Int, countLimit: Int? = nil) -> (TimeZone) throws -> [Date] {
        { tz in
            let trigger = try TimeParsing.recurrence([words], now: after, zone: .fixed(zone), count: countLimit)
            return trigger.occurrences(after: after, count: count, systemZone: tz).map(\.instant)
        }
    }

    static func spoken(_ text: String, after: Date) -> (TimeZone) throws -> [Date] {
        { tz in [try TimeParsing.spoken(text, now: after, zone: tz).instant] }
    }

    static func cases() -> [Case] {
        var out: [Case] = []
        func add(_ zone: String, _ words: String, after: Date, python: [String: Any], count: Int = 12, countLimit: Int? = nil) {
            var p = python
            p["zone"] = zone
            p["after"] = Int(after.timeIntervalSince1970)
            p["count"] = p["count"] ?? count
            out.append(
                Case(
                    zone: zone,
                    after: after,
                    chime: rule(words, zone: zone, after: after, count: count, countLimit: countLimit),
                    python: p,
                    testDescription: "\(zone): every \(words)"
                )
            )
        }
        func say(_ zone: String, _ text: String, after: Date, word: String, time: String) {
            out.append(
                Case(
                    zone: zone,
                    after: after,
                    chime: spoken(text, after: after),
                    python: ["zone": zone, "after": Int(after.timeIntervalSince1970), "kind": "on", "word": word, "time": time],
                    testDescription: "\(zone): at \(text) from \(isoZ(after))"
                )
            )
        }
        let ny = TestZones.newYork
        let berlin = TestZones.berlin
        let lordHowe = TestZones.lordHowe
        let apia = TestZones.apia
        // Monthly on the transition days: 02:30 in the gap, 01:30 repeated (New York 2026-03-08, 2026-11-01).
        add(
            "America/New_York",
            "month on 8 02:30",
            after: localInstant(ny, 2026, 1, 1),
            python: ["kind": "monthly", "day": 8, "time": "02:30"]
        )
        add(
            "America/New_York",
            "month on 1 01:30",
            after: localInstant(ny, 2026, 1, 1),
            python: ["kind": "monthly", "day": 1, "time": "01:30"]
        )
        // Berlin: 2026-03-29 (gap) and 2026-10-25 (repeat); the 31st skips short months.
        add(
            "Europe/Berlin",
            "month on 29 02:30",
            after: localInstant(berlin, 2026, 1, 15),
            python: ["kind": "monthly", "day": 29, "time": "02:30"]
        )
        add(
            "Europe/Berlin",
            "month on 25 02:30",
            after: localInstant(berlin, 2026, 1, 1),
            python: ["kind": "monthly", "day": 25, "time": "02:30"]
        )
        add(
            "Europe/Berlin",
            "month on 31 09:00",
            after: localInstant(berlin, 2026, 1, 1),
            python: ["kind": "monthly", "day": 31, "time": "09:00"]
        )
        // Lord Howe's half-hour shifts: 2026-10-04 02:15 (gap), 2026-04-05 01:45 (repeat).
        add(
            "Australia/Lord_Howe",
            "month on 4 02:15",
            after: localInstant(lordHowe, 2026, 1, 1),
            python: ["kind": "monthly", "day": 4, "time": "02:15"]
        )
        add(
            "Australia/Lord_Howe",
            "month on 5 01:45",
            after: localInstant(lordHowe, 2026, 1, 1),
            python: ["kind": "monthly", "day": 5, "time": "01:45"]
        )
        // Apia skipped 2011-12-30 entirely.
        add(
            "Pacific/Apia",
            "month on 30 08:00",
            after: localInstant(apia, 2011, 10, 1),
            python: ["kind": "monthly", "day": 30, "time": "08:00"],
            count: 6
        )
        // Yearly: the transition dates move from year to year; 02-29 only in leap years.
        add(
            "America/New_York",
            "year on 03-08 02:30",
            after: localInstant(ny, 2025, 1, 1),
            python: ["kind": "yearly", "month": 3, "day": 8, "time": "02:30"],
            count: 10
        )
        add(
            "Europe/Berlin",
            "year on 10-25 02:30",
            after: localInstant(berlin, 2025, 1, 1),
            python: ["kind": "yearly", "month": 10, "day": 25, "time": "02:30"],
            count: 10
        )
        add(
            "Europe/Berlin",
            "year on 02-29 09:00",
            after: localInstant(berlin, 2026, 1, 1),
            python: ["kind": "yearly", "month": 2, "day": 29, "time": "09:00"],
            count: 4
        )
        // Until (the day included) and count, over the transitions.
        add(
            "America/New_York",
            "day 02:30 until 2026-03-10",
            after: localInstant(ny, 2026, 3, 5),
            python: ["kind": "daily", "time": "02:30", "until": "2026-03-10"],
            count: 20
        )
        add(
            "Australia/Lord_Howe",
            "day 02:15 until 2026-10-06",
            after: localInstant(lordHowe, 2026, 10, 1),
            python: ["kind": "daily", "time": "02:15", "until": "2026-10-06"],
            count: 20
        )
        add(
            "Europe/Berlin",
            "day 02:30",
            after: localInstant(berlin, 2026, 10, 22),
            python: ["kind": "daily", "time": "02:30", "count": 5],
            count: 20,
            countLimit: 5
        )
        // Spoken one-shots landing on transition days.
        say("America/New_York", "sun 02:30", after: localInstant(ny, 2026, 3, 6, 12), word: "sun", time: "02:30")
        say("America/New_York", "sunday 2:30am", after: localInstant(ny, 2026, 3, 6, 12), word: "sun", time: "02:30")
        say("America/New_York", "tomorrow 01:30", after: localInstant(ny, 2026, 10, 31, 12), word: "tomorrow", time: "01:30")
        say("America/New_York", "2026-03-08", after: localInstant(ny, 2026, 3, 1), word: "2026-03-08", time: "09:00")
        say("Europe/Berlin", "tomorrow 02:30", after: localInstant(berlin, 2026, 3, 28, 12), word: "tomorrow", time: "02:30")
        say("Europe/Berlin", "2026-10-25 2:30am", after: localInstant(berlin, 2026, 10, 1), word: "2026-10-25", time: "02:30")
        say("Europe/Berlin", "sun 09:00", after: localInstant(berlin, 2026, 3, 29, 10), word: "sun", time: "09:00")
        say("Australia/Lord_Howe", "sun 2:15am", after: localInstant(lordHowe, 2026, 10, 1), word: "sun", time: "02:15")
        say("Pacific/Apia", "fri 08:00", after: localInstant(apia, 2011, 12, 27), word: "fri", time: "08:00")
        say("Pacific/Apia", "today 9pm", after: localInstant(apia, 2011, 12, 29, 10), word: "today", time: "21:00")
        return out
    }

    @Test("Monthly, yearly, until, count and spoken times give zoneinfo's instants")
    func sameInstantsAsZoneinfo() throws {
        let cases = Self.cases()
        let expected = try ZoneinfoReference.instants(cases.map(\.python))
        #expect(expected.count == cases.count)
        for (c, reference) in zip(cases, expected) {
            let got = try c.chime(TestZones.zone(c.zone))
            #expect(!reference.isEmpty, "\(c.testDescription)")
            #expect(
                got.map { Int($0.timeIntervalSince1970) } == reference,
                "\(c.testDescription): \(got.map(isoZ)) vs \(reference.map { isoZ(Date(timeIntervalSince1970: TimeInterval($0))) })"
            )
        }
    }

    @Test("The reference itself sees the transitions: New York's 02:30 on 2026-03-08 is 03:30 EDT")
    func referenceSeesTheGap() throws {
        let after = localInstant(TestZones.newYork, 2026, 3, 1)
        let reference = try ZoneinfoReference.instants([
            ["zone": "America/New_York", "after": Int(after.timeIntervalSince1970), "kind": "on", "word": "2026-03-08", "time": "02:30"]
        ])
        #expect(reference == [[Int(utcInstant(2026, 3, 8, 7, 30).timeIntervalSince1970)]])
    }
}

@Suite("Calendar rules, rule ends and spoken times")
struct CalendarRuleTests {
    let utc = TestZones.utc

    @Test("A month without the day is skipped, as RFC 5545 has it: the 31st fires in seven months a year")
    func thirtyFirstSkipsShortMonths() {
        let rule = Trigger.calendar(CalendarRule(month: nil, day: 31, times: [hm("09:00")], zone: .fixed("UTC")))
        let all = walkOccurrences(rule, from: utcInstant(2026, 1, 1), until: utcInstant(2027, 1, 1), zone: utc)
        #expect(all.map { ZoneMath.civil($0, in: utc).local.month } == [1, 3, 5, 7, 8, 10, 12])
    }

    @Test("02-29 fires in leap years only, and over 2100 (not a leap year) waits eight years")
    func leapDay() {
        let rule = Trigger.calendar(CalendarRule(month: 2, day: 29, times: [hm("09:00")], zone: .fixed("UTC")))
        let years = rule.occurrences(after: utcInstant(2093, 1, 1), count: 3, systemZone: utc).map {
            ZoneMath.civil($0.instant, in: utc).local.year
        }
        #expect(years == [2096, 2104, 2108])
    }

    @Test("Several times a day, in order; a day that never exists (02-30) has no occurrence")
    func timesAndImpossibleDays() {
        let rule = Trigger.calendar(CalendarRule(month: nil, day: 1, times: [hm("18:00"), hm("08:00")], zone: .fixed("UTC")))
        let occ = rule.occurrences(after: utcInstant(2026, 1, 1, 12), count: 3, systemZone: utc).map { isoZ($0.instant) }
        #expect(occ == [utcInstant(2026, 1, 1, 18), utcInstant(2026, 2, 1, 8), utcInstant(2026, 2, 1, 18)].map(isoZ))
        let never = Trigger.calendar(CalendarRule(month: 2, day: 30, times: [hm("08:00")], zone: .fixed("UTC")))
        #expect(never.nextOccurrence(after: utcInstant(2026, 1, 1), systemZone: utc) == nil)
    }

    @Test("until keeps that day's occurrences and none after; count stops after that many from the start")
    func ends() throws {
        let start = utcInstant(2026, 1, 1, 12)
        let until = try TimeParsing.recurrence(["day", "09:00", "until", "2026-01-04"], now: start, zone: .fixed("UTC"))
        #expect(until.occurrences(after: start, count: 10, systemZone: utc).count == 3)  // Jan 2, 3, 4
        let counted = try TimeParsing.recurrence(["month", "on", "1", "09:00"], now: start, zone: .fixed("UTC"), count: 3)
        let all = counted.occurrences(after: start, count: 10, systemZone: utc)
        #expect(
            all.map { isoZ($0.instant) } == [utcInstant(2026, 2, 1, 9), utcInstant(2026, 3, 1, 9), utcInstant(2026, 4, 1, 9)].map(isoZ)
        )
        // Asked from the middle (the runner after a firing), the count still counts from the start.
        #expect(counted.nextOccurrence(after: utcInstant(2026, 3, 1, 9), systemZone: utc) == utcInstant(2026, 4, 1, 9))
        #expect(counted.nextOccurrence(after: utcInstant(2026, 4, 1, 9), systemZone: utc) == nil)
        let interval = try TimeParsing.recurrence(["2h"], now: start, zone: .floating, count: 2)
        #expect(interval.occurrences(after: start, count: 5, systemZone: utc).count == 2)
    }

    @Test(
        "Rules parse to what they say",
        arguments: [
            ("month on 1 09:00", "every month on 1 09:00"),
            ("monthly 15 at 08:00,20:00", "every month on 15 08:00,20:00"),
            ("year on 12-24 18:00", "every year on 12-24 18:00"),
            ("yearly on 02-29 9:00", "every year on 02-29 09:00"),
            ("day 09:00 until 2027-01-31", "every day 09:00 until 2027-01-31"),
            ("mon-fri at 08:00 until 2027-01-31", "every weekday 08:00 until 2027-01-31"),
            ("2h until 2027-01-31", "every 2h until 2027-01-31"),
            ("day 21:00 count 10", "every day 21:00 count 10"),
        ]
    )
    func summaries(_ words: String, _ summary: String) throws {
        let trigger = try TimeParsing.recurrence([words], now: utcInstant(2026, 11, 1), zone: .floating)
        #expect(trigger.summary == summary)
        #expect(trigger.isRecurring)
    }

    @Test(
        "Bad rules are refused, naming the value",
        arguments: [
            ("month on 32 09:00", "invalid day of the month '32'"),
            ("month on 0 09:00", "invalid day of the month '0'"),
            ("year on 02-30 09:00", "invalid day of the year '02-30'"),
            ("year on 13-01 09:00", "invalid day of the year '13-01'"),
            ("year on 12-24", "missing time after '12-24'"),
            ("month on 1 25:00", "invalid time '25:00'"),
            ("day 09:00 until 2027-02-30", "invalid until date '2027-02-30'"),
            ("day 09:00 until", "'until' needs one date after it"),
        ]
    )
    func badRules(_ words: String, _ message: String) {
        #expect {
            try TimeParsing.recurrence([words], now: utcInstant(2026, 11, 1), zone: .floating)
        } throws: { error in
            (error as? ChimeError).map { $0.code == .usage && $0.message.hasPrefix(message) } ?? false
        }
    }

    @Test("A listing's rules import as the same rules ('chime list --json' into 'chime import')")
    func listedRulesImport() throws {
        let now = utcInstant(2026, 11, 1)
        let rules: [Trigger] = [
            .calendar(CalendarRule(month: nil, day: 31, times: [hm("09:00")], zone: .fixed("Europe/Berlin"))),
            .calendar(CalendarRule(month: 12, day: 24, times: [hm("18:00")], zone: .floating)),
            .bounded(.weekly(times: [hm("09:00")], days: .weekdays, zone: .fixed("America/New_York")), .until(day: 20_849)),
            .bounded(.calendar(CalendarRule(month: nil, day: 1, times: [hm("09:00")], zone: .floating)), .count(10, start: now)),
        ]
        for rule in rules {
            let next = try #require(rule.nextOccurrence(after: now, systemZone: TestZones.utc))
            let listed = #"[{"title": "x", "trigger": "\#(rule.summary)", "next_due": "\#(TimeText.iso(next))"}]"#
            let imported = try ReminderImport.reminders(from: Data(listed.utf8), source: "test", now: now)
            #expect(imported.map(\.trigger) == [rule], "\(rule.summary)")
        }
    }

    @Test("--count is 1 to 1000, and not with until")
    func badCounts() {
        let cases = [("day 09:00", 0), ("day 09:00", 1_001), ("day 09:00 until 2027-01-01", 3), ("day 09:00 count 2", 3)]
        for (words, count) in cases {
            #expect(throws: ChimeError.self) {
                try TimeParsing.recurrence([words], now: utcInstant(2026, 11, 1), zone: .floating, count: count)
            }
        }
    }

    @Test("12-hour clocks: 9am, 9:30pm, 12am is midnight, 12pm noon; 13pm, 0am and 9:5pm are not")
    func twelveHour() {
        #expect(TimeParsing.twelveHourClock("9am") == hm("09:00"))
        #expect(TimeParsing.twelveHourClock("9:30PM") == hm("21:30"))
        #expect(TimeParsing.twelveHourClock("12am") == hm("00:00"))
        #expect(TimeParsing.twelveHourClock("12pm") == hm("12:00"))
        for bad in ["13pm", "0am", "9:5pm", "9", "am", "9:60am"] { #expect(TimeParsing.twelveHourClock(bad) == nil, "\(bad)") }
    }

    @Test("A day alone means 09:00 and says so; a day and a time do not")
    func dateOnly() throws {
        let now = localInstant(TestZones.berlin, 2026, 11, 23, 10)
        let date = try TimeParsing.spoken("2026-12-24", now: now, zone: TestZones.berlin)
        #expect(date.dateOnly)
        #expect(date.instant == localInstant(TestZones.berlin, 2026, 12, 24, 9))
        let tomorrow = try TimeParsing.spoken("tomorrow", now: now, zone: TestZones.berlin)
        #expect(tomorrow.dateOnly && tomorrow.instant == localInstant(TestZones.berlin, 2026, 11, 24, 9))
        #expect(try !TimeParsing.spoken("tomorrow 9am", now: now, zone: TestZones.berlin).dateOnly)
        // Monday 10:00: "mon 09:00" has passed today, so it is next Monday; "mon 11:00" is today.
        #expect(
            try TimeParsing.spoken("mon 09:00", now: now, zone: TestZones.berlin).instant == localInstant(TestZones.berlin, 2026, 11, 30, 9)
        )
        #expect(
            try TimeParsing.spoken("mon 11:00", now: now, zone: TestZones.berlin).instant
                == localInstant(TestZones.berlin, 2026, 11, 23, 11)
        )
        // The older forms still read as before.
        #expect(
            try TimeParsing.spoken("2026-12-24 18:00", now: now, zone: TestZones.berlin).instant
                == localInstant(TestZones.berlin, 2026, 12, 24, 18)
        )
        #expect(try TimeParsing.spoken("2026-12-24T17:00Z", now: now, zone: TestZones.berlin).instant == utcInstant(2026, 12, 24, 17))
    }

    @Test("A spoken time says how DST resolved it, for the command's note: shifted in a gap, the first of a repeat")
    func spokenResolution() throws {
        let berlin = TestZones.berlin
        let gap = try TimeParsing.spoken("tomorrow 02:30", now: localInstant(berlin, 2026, 3, 28, 12), zone: berlin)
        #expect(gap.resolution == .shiftedForward(seconds: 3_600, requested: hm("02:30")))
        let bare = try TimeParsing.spoken("02:30", now: localInstant(berlin, 2026, 3, 28, 12), zone: berlin)
        #expect(bare.instant == gap.instant && bare.resolution == gap.resolution)
        let repeated = try TimeParsing.spoken("sun 2:30am", now: localInstant(berlin, 2026, 10, 24, 12), zone: berlin)
        #expect(repeated.resolution == .firstOfRepeated)
        #expect(repeated.instant == utcInstant(2026, 10, 25, 0, 30))
        #expect(try TimeParsing.spoken("mon 09:00", now: localInstant(berlin, 2026, 10, 24, 12), zone: berlin).resolution == .exact)
    }

    @Test(
        "Spoken times that are wrong or past are refused, naming them",
        arguments: [
            ("today 09:00", "'today 09:00' is in the past"),
            ("2026-11-01", "'2026-11-01' (at 09:00) is in the past"),
            ("tomorrow 25:00", "invalid time of day '25:00'"),
            ("2026-02-30", "invalid date '2026-02-30'"),
            ("someday 09:00", "invalid time 'someday 09:00': expected HH:MM, 9am"),
            ("9 am", "invalid time '9 am': did you mean '9am'?"),
            ("25:00", "invalid time '25:00': expected HH:MM from 00:00 to 23:59"),
        ]
    )
    func badSpoken(_ text: String, _ message: String) {
        #expect {
            try TimeParsing.spoken(text, now: localInstant(TestZones.berlin, 2026, 11, 23, 10), zone: TestZones.berlin)
        } throws: { error in
            (error as? ChimeError).map { $0.code == .usage && $0.message.hasPrefix(message) } ?? false
        }
    }

    @Test("chime at reads a day and a time typed as two words only when a title follows")
    func wordCount() {
        #expect(TimeParsing.spokenWordCount(["tomorrow", "09:00", "Call"]) == 2)
        #expect(TimeParsing.spokenWordCount(["mon", "9am", "Plan", "body"]) == 2)
        #expect(TimeParsing.spokenWordCount(["2026-12-24", "18:00:30", "Presents"]) == 2)
        #expect(TimeParsing.spokenWordCount(["2026-12-24", "Presents", "body"]) == 1)
        #expect(TimeParsing.spokenWordCount(["tomorrow", "09:00"]) == 1)  // then 09:00 is the title
        #expect(TimeParsing.spokenWordCount(["14:30", "09:00", "x"]) == 1)
    }
}

import ChimeCore
import Foundation
import Testing

/// The ChimeError thrown by `body`, or nil.
func thrownChimeError(_ body: () throws -> Void) -> ChimeError? {
    do {
        try body()
        return nil
    } catch {
        return error as? ChimeError
    }
}

@Suite("Parsing: times, days, zones")
struct ValueParsingTests {
    @Test(
        "LocalTime accepts H:MM and HH:MM",
        arguments: [
            ("08:00", 8, 0), ("8:00", 8, 0), ("23:59", 23, 59), ("00:00", 0, 0), (" 7:05 ", 7, 5),
        ]
    )
    func localTimeAccepted(_ s: String, _ h: Int, _ m: Int) throws {
        #expect(try LocalTime.parse(s) == LocalTime(hour: h, minute: m))
    }

    @Test(
        "LocalTime rejects the rest, naming the value",
        arguments: [
            "25:00", "24:00", "12:60", "8", "08:0", "008:00", "8:00pm", "", "a:bc", "-1:00", "12:00:00",
        ]
    )
    func localTimeRejected(_ s: String) {
        let e = thrownChimeError { _ = try LocalTime.parse(s) }
        #expect(e == ChimeError.invalid("time", s, expected: "HH:MM from 00:00 to 23:59"))
        #expect(e?.code == .usage)
    }

    @Test("The 25:00 message reads as documented")
    func localTimeMessage() {
        #expect(
            thrownChimeError { _ = try LocalTime.parse("25:00") }?.message == "invalid time '25:00': expected HH:MM from 00:00 to 23:59"
        )
    }

    @Test("LocalTime lists sort and drop duplicates; formatting pads")
    func localTimeList() throws {
        #expect(try LocalTime.parseList("20:00,08:00, 8:00") == [hm("08:00"), hm("20:00")])
        #expect(hm("7:05").description == "07:05")
        #expect(hm("23:59").secondsIntoDay == 86_340)
        #expect(LocalTime(hour: 24, minute: 0) == nil)
        #expect(thrownChimeError { _ = try LocalTime.parseList("08:00,25:00") }?.message.contains("'25:00'") == true)
        #expect(thrownChimeError { _ = try LocalTime.parseList("08:00,") } != nil)
        #expect(thrownChimeError { _ = try LocalTime.parseList("") } != nil)
    }

    static let weekdayCases: [(String, WeekdaySet)] = [
        ("day", WeekdaySet.everyDay), ("daily", .everyDay), ("everyday", .everyDay), ("EveryDay", .everyDay),
        ("weekday", .weekdays), ("weekdays", .weekdays), ("WEEKEND", .weekend), ("weekends", .weekend),
        ("mon", .monday), ("monday", .monday), ("Sun", .sunday), ("mon,wed,fri", [.monday, .wednesday, .friday]),
        ("mon-fri", .weekdays), ("sat-sun", .weekend), ("fri-mon", [.friday, .saturday, .sunday, .monday]),
        ("tue-thu,sat", [.tuesday, .wednesday, .thursday, .saturday]), ("thursday", .thursday),
    ]

    @Test("Weekday sets parse", arguments: weekdayCases)
    func weekdaysAccepted(_ s: String, _ expected: WeekdaySet) throws {
        #expect(try WeekdaySet.parse(s) == expected)
    }

    @Test("Weekday sets reject unknown words, naming them", arguments: ["funday", "mon-", "mon-xyz", "", "mon,,fri", "1"])
    func weekdaysRejected(_ s: String) {
        let e = thrownChimeError { _ = try WeekdaySet.parse(s) }
        #expect(e?.message.hasPrefix("invalid days '\(s)': expected ") == true)
        #expect(e?.message.contains("mon-fri") == true)
    }

    static let descriptionCases: [(WeekdaySet, String)] = [
        (WeekdaySet.everyDay, "day"), (.weekdays, "weekday"), (.weekend, "weekend"),
        ([.monday, .wednesday, .friday], "mon,wed,fri"), (.sunday, "sun"), ([.saturday, .monday], "mon,sat"),
    ]

    @Test("Weekday set descriptions", arguments: descriptionCases)
    func weekdayDescription(_ set: WeekdaySet, _ expected: String) {
        #expect(set.description == expected)
    }

    @Test("Weekday membership is ISO-numbered")
    func weekdayMembership() {
        #expect(WeekdaySet.monday.contains(isoWeekday: 1))
        #expect(WeekdaySet.sunday.contains(isoWeekday: 7))
        #expect(!WeekdaySet.weekdays.contains(isoWeekday: 6))
        #expect(!WeekdaySet.everyDay.contains(isoWeekday: 0))
        #expect(!WeekdaySet.everyDay.contains(isoWeekday: 8))
        #expect(WeekdaySet.everyDay.rawValue == 0x7F)
    }

    @Test("Zone rules")
    func zoneRules() throws {
        #expect(try ZoneRule.parse("Europe/Berlin") == .fixed("Europe/Berlin"))
        #expect(try ZoneRule.parse("floating") == .floating)
        #expect(
            thrownChimeError { _ = try ZoneRule.parse("Mars/Base") }?.message
                == "unknown time zone 'Mars/Base': expected an IANA zone name from tzdata such as Europe/Berlin, America/New_York "
                + "or UTC (for a fixed offset, Etc/GMT-5 is UTC+5: the sign is inverted)"
        )
        #expect(thrownChimeError { _ = try ZoneRule.parse("") }?.code == .usage)
        #expect(ZoneRule.fixed("Asia/Tokyo").resolve(system: TestZones.berlin).identifier == "Asia/Tokyo")
        #expect(ZoneRule.floating.resolve(system: TestZones.berlin).identifier == "Europe/Berlin")
    }
}

@Suite("Parsing: durations")
struct DurationParsingTests {
    @Test(
        "Accepted durations",
        arguments: [
            ("25m", Int64(1_500)), ("1h30m", 5_400), ("90s", 90), ("2d", 172_800), ("1h 30m", 5_400), ("1w", 604_800),
            ("1w2d", 777_600), ("366d", 31_622_400), ("1s", 1),
        ]
    )
    func accepted(_ s: String, _ seconds: Int64) throws {
        #expect(try TimeParsing.duration(s) == seconds)
    }

    @Test(
        "Rejected durations name the value",
        arguments: [
            "-5m", "0m", "0s", "5x", "", "90", "h", "1 h", "5m-", "99999999999999999999s", "1H", "5M", "1h1h", "1m1h",
        ]
    )
    func rejected(_ s: String) {
        #expect(
            thrownChimeError { _ = try TimeParsing.duration(s) }
                == ChimeError.invalid(
                    "duration",
                    s,
                    expected:
                        "a positive duration such as 90s, 25m, 1h30m or 2d: lowercase units w, d, h, m, s, each at most once, largest first"
                )
        )
    }

    @Test("A duration that reads but is longer than 366 days names the limit", arguments: ["367d", "53w", "100000d", "8785h"])
    func overTheLimit(_ s: String) {
        #expect(
            thrownChimeError { _ = try TimeParsing.duration(s) }
                == ChimeError.invalid("duration", s, expected: "at most 366 days (52w2d or 366d)")
        )
    }
}

@Suite("Parsing: chime at")
struct InstantParsingTests {
    // Monday 2026-06-15 12:00 in Berlin (+02:00) = 10:00Z.
    static let now = utcInstant(2026, 6, 15, 10)

    @Test(
        "Accepted forms",
        arguments: [
            ("14:30", utcInstant(2026, 6, 15, 12, 30)),  // later today
            ("09:00", utcInstant(2026, 6, 16, 7)),  // already past today → tomorrow
            ("12:00", utcInstant(2026, 6, 16, 10)),  // exactly now is not after now → tomorrow
            ("12:01", utcInstant(2026, 6, 15, 10, 1)),
            ("2026-12-24 18:00", utcInstant(2026, 12, 24, 17)),
            ("2026-12-24T18:00", utcInstant(2026, 12, 24, 17)),
            ("2026-12-24T18:00:30", utcInstant(2026, 12, 24, 17, 0, 30)),
            ("2026-12-24T18:00Z", utcInstant(2026, 12, 24, 18)),
            ("2026-12-24T18:00:00Z", utcInstant(2026, 12, 24, 18)),
            ("2026-12-24T18:00+05:30", utcInstant(2026, 12, 24, 12, 30)),
            ("2026-12-24T18:00-0400", utcInstant(2026, 12, 24, 22)),
            ("2027-03-28 02:30", utcInstant(2027, 3, 28, 1, 30)),  // Berlin spring-forward gap → 03:30 +02:00
        ]
    )
    func accepted(_ s: String, _ expected: Date) throws {
        #expect(isoZ(try TimeParsing.instant(s, now: Self.now, zone: TestZones.berlin)) == isoZ(expected))
    }

    @Test("A bare time in a DST gap moves forward: 02:30 on 2026-03-08 in New York is 03:30 EDT")
    func bareTimeInGap() throws {
        let now = localInstant(TestZones.newYork, 2026, 3, 7, 12)
        #expect(isoZ(try TimeParsing.instant("02:30", now: now, zone: TestZones.newYork)) == isoZ(utcInstant(2026, 3, 8, 7, 30)))
        #expect(
            isoZ(try TimeParsing.instant("2026-11-01 01:30", now: now, zone: TestZones.newYork)) == isoZ(utcInstant(2026, 11, 1, 5, 30))
        )
    }

    @Test("Past date-times are refused")
    func past() {
        #expect(
            thrownChimeError { _ = try TimeParsing.instant("2020-01-01 10:00", now: Self.now, zone: TestZones.berlin) }
                == ChimeError(.usage, "'2020-01-01 10:00' is in the past: give a future time")
        )
        #expect(
            thrownChimeError { _ = try TimeParsing.instant("2026-06-15T10:00Z", now: Self.now, zone: TestZones.berlin) }?.message
                == "'2026-06-15T10:00Z' is in the past: give a future time"
        )
    }

    @Test("25:00 is rejected with the time message")
    func badClock() {
        #expect(
            thrownChimeError { _ = try TimeParsing.instant("25:00", now: Self.now, zone: TestZones.berlin) }?.message
                == "invalid time '25:00': expected HH:MM from 00:00 to 23:59"
        )
    }

    @Test(
        "Malformed date-times are rejected, naming the value",
        arguments: [
            "tomorrow", "2026-02-30 10:00", "2026-13-01 10:00", "2026-12-24", "2026-12-24 24:00", "2026-12-24T18:00+5",
            "2026-12-24T18:00Q", "", "2026/12/24 18:00",
        ]
    )
    func malformed(_ s: String) {
        let e = thrownChimeError { _ = try TimeParsing.instant(s, now: Self.now, zone: TestZones.berlin) }
        #expect(e?.code == .usage)
        #expect(e?.message.hasPrefix("invalid time '\(s)': expected ") == true)
    }
}

@Suite("Parsing: chime every")
struct RecurrenceParsingTests {
    static let now = utcInstant(2026, 6, 15, 10)

    @Test(
        "Accepted recurrences",
        arguments: [
            (["day", "08:00"], Trigger.weekly(times: [hm("08:00")], days: .everyDay, zone: .floating)),
            (["daily", "08:00"], .weekly(times: [hm("08:00")], days: .everyDay, zone: .floating)),
            (["weekday", "08:00,20:00"], .weekly(times: [hm("08:00"), hm("20:00")], days: .weekdays, zone: .floating)),
            (["mon,wed,fri", "08:00"], .weekly(times: [hm("08:00")], days: [.monday, .wednesday, .friday], zone: .floating)),
            (["mon-fri", "at", "9:00"], .weekly(times: [hm("09:00")], days: .weekdays, zone: .floating)),
            (["weekend", "18:00", "09:00"], .weekly(times: [hm("09:00"), hm("18:00")], days: .weekend, zone: .floating)),
            (["day 08:00"], .weekly(times: [hm("08:00")], days: .everyDay, zone: .floating)),
            (["2h"], .interval(seconds: 7_200, anchor: now)),
            (["30m"], .interval(seconds: 1_800, anchor: now)),
            (["1h", "30m"], .interval(seconds: 5_400, anchor: now)),
            (["45s"], .interval(seconds: 45, anchor: now)),
        ]
    )
    func accepted(_ words: [String], _ expected: Trigger) throws {
        #expect(try TimeParsing.recurrence(words, now: Self.now, zone: .floating) == expected)
    }

    @Test("The zone rule is carried into weekly triggers")
    func zoneCarried() throws {
        #expect(
            try TimeParsing.recurrence(["day", "08:00"], now: Self.now, zone: .fixed("Europe/Berlin"))
                == .weekly(times: [hm("08:00")], days: .everyDay, zone: .fixed("Europe/Berlin"))
        )
    }

    @Test("Unknown words name the word and list the accepted forms")
    func unknownWord() {
        #expect(
            thrownChimeError { _ = try TimeParsing.recurrence(["fortnight", "08:00"], now: Self.now, zone: .floating) }
                == ChimeError.invalid(
                    "recurrence",
                    "fortnight",
                    expected:
                        "day, weekday, weekend, days such as mon,wed,fri or mon-fri followed by HH:MM, month on DAY HH:MM, "
                        + "year on MM-DD HH:MM, or an interval such as 30m or 2h; optionally followed by until YYYY-MM-DD"
                )
        )
    }

    @Test(
        "Rejected recurrences name the bad value",
        arguments: [
            (["day"], "'day'"), (["day", "25:00"], "'25:00'"), (["5x"], "'5x'"), ([], "''"), (["0m"], "'0m'"),
            (["mon-fry", "08:00"], "'mon-fry'"), (["weekday", "8xm"], "'8xm'"),
        ]
    )
    func rejected(_ words: [String], _ named: String) {
        let e = thrownChimeError { _ = try TimeParsing.recurrence(words, now: Self.now, zone: .floating) }
        #expect(e?.code == .usage)
        #expect(e?.message.contains(named) == true, "\(e?.message ?? "no error")")
    }
}

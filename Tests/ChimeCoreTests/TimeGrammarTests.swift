import ChimeCore
import Foundation
import Testing

/// One grammar for a time of day wherever Chime takes one (`at`, `med add
/// --at`, `every`, quiet hours), `noon` and `midnight`, units spelled out in a duration, and a
/// hint with the accepted form for what is refused.
@Suite("Parsing: one time grammar")
struct TimeGrammarTests {
    @Test(
        "A time of day: HH:MM, a 12-hour clock, noon and midnight, any case",
        arguments: [
            ("08:00", "08:00"), ("8:00", "08:00"), ("8am", "08:00"), ("8AM", "08:00"), ("9:30pm", "21:30"), ("12am", "00:00"),
            ("12pm", "12:00"), ("noon", "12:00"), ("Noon", "12:00"), ("midnight", "00:00"), ("MIDNIGHT", "00:00"), (" 7am ", "07:00"),
        ]
    )
    func timeOfDay(_ text: String, _ expected: String) throws {
        #expect(try LocalTime.spoken(text) == hm(expected))
    }

    @Test(
        "A refused time of day names the form it may mean",
        arguments: [
            ("8", "invalid time '8': did you mean '8am', '8pm' or '08:00'?"),
            ("17", "invalid time '17': did you mean '17:00'?"),
            ("5 pm", "invalid time '5 pm': did you mean '5pm'?"),
            ("8.30", "invalid time '8.30': did you mean '08:30'?"),
        ]
    )
    func hints(_ text: String, _ message: String) {
        let error = thrownChimeError { _ = try LocalTime.spoken(text) }
        #expect(error?.code == .usage)
        #expect(error?.message.hasPrefix(message) == true, "\(error?.message ?? "no error")")
        #expect(error?.message.contains("noon or midnight") == true)
    }

    @Test("Anything else is refused with the accepted forms", arguments: ["lunch", "25:00", "13pm", "", "8:00pmx", "noonish"])
    func refused(_ text: String) {
        #expect(
            thrownChimeError { _ = try LocalTime.spoken(text) }
                == ChimeError.invalid("time", text, expected: "HH:MM from 00:00 to 23:59, 9am, 9:30pm, noon or midnight")
        )
    }

    @Test("Lists take every form; the stored form stays HH:MM only")
    func lists() throws {
        #expect(try LocalTime.spokenList("8pm,8am") == [hm("08:00"), hm("20:00")])
        #expect(try LocalTime.spokenList("noon, midnight,12pm") == [hm("00:00"), hm("12:00")])
        #expect(thrownChimeError { _ = try LocalTime.spokenList("8am,lunch") }?.message.contains("'lunch'") == true)
        #expect(thrownChimeError { _ = try LocalTime.parse("noon") } != nil)
        #expect(thrownChimeError { _ = try LocalTime.parseList("8am") } != nil)
    }

    @Test("chime at reads noon and midnight, alone and after a day")
    func atNoonAndMidnight() throws {
        let berlin = TestZones.berlin
        let now = localInstant(berlin, 2026, 11, 23, 10)
        #expect(try TimeParsing.spoken("noon", now: now, zone: berlin).instant == localInstant(berlin, 2026, 11, 23, 12))
        #expect(try TimeParsing.spoken("midnight", now: now, zone: berlin).instant == localInstant(berlin, 2026, 11, 24, 0))
        #expect(try TimeParsing.spoken("tomorrow noon", now: now, zone: berlin).instant == localInstant(berlin, 2026, 11, 24, 12))
        // Past noon: tomorrow's.
        let afternoon = localInstant(berlin, 2026, 11, 23, 13)
        #expect(try TimeParsing.spoken("noon", now: afternoon, zone: berlin).instant == localInstant(berlin, 2026, 11, 24, 12))
        #expect(TimeParsing.spokenWordCount(["tomorrow", "noon", "Lunch"]) == 2)
        #expect(TimeParsing.spokenWordCount(["noon", "Lunch"]) == 1)
    }

    @Test(
        "chime at refuses a bare hour and a clock apart from its am/pm with the form it means",
        arguments: [
            ("5 pm", "invalid time '5 pm': did you mean '5pm'?"),
            ("8", "invalid time '8': did you mean '8am', '8pm' or '08:00'?"),
            ("lunchtime", "invalid time 'lunchtime': expected HH:MM, 9am or 9:30pm, noon, midnight, tomorrow 09:00"),
        ]
    )
    func atHints(_ text: String, _ message: String) {
        let berlin = TestZones.berlin
        let error = thrownChimeError { _ = try TimeParsing.spoken(text, now: localInstant(berlin, 2026, 11, 23, 10), zone: berlin) }
        #expect(error?.code == .usage)
        #expect(error?.message.hasPrefix(message) == true, "\(error?.message ?? "no error")")
    }

    @Test("A clock and its am/pm typed apart, then a title, are read together (to be refused with the hint)")
    func meridiemApart() {
        #expect(TimeParsing.spokenWordCount(["5", "pm", "Tea"]) == 2)
        #expect(TimeParsing.spokenWordCount(["5pm", "pm", "Tea"]) == 1)
        #expect(TimeParsing.spokenWordCount(["14:30", "Tea", "body"]) == 1)
    }

    @Test("every and quiet hours take the same grammar")
    func everyAndQuietHours() throws {
        let trigger = try TimeParsing.recurrence(["weekday", "8am,noon"], now: utcInstant(2026, 6, 15, 10), zone: .floating)
        #expect(trigger == .weekly(times: [hm("08:00"), hm("12:00")], days: .weekdays, zone: .floating))
        #expect(try QuietSettings.Window.parse("10pm-7am").description == "22:00-07:00")
        #expect(try QuietSettings.Window.parse("22:00-noon").description == "22:00-12:00")
        #expect(thrownChimeError { _ = try QuietSettings.Window.parse("10pm-lunch") }?.message.contains("'10pm-lunch'") == true)
    }

    @Test(
        "Durations take units spelled out in the same word",
        arguments: [
            ("10min", Int64(600)), ("10mins", 600), ("10minutes", 600), ("1minute", 60), ("2hr", 7_200), ("2hrs", 7_200),
            ("1hour", 3_600), ("3hours", 10_800), ("30sec", 30), ("45secs", 45), ("2days", 172_800), ("1day", 86_400),
            ("1week", 604_800), ("2wks", 1_209_600), ("1hour30min", 5_400), ("1h30min", 5_400),
        ]
    )
    func spelledOut(_ text: String, _ seconds: Int64) throws {
        #expect(try TimeParsing.duration(text) == seconds)
    }

    @Test(
        "Spelled-out units keep the rules: lowercase, one word, largest first",
        arguments: ["10Min", "10 min", "10minz", "1min1hour", "5 minutes", "minutes"]
    )
    func spelledOutRefused(_ text: String) {
        #expect(thrownChimeError { _ = try TimeParsing.duration(text) }?.message.hasPrefix("invalid duration '\(text)'") == true)
    }

    @Test("Duration options take them too")
    func optionDurations() throws {
        let grace = OptionDuration(option: "--grace", unit: .minute, bareNumbers: false, range: 60...86_400)
        #expect(try grace.seconds("30min") == 1_800)
        #expect(try grace.seconds("1hour") == 3_600)
    }

    @Test(
        "chime in: a number with its unit apart, or a bare number, is refused with the form it means",
        arguments: [
            (["5", "minutes", "Tea"], "invalid duration '5 minutes': did you mean '5m'? (a number and its unit in one word"),
            (["5", "min"], "invalid duration '5 min': did you mean '5m'?"),
            (["2", "hours", "Call"], "invalid duration '2 hours': did you mean '2h'?"),
            (["10", "s", "x"], "invalid duration '10 s': did you mean '10s'?"),
            (["5", "Tea"], "invalid duration '5': did you mean '5m'? (a number needs its unit"),
            (["5"], "invalid duration '5': did you mean '5m'?"),
        ]
    )
    func inHints(_ words: [String], _ message: String) {
        let error = thrownChimeError { _ = try TimeParsing.leadingDuration(words) }
        #expect(error?.code == .usage)
        #expect(error?.message.hasPrefix(message) == true, "\(error?.message ?? "no error")")
    }

    @Test("chime in: a duration that reads is read, whatever follows; no hint where none would read")
    func inReads() throws {
        #expect(try TimeParsing.leadingDuration(["5m", "minutes"]) == 300)
        #expect(try TimeParsing.leadingDuration(["10min", "Tea"]) == 600)
        for words in [["0", "minutes"], ["x", "minutes"], ["99999999999", "minutes"], ["5x", "Tea"]] {
            let message = thrownChimeError { _ = try TimeParsing.leadingDuration(words) }?.message ?? ""
            #expect(!message.contains("did you mean"), "\(words): \(message)")
            #expect(message.hasPrefix("invalid duration '\(words[0])'"), "\(words): \(message)")
        }
    }
}

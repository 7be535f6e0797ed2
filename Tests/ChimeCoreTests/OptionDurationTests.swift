import ChimeCore
import Foundation
import Testing

/// Every duration option takes the forms of `chime in`, and a bare number in
/// the option's own unit where it has one; a refusal names the option and the value.
@Suite("Parsing: duration options")
struct OptionDurationTests {
    static let minutes = OptionDuration(option: "--minutes", unit: .minute, bareNumbers: true, range: 600...7_200)
    static let grace = OptionDuration(option: "--grace", unit: .second, bareNumbers: false, range: 60...86_400)
    static let days = OptionDuration(option: "--last", unit: .day, bareNumbers: true, range: 86_400...OptionDuration.longest)
    static let gateGrace = OptionDuration(option: "--grace", unit: .second, bareNumbers: false, range: 0...86_400)

    @Test(
        "Accepted: the forms of chime in, and bare numbers in the option's unit",
        arguments: [
            (minutes, "25", Int64(1_500)), (minutes, "25m", 1_500), (minutes, " 25m ", 1_500), (minutes, "1h", 3_600),
            (minutes, "1h30m", 5_400), (minutes, "120", 7_200), (minutes, "600s", 600),
            (grace, "30m", 1_800), (grace, "90s", 90), (grace, "1d", 86_400), (grace, "1h 30m", 5_400),
            (days, "7", 604_800), (days, "7d", 604_800), (days, "1w", 604_800), (days, "2w3d", 1_468_800), (days, "3660", 316_224_000),
            (gateGrace, "0", 0), (gateGrace, "0s", 0), (gateGrace, "0m", 0), (gateGrace, "5m", 300),
        ]
    )
    func accepted(rule: OptionDuration, text: String, seconds: Int64) throws {
        #expect(try rule.seconds(text) == seconds)
    }

    @Test(
        "Refused in one line naming the option and the value",
        arguments: [
            (minutes, "25x"), (minutes, "90s"), (minutes, "5"), (minutes, "121"), (minutes, "0"), (minutes, ""), (minutes, "-5"),
            (minutes, "25M"), (minutes, "m"), (minutes, "2.5"),
            (grace, "30"), (grace, "30s"), (grace, "2d"), (grace, "soon"), (grace, "0"),
            (days, "36h"), (days, "0"), (days, "3661"), (days, "600w"), (days, "7x"),
            (gateGrace, "2d"), (gateGrace, "-1m"),
        ]
    )
    func refused(rule: OptionDuration, text: String) {
        let error = thrownChimeError { _ = try rule.seconds(text) }
        #expect(error == ChimeError.invalid(rule.option, text, expected: rule.expected))
        #expect(error?.code == .usage)
        #expect(error?.message.hasPrefix("invalid \(rule.option) '\(text)': expected ") == true)
    }

    @Test("What is accepted is said with the range")
    func expectedText() {
        #expect(
            Self.minutes.expected == "a number of minutes (25) or a duration such as 25m or 1h, in whole minutes, from 10m to 2h"
        )
        #expect(Self.grace.expected == "a duration such as 30m, 4h or 1h30m, from 1m to 1d")
        #expect(Self.days.expected == "a number of days (7) or a duration such as 7d or 2w, in whole days, from 1d to 3660d")
        #expect(Self.gateGrace.expected.hasSuffix("from 0 to 1d"))
    }

    @Test("chime in's own durations are unchanged: positive, at most 366 days")
    func chimeInDurations() throws {
        #expect(try TimeParsing.duration("25m") == 1_500)
        #expect(thrownChimeError { _ = try TimeParsing.duration("0m") }?.code == .usage)
        #expect(thrownChimeError { _ = try TimeParsing.duration("367d") }?.code == .usage)
        #expect(thrownChimeError { _ = try TimeParsing.duration("25") }?.code == .usage)
    }

    @Test("every 08:00 says the days are missing", arguments: [["08:00"], ["08:00,20:00"], ["8:30", "x"]])
    func timesWithoutDays(words: [String]) {
        let error = thrownChimeError { _ = try TimeParsing.recurrence(words, now: Date(), zone: .floating) }
        #expect(error?.code == .usage)
        #expect(error?.message.hasPrefix("missing days before '\(words[0])'") == true, "\(error?.message ?? "")")
    }
}

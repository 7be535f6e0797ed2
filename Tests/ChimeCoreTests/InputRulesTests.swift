import ChimeCore
import Foundation
import Testing

/// The input rules: each value that would mean something other than it says is
/// refused in one line naming it and what would be accepted.
@Suite("Input rules: durations, times, zones, text")
struct InputRulesTests {
    @Test(
        "Durations: lowercase units, each at most once, largest first; anything else is refused naming it",
        arguments: ["5M", "1H", "90S", "1h1h", "1m1h", "30m1h", "1s1d", "2d 1w", "1h 1h", "1h30M"]
    )
    func durationUnitsInOrder(_ text: String) {
        let error = thrownChimeError { _ = try TimeParsing.duration(text) }
        #expect(error?.code == .usage)
        #expect(error?.message.hasPrefix("invalid duration '\(text)': expected ") == true, "\(error?.message ?? "accepted")")
        #expect(error?.message.contains("largest first") == true, "\(error?.message ?? "accepted")")
    }

    @Test(
        "Durations in the documented form still read",
        arguments: [("1w2d3h4m5s", Int64(788_645)), ("1h 30m", 5_400), ("2d12h", 216_000), ("90s", 90), ("1d 1s", 86_401)]
    )
    func durationsInOrder(_ text: String, _ seconds: Int64) throws {
        #expect(try TimeParsing.duration(text) == seconds)
    }

    @Test("A bare time of day with seconds is accepted by 'at', as a date-time with seconds is")
    func bareTimeWithSeconds() throws {
        // Monday 2026-06-15 10:00Z, in UTC.
        let now = Date(timeIntervalSince1970: 1_781_517_600)
        let utc = TimeZone(identifier: "UTC")!
        #expect(try TimeParsing.instant("18:00:30", now: now, zone: utc) == now.addingTimeInterval(8 * 3_600 + 30))
        #expect(try TimeParsing.instant("08:00:00", now: now, zone: utc) == now.addingTimeInterval(22 * 3_600))
        for bad in ["18:00:60", "18:00:5", "18:00:", "18:00:00:00"] {
            let error = thrownChimeError { _ = try TimeParsing.instant(bad, now: now, zone: utc) }
            #expect(error?.message.contains("'\(bad)'") == true, "\(bad): \(error?.message ?? "accepted")")
        }
    }

    @Test(
        "Zones: only names tzdata has; GMT+5 (which Foundation reads with the opposite sign of Etc/GMT+5) is refused",
        arguments: ["GMT+5", "GMT-03:00", "UTC+1", "CEST", "posix/Europe/Berlin", "zone.tab", "../zoneinfo/UTC", "/usr/share/zoneinfo/UTC"]
    )
    func zonesOutsideTzdata(_ name: String) {
        let error = thrownChimeError { _ = try ZoneRule.parse(name) }
        #expect(error?.code == .usage)
        #expect(error?.message.contains("'\(name)'") == true, "\(error?.message ?? "accepted")")
        #expect(error?.message.contains("tzdata") == true, "\(error?.message ?? "accepted")")
    }

    @Test("Zones tzdata has are accepted", arguments: ["Europe/Berlin", "UTC", "Etc/GMT-5", "America/Argentina/Buenos_Aires", "GMT"])
    func zonesInTzdata(_ name: String) throws {
        guard case .fixed = try ZoneRule.parse(name) else {
            Issue.record("\(name) parsed as floating")
            return
        }
    }

    @Test(
        "Titles and bodies: bidirectional controls and invisible characters are refused, naming the character and its position",
        arguments: [
            ("\u{202E}gnp.exe", "U+202E", 1), ("Tea\u{200B}", "U+200B", 4), ("a\u{2066}b", "U+2066", 2), ("\u{FEFF}Tea", "U+FEFF", 1),
            ("Te\u{2060}a", "U+2060", 3), ("x\u{200F}", "U+200F", 2), ("x\u{061C}", "U+061C", 2), ("\u{200D}Tea", "U+200D", 1),
            ("Tea \u{200D} now", "U+200D", 5), ("Tea\u{200C}", "U+200C", 4), ("a\u{202A}b", "U+202A", 2),
        ]
    )
    func invisibleCharactersRefused(_ text: String, _ code: String, _ position: Int) {
        for new in [
            NewReminder(title: text, trigger: .once(.distantFuture)), NewReminder(title: "T", body: text, trigger: .once(.distantFuture)),
        ] {
            let error = thrownChimeError { _ = try new.validated() }
            #expect(error?.code == .usage)
            #expect(error?.message.contains(code) == true, "\(error?.message ?? "accepted")")
            #expect(error?.message.contains("position \(position)") == true, "\(error?.message ?? "accepted")")
            #expect(
                error.map {
                    !$0.message.unicodeScalars.contains { (0x200B...0x200F).contains($0.value) || (0x202A...0x202E).contains($0.value) }
                } == true
            )
        }
    }

    @Test(
        "A joiner inside an emoji sequence or between letters is text, not a hiding place",
        arguments: [
            "👩\u{200D}💻", "👨\u{200D}👩\u{200D}👧", "🏳\u{FE0F}\u{200D}🌈", "می\u{200C}خواهم", "क्\u{200D}ष", "Tea ☕ — עברית and العربية",
        ]
    )
    func joinersInText(_ text: String) throws {
        #expect(try NewReminder(title: text, body: text, trigger: .once(.distantFuture)).validated().title == text)
    }

    @Test("A body has a limit too: 4,000 characters")
    func bodyLimit() throws {
        let fits = String(repeating: "b", count: 4_000)
        #expect(try NewReminder(title: "T", body: fits, trigger: .once(.distantFuture)).validated().body == fits)
        let error = thrownChimeError { _ = try NewReminder(title: "T", body: fits + "b", trigger: .once(.distantFuture)).validated() }
        #expect(error?.code == .usage)
        #expect(error?.message.contains("at most 4000 characters") == true, "\(error?.message ?? "accepted")")
        #expect(error?.message.contains("4001") == true, "\(error?.message ?? "accepted")")
    }
}

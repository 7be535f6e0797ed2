import ChimeCore
import Foundation
import Testing

/// Through the real `chime`: `med refill`, the low-stock warning of
/// `med add`/`edit`, `export doses` without `--csv`, and one time grammar with hints.
@Suite("End to end: refill, low stock, one time grammar", .serialized)
struct DoseRefillTimeGrammarTests {
    /// The medication `reference` as `med show --json` gives it.
    static func medication(_ reference: String, in sandbox: borrowing Sandbox) throws -> [String: Any] {
        let shown = try sandbox.chime("med", "show", reference, "--json")
        #expect(shown.status == 0, "\(shown.stderr)")
        return try #require(try jsonObject(shown.stdout)["medication"] as? [String: Any])
    }

    /// The warning lines of a command's standard error.
    static func warnings(_ stderr: String) -> [String] {
        stderr.split(separator: "\n").map(String.init).filter { $0.hasPrefix("Warning:") }
    }

    @Test("med refill adds a box, prints the new count and days left; --json too")
    func refill() throws {
        let sandbox = try Sandbox()
        let added = try sandbox.chime("med", "add", "Aspirin", "--amount", "100", "--unit", "mg", "--at", "8am,8pm", "--stock", "20")
        #expect(added.status == 0 && !added.stderr.contains("Warning"), "\(added.stderr)")

        let refilled = try sandbox.chime("med", "refill", "Aspirin", "30")
        #expect(refilled.status == 0, "\(refilled.stderr)")
        #expect(refilled.stdout == "Refilled Aspirin: 20 doses + 30 = 50 doses, about 25 days left.\n")
        #expect(refilled.stderr.isEmpty)

        let json = try sandbox.chime("med", "refill", "aspirin", "10", "--json")
        #expect(json.status == 0, "\(json.stderr)")
        let document = try jsonObject(json.stdout)
        #expect(document["stock"] as? Int == 60)
        #expect(document["previous"] as? Int == 50)
        #expect(document["added"] as? Int == 10)
        #expect(document["days_left"] as? Int == 30)
        #expect(document["warnings"] as? [String] == [])
        #expect((document["medication"] as? [String: Any])?["stock"] as? Int == 60)
        #expect(try Self.medication("Aspirin", in: sandbox)["stock"] as? Int == 60)
    }

    @Test("med refill refuses a bad N (exit 64, one line naming it) and changes nothing")
    func refillRefusals() throws {
        let sandbox = try Sandbox()
        let added = try sandbox.chime("med", "add", "Aspirin", "--amount", "100", "--unit", "mg", "--at", "08:00", "--stock", "40")
        #expect(added.status == 0, "\(added.stderr)")
        let cases: [(arguments: [String], names: String)] = [
            (["0"], "invalid refill count '0': expected a whole number of doses from 1 to 100000"),
            (["-5"], "invalid refill count '-5'"),
            (["abc"], "invalid refill count 'abc'"),
            (["2.5"], "invalid refill count '2.5'"),
            (["99999999999999999999999"], "invalid refill count '99999999999999999999999'"),
            ([], "missing N"),
            (["30", "40"], "too many words"),
            (["--bogus"], "unknown option '--bogus'"),
        ]
        for (arguments, names) in cases {
            let result = try sandbox.chime(["med", "refill", "Aspirin"] + arguments)
            #expect(result.status == 64, "\(arguments): \(result.status) \(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(arguments): \(result.stderr)")
            #expect(result.stderr.hasPrefix("chime: ") && result.stderr.contains(names), "\(arguments): \(result.stderr)")
            #expect(result.stdout.isEmpty)
        }
        #expect(try Self.medication("Aspirin", in: sandbox)["stock"] as? Int == 40)

        // An unknown medication: the not-found error and its exit status, as for 'med show'.
        let unknown = try sandbox.chime("med", "refill", "Aspirn", "30")
        let shown = try sandbox.chime("med", "show", "Aspirn")
        #expect(unknown.status == 3 && shown.status == 3)
        #expect(unknown.stderr == shown.stderr, "\(unknown.stderr)")
        // A stock not counted: refused (exit 4), pointing at --stock.
        #expect(try sandbox.chime("med", "add", "Zinc", "--amount", "25", "--unit", "mg", "--at", "noon").status == 0)
        let uncounted = try sandbox.chime("med", "refill", "Zinc", "30")
        #expect(uncounted.status == 4 && uncounted.stderr.contains("--stock N"), "\(uncounted.stderr)")
        #expect(try Self.medication("Zinc", in: sandbox)["stock"] is NSNull)
    }

    @Test("med add and med edit warn at once when the stock is at or below its refill threshold (exit 0)")
    func lowStockWarning() throws {
        let sandbox = try Sandbox()
        // Twice a day, refill 7 days ahead: 14 doses is the threshold.
        let low = try sandbox.chime("med", "add", "Iron", "--amount", "1", "--unit", "tablet", "--at", "08:00,20:00", "--stock", "14")
        #expect(low.status == 0, "\(low.stderr)")
        // (Beside the note that no runner is running.)
        #expect(
            Self.warnings(low.stderr) == [
                "Warning: Iron is low: 14 doses, about 7 days left, at or below its refill threshold of 7 days: "
                    + "'chime med refill 1 N' adds a box"
            ]
        )
        #expect(low.stdout.hasPrefix("Added medication 1: Iron (1 tablet)"))

        let fine = try sandbox.chime("med", "add", "Zinc", "--amount", "25", "--unit", "mg", "--at", "08:00", "--stock", "8", "--json")
        #expect(fine.status == 0 && Self.warnings(fine.stderr).isEmpty, "\(fine.stderr)")
        #expect(try jsonObject(fine.stdout)["warnings"] as? [String] == [])

        // --stock on edit sets the count; set low, it warns (in JSON, in the warnings array).
        let edited = try sandbox.chime("med", "edit", "Zinc", "--stock", "3", "--json")
        #expect(edited.status == 0, "\(edited.stderr)")
        let document = try jsonObject(edited.stdout)
        #expect((document["medication"] as? [String: Any])?["stock"] as? Int == 3)
        let warnings = try #require(document["warnings"] as? [String])
        #expect(warnings.count == 1 && warnings[0].hasPrefix("Zinc is low: 3 doses, about 3 days left"), "\(warnings)")
        let empty = try sandbox.chime("med", "edit", "Zinc", "--stock", "0")
        #expect(empty.status == 0)
        #expect(Self.warnings(empty.stderr) == ["Warning: Zinc has no doses in stock: 'chime med refill 2 N' adds a box"])

        // A refill above the threshold: no warning.
        let refilled = try sandbox.chime("med", "refill", "Zinc", "30")
        #expect(refilled.status == 0 && refilled.stderr.isEmpty, "\(refilled.stderr)")

        // The help says what --stock does, and where a new box goes.
        let help = try sandbox.chime("med", "edit", "--help")
        let text = help.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(text.contains("Doses in stock, the count ('med refill' adds a box)."), "\(help.stdout)")
    }

    @Test("export doses writes CSV without --csv (still accepted)")
    func exportWithoutCSV() throws {
        let sandbox = try Sandbox()
        #expect(try sandbox.chime("med", "add", "Aspirin", "--amount", "100", "--unit", "mg", "--at", "08:00").status == 0)
        let plain = try sandbox.chime("export", "doses", "--last", "30d")
        #expect(plain.status == 0, "\(plain.stderr)")
        #expect(plain.stdout.hasPrefix("date,time,zone,medication,amount,unit,status,taken_at,notes,dose_id"))
        let csv = try sandbox.chime("export", "doses", "--csv", "--last", "30d")
        #expect(csv.status == 0 && csv.stdout == plain.stdout)
        #expect(try sandbox.chime("export", "doses", "--json").status == 64)
    }

    @Test("med add/edit --at take the time grammar of 'chime at': 8am, 9:30pm, noon, midnight")
    func medicationTimes() throws {
        let sandbox = try Sandbox()
        func times(_ result: (status: Int32, stdout: String, stderr: String)) throws -> [String]? {
            #expect(result.status == 0, "\(result.stderr)")
            let medication = try #require(try jsonObject(result.stdout)["medication"] as? [String: Any])
            return (medication["schedules"] as? [[String: Any]])?.last { $0["enabled"] as? Bool == true }?["times"] as? [String]
        }
        let base = ["--amount", "100", "--unit", "mg", "--json"]
        #expect(try times(try sandbox.chime(["med", "add", "Aspirin", "--at", "8am"] + base)) == ["08:00"])
        #expect(try times(try sandbox.chime(["med", "add", "Zinc", "--at", "noon,midnight"] + base)) == ["00:00", "12:00"])
        #expect(try times(try sandbox.chime("med", "edit", "Aspirin", "--at", "9:30pm", "--json")) == ["21:30"])

        let bare = try sandbox.chime(["med", "add", "Iron", "--at", "8"] + base.dropLast())
        #expect(bare.status == 64)
        #expect(bare.stderr.hasPrefix("chime: invalid time '8': did you mean '8am', '8pm' or '08:00'?"), "\(bare.stderr)")
        #expect(bare.stderr.split(separator: "\n").count == 1)
        #expect(try jsonObject(try sandbox.chime("med", "list", "--json").stdout)["count"] as? Int == 2)
    }

    @Test("chime at noon / midnight, chime in 10min; refused forms hint at the accepted one and schedule nothing")
    func atAndIn() throws {
        let sandbox = try Sandbox()
        func due(_ result: (status: Int32, stdout: String, stderr: String)) throws -> Date {
            #expect(result.status == 0, "\(result.stderr)")
            let reminder = try #require(try jsonObject(result.stdout)["reminder"] as? [String: Any])
            let text = try #require(reminder["next_due"] as? String)
            return try TimeParsing.instant(text, now: Date(), zone: TimeZone(identifier: "UTC")!, allowPast: true)
        }
        let utc = ["--zone", "UTC"]
        let noon = try due(try sandbox.chime(["at", "noon", "Lunch", "--json"] + utc))
        let midnight = try due(try sandbox.chime(["at", "midnight", "Night", "--json"] + utc))
        for (instant, hour) in [(noon, 12), (midnight, 0)] {
            let civil = ZoneMath.civil(instant, in: TimeZone(identifier: "UTC")!).local
            #expect(civil.hour == hour && civil.minute == 0, "\(instant)")
            #expect(instant > Date() && instant.timeIntervalSinceNow <= 86_400)
        }
        let before = Date()
        let tea = try due(try sandbox.chime("in", "10min", "Tea", "--json"))
        #expect(abs(tea.timeIntervalSince(before) - 600) < 30, "\(tea)")
        // A duration that reads is read: "minutes" is the title.
        #expect(try sandbox.chime("in", "5m", "minutes", "--id", "titled").status == 0)

        let cases: [(arguments: [String], message: String)] = [
            (["in", "5", "minutes", "Tea"], "chime: invalid duration '5 minutes': did you mean '5m'?"),
            (["in", "5", "min"], "chime: invalid duration '5 min': did you mean '5m'?"),
            // With --id=slow, argument-parser's path (the fast path declines the '=' form).
            (["in", "5", "minutes", "Tea", "--id=slow"], "chime: invalid duration '5 minutes': did you mean '5m'?"),
            (["in", "5", "Tea"], "chime: invalid duration '5': did you mean '5m'?"),
            (["at", "5", "pm", "Tea"], "chime: invalid time '5 pm': did you mean '5pm'?"),
            (["at", "17", "Tea"], "chime: invalid time '17': did you mean '17:00'?"),
            (["at", "lunchtime", "Tea"], "chime: invalid time 'lunchtime': expected HH:MM, 9am or 9:30pm, noon, midnight"),
        ]
        for (arguments, message) in cases {
            let result = try sandbox.chime(arguments)
            #expect(result.status == 64, "\(arguments): \(result.status) \(result.stderr)")
            #expect(result.stderr.hasPrefix(message), "\(arguments): \(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(arguments): \(result.stderr)")
            #expect(result.stdout.isEmpty)
        }
        let list = try jsonObject(try sandbox.chime("list", "--json").stdout)
        let titles = try #require(list["reminders"] as? [[String: Any]]).compactMap { $0["title"] as? String }.sorted()
        #expect(titles == ["Lunch", "Night", "Tea", "minutes"], "\(titles)")
    }

    @Test("every and quiet take the same times of day")
    func everyAndQuiet() throws {
        let sandbox = try Sandbox()
        let every = try sandbox.chime("every", "weekday", "8am,noon", "Stand up", "--json")
        #expect(every.status == 0, "\(every.stderr)")
        #expect(((try jsonObject(every.stdout)["reminder"] as? [String: Any])?["trigger"] as? String)?.contains("08:00,12:00") == true)
        let hours = try sandbox.chime("quiet", "hours", "10pm-7am", "--json")
        #expect(hours.status == 0 && hours.stdout.contains("22:00-07:00"), "\(hours.stdout) \(hours.stderr)")
        #expect(try sandbox.chime("quiet", "until", "noon").status == 0)
    }
}

import Foundation
import Testing

/// One language on the command line, through the real
/// executable on a real store: duration options, unknown options, notes without a runner, dose
/// alerts among reminders, and what `med show`, `adherence` and `chime in -q` print.
@Suite("One language on the command line", .serialized)
struct OneLanguageTests {
    /// The first value for `key` anywhere in a JSON document.
    static func find(_ key: String, in value: Any) -> Any? {
        if let object = value as? [String: Any] {
            if let found = object[key] { return found }
            for child in object.values { if let found = find(key, in: child) { return found } }
        } else if let array = value as? [Any] {
            for child in array { if let found = find(key, in: child) { return found } }
        }
        return nil
    }

    static func json(_ text: String) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(text.utf8))
    }

    // MARK: - Item 8: duration options

    @Test(
        "Every duration option takes the forms of chime in",
        arguments: [
            (["focus", "start", "--minutes", "25m"], "length_s", 1_500), (["focus", "start", "--minutes", "25"], "length_s", 1_500),
            (["focus", "start", "--minutes", "1h"], "length_s", 3_600),
            (["med", "add", "A", "--amount", "1", "--unit", "mg", "--at", "08:00", "--grace", "45m"], "grace_s", 2_700),
            (["med", "add", "A", "--amount", "1", "--unit", "mg", "--at", "08:00", "--missed-after", "1h30m"], "missed_after_s", 5_400),
            (["med", "add", "A", "--amount", "1", "--unit", "mg", "--at", "08:00", "--refill-days", "7d"], "refill_days", 7),
            (["med", "add", "A", "--amount", "1", "--unit", "mg", "--at", "08:00", "--refill-days", "2w"], "refill_days", 14),
            (["med", "add", "A", "--amount", "1", "--unit", "mg", "--at", "08:00", "--refill-days", "5"], "refill_days", 5),
            (["med", "add", "A", "--amount", "1", "--unit", "mg", "--as-needed", "--min-interval", "6h"], "min_interval_s", 21_600),
            (["gate", "setup", "--grace", "0"], "grace_s", 0), (["gate", "setup", "--grace", "5m", "--session", "1h"], "session_s", 3_600),
        ]
    )
    func durationForms(arguments: [String], key: String, value: Int) throws {
        let sandbox = try Sandbox()
        let result = try sandbox.chime(arguments + ["--json"])
        #expect(result.status == 0, "\(arguments): \(result.stderr)")
        #expect(Self.find(key, in: try Self.json(result.stdout)) as? Int == value, "\(arguments): \(result.stdout)")
    }

    @Test("--last takes 7, 7d and 1w as the same week", arguments: [["doses"], ["adherence"]])
    func lastForms(command: [String]) throws {
        let sandbox = try Sandbox()
        var ranges: [String] = []
        for last in ["7", "7d", "1w"] {
            let result = try sandbox.chime(command + ["--last", last, "--json"])
            #expect(result.status == 0, "\(last): \(result.stderr)")
            ranges.append("\(Self.find("from", in: try Self.json(result.stdout)) ?? "none")")
        }
        #expect(Set(ranges).count == 1, "\(ranges)")
        #expect(ranges[0] != "none")
    }

    @Test("dose snooze --minutes takes 15m: it gets past parsing to 'no dose is due'")
    func snoozeMinutesParse() throws {
        let sandbox = try Sandbox()
        for minutes in ["15", "15m", "1h"] {
            let result = try sandbox.chime("dose", "snooze", "--minutes", minutes)
            #expect(result.status == 3, "\(minutes): \(result.stderr)")
        }
    }

    @Test(
        "A bad duration is Chime's one line naming the option and the value, never the parser's",
        arguments: [
            (["focus", "start", "--minutes", "25x"], "invalid --minutes '25x'"),
            (["focus", "start", "--minutes", "5"], "invalid --minutes '5'"),
            (["focus", "start", "--minutes", "90s"], "invalid --minutes '90s'"),
            (["dose", "snooze", "--minutes", "15x"], "invalid --minutes '15x'"),
            (["med", "add", "A", "--amount", "1", "--unit", "mg", "--at", "08:00", "--grace", "30"], "invalid --grace '30'"),
            (
                ["med", "add", "A", "--amount", "1", "--unit", "mg", "--at", "08:00", "--missed-after", "soon"],
                "invalid --missed-after 'soon'"
            ),
            (["med", "add", "A", "--amount", "1", "--unit", "mg", "--at", "08:00", "--refill-days", "36h"], "invalid --refill-days '36h'"),
            (["med", "edit", "A", "--refill-days", "x"], "invalid --refill-days 'x'"),
            (["med", "add", "A", "--amount", "1", "--unit", "mg", "--as-needed", "--min-interval", "6"], "invalid --min-interval '6'"),
            (["doses", "--last", "36h"], "invalid --last '36h'"), (["adherence", "--last", "0"], "invalid --last '0'"),
            (["export", "doses", "--csv", "--last", "x"], "invalid --last 'x'"),
            (["gate", "setup", "--grace", "2d"], "invalid --grace '2d'"),
            (["gate", "setup", "--session", "0"], "invalid --session '0'"),
        ]
    )
    func durationRefusals(arguments: [String], named: String) throws {
        let sandbox = try Sandbox()
        for json in [false, true] {
            let result = try sandbox.chime(arguments + (json ? ["--json"] : []))
            #expect(result.status == 64, "\(arguments): \(result.stderr)")
            #expect(result.stderr.hasPrefix("chime: \(named): expected "), "\(arguments): \(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(arguments): \(result.stderr)")
            #expect(!result.stderr.contains("The value"), "\(arguments): \(result.stderr)")
            if json {
                let message = Self.find("message", in: try Self.json(result.stdout)) as? String
                #expect(message?.hasPrefix(named) == true, "\(result.stdout)")
            } else {
                #expect(result.stdout.isEmpty)
            }
        }
        // Nothing was made.
        #expect(Self.find("count", in: try Self.json(try sandbox.chime("med", "list", "--all", "--json").stdout)) as? Int == 0)
    }

    // MARK: - Item 9: unknown options, missing days

    @Test(
        "An option a command does not have is named as unknown, and nothing is scheduled",
        arguments: [
            ["in", "10m", "x", "--frobnicate", "critical"], ["in", "10m", "--urgent", "x"], ["at", "10:00", "x", "--frobnicate"],
            ["every", "2h", "x", "--frobnicate"], ["every", "weekday", "08:00", "x", "-z"],
        ]
    )
    func unknownOptions(arguments: [String]) throws {
        let sandbox = try Sandbox()
        let word = try #require(arguments.first { $0.hasPrefix("-") })
        let result = try sandbox.chime(arguments)
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.hasPrefix("chime: unknown option '\(word)' for 'chime \(arguments[0])'"), "\(result.stderr)")
        #expect(!result.stderr.contains("too many words"))
        #expect(result.stderr.split(separator: "\n").count == 1)
        let list = try Self.json(try sandbox.chime("list", "--json").stdout)
        #expect((Self.find("reminders", in: list) as? [Any])?.isEmpty == true, "\(list)")
    }

    @Test("every 08:00 x says the days are missing")
    func everyWithoutDays() throws {
        let sandbox = try Sandbox()
        let result = try sandbox.chime("every", "08:00", "x")
        #expect(result.status == 64)
        #expect(result.stderr.hasPrefix("chime: missing days before '08:00': expected DAYS TIMES"), "\(result.stderr)")
    }

    // MARK: - Item 11: cancel without a runner

    @Test("cancel without a runner does not say the change fires")
    func cancelWithoutRunner() throws {
        let sandbox = try Sandbox()
        #expect(try sandbox.chime("in", "10m", "Tea", "--id", "tea").status == 0)
        let result = try sandbox.chime("cancel", "tea")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("No runner is running"), "\(result.stderr)")
        #expect(!result.stderr.contains("fires"), "\(result.stderr)")
    }

    // MARK: - Item 12: dose alerts are not plain reminders

    @Test("list shows a dose alert with its medication; cancel refuses it (exit 4) pointing to dose skip")
    func doseAlertsAmongReminders() throws {
        let sandbox = try Sandbox()
        let added = try sandbox.chime(
            "med",
            "add",
            "Zinc",
            "--amount",
            "25",
            "--unit",
            "mg",
            "--at",
            "08:00",
            "--instructions",
            "after lunch"
        )
        #expect(added.status == 0, "\(added.stderr)")
        // The plain list counts family alerts under it; a page lists every kind
        #expect(try sandbox.chime("list").stdout.contains("Doses: 1 scheduled (chime doses)"))
        let list = try sandbox.chime("list", "--limit", "10")
        let row = try #require(list.stdout.split(separator: "\n").first { $0.hasPrefix("med-") }, "\(list.stdout)")
        #expect(row.hasSuffix("Zinc 25 mg"), "\(row)")
        let id = String(try #require(row.split(separator: " ").first))

        let cancel = try sandbox.chime("cancel", id)
        #expect(cancel.status == 4, "\(cancel.stderr)")
        #expect(cancel.stderr.contains("'chime dose skip \(id)'"), "\(cancel.stderr)")
        #expect(cancel.stderr.split(separator: "\n").count == 1)
        #expect(try sandbox.chime("list", "--limit", "10").stdout == list.stdout)
    }

    @Test("Every alert id med next shows is accepted by chime dose")
    func medNextIdsAreDoseIds() throws {
        let sandbox = try Sandbox()
        #expect(try sandbox.chime("med", "add", "Zinc", "--amount", "25", "--unit", "mg", "--at", "08:00,20:00").status == 0)
        let next = try Self.json(try sandbox.chime("med", "next", "--count", "6", "--json").stdout)
        let alerts = ((Self.find("doses", in: next) as? [[String: Any]]) ?? []).compactMap { $0["alert"] as? String }
        #expect(alerts.count == 6)
        for alert in alerts {
            let skipped = try sandbox.chime("dose", "skip", alert, "--json")
            #expect(skipped.status == 0, "\(alert): \(skipped.stderr)")
            #expect(Self.find("occurrence", in: try Self.json(skipped.stdout)) as? String == alert)
            #expect(Self.find("status", in: try Self.json(skipped.stdout)) as? String == "skipped")
        }
    }

    // MARK: - Item 13

    @Test("med show gives one dose one offset")
    func medShowOneOffset() throws {
        let sandbox = try Sandbox()
        #expect(
            try sandbox.chime("med", "add", "Zinc", "--amount", "25", "--unit", "mg", "--at", "08:00", "--zone", "Asia/Tokyo").status == 0
        )
        let shown = try sandbox.chime("med", "show", "Zinc")
        #expect(shown.status == 0, "\(shown.stderr)")
        // The sandbox's zone is UTC; the dose's is Tokyo's (+09:00, no DST): shown once, in Tokyo's.
        let offsets = shown.stdout.split(separator: " ").filter {
            $0.count == 6 && ($0.hasPrefix("+") || $0.hasPrefix("-")) && $0.contains(":")
        }
        #expect(offsets == ["+09:00"], "\(shown.stdout)")
    }

    @Test("adherence draws no day before the first medication")
    func adherenceDays() throws {
        let sandbox = try Sandbox()
        let empty = try Self.json(try sandbox.chime("adherence", "--json").stdout)
        #expect((Self.find("days", in: empty) as? [Any])?.count == 0, "\(empty)")
        #expect(try sandbox.chime("med", "add", "Zinc", "--amount", "25", "--unit", "mg", "--at", "08:00").status == 0)
        let report = try Self.json(try sandbox.chime("adherence", "--last", "30", "--json").stdout)
        #expect((Self.find("days", in: report) as? [Any])?.count == 1, "\(report)")
    }

    @Test("chime in prints one line; -q only the id, as --json has it")
    func quietPrintsTheId() throws {
        let sandbox = try Sandbox()
        let line = try sandbox.chime("in", "25m", "Tea is ready")
        #expect(line.status == 0)
        #expect(line.stdout.split(separator: "\n").count == 1)
        #expect(line.stdout.hasSuffix("Tea is ready\n"), "\(line.stdout)")

        let quiet = try sandbox.chime("in", "5m", "Tea", "-q")
        #expect(quiet.status == 0, "\(quiet.stderr)")
        #expect(quiet.stderr.isEmpty, "\(quiet.stderr)")
        let id = quiet.stdout.trimmingCharacters(in: .newlines)
        #expect(quiet.stdout == id + "\n")
        let list = try Self.json(try sandbox.chime("list", "--json").stdout)
        let ids = ((Self.find("reminders", in: list) as? [[String: Any]]) ?? []).compactMap { $0["id"] as? String }
        #expect(ids.contains(id), "\(ids) \(id)")
        #expect(try sandbox.chime("at", "23:59", "Late", "--quiet").stdout.split(separator: "\n").count == 1)
    }
}

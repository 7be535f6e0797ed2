import ChimeCore
import Foundation
import Testing

/// `chime med add --after-last`, `--max` and `--taper` through the real executable.
@Suite("End to end: doses after the last taken, daily maximums, tapers", .serialized)
struct DoseAfterLastCLITests {
    /// An instant as `--json` writes it.
    static func instant(_ text: Any?) -> Date? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return (text as? String).flatMap { formatter.date(from: $0) }
    }

    @Test("--after-last: nothing before the first dose taken, then the next 6 hours after the Take; --at with it is refused")
    func afterLast() throws {
        let sandbox = try Sandbox(extra: ["TZ": "UTC"])
        let added = try sandbox.chime(
            "med",
            "add",
            "Pain",
            "--amount",
            "500",
            "--unit",
            "mg",
            "--after-last",
            "6h",
            "--max",
            "4/day",
            "--json"
        )
        #expect(added.status == 0, "\(added.stderr)")
        let schedule = try #require(
            ((try jsonObject(added.stdout)["medication"] as? [String: Any])?["schedules"] as? [[String: Any]])?.first
        )
        #expect(schedule["after_last_s"] as? Int == 21_600)
        #expect(schedule["max_per_day"] as? Int == 4)
        #expect(schedule["summary"] as? String == "6h after each dose taken, at most 4 in 24h")
        let before = try sandbox.chime("med", "next", "--json")
        #expect((try jsonObject(before.stdout)["doses"] as? [Any])?.isEmpty == true, "\(before.stdout)")
        let listed = try sandbox.chime("med", "list")
        #expect(listed.stdout.contains("No alert until a dose is taken: 'chime dose take Pain' starts the interval"), "\(listed.stdout)")

        let taken = try sandbox.chime("dose", "take", "Pain", "--json")
        #expect(taken.status == 0, "\(taken.stderr)")
        let takenAt = try #require(Self.instant((try jsonObject(taken.stdout)["dose"] as? [String: Any])?["taken"]))
        let next = try #require((try jsonObject(try sandbox.chime("med", "next", "--json").stdout)["doses"] as? [[String: Any]]))
        #expect(next.count == 1)
        let due = try #require(Self.instant(next.first?["due"]))
        #expect(abs(due.timeIntervalSince(takenAt) - 21_600) < 0.002, "\(due) \(takenAt)")
        #expect((next.first?["alert"] as? String)?.hasPrefix("med-") == true)

        // Clock times with it: one line, exit 64, nothing written.
        for arguments in [["--at", "08:00"], ["--as-needed"], ["--days", "mon"]] {
            let refused = try sandbox.chime(["med", "add", "Other", "--amount", "1", "--unit", "mg", "--after-last", "6h"] + arguments)
            #expect(refused.status == 64, "\(arguments): \(refused.stderr)")
            #expect(refused.stderr.split(separator: "\n").count == 1, "\(refused.stderr)")
        }
        let atToo = try sandbox.chime("med", "add", "Other", "--amount", "1", "--unit", "mg", "--after-last", "6h", "--at", "08:00")
        #expect(
            atToo.stderr.hasPrefix(
                "chime: --after-last and --at contradict each other: each dose comes 6h after the last one taken, not at clock times"
            )
        )
        let bad = try sandbox.chime("med", "add", "Other", "--amount", "1", "--unit", "mg", "--after-last", "soon")
        #expect(bad.status == 64 && bad.stderr.contains("--after-last"), "\(bad.stderr)")
        let maxOnClock = try sandbox.chime("med", "add", "Other", "--amount", "1", "--unit", "mg", "--at", "08:00", "--max", "4/day")
        #expect(maxOnClock.status == 64, "\(maxOnClock.stderr)")
        let names = try sandbox.chime("med", "list", "--all", "--json")
        #expect((try jsonObject(names.stdout)["count"] as? Int) == 1)
    }

    /// Runs `chime` with its clock set to `local` (libfaketime, through a shell: see
    /// ``ChimeExecutable/process(_:environment:throughShell:)``), in the sandbox's zone.
    static func chime(at local: String, in sandbox: borrowing Sandbox, _ arguments: String...) throws -> (status: Int32, stdout: String) {
        var environment = sandbox.environment
        environment["LD_PRELOAD"] = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1"
        environment["FAKETIME"] = "@" + local
        environment["FAKETIME_DONT_FAKE_MONOTONIC"] = "1"
        let (process, out, _) = ChimeExecutable.process(arguments, environment: environment, throughShell: true)
        try process.run()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: stdout, as: UTF8.self))
    }

    @Test("--after-last 6h over the spring-forward night in Berlin: 6 hours elapsed, as Python's zoneinfo says")
    func afterLastOverDaylightSavingMatchesZoneinfo() throws {
        // Taken at 00:30 on the last Sunday of March next year; Python says when 6 hours later is.
        let script = #"""
            import json, sys
            from datetime import date, datetime, timedelta, timezone
            from zoneinfo import ZoneInfo
            zone = ZoneInfo("Europe/Berlin")
            year = int(sys.argv[1])
            day = date(year, 3, 31)
            while day.weekday() != 6:
                day -= timedelta(days=1)
            taken = datetime(day.year, day.month, day.day, 0, 30, tzinfo=zone)
            due = (taken.astimezone(timezone.utc) + timedelta(hours=6)).astimezone(zone)
            print(json.dumps({
                "taken": taken.strftime("%Y-%m-%d %H:%M:%S"),
                "due": due.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M"),
                "when": due.strftime("%Y%m%d-%H%M"),
            }))
            """#
        var utc = Calendar(identifier: .gregorian)
        utc.timeZone = TimeZone(identifier: "UTC")!
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-c", script, String(utc.component(.year, from: Date()) + 1)]
        process.environment = ["PYTHONTZPATH": "/usr/share/zoneinfo", "PATH": "/usr/bin:/bin"]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let reference = try #require(try JSONSerialization.jsonObject(with: data) as? [String: String])
        #expect(reference["when"]?.hasSuffix("-0730") == true, "\(reference)")

        let sandbox = try Sandbox(extra: ["TZ": "Europe/Berlin"])
        let added = try sandbox.chime("med", "add", "Pain", "--amount", "500", "--unit", "mg", "--after-last", "6h", "--json")
        #expect(added.status == 0, "\(added.stderr)")
        let scheduleID = try #require(
            ((try jsonObject(added.stdout)["medication"] as? [String: Any])?["schedules"] as? [[String: Any]])?.first?["id"] as? Int
        )
        let taken = try Self.chime(at: try #require(reference["taken"]), in: sandbox, "dose", "take", "Pain")
        #expect(taken.status == 0 && taken.stdout.hasPrefix("Logged dose"), "\(taken.stdout)")
        let next = try #require((try jsonObject(try sandbox.chime("med", "next", "--json").stdout)["doses"] as? [[String: Any]])?.first)
        #expect((next["due"] as? String)?.hasPrefix(try #require(reference["due"])) == true, "\(next) \(reference)")
        #expect(next["alert"] as? String == "med-\(scheduleID)-" + (reference["when"] ?? ""), "\(next)")
    }

    @Test("--max 2/day: the third Take in 24 hours is refused (exit 4) with when the next is allowed")
    func dailyMaximum() throws {
        let sandbox = try Sandbox(extra: ["TZ": "UTC"])
        let added = try sandbox.chime("med", "add", "Ibuprofen", "--amount", "400", "--unit", "mg", "--as-needed", "--max", "2/day")
        #expect(added.status == 0, "\(added.stderr)")
        let first = try sandbox.chime("dose", "take", "Ibuprofen", "--json")
        #expect(first.status == 0, "\(first.stderr)")
        let takenAt = try #require(Self.instant((try jsonObject(first.stdout)["dose"] as? [String: Any])?["taken"]))
        #expect(try sandbox.chime("dose", "take", "Ibuprofen").status == 0)
        let third = try sandbox.chime("dose", "take", "Ibuprofen")
        #expect(third.status == 4, "\(third.stderr)")
        let clock = TimeText.clock(takenAt, in: TimeZone(identifier: "UTC")!)
        #expect(
            third.stderr.hasPrefix(
                "chime: Ibuprofen is at its maximum of 2 in 24 hours: 2 taken since \(clock); the next is allowed tomorrow at \(clock)\n"
            )
        )
        #expect(third.stdout.isEmpty)
        let doses = try sandbox.chime("doses", "--json")
        #expect((try jsonObject(doses.stdout)["doses"] as? [Any])?.count == 2)
        let badMax = try sandbox.chime("med", "edit", "Ibuprofen", "--max", "lots")
        #expect(badMax.status == 64)
        #expect(
            badMax.stderr.hasPrefix(
                "chime: invalid max 'lots': expected a count of doses in 24 hours from 1 to 100, such as 4/day (or 4) (see"
            )
        )
    }

    @Test("--taper: med next, list, show and the export say the amount of each day; it stops after the last date; a bad piece is refused")
    func taper() throws {
        let sandbox = try Sandbox(extra: ["TZ": "UTC"])
        let today = CivilDay.of(Date(), in: TimeZone(identifier: "UTC")!)
        let day = { (offset: Int) in CivilDay.format(today + offset) }
        let taper = "10mg until \(day(2)), 5mg until \(day(3)), then stop"
        let added = try sandbox.chime(
            "med",
            "add",
            "Prednisone",
            "--unit",
            "mg",
            "--at",
            "08:00",
            "--start",
            day(1),
            "--taper",
            taper,
            "--json"
        )
        #expect(added.status == 0, "\(added.stderr)")
        let medication = try #require(try jsonObject(added.stdout)["medication"] as? [String: Any])
        #expect(medication["taper"] as? String == "10 mg until \(day(2)), 5 mg until \(day(3)), then stop")
        #expect(medication["end"] as? String == day(3))
        #expect(medication["amount_today"] as? Double == 10)

        let next = try #require(
            try jsonObject(try sandbox.chime("med", "next", "--count", "10", "--json").stdout)["doses"] as? [[String: Any]]
        )
        #expect(next.map { $0["amount"] as? Double ?? 0 } == [10, 10, 5])
        #expect(next.map { $0["label"] as? String ?? "" } == ["Prednisone (10 mg)", "Prednisone (10 mg)", "Prednisone (5 mg)"])
        let shown = try sandbox.chime("med", "show", "Prednisone")
        #expect(shown.stdout.contains("Taper: 10 mg until \(day(2)), 5 mg until \(day(3)), then stop"), "\(shown.stdout)")
        #expect(shown.stdout.contains("Prednisone (10 mg)"), "\(shown.stdout)")

        // The last day's dose, skipped ahead: the export says 5 mg (the first day's, made already, 10 mg).
        let last = try #require(next.last?["alert"] as? String)
        #expect(try sandbox.chime("dose", "skip", last).status == 0)
        let export = try sandbox.chime("export", "doses", "--from", day(0), "--to", day(5))
        let rows = try CSVReader.parse(export.stdout)
        #expect(rows.dropFirst().map { "\($0[6]) \($0[4])" } == ["pending 10", "skipped 5"], "\(export.stdout)")

        // A bad piece: one line naming it, exit 64, nothing written.
        let bad = try sandbox.chime("med", "add", "Other", "--unit", "mg", "--at", "08:00", "--taper", "10mg untl 12-10, then stop")
        #expect(bad.status == 64)
        #expect(
            bad.stderr.hasPrefix(
                "chime: invalid taper piece '10mg untl 12-10': expected pieces 'AMOUNT[UNIT] until DATE' separated by commas, "
                    + "dates YYYY-MM-DD or MM-DD in order, optionally ending 'then stop', such as \"10mg until 12-10, 5mg until 12-20, then stop\" (see"
            )
        )
        let unit = try sandbox.chime("med", "add", "Other", "--unit", "mg", "--at", "08:00", "--taper", "10ml until 12-10")
        #expect(unit.status == 64)
        #expect(unit.stderr.hasPrefix("chime: invalid taper piece '10ml': expected amounts in the medication's unit, mg (see"))
        let both = try sandbox.chime("med", "add", "Other", "--amount", "5", "--unit", "mg", "--at", "08:00", "--taper", "10mg until 12-10")
        #expect(both.status == 64 && both.stderr.contains("--amount and --taper"), "\(both.stderr)")
        #expect((try jsonObject(try sandbox.chime("med", "list", "--all", "--json").stdout)["count"] as? Int) == 1)

        // An amount alone ends the taper (and the end it set).
        let edited = try sandbox.chime("med", "edit", "Prednisone", "--amount", "2.5", "--json")
        #expect(edited.status == 0, "\(edited.stderr)")
        let plain = try #require(try jsonObject(edited.stdout)["medication"] as? [String: Any])
        #expect(plain["taper"] is NSNull && plain["end"] is NSNull && plain["amount_today"] as? Double == 2.5, "\(plain)")
    }
}

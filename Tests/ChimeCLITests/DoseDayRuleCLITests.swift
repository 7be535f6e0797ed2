import ChimeTesting
import Foundation
import Testing

/// `chime med add --every` and `--cycle` through the real executable: the coming doses of a
/// 21/7 cycle across a DST change against Python's zoneinfo, and bad input refused.
@Suite("End to end: doses every N days and in on/off cycles", .serialized)
struct DoseDayRuleCLITests {
    /// The first 60 doses at 02:30 and 20:00 of a 21/7 cycle from `start` in Europe/Berlin, as
    /// Python computes them: `due` (UTC, as `--json` writes instants) and the alert id's date and time.
    static func reference(start: String) throws -> [[String: String]] {
        let script = #"""
            import json, sys
            from datetime import date, datetime, timedelta, timezone
            from zoneinfo import ZoneInfo
            zone = ZoneInfo("Europe/Berlin")
            start = date.fromisoformat(sys.argv[1])
            doses, day = [], start
            while len(doses) < 60:
                if (day - start).days % 28 < 21:
                    for hour, minute in [(2, 30), (20, 0)]:
                        # fold=0: a time in the spring-forward gap is read with the offset before it.
                        local = datetime(day.year, day.month, day.day, hour, minute, tzinfo=zone)
                        doses.append({
                            "due": local.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000Z"),
                            "when": day.strftime("%Y%m%d") + "-%02d%02d" % (hour, minute),
                        })
                day += timedelta(days=1)
            print(json.dumps(doses[:60]))
            """#
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-c", script, start]
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("chime-zoneinfo-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        var environment = try IsolatedEnvironment.variables(root: root)
        environment["PYTHONTZPATH"] = "/usr/share/zoneinfo"
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        return try #require(try JSONSerialization.jsonObject(with: data) as? [[String: String]])
    }

    @Test("med next --count 60 --json of a 21/7 cycle over a DST change equals Python's zoneinfo")
    func cycleNextDosesMatchZoneinfo() throws {
        // March 20 of next year: the first 21 days on hold the last Sunday of March (clocks
        // jump from 02:00 to 03:00 in Berlin), then 7 off, then 9 days of the next cycle.
        var utc = Calendar(identifier: .gregorian)
        utc.timeZone = TimeZone(identifier: "UTC")!
        let start = "\(utc.component(.year, from: Date()) + 1)-03-20"
        let sandbox = try Sandbox(extra: ["TZ": "Europe/Berlin"])
        let added = try sandbox.chime(
            "med",
            "add",
            "Pill",
            "--amount",
            "1",
            "--unit",
            "tablet",
            "--at",
            "02:30,20:00",
            "--cycle",
            "21/7",
            "--start",
            start,
            "--json"
        )
        #expect(added.status == 0, "\(added.stderr)")
        let medication = try #require(try jsonObject(added.stdout)["medication"] as? [String: Any])
        let schedule = try #require((medication["schedules"] as? [[String: Any]])?.first)
        #expect(schedule["cycle"] as? String == "21/7")
        #expect(schedule["from"] as? String == start)
        #expect(schedule["summary"] as? String == "21 days on, 7 off from \(start) 02:30,20:00")
        let scheduleID = try #require(schedule["id"] as? Int)

        let next = try sandbox.chime("med", "next", "--count", "60", "--json")
        #expect(next.status == 0, "\(next.stderr)")
        let doses = try #require(try jsonObject(next.stdout)["doses"] as? [[String: Any]])
        let expected = try Self.reference(start: start)
        #expect(expected.count == 60)
        #expect(doses.count == 60)
        #expect(doses.map { $0["due"] as? String ?? "" } == expected.map { $0["due"] ?? "" })
        #expect(doses.map { $0["alert"] as? String ?? "" } == expected.map { "med-\(scheduleID)-" + ($0["when"] ?? "") })
        #expect(
            doses.allSatisfy { $0["medication"] as? String == "Pill" && $0["amount"] as? Double == 1 && $0["unit"] as? String == "tablet" }
        )
        #expect(doses.allSatisfy { $0["zone"] as? String == "Europe/Berlin" })
        // The spring-forward night's 02:30 is the one dose with a note.
        #expect(doses.compactMap { $0["note"] as? String }.count == 1)
    }

    @Test("Bad --every and --cycle, or two ways of choosing days, are refused (exit 64, one line) and nothing is stored")
    func refusals() throws {
        let sandbox = try Sandbox()
        let base = ["med", "add", "Pill", "--amount", "1", "--unit", "tablet", "--at", "08:00"]
        let exclusive =
            "chime: --every, --cycle and --days are mutually exclusive: choose the days one way (every N days, an on/off cycle, or days of the week)"
        let cases: [(arguments: [String], stderr: String)] = [
            (["--cycle", "21-7"], "chime: invalid cycle '21-7': expected ON/OFF days, each from 1 to 365, e.g. 21/7 (21 days on, 7 off)"),
            (["--cycle", "21/0"], "chime: invalid cycle '21/0': expected ON/OFF days, each from 1 to 365, e.g. 21/7 (21 days on, 7 off)"),
            (
                ["--every", "1d"],
                "chime: invalid every '1d': expected a number of days from 2 to 365, such as 3d (every third day), or weeks such as 2w"
            ),
            (
                ["--every", "3x"],
                "chime: invalid every '3x': expected a number of days from 2 to 365, such as 3d (every third day), or weeks such as 2w"
            ),
            (["--every", "3d", "--days", "mon"], exclusive),
            (["--every", "3d", "--cycle", "21/7"], exclusive),
            (["--cycle", "21/7", "--days", "weekdays"], exclusive),
            (["--cycle", "21/7", "--start", "2026-02-30"], "chime: invalid start date '2026-02-30'"),
        ]
        for (arguments, stderr) in cases {
            let result = try sandbox.chime(base + arguments)
            #expect(result.status == 64, "\(arguments): \(result.stderr)")
            #expect(result.stderr.hasPrefix(stderr), "\(arguments): \(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(arguments): \(result.stderr)")
            #expect(result.stdout.isEmpty)
        }
        let asNeeded = try sandbox.chime("med", "add", "Pill", "--amount", "1", "--unit", "tablet", "--as-needed", "--every", "2d")
        #expect(asNeeded.status == 64)
        #expect(asNeeded.stderr.contains("--every"), "\(asNeeded.stderr)")
        let list = try sandbox.chime("med", "list", "--all", "--json")
        #expect(list.status == 0, "\(list.stderr)")
        #expect(try jsonObject(list.stdout)["count"] as? Int == 0)

        // On an existing medication: refused the same way, and it keeps its schedule.
        #expect(try sandbox.chime(base + ["--every", "2d"]).status == 0)
        let edit = try sandbox.chime("med", "edit", "Pill", "--cycle", "7-7")
        #expect(edit.status == 64)
        #expect(edit.stderr.hasPrefix("chime: invalid cycle '7-7'"), "\(edit.stderr)")
        let shown = try sandbox.chime("med", "show", "Pill", "--json")
        let schedule = try #require(
            ((try jsonObject(shown.stdout)["medication"] as? [String: Any])?["schedules"] as? [[String: Any]])?.first
        )
        #expect(schedule["every_days"] as? Int == 2)
    }

    @Test("dose postpone moves one coming dose later, and refuses bad input with exit 64")
    func postpone() throws {
        let sandbox = try Sandbox()
        // Three hours from now (UTC, the sandbox's zone), to the minute.
        let soon = Date().addingTimeInterval(3 * 3_600)
        var utc = Calendar(identifier: .gregorian)
        utc.timeZone = TimeZone(identifier: "UTC")!
        let at = String(format: "%02d:%02d", utc.component(.hour, from: soon), utc.component(.minute, from: soon))
        #expect(try sandbox.chime("med", "add", "Zinc", "--amount", "25", "--unit", "mg", "--at", at).status == 0)
        for (arguments, stderr) in [
            (["3x"], "chime: invalid duration '3x'"),
            (["25h"], "chime: invalid duration '25h'"),
            ([String](), "chime: missing the new time: give a duration such as 2h, or --to 14:00"),
            (["2h", "--to", "14:00"], "chime: a duration and --to contradict each other"),
            (["--to", "25:00"], "chime: invalid time '25:00'"),
        ] {
            let result = try sandbox.chime(["dose", "postpone", "Zinc"] + arguments)
            #expect(result.status == 64, "\(arguments): \(result.stderr)")
            #expect(result.stderr.hasPrefix(stderr), "\(arguments): \(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(arguments): \(result.stderr)")
        }
        let before = try #require(
            (try jsonObject(try sandbox.chime("med", "next", "Zinc", "--count", "1", "--json").stdout)["doses"] as? [[String: Any]])?.first
        )
        let result = try sandbox.chime("dose", "postpone", "Zinc", "2h", "--json")
        #expect(result.status == 0, "\(result.stderr)")
        let object = try jsonObject(result.stdout)
        let dose = try #require(object["dose"] as? [String: Any])
        #expect(object["previous"] as? String == before["due"] as? String)
        let iso = ISO8601DateFormatter()
        iso.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let from = try #require(iso.date(from: before["due"] as? String ?? ""))
        let to = try #require(iso.date(from: dose["scheduled"] as? String ?? ""))
        #expect(to.timeIntervalSince(from) == 7_200)
        #expect(dose["occurrence"] as? String == before["alert"] as? String)
        // The preview shows the new time; the schedule is unchanged.
        let after = try #require(
            (try jsonObject(try sandbox.chime("med", "next", "Zinc", "--count", "2", "--json").stdout)["doses"] as? [[String: Any]])
        )
        #expect(after.first?["due"] as? String == dose["scheduled"] as? String)
        let shown = try jsonObject(try sandbox.chime("med", "show", "Zinc", "--json").stdout)
        #expect((((shown["medication"] as? [String: Any])?["schedules"] as? [[String: Any]])?.first?["times"] as? [String]) == [at])
    }
}

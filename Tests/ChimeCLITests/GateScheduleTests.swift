import Foundation
import Synchronization
import Testing

/// `chime gate add ID --hours --days --budget` and `chime gate edit`, end to end on a terminal
/// gate (a pty, no display): outside its hours a gated program opens at once and the launch is
/// recorded; inside them the gate pauses, and past the budget it says how many opens were used.
@Suite struct GateScheduleTests {
    /// "HH:MM" of now plus `hours` hours, in UTC (the sandbox's TZ).
    static func clock(_ hours: Int) -> String {
        let seconds = ((Int(Date().timeIntervalSince1970) + hours * 3_600) % 86_400 + 86_400) % 86_400
        let (hour, minute) = (seconds / 3_600, (seconds % 3_600) / 60)
        return String(format: "%02d:%02d", hour, minute)
    }

    /// A sandbox with TZ=UTC and the program `chess.desktop` installed.
    static func sandbox() throws -> Sandbox {
        let sandbox = try Sandbox(extra: ["TZ": "UTC"])
        let applications = URL(fileURLWithPath: sandbox.environment["XDG_DATA_HOME"] ?? sandbox.directory.path)
            .appendingPathComponent("applications")
        try FileManager.default.createDirectory(at: applications, withIntermediateDirectories: true)
        try "[Desktop Entry]\nType=Application\nName=Chess\nExec=/bin/true\n"
            .write(to: applications.appendingPathComponent("chess.desktop"), atomically: true, encoding: .utf8)
        return sandbox
    }

    @Test func badHoursDaysOrBudgetSayWhatIsAcceptedAndWriteNothing() throws {
        let sandbox = try Self.sandbox()
        for (option, value, line) in [
            ("--hours", "9-5", "chime: invalid hours '9-5': expected HH:MM-HH:MM, e.g. 09:00-17:00"),
            ("--days", "someday", "chime: invalid days 'someday': expected every day, weekdays, weekends"),
            ("--budget", "3/week", "chime: invalid budget '3/week': expected N/day, opens per day from 1 to 1000, e.g. 3/day"),
        ] {
            let result = try sandbox.chime("gate", "add", "chess", option, value)
            #expect(result.status == 64, "\(result)")
            #expect(result.stderr.hasPrefix(line), "\(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
        }
        #expect(try sandbox.chime("gate", "list").stdout == "No program is gated.\n")
        #expect(try sandbox.chime("gate", "edit", "chess", "--always").status == 3)
    }

    @Test func outsideItsHoursTheProgramOpensAtOnceInsideThemTheGatePauses() async throws {
        let sandbox = try Self.sandbox()
        // Hours that exclude now: from two hours ahead to three.
        let later = "\(Self.clock(2))-\(Self.clock(3))"
        let add = try sandbox.chime("gate", "add", "chess", "--hours", later, "--days", "every day")
        #expect(add.status == 0, "\(add)")
        #expect(add.stdout.contains("Gated \(later); outside them it opens at once."), "\(add.stdout)")
        let list = try jsonObject(try sandbox.chime("gate", "list", "--json").stdout)
        let program = (list["programs"] as? [[String: Any]])?.first
        #expect(program?["schedule"] as? String == later)
        #expect(program?["days"] is NSNull)
        #expect(program?["hours"] as? String == later)

        // Outside its hours: the program starts at once, and the launch is recorded.
        let record = sandbox.directory.appendingPathComponent("started.txt").path
        let gate = ["gate", "open", "chess.desktop", "--terminal"]
        let outside = try GateTerminalTests.Terminal(sandbox: sandbox, record: record, arguments: ["outside"], gate: gate)
        #expect(await outside.finish() == 0)
        #expect(await outside.shows("starts without a gate: outside its hours (\(later))"))
        #expect(!outside.screen.withLock { $0.contains("Exit to Focus") })
        #expect(try String(contentsOfFile: record, encoding: .utf8) == "outside\n")

        // Inside its hours (an hour ago to two hours ahead), with a budget of 1 open a day
        // already used: the gate pauses and says so.
        let edit = try sandbox.chime("gate", "edit", "chess", "--hours", "\(Self.clock(-1))-\(Self.clock(2))", "--budget", "1/day")
        #expect(edit.status == 0, "\(edit)")
        try FileManager.default.removeItem(atPath: record)
        let inside = try GateTerminalTests.Terminal(sandbox: sandbox, record: record, arguments: ["inside"], gate: gate)
        #expect(await inside.shows("Exit to Focus"), "\(inside.screen.withLock { $0 })")
        #expect(await inside.shows("2nd open today, budget 1"))
        inside.type("e")
        #expect(await inside.finish() == 0)
        #expect(!FileManager.default.fileExists(atPath: record))

        let stats = try jsonObject(try sandbox.chime("gate", "stats", "--json").stdout)
        let today = (stats["today"] as? [[String: Any]])?.first
        #expect(today?["program"] as? String == "chess.desktop")
        #expect(today?["opens"] as? Int == 1)
        #expect(today?["outside_schedule"] as? Int == 1)
        #expect(today?["budget_per_day"] as? Int == 1)
        #expect(stats["conscious_exits"] as? Int == 1)
        let text = try sandbox.chime("gate", "stats").stdout
        #expect(text.contains("chess.desktop  1 open today, budget 1; 1 outside its schedule, not gated"), "\(text)")

        // --always: gated at all hours again; un-gating forgets the rule.
        #expect(try sandbox.chime("gate", "edit", "chess", "--always", "--no-budget").status == 0)
        #expect(try sandbox.chime("gate", "list").stdout == "  chess.desktop\n")
    }
}

import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The app's Doses page end to end (`chime app doses` under Xvfb, with a session bus and the
/// accessibility bus of the test's own), driven through AT-SPI by accessible name; what it did
/// read back by AT-SPI and by the CLI (`chime med list`, `chime doses`, `chime adherence`); the
/// dose's alert shown by a runner (`chime run --notifier desktop`) on the test notification
/// server (scripts/notification-server: a bus, Xvfb and dunst of their own, and a bus monitor).
@Suite(.serialized)
struct AppDosesTests {
    /// scripts/notification-server, started in `directory` (short: its socket path must fit).
    final class AlertServer {
        static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("scripts/notification-server").path
        let directory: URL
        let display: VirtualDisplay
        private(set) var environment: [String: String] = [:]

        init(_ display: VirtualDisplay) throws {
            self.display = display
            directory = URL(fileURLWithPath: "/tmp/chime-doses-\(UUID().uuidString.prefix(8))")
            let (status, output) = try display.run(Self.script, ["start", directory.path])
            guard status == 0 else { throw SpawnError(message: "notification-server start failed: \(output)") }
            for line in try String(contentsOf: directory.appendingPathComponent("env"), encoding: .utf8).split(separator: "\n") {
                let assignment = line.replacingOccurrences(of: "export ", with: "")
                guard let equals = assignment.firstIndex(of: "=") else { continue }
                environment[String(assignment[..<equals])] = String(assignment[assignment.index(after: equals)...])
            }
        }

        /// The bus monitor's log of org.freedesktop.Notifications.
        var log: String { (try? String(contentsOf: directory.appendingPathComponent("monitor.log"), encoding: .utf8)) ?? "" }

        /// Stops what the script started (by the pids it recorded).
        func stop() {
            _ = try? display.run(Self.script, ["stop", directory.path])
            try? FileManager.default.removeItem(at: directory)
        }
    }

    /// The next whole minute at least 20 seconds ahead, `HH:MM` in UTC (the test's zone), and
    /// when it is.
    static func nextMinute(after now: Date = Date()) -> (text: String, instant: Date) {
        let minute = (now.timeIntervalSince1970 + 20) / 60
        let instant = Date(timeIntervalSince1970: minute.rounded(.up) * 60)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.hour, .minute], from: instant)
        return (String(format: "%02d:%02d", parts.hour!, parts.minute!), instant)
    }

    static func json(_ text: String) -> [String: Any] {
        ((try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any]) ?? [:]
    }

    @Test func aMedicationAddedInTheAppIsTakenThereAndTheHistoryAndAdherenceShowIt() async throws {
        // Given the app on its Doses page, with no medications
        let display = try VirtualDisplay()
        defer { display.stop() }
        let bus = try SessionBus(on: display)
        defer { bus.stop(display: display) }
        let environment = AppWindowTests.environment(display, bus)
        let app = try GateWindowProcess(on: display, ["app", "doses"], environment: environment)
        defer { app.stop() }
        #expect(await app.next("presented ") == "presented page=doses", "\(app.lines) \(app.stderr)")
        func atspi(_ arguments: String...) throws -> (status: Int32, output: String) {
            try Accessibility.run(arguments, on: display, environment: environment)
        }
        /// Every accessible's name, for a failure's message.
        func names() -> String { (try? Accessibility.run(["names"], on: display, environment: environment).output) ?? "" }
        let ready = try await Accessibility.wait(["has", "Add Medication"], on: display, environment: environment) { status, _ in
            status == 0
        }
        #expect(!ready.isEmpty, "no Add Medication button: \(app.stderr)")
        #expect(try atspi("has", "No medications yet.").status == 0)
        // And a runner showing alerts on the test notification server, on the same store
        let server = try AlertServer(display)
        defer { server.stop() }
        var runnerEnvironment = AppWindowTests.environment(display, nil)
        runnerEnvironment.merge(server.environment) { _, server in server }
        let runner = try Spawn.start(
            AppWindowTests.chime,
            ["run", "--notifier", "desktop"],
            environment: runnerEnvironment,
            output: display.directory.appendingPathComponent("runner.out").path,
            errors: display.directory.appendingPathComponent("runner.err").path
        )
        defer { Spawn.stop(runner) }
        func runnerErrors() -> String {
            (try? String(contentsOf: display.directory.appendingPathComponent("runner.err"), encoding: .utf8)) ?? ""
        }

        // When the person adds a medication with a bad amount first
        #expect(try atspi("click", "Add Medication").output.hasPrefix("clicked"))
        let named = try await Accessibility.wait(["entry-set", "Name", "Testamin", "dialog"], on: display, environment: environment) {
            status,
            _ in status == 0
        }
        #expect(named.hasPrefix("set"), "\(named) \(names())")
        let due = Self.nextMinute()
        #expect(try atspi("entry-set", "Amount", "abc", "dialog").status == 0)
        #expect(try atspi("entry-set", "Unit", "mg", "dialog").status == 0)
        #expect(try atspi("entry-set", "Times", due.text, "dialog").status == 0)

        // Then the amount's error shows under it, in the CLI's words
        let errors = display.directory.appendingPathComponent("cli-errors").path
        let (cliStatus, _) = try display.run(
            AppWindowTests.chime,
            ["med", "add", "Testamin", "--amount", "abc", "--unit", "mg", "--at", due.text],
            environment: environment,
            errors: errors
        )
        let cliError = ((try? String(contentsOfFile: errors, encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(cliStatus == 64, "\(cliError)")
        // (Its line, after the program's name and before its pointer to the help.)
        let line = try #require(cliError.split(separator: "\n").first { $0.contains("invalid amount") }, "\(cliError)")
        let message = String(line[line.range(of: "invalid amount")!.lowerBound...]).components(separatedBy: " (see 'chime").first!
        #expect(try atspi("has", message, "dialog").status == 0, "\(cliError) \(names())")

        // When they correct it and save
        #expect(try atspi("entry-set", "Amount", "5", "dialog").status == 0)
        #expect(try atspi("has", message, "dialog").status != 0)
        #expect(try atspi("click", "Save", "dialog").output.hasPrefix("clicked"))

        // Then the CLI lists it, with its schedule
        var medications: [[String: Any]] = []
        for _ in 0..<40 {
            let listed = try display.run(AppWindowTests.chime, ["med", "list", "--json"], environment: environment).output
            medications = (Self.json(listed)["medications"] as? [[String: Any]]) ?? []
            if !medications.isEmpty { break }
            try await Task.sleep(for: .milliseconds(250))
        }
        #expect(medications.count == 1)
        #expect(medications.first?["name"] as? String == "Testamin")

        // And the dose's alert comes on the notification server when it is due
        var alerted = false
        let deadline = due.instant.addingTimeInterval(30)
        while !alerted && Date() < deadline {
            alerted = server.log.contains(#"string "Testamin 5 mg""#)
            if !alerted { try await Task.sleep(for: .milliseconds(250)) }
        }
        #expect(alerted, "no alert: \(server.log) \(runnerErrors())")

        // When they take it in the app, on today's list
        let take = "Take Testamin (5 mg), due \(due.text)"
        let taken = try await Accessibility.wait(["click", take], on: display, environment: environment) { status, _ in status == 0 }
        #expect(taken.hasPrefix("clicked"), "\(taken) \(names())")

        // Then the row shows its answer, and the history says it was taken
        let answer = try await Accessibility.wait(
            ["text", "Answer, Testamin (5 mg), due \(due.text)"],
            on: display,
            environment: environment
        ) { _, output in output.hasPrefix("taken at") }
        #expect(answer.hasPrefix("taken at"), "\(answer)")
        #expect(try atspi("has", take).status != 0)
        // And its alert on the desktop is replaced by what was recorded, as its button would
        var confirmed = false
        for _ in 0..<40 where !confirmed {
            confirmed = server.log.contains(#"string "✓ Testamin 5 mg taken at "#)
            if !confirmed { try await Task.sleep(for: .milliseconds(250)) }
        }
        #expect(confirmed, "\(server.log)")
        let history = try display.run(AppWindowTests.chime, ["doses", "--json"], environment: environment).output
        let doses = (Self.json(history)["doses"] as? [[String: Any]]) ?? []
        #expect(doses.count == 1)
        #expect(doses.first?["status"] as? String == "taken", "\(history)")
        #expect(doses.first?["label"] as? String == "Testamin (5 mg)")

        // And the adherence counts it (the page reads again when shown)
        let adherence = try display.run(AppWindowTests.chime, ["adherence", "--json"], environment: environment).output
        let overall = Self.json(adherence)["overall"] as? [String: Any]
        #expect(overall?["taken"] as? Int == 1, "\(adherence)")
        #expect(overall?["counted"] as? Int == 1, "\(adherence)")
        #expect(try atspi("click", "Today").status == 0)
        #expect(try atspi("click", "Doses").status == 0)
        let figure = try await Accessibility.wait(["text", "Adherence"], on: display, environment: environment) { _, output in
            output.contains("100%")
        }
        #expect(figure.trimmingCharacters(in: .whitespacesAndNewlines) == "Adherence, last 7 days: 100% (1 taken, 0 missed, 0 skipped)")
        let chart = try atspi("description", "Adherence chart").output
        #expect(chart.contains(": 100% (1 of 1 taken)"), "\(chart)")
        let level = try atspi("description", "Adherence of Testamin").output
        #expect(level.trimmingCharacters(in: .whitespacesAndNewlines) == "Testamin: 100% (1 taken, 0 missed, 0 skipped)")
    }
}

import Foundation
import Testing

/// The Gateway page's rule form end to end: a harmless program gated with `chime gate add`, its
/// hours, days and minutes budget set through Edit's form by accessible name (a bad value first,
/// refused under its field with nothing written), then checked with `chime gate list --json`
/// and `chime gate stats --json`.
@Suite(.serialized)
struct AppGateRuleTests {
    static let entryID = AppGatewayTests.entryID

    /// `chime gate list --json`'s program `entryID`.
    static func listed(_ display: VirtualDisplay, _ environment: [String: String]) throws -> [String: Any] {
        let (status, output) = try display.run(AppWindowTests.chime, ["gate", "list", "--json"], environment: environment)
        #expect(status == 0, "\(output)")
        let json = try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any]
        let programs = json?["programs"] as? [[String: Any]] ?? []
        return programs.first { $0["id"] as? String == entryID } ?? [:]
    }

    @Test func aProgramsHoursDaysAndMinutesBudgetAreSetThroughTheForm() async throws {
        // Given a harmless program gated with `chime gate add`, and the app on the Gateway page
        let display = try VirtualDisplay()
        defer { display.stop() }
        let bus = try SessionBus(on: display)
        defer { bus.stop(display: display) }
        let environment = AppWindowTests.environment(display, bus)
        let applications = URL(fileURLWithPath: environment["XDG_DATA_HOME"]!).appendingPathComponent("applications")
        #expect(applications.path.hasPrefix(display.directory.path))
        try FileManager.default.createDirectory(at: applications, withIntermediateDirectories: true)
        try Data(AppGatewayTests.entry.utf8).write(to: applications.appendingPathComponent(Self.entryID))
        let (added, output) = try display.run(AppWindowTests.chime, ["gate", "add", Self.entryID], environment: environment)
        #expect(added == 0, "\(output)")
        let app = try GateWindowProcess(on: display, ["app", "gateway"], environment: environment)
        defer { app.stop() }
        #expect(await app.next("presented ") == "presented page=gateway", "\(app.lines) \(app.stderr)")
        func run(_ arguments: [String]) async throws -> String {
            try await Accessibility.wait(arguments, on: display, environment: environment) { status, _ in status == 0 }
        }

        // When the person opens Edit, turns All day off and types hours that end at 25:00
        let opened = try await run(["click", "Edit Chime Harmless Test"])
        #expect(opened.hasPrefix("clicked"), "\(opened) \(app.stderr)")
        #expect(try await run(["click", "All day", "dialog"]).hasPrefix("clicked"))
        #expect(try await run(["entry-set", "From", "09:00", "dialog"]).hasPrefix("set"))
        #expect(try await run(["entry-set", "To", "25:00", "dialog"]).hasPrefix("set"))
        #expect(try await run(["click", "Save", "dialog"]).hasPrefix("clicked"))

        // Then the problem is said under To in the CLI's words, and nothing is written
        let problem = try await Accessibility.wait(["entry-description", "To", "dialog"], on: display, environment: environment) {
            _,
            output in output.contains("invalid hours")
        }
        #expect(problem.contains("invalid hours '09:00-25:00': expected HH:MM-HH:MM"), "\(problem)")
        #expect(try Self.listed(display, environment)["schedule"] as? String == "always")

        // When they fix the hours, choose weekdays and a minutes budget of 45, and save
        #expect(try await run(["entry-set", "To", "17:00", "dialog"]).hasPrefix("set"))
        #expect(try await run(["click", "Weekdays", "dialog"]).hasPrefix("clicked"))
        #expect(try await run(["entry-set", "Minutes per day", "45", "dialog"]).hasPrefix("set"))
        #expect(try await run(["click", "Save", "dialog"]).hasPrefix("clicked"))

        // Then the form closes and `chime gate list` and `chime gate stats` have the rule
        let closed = try await Accessibility.wait(["has", "Minutes per day", "dialog"], on: display, environment: environment) {
            status,
            _ in status != 0
        }
        #expect(closed.isEmpty, "the form is still open: \(closed)")
        let program = try Self.listed(display, environment)
        #expect(program["hours"] as? String == "09:00-17:00", "\(program)")
        #expect(program["days"] as? String == "mon-fri", "\(program)")
        #expect(program["budget_minutes_per_day"] as? Int == 45, "\(program)")
        #expect(program["budget_per_day"] is NSNull, "\(program)")
        let (status, stats) = try display.run(AppWindowTests.chime, ["gate", "stats", "--json"], environment: environment)
        #expect(status == 0, "\(stats)")
        let json = try JSONSerialization.jsonObject(with: Data(stats.utf8)) as? [String: Any]
        let programs = json?["programs"] as? [[String: Any]] ?? []
        let budgeted = programs.first { $0["program"] as? String == Self.entryID }
        #expect(budgeted?["budget_minutes_per_day"] as? Int == 45, "\(stats)")

        // And the page's row says the rule; the minutes chart says its figures
        let summary = try await run(["has", "Opens with a pause first · 09:00-17:00 mon-fri, budget 45m/day"])
        #expect(!summary.isEmpty, "\((try? Accessibility.run(["names"], on: display, environment: environment))?.output ?? "")")
        let figures = try Accessibility.run(["description", "Minutes per day"], on: display, environment: environment)
        #expect(figures.output.contains("Last 30 days: no minutes in gated programs yet."), "\(figures.output)")
    }
}

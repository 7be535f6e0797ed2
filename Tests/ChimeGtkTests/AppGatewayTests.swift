import Foundation
import Testing

/// The app's Gateway page end to end: a harmless program's desktop entry in the test's own
/// `XDG_DATA_HOME/applications` (never the real user's), gated from the page's app chooser and
/// un-gated with Remove, through AT-SPI by accessible name, and checked with `chime gate list`.
@Suite(.serialized)
struct AppGatewayTests {
    static let entryID = "chime-harmless-test.desktop"
    static let entry = "[Desktop Entry]\nType=Application\nName=Chime Harmless Test\nExec=/bin/true\nIcon=utilities-terminal\n"

    /// The ids and statuses `chime gate list --json` reports.
    static func gated(_ display: VirtualDisplay, _ environment: [String: String]) throws -> [String: String] {
        let (status, output) = try display.run(AppWindowTests.chime, ["gate", "list", "--json"], environment: environment)
        #expect(status == 0, "\(output)")
        let json = try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any]
        let programs = json?["programs"] as? [[String: Any]] ?? []
        return Dictionary(uniqueKeysWithValues: programs.map { ($0["id"] as? String ?? "", $0["status"] as? String ?? "") })
    }

    @Test func aProgramChosenInTheAppChooserIsGatedThenRemoved() async throws {
        // Given a harmless program's entry in the test's own data home, and the app on the Gateway page
        let display = try VirtualDisplay()
        defer { display.stop() }
        let bus = try SessionBus(on: display)
        defer { bus.stop(display: display) }
        let environment = AppWindowTests.environment(display, bus)
        let applications = URL(fileURLWithPath: environment["XDG_DATA_HOME"]!).appendingPathComponent("applications")
        #expect(applications.path.hasPrefix(display.directory.path))
        try FileManager.default.createDirectory(at: applications, withIntermediateDirectories: true)
        let entryPath = applications.appendingPathComponent(Self.entryID).path
        try Data(Self.entry.utf8).write(to: URL(fileURLWithPath: entryPath))
        let app = try GateWindowProcess(on: display, ["app", "gateway"], environment: environment)
        defer { app.stop() }
        #expect(await app.next("presented ") == "presented page=gateway", "\(app.lines) \(app.stderr)")
        #expect(try Self.gated(display, environment).isEmpty)

        // When the person opens Add Program and chooses the program (searched by name)
        let opened = try await Accessibility.wait(["click", "Add Program"], on: display, environment: environment) { status, _ in
            status == 0
        }
        #expect(opened.hasPrefix("clicked"), "\(opened) \(app.stderr)")
        let searched = try await Accessibility.wait(
            ["set", "Search programs", "harmless", "dialog"],
            on: display,
            environment: environment
        ) {
            status,
            _ in status == 0
        }
        #expect(searched.hasPrefix("set"), "\(searched)")
        let chosen = try await Accessibility.wait(["click", "Gate Chime Harmless Test", "dialog"], on: display, environment: environment) {
            status,
            _ in status == 0
        }
        #expect(chosen.hasPrefix("clicked"), "\(chosen) \(app.stderr)")
        // Its rule's form opens (hours, days, budgets): Cancel leaves it gated at all times.
        let offered = try await Accessibility.wait(["click", "Cancel", "dialog"], on: display, environment: environment) {
            status,
            _ in status == 0
        }
        #expect(offered.hasPrefix("clicked"), "no rule form after gating: \(offered)")

        // Then the page lists it with its Remove button, and `chime gate list` has it, its gate in place
        let listed = try await Accessibility.wait(["has", "Remove Chime Harmless Test"], on: display, environment: environment) {
            status,
            _ in status == 0
        }
        #expect(!listed.isEmpty, "not listed after \(chosen): \(app.stderr)")
        #expect(try Accessibility.run(["has", "Chime Harmless Test"], on: display, environment: environment).status == 0)
        #expect(try Self.gated(display, environment) == [Self.entryID: "ok"])
        let override = (try? String(contentsOfFile: entryPath, encoding: .utf8)) ?? ""
        #expect(override.contains("gate open"), "\(override)")
        // The chooser no longer offers it.
        #expect(try Accessibility.run(["click", "Add Program"], on: display, environment: environment).status == 0)
        _ = try await Accessibility.wait(["set", "Search programs", "harmless", "dialog"], on: display, environment: environment) {
            status,
            _ in status == 0
        }
        let empty = try await Accessibility.wait(["has", "No program matches", "dialog"], on: display, environment: environment) {
            status,
            _ in status == 0
        }
        #expect(!empty.isEmpty, "\((try? Accessibility.run(["names"], on: display, environment: environment))?.output ?? "")")
        #expect(try Accessibility.run(["has", "Gate Chime Harmless Test", "dialog"], on: display, environment: environment).status != 0)
        #expect(try Accessibility.run(["click", "Close", "dialog"], on: display, environment: environment).status == 0)

        // When they remove it
        let removed = try await Accessibility.wait(["click", "Remove Chime Harmless Test"], on: display, environment: environment) {
            status,
            _ in status == 0
        }
        #expect(removed.hasPrefix("clicked"), "\(removed)")

        // Then it is gone from the page and from `chime gate list`, its entry as it was
        let gone = try await Accessibility.wait(["has", "Remove Chime Harmless Test"], on: display, environment: environment) {
            status,
            _ in status != 0
        }
        #expect(gone.isEmpty, "still listed: \(gone)")
        #expect(try Self.gated(display, environment).isEmpty)
        #expect((try? String(contentsOfFile: entryPath, encoding: .utf8)) == Self.entry)
        #expect(try Accessibility.run(["has", "No program is gated yet"], on: display, environment: environment).status == 0)
    }
}

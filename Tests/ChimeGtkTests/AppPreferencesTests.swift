import CX11
import Foundation
import Testing

/// The app's Preferences (Main Menu → Preferences: the config file, as `chime config set`
/// writes it) and the Focus page's forest, end to end through AT-SPI by accessible name, on the
/// real `chime` and the windows' executable. Serialized: each test starts an X server, a bus and GTK.
@Suite(.serialized)
struct AppPreferencesTests {
    static var chime: String { AppWindowTests.chime }

    /// The app at its Focus page, its window found by AT-SPI.
    static func start(_ display: VirtualDisplay, _ environment: [String: String]) async throws -> GateWindowProcess {
        let app = try GateWindowProcess(on: display, ["app", "focus"], environment: environment)
        #expect(await app.next("presented ") == "presented page=focus", "\(app.lines) \(app.stderr)")
        let count = try await Accessibility.wait(["windows", "Chime"], on: display, environment: environment) { _, output in
            output.trimmingCharacters(in: .whitespacesAndNewlines) == "1"
        }
        #expect(count.trimmingCharacters(in: .whitespacesAndNewlines) == "1", "\(app.stderr)")
        return app
    }

    static func countdown(_ display: VirtualDisplay, _ environment: [String: String], until wanted: String) async throws -> String {
        try await Accessibility.wait(["text", "Time left"], on: display, environment: environment) { _, output in
            output.trimmingCharacters(in: .whitespacesAndNewlines) == wanted
        }.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func preferencesSetTheFocusLengthInTheConfigFileAndTheFocusPageCountsFromIt() async throws {
        // Given the app on its Focus page, no config file
        let display = try VirtualDisplay()
        defer { display.stop() }
        let bus = try SessionBus(on: display)
        defer { bus.stop(display: display) }
        let environment = AppWindowTests.environment(display, bus)
        let app = try await Self.start(display, environment)
        defer { app.stop() }
        #expect(try await Self.countdown(display, environment, until: "25:00") == "25:00")
        let names = try Accessibility.run(["names"], on: display, environment: environment).output
        for button in ["Plant Tree", "Main Menu"] {
            #expect(names.contains("\t\(button)\t"), "no accessible named exactly \(button): \(names)")
        }

        // When the person opens Main Menu → Preferences and sets the focus length to 30m
        #expect(try Accessibility.run(["click", "Main Menu"], on: display, environment: environment).status == 0)
        // (The menu's items are in the app's window, in its popover.)
        let opened = try await Accessibility.wait(["click", "Preferences"], on: display, environment: environment) { status, _ in
            status == 0
        }
        #expect(opened.hasPrefix("clicked"), "\(opened)")
        let field = try await Accessibility.wait(["entry-description", "Focus length", "dialog"], on: display, environment: environment) {
            status,
            _ in status == 0
        }
        #expect(field.hasPrefix("A focus session's length"), "\(field)")
        // A bad value first: refused with the CLI's message, the file not made
        #expect(try Accessibility.run(["entry-set", "Focus length", "3m", "dialog"], on: display, environment: environment).status == 0)
        #expect(try Accessibility.run(["entry-activate", "Focus length", "dialog"], on: display, environment: environment).status == 0)
        let refused = try await Accessibility.wait(["entry-description", "Focus length", "dialog"], on: display, environment: environment) {
            _,
            output in
            output.hasPrefix("invalid")
        }
        #expect(
            refused.trimmingCharacters(in: .whitespacesAndNewlines)
                == "invalid focus.length '3m': expected a duration from \"10m\" to \"2h\" in whole minutes"
        )
        let path = try display.run(Self.chime, ["config", "path"], environment: environment).output.trimmingCharacters(
            in: .whitespacesAndNewlines
        )
        #expect(!FileManager.default.fileExists(atPath: path))
        // Then 30m, and the window closed (closing applies what was typed)
        #expect(try Accessibility.run(["entry-set", "Focus length", "30m", "dialog"], on: display, environment: environment).status == 0)
        // And turns Start at login on, then off: the autostart entry `chime service enable` writes
        // (no systemd user manager in the test's session), then none
        let autostart = URL(fileURLWithPath: environment["XDG_CONFIG_HOME"] ?? "/nonexistent").appendingPathComponent(
            "autostart/chime-runner.desktop"
        ).path
        #expect(try Accessibility.run(["click", "Start at login", "dialog"], on: display, environment: environment).status == 0)
        // (The switch, a check box for AT-SPI, has its row's name.)
        func switchLine() throws -> String {
            try Accessibility.run(["names"], on: display, environment: environment).output.split(separator: "\n")
                .first { $0.hasPrefix("Preferences\tcheck box\tStart at login\t") }.map(String.init) ?? ""
        }
        var line = ""
        for _ in 0..<40 where !line.hasSuffix(",checked") {
            line = try switchLine()
            try await Task.sleep(for: .milliseconds(250))
        }
        #expect(line.hasSuffix(",checked"), "\(line)")
        let entry = (try? String(contentsOfFile: autostart, encoding: .utf8)) ?? ""
        #expect(entry.contains("Exec=") && entry.contains("chime run"), "\(entry)")
        #expect(try Accessibility.run(["click", "Start at login", "dialog"], on: display, environment: environment).status == 0)
        for _ in 0..<40 where line.hasSuffix(",checked") {
            line = try switchLine()
            try await Task.sleep(for: .milliseconds(250))
        }
        #expect(!line.hasSuffix(",checked"), "\(line)")
        #expect(!FileManager.default.fileExists(atPath: autostart))

        let preferences = try #require(try display.windows(named: "Preferences").first, "\(display.windowNames())")
        // WM_DELETE_WINDOW, as a window manager's close button sends it
        #expect(chime_x11_request_close(display.name, try #require(UInt(preferences))) == 0)

        // Then the config file says 30m, as `chime config show` reads it
        var shown = ""
        for _ in 0..<40 {
            let report = try display.run(Self.chime, ["config", "show", "--json"], environment: environment).output
            let json = try? JSONSerialization.jsonObject(with: Data(report.utf8)) as? [String: Any]
            let settings = json?["settings"] as? [[String: Any]] ?? []
            let focus = settings.first { $0["key"] as? String == "focus.length" }
            if focus?["source"] as? String == "file" {
                shown = focus?["value"] as? String ?? ""
                break
            }
            try await Task.sleep(for: .milliseconds(250))
        }
        #expect(shown == "30m")
        let file = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        #expect(file.hasPrefix("# Chime's configuration"), "the example's comments are kept: \(file)")
        #expect(file.contains("\nlength = \"30m\"\n"))

        // And the Focus page's countdown offers 30 minutes
        #expect(try await Self.countdown(display, environment, until: "30:00") == "30:00")
    }

    @Test func theForestShowsEachEndedSessionsTreeByName() async throws {
        // Given a session given up with the CLI
        let display = try VirtualDisplay()
        defer { display.stop() }
        let bus = try SessionBus(on: display)
        defer { bus.stop(display: display) }
        let environment = AppWindowTests.environment(display, bus)
        #expect(try display.run(Self.chime, ["focus", "start"], environment: environment).status == 0)
        #expect(try display.run(Self.chime, ["focus", "give-up", "--yes"], environment: environment).status == 0)

        // When the app opens at Focus
        let app = try await Self.start(display, environment)
        defer { app.stop() }

        // Then the forest has its withered tree, named, and the chart says the week's figures
        func trees() throws -> [String] {
            try Accessibility.run(["names"], on: display, environment: environment).output.split(separator: "\n")
                .map { $0.split(separator: "\t", omittingEmptySubsequences: false).map(String.init) }
                .filter { $0.count == 4 && ($0[2].hasPrefix("Withered tree, given up ") || $0[2].hasPrefix("Tree planted ")) }
                .map { $0[2] }
        }
        let first = try trees()
        #expect(first.count == 1 && first.first?.hasSuffix(" after 0 min") == true, "\(first)")
        let chart = try Accessibility.run(["description", "Trees planted in the last 7 days"], on: display, environment: environment).output
        #expect(chart.hasPrefix("Trees planted in the last 7 days: ") && chart.contains("today 0."), "\(chart)")

        // When the person plants a tree in the app and gives it up
        let plant = try await Accessibility.wait(["click", "Plant Tree"], on: display, environment: environment) { status, _ in status == 0
        }
        #expect(plant.hasPrefix("clicked"), "\(plant)")
        let ticked = try await Accessibility.wait(["text", "Time left"], on: display, environment: environment) { _, output in
            output.hasPrefix("24:")
        }.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try Accessibility.run(["click", "Give Up"], on: display, environment: environment).status == 0)
        let confirmed = try await Accessibility.wait(["click", "Give Up", "dialog"], on: display, environment: environment) { status, _ in
            status == 0
        }
        #expect(confirmed.hasPrefix("clicked"), "\(confirmed)")

        // Then a second withered tree stands first, and the countdown stays stopped where it was
        var now: [String] = []
        for _ in 0..<40 {
            now = try trees()
            if now.count == 2 { break }
            try await Task.sleep(for: .milliseconds(250))
        }
        #expect(now.count == 2, "\(now)")
        let stopped = try Accessibility.run(["text", "Time left"], on: display, environment: environment).output
            .trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(stopped.hasPrefix("24:") && stopped <= ticked, "\(stopped) after \(ticked)")
        try await Task.sleep(for: .seconds(2))
        #expect(
            try Accessibility.run(["text", "Time left"], on: display, environment: environment).output.trimmingCharacters(
                in: .whitespacesAndNewlines
            ) == stopped
        )
        #expect(try Accessibility.run(["has", "Plant Tree"], on: display, environment: environment).status == 0)
    }
}

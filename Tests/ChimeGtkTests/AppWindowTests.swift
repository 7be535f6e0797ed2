import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The Chime app (`chime app`, the windows' executable in its app mode) end to end under Xvfb,
/// with a session bus and the accessibility bus of the test's own, driven through AT-SPI by
/// accessible name as a person's assistive technology would (``Accessibility``). Serialized:
/// each test starts an X server, a bus and GTK.
@Suite(.serialized)
struct AppWindowTests {
    /// `chime`, built beside the windows' executable.
    static var chime: String {
        URL(fileURLWithPath: GateWindowProcess.executable).deletingLastPathComponent().appendingPathComponent("chime").path
    }

    static let pages = ["Today", "Reminders", "Focus", "Doses", "Gateway"]

    /// The app's environment: the display's, a store in the test's directory, and with a bus, the
    /// bus and the accessibility bridge on.
    static func environment(_ display: VirtualDisplay, _ bus: SessionBus?) -> [String: String] {
        var environment = display.environment
        if let bus {
            environment["DBUS_SESSION_BUS_ADDRESS"] = bus.address
            // The display's environment turns the bridge off (it has no bus); merged over it, a
            // value, not a removal.
            environment["GTK_A11Y"] = "atspi"
        }
        environment["CHIME_STORE"] = display.directory.appendingPathComponent("chime.sqlite").path
        return environment
    }

    @Test func aBadPageIsNamedWithTheAcceptedOnesAndExits64() throws {
        let display = try VirtualDisplay()
        defer { display.stop() }
        let errors = display.directory.appendingPathComponent("errors").path
        let (status, output) = try display.run(
            Self.chime,
            ["app", "settings"],
            environment: Self.environment(display, nil),
            errors: errors
        )
        let lines = ((try? String(contentsOfFile: errors, encoding: .utf8)) ?? "").split(separator: "\n")
        #expect(status == 64)
        #expect(output.isEmpty)
        #expect(lines.count == 1, "\(lines)")
        #expect(lines.first?.contains("'settings'") == true && lines.first?.contains("today, reminders, focus, doses or gateway") == true)
    }

    @Test func chimeAppEndsAtSIGTERMAndSIGINTAsAWindowShould() async throws {
        // chime blocks SIGTERM and ignores SIGINT for its own handling; exec keeps both, so the
        // window it became once ignored `kill PID` and Ctrl+C.
        for (signal, name) in [(SIGTERM, "SIGTERM"), (SIGINT, "SIGINT")] {
            let display = try VirtualDisplay()
            defer { display.stop() }
            let output = display.directory.appendingPathComponent("app.out")
            let pid = try Spawn.start(
                Self.chime,
                ["app", "today"],
                environment: Self.environment(display, nil),
                output: output.path,
                errors: display.directory.appendingPathComponent("app.err").path
            )
            defer { Spawn.stop(pid) }
            let deadline = ContinuousClock.now + .seconds(30)
            while !((try? String(contentsOf: output, encoding: .utf8)) ?? "").contains("first-frame "), ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(((try? String(contentsOf: output, encoding: .utf8)) ?? "").contains("first-frame since-process-start-ms="))
            kill(pid, signal)
            var status: Int32?
            let stopped = ContinuousClock.now + .seconds(5)
            while status == nil, ContinuousClock.now < stopped {
                status = Spawn.exited(pid)
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(status == 128 + signal, "after \(name): \(String(describing: status))")
        }
    }

    @Test func withoutASessionBusTheWindowOpensAndSaysSoOnce() async throws {
        let display = try VirtualDisplay()
        defer { display.stop() }
        let app = try GateWindowProcess(on: display, ["app", "doses"], environment: Self.environment(display, nil))
        defer { app.stop() }
        let presented = await app.next("presented ")
        #expect(presented == "presented page=doses", "\(app.lines) \(app.stderr)")
        #expect(try display.windows(named: "Chime").count >= 1)
        let errors = app.stderr.split(separator: "\n")
        #expect(errors.count == 1 && errors.first?.hasPrefix("chime app: no session bus") == true, "\(errors)")
    }

    @Test func theWindowHasFivePagesAndTheFocusPagePlantsAndGivesUpATree() async throws {
        // Given the app on a display with a session bus and the accessibility bus
        let display = try VirtualDisplay()
        defer { display.stop() }
        let bus = try SessionBus(on: display)
        defer { bus.stop(display: display) }
        let environment = Self.environment(display, bus)
        let app = try GateWindowProcess(on: display, ["app"], environment: environment)
        defer { app.stop() }
        #expect(await app.next("presented ") == "presented page=today", "\(app.lines) \(app.stderr)")

        // Then AT-SPI finds one window named Chime, with its five pages by name
        let count = try await Accessibility.wait(["windows", "Chime"], on: display, environment: environment) { _, output in
            output.trimmingCharacters(in: .whitespacesAndNewlines) == "1"
        }
        let atspiErrors = (try? String(contentsOf: display.directory.appendingPathComponent("atspi.err"), encoding: .utf8)) ?? ""
        #expect(count.trimmingCharacters(in: .whitespacesAndNewlines) == "1", "\(atspiErrors) \(app.stderr)")
        let names = try Accessibility.run(["names"], on: display, environment: environment).output
        // (GTK 4.8 marks no accessible below a window "showing": the switcher's page tabs are found by role and name.)
        let tabs = names.split(separator: "\n").map { $0.split(separator: "\t", omittingEmptySubsequences: false).map(String.init) }
            .filter { $0.count == 4 && $0[1] == "page tab" }.map { $0[2] }
        for page in Self.pages { #expect(tabs.contains(page), "no page tab named \(page): \(names)") }

        // When the person switches to Focus and plants a tree
        #expect(try Accessibility.run(["click", "Focus"], on: display, environment: environment).status == 0)
        let plant = try await Accessibility.wait(["click", "Plant Tree"], on: display, environment: environment) { status, _ in status == 0
        }
        #expect(plant.hasPrefix("clicked"), "\(plant)")

        // Then the countdown runs: 25:00, then less
        let ticked = try await Accessibility.wait(["text", "Time left"], on: display, environment: environment) { _, output in
            let text = output.trimmingCharacters(in: .whitespacesAndNewlines)
            return text.hasPrefix("24:")
        }
        #expect(ticked.hasPrefix("24:"), "\(ticked)")

        // When they give up, and confirm in the dialog
        #expect(try Accessibility.run(["click", "Give Up"], on: display, environment: environment).status == 0)
        let confirmed = try await Accessibility.wait(["click", "Give Up", "dialog"], on: display, environment: environment) { status, _ in
            status == 0
        }
        #expect(confirmed.hasPrefix("clicked"), "\(confirmed)")

        // Then the store says the session was abandoned
        var state = ""
        for _ in 0..<40 {
            let report = try display.run(Self.chime, ["focus", "status", "--json"], environment: environment).output
            let json = try JSONSerialization.jsonObject(with: Data(report.utf8)) as? [String: Any]
            state = ((json?["session"] as? [String: Any])?["state"] as? String) ?? ""
            if state == "abandoned" { break }
            try await Task.sleep(for: .milliseconds(250))
        }
        #expect(state == "abandoned")

        // When `chime app focus` runs again, it raises the first window and exits 0
        let (second, output) = try display.run(Self.chime, ["app", "focus"], environment: environment)
        #expect(second == 0)
        #expect(output.contains("presented-by-running-instance"), "\(output)")
        #expect(await app.next("presented ") == "presented page=focus")
        let windows = try Accessibility.run(["windows", "Chime"], on: display, environment: environment).output
        #expect(windows.trimmingCharacters(in: .whitespacesAndNewlines) == "1")

        // Screenshots, wide and narrow, to look at
        if let window = try display.windows(named: "Chime").first {
            let directory = FileManager.default.temporaryDirectory
            _ = try display.run("/usr/bin/import", ["-window", window, directory.appendingPathComponent("chime-app-wide.png").path])
            _ = try display.run("/usr/bin/xdotool", ["windowsize", window, "360", "640"])
            try await Task.sleep(for: .seconds(1))
            _ = try display.run("/usr/bin/import", ["-window", window, directory.appendingPathComponent("chime-app-narrow.png").path])
        }
    }

    @Test func aTreePlantedWithALabelCarriesItToTheStoreTheCountdownAndTheForest() async throws {
        // Given the app at its Focus page
        let display = try VirtualDisplay()
        defer { display.stop() }
        let bus = try SessionBus(on: display)
        defer { bus.stop(display: display) }
        let environment = Self.environment(display, bus)
        let app = try GateWindowProcess(on: display, ["app", "focus"], environment: environment)
        defer { app.stop() }
        #expect(await app.next("presented ") == "presented page=focus", "\(app.lines) \(app.stderr)")
        func names() -> String { (try? Accessibility.run(["names"], on: display, environment: environment).output) ?? "" }

        // When the person types a label beside Plant Tree and plants the tree
        let typed = try await Accessibility.wait(["entry-set", "Label", "  thesis "], on: display, environment: environment) { status, _ in
            status == 0
        }
        #expect(typed.hasPrefix("set"), "\(typed) \(names())")
        #expect(try Accessibility.run(["click", "Plant Tree"], on: display, environment: environment).status == 0)

        // Then the session in the store has the label, trimmed, and the page shows it
        var label: String?
        for _ in 0..<40 {
            let report = try display.run(Self.chime, ["focus", "status", "--json"], environment: environment).output
            let json = try JSONSerialization.jsonObject(with: Data(report.utf8)) as? [String: Any]
            label = (json?["session"] as? [String: Any])?["label"] as? String
            if label != nil { break }
            try await Task.sleep(for: .milliseconds(250))
        }
        #expect(label == "thesis")
        let shown = try await Accessibility.wait(["has", "thesis"], on: display, environment: environment) { status, _ in status == 0 }
        #expect(shown.hasPrefix("label"), "\(shown) \(names())")
        // The label field is hidden while the session runs.
        #expect(try Accessibility.run(["has", "Label"], on: display, environment: environment).status != 0, "\(names())")

        // When they give up: the withered tree in the forest says its label
        #expect(try Accessibility.run(["click", "Give Up"], on: display, environment: environment).status == 0)
        _ = try await Accessibility.wait(["click", "Give Up", "dialog"], on: display, environment: environment) { status, _ in status == 0 }
        let tree = try await Accessibility.wait(["names"], on: display, environment: environment) { _, output in
            output.contains("Withered tree, given up") && output.contains("after 0 min, thesis")
        }
        #expect(tree.contains("after 0 min, thesis"), "\(tree)")
    }
}

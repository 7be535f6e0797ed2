import Foundation
import Testing

/// The config file's settings reach the app: a bad file does not keep the window shut, its
/// message is said once (a toast, and on standard error) and the pages use the defaults; About
/// Chime says the version `chime --version` says. Serialized: each test starts an X server, a bus and GTK.
@Suite(.serialized)
struct AppSettingsReachTests {
    static var chime: String { AppWindowTests.chime }

    @Test func aBadConfigFileIsSaidOnceAndTheWindowOpensWithTheDefaults() async throws {
        // Given a config file with a bad snooze length
        let display = try VirtualDisplay()
        defer { display.stop() }
        let bus = try SessionBus(on: display)
        defer { bus.stop(display: display) }
        let environment = AppWindowTests.environment(display, bus)
        let path = try display.run(Self.chime, ["config", "path"], environment: environment).output.trimmingCharacters(
            in: .whitespacesAndNewlines
        )
        try FileManager.default.createDirectory(
            at: URL(fileURLWithPath: path).deletingLastPathComponent(),
            withIntermediateDirectories: true
        )
        try Data("[reminders]\nsnooze = \"never\"\n".utf8).write(to: URL(fileURLWithPath: path))
        let refused = try display.run(Self.chime, ["list"], environment: environment)
        #expect(refused.status == 78, "\(refused.output)")

        // When the person opens the app (`chime app`, which execs the window)
        let out = display.directory.appendingPathComponent("app.out")
        let errors = display.directory.appendingPathComponent("app.err")
        let pid = try Spawn.start(Self.chime, ["app", "reminders"], environment: environment, output: out.path, errors: errors.path)
        defer { Spawn.stop(pid) }

        // Then the window opens at Reminders, and says the file's message once, in a toast and on standard error
        let message =
            "config file \(path):2: invalid reminders.snooze \"never\": expected a duration from \"1m\" to \"1d\" in whole minutes"
        let toast = try await Accessibility.wait(["has", message], on: display, environment: environment) { status, _ in status == 0 }
        #expect(!toast.isEmpty, "no toast saying \(message)")
        let said = ((try? String(contentsOf: errors, encoding: .utf8)) ?? "").components(separatedBy: "\n").filter { $0.contains(message) }
        #expect(said.count == 1, "\(said)")
        #expect(((try? String(contentsOf: out, encoding: .utf8)) ?? "").contains("presented page=reminders"))
        // And the pages work with the defaults: New Reminder opens the form
        #expect(try Accessibility.run(["click", "New Reminder"], on: display, environment: environment).status == 0)

        // And About Chime says the version, as `chime --version` does
        let version = try display.run(Self.chime, ["--version"], environment: environment).output.trimmingCharacters(
            in: .whitespacesAndNewlines
        )
        #expect(try Accessibility.run(["click", "Main Menu"], on: display, environment: environment).status == 0)
        let about = try await Accessibility.wait(["click", "About Chime"], on: display, environment: environment) { status, _ in status == 0
        }
        #expect(about.hasPrefix("clicked"), "\(about)")
        let shown = try await Accessibility.wait(["has", version, "dialog"], on: display, environment: environment) { status, _ in
            status == 0
        }
        #expect(
            !shown.isEmpty,
            "About Chime does not say \(version): \((try? Accessibility.run(["names"], on: display, environment: environment))?.output ?? "")"
        )
    }
}

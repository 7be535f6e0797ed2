import ChimeCore
import ChimeDBus
import Foundation
import Testing

/// `chime run` carries the GNOME notification settings a person made for Chime 0.2.0's desktop
/// id (`chime`) over to Chime's application id, once: real GSettings (the keyfile backend under
/// the sandbox's XDG_CONFIG_HOME, the schema from the system's gsettings-desktop-schemas), set
/// and read with the `gsettings` tool as a person would.
struct NotificationSettingsMigrationTests {
    static let schema = "org.gnome.desktop.notifications.application"
    static var old: String { schema + ":" + ApplicationID.gnomeSettingsPath(ApplicationID.previous) }
    static var new: String { schema + ":" + ApplicationID.gnomeSettingsPath(ApplicationID.current) }

    static func gsettings(_ sandbox: borrowing Sandbox, _ arguments: String...) throws -> String {
        let result = try runProcess("/usr/bin/gsettings", arguments, environment: sandbox.environment, timeout: 30)
        #expect(result.status == 0, "gsettings \(arguments): \(result.stderr)")
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func keyfile(_ sandbox: borrowing Sandbox) -> String {
        (try? String(contentsOfFile: sandbox.environment["XDG_CONFIG_HOME"]! + "/glib-2.0/settings/keyfile", encoding: .utf8)) ?? ""
    }

    @Test("The old id's settings are copied to the new id at the runner's start, once")
    func carriedOverOnce() async throws {
        let sandbox = try Sandbox(extra: ["GSETTINGS_BACKEND": "keyfile", "GSETTINGS_SCHEMA_DIR": "/usr/share/glib-2.0/schemas"])
        // What gnome-shell and the person left for chime.desktop.
        _ = try Self.gsettings(sandbox, "set", Self.old, "application-id", "'chime.desktop'")
        _ = try Self.gsettings(sandbox, "set", Self.old, "show-banners", "false")
        _ = try Self.gsettings(sandbox, "set", Self.old, "enable-sound-alerts", "false")
        _ = try Self.gsettings(sandbox, "set", "org.gnome.desktop.notifications", "application-children", "['org-gnome-nautilus', 'chime']")
        #expect(try Self.gsettings(sandbox, "get", Self.new, "show-banners") == "true")

        let runner = try sandbox.startRunner()
        #expect(await runner.waitUntilStarted(), "\(runner.stderr)")
        #expect(await runner.terminate() == 0)
        let carried = runner.stderr.split(separator: "\n").filter { $0.contains("Notification settings carried over") }
        #expect(carried.count == 1, "\(runner.stderr)")
        #expect(
            carried.first?.hasSuffix("from chime.desktop to io.github.chime.Chime.desktop: enable-sound-alerts, show-banners") == true,
            "\(runner.stderr)"
        )
        #expect(try Self.gsettings(sandbox, "get", Self.new, "show-banners") == "false")
        #expect(try Self.gsettings(sandbox, "get", Self.new, "enable-sound-alerts") == "false")
        #expect(try Self.gsettings(sandbox, "get", Self.new, "enable") == "true")
        #expect(try Self.gsettings(sandbox, "get", Self.new, "application-id") == "'io.github.chime.Chime.desktop'")
        #expect(
            try Self.gsettings(sandbox, "get", "org.gnome.desktop.notifications", "application-children")
                == "['org-gnome-nautilus', 'chime', 'io-github-chime-chime']"
        )
        // The old id's settings stay.
        #expect(try Self.gsettings(sandbox, "get", Self.old, "show-banners") == "false")
        let marker = NotificationSettingsMigration.markerPath(environment: sandbox.environment)
        #expect(FileManager.default.fileExists(atPath: marker))

        // The person resets Chime's settings to the defaults: a second start changes nothing
        // (the marker, not the new path's keys, says it ran).
        _ = try Self.gsettings(sandbox, "reset-recursively", Self.new)
        let before = Self.keyfile(sandbox)
        let again = try sandbox.startRunner()
        #expect(await again.waitUntilStarted(), "\(again.stderr)")
        #expect(await again.terminate() == 0)
        #expect(!again.stderr.contains("Notification settings"), "\(again.stderr)")
        #expect(Self.keyfile(sandbox) == before)
        #expect(try Self.gsettings(sandbox, "get", Self.new, "show-banners") == "true")
    }

    @Test("Settings the new id has already are left as they are, and nothing is logged")
    func newIdsOwnSettingsWin() async throws {
        let sandbox = try Sandbox(extra: ["GSETTINGS_BACKEND": "keyfile", "GSETTINGS_SCHEMA_DIR": "/usr/share/glib-2.0/schemas"])
        _ = try Self.gsettings(sandbox, "set", Self.old, "show-banners", "false")
        _ = try Self.gsettings(sandbox, "set", Self.new, "enable", "false")
        let before = Self.keyfile(sandbox)
        let runner = try sandbox.startRunner()
        #expect(await runner.waitUntilStarted(), "\(runner.stderr)")
        #expect(await runner.terminate() == 0)
        #expect(!runner.stderr.contains("Notification settings"), "\(runner.stderr)")
        #expect(Self.keyfile(sandbox) == before)
        #expect(FileManager.default.fileExists(atPath: NotificationSettingsMigration.markerPath(environment: sandbox.environment)))
    }

    /// Outside GNOME (no XDG_CURRENT_DESKTOP, no GSETTINGS_BACKEND) nothing is read or marked:
    /// GLib would fall back to a memory backend and say so on stderr.
    @Test func outsideGNOMENothingIsReadOrMarked() async throws {
        let sandbox = try Sandbox()
        let runner = try sandbox.startRunner()
        #expect(await runner.waitUntilStarted(), "\(runner.stderr)")
        #expect(await runner.terminate() == 0)
        #expect(!runner.stderr.contains("GSettings") && !runner.stderr.contains("Notification settings"), "\(runner.stderr)")
        #expect(!FileManager.default.fileExists(atPath: NotificationSettingsMigration.markerPath(environment: sandbox.environment)))
    }
}

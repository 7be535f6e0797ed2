import ChimeCore
import ChimeDBus
import ChimeTesting
import Foundation
import Testing

/// The Debian package's parts that the source tree holds: one version (the changelog's, which
/// `chime --version` prints), the desktop entries, and the gateway untouched by Chime's own
/// desktop entry. `scripts/test-package` builds, installs and removes the package itself.
struct PackagingTests {
    static let packaging = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("packaging")
    static let changelog = packaging.appendingPathComponent("debian/changelog").path

    /// The version dpkg reads from packaging/debian/changelog (dpkg-parsechangelog, dpkg-dev).
    static func changelogVersion(in sandbox: borrowing Sandbox) throws -> String {
        let parsed = try runProcess(
            "/usr/bin/dpkg-parsechangelog",
            ["-l", changelog, "-S", "Version"],
            environment: sandbox.environment,
            timeout: 30
        )
        try #require(parsed.status == 0, "dpkg-parsechangelog: \(parsed.stderr)")
        return parsed.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func chimeVersionIsTheChangelogs() throws {
        let sandbox = try Sandbox()
        let version = try Self.changelogVersion(in: sandbox)
        #expect(!version.isEmpty)
        let result = try sandbox.chime("--version")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == version + "\n")
    }

    @Test func gateWindowVersionIsTheChangelogs() throws {
        let sandbox = try Sandbox()
        let version = try Self.changelogVersion(in: sandbox)
        let window = ChimeExecutable.url.deletingLastPathComponent().appendingPathComponent("chime-gate-window").path
        let result = try runProcess(window, ["--version"], environment: sandbox.environment, timeout: 30)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == version + "\n")
    }

    /// The man page's title line names the same version (`.TH CHIME 1 DATE "chime VERSION" …`).
    @Test func manPageVersionIsTheChangelogs() throws {
        let sandbox = try Sandbox()
        let version = try Self.changelogVersion(in: sandbox)
        let page = try String(contentsOf: Self.packaging.appendingPathComponent("chime.1"), encoding: .utf8)
        let title = try #require(page.split(separator: "\n").first { $0.hasPrefix(".TH ") })
        #expect(title.contains("\"chime \(version)\""), "packaging/chime.1: \(title); the changelog says \(version)")
    }

    @Test(arguments: ["io.github.chime.Chime.desktop", "chime-runner.desktop"])
    func desktopEntryIsValid(_ name: String) throws {
        let sandbox = try Sandbox()
        let path = Self.packaging.appendingPathComponent(name).path
        let result = try runProcess("/usr/bin/desktop-file-validate", [path], environment: sandbox.environment, timeout: 30)
        #expect(result.status == 0 && result.stdout.isEmpty && result.stderr.isEmpty, "\(result.stdout)\(result.stderr)")
    }

    /// Chime's own entry: named by its application id, the D-Bus name and the alerts'
    /// `desktop-entry` hint (LibnotifyNotifier), so notification settings list the alerts as
    /// Chime, with its icon (of the same name); shown in the app grid, where it opens the app:
    /// D-Bus activatable (the runner serves org.freedesktop.Application), `chime app` for
    /// launchers that do not activate. Chime 0.2.0's chime.desktop is gone.
    @Test func chimeDesktopEntryNamesChimesAlerts() throws {
        #expect(ChimeBus.name == ApplicationID.current)
        let name = ApplicationID.current + ".desktop"
        let text = try String(contentsOf: Self.packaging.appendingPathComponent(name), encoding: .utf8)
        let lines = Set(text.split(separator: "\n").map(String.init))
        let expected = [
            "DBusActivatable=true", "X-GNOME-UsesNotifications=true", "Icon=\(ApplicationID.current)", "Exec=chime app", "Name=Chime",
            "Terminal=false",
        ]
        for line in expected {
            #expect(lines.contains(line), "\(name) lacks \(line)")
        }
        #expect(!lines.contains { $0.hasPrefix("NoDisplay") })
        #expect(!FileManager.default.fileExists(atPath: Self.packaging.appendingPathComponent("chime.desktop").path))
        let icons = Self.packaging.deletingLastPathComponent().appendingPathComponent("Resources/icons")
        #expect(FileManager.default.fileExists(atPath: icons.appendingPathComponent(ApplicationID.current + ".svg").path))
        let autostart = try String(contentsOf: Self.packaging.appendingPathComponent("chime-runner.desktop"), encoding: .utf8)
        #expect(autostart.contains("\nIcon=\(ApplicationID.current)\n"))
    }

    /// scripts/package-deb ships the entry and icon under the application id, the icon's old name
    /// as a link, and not the old entry (so that dpkg removes it on upgrade).
    @Test func packageShipsTheEntryUnderTheApplicationId() throws {
        let script = try String(
            contentsOf: Self.packaging.deletingLastPathComponent().appendingPathComponent("scripts/package-deb"),
            encoding: .utf8
        )
        #expect(script.contains("\"$root/usr/share/applications/io.github.chime.Chime.desktop\""))
        #expect(script.contains("\"$root/usr/share/icons/hicolor/scalable/apps/io.github.chime.Chime.svg\""))
        #expect(!script.contains("applications/chime.desktop"))
    }

    /// The quickstart installs io.github.chime.Chime.desktop in $XDG_DATA_HOME/applications, where the gateway
    /// writes its launcher overrides: it is not Chime's override, so the gateway neither lists
    /// nor removes it.
    @Test func gatewayLeavesChimesOwnDesktopEntryAlone() throws {
        let sandbox = try Sandbox()
        let applications = try #require(sandbox.environment["XDG_DATA_HOME"]) + "/applications"
        try FileManager.default.createDirectory(atPath: applications, withIntermediateDirectories: true)
        let original = try Data(contentsOf: Self.packaging.appendingPathComponent("io.github.chime.Chime.desktop"))
        let installed = applications + "/io.github.chime.Chime.desktop"
        try original.write(to: URL(fileURLWithPath: installed))

        let list = try sandbox.chime("gate", "list", "--json")
        #expect(list.status == 0, "\(list.stderr)")
        #expect(!list.stdout.contains("io.github.chime.Chime.desktop"), "\(list.stdout)")
        let off = try sandbox.chime("gate", "off")
        #expect(off.status == 0, "\(off.stderr)")
        #expect(FileManager.default.contents(atPath: installed) == original)
    }
}

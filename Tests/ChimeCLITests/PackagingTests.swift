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

    @Test(arguments: ["chime.desktop", "chime-runner.desktop"])
    func desktopEntryIsValid(_ name: String) throws {
        let sandbox = try Sandbox()
        let path = Self.packaging.appendingPathComponent(name).path
        let result = try runProcess("/usr/bin/desktop-file-validate", [path], environment: sandbox.environment, timeout: 30)
        #expect(result.status == 0 && result.stdout.isEmpty && result.stderr.isEmpty, "\(result.stdout)\(result.stderr)")
    }

    /// Chime's own entry: hidden from menus, and named by the alerts' `desktop-entry=chime` hint
    /// (LibnotifyNotifier) so notification settings list them as Chime, with its icon.
    @Test func chimeDesktopEntryNamesChimesAlerts() throws {
        let text = try String(contentsOf: Self.packaging.appendingPathComponent("chime.desktop"), encoding: .utf8)
        let lines = Set(text.split(separator: "\n").map(String.init))
        for expected in ["NoDisplay=true", "X-GNOME-UsesNotifications=true", "Icon=chime", "Exec=chime", "Name=Chime"] {
            #expect(lines.contains(expected), "chime.desktop lacks \(expected)")
        }
    }

    /// The quickstart installs chime.desktop in $XDG_DATA_HOME/applications, where the gateway
    /// writes its launcher overrides: it is not Chime's override, so the gateway neither lists
    /// nor removes it.
    @Test func gatewayLeavesChimesOwnDesktopEntryAlone() throws {
        let sandbox = try Sandbox()
        let applications = try #require(sandbox.environment["XDG_DATA_HOME"]) + "/applications"
        try FileManager.default.createDirectory(atPath: applications, withIntermediateDirectories: true)
        let original = try Data(contentsOf: Self.packaging.appendingPathComponent("chime.desktop"))
        let installed = applications + "/chime.desktop"
        try original.write(to: URL(fileURLWithPath: installed))

        let list = try sandbox.chime("gate", "list", "--json")
        #expect(list.status == 0, "\(list.stderr)")
        #expect(!list.stdout.contains("chime.desktop"), "\(list.stdout)")
        let off = try sandbox.chime("gate", "off")
        #expect(off.status == 0, "\(off.stderr)")
        #expect(FileManager.default.contents(atPath: installed) == original)
    }
}

import Foundation
import Testing

/// What a start of chime loads: libnotify and GLib are opened with dlopen by the
/// commands that show or close alerts, and libpq (with OpenSSL, Kerberos, LDAP) by those that use
/// a PostgreSQL store and libcurl by the webhook notifier, not mapped by the dynamic
/// loader at every start.
struct StartupTests {
    @Test(arguments: [["--version"], ["list"], ["in", "5m", "tea"], ["cancel", "nothing-here"]])
    func commandsThatShowNoAlertLoadNeitherLibnotifyNorGLibNorLibpq(arguments: [String]) throws {
        let sandbox = try Sandbox()
        var environment = sandbox.environment
        environment["LD_DEBUG"] = "libs"  // the loader names each library it maps, on stderr
        let result = try runProcess(ChimeExecutable.url.path, arguments, environment: environment, timeout: 30)
        #expect(result.status == 0 || arguments[0] == "cancel", "\(result.stderr.suffix(500))")
        #expect(result.stderr.contains("libsqlite3.so.0"), "the loader's report is missing")
        for library in [
            "libnotify", "libglib-2.0", "libgio-2.0", "libgdk_pixbuf", "libpq", "libssl", "libkrb5", "libldap", "libcurl", "libnghttp2",
        ] {
            #expect(!result.stderr.contains(library), "chime \(arguments.joined(separator: " ")) loaded \(library)")
        }
    }

    /// Without a loadable libnotify (here an empty libnotify.so.4 found first on
    /// LD_LIBRARY_PATH), the desktop says why and what to do; nothing else needs it.
    @Test func withoutLibnotifyTheDesktopSaysSoAndSchedulingStillWorks() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("chime-nolib-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        let broken = root.appendingPathComponent("libnotify.so.4").path
        #expect(FileManager.default.createFile(atPath: broken, contents: Data()))
        let sandbox = try Sandbox(extra: [
            "LD_LIBRARY_PATH": root.path,
            "DBUS_SESSION_BUS_ADDRESS": "unix:path=" + root.appendingPathComponent("no-bus").path,
        ])

        let doctor = try sandbox.chime("doctor", "--json")
        let desktop = try #require(try jsonObject(doctor.stdout)["desktop"] as? [String: Any], "\(doctor.stdout)")
        #expect(desktop["available"] as? Bool == false)
        let problem = try #require(desktop["problem"] as? String)
        #expect(problem.hasPrefix("libnotify could not be loaded: \(broken): "), "\(problem)")

        let run = try sandbox.chime("run", "--notifier", "desktop")
        #expect(run.status == 7, "\(run.stderr)")
        #expect(run.stderr.contains("libnotify could not be loaded"), "\(run.stderr)")
        #expect(run.stderr.contains("Install the libnotify4 package, or use --notifier auto or console."), "\(run.stderr)")
        #expect(run.stderr.split(separator: "\n").count == 1, "\(run.stderr)")

        let scheduled = try sandbox.chime("in", "5m", "tea", "--json")
        #expect(scheduled.status == 0, "\(scheduled.stderr)")
    }
}

import ChimeTesting
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The tests run apart from the person who runs them: a chime installed in their home (its icons
/// in `~/.local/share/chime/icons`, its store), their `CHIME_STORE` or their desktop session must
/// change no result.
@Suite("Tests are isolated from the home of whoever runs them")
struct IsolationTests {
    @Test("Every process a test starts gets its own home and XDG directories, and nothing of the outer environment")
    func processesGetTheirOwnHome() throws {
        let sandbox = try Sandbox()
        let variables = try Self.environment(of: sandbox.environment, in: sandbox.directory)
        let root = sandbox.directory.path + "/"
        for key in [
            "HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR", "XDG_DATA_DIRS",
            "XDG_CONFIG_DIRS", "CHIME_STORE",
        ] {
            let value = try #require(variables[key], "\(key) is not set")
            #expect(value.hasPrefix(root), "\(key)=\(value) is outside the test's own directory")
        }
        #expect(variables["DBUS_SESSION_BUS_ADDRESS"] == nil && variables["DISPLAY"] == nil && variables["WAYLAND_DISPLAY"] == nil)
        // No value from the environment of whoever runs the tests, but a system PATH, the locale and the zone.
        let outer = ProcessInfo.processInfo.environment
        let inherited = variables.filter { key, value in !["PATH", "LANG", "TZ"].contains(key) && outer[key] == value }
        #expect(inherited.isEmpty, "inherited from outside: \(inherited)")
        #expect(variables["PATH"] == IsolatedEnvironment.path)
    }

    @Test("A notification server's processes get their own home too")
    func serverProcessesGetTheirOwnHome() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("chime-isolation-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = directory.appendingPathComponent("env.out").path
        let pid = try NotificationServer.spawn("/usr/bin/env", [], environment: ["DISPLAY": ":99"], output: output)
        #expect(NotificationServer.wait(pid) == 0)
        let variables = Self.parse(try String(contentsOfFile: output, encoding: .utf8))
        #expect(variables["HOME"]?.hasPrefix(NotificationServer.home.path + "/") == true, "\(variables)")
        #expect(variables["XDG_DATA_HOME"]?.hasPrefix(NotificationServer.home.path + "/") == true, "\(variables)")
        #expect(variables["DISPLAY"] == ":99")
        #expect(variables["CHIME_STORE"] == nil)
    }

    /// The environment `env` sees when started with `environment`.
    static func environment(of environment: [String: String], in directory: URL) throws -> [String: String] {
        let output = directory.appendingPathComponent("env.out").path
        let pid = try Spawn.start("/usr/bin/env", [], environment: environment, output: output).get()
        #expect(Spawn.wait(pid) == 0)
        return parse(try String(contentsOfFile: output, encoding: .utf8))
    }

    static func parse(_ text: String) -> [String: String] {
        var variables: [String: String] = [:]
        for line in text.split(separator: "\n") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            variables[String(line[..<equals])] = String(line[line.index(after: equals)...])
        }
        return variables
    }
}

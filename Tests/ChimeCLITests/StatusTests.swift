import ChimeDBus
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `chime status` on a private session bus: a status bar's feed, driven by the runner's
/// signals and its presence on the bus.
@Suite("chime status: a status-bar feed over D-Bus", .serialized)
struct StatusTests {
    typealias Bus = DBusTests.Bus

    /// The next line that `matches`, skipping others, up to `timeout` seconds.
    static func line(_ feed: RunningChime, timeout: Double = 10, _ matches: ([String: Any]) -> Bool) async throws -> [String: Any]? {
        let deadline = Date().addingTimeInterval(timeout)
        while deadline.timeIntervalSinceNow > 0, let line = await feed.nextLine(timeout: deadline.timeIntervalSinceNow) {
            let object = try jsonObject(line)
            if matches(object) { return object }
        }
        return nil
    }

    static func title(_ object: [String: Any]) -> String? { (object["next"] as? [String: Any])?["title"] as? String }

    @Test("--follow: a line at start, one per change (a reminder, quiet, the runner gone and back), none when nothing changes")
    func followsTheRunner() async throws {
        let bus = try Bus()
        let sandbox = try Sandbox(extra: ["DBUS_SESSION_BUS_ADDRESS": bus.address])
        let feed = try RunningChime(arguments: ["status", "--follow", "--format", "json"], environment: sandbox.environment)
        defer { kill(feed.process.processIdentifier, SIGKILL) }

        // No runner yet: one line saying so.
        let first = try #require(await feed.nextLine(timeout: 10), "\(feed.stderr)")
        #expect(try jsonObject(first)["runner"] as? Bool == false, "\(first)")

        // A runner appears: followed without being asked.
        var runner = try sandbox.startRunner("--notifier", "json")
        defer { kill(runner.process.processIdentifier, SIGKILL) }
        let up = try await Self.line(feed) { $0["runner"] as? Bool == true }
        #expect(up != nil, "\(runner.stderr)")

        // A reminder scheduled on the command line: a line naming it.
        #expect(try sandbox.chime("in", "25m", "Tea").status == 0)
        let tea = try #require(try await Self.line(feed) { Self.title($0) == "Tea" }, "\(feed.stderr)")
        let due = try #require((tea["next"] as? [String: Any])?["due"] as? String)
        #expect(due.contains("T"), "\(tea)")
        #expect((tea["focus"] as? [String: Any])?["state"] as? String == "none")

        // Quiet by hand: a line with quiet active.
        #expect(try sandbox.chime("quiet", "1h").status == 0)
        let quiet = try await Self.line(feed) { ($0["quiet"] as? [String: Any])?["active"] as? Bool == true }
        #expect((quiet?["quiet"] as? [String: Any])?["reasons"] as? [String] == ["manual"], "\(String(describing: quiet))")
        #expect(quiet.flatMap(Self.title) == "Tea")

        // Nothing changes: no line (the reminder's minutes do not show in JSON, focus is off).
        let idle = await feed.lines(for: 1)
        #expect(idle.isEmpty, "\(idle)")

        // The runner stops: a line saying there is none; a new one is followed again.
        #expect(await runner.terminate() == 0)
        let gone = try await Self.line(feed) { $0["runner"] as? Bool == false }
        #expect(gone != nil)
        runner = try sandbox.startRunner("--notifier", "json")
        let back = try await Self.line(feed) { Self.title($0) == "Tea" && $0["runner"] as? Bool == true }
        #expect(back != nil, "\(runner.stderr)")
        _ = await runner.terminate()

        // Stopped by the bar: exit status 0, nothing on standard error.
        #expect(await feed.terminate() == 0)
        #expect(feed.stderr.isEmpty, "\(feed.stderr)")
    }

    @Test("One line now: text by default, waybar's custom module JSON")
    func oneLine() async throws {
        let bus = try Bus()
        let sandbox = try Sandbox(extra: ["DBUS_SESSION_BUS_ADDRESS": bus.address])
        let none = try sandbox.chime("status")
        #expect(none.status == 0 && none.stdout == "no runner\n", "\(none)")

        let runner = try sandbox.startRunner("--notifier", "json")
        defer { kill(runner.process.processIdentifier, SIGKILL) }
        #expect(await DBusTests.wait { runner.stderr.contains("D-Bus service: \(ChimeBus.name) on the session bus") }, "\(runner.stderr)")
        #expect(try sandbox.chime("in", "25m", "Tea").status == 0)
        // The runner reads its properties again after the change (a moment later).
        var text = ""
        #expect(
            await DBusTests.wait {
                text = (try? sandbox.chime("status").stdout) ?? ""
                return text.hasPrefix("Tea in ")
            },
            "\(text)"
        )
        #expect(text.hasPrefix("Tea in 25m") || text.hasPrefix("Tea in 24m"), "\(text)")

        let waybar = try sandbox.chime("status", "--format", "waybar")
        #expect(waybar.status == 0, "\(waybar)")
        #expect(waybar.stdout.split(separator: "\n").count == 1, "\(waybar.stdout)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(waybar.stdout.utf8)) as? [String: String])
        #expect(object["text"]?.hasPrefix("Tea in ") == true, "\(object)")
        #expect(object["tooltip"]?.hasPrefix("Next: Tea at ") == true, "\(object)")
        #expect(object["class"] == "next" && object["alt"] == "next", "\(object)")

        let block = try jsonObject(try sandbox.chime("status", "--format", "i3bar").stdout)
        #expect((block["full_text"] as? String)?.hasPrefix("Tea in ") == true, "\(block)")
        _ = await runner.terminate()
    }

    @Test("A status bar never starts a runner by D-Bus activation")
    func neverActivates() throws {
        let marker = FileManager.default.temporaryDirectory.appendingPathComponent("chime-activated-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: marker) }
        let bus = try Bus(activating: "[D-BUS Service]\nName=\(ChimeBus.name)\nExec=/usr/bin/touch \(marker)\n")
        let sandbox = try Sandbox(extra: ["DBUS_SESSION_BUS_ADDRESS": bus.address])
        let result = try sandbox.chime("status", "--format", "json")
        #expect(result.status == 0 && result.stdout == "{\"runner\":false}\n", "\(result)")
        #expect(!FileManager.default.fileExists(atPath: marker))
        // (The bus would have started it: a plain call does.)
        _ = try DBusTests.run(
            "/usr/bin/gdbus",
            [
                "call", "--session", "--timeout", "1", "--dest", ChimeBus.name, "--object-path", ChimeBus.objectPath, "--method",
                ChimeBus.interface + ".List",
            ],
            bus: bus
        )
        #expect(FileManager.default.fileExists(atPath: marker))
    }

    @Test("No session bus: one line and exit status 7")
    func noBus() throws {
        let sandbox = try Sandbox(extra: ["DBUS_SESSION_BUS_ADDRESS": ""])
        let result = try sandbox.chime("status", "--follow")
        #expect(result.status == 7, "\(result)")
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.hasPrefix("chime: no session bus") && result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
    }

    @Test("A bad --format names the formats", arguments: ["xml", ""])
    func badFormat(_ format: String) throws {
        let sandbox = try Sandbox()
        let result = try sandbox.chime("status", "--format", format)
        #expect(result.status == 64, "\(result)")
        #expect(result.stderr.contains("text") || result.stderr.contains("format"), "\(result.stderr)")
    }
}

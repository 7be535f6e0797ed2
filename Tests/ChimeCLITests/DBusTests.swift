import ChimeDBus
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `chime run`'s D-Bus service driven by real clients written by others (`gdbus`, `busctl`)
/// on a private session bus (a plain dbus-daemon, as scripts/notification-server starts one).
@Suite("D-Bus: the runner's service through gdbus and busctl", .serialized)
struct DBusTests {
    /// A private session bus (started with ``Spawn``, so that it takes SIGTERM), stopped by pid.
    final class Bus {
        let directory: URL
        let pid: pid_t
        let address: String

        /// - Parameter activating: a D-Bus service file (its text) the bus activates, with
        ///   `environment` as the environment of what it starts; nil: the standard session bus.
        init(activating service: String? = nil, environment: [String: String] = [:]) throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("chime-dbus-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let file = directory.appendingPathComponent("address").path
            var arguments = ["--session", "--nofork", "--nopidfile", "--print-address=1"]
            if let service {
                // The session config, with only this directory's services (not the machine's).
                let services = directory.appendingPathComponent("services")
                try FileManager.default.createDirectory(at: services, withIntermediateDirectories: true)
                try service.write(to: services.appendingPathComponent("\(ChimeBus.name).service"), atomically: true, encoding: .utf8)
                let config = directory.appendingPathComponent("session.conf")
                try """
                <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
                 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
                <busconfig>
                  <type>session</type>
                  <listen>unix:tmpdir=\(directory.path)</listen>
                  <servicedir>\(services.path)</servicedir>
                  <policy context="default">
                    <allow send_destination="*" eavesdrop="true"/>
                    <allow eavesdrop="true"/>
                    <allow own="*"/>
                  </policy>
                </busconfig>
                """.write(to: config, atomically: true, encoding: .utf8)
                arguments = ["--config-file=" + config.path, "--nofork", "--nopidfile", "--print-address=1"]
            }
            let started = Spawn.start(
                "/usr/bin/dbus-daemon",
                arguments,
                environment: ["PATH": "/usr/bin:/bin", "HOME": directory.path].merging(environment) { _, new in new },
                output: file
            )
            pid = try started.get()
            let deadline = Date().addingTimeInterval(10)
            var text = ""
            while !text.contains("\n") && Date() < deadline {
                usleep(10_000)
                text = (try? String(contentsOfFile: file, encoding: .utf8)) ?? ""
            }
            address = text.split(separator: "\n").first.map(String.init) ?? ""
        }

        /// Starts `path` on this bus, its output to `output`; stop it with ``stop(_:)``.
        func spawn(_ path: String, _ arguments: [String], output: String) throws -> pid_t {
            try Spawn.start(path, arguments, environment: ["DBUS_SESSION_BUS_ADDRESS": address, "PATH": "/usr/bin:/bin"], output: output)
                .get()
        }

        static func stop(_ pid: pid_t) {
            kill(pid, SIGTERM)
            _ = Spawn.wait(pid)
        }

        deinit {
            Self.stop(pid)
            try? FileManager.default.removeItem(at: directory)
        }
    }

    /// Runs a client to completion (each has its own time limit: gdbus --timeout, busctl --timeout).
    static func run(_ tool: String, _ arguments: [String], bus: Bus) throws -> (status: Int32, stdout: String, stderr: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        process.environment = ["DBUS_SESSION_BUS_ADDRESS": bus.address, "PATH": "/usr/bin:/bin"]
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: stdout, as: UTF8.self), String(decoding: stderr, as: UTF8.self))
    }

    static func gdbus(_ method: String, _ arguments: String..., bus: Bus) throws -> (status: Int32, stdout: String, stderr: String) {
        try run(
            "/usr/bin/gdbus",
            [
                "call", "--session", "--timeout", "10", "--dest", ChimeBus.name, "--object-path", ChimeBus.objectPath, "--method",
                ChimeBus.interface + "." + method,
            ]
                + arguments,
            bus: bus
        )
    }

    static func busctl(_ method: String, _ arguments: String..., bus: Bus) throws -> (status: Int32, stdout: String, stderr: String) {
        try run(
            "/usr/bin/busctl",
            ["--address=" + bus.address, "--timeout=10", "call", ChimeBus.name, ChimeBus.objectPath, ChimeBus.interface, method]
                + arguments,
            bus: bus
        )
    }

    /// Waits until `condition` holds, up to `timeout` seconds.
    static func wait(timeout: Double = 10, _ condition: () -> Bool) async -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return condition()
    }

    @Test func scheduleFiresListsCancelsAndRefusesThroughGdbusAndBusctl() async throws {
        let bus = try Bus()
        let sandbox = try Sandbox(extra: ["DBUS_SESSION_BUS_ADDRESS": bus.address])
        let runner = try sandbox.startRunner("--notifier", "json")
        defer { kill(runner.process.processIdentifier, SIGKILL) }
        #expect(await Self.wait { runner.stderr.contains("D-Bus service: \(ChimeBus.name) on the session bus") }, "\(runner.stderr)")

        // A monitor, as a status bar would listen (started once the name is owned).
        let monitorLog = sandbox.directory.appendingPathComponent("monitor.log")
        let monitor = try bus.spawn(
            "/usr/bin/gdbus",
            ["monitor", "--session", "--dest", ChimeBus.name, "--object-path", ChimeBus.objectPath],
            output: monitorLog.path
        )
        defer { Bus.stop(monitor) }
        let monitored = { (try? String(contentsOf: monitorLog, encoding: .utf8)) ?? "" }
        #expect(await Self.wait { monitored().contains("is owned by") }, "\(monitored())")

        // Schedule 3 s ahead (time to read the properties before it fires): the id comes back,
        // `chime list` shows it, Changed names it.
        let scheduled = try Self.gdbus("Schedule", "{'title': <'Tea'>, 'body': <'Green'>, 'in': <'3s'>, 'id': <'tea'>}", bus: bus)
        #expect(scheduled.stdout == "('tea',)\n", "\(scheduled)")
        #expect(try sandbox.chime("list").stdout.contains("tea"))
        #expect(await Self.wait { monitored().contains("\(ChimeBus.interface).Changed (['tea'],)") }, "\(monitored())")
        // The properties: NextDue read with busctl, and its change signalled.
        #expect(
            await Self.wait {
                monitored().contains("org.freedesktop.DBus.Properties.PropertiesChanged ('\(ChimeBus.interface)', {")
                    && monitored().contains("'Next': <{")
            },
            "\(monitored())"
        )
        let nextDue = try Self.run(
            "/usr/bin/busctl",
            [
                "--address=" + bus.address, "get-property", ChimeBus.name, ChimeBus.objectPath, ChimeBus.interface, "NextDue", "Next",
                "Focus",
            ],
            bus: bus
        )
        #expect(nextDue.stdout.hasPrefix("x "), "\(nextDue)")
        #expect(nextDue.stdout.contains("\"id\" s \"tea\""), "\(nextDue)")
        #expect(nextDue.stdout.contains("\"state\" s \"none\""), "\(nextDue)")
        // Fired, from the scheduler as it posts (the JSON notifier's line is the post).
        #expect(await Self.wait { monitored().contains("\(ChimeBus.interface).Fired ('tea', int64 ") }, "\(monitored())")
        #expect(monitored().contains("'title': <'Tea'>"))
        #expect(await runner.nextLine(timeout: 5)?.contains("\"Tea\"") == true)

        // Done on the shown alert: Answered, once; a second answer is refused as on the command line.
        let done = try Self.gdbus("Done", "tea", bus: bus)
        #expect(done.status == 0 && done.stdout == "()\n", "\(done)")
        #expect(await Self.wait { monitored().contains("\(ChimeBus.interface).Answered ('tea', 'done')") }, "\(monitored())")
        let doneAgain = try Self.gdbus("Done", "tea", bus: bus)
        let cliDoneAgain = try sandbox.chime("done", "tea")
        #expect(cliDoneAgain.status == 4, "\(cliDoneAgain)")
        #expect(doneAgain.status != 0 && doneAgain.stderr.contains("\(ChimeBus.name).Error.Conflict: "), "\(doneAgain)")
        #expect(monitored().components(separatedBy: ".Answered (").count == 2, "\(monitored())")

        // Get and List: a{sv} and aa{sv}, through both clients.
        _ = try Self.gdbus("Schedule", "{'title': <'Stretch'>, 'every': <'weekday 08:00'>, 'id': <'stretch'>}", bus: bus)
        let got = try Self.gdbus("Get", "stretch", bus: bus)
        #expect(got.stdout.hasPrefix("({"), "\(got)")
        for field in ["'id': <'stretch'>", "'title': <'Stretch'>", "'recurring': <true>", "'next_due_us': <int64 ", "'kind': <'plain'>"] {
            #expect(got.stdout.contains(field), "\(field) in \(got.stdout)")
        }
        let listed = try Self.busctl("List", bus: bus)
        #expect(listed.stdout.hasPrefix("aa{sv} 1 "), "\(listed)")
        #expect(listed.stdout.contains("\"id\" s \"stretch\""), "\(listed)")

        // Cancel: the outcome word (busctl), then NotFound with the command line's line (gdbus).
        let cancelled = try Self.busctl("Cancel", "s", "stretch", bus: bus)
        #expect(cancelled.stdout == "s \"cancelled\"\n", "\(cancelled)")
        let again = try Self.gdbus("Cancel", "stretch", bus: bus)
        let cliAgain = try sandbox.chime("cancel", "stretch")
        #expect(again.status != 0 && cliAgain.status == 3)
        #expect(again.stderr.contains("GDBus.Error:\(ChimeBus.name).Error.NotFound: "), "\(again.stderr)")
        let cliLine = cliAgain.stderr.split(separator: "\n").first.map { String($0.drop { $0 != " " }.dropFirst()) } ?? "?"
        #expect(again.stderr.contains(cliLine), "'\(cliLine)' in \(again.stderr)")

        // Bad input: Invalid, with `chime in`'s own line; the runner goes on.
        let bad = try Self.gdbus("Schedule", "{'title': <'T'>, 'in': <'5 minutes'>}", bus: bus)
        let cliBad = try sandbox.chime("in", "5 minutes", "T")
        let cliBadLine = cliBad.stderr.split(separator: "\n").first.map { String($0.drop { $0 != " " }.dropFirst()) } ?? "?"
        #expect(cliBad.status == 64 && cliBadLine.hasPrefix("invalid duration '5 minutes': "), "\(cliBad.stderr)")
        #expect(bad.stderr.contains("\(ChimeBus.name).Error.Invalid: " + cliBadLine), "'\(cliBadLine)' in \(bad.stderr)")
        let wrongType = try Self.busctl("Schedule", "a{sv}", "2", "title", "s", "T", "in", "i", "5", bus: bus)
        #expect(wrongType.stderr.contains("'in' must be a string (D-Bus type s), not i"), "\(wrongType)")
        let pinged = try Self.gdbus("List", bus: bus)
        #expect(pinged.status == 0 && runner.process.isRunning)

        // The service's own changes were told once each, by name (its pokes of the runner are not
        // taken for another process's change).
        #expect(monitored().components(separatedBy: ".Changed (['stretch'],)").count == 3, "\(monitored())")
        #expect(!monitored().contains(".Changed (@as [],)"), "\(monitored())")

        // A change from the command line: Changed with no ids (read List again).
        #expect(try sandbox.chime("in", "1h", "Later").status == 0)
        #expect(await Self.wait { monitored().contains("\(ChimeBus.interface).Changed (@as [],)") }, "\(monitored())")
        #expect(await runner.terminate() == 0)
    }

    @Test func aCallStartsTheRunnerThroughTheServiceFile() async throws {
        let sandbox = try Sandbox()
        // The packaged file, its Exec= naming the chime under test (as scripts/quickstart
        // rewrites it); the bus runs it with the sandbox's environment, as a session's would.
        let packaged = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("packaging/dbus/\(ChimeBus.name).service")
        let text = try String(contentsOf: packaged, encoding: .utf8)
        #expect(text.contains("\nName=\(ChimeBus.name)\n") && text.contains("\nSystemdService=chime.service\n"))
        let service = text.replacingOccurrences(
            of: "Exec=/usr/bin/chime run\n",
            with: "Exec=\(ChimeExecutable.url.path) run --notifier json\n"
        )
        #expect(service != text)
        let bus = try Bus(activating: service, environment: sandbox.environment)
        #expect(try !sandbox.chime("list").stdout.contains("activated"))

        let scheduled = try Self.gdbus("Schedule", "{'title': <'Activated'>, 'in': <'1h'>, 'id': <'activated'>}", bus: bus)
        #expect(scheduled.stdout == "('activated',)\n", "\(scheduled)")
        #expect(try sandbox.chime("list").stdout.contains("activated"))
        // The runner the bus started owns the name and holds the sandbox's store; stop it by pid.
        let owner = try Self.run(
            "/usr/bin/gdbus",
            [
                "call", "--session", "--dest", "org.freedesktop.DBus", "--object-path", "/org/freedesktop/DBus", "--method",
                "org.freedesktop.DBus.GetConnectionUnixProcessID", ChimeBus.name,
            ],
            bus: bus
        )
        let pid = try #require(pid_t(owner.stdout.filter(\.isNumber).dropFirst(2)), "\(owner)")
        #expect(try sandbox.chime("doctor").stdout.contains("\(pid)"))
        kill(pid, SIGTERM)
        #expect(await Self.wait { kill(pid, 0) != 0 })
    }

    @Test func aCommandScheduledOverTheBusRunsOnceWhenItFires() async throws {
        let bus = try Bus()
        let sandbox = try Sandbox(extra: ["DBUS_SESSION_BUS_ADDRESS": bus.address])
        let runner = try sandbox.startRunner("--notifier", "json")
        defer { kill(runner.process.processIdentifier, SIGKILL) }
        #expect(await Self.wait { runner.stderr.contains("D-Bus service: \(ChimeBus.name) on the session bus") }, "\(runner.stderr)")
        let mark = sandbox.directory.appendingPathComponent("ran")
        let scheduled = try Self.gdbus(
            "Schedule",
            "{'title': <'Backup'>, 'in': <'1s'>, 'id': <'backup'>, 'exec': <['/bin/sh', '-c', 'echo \"$CHIME_ID\" >> \"$0\"', '\(mark.path)']>}",
            bus: bus
        )
        #expect(scheduled.stdout == "('backup',)\n", "\(scheduled)")
        #expect(await Self.wait { ((try? String(contentsOf: mark, encoding: .utf8)) ?? "") == "backup\n" })
        let history = { (try? sandbox.chime("history").stdout) ?? "" }
        #expect(await Self.wait { history().contains("exit 0") }, "\(history())")
        #expect(try String(contentsOf: mark, encoding: .utf8) == "backup\n")
        #expect(await runner.terminate() == 0)
    }

    @Test func withoutASessionBusTheRunnerSaysSoAndRuns() async throws {
        let sandbox = try Sandbox(extra: ["DBUS_SESSION_BUS_ADDRESS": ""])
        let runner = try sandbox.startRunner("--notifier", "console")
        #expect(await runner.waitUntilStarted())
        #expect(runner.stderr.contains("No session bus: no D-Bus service"), "\(runner.stderr)")
        #expect(await runner.terminate() == 0)
    }

    @Test func aSecondRunnerOnAnotherStoreLogsThatTheNameIsTaken() async throws {
        let bus = try Bus()
        let first = try Sandbox(extra: ["DBUS_SESSION_BUS_ADDRESS": bus.address])
        let second = try Sandbox(extra: ["DBUS_SESSION_BUS_ADDRESS": bus.address])
        let one = try first.startRunner("--notifier", "console")
        defer { kill(one.process.processIdentifier, SIGKILL) }
        #expect(await Self.wait { one.stderr.contains("D-Bus service: \(ChimeBus.name)") })
        let two = try second.startRunner("--notifier", "console")
        defer { kill(two.process.processIdentifier, SIGKILL) }
        #expect(await Self.wait { two.stderr.contains("is owned by another process: no D-Bus service") }, "\(two.stderr)")
        #expect(two.process.isRunning)
        #expect(await two.terminate() == 0)
        #expect(await one.terminate() == 0)
    }
}

import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Start at login: the real `chime run` tells a socket the test binds as
/// `NOTIFY_SOCKET` when it is ready and when it stops; `chime service` enables, reports and
/// disables the systemd unit with the real `systemctl --user` (offline: no user manager can
/// run here, so nothing is started through systemd) and the autostart entry, in the sandbox's
/// own XDG directories.
@Suite("Start at login: sd_notify, the unit, the autostart entry, chime service")
struct ServiceTests {
    // MARK: - sd_notify

    @Test("READY=1 comes once the store exists and the wake socket answers; SIGTERM: STOPPING=1, then exit 0", .timeLimit(.minutes(2)))
    func readyThenStopping() async throws {
        let sandbox = try Sandbox()
        let manager = try NotifySocket(path: sandbox.directory.appendingPathComponent("notify.sock").path)
        var environment = sandbox.environment
        environment["NOTIFY_SOCKET"] = manager.path
        #expect(!FileManager.default.fileExists(atPath: sandbox.store))

        // When the runner starts under a "service manager"
        let runner = try RunningChime(arguments: ["run", "--notifier", "console"], environment: environment)
        let ready = await manager.next(timeout: 20)

        // Then READY=1 arrives with a STATUS naming the store, and at that moment the store file
        // exists and the runner's wake-up socket is bound (READY is not early)
        let storeExisted = FileManager.default.fileExists(atPath: sandbox.store)
        let sockets = Self.sockets(in: sandbox.runtime + "/chime")
        let poked = sockets.map { NotifySocket.send("p", to: $0) }
        #expect(
            ready?.hasPrefix("READY=1\nSTATUS=Serving \(sandbox.store); next due at start: ") == true,
            "\(ready ?? "nothing"): \(runner.stderr)"
        )
        #expect(storeExisted)
        #expect(sockets.count == 1 && poked == [true], "\(sockets)")
        let scheduled = try await runChime(["in", "1h", "Tea", "--json"], environment: sandbox.environment)
        #expect(scheduled.status == 0, "\(scheduled.stderr)")
        #expect(try jsonObject(scheduled.stdout)["runner"] as? Bool == true, "\(scheduled.stdout)")

        // When SIGTERM starts the graceful stop
        kill(runner.process.processIdentifier, SIGTERM)
        let stopping = await manager.next(timeout: 20)
        let status = await Self.exitStatus(of: runner.process, timeout: 20)

        // Then STOPPING=1 arrives, then the runner exits 0; nothing else was said
        #expect(stopping == "STOPPING=1\nSTATUS=Stopping", "\(stopping ?? "nothing"): \(runner.stderr)")
        #expect(status == 0, "\(runner.stderr)")
        #expect(manager.receive() == nil)
    }

    @Test("A NOTIFY_SOCKET nobody listens on is logged once and changes nothing else", .timeLimit(.minutes(2)))
    func deafManager() async throws {
        let sandbox = try Sandbox()
        var environment = sandbox.environment
        environment["NOTIFY_SOCKET"] = sandbox.directory.appendingPathComponent("nobody.sock").path
        let runner = try RunningChime(arguments: ["run", "--notifier", "console"], environment: environment)
        #expect(await runner.waitUntilStarted(), "\(runner.stderr)")
        let scheduled = try await runChime(["in", "1s", "Still here"], environment: sandbox.environment)
        #expect(scheduled.status == 0, "\(scheduled.stderr)")
        let line = await runner.nextLine(timeout: 20)
        #expect(line?.contains("Still here") == true, "\(line ?? "nothing"): \(runner.stderr)")
        // service status sees the running runner of the store
        let status = try await runChime(["service", "status", "--json"], environment: sandbox.environment)
        let running = try #require(try jsonObject(status.stdout)["runner"] as? [String: Any])
        #expect(running["running"] as? Bool == true, "\(status.stdout)")
        #expect((running["pid"] as? NSNumber)?.int32Value == runner.process.processIdentifier, "\(status.stdout)")
        #expect(await runner.terminate() == 0)
        // READY and STOPPING both failed: one warning.
        #expect(runner.stderr.components(separatedBy: "Service manager not told").count == 2, "\(runner.stderr)")
    }

    // MARK: - The unit and the autostart entry as shipped

    static let packaging = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("packaging")

    @Test("The unit is Type=notify without a watchdog and passes systemd-analyze verify")
    func unitVerifies() async throws {
        let unit = try String(contentsOf: Self.packaging.appendingPathComponent("chime.service"), encoding: .utf8)
        let lines = unit.split(separator: "\n").filter { !$0.hasPrefix("#") }
        #expect(lines.contains("Type=notify"))
        #expect(!lines.contains { $0.hasPrefix("WatchdogSec") })
        #expect(lines.contains("ExecStart=/usr/bin/chime run"))

        // As installed with ExecStart naming this build's chime (systemd checks it exists);
        // --man=no: the man page is not installed here.
        let sandbox = try Sandbox()
        let copy = sandbox.directory.appendingPathComponent("chime.service")
        try unit.replacingOccurrences(of: "ExecStart=/usr/bin/chime ", with: "ExecStart=\(ChimeExecutable.url.path) ")
            .write(to: copy, atomically: true, encoding: .utf8)
        let verified = try await runProgram(
            "/usr/bin/systemd-analyze",
            ["--user", "--man=no", "verify", copy.path],
            environment: sandbox.environment
        )
        #expect(verified.status == 0, "\(verified.stdout)\(verified.stderr)")
    }

    @Test("The package's autostart entry is valid and off")
    func shippedEntryIsValidAndOff() async throws {
        let path = Self.packaging.appendingPathComponent("chime-runner.desktop").path
        let sandbox = try Sandbox()
        let validated = try await runProgram("/usr/bin/desktop-file-validate", [path], environment: sandbox.environment)
        #expect(validated.status == 0 && validated.stdout.isEmpty, "\(validated.stdout)\(validated.stderr)")
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.contains("\nX-GNOME-Autostart-enabled=false\n"))
        // Not Chime's marker: `chime service` never takes the package's entry for its own.
        #expect(!text.split(separator: "\n").contains { $0.hasPrefix("X-Chime-Service") })
    }

    // MARK: - chime service, systemd (offline)

    @Test("--via systemd without a unit: exit 3 saying how to get one; with one: the wants link, status, doctor, disable")
    func systemdOffline() async throws {
        let sandbox = try Sandbox()
        let environment = sandbox.environment
        let config = try #require(environment["XDG_CONFIG_HOME"])
        let wants = config + "/systemd/user/default.target.wants/chime.service"

        // Given no chime.service where systemd looks
        let missing = try await runChime(["service", "enable", "--via", "systemd"], environment: environment)
        #expect(missing.status == 3, "\(missing.stderr)")
        #expect(
            missing.stderr.contains("no chime.service where systemd looks") && missing.stderr.contains("scripts/quickstart"),
            "\(missing.stderr)"
        )
        #expect(!FileManager.default.fileExists(atPath: config + "/systemd"))

        // Given the unit in $XDG_DATA_HOME/systemd/user, as scripts/quickstart installs it
        let units = try #require(environment["XDG_DATA_HOME"]) + "/systemd/user"
        try FileManager.default.createDirectory(atPath: units, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            atPath: Self.packaging.appendingPathComponent("chime.service").path,
            toPath: units + "/chime.service"
        )

        // When it is enabled with no user manager running
        let enabled = try await runChime(["service", "enable", "--via", "systemd", "--json"], environment: environment)

        // Then the real systemctl made the wants link, and chime says it starts at next login
        #expect(enabled.status == 0, "\(enabled.stderr)")
        let outcome = try jsonObject(enabled.stdout)
        #expect(outcome["method"] as? String == "systemd" && outcome["now"] as? Bool == false, "\(enabled.stdout)")
        #expect((outcome["steps"] as? [String])?.first?.contains("next login") == true, "\(enabled.stdout)")
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: wants)) == units + "/chime.service")

        let status = try await runChime(["service", "status", "--json"], environment: environment)
        #expect(status.status == 0, "\(status.stderr)")
        let report = try jsonObject(status.stdout)
        #expect(report["active"] as? [String] == ["systemd"], "\(status.stdout)")
        let systemd = try #require(report["systemd"] as? [String: Any])
        #expect(systemd["unit"] as? String == "enabled" && systemd["manager_running"] as? Bool == false)
        #expect(systemd["active"] is NSNull, "\(status.stdout)")
        let doctor = try await runChime(["doctor"], environment: environment)
        #expect(doctor.stdout.contains("Start at login:       systemd (chime.service enabled)"), "\(doctor.stdout)")

        // Enabling the other way undoes this one (one runner at login), and back
        let autostart = try await runChime(["service", "enable", "--via", "autostart"], environment: environment)
        #expect(autostart.status == 0, "\(autostart.stderr)")
        #expect(autostart.stdout.contains("Disabled chime.service"), "\(autostart.stdout)")
        #expect(!FileManager.default.fileExists(atPath: wants))
        let entry = config + "/autostart/chime-runner.desktop"
        #expect(FileManager.default.fileExists(atPath: entry))
        let back = try await runChime(["service", "enable", "--via", "systemd"], environment: environment)
        #expect(back.status == 0, "\(back.stderr)")
        #expect(back.stdout.contains("Removed the autostart entry Chime wrote before"), "\(back.stdout)")
        #expect(!FileManager.default.fileExists(atPath: entry))
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: wants)) == units + "/chime.service")

        // When it is disabled, the link is gone and nothing is set up
        let disabled = try await runChime(["service", "disable"], environment: environment)
        #expect(disabled.status == 0, "\(disabled.stderr)")
        #expect(disabled.stdout.contains("Disabled chime.service"), "\(disabled.stdout)")
        #expect(!FileManager.default.fileExists(atPath: wants))
        let after = try await runChime(["service", "status", "--json"], environment: environment)
        #expect(try jsonObject(after.stdout)["active"] as? [String] == [], "\(after.stdout)")
    }

    // MARK: - chime service, autostart

    @Test("Without a user manager, enable writes Chime's autostart entry; status and doctor show it; disable removes it")
    func autostartRoundTrip() async throws {
        let sandbox = try Sandbox()
        let environment = sandbox.environment
        let entry = try #require(environment["XDG_CONFIG_HOME"]) + "/autostart/chime-runner.desktop"

        let enabled = try await runChime(["service", "enable"], environment: environment)
        #expect(enabled.status == 0, "\(enabled.stderr)")
        #expect(enabled.stdout == "Wrote \(entry): your desktop session starts the runner at your next login.\n", "\(enabled.stdout)")
        #expect(enabled.stderr == "No runner is running now: start one with 'chime run', or log in again.\n", "\(enabled.stderr)")
        let text = try String(contentsOfFile: entry, encoding: .utf8)
        let chime = ChimeExecutable.url.resolvingSymlinksInPath().path
        #expect(text.contains("\nExec=\(chime) run\n"), "\(text)")
        #expect(text.contains("\nX-GNOME-Autostart-enabled=true\n") && text.contains("\nX-Chime-Service=true\n"), "\(text)")
        let validated = try await runProgram("/usr/bin/desktop-file-validate", [entry], environment: environment)
        #expect(validated.status == 0 && validated.stdout.isEmpty, "\(validated.stdout)\(validated.stderr)")

        // Enabling again rewrites Chime's own entry
        #expect(try await runChime(["service", "enable", "--via", "autostart"], environment: environment).status == 0)

        let status = try await runChime(["service", "status", "--json"], environment: environment)
        let report = try jsonObject(status.stdout)
        #expect(report["active"] as? [String] == ["autostart"], "\(status.stdout)")
        let autostart = try #require(report["autostart"] as? [String: Any])
        #expect(autostart["path"] as? String == entry && autostart["chimes"] as? Bool == true && autostart["enabled"] as? Bool == true)
        let runner = try #require(report["runner"] as? [String: Any])
        #expect(runner["running"] as? Bool == false && runner["store"] as? String == sandbox.store, "\(status.stdout)")
        let human = try await runChime(["service", "status"], environment: environment)
        #expect(human.stdout.contains("Autostart entry:  \(entry) (Chime's, on)"), "\(human.stdout)")
        let doctor = try await runChime(["doctor", "--json"], environment: environment)
        let login = try #require(try jsonObject(doctor.stdout)["start_at_login"] as? [String: Any])
        #expect(
            login["active"] as? [String] == ["autostart"] && login["summary"] as? String == "autostart entry \(entry)",
            "\(doctor.stdout)"
        )

        let disabled = try await runChime(["service", "disable"], environment: environment)
        #expect(disabled.status == 0, "\(disabled.stderr)")
        #expect(!FileManager.default.fileExists(atPath: entry))
        let doctorAfter = try await runChime(["doctor"], environment: environment)
        #expect(doctorAfter.stdout.contains("Start at login:       not set up: 'chime service enable' sets it up"), "\(doctorAfter.stdout)")
    }

    @Test(
        "A person's own autostart file of that name is refused (exit 4, named) and left byte for byte",
        arguments: [
            ["service", "enable"], ["service", "enable", "--via", "autostart"], ["service", "disable"], ["service", "disable", "--json"],
        ]
    )
    func ownEntryUntouched(_ arguments: [String]) async throws {
        let sandbox = try Sandbox()
        let environment = sandbox.environment
        let directory = try #require(environment["XDG_CONFIG_HOME"]) + "/autostart"
        let entry = directory + "/chime-runner.desktop"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let own = Data("[Desktop Entry]\nType=Application\nName=My runner\nExec=chime run --notifier console\n# mine\n".utf8)
        try own.write(to: URL(fileURLWithPath: entry))
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: entry)

        let result = try await runChime(arguments, environment: environment)

        #expect(result.status == 4, "\(result.stdout)\(result.stderr)")
        #expect(result.stderr.contains("'\(entry)' is not Chime's"), "\(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
        if arguments.contains("--json") {
            let error = try #require(try jsonObject(result.stdout)["error"] as? [String: Any])
            #expect(error["code"] as? String == "conflict")
        }
        #expect(FileManager.default.contents(atPath: entry) == own)
        let attributes = try FileManager.default.attributesOfItem(atPath: entry)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["chime-runner.desktop"])
    }

    @Test("A bad --via names the value (exit 64)")
    func badVia() async throws {
        let sandbox = try Sandbox()
        let result = try await runChime(["service", "enable", "--via", "cron"], environment: sandbox.environment)
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.contains("cron"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: try #require(sandbox.environment["XDG_CONFIG_HOME"]) + "/autostart"))
    }

    // MARK: - Helpers

    /// The socket files in `directory`.
    static func sockets(in directory: String) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.map { directory + "/" + $0 }.filter { path in
            var info = stat()
            return lstat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFSOCK
        }
    }

    /// Waits (polling, off the blocking path) for `process` to exit; nil after `timeout` seconds.
    static func exitStatus(of process: Process, timeout: Double) async -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { try? await Task.sleep(for: .milliseconds(20)) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            return nil
        }
        return process.terminationStatus
    }
}

/// Runs this build's `chime` to its end without blocking a thread of Swift's pool.
func runChime(_ arguments: [String], environment: [String: String]) async throws -> (status: Int32, stdout: String, stderr: String) {
    try await runProgram(ChimeExecutable.url.path, arguments, environment: environment)
}

/// Runs `executable` to its end, its output in files, polled with `Task.sleep` (a blocking
/// wait would starve the tests beside it); killed by its pid after 60 s.
func runProgram(
    _ executable: String,
    _ arguments: [String],
    environment: [String: String]
) async throws -> (
    status: Int32, stdout: String, stderr: String
) {
    let outputs = FileManager.default.temporaryDirectory.appendingPathComponent("chime-run-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: outputs, withIntermediateDirectories: false)
    defer { try? FileManager.default.removeItem(at: outputs) }
    let out = outputs.appendingPathComponent("out").path
    let err = outputs.appendingPathComponent("err").path
    let pid = try Spawn.start(executable, arguments, environment: environment, output: out, errors: err).get()
    let deadline = Date().addingTimeInterval(60)
    var status: Int32 = 0
    while true {
        let reaped = waitpid(pid, &status, WNOHANG)
        if reaped == pid { break }
        if reaped < 0 && errno != EINTR { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .ECHILD) }
        if Date() > deadline { kill(pid, SIGKILL) }
        try await Task.sleep(for: .milliseconds(10))
    }
    let exit = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    let stdout = (try? String(contentsOfFile: out, encoding: .utf8)) ?? ""
    let stderr = (try? String(contentsOfFile: err, encoding: .utf8)) ?? ""
    return (exit, stdout, stderr)
}

/// A datagram socket bound at a path, as a service manager binds `$NOTIFY_SOCKET`.
final class NotifySocket: Sendable {
    let fd: Int32
    let path: String

    init(path: String) throws {
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        let bound = Self.withAddress(path) { bind(fd, $0, $1) }
        guard bound == 0 else {
            close(fd)
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
        self.fd = fd
        self.path = path
    }

    /// The datagram waiting now, if any.
    func receive() -> String? {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = recv(fd, &buffer, buffer.count, 0)
        return count >= 0 ? String(decoding: buffer[0..<count], as: UTF8.self) : nil
    }

    /// The next datagram, polled every 5 ms; nil after `timeout` seconds.
    func next(timeout: Double) async -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let text = receive() { return text }
            if Date() >= deadline { return nil }
            try? await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Sends `text` to the datagram socket at `path`; true when it was taken.
    static func send(_ text: String, to path: String) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        let bytes = Array(text.utf8)
        return withAddress(path) { sendto(fd, bytes, bytes.count, Int32(MSG_DONTWAIT), $0, $1) } == bytes.count
    }

    private static func withAddress<T>(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> T) -> T {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8) + [0]) }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
    }

    deinit {
        close(fd)
        unlink(path)
    }
}

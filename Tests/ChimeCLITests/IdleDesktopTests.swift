import ChimeDBus
import ChimeFocus
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A stand-in idle service (`Fixtures/idle-service.py`, Python with PyGObject) on a test's
/// private bus, speaking one of the interfaces Chime reads idleness from; the test speaks for
/// the person through its standard input ("idle SECONDS", "active"). Stopped by its pid.
final class IdleStandIn {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/idle-service.py").path

    let pid: pid_t
    let log: URL
    let control: URL
    private var stopped = false

    /// Starts `kind` ("mutter", "screensaver", "logind") on the bus of `environment`, and
    /// returns once it owns its name.
    init(_ kind: String, environment: [String: String], directory: URL) throws {
        log = directory.appendingPathComponent("idle-\(kind).log")
        control = directory.appendingPathComponent("idle-\(kind).fifo")
        guard mkfifo(control.path, 0o600) == 0 else { throw POSIXError(.EEXIST) }
        pid = try Spawn.start("/usr/bin/python3", [Self.script, kind, control.path], environment: environment, output: log.path).get()
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline, !calls.contains("ready") { usleep(20_000) }
        guard calls.contains("ready") else {
            stop()
            throw NotificationServer.ServerError(message: "the \(kind) stand-in did not start: \(calls)")
        }
    }

    /// What it printed: "ready", then a line per call it answered.
    var calls: String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }

    /// Speaks for the person ("idle 120", "active"); returns once the stand-in has acted.
    func say(_ line: String) async {
        let before = calls.components(separatedBy: "done \(line)\n").count
        let fd = open(control.path, O_WRONLY | O_NONBLOCK)
        if fd >= 0 {
            _ = (line + "\n").withCString { write(fd, $0, strlen($0)) }
            close(fd)
        }
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline, calls.components(separatedBy: "done \(line)\n").count == before {
            try? await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Waits (bounded) until its log satisfies `predicate`.
    func waitForCalls(timeout: Double = 10, _ predicate: (String) -> Bool) async -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if predicate(calls) { return true }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return predicate(calls)
    }

    /// Stops it by its pid.
    func stop() {
        guard !stopped else { return }
        stopped = true
        kill(pid, SIGKILL)
        _ = Spawn.wait(pid)
    }

    deinit { stop() }
}

extension DesktopTests {
    /// The focus session as `chime focus status --json` gives it.
    func idleSession(in sandbox: borrowing Sandbox) throws -> [String: Any] {
        let status = try jsonObject(try sandbox.chime("focus", "status", "--json").stdout)
        return try #require(status["session"] as? [String: Any])
    }

    /// Waits (bounded) until the session's state is `state`.
    func waitForSession(_ state: String, in sandbox: borrowing Sandbox, timeout: Double = 15) async throws -> [String: Any] {
        let deadline = Date().addingTimeInterval(timeout)
        var session = try idleSession(in: sandbox)
        while Date() < deadline, session["state"] as? String != state {
            try await Task.sleep(for: .milliseconds(100))
            session = try idleSession(in: sandbox)
        }
        return session
    }

    /// What `chime doctor` says of the idle source, in text and in JSON.
    func doctorIdle(_ sandbox: borrowing Sandbox) throws -> (line: String?, json: String?) {
        let text = try sandbox.chime("doctor")
        let json = try jsonObject(try sandbox.chime("doctor", "--json").stdout)
        let line = text.stdout.split(separator: "\n").first { $0.hasPrefix("Idle:") }
            .map { $0.dropFirst("Idle:".count).trimmingCharacters(in: .whitespaces) }
        return (line, json["idle"] as? String)
    }

    /// Whether the monitor log has the alert "Paused while you were away N min: resume?" with N
    /// in `minutes` (the time away as the test's steps took it, on a loaded machine too).
    static func asksAway(_ log: String, minutes: ClosedRange<Int>) -> Bool {
        minutes.contains { log.contains(#"string "Paused while you were away \#($0) min: resume?""#) }
    }

    /// The runner's `Focus` property (ChimeDBus), as `gdbus` prints it.
    func focusProperty(_ server: NotificationServer) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/gdbus")
        process.arguments = [
            "call", "--session", "--timeout", "5", "--dest", ChimeBus.name, "--object-path", ChimeBus.objectPath, "--method",
            "org.freedesktop.DBus.Properties.Get", ChimeBus.interface, "Focus",
        ]
        process.environment = server.environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    /// The sandbox on `server`'s bus, with a 1-minute idle_pause, the system bus (logind's) the
    /// same private bus.
    func idleSandbox(_ server: NotificationServer) throws -> Sandbox {
        var extra = server.environment
        extra["CHIME_FOCUS_IDLE_PAUSE"] = "1m"
        extra["CHIME_SYSTEM_BUS_ADDRESS"] = server.environment["DBUS_SESSION_BUS_ADDRESS"]
        return try Sandbox(extra: extra)
    }

    @Test("Mutter's IdleMonitor: idle during a session pauses it back to when idleness began; back, the alert asks, and Resume resumes")
    func idleMutterPausesAndAsksOnReturn() async throws {
        let server = try NotificationServer()
        defer { server.stop() }
        let sandbox = try idleSandbox(server)
        // No idle service on the bus: doctor says none.
        let none = try doctorIdle(sandbox)
        #expect(none.line == "none: focus sessions will not pause when you are away")
        #expect(none.json == none.line)

        let choice = server.directory.appendingPathComponent("choice")
        try "Resume\n".write(to: choice, atomically: true, encoding: .utf8)
        let dunst = try startDunstChoosing(server, from: choice)
        defer {
            kill(dunst, SIGKILL)
            _ = NotificationServer.wait(dunst)
        }
        let mutter = try IdleStandIn("mutter", environment: server.environment, directory: server.directory)
        defer { mutter.stop() }
        let doctor = try doctorIdle(sandbox)
        #expect(doctor.line == "GNOME Mutter IdleMonitor")
        #expect(doctor.json == "GNOME Mutter IdleMonitor")

        // A 10-minute session 5 minutes in; the runner watches for a minute of idleness.
        _ = try startSession(in: sandbox, endingIn: 300)
        let runner = try sandbox.startRunner("--notifier", "desktop")
        defer { if runner.process.isRunning { runner.crash() } }
        #expect(await runner.waitUntilStarted(), "\(runner.stderr)")
        #expect(await mutter.waitForCalls { $0.contains("call AddIdleWatch 60000") }, "\(mutter.calls) \(runner.stderr)")
        #expect(runner.stderr.contains("Idle source: GNOME Mutter IdleMonitor"), "\(runner.stderr)")

        // Idle for 2 minutes: paused 2 minutes back (7:00 left, not 5:00), recorded as for idleness.
        await mutter.say("idle 120")
        let paused = try await waitForSession("paused", in: sandbox)
        #expect(paused["state"] as? String == "paused", "\(paused) \(runner.stderr)")
        #expect(paused["paused_for"] as? String == "idle")
        #expect(paused["idle_pauses"] as? Int == 1)
        let left = try #require(paused["remaining_s"] as? Int)
        #expect((360...420).contains(left), "\(left): without the backdating at most 300")
        #expect(await mutter.waitForCalls { $0.contains("call AddUserActiveWatch") }, "\(mutter.calls)")
        #expect(await server.waitForLog { $0.contains(#"string "Paused: 0"#) }, "\(runner.stderr)")

        // Back: the live alert asks, on the real server, with Resume and Give up.
        await mutter.say("active")
        #expect(
            await server.waitForLog { Self.asksAway($0, minutes: 2...3) },
            "\(server.monitorLog) \(runner.stderr)"
        )
        let asked = try #require(server.monitorLog.components(separatedBy: "member=Notify\n").last)
        for expected in [#"string "resume""#, #"string "Resume""#, #"string "give-up""#, #"string "Give up""#] {
            #expect(asked.contains(expected), "\(expected) not in \(asked)")
        }
        // Resume, chosen in dunst's menu as a person would.
        try server.dunstctl("context")
        #expect(await server.waitForLog { $0.contains(#"string "resume""#) && $0.contains("member=ActionInvoked") })
        let resumed = try await waitForSession("active", in: sandbox)
        #expect(resumed["state"] as? String == "active", "\(resumed) \(runner.stderr)")
        #expect(resumed["paused_for"] == nil)
        #expect(await runner.terminate() == 0)
    }

    @Test("org.freedesktop.ScreenSaver, polled while a session runs: idle pauses the session backdated; doctor names it")
    func idleScreenSaverPausesBackdated() async throws {
        let server = try NotificationServer()
        defer { server.stop() }
        let sandbox = try idleSandbox(server)
        let saver = try IdleStandIn("screensaver", environment: server.environment, directory: server.directory)
        defer { saver.stop() }
        let doctor = try doctorIdle(sandbox)
        #expect(doctor.line == "org.freedesktop.ScreenSaver")
        #expect(doctor.json == "org.freedesktop.ScreenSaver")

        // Idle 55 s already: the first poll (at the session's start) sees 55 s and looks again
        // when it could reach the minute, 5 s later.
        await saver.say("idle 55")
        _ = try startSession(in: sandbox, endingIn: 300)
        let runner = try sandbox.startRunner("--notifier", "desktop")
        defer { if runner.process.isRunning { runner.crash() } }
        #expect(await runner.waitUntilStarted(), "\(runner.stderr)")
        let paused = try await waitForSession("paused", in: sandbox)
        #expect(paused["state"] as? String == "paused", "\(paused) \(saver.calls) \(runner.stderr)")
        #expect(paused["paused_for"] as? String == "idle")
        // 5 minutes in plus the few seconds until the poll, less the minute idle.
        let left = try #require(paused["remaining_s"] as? Int)
        #expect((310...360).contains(left), "\(left): without the backdating at most 300")
        // Coarse: two or three polls so far, not one a second.
        let polls = saver.calls.components(separatedBy: "call GetSessionIdleTime").count - 1
        #expect(polls <= 6, "\(saver.calls)")
        await saver.say("active")
        #expect(
            await server.waitForLog(timeout: 15) { Self.asksAway($0, minutes: 1...2) },
            "\(runner.stderr)"
        )
        #expect(await runner.terminate() == 0)
    }

    @Test("logind's IdleHint on a private system bus: idle pauses the session backdated; doctor names it")
    func idleLogindPausesBackdated() async throws {
        let server = try NotificationServer()
        defer { server.stop() }
        let sandbox = try idleSandbox(server)
        let logind = try IdleStandIn("logind", environment: server.environment, directory: server.directory)
        defer { logind.stop() }
        let doctor = try doctorIdle(sandbox)
        #expect(doctor.line == "logind IdleHint")
        #expect(doctor.json == "logind IdleHint")
        // Outside any session ("auto" refused, as for a systemd user service): the user's display session.
        #expect(logind.calls.contains("call GetUser"), "\(logind.calls)")

        _ = try startSession(in: sandbox, endingIn: 300)
        let runner = try sandbox.startRunner("--notifier", "desktop")
        defer { if runner.process.isRunning { runner.crash() } }
        #expect(await runner.waitUntilStarted(), "\(runner.stderr)")
        #expect(await logind.waitForCalls { $0.contains("call Get IdleHint") }, "\(logind.calls) \(runner.stderr)")
        await logind.say("idle 120")
        let paused = try await waitForSession("paused", in: sandbox)
        #expect(paused["state"] as? String == "paused", "\(paused) \(logind.calls) \(runner.stderr)")
        let left = try #require(paused["remaining_s"] as? Int)
        #expect((360...420).contains(left), "\(left): without the backdating at most 300")
        // The D-Bus service's Focus property says why it is paused.
        var property = try focusProperty(server)
        for _ in 0..<50 where !property.contains("'paused_for': <'idle'>") {
            try await Task.sleep(for: .milliseconds(100))
            property = try focusProperty(server)
        }
        #expect(property.contains("'paused_for': <'idle'>"), "\(property)")
        await logind.say("active")
        #expect(await server.waitForLog { Self.asksAway($0, minutes: 2...3) }, "\(runner.stderr)")
        #expect(await runner.terminate() == 0)
    }
}

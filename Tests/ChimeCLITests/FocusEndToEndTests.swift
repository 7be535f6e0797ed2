import ChimeCore
import ChimeFocus
import ChimeStore
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Focus sessions with the real `chime` executable and runner, on a real SQLite file. A session
/// lasts at least 10 minutes and has no test-only override, so a session that ends within
/// seconds is started by this process through the library, with a clock shifted into the past:
/// it writes exactly the rows `chime focus start` would, as if started minutes ago.
@Suite("End to end: focus sessions", .serialized)
struct FocusEndToEndTests {
    @Test("The runner fires Tree planted! at the end and the session completes")
    func runnerFiresAtTheEnd() async throws {
        let sandbox = try Sandbox()
        let runner = try sandbox.startRunner("--notifier", "json")
        #expect(await runner.waitUntilStarted(), "runner did not start: \(runner.stderr)")

        // Given a session that ends 2.5 s from now
        let started = try startSession(in: sandbox, endingIn: 2.5)
        let alertID = "focus-\(started.id)"
        // (The library does not poke the runner: a pause and a resume through the CLI do, and
        // move the alert to the end the remaining time gives.)
        let paused = try sandbox.chime("focus", "pause")
        #expect(paused.status == 0, "\(paused.stderr)")
        let resumed = try sandbox.chime("focus", "resume", "--json")
        #expect(resumed.status == 0, "\(resumed.stderr)")
        let active = try session(of: resumed)
        #expect(active["state"] as? String == "active")
        #expect(try jsonObject(resumed.stdout)["runner"] as? Bool == true)
        let remaining = try #require(active["remaining_s"] as? Int)
        #expect((1...3).contains(remaining), "remaining_s \(remaining)")
        let pending = try pendingReminders(in: sandbox)
        let alert = try #require(pending.first { $0["id"] as? String == alertID }, "no \(alertID) in \(pending)")
        #expect(alert["title"] as? String == "Tree planted!")
        #expect(alert["body"] as? String == "Great focus session! Break: 5 min.")
        #expect(alert["kind"] as? String == "focus")

        // Then the runner prints the alert within a second of the end
        let line = try #require(await runner.nextLine(timeout: 6), "no alert: \(runner.stderr)")
        let fired = try jsonObject(line)
        #expect(fired["event"] as? String == "reminder")
        #expect(fired["id"] as? String == alertID)
        #expect(fired["title"] as? String == "Tree planted!")
        #expect(fired["body"] as? String == "Great focus session! Break: 5 min.")
        let lateMs = try #require(fired["late_ms"] as? Double)
        #expect(lateMs < 1000, "fired \(lateMs) ms late")

        // And the session is completed, its tree grown and in the forest and the stats
        let status = try sandbox.chime("focus", "status", "--json")
        #expect(status.status == 0, "\(status.stderr)")
        let completed = try session(of: status)
        #expect(completed["id"] as? Int == Int(started.id))
        #expect(completed["state"] as? String == "completed")
        #expect(completed["stage"] as? Int == 5)
        #expect(completed["remaining_s"] as? Int == 0)
        #expect(completed["focus_s"] as? Int == 600)
        #expect(completed["ended"] as? String != nil)
        #expect(try jsonObject(status.stdout)["running"] as? Bool == false)

        let forest = try sandbox.chime("forest", "--json")
        #expect(forest.status == 0, "\(forest.stderr)")
        let listing = try jsonObject(forest.stdout)
        #expect(listing["count"] as? Int == 1)
        let trees = try #require(listing["trees"] as? [[String: Any]])
        #expect(trees.map { $0["id"] as? Int } == [Int(started.id)])

        let stats = try sandbox.chime("stats", "--json")
        #expect(stats.status == 0, "\(stats.stderr)")
        let numbers = try jsonObject(stats.stdout)
        #expect(numbers["total_trees"] as? Int == 1)
        #expect(numbers["current_streak"] as? Int == 1)
        #expect(numbers["abandoned"] as? Int == 0)

        // And the alert is not shown twice, nor left pending: only the break's end is
        let extra = await runner.nextLine(timeout: 2)
        #expect(extra == nil, "unexpected alert: \(extra ?? "")")
        #expect(try pendingReminders(in: sandbox).map { $0["id"] as? String } == ["focus-break-1"])
        #expect(await runner.terminate() == 0)
    }

    @Test("Pause cancels the alert, give-up kills the tree")
    func pauseAndGiveUp() async throws {
        let sandbox = try Sandbox()
        let runner = try sandbox.startRunner("--notifier", "json")
        #expect(await runner.waitUntilStarted(), "runner did not start: \(runner.stderr)")

        // Given a session that ends 2.5 s from now, its alert known to the runner
        let started = try startSession(in: sandbox, endingIn: 2.5)
        let alertID = "focus-\(started.id)"
        #expect(try sandbox.chime("focus", "pause").status == 0)
        #expect(try sandbox.chime("focus", "resume").status == 0)
        #expect(try pendingReminders(in: sandbox).contains { $0["id"] as? String == alertID })

        // When it is paused, its alert is cancelled and never shown
        let paused = try sandbox.chime("focus", "pause", "--json")
        #expect(paused.status == 0, "\(paused.stderr)")
        let pausedSession = try session(of: paused)
        #expect(pausedSession["state"] as? String == "paused")
        #expect(pausedSession["alert_due"] == nil)
        #expect(try !pendingReminders(in: sandbox).contains { $0["id"] as? String == alertID })
        let whilePaused = await runner.nextLine(timeout: 3)
        #expect(whilePaused == nil, "alert while paused: \(whilePaused ?? "")")

        // When it is resumed, the alert is back for the time that was left
        let resumed = try sandbox.chime("focus", "resume", "--json")
        #expect(resumed.status == 0, "\(resumed.stderr)")
        let active = try session(of: resumed)
        #expect(active["state"] as? String == "active")
        #expect(active["alert_due"] as? String != nil)
        let remaining = try #require(active["remaining_s"] as? Int)
        #expect((1...3).contains(remaining), "remaining_s \(remaining)")
        #expect(try pendingReminders(in: sandbox).contains { $0["id"] as? String == alertID })

        // Then give-up without --yes and without a terminal to ask on is refused, changing nothing
        let unconfirmed = try chimeWithoutTerminal(in: sandbox, "focus", "give-up")
        #expect(unconfirmed.status == 64, "\(unconfirmed.stderr)")
        #expect(unconfirmed.stderr.split(separator: "\n").count == 1, "\(unconfirmed.stderr)")
        #expect(unconfirmed.stderr.contains("--yes"))
        let still = try session(of: try sandbox.chime("focus", "status", "--json"))
        #expect(still["id"] as? Int == Int(started.id))
        #expect(still["state"] as? String == "active")

        // And give-up --yes abandons it
        let gaveUp = try sandbox.chime("focus", "give-up", "--yes", "--json")
        #expect(gaveUp.status == 0, "\(gaveUp.stderr)")
        let abandoned = try session(of: gaveUp)
        #expect(abandoned["state"] as? String == "abandoned")
        #expect(abandoned["end_reason"] as? String == "gave-up")
        #expect(abandoned["ended"] as? String != nil)
        #expect(try !pendingReminders(in: sandbox).contains { $0["id"] as? String == alertID })

        // And nothing is shown past the end it had, and the forest is still empty
        let afterEnd = await runner.nextLine(timeout: Double(remaining) + 0.75)
        #expect(afterEnd == nil, "alert after give-up: \(afterEnd ?? "")")
        let forest = try sandbox.chime("forest")
        #expect(forest.status == 0, "\(forest.stderr)")
        #expect(forest.stdout.contains("Plant your first tree"), "\(forest.stdout)")
        let stats = try jsonObject(try sandbox.chime("stats", "--json").stdout)
        #expect(stats["total_trees"] as? Int == 0)
        #expect(stats["abandoned"] as? Int == 1)
        #expect(await runner.terminate() == 0)
    }

    @Test("Refusals: a distinct exit status and one line naming what was wrong")
    func refusals() throws {
        let sandbox = try Sandbox()

        // With no session
        let pause = try sandbox.chime("focus", "pause")
        expectRefusal(pause, status: 3, naming: "no focus session to pause")
        let tooShort = try sandbox.chime("focus", "start", "--minutes", "5")
        expectRefusal(tooShort, status: 64, naming: "invalid --minutes '5'")
        let tooLong = try sandbox.chime("focus", "start", "--minutes", "121")
        expectRefusal(tooLong, status: 64, naming: "invalid --minutes '121'")
        let none = try jsonObject(try sandbox.chime("focus", "status", "--json").stdout)
        #expect(none["session"] == nil, "a refused start created a session: \(none)")
        expectRefusal(try sandbox.chime("forest", "show", "abc"), status: 64, naming: "abc")
        expectRefusal(try sandbox.chime("forest", "show", "999"), status: 3, naming: "999")

        // With a session running
        let started = try sandbox.chime("focus", "start", "--json")
        #expect(started.status == 0, "\(started.stderr)")
        let id = try #require(try session(of: started)["id"] as? Int)
        let second = try sandbox.chime("focus", "start")
        expectRefusal(second, status: 4, naming: "#\(id)")
        expectRefusal(try sandbox.chime("focus", "resume"), status: 4, naming: "#\(id)")
        expectRefusal(try sandbox.chime("forest", "show", "\(id)"), status: 3, naming: "#\(id)")
        let status = try session(of: try sandbox.chime("focus", "status", "--json"))
        #expect(status["id"] as? Int == id)
        #expect(status["state"] as? String == "active")
        #expect(status["length_s"] as? Int == 1500)
    }

    @Test("status --watch redraws until the end and Ctrl-C leaves the session alone")
    func watchAndInterrupt() async throws {
        let sandbox = try Sandbox()
        let started = try sandbox.chime("focus", "start", "--json")
        #expect(started.status == 0, "\(started.stderr)")
        let id = try #require(try session(of: started)["id"] as? Int)

        // Given `focus status --watch` with its output to a file, not a terminal
        let output = sandbox.directory.appendingPathComponent("watch.out").path
        let pid = try Spawn.start(
            ChimeExecutable.url.path,
            ["focus", "status", "--watch"],
            environment: sandbox.environment,
            output: output
        ).get()

        // Then it prints one plain line per second as the countdown changes
        let deadline = Date().addingTimeInterval(10)
        var countdown: [String] = []
        while Date() < deadline {
            countdown = lines(of: output).filter { $0.wholeMatch(of: #/\d{2}:\d{2} stage [1-5] active/#) != nil }
            if Set(countdown).count >= 2 { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(Set(countdown).count >= 2, "countdown lines: \(lines(of: output))")
        #expect(countdown.first?.hasPrefix("2") == true, "\(countdown)")
        #expect(!lines(of: output).joined().contains("\u{1B}"), "escape sequences in \(lines(of: output))")

        // When it gets SIGINT (Ctrl-C), it stops watching with status 0
        kill(pid, SIGINT)
        let exitStatus = await exitStatus(of: pid, within: 20)
        #expect(exitStatus == 0, "\(lines(of: output))")
        #expect(lines(of: output).last?.hasPrefix("Stopped watching") == true, "\(lines(of: output))")

        // And the session goes on
        let after = try session(of: try sandbox.chime("focus", "status", "--json"))
        #expect(after["id"] as? Int == id)
        #expect(after["state"] as? String == "active")
    }

    @Test("status --watch ends by itself when the session completes")
    func watchToCompletion() async throws {
        let sandbox = try Sandbox()
        let started = try startSession(in: sandbox, endingIn: 1.5)
        let output = sandbox.directory.appendingPathComponent("watch.out").path
        let pid = try Spawn.start(
            ChimeExecutable.url.path,
            ["focus", "status", "--watch"],
            environment: sandbox.environment,
            output: output
        ).get()
        let exitStatus = await exitStatus(of: pid, within: 20)
        #expect(exitStatus == 0, "\(lines(of: output))")
        let text = lines(of: output)
        #expect(text.first?.wholeMatch(of: #/00:0[1-2] stage 5 active/#) != nil, "\(text)")
        #expect(text.last?.contains("Tree planted!") == true, "\(text)")
        #expect(text.last?.contains("#\(started.id)") == true, "\(text)")
        let status = try session(of: try sandbox.chime("focus", "status", "--json"))
        #expect(status["state"] as? String == "completed")
    }
}

/// The system's clocks, `shift` microseconds in the past: a session started on it began that
/// long ago (on the wall clock and on the awake clock alike, in this boot).
struct ShiftedClock: MachineClock {
    let shift: Int64

    func now() -> MachineTime {
        var time = SystemMachineClock().now()
        time.wall = Date(timeIntervalSince1970: time.wall.timeIntervalSince1970 - Double(shift) / 1_000_000)
        time.awakeMicros -= shift
        return time
    }
}

/// Starts a 10-minute session in the sandbox's store, through the library, that ends
/// `seconds` from now.
func startSession(in sandbox: borrowing Sandbox, endingIn seconds: Double) throws -> FocusSession {
    let minutes = 10
    let shift = Int64((Double(minutes * 60) - seconds) * 1_000_000)
    let timer = FocusTimer(store: try ReminderStore(path: sandbox.store, schemas: chimeSchemas), clock: ShiftedClock(shift: shift))
    return try timer.start(minutes: minutes)
}

/// The `session` object of a focus command's `--json` output.
private func session(of result: (status: Int32, stdout: String, stderr: String)) throws -> [String: Any] {
    try #require(try jsonObject(result.stdout)["session"] as? [String: Any], "no session: \(result.stdout) \(result.stderr)")
}

/// The pending reminders, as `chime list --json` gives them.
private func pendingReminders(in sandbox: borrowing Sandbox) throws -> [[String: Any]] {
    let list = try sandbox.chime("list", "--json")
    #expect(list.status == 0, "\(list.stderr)")
    return try #require(try jsonObject(list.stdout)["reminders"] as? [[String: Any]])
}

/// Runs `chime` with standard input from /dev/null, so it has no terminal to ask on.
private func chimeWithoutTerminal(
    in sandbox: borrowing Sandbox,
    _ arguments: String...
) throws -> (status: Int32, stdout: String, stderr: String) {
    let (process, out, err) = ChimeExecutable.process(arguments, environment: sandbox.environment)
    process.standardInput = FileHandle.nullDevice
    try process.run()
    let stdout = out.fileHandleForReading.readDataToEndOfFile()
    let stderr = err.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: stdout, as: UTF8.self), String(decoding: stderr, as: UTF8.self))
}

/// Expects a refusal: `status`, nothing on standard output, one line on standard error containing `text`.
private func expectRefusal(
    _ result: (status: Int32, stdout: String, stderr: String),
    status: Int32,
    naming text: String,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(result.status == status, "\(result.stderr)", sourceLocation: sourceLocation)
    #expect(result.stdout.isEmpty, "\(result.stdout)", sourceLocation: sourceLocation)
    #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)", sourceLocation: sourceLocation)
    #expect(result.stderr.contains(text), "\(result.stderr)", sourceLocation: sourceLocation)
}

/// The complete lines written to the file at `path` so far.
private func lines(of path: String) -> [String] {
    guard let data = FileManager.default.contents(atPath: path) else { return [] }
    var text = String(decoding: data, as: UTF8.self)
    if let newline = text.lastIndex(of: "\n") {
        text = String(text[..<newline])
    } else {
        return []
    }
    return text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
}

/// The exit status of the spawned `pid` (128 + the signal when a signal ended it), or nil when
/// it did not exit within `timeout` seconds (it is then killed by its pid).
private func exitStatus(of pid: pid_t, within timeout: Double) async -> Int32? {
    // The deadline is generous: it is only reached when the process hangs, and under CI's load
    // a sleeping task can be woken seconds late. One last look is taken after it, so a late
    // wake-up never mistakes a process that ended for one that hangs.
    let deadline = Date().addingTimeInterval(timeout)
    var status: Int32 = 0
    while true {
        let expired = Date() >= deadline
        let reaped = waitpid(pid, &status, WNOHANG)
        if reaped == pid { return (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f) }
        if reaped < 0 && errno != EINTR { return nil }
        if expired { break }
        try? await Task.sleep(for: .milliseconds(10))
    }
    kill(pid, SIGKILL)
    _ = Spawn.wait(pid)
    return nil
}

import ChimeCore
import ChimeFocus
import ChimeStore
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The `[hooks]` of the config file with the real `chime run`: a family's event (a focus session
/// started, completed, given up; a dose taken) runs its hook once, with the event's variables,
/// and the ledger records how it ended. Events recorded while no runner runs wait for one.
@Suite("End to end: hooks on the families' events", .serialized)
struct HooksEndToEndTests {
    /// Writes the sandbox's config file.
    static func writeConfig(_ text: String, in sandbox: borrowing Sandbox) throws {
        let result = try sandbox.chime("config", "path")
        let path = result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    }

    /// The lines of `path` once there are `count` (waiting up to `timeout` seconds).
    static func lines(_ path: String, count: Int, timeout: Double = 10) async throws -> [String] {
        let deadline = Date().addingTimeInterval(timeout)
        var lines: [String] = []
        while Date() < deadline {
            lines = ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
            if lines.count >= count { return lines }
            try await Task.sleep(for: .milliseconds(100))
        }
        return lines
    }

    @Test("Focus started, completed and given up run their hooks once each, with CHIME_EVENT, CHIME_ID and the session's details")
    func focusHooks() async throws {
        let sandbox = try Sandbox()
        let out = sandbox.directory.appendingPathComponent("hooks.txt").path
        let script = #"printf '%s|%s|%s|%s\n' "$CHIME_EVENT" "$CHIME_ID" "$CHIME_FOCUS_MINUTES" "$CHIME_TITLE" >> "$1""#
        try Self.writeConfig(
            """
            [hooks]
            focus_started = ["/bin/sh", "-c", \(jsonString(script)), "sh", \(jsonString(out))]
            focus_completed = { argv = ["/bin/sh", "-c", \(jsonString(script)), "sh", \(jsonString(out))], timeout = "30s" }
            focus_given_up = { shell = \(jsonString("echo \"$CHIME_EVENT|$CHIME_ID|$CHIME_FOCUS_SECONDS\" >> '\(out)'")) }

            """,
            in: sandbox
        )
        // Given a session started and given up while no runner runs
        let started = try sandbox.chime("focus", "start", "--minutes", "10")
        #expect(started.status == 0, "\(started.stderr)")
        let gaveUp = try sandbox.chime("focus", "give-up", "--yes")
        #expect(gaveUp.status == 0, "\(gaveUp.stderr)")
        #expect(try await Self.lines(out, count: 1, timeout: 0.5).isEmpty)

        // When the runner starts, their hooks run, in order
        let runner = try sandbox.startRunner("--notifier", "json")
        #expect(await runner.waitUntilStarted(), "runner did not start: \(runner.stderr)")
        let first = try await Self.lines(out, count: 2)
        #expect(first.count == 2, "\(first) \(runner.stderr)")
        #expect(first.first == "focus.started|1|10|Focus session #1")
        #expect(first.last?.hasPrefix("focus.given_up|1|") == true, "\(first)")

        // And a session that ends while it runs (started by the library) runs focus_started, then focus_completed once
        let session = try startSession(in: sandbox, endingIn: 1.5)
        #expect(try sandbox.chime("focus", "pause").status == 0)
        #expect(try sandbox.chime("focus", "resume").status == 0)
        let all = try await Self.lines(out, count: 4)
        #expect(all.count == 4, "\(all) \(runner.stderr)")
        #expect(all[2] == "focus.started|\(session.id)|10|Focus session #\(session.id)")
        #expect(all.last == "focus.completed|\(session.id)|10|Focus session #\(session.id)")
        #expect(await runner.terminate() == 0)
        #expect(runner.stderr.contains("Hook ended"), "\(runner.stderr)")

        // Never again: not after a restart
        let again = try sandbox.startRunner("--notifier", "json")
        #expect(await again.waitUntilStarted(), "runner did not start: \(again.stderr)")
        try await Task.sleep(for: .seconds(1))
        #expect(await again.terminate() == 0)
        #expect(try await Self.lines(out, count: 5, timeout: 0.2).count == 4)
        let runs = try ReminderStore(path: sandbox.store, schemas: chimeSchemas).hookRuns()
        #expect(runs.map(\.run?.state) == [.exited, .exited, .exited, .exited], "\(runs)")
        #expect(runs.map(\.run?.exitStatus) == [0, 0, 0, 0])
    }

    @Test("A dose taken runs dose_taken once with CHIME_DOSE_MEDICATION; an event with no hook is dropped")
    func doseTakenHook() async throws {
        let sandbox = try Sandbox()
        let out = sandbox.directory.appendingPathComponent("doses.txt").path
        try Self.writeConfig(
            """
            [hooks]
            dose_taken = ["/bin/sh", "-c", "echo \\"$CHIME_EVENT|$CHIME_DOSE_MEDICATION|$CHIME_TITLE\\" >> \\"$1\\"", "sh", \(jsonString(out))]

            """,
            in: sandbox
        )
        let runner = try sandbox.startRunner("--notifier", "json")
        #expect(await runner.waitUntilStarted(), "runner did not start: \(runner.stderr)")
        #expect(try sandbox.chime("med", "add", "Ibuprofen", "--amount", "400", "--unit", "mg", "--as-needed").status == 0)
        let taken = try sandbox.chime("dose", "take", "Ibuprofen")
        #expect(taken.status == 0, "\(taken.stderr)")
        let lines = try await Self.lines(out, count: 1)
        #expect(lines == ["dose.taken|Ibuprofen|Ibuprofen 400 mg"], "\(runner.stderr)")
        // A focus session started (no focus hook) leaves no row behind
        #expect(try sandbox.chime("focus", "start").status == 0)
        try await Task.sleep(for: .seconds(1))
        #expect(await runner.terminate() == 0)
        let runs = try ReminderStore(path: sandbox.store, schemas: chimeSchemas).hookRuns()
        #expect(runs.map(\.event.name) == ["dose.taken"], "\(runs)")
        #expect(try await Self.lines(out, count: 2, timeout: 0.2).count == 1)
    }

    /// `chime history --json`'s hook runs once `count` have ended and `running` run (waiting up
    /// to `timeout` seconds).
    static func hookRuns(_ sandbox: borrowing Sandbox, count: Int, running: Int = 0, timeout: Double = 10) async throws -> [[String: Any]] {
        let deadline = Date().addingTimeInterval(timeout)
        var hooks: [[String: Any]] = []
        while Date() < deadline {
            let history = try sandbox.chime("history", "--json")
            let alerts = (try? jsonObject(history.stdout)["alerts"] as? [[String: Any]]) ?? []
            hooks = alerts.filter { $0["kind"] as? String == "hook" }
            let runs = hooks.compactMap { $0["command"] as? [String: Any] }
            let ended = runs.filter { $0["state"] as? String != "running" }.count
            // A running hook once its process id is recorded (just after it is recorded as running).
            let started = runs.filter { $0["state"] as? String == "running" && $0["pid"] is Int }.count
            if ended >= count, started >= running { return hooks }
            try await Task.sleep(for: .milliseconds(100))
        }
        return hooks
    }

    @Test("Gate Exit and Proceed on the terminal gate run gate_exit and gate_proceed once each; history shows how they ended")
    func gateHooks() async throws {
        let sandbox = try Sandbox()
        let out = sandbox.directory.appendingPathComponent("gate-hooks.txt").path
        let script =
            #"printf '%s|%s|%s|%s|%s\n' "$CHIME_EVENT" "$CHIME_ID" "$CHIME_GATE_PROGRAM" "$CHIME_TITLE" "$CHIME_GATE_PAUSE_SECONDS" >> "$1"; echo "hook for $CHIME_EVENT""#
        try Self.writeConfig(
            """
            [hooks]
            gate_exit = ["/bin/sh", "-c", \(jsonString(script)), "sh", \(jsonString(out))]
            gate_proceed = { shell = \(jsonString("echo \"$CHIME_EVENT|$CHIME_ID|$CHIME_GATE_PROGRAM\" >> '\(out)'; echo proceeded; exit 2")) }

            """,
            in: sandbox
        )
        #expect(try sandbox.chime("gate", "setup", "--pause", "1s").status == 0)
        let runner = try sandbox.startRunner("--notifier", "json")
        #expect(await runner.waitUntilStarted(), "runner did not start: \(runner.stderr)")

        // When the gate is answered Exit
        let record = sandbox.directory.appendingPathComponent("started.txt").path
        let exit = try GateTerminalTests.Terminal(sandbox: sandbox, record: record, arguments: [])
        #expect(await exit.shows("Exit to Focus"), "\(exit.screen.withLock { $0 })")
        exit.type("e")
        #expect(await exit.finish() == 0)
        #expect(!FileManager.default.fileExists(atPath: record))
        let afterExit = try await Self.lines(out, count: 1)
        #expect(afterExit.count == 1, "\(runner.stderr)")
        #expect(afterExit.first?.hasPrefix("gate.exit|1|sh|sh|") == true, "\(afterExit)")

        // And then Proceed, after the pause
        let proceed = try GateTerminalTests.Terminal(sandbox: sandbox, record: record, arguments: ["go"])
        #expect(await proceed.shows("Exit to Focus"))
        let deadline = Date().addingTimeInterval(20)
        while !FileManager.default.fileExists(atPath: record), Date() < deadline {
            proceed.type("p")
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(await proceed.finish() == 0)
        let both = try await Self.lines(out, count: 2)
        #expect(both.count == 2, "\(runner.stderr)")
        #expect(both.last == "gate.proceed|2|sh", "\(both)")

        // Then history lists both runs, with how each ended and its output
        let hooks = try await Self.hookRuns(sandbox, count: 2)
        #expect(hooks.map { $0["title"] as? String } == ["gate.exit", "gate.proceed"], "\(hooks)")
        #expect(hooks.map { $0["id"] as? String } == ["1", "2"])
        #expect(hooks.map { $0["detail"] as? String } == ["sh", "sh"])
        #expect(hooks.map { $0["via"] as? String } == ["hook", "hook"])
        #expect(hooks.map { $0["result"] as? String } == ["exit 0", "exit 2"])
        let runs = hooks.compactMap { $0["command"] as? [String: Any] }
        #expect(runs.map { $0["output"] as? String } == ["hook for gate.exit", "proceeded"])
        #expect(runs.map { $0["exit_status"] as? Int } == [0, 2])
        let commands = hooks.compactMap { ($0["hook"] as? [String: Any])?["command"] as? [String: Any] }
        #expect((commands.first?["argv"] as? [String])?.first == "/bin/sh")
        #expect(commands.last?["shell"] is String)
        #expect(hooks.compactMap { ($0["hook"] as? [String: Any])?["event"] as? String } == ["gate.exit", "gate.proceed"])
        let text = try sandbox.chime("history").stdout
        #expect(text.contains("  hook  exit 0  1   [hook] gate.exit: sh\n  command: /bin/sh -c "), "\(text)")
        #expect(text.contains(": exit 0\n    | hook for gate.exit\n"), "\(text)")
        #expect(text.contains("exit 2  2   [hook] gate.proceed: sh\n  command: echo "), "\(text)")
        #expect(text.contains(" (sh): exit 2\n    | proceeded\n"), "\(text)")

        // Never again: not after a restart
        #expect(await runner.terminate() == 0)
        let again = try sandbox.startRunner("--notifier", "json")
        #expect(await again.waitUntilStarted(), "runner did not start: \(again.stderr)")
        try await Task.sleep(for: .seconds(1))
        #expect(await again.terminate() == 0)
        #expect(try await Self.lines(out, count: 3, timeout: 0.2).count == 2)
    }

    @Test("History lists the hooks' runs among the alerts: an exit status and output, and a runner killed mid-run as interrupted, run once")
    func hookRunsInHistory() async throws {
        let sandbox = try Sandbox()
        let out = sandbox.directory.appendingPathComponent("runs.txt").path
        try Self.writeConfig(
            """
            [hooks]
            focus_started = { shell = \(jsonString("echo \"started $CHIME_ID\" >> '\(out)'; echo first; exec sleep 30")) }
            focus_given_up = ["/bin/sh", "-c", "echo \\"gave up $CHIME_ID\\" >> \\"$1\\"; echo one; echo two; exit 4", "sh", \(jsonString(out))]

            """,
            in: sandbox
        )
        let runner = try sandbox.startRunner("--notifier", "json")
        #expect(await runner.waitUntilStarted(), "runner did not start: \(runner.stderr)")
        #expect(try sandbox.chime("in", "1s", "Tea", "--id", "tea").status == 0)
        #expect(try sandbox.chime("focus", "start", "--minutes", "10").status == 0)
        let running = try await Self.hookRuns(sandbox, count: 0, running: 1)
        let pid = try #require((running.first?["command"] as? [String: Any])?["pid"] as? Int, "\(running) \(runner.stderr)")
        defer { kill(-pid_t(pid), SIGKILL) }
        #expect(running.first?["result"] as? String == "running")

        // When the runner is killed while the hook runs, and the session is given up
        runner.crash()
        #expect(try sandbox.chime("focus", "give-up", "--yes").status == 0)
        let restarted = try sandbox.startRunner("--notifier", "json")
        #expect(await restarted.waitUntilStarted(), "runner did not start: \(restarted.stderr)")
        let hooks = try await Self.hookRuns(sandbox, count: 2)
        #expect(hooks.map { $0["result"] as? String } == ["interrupted", "exit 4"], "\(hooks) \(restarted.stderr)")
        // Tea fires too, a second after it was scheduled: wait for it in the ledger
        var alerts: [[String: Any]] = []
        for _ in 0..<100 {
            alerts = try jsonObject(try sandbox.chime("history", "--json").stdout)["alerts"] as? [[String: Any]] ?? []
            if alerts.count == 3 { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(await restarted.terminate() == 0)

        // Then history has both runs among the alerts by time, the interrupted one said so, each once
        #expect(alerts.map { $0["title"] as? String }.contains("Tea"), "\(alerts)")
        let dues = alerts.compactMap { $0["due"] as? String }
        #expect(dues == dues.sorted(), "\(dues)")
        let runs = hooks.compactMap { $0["command"] as? [String: Any] }
        #expect(runs.first?["summary"] as? String == "interrupted (runner stopped while it ran)")
        #expect(runs.first?["output"] as? String == "")
        #expect(runs.last?["output"] as? String == "one\ntwo")
        let text = try sandbox.chime("history").stdout
        #expect(text.contains("[hook] focus.started: Focus session #1\n  command: echo "), "\(text)")
        #expect(text.contains(" (sh): interrupted (runner stopped while it ran)\n"), "\(text)")
        #expect(text.contains("[hook] focus.given_up: Focus session #1\n  command: /bin/sh -c "), "\(text)")
        #expect(text.contains(": exit 4\n    | one\n    | two\n"), "\(text)")
        #expect(try await Self.lines(out, count: 3, timeout: 0.5) == ["started 1", "gave up 1"])

        // A reminder's id: its alerts only; --limit counts the hooks' runs too
        let tea = try sandbox.chime("history", "tea").stdout
        #expect(!tea.contains("hook"), "\(tea)")
        let last = try jsonObject(try sandbox.chime("history", "--limit", "1", "--json").stdout)["alerts"] as? [[String: Any]]
        #expect(last?.count == 1)
    }

    @Test("A dose skipped, and one whose window passed, run dose_skipped and dose_missed once each; history shows them")
    func doseSkippedAndMissedHooks() async throws {
        let sandbox = try Sandbox()
        let out = sandbox.directory.appendingPathComponent("doses.txt").path
        let script = #"printf '%s|%s|%s|%s\n' "$CHIME_EVENT" "$CHIME_DOSE_MEDICATION" "$CHIME_TITLE" "$CHIME_DOSE_SCHEDULED" >> "$1""#
        try Self.writeConfig(
            """
            [hooks]
            dose_skipped = ["/bin/sh", "-c", \(jsonString(script)), "sh", \(jsonString(out))]
            dose_missed = ["/bin/sh", "-c", \(jsonString(script + "; echo missed $CHIME_ID")), "sh", \(jsonString(out))]

            """,
            in: sandbox
        )
        // Given a dose skipped while no runner runs, and one whose missed window has passed
        let aspirin = try addScheduled(in: sandbox, name: "Aspirin", at: "08:00")
        let skipped = try sandbox.chime("dose", "skip", aspirin, "--json")
        #expect(skipped.status == 0, "\(skipped.stderr)")
        let skippedID = try #require((try jsonObject(skipped.stdout)["dose"] as? [String: Any])?["id"] as? Int)
        let metformin = try addScheduled(in: sandbox, name: "Metformin", at: "09:00")
        try moveDose(metformin, to: Date().addingTimeInterval(-5 * 3_600), store: sandbox.store)

        // When the runner starts: it runs the skipped dose's hook, and the missed one's as it settles it
        let runner = try sandbox.startRunner("--notifier", "json")
        #expect(await runner.waitUntilStarted(), "runner did not start: \(runner.stderr)")
        let lines = try await Self.lines(out, count: 2)
        #expect(lines.count == 2, "\(lines) \(runner.stderr)")
        #expect(lines.first?.hasPrefix("dose.skipped|Aspirin|Aspirin 100 mg|") == true, "\(lines)")
        #expect(lines.last?.hasPrefix("dose.missed|Metformin|Metformin 100 mg|") == true, "\(lines)")
        let hooks = try await Self.hookRuns(sandbox, count: 2)
        #expect(await runner.terminate() == 0)
        #expect(hooks.map { $0["title"] as? String } == ["dose.skipped", "dose.missed"], "\(hooks)")
        #expect(hooks.first?["id"] as? String == String(skippedID))
        #expect(hooks.map { $0["detail"] as? String } == ["Aspirin 100 mg", "Metformin 100 mg"])
        #expect(hooks.map { $0["result"] as? String } == ["exit 0", "exit 0"])
        let missedID = try #require(hooks.last?["id"] as? String)
        #expect((hooks.last?["command"] as? [String: Any])?["output"] as? String == "missed \(missedID)")
        #expect(try await Self.lines(out, count: 3, timeout: 0.5).count == 2)
    }

    @Test("A bad hook stops every command with one line naming the key and the value, exit 78")
    func badHookRefused() throws {
        let sandbox = try Sandbox()
        for (text, shown) in [
            (#"focus_completed = ["no-such-program-xyz"]"#, #"["no-such-program-xyz"]"#),
            (#"dose_taken = "notify-send hi""#, #""notify-send hi""#),
            (#"dose_missed = { shell = "true", timeout = "5 years" }"#, "timeout"),
            (#"gate_exit = { argv = ["/bin/true"], shell = "true" }"#, "shell"),
        ] {
            try Self.writeConfig("[hooks]\n\(text)\n", in: sandbox)
            let result = try sandbox.chime("list")
            #expect(result.status == 78, "\(text): \(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
            #expect(result.stderr.contains("invalid hooks."), "\(result.stderr)")
            #expect(result.stderr.contains(shown), "\(result.stderr)")
        }
    }
}

/// `text` as a TOML (and JSON) basic string.
private func jsonString(_ text: String) -> String {
    let data = try! JSONSerialization.data(withJSONObject: [text], options: [.withoutEscapingSlashes])
    return String(String(decoding: data, as: UTF8.self).dropFirst().dropLast())
}

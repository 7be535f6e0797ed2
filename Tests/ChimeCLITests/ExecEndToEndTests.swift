import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `--exec` and `--exec-shell` with the real `chime run`: the command runs once when its
/// reminder fires, in its own process group, with a time limit, and a runner killed while it
/// runs reports it rather than running it again. Reminders are due 1 s ahead; the tests wait.
@Suite("End to end: commands run when reminders fire", .serialized)
struct ExecEndToEndTests {
    /// The run recorded for reminder `id`'s latest alert (`chime history ID --json`), once it
    /// is `until` (or any state but running), waiting up to `timeout`.
    static func run(_ sandbox: borrowing Sandbox, _ id: String, until: String? = nil, timeout: Double = 10) async throws -> [String: Any]? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let history = try sandbox.chime("history", id, "--json")
            if history.status == 0, let alerts = try jsonObject(history.stdout)["alerts"] as? [[String: Any]],
                let run = alerts.last?["command"] as? [String: Any], let state = run["state"] as? String,
                until.map({ $0 == state }) ?? (state != "running")
            {
                return run
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        return nil
    }

    static func lines(_ path: String) -> [String] {
        ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    @Test("An argv runs once, without a shell, with CHIME_ID, CHIME_TITLE, CHIME_DUE, in HOME; history shows its exit and output")
    func argvRunsOnceWithItsEnvironment() async throws {
        let sandbox = try Sandbox()
        let out = sandbox.directory.appendingPathComponent("ran.txt").path
        let scheduled = try sandbox.chime(
            "in",
            "1s",
            "Back up",
            "--id",
            "backup",
            "--json",
            "--exec",
            "/bin/sh",
            "-c",
            #"printf '%s|%s|%s|%s|%s\n' "$CHIME_ID" "$CHIME_TITLE" "$CHIME_DUE" "$PWD" "$1" >> "$2"; echo done; exit 3"#,
            "sh",
            "two words; $HOME",
            out
        )
        #expect(scheduled.status == 0, "\(scheduled.stderr)")
        let reminder = try #require(try jsonObject(scheduled.stdout)["reminder"] as? [String: Any])
        let command = try #require(reminder["command"] as? [String: Any])
        #expect((command["argv"] as? [String])?.first == "/bin/sh")
        #expect(command["timeout_s"] as? Int == 600)
        let due = try #require(reminder["next_due"] as? String)

        let runner = try sandbox.startRunner("--notifier", "json")
        #expect(await runner.waitUntilStarted(), "runner did not start: \(runner.stderr)")
        let run = try #require(await Self.run(sandbox, "backup"), "no run: \(runner.stderr)")
        #expect(run["state"] as? String == "exited")
        #expect(run["exit_status"] as? Int == 3)
        #expect(run["output"] as? String == "done")
        let home = sandbox.environment["HOME"] ?? "?"
        #expect(Self.lines(out) == ["backup|Back up|\(due)|\(home)|two words; $HOME"])
        let history = try sandbox.chime("history", "backup")
        #expect(history.stdout.contains("  command: exit 3\n    | done"), "\(history.stdout)")

        // Nothing runs again: not at the next pass, not after a restart
        try await Task.sleep(for: .seconds(1))
        #expect(await runner.terminate() == 0)
        let again = try sandbox.startRunner("--notifier", "json")
        #expect(await again.waitUntilStarted(), "runner did not start: \(again.stderr)")
        try await Task.sleep(for: .seconds(1))
        #expect(await again.terminate() == 0)
        #expect(Self.lines(out).count == 1)
    }

    @Test("A runner killed with SIGKILL while the command runs: after a restart history says interrupted, and it never runs again")
    func killNineMidRunIsReportedNotRepeated() async throws {
        let sandbox = try Sandbox()
        let out = sandbox.directory.appendingPathComponent("runs.txt").path
        let scheduled = try sandbox.chime("in", "1s", "Slow job", "--id", "slow", "--exec-shell", "echo run >> '\(out)'; exec sleep 20")
        #expect(scheduled.status == 0, "\(scheduled.stderr)")
        let runner = try sandbox.startRunner("--notifier", "json")
        #expect(await runner.waitUntilStarted(), "runner did not start: \(runner.stderr)")
        let running = try #require(await Self.run(sandbox, "slow", until: "running"), "not started: \(runner.stderr)")
        let pid = try #require(running["pid"] as? Int)
        defer { kill(-pid_t(pid), SIGKILL) }

        runner.crash()
        let restarted = try sandbox.startRunner("--notifier", "json")
        #expect(await restarted.waitUntilStarted(), "runner did not start: \(restarted.stderr)")
        let run = try #require(await Self.run(sandbox, "slow"))
        #expect(run["state"] as? String == "interrupted")
        #expect(run["summary"] as? String == "interrupted (runner stopped while it ran)")
        #expect(restarted.stderr.contains("Commands interrupted"))
        try await Task.sleep(for: .seconds(1.5))
        #expect(await restarted.terminate() == 0)
        #expect(Self.lines(out) == ["run"])
        #expect(try sandbox.chime("history", "slow").stdout.contains("command: interrupted (runner stopped while it ran)"))
    }

    @Test("The time limit ends the command's whole process group, recorded as timed out")
    func timeLimitKillsTheGroup() async throws {
        let sandbox = try Sandbox()
        let out = sandbox.directory.appendingPathComponent("child.pid").path
        // A shell that starts a child of its own: the limit must end both.
        let scheduled = try sandbox.chime(
            "in",
            "1s",
            "Too long",
            "--id",
            "long",
            "--exec-timeout",
            "1s",
            "--exec",
            "/bin/sh",
            "-c",
            "sleep 30 & echo $! > '\(out)'; echo started; wait"
        )
        #expect(scheduled.status == 0, "\(scheduled.stderr)")
        let runner = try sandbox.startRunner("--notifier", "json")
        #expect(await runner.waitUntilStarted(), "runner did not start: \(runner.stderr)")
        let started = Date()
        let run = try #require(await Self.run(sandbox, "long"), "no run: \(runner.stderr)")
        #expect(run["state"] as? String == "timed_out")
        #expect(run["summary"] as? String == "timed out")
        #expect(run["output"] as? String == "started")
        #expect(Date().timeIntervalSince(started) < 8)
        let child = try #require(Self.lines(out).first.flatMap { pid_t($0) })
        // The group's other member is gone too (SIGTERM to the group).
        var gone = false
        for _ in 0..<50 where !gone {
            gone = kill(child, 0) != 0
            if !gone { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(gone, "the command's child \(child) still runs")
        #expect(await runner.terminate() == 0)
    }

    @Test("--exec-shell runs its line with /bin/sh -c")
    func execShellUsesBinSh() async throws {
        let sandbox = try Sandbox()
        let out = sandbox.directory.appendingPathComponent("shell.txt").path
        let scheduled = try sandbox.chime(
            "in",
            "1s",
            "Shell",
            "--id",
            "shell",
            "--exec-shell",
            "echo \"$0\" > '\(out)'; echo a | tr a b >> '\(out)'"
        )
        #expect(scheduled.status == 0, "\(scheduled.stderr)")
        #expect(scheduled.stdout.contains("runs: echo"), "\(scheduled.stdout)")
        let runner = try sandbox.startRunner("--notifier", "json")
        #expect(await runner.waitUntilStarted(), "runner did not start: \(runner.stderr)")
        let run = try #require(await Self.run(sandbox, "shell"), "no run: \(runner.stderr)")
        #expect(run["exit_status"] as? Int == 0)
        #expect(Self.lines(out) == ["/bin/sh", "b"])
        let shown = try sandbox.chime("show", "shell", "--json")
        let command = try #require((try jsonObject(shown.stdout)["reminder"] as? [String: Any])?["command"] as? [String: Any])
        #expect((command["shell"] as? String)?.hasPrefix("echo") == true)
        #expect(await runner.terminate() == 0)
    }

    @Test(
        "Bad commands are refused in one line, exit 64, with nothing stored",
        arguments: [
            (["--exec"], "missing command after --exec"),
            (["--exec-shell", "true", "--exec", "/bin/true"], "both --exec and --exec-shell"),
            (["--exec", "no-such-program-chime", "x"], "program not found: 'no-such-program-chime'"),
            (["--exec-timeout", "0s", "--exec", "/bin/true"], "invalid --exec-timeout '0s'"),
            (["--exec-timeout", "5m"], "--exec-timeout without a command"),
        ]
    )
    func badCommandsAreRefused(options: [String], message: String) throws {
        let sandbox = try Sandbox()
        for verb in [["in", "5m"], ["at", "23:59"], ["every", "2h"]] {
            let result = try sandbox.chime(verb + ["Job"] + options)
            #expect(result.status == 64, "\(verb) \(options): \(result.stderr)")
            #expect(result.stderr.contains(message), "\(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
            #expect(result.stdout.isEmpty)
        }
        #expect(!FileManager.default.fileExists(atPath: sandbox.store))
    }

    @Test("chime import reads a reminder's \"command\" as chime list --json prints it, and refuses a program it cannot find")
    func importTakesACommand() throws {
        let sandbox = try Sandbox()
        let file = sandbox.directory.appendingPathComponent("reminders.json").path
        try FileManager.default.createDirectory(at: sandbox.directory, withIntermediateDirectories: true)
        let json =
            #"[{"title":"Sync","id":"sync","every":"2h","command":{"argv":["/bin/echo","hi"],"timeout_s":30}},"#
            + #"{"title":"Build","id":"build","in":"1h","command":{"shell":"make -C ~/site"}}]"#
        try json.write(toFile: file, atomically: true, encoding: .utf8)
        let imported = try sandbox.chime("import", file)
        #expect(imported.status == 0, "\(imported.stderr)")
        let list = try sandbox.chime("list", "--json")
        let reminders = try #require(try jsonObject(list.stdout)["reminders"] as? [[String: Any]])
        let commands = reminders.compactMap { $0["command"] as? [String: Any] }
        #expect(commands.compactMap { $0["argv"] as? [String] } == [["/bin/echo", "hi"]])
        #expect(commands.compactMap { $0["shell"] as? String } == ["make -C ~/site"])
        #expect(commands.compactMap { $0["timeout_s"] as? Int }.sorted() == [30, 600])

        try #"[{"title":"X","in":"1h","command":{"argv":["no-such-program-chime"]}}]"#.write(
            toFile: file,
            atomically: true,
            encoding: .utf8
        )
        let refused = try sandbox.chime("import", file)
        #expect(refused.status == 64)
        #expect(refused.stderr.contains("reminder 1: program not found: 'no-such-program-chime'"), "\(refused.stderr)")
        #expect(try jsonObject(try sandbox.chime("list", "--json").stdout)["reminders"] as? [Any] != nil)
    }
}

import ChimePostgres
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `--exec` on a PostgreSQL store with the real `chime run`: with several runners on the store
/// the command runs once, by the runner that showed the alert; `chime history`, `show`,
/// `list --json` and `import` have the command as on SQLite; a run whose runner was killed is
/// recorded as interrupted by the next runner and never run again. Reminders are due 1 s ahead;
/// the tests wait.
@Suite("PostgreSQL store: commands run when reminders fire", .serialized)
struct PostgresExecTests {
    /// Waits (up to `timeout` seconds) until no connection of a runner named `chime run OWNER…`
    /// other than `live` ones is left on the store's database: a killed runner's backend has gone.
    static func waitForRunnerGone(_ url: PostgresURL, runners: Int, timeout: Double = 10) async throws -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let count = try await PostgresStore.withStore(url) { try $0.runnerCount() }
            if count == runners { return true }
            try await Task.sleep(for: .milliseconds(100))
        }
        return false
    }

    @Test("Two runners on the store: the command runs exactly once, and history shows its exit status")
    func twoRunnersRunTheCommandOnce() async throws {
        try await withFreshCLIDatabase { url in
            let sandbox = try Sandbox(extra: ["CHIME_STORE": url.description])
            let out = sandbox.directory.appendingPathComponent("ran.txt").path
            let a = try sandbox.startRunner("--notifier", "json")
            let b = try sandbox.startRunner("--notifier", "json")
            #expect(await a.waitUntilStarted(), "\(a.stderr)")
            #expect(await b.waitUntilStarted(), "\(b.stderr)")
            let scheduled = try sandbox.chime("in", "1s", "X", "--id", "x", "--exec", "/bin/sh", "-c", "echo ran >> '\(out)'")
            #expect(scheduled.status == 0, "\(scheduled.stderr)")
            let run = try #require(await ExecEndToEndTests.run(sandbox, "x"), "no run: \(a.stderr) \(b.stderr)")
            #expect(run["state"] as? String == "exited")
            #expect(run["exit_status"] as? Int == 0)
            // The other runner's passes, a moment later, do not run it again.
            try await Task.sleep(for: .seconds(1.5))
            #expect(await a.terminate() == 0, "\(a.stderr)")
            #expect(await b.terminate() == 0, "\(b.stderr)")
            #expect(ExecEndToEndTests.lines(out) == ["ran"])
            let history = try sandbox.chime("history", "x")
            #expect(history.status == 0)
            #expect(history.stdout.contains("  command: exit 0"), "\(history.stdout)")
            let shown = try sandbox.chime("show", "x", "--json")
            let command = try #require((try jsonObject(shown.stdout)["reminder"] as? [String: Any])?["command"] as? [String: Any])
            #expect(command["argv"] as? [String] == ["/bin/sh", "-c", "echo ran >> '\(out)'"])
        }
    }

    @Test("chime list --json shows the command, and chime import reads it back, as on SQLite")
    func listAndImportKeepTheCommand() async throws {
        try await withFreshCLIDatabase { url in
            let sandbox = try Sandbox(extra: ["CHIME_STORE": url.description])
            #expect(try sandbox.chime("in", "1h", "Build", "--id", "build", "--exec-shell", "make -C ~/site").status == 0)
            let list = try sandbox.chime("list", "--json")
            #expect(list.status == 0, "\(list.stderr)")
            let reminders = try #require(try jsonObject(list.stdout)["reminders"] as? [[String: Any]])
            #expect((reminders.first?["command"] as? [String: Any])?["shell"] as? String == "make -C ~/site")
            let file = sandbox.directory.appendingPathComponent("backup.json").path
            try list.stdout.write(toFile: file, atomically: true, encoding: .utf8)
            #expect(try sandbox.chime("cancel", "build").status == 0)
            let imported = try sandbox.chime("import", file)
            #expect(imported.status == 0, "\(imported.stderr)")
            let again = try #require(try jsonObject(try sandbox.chime("list", "--json").stdout)["reminders"] as? [[String: Any]])
            let command = try #require(again.first?["command"] as? [String: Any])
            #expect(command["shell"] as? String == "make -C ~/site")
            #expect(command["timeout_s"] as? Int == 600)
        }
    }

    @Test("A runner killed while the command runs: the next runner records it as interrupted, and it never runs again")
    func aKilledRunnersRunIsInterruptedNotRepeated() async throws {
        try await withFreshCLIDatabase { url in
            let sandbox = try Sandbox(extra: ["CHIME_STORE": url.description])
            let out = sandbox.directory.appendingPathComponent("runs.txt").path
            let scheduled = try sandbox.chime("in", "1s", "Slow job", "--id", "slow", "--exec-shell", "echo run >> '\(out)'; exec sleep 20")
            #expect(scheduled.status == 0, "\(scheduled.stderr)")
            let runner = try sandbox.startRunner("--notifier", "json")
            #expect(await runner.waitUntilStarted(), "\(runner.stderr)")
            let running = try #require(await ExecEndToEndTests.run(sandbox, "slow", until: "running"), "not started: \(runner.stderr)")
            let pid = try #require(running["pid"] as? Int)
            defer { kill(-pid_t(pid), SIGKILL) }

            runner.crash()
            #expect(try await Self.waitForRunnerGone(url, runners: 0))
            let next = try sandbox.startRunner("--notifier", "json")
            #expect(await next.waitUntilStarted(), "\(next.stderr)")
            let run = try #require(await ExecEndToEndTests.run(sandbox, "slow"), "\(next.stderr)")
            #expect(run["state"] as? String == "interrupted")
            #expect(run["summary"] as? String == "interrupted (\(PostgresStore.runnerGoneReason))")
            #expect(next.stderr.contains("Commands interrupted"), "\(next.stderr)")
            try await Task.sleep(for: .seconds(1.5))
            #expect(await next.terminate() == 0)
            #expect(ExecEndToEndTests.lines(out) == ["run"])
        }
    }
}

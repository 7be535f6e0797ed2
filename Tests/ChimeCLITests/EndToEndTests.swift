import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The real `chime` executable and runner, on a real SQLite file, talking over the real
/// wake-up socket. These may wait a few real seconds: reminders are due 1–2 s ahead.
@Suite("End to end: the chime executable", .serialized)
struct EndToEndTests {
    @Test("A runner fires what the CLI schedules, never what it cancels, and stops on SIGTERM")
    func runnerFiresScheduledAndNotCancelled() async throws {
        let sandbox = try Sandbox()
        let runner = try sandbox.startRunner("--notifier", "json")
        #expect(await runner.waitUntilStarted(), "runner did not start: \(runner.stderr)")

        // Given a reminder due in 1 s and one due in 2 s that is cancelled at once
        let tea = try sandbox.chime("in", "1s", "Tea is ready", "--id", "tea", "--json")
        #expect(tea.status == 0, "\(tea.stderr)")
        let scheduled = try jsonObject(tea.stdout)
        #expect(scheduled["runner"] as? Bool == true)
        #expect(try sandbox.chime("in", "2s", "Never shown", "--id", "never").status == 0)
        let cancelled = try sandbox.chime("cancel", "never", "--json")
        #expect(cancelled.status == 0)
        #expect(try jsonObject(cancelled.stdout)["cancelled"] as? [String] == ["never"])

        // Then the runner prints one JSON line for tea, on time
        let line = try #require(await runner.nextLine(timeout: 5), "no alert: \(runner.stderr)")
        let fired = try jsonObject(line)
        #expect(fired["event"] as? String == "reminder")
        #expect(fired["id"] as? String == "tea")
        #expect(fired["title"] as? String == "Tea is ready")
        let lateMs = try #require(fired["late_ms"] as? Double)
        #expect(lateMs < 500, "fired \(lateMs) ms late")
        #expect(fired["due"] as? String != nil && fired["posted"] as? String != nil)

        // And nothing else by the time the cancelled one would have been due
        let extra = await runner.nextLine(timeout: 2.5)
        #expect(extra == nil, "unexpected alert: \(extra ?? "")")

        // And SIGTERM stops it gracefully
        #expect(await runner.terminate() == 0)
        #expect(runner.stderr.contains("Runner stopped"))
        let list = try sandbox.chime("list", "--json")
        #expect(try jsonObject(list.stdout)["reminders"] as? [Any] == nil || (try jsonObject(list.stdout)["reminders"] as! [Any]).isEmpty)
    }

    @Test("Missed while down: fires once after restart, late, saying how late; a second runner is refused")
    func catchUpAfterDowntime() async throws {
        let sandbox = try Sandbox()
        // Given a reminder that falls due while no runner is running
        let scheduled = try sandbox.chime("in", "1s", "Missed while down", "--id", "missed")
        #expect(scheduled.status == 0)
        #expect(scheduled.stderr.contains("No runner is running"))
        try await Task.sleep(for: .seconds(1.5))

        // When a runner starts
        let runner = try sandbox.startRunner("--json")
        #expect(await runner.waitUntilStarted(), "runner did not start: \(runner.stderr)")
        let line = try #require(await runner.nextLine(timeout: 5))
        let fired = try jsonObject(line)
        #expect(fired["id"] as? String == "missed")
        #expect((fired["late_ms"] as? Double ?? 0) >= 400)

        // And a second runner on the same store is refused with its own exit status
        let second = try sandbox.chime("run")
        #expect(second.status == 6)
        #expect(second.stderr.contains("already running"))
        #expect(await runner.terminate() == 0)

        // Then a restarted runner does not fire it again
        let again = try sandbox.startRunner("--json")
        #expect(await again.waitUntilStarted())
        #expect(await again.nextLine(timeout: 1.0) == nil)
        #expect(await again.terminate() == 0)
    }

    @Test("Recurring reminders and the human console line")
    func recurringAndConsoleFormat() async throws {
        let sandbox = try Sandbox()
        let runner = try sandbox.startRunner("--notifier", "console")
        #expect(await runner.waitUntilStarted())
        // Every 2 s, not 1 s: the line's stamp has whole seconds, and two occurrences 1 s apart,
        // the first a few milliseconds late (not late enough to say so), can share one.
        #expect(try sandbox.chime("every", "2s", "Blink", "--id", "blink").status == 0)
        let first = try #require(await runner.nextLine(timeout: 5))
        let second = try #require(await runner.nextLine(timeout: 5))
        #expect(first.contains("Blink") && first.contains("(blink)"))
        #expect(second.contains("Blink"))
        #expect(first != second, "the same occurrence twice")
        #expect(try sandbox.chime("cancel", "blink").status == 0)
        #expect(await runner.terminate() == 0)
    }

    @Test(
        "Bad input: one line naming the value, a distinct exit status, the store unchanged",
        arguments: [
            (["at", "25:00", "x"], Int32(64), "25:00"),
            (["in", "-5m", "x"], 64, "-5m"),
            (["every", "fortnight", "08:00", "x"], 64, "fortnight"),
            (["at", "10:00", "x", "--zone", "Mars/Base"], 64, "Mars/Base"),
            (["in", "5m", ""], 64, "title"),
            (["in", "5m", "x", "--id", "a b"], 64, "a b"),
            (["cancel", "nosuch"], 3, "nosuch"),
            (["next", "nosuch"], 3, "nosuch"),
            (["in", "5m", "x", "--id", "taken", "--no-replace"], 4, "taken"),
        ]
    )
    func badInput(arguments: [String], status: Int32, named: String) throws {
        let sandbox = try Sandbox()
        #expect(try sandbox.chime(["in", "10m", "Keep me", "--id", "taken"]).status == 0)
        let before = try sandbox.chime(["list", "--json"]).stdout

        let result = try sandbox.chime(arguments)
        #expect(result.status == status, "\(arguments): \(result.stderr)")
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1, "\(arguments): \(result.stderr)")
        #expect(result.stderr.contains(named))
        let after = try sandbox.chime(["list", "--json"]).stdout
        #expect(after == before)
    }

    @Test("Store faults: a missing directory, a file that is not SQLite")
    func storeFaults() throws {
        let sandbox = try Sandbox()
        let missing = sandbox.directory.appendingPathComponent("nope/chime.sqlite").path
        // A read finds no store there, and says so; a write refuses to make the directory
        let listed = try sandbox.chime(["list", "--store", missing])
        #expect(listed.status == 0)
        #expect(listed.stderr.contains("No store at '\(missing)' yet"), "\(listed.stderr)")
        let result = try sandbox.chime(["in", "5m", "x", "--store", missing])
        #expect(result.status == 5)
        #expect(result.stderr.contains("does not exist"))
        #expect(!FileManager.default.fileExists(atPath: sandbox.directory.appendingPathComponent("nope").path))

        let notSQLite = sandbox.directory.appendingPathComponent("notes.txt").path
        try Data("my notes\n".utf8).write(to: URL(fileURLWithPath: notSQLite))
        let refused = try sandbox.chime(["in", "5m", "x", "--store", notSQLite, "--json"])
        #expect(refused.status == 5)
        #expect(try jsonObject(refused.stdout)["error"] != nil)
        #expect(try String(contentsOfFile: notSQLite, encoding: .utf8) == "my notes\n")
    }

    @Test("The store is created with mode 0600")
    func storeMode() throws {
        let sandbox = try Sandbox()
        #expect(try sandbox.chime(["in", "5m", "x"]).status == 0)
        var info = stat()
        #expect(stat(sandbox.store, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600)
    }
}

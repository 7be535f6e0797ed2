import ChimeCore
import ChimeGateway
import ChimeStore
import ChimeTesting
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A gated program's minutes, end to end: `chime gate open` stays as the program's watching
/// parent (the program keeps its process group; signals sent to chime go on to it; chime ends
/// as it ended), records each run, survives being killed with -9 without a half-written row,
/// and the minutes budget shows at the gate and in the stats. The programs are `sleep`s ended
/// by a signal, never waited for.
@Suite struct GateMinutesTests {
    /// A zone in which it is around noon now (a run of the past hour stays within today).
    static func noonZone() -> String {
        let hour = Int(Date().timeIntervalSince1970) % 86_400 / 3_600
        let offset = 12 - hour
        return offset == 0 ? "UTC" : offset > 0 ? "Etc/GMT-\(offset)" : "Etc/GMT+\(-offset)"
    }

    /// A sandbox with TZ near noon, the program `chess.desktop` installed and gated, with `options`.
    static func sandbox(_ options: [String], zone: String = GateMinutesTests.noonZone()) throws -> Sandbox {
        let sandbox = try Sandbox(extra: ["TZ": zone])
        try install(in: sandbox)
        let add = try sandbox.chime(["gate", "add", "chess"] + options)
        #expect(add.status == 0, "\(add)")
        return sandbox
    }

    static func install(in sandbox: borrowing Sandbox) throws {
        let applications = URL(fileURLWithPath: sandbox.environment["XDG_DATA_HOME"] ?? sandbox.directory.path)
            .appendingPathComponent("applications")
        try FileManager.default.createDirectory(at: applications, withIntermediateDirectories: true)
        try "[Desktop Entry]\nType=Application\nName=Chess\nExec=/bin/true\n"
            .write(to: applications.appendingPathComponent("chess.desktop"), atomically: true, encoding: .utf8)
    }

    /// Hours that exclude now (outside them the program opens at once, with no gate to answer).
    static var elsewhere: String { "\(GateScheduleTests.clock(2))-\(GateScheduleTests.clock(3))" }

    /// Starts `chime gate open chess.desktop -- sh -c 'echo $$ > FILE; exec sleep 600'`; returns
    /// the watcher's pid and, once it has written it, the program's.
    static func startWatched(_ sandbox: borrowing Sandbox, name: String) async throws -> (watcher: pid_t, program: pid_t) {
        let pidFile = sandbox.directory.appendingPathComponent("\(name).pid").path
        let watcher = try Spawn.start(
            ChimeExecutable.url.path,
            ["gate", "open", "chess.desktop", "--", "/bin/sh", "-c", "echo $$ > '\(pidFile)'; exec sleep 600"],
            environment: sandbox.environment,
            output: sandbox.directory.appendingPathComponent("\(name).log").path
        ).get()
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            if let text = try? String(contentsOfFile: pidFile, encoding: .utf8),
                let pid = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines))
            {
                return (watcher, pid)
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        kill(watcher, SIGKILL)
        _ = Spawn.wait(watcher)
        throw CancellationError()
    }

    /// The parent and the process group of `pid`, from /proc.
    static func parentAndGroup(_ pid: pid_t) -> (parent: pid_t, group: pid_t)? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 3, let parent = pid_t(fields[1]), let group = pid_t(fields[2]) else { return nil }
        return (parent, group)
    }

    /// Run `id` once the watcher has recorded it (bounded wait).
    static func run(_ id: Int64, in sandbox: borrowing Sandbox, ended: Bool? = nil) async throws -> GateRun? {
        let book = GateBook(store: try ReminderStore(path: sandbox.store, schemas: chimeSchemas))
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            if let run = try book.run(id: id), ended == nil || (run.end != nil) == ended { return run }
            try await Task.sleep(for: .milliseconds(20))
        }
        return try book.run(id: id)
    }

    @Test func theWatcherRecordsTheRunForwardsSignalsAndEndsAsTheProgramDid() async throws {
        let sandbox = try Self.sandbox(["--hours", Self.elsewhere, "--remind-after", "20m"])
        let (watcher, program) = try await Self.startWatched(sandbox, name: "first")
        // The program is chime's child, in chime's process group (a terminal's job control
        // reaches both), not chime itself.
        #expect(program != watcher)
        #expect(Self.parentAndGroup(program)?.parent == watcher)
        #expect(Self.parentAndGroup(program)?.group == Self.parentAndGroup(watcher)?.group)
        let run = try #require(try await Self.run(1, in: sandbox))
        #expect(run.pid == program && run.end == nil && run.programID == "chess.desktop" && run.name == "Chess")
        let store = try ReminderStore(path: sandbox.store, schemas: chimeSchemas)
        let reminder = try store.reminder(id: run.reminderID)
        #expect(reminder.title == "20 min in Chess" && reminder.kind == GateBook.kind)
        #expect(abs((reminder.nextDue ?? .distantPast).timeIntervalSince(run.start) - 1_200) < 1)

        // Ctrl-C sent to chime alone is not its to act on (a terminal sends it to the program
        // too); SIGTERM goes on to the program, and chime ends as the program did.
        kill(watcher, SIGINT)
        try await Task.sleep(for: .milliseconds(300))
        #expect(kill(watcher, 0) == 0 && kill(program, 0) == 0)
        kill(watcher, SIGTERM)
        #expect(Spawn.wait(watcher) == 128 + SIGTERM)
        #expect(kill(program, 0) != 0)
        let ended = try #require(try await Self.run(1, in: sandbox, ended: true))
        #expect(ended.end != nil && ended.end! >= ended.start)
        // Its reminder in use never fires after the program has ended.
        #expect(throws: ChimeError.self) { try store.reminder(id: run.reminderID) }

        // A program's exit status is chime's.
        let three = try sandbox.chime("gate", "open", "chess.desktop", "--", "/bin/sh", "-c", "exit 3")
        #expect(three.status == 3, "\(three)")
        #expect(try await Self.run(2, in: sandbox, ended: true) != nil)
        // One that cannot start: exit 3 (not found), nothing recorded.
        let missing = try sandbox.chime("gate", "open", "chess.desktop", "--", "/nonexistent/chess")
        #expect(missing.status == 3, "\(missing)")
        #expect(missing.stderr.contains("cannot start '/nonexistent/chess'"), "\(missing.stderr)")
        #expect(try await Self.run(3, in: sandbox) == nil)
        let stats = try jsonObject(try sandbox.chime("gate", "stats", "--json").stdout)
        let chess = (stats["programs"] as? [[String: Any]])?.first
        #expect(chess?["program"] as? String == "chess.desktop")
        #expect(chess?["opens"] as? Int == 3)
        #expect(chess?["minutes"] as? Int == 0)
        #expect((chess?["trend"] as? [[String: Any]])?.count == 30)
    }

    @Test func aWatcherKilledWithMinus9LeavesNoHalfRowAndTheNextRunClosesItsRun() async throws {
        let sandbox = try Self.sandbox(["--hours", Self.elsewhere])
        let (watcher, program) = try await Self.startWatched(sandbox, name: "killed")
        defer { kill(program, SIGKILL) }
        #expect(try await Self.run(1, in: sandbox) != nil)
        kill(watcher, SIGKILL)
        #expect(Spawn.wait(watcher) == 128 + SIGKILL)
        // The program goes on; its run has its start and no end: it counts until now.
        #expect(kill(program, 0) == 0)
        let orphan = try #require(try await Self.run(1, in: sandbox))
        #expect(orphan.end == nil)
        // Another run while it goes on (another window) leaves it open.
        let other = try sandbox.chime("gate", "open", "chess.desktop", "--", "/bin/true")
        #expect(other.status == 0, "\(other)")
        #expect(try await Self.run(2, in: sandbox, ended: true) != nil)
        #expect(try await Self.run(1, in: sandbox)?.end == nil)
        // Once the program is gone, its next run closes it at its own start.
        kill(program, SIGKILL)
        let deadline = Date().addingTimeInterval(10)
        while GateRun.isRunning(program), Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
        let next = try sandbox.chime("gate", "open", "chess.desktop", "--", "/bin/true")
        #expect(next.status == 0, "\(next)")
        let closed = try #require(try await Self.run(1, in: sandbox))
        let third = try #require(try await Self.run(3, in: sandbox, ended: true))
        #expect(closed.end == third.start)
    }

    @Test func pastTheMinutesBudgetTheGateAndTheStatsSayHowMuchWasUsed() async throws {
        let sandbox = try Self.sandbox(["--budget", "60m/day", "--budget", "2/day"])
        #expect(try sandbox.chime("gate", "list").stdout == "  chess.desktop  budget 2/day and 60m/day\n")
        // A run of 62 minutes that ended a minute ago.
        let clock = ManualWallClock(now: Date().addingTimeInterval(-63 * 60))
        let book = GateBook(store: try ReminderStore(path: sandbox.store, schemas: chimeSchemas), clock: clock)
        let run = try book.startRun(programID: "chess.desktop", name: "Chess", pid: 1, remindAfter: nil)
        clock.advance(by: 62 * 60)
        try book.endRun(id: run.id)

        let text = try sandbox.chime("gate", "stats").stdout
        #expect(text.contains("chess.desktop  0 opens today, budget 2; 62 of 60 min today (over: the pause grows)"), "\(text)")
        #expect(text.contains("chess.desktop  0 opens, 62 min; budget 2/day and 60m/day kept 0 of 1 day"), "\(text)")
        let stats = try jsonObject(try sandbox.chime("gate", "stats", "--json").stdout)
        let today = (stats["today"] as? [[String: Any]])?.first
        #expect(today?["minutes"] as? Int == 62 && today?["budget_minutes_per_day"] as? Int == 60)
        let chess = (stats["programs"] as? [[String: Any]])?.first
        #expect(chess?["minutes"] as? Int == 62)
        #expect(chess?["days_with_budget"] as? Int == 1 && chess?["days_within_budget"] as? Int == 0)

        // The gate says it, and pauses longer (never a lock-out: Exit here).
        let record = sandbox.directory.appendingPathComponent("started.txt").path
        let terminal = try GateTerminalTests.Terminal(
            sandbox: sandbox,
            record: record,
            arguments: ["x"],
            gate: ["gate", "open", "chess.desktop", "--terminal"]
        )
        #expect(await terminal.shows("1st open today, budget 2 · 62 of 60 min today"), "\(terminal.screen.withLock { $0 })")
        #expect(await terminal.shows("Proceed in 45"), "\(terminal.screen.withLock { $0 })")
        terminal.type("e")
        #expect(await terminal.finish() == 0)
        #expect(!FileManager.default.fileExists(atPath: record))
    }

    @Test func badMinutesBudgetsAndRemindersSayWhatIsAcceptedAndWriteNothing() throws {
        let sandbox = try Sandbox(extra: ["TZ": "UTC"])
        try Self.install(in: sandbox)
        for (options, line) in [
            (["--budget", "60m/week"], "chime: invalid budget '60m/week': expected Nm/day or Nh/day, minutes per day from 1m to 24h"),
            (["--budget", "25h/day"], "chime: invalid budget '25h/day': expected Nm/day or Nh/day"),
            (["--budget", "3/day", "--budget", "4/day"], "chime: --budget 4/day: an opens budget is given twice"),
            (["--remind-after", "90s"], "chime: invalid remind-after '90s': expected a duration in whole minutes from 1m to 24h"),
        ] {
            let result = try sandbox.chime(["gate", "add", "chess"] + options)
            #expect(result.status == 64, "\(result)")
            #expect(result.stderr.hasPrefix(line), "\(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
        }
        #expect(try sandbox.chime("gate", "list").stdout == "No program is gated.\n")
        // Edit: set, then clear.
        #expect(try sandbox.chime("gate", "add", "chess").status == 0)
        let edit = try sandbox.chime("gate", "edit", "chess", "--budget", "1h/day", "--remind-after", "20m")
        #expect(edit.status == 0, "\(edit)")
        #expect(edit.stdout.contains("Budget: 60 min a day with the usual pause; past it the pause grows."), "\(edit.stdout)")
        #expect(edit.stdout.contains("Reminder: after 20 min in it, an alert (Exit / Keep going); it closes nothing."), "\(edit.stdout)")
        let list = try jsonObject(try sandbox.chime("gate", "list", "--json").stdout)
        let program = (list["programs"] as? [[String: Any]])?.first
        #expect(program?["budget_minutes_per_day"] as? Int == 60 && program?["remind_after_min"] as? Int == 20)
        #expect(try sandbox.chime("gate", "edit", "chess", "--no-budget", "--no-remind").status == 0)
        #expect(try sandbox.chime("gate", "list").stdout == "  chess.desktop\n")
    }
}

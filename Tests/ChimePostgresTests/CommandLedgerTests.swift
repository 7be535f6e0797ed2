import ChimeCore
import ChimeTesting
import Foundation
import Synchronization
import Testing

@testable import ChimePostgres

/// A ``CommandLauncher`` that records what it is asked to start and starts nothing.
final class LaunchRecorder: CommandLauncher {
    private let launched = Mutex<[OccurrenceKey]>([])
    let ends: AsyncStream<CommandEnd>
    private let continuation: AsyncStream<CommandEnd>.Continuation

    init() { (ends, continuation) = AsyncStream.makeStream(of: CommandEnd.self) }

    func launch(_ command: ReminderCommand, for key: OccurrenceKey, environment: [String: String]) throws -> Int32 {
        launched.withLock { $0.append(key) }
        return 4242
    }

    func stopAll() -> [OccurrenceKey] { [] }

    var launches: [OccurrenceKey] { launched.withLock { $0 } }
}

/// Commands run on firing (`--exec`) on the PostgreSQL ledger (migration 0007-commands): the run
/// is recorded once per occurrence, only by the runner that posted it; a run whose runner is gone
/// is recorded as interrupted by whichever runner looks, and is never run again. Time moves by
/// ``PostgresStore/advanceClock(by:)``; no test sleeps.
@Suite(.timeLimit(.minutes(1)))
struct CommandLedgerTests {
    static let utc = TimeZone(identifier: "UTC")!
    static let backup = ReminderCommand(.argv(["/bin/true"]), timeout: .seconds(60))

    /// A store whose connection is named as a runner's (`chime run OWNER`), as `chime run` names it.
    static func runnerStore(_ url: PostgresURL, owner: String) -> PostgresStore {
        PostgresStore(url, options: PostgresConnectionOptions(applicationName: PostgresRunner.applicationName(owner: owner)))
    }

    /// Schedules `id` with the command, due now by the database's clock, and returns its occurrence.
    static func scheduleDue(_ store: PostgresStore, _ id: String) throws {
        try store.schedule(
            NewReminder(id: id, title: "Back up", trigger: .once(try store.databaseNow().addingTimeInterval(60)), command: backup),
            systemZone: utc
        )
        try store.advanceClock(by: 60.5)
    }

    /// Claims and posts every due occurrence through `ledger`, as its runner would.
    static func claimAndPost(_ ledger: PostgresLedger) throws -> [PendingOccurrence] {
        let claimed = try ledger.claimDue(now: ledger.clock.now(), horizon: ledger.clock.now(), systemZone: utc)
        for occurrence in claimed {
            try ledger.markPosted([occurrence.key], at: ledger.clock.now(), noteID: "note", serverID: nil, via: "json")
        }
        return claimed
    }

    static func run(_ store: PostgresStore, _ id: String) throws -> CommandRun? {
        var run: CommandRun?
        try store.eachHistory(id: id) { run = $0.command }
        return run
    }

    @Test func theMigrationAddsTheCommandAndTheRunColumns() async throws {
        try await withFreshDatabase { url in
            try await PostgresStore.withStore(url) { store in
                #expect(try store.appliedMigrations().contains("0007-commands"))
                #expect(try store.missingMigrations() == [])
                let columns = try store.count(
                    """
                    SELECT count(*) FROM information_schema.columns
                    WHERE (table_name = 'reminder' AND column_name = 'command')
                       OR (table_name = 'occurrence' AND column_name LIKE 'command\\_%')
                    """
                )
                #expect(columns == 9)
                // A second init changes nothing.
                #expect(try store.migrate() == [])
            }
        }
    }

    @Test func theCommandIsStoredAndReadBack() async throws {
        try await withFreshDatabase { url in
            let store = PostgresStore(url)
            defer { store.client.reset() }
            let shell = ReminderCommand(.shell("make -C ~/site"), timeout: .seconds(90))
            try store.schedule(
                NewReminder(id: "site", title: "Site", trigger: .once(try store.databaseNow().addingTimeInterval(600)), command: shell),
                systemZone: Self.utc
            )
            #expect(try store.reminder(id: "site").command == shell)
            #expect(try store.detail(id: "site").reminder.command == shell)
            #expect(try store.pending().first?.command == shell)
        }
    }

    @Test func onlyThePosterBeginsTheRunAndOnlyOnceThoughLedgersRace() async throws {
        try await withFreshDatabase { url in
            let storeA = Self.runnerStore(url, owner: "runner-a")
            let storeB = Self.runnerStore(url, owner: "runner-b")
            defer {
                storeA.client.reset()
                storeB.client.reset()
            }
            try Self.scheduleDue(storeA, "backup")
            let a = try PostgresLedger(store: storeA, owner: "runner-a", systemZone: { Self.utc })
            let b = try PostgresLedger(store: storeB, owner: "runner-b", systemZone: { Self.utc })
            let posted = try Self.claimAndPost(a)
            #expect(try Self.claimAndPost(b).isEmpty)
            let key = try #require(posted.first?.key)
            #expect(posted.first?.command == Self.backup)
            // Not B's to run: A posted it.
            #expect(try b.beginCommand(key, at: Date()) == false)
            // Both ledgers, on connections of their own, ask at once, many times.
            let results = try await withThrowingTaskGroup(of: (String, Bool).self) { group in
                for index in 0..<16 {
                    let (name, ledger) = index.isMultiple(of: 2) ? ("a", a) : ("b", b)
                    let own = try PostgresLedger(
                        store: Self.runnerStore(url, owner: ledger.owner),
                        owner: ledger.owner,
                        systemZone: { Self.utc }
                    )
                    group.addTask {
                        defer { own.store.client.reset() }
                        return (name, try own.beginCommand(key, at: Date()))
                    }
                }
                var all: [(String, Bool)] = []
                for try await result in group { all.append(result) }
                return all
            }
            #expect(results.filter(\.1).map(\.0) == ["a"], "once, and by the runner that posted it: \(results)")
            #expect(try a.beginCommand(key, at: Date()) == false)
            #expect(try Self.run(storeA, "backup")?.state == .running)
        }
    }

    @Test func twoSchedulersOnOneLedgerLaunchTheCommandOnceAndRecordItsEnd() async throws {
        try await withFreshDatabase { url in
            let stores = [Self.runnerStore(url, owner: "one"), Self.runnerStore(url, owner: "two")]
            defer { for store in stores { store.client.reset() } }
            try Self.scheduleDue(stores[0], "backup")
            let launchers = [LaunchRecorder(), LaunchRecorder()]
            let schedulers = try zip(stores, launchers).map { store, launcher in
                let ledger = try PostgresLedger(store: store, owner: store === stores[0] ? "one" : "two", systemZone: { Self.utc })
                return Scheduler(
                    store: ledger,
                    notifier: RecordingNotifier(),
                    clock: ledger.clock,
                    configuration: PostgresRunner.defaultConfiguration,
                    systemZone: { Self.utc },
                    commands: launcher
                )
            }
            await withTaskGroup(of: Void.self) { group in
                for scheduler in schedulers { group.addTask { await scheduler.runPass() } }
            }
            for scheduler in schedulers { await scheduler.runPass() }
            let launched = launchers.flatMap(\.launches)
            #expect(launched.count == 1, "\(launched)")
            let key = try #require(launched.first)
            let runner = launchers[0].launches.isEmpty ? schedulers[1] : schedulers[0]
            #expect(try Self.run(stores[0], "backup")?.pid == 4242)
            await runner.finishCommand(CommandEnd(key: key, how: .exited(3), output: "done"))
            let run = try #require(try Self.run(stores[0], "backup"))
            #expect(run.state == .exited)
            #expect(run.exitStatus == 3)
            #expect(run.output == "done")
            #expect(run.summary == "exit 3")
        }
    }

    @Test func aRunWhoseRunnerIsGoneIsInterruptedByAnotherAndNeverRunAgain() async throws {
        try await withFreshDatabase { url in
            let storeA = Self.runnerStore(url, owner: "runner-a")
            let storeB = Self.runnerStore(url, owner: "runner-b")
            defer { storeB.client.reset() }
            try Self.scheduleDue(storeA, "backup")
            let a = try PostgresLedger(store: storeA, owner: "runner-a", systemZone: { Self.utc })
            let key = try #require(try Self.claimAndPost(a).first?.key)
            #expect(try a.beginCommand(key, at: Date()))
            try a.commandSpawned(key, pid: 77)

            // Runner A is alive (connected): B's start leaves its run alone.
            let b = try PostgresLedger(store: storeB, owner: "runner-b", systemZone: { Self.utc })
            #expect(try b.interruptCommands(at: Date()) == [])
            #expect(try Self.run(storeB, "backup")?.state == .running)

            // A dies: its connection ends (the server has ended its backend when this returns).
            let ended = try storeB.count(
                """
                WITH a AS MATERIALIZED (
                    SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'chime run runner-a')
                SELECT count(*) FROM a WHERE pg_terminate_backend(a.pid, 5000)
                """
            )
            #expect(ended == 1)
            storeA.client.reset()
            #expect(try b.interruptCommands(at: Date()) == ["backup"])
            let run = try #require(try Self.run(storeB, "backup"))
            #expect(run.state == .interrupted)
            #expect(run.error == PostgresStore.runnerGoneReason)
            #expect(run.pid == 77)

            // Never run again: not by B, not by a new scheduler on the store.
            #expect(try b.beginCommand(key, at: Date()) == false)
            let launcher = LaunchRecorder()
            let scheduler = Scheduler(
                store: b,
                notifier: RecordingNotifier(),
                clock: b.clock,
                configuration: PostgresRunner.defaultConfiguration,
                systemZone: { Self.utc },
                commands: launcher
            )
            try storeB.expireLeases()
            await scheduler.runPass()
            await scheduler.runPass()
            #expect(launcher.launches.isEmpty)
            #expect(try b.interruptCommands(at: Date()) == [], "recorded once")

            // A was only cut off: when it is back and the command ends, its end is recorded.
            try a.finishCommand(key, CommandRun(state: .exited, startedAt: Date(), finishedAt: Date(), exitStatus: 0, output: "ok"))
            #expect(try Self.run(storeB, "backup")?.summary == "exit 0")
            storeA.client.reset()
        }
    }

    @Test func aRunnerStartingUnderTheSameNameReportsItsOwnRunInterrupted() async throws {
        try await withFreshDatabase { url in
            let store = Self.runnerStore(url, owner: "desk")
            defer { store.client.reset() }
            try Self.scheduleDue(store, "backup")
            let first = try PostgresLedger(store: store, owner: "desk", systemZone: { Self.utc })
            let key = try #require(try Self.claimAndPost(first).first?.key)
            #expect(try first.beginCommand(key, at: Date()))
            // The same runner identity starts again (its connection is the same name, and alive).
            let again = try PostgresLedger(store: store, owner: "desk", systemZone: { Self.utc })
            #expect(try again.interruptCommands(at: Date()) == ["backup"])
            let run = try #require(try Self.run(store, "backup"))
            #expect(run.state == .interrupted)
            #expect(run.error == CommandRun.interruptedReason)
            #expect(try again.beginCommand(key, at: Date()) == false)
            // Its end, should the old process still tell it, does not overwrite what start-up said.
            try first.finishCommand(key, CommandRun(state: .exited, startedAt: Date(), exitStatus: 0))
            #expect(try Self.run(store, "backup")?.state == .interrupted)
        }
    }

    @Test func aPassFindsARunLeftByARunnerThatIsGone() async throws {
        try await withFreshDatabase { url in
            let store = Self.runnerStore(url, owner: "b")
            defer { store.client.reset() }
            try Self.scheduleDue(store, "backup")
            let events = Mutex<[PostgresLedgerEvent]>([])
            let b = try PostgresLedger(store: store, owner: "b", lease: .zero, systemZone: { Self.utc }) { event in
                events.withLock { $0.append(event) }
            }
            let key = try #require(try Self.claimAndPost(b).first?.key)
            #expect(try b.beginCommand(key, at: Date()))
            // Left by a runner that never connected under its name (gone).
            try store.run("UPDATE occurrence SET command_owner = 'gone:1:abcd'")
            _ = try b.claimDue(now: b.clock.now(), horizon: b.clock.now(), systemZone: Self.utc)
            #expect(events.withLock { $0 }.contains(.commandsInterrupted(ids: ["backup"])))
            #expect(try Self.run(store, "backup")?.state == .interrupted)
        }
    }
}

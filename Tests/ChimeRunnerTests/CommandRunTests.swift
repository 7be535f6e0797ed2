import ChimeCore
import ChimeStore
import ChimeTesting
import Foundation
import Synchronization
import Testing

/// A ``CommandLauncher`` that records what it is asked to start and starts nothing; a test
/// ends each run by hand through ``Scheduler/finishCommand(_:)``.
final class RecordingLauncher: CommandLauncher {
    struct Launch: Sendable {
        var command: ReminderCommand
        var key: OccurrenceKey
        var environment: [String: String]
    }

    private let state = Mutex<(launches: [Launch], failing: String?)>(([], nil))
    let ends: AsyncStream<CommandEnd>
    private let continuation: AsyncStream<CommandEnd>.Continuation

    init() { (ends, continuation) = AsyncStream.makeStream(of: CommandEnd.self) }

    func launch(_ command: ReminderCommand, for key: OccurrenceKey, environment: [String: String]) throws -> Int32 {
        try state.withLock { state in
            if let failing = state.failing { throw ChimeError(.failure, failing) }
            state.launches.append(Launch(command: command, key: key, environment: environment))
            return Int32(1000 + state.launches.count)
        }
    }

    func stopAll() -> [OccurrenceKey] { [] }

    var launches: [Launch] { state.withLock { $0.launches } }

    func failWith(_ reason: String?) { state.withLock { $0.failing = reason } }
}

/// A reminder's command (`--exec`) runs once per occurrence under the ledger, on the injected clock.
struct CommandRunTests {
    static let backup = ReminderCommand(.argv(["/usr/bin/rsync", "-a", "src", "dst"]), timeout: .seconds(60))

    func schedule(_ h: Harness, _ id: String, at seconds: TimeInterval, command: ReminderCommand = backup) throws {
        try h.store.schedule(
            NewReminder(id: id, title: "Title \(id)", trigger: .once(h.at(seconds)), command: command),
            now: h.clock.now(),
            systemZone: Harness.utc
        )
    }

    @Test func theCommandRunsOnceWithItsEnvironmentAndItsEndIsRecorded() async throws {
        let launcher = RecordingLauncher()
        let h = try Harness(commands: launcher)
        defer { h.cleanUp() }
        try schedule(h, "backup", at: 10)
        #expect(try h.store.reminder(id: "backup").command == Self.backup)

        h.clock.advance(to: h.at(10))
        await h.scheduler.runPass()
        #expect(h.notifier.posts.map(\.id) == ["backup"])
        let launch = try #require(launcher.launches.first)
        #expect(launcher.launches.count == 1)
        #expect(launch.command == Self.backup)
        #expect(launch.environment == ["CHIME_ID": "backup", "CHIME_TITLE": "Title backup", "CHIME_DUE": TimeText.iso(h.at(10))])
        var run = try #require(try h.store.history(id: "backup").first?.command)
        #expect(run.state == .running)
        #expect(run.pid == 1001)
        #expect(run.startedAt == h.at(10))

        // Another pass starts nothing again
        await h.scheduler.runPass()
        #expect(launcher.launches.count == 1)

        // Its end is recorded with its exit status and first lines
        h.clock.advance(to: h.at(12))
        await h.scheduler.finishCommand(CommandEnd(key: launch.key, how: .exited(3), output: "sent 12 bytes\nfailed"))
        run = try #require(try h.store.history(id: "backup").first?.command)
        #expect(run.state == .exited)
        #expect(run.exitStatus == 3)
        #expect(run.output == "sent 12 bytes\nfailed")
        #expect(run.finishedAt == h.at(12))
        #expect(run.summary == "exit 3")
    }

    @Test func aFailedPostRetriesTheAlertButNotTheCommand() async throws {
        let launcher = RecordingLauncher()
        let h = try Harness(commands: launcher)
        defer { h.cleanUp() }
        try schedule(h, "backup", at: 10)
        h.notifier.failNext(1)
        h.clock.advance(to: h.at(10))
        let retry = try #require(await h.scheduler.runPass())
        #expect(h.notifier.posts.isEmpty)
        #expect(launcher.launches.count == 1)

        h.clock.advance(to: retry)
        await h.scheduler.runPass()
        #expect(h.notifier.posts.map(\.id) == ["backup"])
        #expect(launcher.launches.count == 1)
    }

    @Test func aRunLeftRunningByAStoppedRunnerIsInterruptedNotRunAgain() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let first = RecordingLauncher()
        let h = try Harness(directory: directory, commands: first)
        try schedule(h, "backup", at: 10)
        h.clock.advance(to: h.at(10))
        await h.scheduler.runPass()
        #expect(first.launches.count == 1)

        // The runner is killed while the command runs; the next one starts on the same store
        let second = RecordingLauncher()
        let h2 = try Harness(directory: directory, commands: second)
        #expect(try h2.store.interruptCommands(at: h.at(20)) == ["backup"])
        h2.clock.advance(to: h.at(20))
        await h2.scheduler.runPass()
        #expect(second.launches.isEmpty)
        let run = try #require(try h2.store.history(id: "backup").first?.command)
        #expect(run.state == .interrupted)
        #expect(run.summary == "interrupted (runner stopped while it ran)")
        // Its end, should it still come, does not overwrite what was recorded
        await h2.scheduler.finishCommand(CommandEnd(key: first.launches[0].key, how: .exited(0), output: ""))
        #expect(try h2.store.history(id: "backup").first?.command?.state == .interrupted)
        #expect(try h2.store.interruptCommands(at: h.at(30)).isEmpty)
    }

    @Test func aCommandThatCannotStartIsRecordedAsFailed() async throws {
        let launcher = RecordingLauncher()
        launcher.failWith("'/usr/bin/rsync': no such program")
        let h = try Harness(commands: launcher)
        defer { h.cleanUp() }
        try schedule(h, "backup", at: 10)
        h.clock.advance(to: h.at(10))
        await h.scheduler.runPass()
        #expect(h.notifier.posts.map(\.id) == ["backup"])
        let run = try #require(try h.store.history(id: "backup").first?.command)
        #expect(run.state == .failed)
        #expect(run.summary == "failed to start: '/usr/bin/rsync': no such program")
    }

    @Test func everyOccurrenceOfARecurringReminderRunsItOnce() async throws {
        let launcher = RecordingLauncher()
        let h = try Harness(commands: launcher)
        defer { h.cleanUp() }
        try h.store.schedule(
            NewReminder(id: "sync", title: "Sync", trigger: .interval(seconds: 60, anchor: h.at(0)), command: Self.backup),
            now: h.clock.now(),
            systemZone: Harness.utc
        )
        for minute in 1...3 {
            h.clock.advance(to: h.at(Double(minute) * 60))
            await h.scheduler.runPass()
            await h.scheduler.runPass()
        }
        #expect(launcher.launches.map(\.key.dueMicros) == [60, 120, 180].map { h.at($0).micros })
        #expect(launcher.launches.map { $0.environment["CHIME_DUE"] } == [60, 120, 180].map { TimeText.iso(h.at($0)) })
    }

    @Test func aReminderWithoutACommandStartsNothing() async throws {
        let launcher = RecordingLauncher()
        let h = try Harness(commands: launcher)
        defer { h.cleanUp() }
        try h.once("tea", at: 10)
        h.clock.advance(to: h.at(10))
        await h.scheduler.runPass()
        #expect(launcher.launches.isEmpty)
        #expect(try h.store.history(id: "tea").first?.command == nil)
    }
}

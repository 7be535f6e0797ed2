import ChimeCore
import ChimeStore
import ChimeTesting
import Foundation
import Testing

/// The families' events run the config's hooks through the scheduler, once each, under the
/// `hook_run` ledger; an event no hook follows is dropped.
struct HookRunTests {
    static let hook = ReminderCommand(.argv(["/usr/bin/notify-send", "Done"]), timeout: .seconds(30))

    func record(_ h: Harness, _ event: HookEvent) throws {
        try h.store.write { db in try ReminderStore.recordHook(event, at: h.clock.now(), in: db) }
    }

    @Test func aHookRunsOnceWithTheEventsEnvironmentAndItsEndIsRecorded() async throws {
        let launcher = RecordingLauncher()
        let h = try Harness(commands: launcher, hooks: ["focus.completed": Self.hook])
        defer { h.cleanUp() }
        try record(h, HookEvent("focus.completed", subject: "7", environment: ["CHIME_FOCUS_MINUTES": "25"]))
        try record(h, HookEvent("dose.taken", subject: "3"))

        await h.scheduler.startHooks()
        await h.scheduler.startHooks()
        let launch = try #require(launcher.launches.first)
        #expect(launcher.launches.count == 1)
        #expect(launch.command == Self.hook)
        #expect(launch.environment == ["CHIME_EVENT": "focus.completed", "CHIME_ID": "7", "CHIME_FOCUS_MINUTES": "25"])
        #expect(HookRecord.hookID(launch.key) != nil)
        var runs = try h.store.hookRuns()
        #expect(runs.map(\.event.name) == ["focus.completed"], "dose.taken has no hook: dropped")
        #expect(runs.first?.run?.state == .running)
        #expect(runs.first?.run?.pid == 1001)

        h.clock.advance(by: 2)
        await h.scheduler.finishCommand(CommandEnd(key: launch.key, how: .exited(3), output: "hi"))
        runs = try h.store.hookRuns()
        #expect(runs.first?.run?.state == .exited)
        #expect(runs.first?.run?.exitStatus == 3)
        #expect(runs.first?.run?.output == "hi")
        #expect(h.events.all.contains { if case .hookEnded("focus.completed", "7", "exit 3") = $0 { true } else { false } })
    }

    @Test func hooksRunOneAtATimeInTheOrderOfTheirEvents() async throws {
        let launcher = RecordingLauncher()
        let h = try Harness(commands: launcher, hooks: ["focus.started": Self.hook, "focus.given_up": Self.hook])
        defer { h.cleanUp() }
        try record(h, HookEvent("focus.started", subject: "1"))
        try record(h, HookEvent("focus.given_up", subject: "1"))

        // The first event's hook runs; the second waits for it, however many passes come
        await h.scheduler.startHooks()
        await h.scheduler.startHooks()
        #expect(launcher.launches.map { $0.environment["CHIME_EVENT"] } == ["focus.started"])
        #expect(try h.store.hookRuns().reversed().map { $0.run?.state } == [.running, nil], "the second still pending")

        // and starts as the first ends
        let first = try #require(launcher.launches.first)
        await h.scheduler.finishCommand(CommandEnd(key: first.key, how: .exited(0), output: ""))
        #expect(launcher.launches.map { $0.environment["CHIME_EVENT"] } == ["focus.started", "focus.given_up"])
        #expect(try h.store.hookRuns().reversed().map { $0.run?.state } == [.exited, .running])
    }

    @Test func aHookThatCannotStartIsRecordedAsFailedNotRetried() async throws {
        let launcher = RecordingLauncher()
        launcher.failWith("'notify-send': no such program")
        let h = try Harness(commands: launcher, hooks: ["dose.missed": Self.hook])
        defer { h.cleanUp() }
        try record(h, HookEvent("dose.missed", subject: "4"))
        await h.scheduler.startHooks()
        launcher.failWith(nil)
        await h.scheduler.startHooks()
        #expect(launcher.launches.isEmpty)
        let run = try #require(try h.store.hookRuns().first?.run)
        #expect(run.state == .failed)
        #expect(run.error == "'notify-send': no such program")
    }
}

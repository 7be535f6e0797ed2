import ChimeCore
import ChimeStore
import Foundation
import Testing

/// The hooks' runs (`hook_run`) in the ledger `chime history` reads: among the alerts by their
/// event's time, with how each ended and the first lines of its output, as a command's run.
struct HookHistoryTests {
    let directory: TemporaryDirectory
    let store: ReminderStore

    init() throws {
        directory = try TemporaryDirectory()
        store = try ReminderStore(path: directory.file("chime.sqlite"), schemas: [])
    }

    private func cleanUp() { directory.remove() }

    /// Records `event` at `recorded` seconds after t0 and starts its hook `startedAfter` seconds
    /// later (nil: leaves it waiting); returns its row id.
    @discardableResult
    private func hook(
        _ name: String,
        subject: String,
        title: String? = nil,
        at recorded: TimeInterval,
        startedAfter: TimeInterval? = 1,
        command: ReminderCommand = ReminderCommand(.argv(["notify-send", "Done"])),
        ended: ((Date) -> CommandRun)? = nil
    ) throws -> Int64 {
        let event = HookEvent(name, subject: subject, environment: title.map { ["CHIME_TITLE": $0] } ?? [:])
        try store.write { db in try ReminderStore.recordHook(event, at: Fixture.at(recorded), in: db) }
        let id = try #require(try store.pendingHooks().last?.id)
        guard let startedAfter else { return id }
        let started = Fixture.at(recorded + startedAfter)
        #expect(try store.beginHook(id, command: command, at: started))
        try store.hookSpawned(id, pid: 4242)
        if let ended { try store.finishHook(id, ended(started)) }
        return id
    }

    @Test func hookRunsAreAmongTheAlertsByTheirEventsTimeWithHowTheyEnded() throws {
        defer { cleanUp() }
        try store.schedule(Fixture.once("tea", at: 7_200, title: "Tea"), now: Fixture.t0, systemZone: Fixture.utc)
        try hook("focus.completed", subject: "1", title: "Focus session #1", at: 60) { started in
            CommandRun(state: .exited, startedAt: started, finishedAt: started + 2, pid: 4242, exitStatus: 0, output: "done\nsecond")
        }
        try hook("dose.taken", subject: "Ibuprofen", title: "Ibuprofen 400 mg", at: 3_600, startedAfter: 90) { started in
            CommandRun(state: .timedOut, startedAt: started, finishedAt: started + 60, pid: 4242, output: "slow")
        }
        let ready = try store.claimDue(now: Fixture.at(7_200), systemZone: Fixture.utc)
        try store.markPosted(ready.map(\.key), at: Fixture.at(7_201), noteID: "tea", serverID: nil, via: "console")
        try hook("gate.proceed", subject: "3", title: "firefox", at: 8_000) { started in
            CommandRun(state: .exited, startedAt: started, finishedAt: started + 1, pid: 4242, exitStatus: 137)
        }
        // Killed with the runner while it ran: reported, not run again
        try hook("gate.exit", subject: "4", title: "firefox", at: 8_100, command: ReminderCommand(.shell("echo bye")))
        #expect(try store.interruptHooks(at: Fixture.at(8_200)) == ["gate.exit"])
        // Waiting for a runner: not in the ledger yet
        try hook("focus.started", subject: "2", at: 8_300, startedAfter: nil)

        let all = try store.history()
        #expect(all.map(\.reminderID) == ["1", "Ibuprofen", "tea", "3", "4"])
        #expect(all.map(\.kind) == ["hook", "hook", "plain", "hook", "hook"])
        #expect(all.map(\.title) == ["focus.completed", "dose.taken", "Tea", "gate.proceed", "gate.exit"])
        #expect(all.map(\.detail) == ["Focus session #1", "Ibuprofen 400 mg", nil, "firefox", "firefox"])
        #expect(all.map(\.outcome) == ["exit 0", "timed out", "shown", "exit 137", "interrupted"])
        #expect(all.map(\.via) == ["hook", "hook", "console", "hook", "hook"])
        #expect(all.map(\.lateness) == [1, 90, 1, 1, 1])
        #expect(all.map(\.isHook) == [true, true, false, true, true])
        #expect(all[0].command?.output == "done\nsecond")
        #expect(all[0].command?.finishedAt == Fixture.at(63))
        #expect(all[0].hookCommand == ReminderCommand(.argv(["notify-send", "Done"])))
        #expect(all[4].hookCommand == ReminderCommand(.shell("echo bye")))
        #expect(all[4].command?.summary == "interrupted (\(CommandRun.interruptedReason))")
        #expect(all[4].command?.pid == 4242)

        // A reminder's id: its alerts only; since and limit count the hooks' runs with the alerts
        #expect(try store.history(id: "tea").map(\.title) == ["Tea"])
        #expect(try store.history(since: Fixture.at(7_200)).map(\.title) == ["Tea", "gate.proceed", "gate.exit"])
        #expect(try store.history(limit: 2).map(\.title) == ["gate.proceed", "gate.exit"])
        #expect(try store.history(limit: 4).map(\.title) == ["dose.taken", "Tea", "gate.proceed", "gate.exit"])
        var streamed: [HistoryEntry] = []
        try store.eachHistory(limit: 3) { streamed.append($0) }
        #expect(streamed == (try store.history(limit: 3)))
    }

    @Test func aRunningHookAndOneThatFailedToStartAreShownAsSo() throws {
        defer { cleanUp() }
        try hook("dose.skipped", subject: "Aspirin", at: 10)
        try hook("dose.missed", subject: "Aspirin", at: 20) { started in
            CommandRun(state: .failed, startedAt: started, finishedAt: started, error: "'nope': no such program")
        }
        let all = try store.history()
        #expect(all.map(\.outcome) == ["running", "failed"])
        #expect(all.map(\.state) == ["running", "failed"])
        #expect(all.map(\.detail) == [nil, nil])
        #expect(all.last?.command?.summary == "failed to start: 'nope': no such program")
    }
}

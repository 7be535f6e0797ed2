import ChimeCore
import ChimeFocus
import ChimeStore
import ChimeTesting
import Foundation
import Testing

/// A session's start, completion and give-up each record one hook event in the transaction that
/// makes it happen, with the session's details; a pause and a resume record none.
struct FocusHookTests {
    @Test func startCompleteAndGiveUpRecordOneEventEach() throws {
        let h = try FocusHarness()
        defer { h.cleanUp() }
        let first = try h.timer.start(minutes: 10)
        h.wall.advance(by: 60)
        _ = try h.timer.pause()
        _ = try h.timer.resume()
        h.wall.advance(by: 600)
        _ = try h.timer.settle()
        _ = try h.timer.settle()
        let second = try h.timer.start(minutes: 20)
        h.wall.advance(by: 90)
        _ = try h.timer.giveUp()

        let pending = try h.store.pendingHooks()
        #expect(pending.map(\.event.name) == ["focus.started", "focus.completed", "focus.started", "focus.given_up"])
        #expect(pending.map(\.event.subject) == ["\(first.id)", "\(first.id)", "\(second.id)", "\(second.id)"])
        let completed = pending[1].event
        #expect(completed.environment["CHIME_FOCUS_MINUTES"] == "10")
        #expect(completed.environment["CHIME_FOCUS_SECONDS"] == "600")
        #expect(completed.environment["CHIME_TITLE"] == "Focus session #\(first.id)")
        #expect(completed.hookEnvironment["CHIME_EVENT"] == "focus.completed")
        #expect(completed.hookEnvironment["CHIME_ID"] == "\(first.id)")
        #expect(pending[3].event.environment["CHIME_FOCUS_SECONDS"] == "90")
        #expect(pending[1].recordedAt == h.at(660))
    }

    @Test func aHookIsBegunOnceAndItsEndRecorded() throws {
        let h = try FocusHarness()
        defer { h.cleanUp() }
        _ = try h.timer.start(minutes: 10)
        let record = try #require(try h.store.pendingHooks().first)
        let command = ReminderCommand(.argv(["/bin/true"]))
        #expect(try h.store.beginHook(record.id, command: command, at: h.at(1)))
        #expect(try !h.store.beginHook(record.id, command: command, at: h.at(2)))
        #expect(try h.store.pendingHooks().isEmpty)
        #expect(try h.store.interruptHooks(at: h.at(3)) == ["focus.started"])
        let runs = try h.store.hookRuns()
        #expect(runs.map(\.run?.state) == [.interrupted])
        #expect(try h.store.interruptHooks(at: h.at(4)).isEmpty)
    }
}

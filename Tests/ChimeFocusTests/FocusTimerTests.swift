import ChimeCore
import ChimeFocus
import ChimeStore
import ChimeTesting
import Foundation
import GRDB
import Testing

/// The session state machine on a real store, with the machine's clocks injected.
struct FocusTimerTests {
    @Test func startSchedulesTheAlertAt25MinutesAndRefusesASecondSession() throws {
        let h = try FocusHarness()
        defer { h.cleanUp() }
        let session = try h.timer.start()
        #expect(session.state == .active)
        #expect(session.lengthSeconds == 1_500)
        #expect(session.startedAt == h.at(0))
        #expect(session.remainingSeconds(at: h.machine.now()) == 1_500)
        #expect(session.stage(at: h.machine.now()) == 1)
        let alert = try #require(try h.alert(of: session))
        #expect(alert.id == "focus-\(session.id)")
        #expect(alert.title == "Tree planted!")
        #expect(alert.body == "Great focus session! Break: 5 min.")
        #expect(alert.kind == "focus")
        #expect(alert.nextDue == h.at(1_500))

        // One session at a time: the error names the running one; nothing changes.
        let error = #expect(throws: ChimeError.self) { try h.timer.start() }
        #expect(error?.code == .conflict)
        #expect(error?.message.contains("#\(session.id), active, 25:00 left") == true)
        #expect(error?.message.contains("let it finish or give it up ('chime focus give-up')") == true)
        #expect(error?.message.contains("pause") == false)
        // Paused counts as running too: pausing does not free the slot; the error says to
        // resume or give up, and has no alert to fire.
        h.wall.advance(by: 60)
        _ = try h.timer.pause()
        let paused = #expect(throws: ChimeError.self) { try h.timer.start(minutes: 30) }
        #expect(paused?.code == .conflict)
        #expect(
            paused?.message.hasPrefix("a focus session is paused: #\(session.id), paused, 24:00 left, started ") == true,
            "\(paused?.message ?? "")"
        )
        #expect(
            paused?.message.hasSuffix(
                "a paused session still counts as the one session: "
                    + "resume it ('chime focus resume') or give it up ('chime focus give-up') before starting another"
            ) == true
        )
        #expect(try h.store.pendingCount() == 0)
    }

    @Test(arguments: [9, 121, 0, -25])
    func minutesOutOfRangeAreRefusedNamingTheValue(minutes: Int) throws {
        let h = try FocusHarness()
        defer { h.cleanUp() }
        let error = #expect(throws: ChimeError.self) { try h.timer.start(minutes: minutes) }
        #expect(error?.code == .usage)
        #expect(error?.message == "invalid minutes '\(minutes)': expected a whole number of minutes from 10 to 120 (default 25)")
        #expect(try h.timer.latest() == nil)
    }

    @Test func everyTransitionOfTheSeedAndNoOther() throws {
        // The seed's table: active → paused, completed, abandoned; paused → active, abandoned.
        #expect(SessionState.active.canTransitionTo == [.paused, .completed, .abandoned])
        #expect(SessionState.paused.canTransitionTo == [.active, .abandoned])
        #expect(SessionState.completed.canTransitionTo.isEmpty)
        #expect(SessionState.abandoned.canTransitionTo.isEmpty)

        let h = try FocusHarness()
        defer { h.cleanUp() }
        // Nothing open: pause, resume and give up are not found.
        for action in [h.timer.pause, h.timer.resume, h.timer.giveUp] {
            let error = #expect(throws: ChimeError.self) { try action() }
            #expect(error?.code == .notFound)
            #expect(error?.message.hasSuffix("start one with 'chime focus start'") == true)
        }
        let session = try h.timer.start()
        // active → active (resume) refused
        let resume = #expect(throws: ChimeError.self) { try h.timer.resume() }
        #expect(resume?.code == .conflict)
        #expect(
            resume?.message == "focus session #\(session.id) is not paused: it is active (25:00 left); pause it with 'chime focus pause'"
        )
        // active → paused
        h.wall.advance(by: 60)
        #expect(try h.timer.pause().state == .paused)
        // paused → paused refused
        let pause = #expect(throws: ChimeError.self) { try h.timer.pause() }
        #expect(pause?.message == "focus session #\(session.id) is already paused (24:00 left): resume it with 'chime focus resume'")
        // paused → active
        #expect(try h.timer.resume().state == .active)
        // active → abandoned
        #expect(try h.timer.giveUp().state == .abandoned)
        // abandoned is terminal: nothing to pause, resume or give up, and the error says why
        let after = #expect(throws: ChimeError.self) { try h.timer.resume() }
        #expect(
            after?.message == "no focus session to resume: the last one, #\(session.id), was given up; start one with 'chime focus start'"
        )
        // paused → abandoned
        _ = try h.timer.start()
        _ = try h.timer.pause()
        #expect(try h.timer.giveUp().state == .abandoned)
        // active → completed (by time), then terminal
        let third = try h.timer.start()
        h.wall.advance(by: 1_500)
        guard case .completed(let completed) = try h.timer.settle() else {
            Issue.record("expected the session to complete")
            return
        }
        #expect(completed.id == third.id)
        let done = #expect(throws: ChimeError.self) { try h.timer.giveUp() }
        #expect(done?.message.contains("was completed") == true)
    }

    @Test func stageBoundaries() throws {
        // The seed's mapping: 1 from 25:00 to 20:01, 2 from 20:00, 3 from 15:00, 4 from 10:00, 5 from 5:00 to 0:00.
        let cases: [(remaining: Int, stage: Int)] = [
            (1_500, 1), (1_201, 1), (1_200, 2), (1_199, 2), (901, 2), (900, 3), (600, 4), (301, 4), (300, 5), (1, 5), (0, 5),
        ]
        for (remaining, stage) in cases {
            #expect(TreeStage.stage(remainingSeconds: remaining, lengthSeconds: 1_500) == stage, "remaining \(remaining)")
        }
        // Other lengths change stage at each fifth.
        #expect(TreeStage.stage(remainingSeconds: 480, lengthSeconds: 600) == 2)
        #expect(TreeStage.stage(remainingSeconds: 481, lengthSeconds: 600) == 1)

        // On the clock: the countdown rounds up, so 20:00 shows (stage 2) only once 5 minutes have passed.
        let h = try FocusHarness()
        defer { h.cleanUp() }
        let session = try h.timer.start()
        h.wall.advance(by: 299.5)
        var open = try #require(try h.timer.current().openSession)
        #expect(open.remainingSeconds(at: h.machine.now()) == 1_201)
        #expect(open.stage(at: h.machine.now()) == 1)
        h.wall.advance(by: 0.5)
        open = try #require(try h.timer.current().openSession)
        #expect(FocusTimer.countdown(open.remainingSeconds(at: h.machine.now())) == "20:00")
        #expect(open.stage(at: h.machine.now()) == 2)
        h.wall.advance(by: 1)
        #expect(FocusTimer.countdown(open.remainingSeconds(at: h.machine.now())) == "19:59")
        #expect(open.stage(at: h.machine.now()) == 2)
        h.wall.advance(to: h.at(1_200))
        #expect(FocusTimer.countdown(open.remainingSeconds(at: h.machine.now())) == "05:00")
        #expect(open.stage(at: h.machine.now()) == 5)
        h.wall.advance(to: h.at(1_499.999))
        #expect(FocusTimer.countdown(open.remainingSeconds(at: h.machine.now())) == "00:01")
        #expect(try h.timer.current().openSession?.id == session.id)
        h.wall.advance(to: h.at(1_500))
        #expect(FocusTimer.countdown(open.remainingSeconds(at: h.machine.now())) == "00:00")
        guard case .completed = try h.timer.current() else {
            Issue.record("expected completion at 0:00")
            return
        }
    }

    @Test func pauseCancelsTheAlertAndResumeMovesItToTheNewEnd() throws {
        let h = try FocusHarness()
        defer { h.cleanUp() }
        let session = try h.timer.start()
        h.wall.advance(by: 600)
        let paused = try h.timer.pause()
        #expect(paused.focusMicros == 600_000_000)
        #expect(paused.pausedAt == h.at(600))
        #expect(try h.alert(of: session) == nil)
        #expect(try h.store.ledger(id: session.reminderID).isEmpty)

        // Paused time is not focus time, however long (a night).
        h.wall.advance(by: 8 * 3_600)
        let stillPaused = try #require(try h.timer.current().openSession)
        #expect(stillPaused.remainingSeconds(at: h.machine.now()) == 900)
        #expect(stillPaused.stage(at: h.machine.now()) == 3)

        let resumed = try h.timer.resume()
        #expect(resumed.pausedMicros == 8 * 3_600 * 1_000_000)
        let alert = try #require(try h.alert(of: session))
        #expect(alert.nextDue == h.at(600 + 8 * 3_600 + 900))

        // Completion: duration is the session's length, end time the instant focus reached it.
        h.wall.advance(by: 900)
        guard case .completed(let done) = try h.timer.settle() else {
            Issue.record("expected completion")
            return
        }
        #expect(done.focusMicros == 1_500_000_000)
        #expect(done.endedAt == h.at(600 + 8 * 3_600 + 900))
        #expect(done.pausedMicros == 8 * 3_600 * 1_000_000)
        #expect(done.isValidTree)
        // The alert stays for the runner to fire.
        #expect(try h.alert(of: session)?.nextDue == h.at(600 + 8 * 3_600 + 900))
    }

    @Test func giveUpRecordsThePartialDurationAndCancelsTheAlertByItsIdentifier() throws {
        let h = try FocusHarness()
        defer { h.cleanUp() }
        let session = try h.timer.start()
        h.wall.advance(by: 420)
        let abandoned = try h.timer.giveUp()
        #expect(abandoned.state == .abandoned)
        #expect(abandoned.endReason == .gaveUp)
        #expect(abandoned.endedAt == h.at(420))
        #expect(abandoned.focusMicros == 420_000_000)
        #expect(try h.alert(of: session) == nil)
        let error = #expect(throws: ChimeError.self) { try h.store.reminder(id: session.reminderID) }
        #expect(error?.message == "no pending reminder has the id '\(session.reminderID)': it was cancelled")
        #expect(try h.timer.latest() == abandoned)
    }

    @Test func suspendDoesNotCountAndTheAlertMovesByTheTimeAsleep() throws {
        let h = try FocusHarness()
        defer { h.cleanUp() }
        let session = try h.timer.start()
        h.wall.advance(by: 600)
        // The lid closes for an hour, ten minutes in.
        h.machine.suspend(for: 3_600)
        let open = try #require(try h.timer.settle().openSession)
        #expect(open.remainingSeconds(at: h.machine.now()) == 900)
        #expect(open.stage(at: h.machine.now()) == 3)
        #expect(try h.alert(of: session)?.nextDue == h.at(600 + 3_600 + 900))
        // A clock set back by a person does not give time back either.
        h.machine.setWall(to: h.at(0))
        _ = try h.timer.settle()
        #expect(try h.alert(of: session)?.nextDue == h.at(900))
        h.wall.advance(by: 900)
        guard case .completed(let done) = try h.timer.settle() else {
            Issue.record("expected completion after 25 minutes awake")
            return
        }
        #expect(done.endedAt == h.at(900))
        #expect(done.focusMicros == 1_500_000_000)
    }

    @Test func aRestartInTheSameBootContinuesWhereItWas() throws {
        let h = try FocusHarness()
        defer { h.cleanUp() }
        let session = try h.timer.start()
        h.wall.advance(by: 700)
        // Another process (a restarted runner, the CLI) opens the same store.
        let store = try ReminderStore(path: h.store.path, schemas: [.focus])
        let again = FocusTimer(store: store, clock: h.machine)
        let open = try #require(try again.current().openSession)
        #expect(open.id == session.id)
        #expect(open.remainingSeconds(at: h.machine.now()) == 800)
        #expect(try store.reminder(id: session.reminderID).nextDue == h.at(1_500))
    }

    @Test func aRebootAbandonsARunningSessionAndSaysWhy() throws {
        let h = try FocusHarness()
        defer { h.cleanUp() }
        let session = try h.timer.start()
        h.wall.advance(by: 300)
        _ = try h.timer.pause()
        h.wall.advance(by: 60)
        _ = try h.timer.resume()
        h.wall.advance(by: 200)
        h.machine.reboot(downFor: 120)
        guard case .abandoned(let abandoned) = try h.timer.settle() else {
            Issue.record("expected the session abandoned after the reboot")
            return
        }
        #expect(abandoned.id == session.id)
        #expect(abandoned.endReason == .restarted)
        // Only the focus time counted before the last resume is known.
        #expect(abandoned.focusMicros == 300_000_000)
        #expect(abandoned.endedAt! >= h.at(560))
        #expect(try h.alert(of: session) == nil)
        #expect(try h.timer.latest()?.endReason == .restarted)
        // A new session can start.
        #expect(try h.timer.start().state == .active)
    }

    @Test func aPausedSessionWaitsAcrossAReboot() throws {
        let h = try FocusHarness()
        defer { h.cleanUp() }
        _ = try h.timer.start()
        h.wall.advance(by: 300)
        _ = try h.timer.pause()
        h.machine.reboot()
        let open = try #require(try h.timer.settle().openSession)
        #expect(open.state == .paused)
        #expect(open.remainingSeconds(at: h.machine.now()) == 1_200)
        let resumed = try h.timer.resume()
        #expect(resumed.segment?.boot == "boot-2")
        #expect(try h.alert(of: resumed)?.nextDue == h.machine.now().wall.addingTimeInterval(1_200))
    }

    @Test func theOneSessionRuleHoldsInTheStoreItself() throws {
        let h = try FocusHarness()
        defer { h.cleanUp() }
        _ = try h.timer.start()
        // A second open row written behind the timer's back is refused by the store's index.
        let queue = try DatabaseQueue(path: h.store.path)
        #expect(throws: DatabaseError.self) {
            try queue.write { db in
                try db.execute(sql: "INSERT INTO focus_session (state, length_s, started_us) VALUES ('paused', 1500, 0)")
            }
        }
    }
}

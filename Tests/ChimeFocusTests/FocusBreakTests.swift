import ChimeCore
import ChimeFocus
import ChimeStore
import ChimeTesting
import Foundation
import Testing

/// Breaks between sessions (Pomodoro) on a real store with the injected clocks: a completed
/// session starts a short break, every fourth a long one; a skip ends it; its end is an alert.
struct FocusBreakTests {
    /// Completes a session of `minutes` started now, then settles at its end.
    static func complete(_ h: FocusHarness, _ timer: FocusTimer, minutes: Int = 25) throws -> FocusSession {
        let session = try timer.start(minutes: minutes)
        h.wall.advance(by: TimeInterval(minutes * 60))
        guard case .completed(let done) = try timer.settle() else { throw ChimeError(.failure, "not completed") }
        #expect(done.id == session.id)
        return done
    }

    @Test func aCompletedSessionStartsAShortBreakSaidInItsAlertAndEndedByAnAlert() throws {
        let h = try FocusHarness()
        defer { h.cleanUp() }
        let session = try h.timer.start()
        #expect(try h.timer.cycle() == FocusCycle(runningBreak: nil, position: 1, length: 4))
        h.wall.advance(by: 1_500)
        #expect(try h.timer.settle() == .completed(try h.timer.session(id: session.id)))

        let rest = try #require(try h.timer.runningBreak())
        #expect(rest.kind == .short)
        #expect(rest.sessionID == session.id)
        #expect(rest.position == 1)
        #expect(rest.lengthSeconds == 300)
        #expect(rest.startedAt == h.at(1_500))
        #expect(rest.endsAt == h.at(1_800))
        #expect(rest.remainingSeconds(at: h.at(1_500)) == 300)
        #expect(try h.timer.cycle() == FocusCycle(runningBreak: rest, position: 1, length: 4))
        // The completion alert says the break; the break's end is a one-shot alert of the family.
        let planted = try #require(try h.alert(of: session))
        #expect(planted.body == "Great focus session! Break: 5 min.")
        let over = try #require(try h.store.pending().first { $0.id == "focus-break-\(rest.id)" })
        #expect(over.title == "Break over: plant the next tree")
        #expect(over.body == "Session 2 of 4: Start when you are ready.")
        #expect(over.kind == "focus")
        #expect(over.nextDue == h.at(1_800))

        // At its end it is taken, and the next session waits (no session starts by itself).
        h.wall.advance(to: h.at(1_800))
        #expect(try h.timer.settle() == .none)
        #expect(try h.timer.runningBreak() == nil)
        #expect(try h.timer.cycle() == FocusCycle(runningBreak: nil, position: 2, length: 4))
        #expect(try h.timer.breakCounts() == BreakCounts(taken: 1, skipped: 0))
    }

    @Test func everyFourthCompletedSessionHasALongBreakThenTheCycleStartsAgain() throws {
        let h = try FocusHarness()
        defer { h.cleanUp() }
        var kinds: [FocusBreak.Kind] = []
        var positions: [Int] = []
        for _ in 1...5 {
            _ = try Self.complete(h, h.timer)
            let rest = try #require(try h.timer.runningBreak())
            kinds.append(rest.kind)
            positions.append(rest.position)
            h.wall.advance(to: rest.endsAt)
        }
        #expect(kinds == [.short, .short, .short, .long, .short])
        #expect(positions == [1, 2, 3, 4, 1])
        #expect(try h.timer.breakCounts() == BreakCounts(taken: 5, skipped: 0))
        // The long break lasts 15 minutes; the forest counts sessions only.
        #expect(try Forest(store: h.store).treeCount() == 5)
    }

    @Test func aGivenUpSessionHasNoBreakAndDoesNotMoveTheCycle() throws {
        let h = try FocusHarness()
        defer { h.cleanUp() }
        _ = try h.timer.start()
        h.wall.advance(by: 60)
        _ = try h.timer.giveUp()
        #expect(try h.timer.runningBreak() == nil)
        #expect(try h.timer.cycle().position == 1)
    }

    @Test func skipEndsTheBreakAndCancelsItsAlertAndAStartDuringABreakEndsIt() throws {
        let h = try FocusHarness()
        defer { h.cleanUp() }
        _ = try Self.complete(h, h.timer)
        h.wall.advance(by: 60)
        let skipped = try h.timer.skipBreak()
        #expect(skipped.state == .skipped)
        #expect(skipped.endedAt == h.at(1_560))
        // Its alert is cancelled (the completion alert waits for a runner to fire it).
        #expect(try h.store.pending().map(\.id) == ["focus-1"])
        #expect(try h.timer.runningBreak() == nil)
        // Nothing to skip now: not found, saying why.
        let none = #expect(throws: ChimeError.self) { try h.timer.skipBreak() }
        #expect(none?.code == .notFound)
        #expect(none?.message == "no break to skip: breaks follow completed sessions; start one with 'chime focus start'")

        // A session started during the break ends it (skipped); its alert is cancelled.
        _ = try Self.complete(h, h.timer)
        let second = try #require(try h.timer.runningBreak())
        h.wall.advance(by: 30)
        let next = try h.timer.start()
        #expect(try h.store.pending().map(\.id).filter { $0.hasPrefix("focus-break-") }.isEmpty)
        #expect(try h.store.pending().map(\.id).contains(next.reminderID))
        let during = #expect(throws: ChimeError.self) { try h.timer.skipBreak() }
        #expect(during?.message == "no break to skip: focus session #\(next.id) is running (a break follows its end)")
        #expect(try h.timer.breakCounts() == BreakCounts(taken: 0, skipped: 2))
        #expect(second.position == 2)
    }

    @Test func theConfigsLengthsCycleAndAutoStart() throws {
        let h = try FocusHarness()
        defer { h.cleanUp() }
        let values: [ConfigKey: ConfigValue] = [
            .focusShortBreak: .seconds(120), .focusLongBreak: .seconds(1_200), .focusLongBreakEvery: .number(2),
            .focusAutoStartSessions: .flag(true),
        ]
        let breaks = FocusBreaks.configured { values[$0] ?? $0.builtInDefault(environment: [:]) }
        #expect(breaks == FocusBreaks(shortSeconds: 120, longSeconds: 1_200, longEvery: 2, autoStartSessions: true))
        #expect(FocusBreaks.configured { $0.builtInDefault(environment: [:]) } == FocusBreaks())
        let timer = FocusTimer(store: h.store, clock: h.machine, breaks: breaks)

        let first = try Self.complete(h, timer, minutes: 10)
        let short = try #require(try timer.runningBreak())
        #expect(short.lengthSeconds == 120)
        #expect(try h.alert(of: first)?.body == "Great focus session! Break: 2 min.")
        #expect(try h.store.pending().first { $0.id == short.reminderID }?.body == "Session 2 of 2 has begun.")
        // auto_start_sessions: at the break's end the next session starts, as long as the last.
        h.wall.advance(to: short.endsAt)
        let started = try #require(try timer.settle().openSession)
        #expect(started.lengthSeconds == 600)
        #expect(started.startedAt == short.endsAt)
        h.wall.advance(by: 600)
        _ = try timer.settle()
        let long = try #require(try timer.runningBreak())
        #expect(long.kind == .long)
        #expect(long.lengthSeconds == 1_200)
        #expect(try h.alert(of: started)?.body == "Great focus session! Long break: 20 min.")

        // A break whose end was noticed long after (the runner was down) starts nothing.
        h.wall.advance(to: long.endsAt.addingTimeInterval(3_600))
        #expect(try timer.settle() == .none)
        #expect(try timer.breakCounts() == BreakCounts(taken: 2, skipped: 0))
    }
}

/// Breaks in the scheduler's loop: "Break over" fires at the break's end through the same
/// path as "Tree planted!", exactly once, late once after a runner that was down.
struct FocusBreakRunnerTests {
    static let utc = TimeZone(identifier: "UTC")!

    @Test(.timeLimit(.minutes(1)))
    func breakOverFiresAtItsEndWithStartAndSkipAndTheIdleRunnerThenSleeps() async throws {
        let h = try FocusHarness()
        defer { h.cleanUp() }
        let notifier = RecordingNotifier()
        let scheduler = FocusRunnerTests.scheduler(h, notifier: notifier)
        let session = try h.timer.start()
        let loop = Task { await scheduler.run(waker: h.wall) }
        #expect(await h.wall.parked() == FocusRunnerTests.wake(h.at(1_500)))
        h.wall.advance(to: h.at(1_500))
        let planted = await notifier.nextPost()
        #expect(planted.id == session.reminderID)
        #expect(planted.body == "Great focus session! Break: 5 min.")
        #expect(planted.actions.map(\.label) == ["Plant another", "Skip Break"])
        // The break's end is the only wake.
        #expect(await h.wall.parked() == FocusRunnerTests.wake(h.at(1_800)))
        h.wall.advance(to: h.at(1_800))
        let over = await notifier.nextPost()
        #expect(over.id == "focus-break-1")
        #expect(over.title == "Break over: plant the next tree")
        #expect(over.actions.map(\.label) == ["Start", "Skip"])
        #expect(over.postedAt == h.at(1_800))
        #expect(await h.wall.parked() == nil)
        #expect(try h.timer.breakCounts() == BreakCounts(taken: 1, skipped: 0))

        // Start on "Break over" starts the next session.
        let started = try FocusFamily(timer: h.timer, icon: nil, liveAlert: false)
            .respond(to: NoteResponse(noteID: "focus-break-1", kind: .action(FocusTimer.startAction)), at: h.at(1_810))
        #expect(started)
        #expect(try h.timer.current().openSession?.lengthSeconds == 1_500)
        h.wall.shutdown()
        await loop.value
        #expect(notifier.posts.count == 2)
    }

    @Test(.timeLimit(.minutes(1)))
    func skipBreakOnTheCompletionAlertEndsTheBreakAndItsAlertNeverFires() throws {
        let h = try FocusHarness()
        defer { h.cleanUp() }
        _ = try FocusBreakTests.complete(h, h.timer)
        let family = FocusFamily(timer: h.timer, icon: nil, liveAlert: false)
        // An old session's alert does not end this break.
        #expect(try !family.respond(to: NoteResponse(noteID: "focus-99", kind: .action(FocusTimer.skipBreakAction)), at: h.at(1_510)))
        #expect(try family.respond(to: NoteResponse(noteID: "focus-1", kind: .action(FocusTimer.skipBreakAction)), at: h.at(1_510)))
        #expect(try h.timer.runningBreak() == nil)
        #expect(try h.store.pending().map(\.id) == ["focus-1"])
        #expect(try h.timer.breakCounts() == BreakCounts(taken: 0, skipped: 1))
    }

    @Test(.timeLimit(.minutes(1)))
    func aRunnerDownDuringTheBreakFiresBreakOverOnceLate() async throws {
        let h = try FocusHarness()
        defer { h.cleanUp() }
        let notifier = RecordingNotifier()
        _ = try h.timer.start()
        let first = FocusRunnerTests.scheduler(h, notifier: notifier)
        let loop = Task { await first.run(waker: h.wall) }
        #expect(await h.wall.parked() == FocusRunnerTests.wake(h.at(1_500)))
        h.wall.advance(to: h.at(1_500))
        #expect(await notifier.nextPost().title == "Tree planted!")
        #expect(await h.wall.parked() == FocusRunnerTests.wake(h.at(1_800)))
        h.wall.advance(to: h.at(1_600))
        h.wall.shutdown()
        await loop.value

        // Down until 10 minutes after the break's end; a new process, the same boot.
        let clock = ManualWallClock(now: h.at(2_400))
        let machine = ManualMachineClock(wall: clock, awake: h.machine.now().awakeMicros.seconds + 800)
        let store = try ReminderStore(path: h.store.path, schemas: [.focus])
        let timer = FocusTimer(store: store, clock: machine)
        let second = Scheduler(
            store: store,
            notifier: notifier,
            clock: clock,
            systemZone: { Self.utc },
            families: [FocusFamily(timer: timer, icon: nil, liveAlert: false)]
        )
        let again = Task { await second.run(waker: clock) }
        let over = await notifier.nextPost()
        #expect(over.title == "Break over: plant the next tree")
        #expect(over.postedAt == h.at(2_400))
        #expect(await clock.parked() == nil)
        // Recorded once, as fired late (the notifier shows how late from its due time).
        let ledger = try store.ledger(id: "focus-break-1")
        #expect(ledger.map(\.state) == ["posted"])
        #expect(ledger.first?.due == h.at(1_800))
        clock.advance(by: 3_600)
        clock.shutdown()
        await again.value
        #expect(notifier.posts.count == 2)
        #expect(try timer.breakCounts() == BreakCounts(taken: 1, skipped: 0))
    }
}

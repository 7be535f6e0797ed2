import ChimeCore
import ChimeFocus
import ChimeStore
import ChimeTesting
import Foundation
import Testing

/// The live focus alert in the scheduler's loop, on the injected clocks and the recording
/// notifier: posted once a minute (the whole minutes left) and on pause / resume, never per
/// second; its actions run the session (Give up asks first); the completion alert replaces it
/// under the same id.
struct FocusLiveAlertTests {
    static func scheduler(_ h: FocusHarness, notifier: RecordingNotifier) -> Scheduler {
        FocusRunnerTests.scheduler(h, notifier: notifier, live: true)
    }

    /// The live alerts among `posts` (the completion alert is "Tree planted!").
    static func live(_ posts: [Note]) -> [Note] { posts.filter { $0.category == FocusLiveAlert.category } }

    @Test(.timeLimit(.minutes(1)))
    func theLiveAlertIsUpdatedOnceAMinuteAndNeverPerSecond() async throws {
        let h = try FocusHarness()
        defer { h.cleanUp() }
        let notifier = RecordingNotifier()
        let scheduler = Self.scheduler(h, notifier: notifier)
        let session = try h.timer.start()
        let loop = Task { await scheduler.run(waker: h.wall) }

        // At once: the seedling, 25 min left, with Pause and Give up.
        let first = await notifier.nextPost()
        #expect(first.id == session.reminderID)
        #expect(first.title == "Focusing: 25 min left")
        #expect(first.body == "Tree stage 1 of 5, ends at 09:25.")
        #expect(first.icon == "/usr/share/chime/icons/tree-stage-1.svg")
        #expect(first.progress == 0)
        #expect(first.actions.map(\.key) == ["pause", "give-up"])
        #expect(first.actions.map(\.label) == ["Pause", "Give up"])
        #expect(first.transient)
        #expect(first.answerInstead == "Pause: chime focus pause. Give up: chime focus give-up --yes")
        // The next wake is the next whole minute left (24:00 left), not the next second.
        #expect(await h.wall.parked() == h.at(60))

        // Every second of the session passes, one at a time; the loop's wake-ups are counted.
        let waitsBefore = h.wall.waits
        var wakes: [Date] = []
        for second in 1...1_500 {
            let waits = h.wall.waits
            h.wall.advance(to: h.at(TimeInterval(second)))
            await h.wall.parked()
            wakes += Array(repeating: h.at(TimeInterval(second)), count: h.wall.waits - waits)
        }
        #expect(try h.timer.latest()?.state == .completed)
        let posts = notifier.posts
        let live = Self.live(posts)
        // One a minute: 25 min left at the start, then at 24:00 … 2:00 left, "less than a
        // minute" from 1:00 left (whole minutes rounded up: never less time than there is) …
        #expect(live.map(\.title) == (2...25).reversed().map { "Focusing: \($0) min left" } + ["Focusing: less than a minute left"])
        #expect(live.map(\.postedAt) == (0..<25).map { h.at(TimeInterval($0 * 60)) })
        #expect(live.map(\.progress) == (0..<25).map { $0 * 4 })
        // … the stage's icon changing at 20:00, 15:00, 10:00 and 5:00 left
        #expect(live.map(\.icon) == (1...5).flatMap { Array(repeating: "/usr/share/chime/icons/tree-stage-\($0).svg", count: 5) })
        #expect(live[5].body == "Tree stage 2 of 5, ends at 09:25.")
        #expect(Set(live.map(\.id)) == [session.reminderID])
        // … then the completion alert under the same id (it replaces the live one), once.
        #expect(posts.count == 26)
        #expect(posts.last?.title == "Tree planted!")
        #expect(posts.last?.id == session.reminderID)
        #expect(posts.last?.actions.map(\.key) == ["plant-another", "skip-break"])
        // The loop woke at the 24 whole minutes and around the end (the alert's look-ahead and
        // instant): none per second, none between the minutes; the live alert was never
        // withdrawn (it was replaced).
        #expect(wakes.count <= 24 + 2, "\(wakes)")
        #expect(Array(wakes.prefix(24)) == (1...24).map { h.at(TimeInterval($0 * 60)) })
        #expect(h.wall.waits - waitsBefore <= 24 + 3)
        #expect(notifier.withdrawals.isEmpty)
        #expect(await h.wall.parked() == FocusRunnerTests.wake(h.at(1_800)))
        h.wall.shutdown()
        await loop.value
    }

    @Test(.timeLimit(.minutes(1)))
    func pauseAndResumeUpdateTheAlertAndAPausedSessionWakesNothing() async throws {
        let h = try FocusHarness()
        defer { h.cleanUp() }
        let notifier = RecordingNotifier()
        let scheduler = Self.scheduler(h, notifier: notifier)
        let session = try h.timer.start(minutes: 10)
        let loop = Task { await scheduler.run(waker: h.wall) }
        #expect(await notifier.nextPost().title == "Focusing: 10 min left")
        // The next whole minute left (9:00 left).
        #expect(await h.wall.parked() == h.at(60))
        h.wall.advance(to: h.at(90))
        // Woken late (at 8:30 left): 9 min left, rounded up.
        #expect(await notifier.nextPost().title == "Focusing: 9 min left")
        #expect(await h.wall.parked() == h.at(120))
        // Pause from the alert: the runner's answer goes to the family, which pauses.
        notifier.respond(NoteResponse(noteID: session.reminderID, kind: .action("pause")))
        let paused = await notifier.nextPost()
        #expect(paused.id == session.reminderID)
        #expect(paused.title == "Paused: 08:30 left")
        #expect(paused.progress == 15)
        #expect(paused.actions.map(\.key) == ["resume", "give-up"])
        #expect(paused.icon == "/usr/share/chime/icons/tree-stage-1.svg")
        #expect(try h.timer.current().openSession?.state == .paused)
        // Paused: nothing to wake for, however long.
        #expect(await h.wall.parked() == nil)
        h.wall.advance(to: h.at(5_000))
        notifier.respond(NoteResponse(noteID: session.reminderID, kind: .action("resume")))
        let resumed = await notifier.nextPost()
        #expect(resumed.title == "Focusing: 9 min left")
        #expect(resumed.actions.map(\.key) == ["pause", "give-up"])
        #expect(await h.wall.parked() == h.at(5_000 + 30))
        // A poke that changes nothing (another command) posts nothing.
        h.wall.poke()
        #expect(await h.wall.parked() == h.at(5_030))
        // An old button (pause while active is fine; resume while active is not) changes nothing.
        notifier.respond(NoteResponse(noteID: session.reminderID, kind: .action("resume")))
        notifier.respond(NoteResponse(noteID: "focus-99", kind: .action("pause")))
        h.wall.poke()
        #expect(await h.wall.parked() == h.at(5_030))
        #expect(Self.live(notifier.posts).count == 4)
        h.wall.shutdown()
        await loop.value
    }

    @Test(.timeLimit(.minutes(1)))
    func giveUpFromTheAlertAsksFirstThenClosesItAndPlantAnotherStartsTheSameLength() async throws {
        let h = try FocusHarness()
        defer { h.cleanUp() }
        let notifier = RecordingNotifier()
        let scheduler = Self.scheduler(h, notifier: notifier)
        let first = try h.timer.start(minutes: 10)
        let loop = Task { await scheduler.run(waker: h.wall) }
        _ = await notifier.nextPost()
        h.wall.advance(to: h.at(60))
        _ = await notifier.nextPost()
        #expect(await h.wall.parked() == h.at(120))
        h.wall.advance(to: h.at(70))
        // The first Give up asks: the alert is replaced in place by the question.
        notifier.respond(NoteResponse(noteID: first.reminderID, kind: .action("give-up")))
        let asked = await notifier.nextPost()
        #expect(asked.id == first.reminderID)
        #expect(asked.title == "Give up? Press again to let the tree wither")
        #expect(asked.body == "9 min left. Keep going, or press Give up again within 10 s.")
        #expect(asked.actions.map(\.key) == ["keep-going", "give-up"])
        #expect(asked.actions.map(\.label) == ["Keep going", "Give up"])
        #expect(asked.category == FocusLiveAlert.category && asked.transient && asked.progress == 11)
        #expect(try h.timer.current().openSession?.state == .active)
        #expect(notifier.withdrawals.isEmpty)
        // The runner wakes at the window's end (before the next minute).
        #expect(await h.wall.parked() == h.at(70 + FocusLiveAlert.giveUpWindow))
        // The second, within the window: given up, the alert closed, nothing left to wake for.
        h.wall.advance(to: h.at(79))
        notifier.respond(NoteResponse(noteID: first.reminderID, kind: .action("give-up")))
        while notifier.withdrawals.isEmpty {
            await h.wall.parked()
            await Task.yield()
        }
        #expect(notifier.withdrawals == [first.reminderID])
        #expect(await h.wall.parked() == nil)
        let given = try #require(try h.timer.latest())
        #expect(given.state == .abandoned && given.endReason == .gaveUp)
        #expect(Self.live(notifier.posts).count == 3)

        // A full session with a label, then "Plant another" on its completion alert (the label kept).
        let second = try h.timer.start(minutes: 10, label: "Bob's thesis")
        h.wall.poke()
        #expect(await notifier.nextPost().id == second.reminderID)
        h.wall.advance(to: h.at(79 + 600))
        var planted = await notifier.nextPost()
        while planted.title != "Tree planted!" { planted = await notifier.nextPost() }
        #expect(planted.id == second.reminderID)
        #expect(
            planted.answerInstead
                == "Plant another: chime focus start --minutes 10 --label 'Bob'\\''s thesis'. Skip Break: chime focus skip"
        )
        #expect(await h.wall.parked() == FocusRunnerTests.wake(h.at(79 + 600 + 300)))
        notifier.respond(NoteResponse(noteID: second.reminderID, kind: .action("plant-another")))
        let third = await notifier.nextPost()
        #expect(third.title == "Focusing: 10 min left")
        let open = try #require(try h.timer.current().openSession)
        #expect(open.id == second.id + 1 && open.lengthSeconds == 600 && open.label == "Bob's thesis")
        #expect(third.id == open.reminderID)
        // The completed session's alert was replaced, never withdrawn.
        #expect(notifier.withdrawals == [first.reminderID])
        h.wall.shutdown()
        await loop.value
    }

    @Test(.timeLimit(.minutes(1)))
    func aRestartedRunnerShowsTheLiveAlertOnceAtTheStageTheSessionIsAt() async throws {
        let h = try FocusHarness()
        defer { h.cleanUp() }
        let notifier = RecordingNotifier()
        let session = try h.timer.start()
        let first = Self.scheduler(h, notifier: notifier)
        let loop = Task { await first.run(waker: h.wall) }
        #expect(await h.wall.parked() == h.at(60))
        h.wall.advance(to: h.at(60))
        #expect(await h.wall.parked() == h.at(120))
        h.wall.advance(to: h.at(119))
        h.wall.shutdown()
        await loop.value
        #expect(Self.live(notifier.posts).map(\.title) == ["Focusing: 25 min left", "Focusing: 24 min left"])
        // Stopped, the runner closed its live alert (its buttons would reach no one).
        #expect(notifier.withdrawals == [session.reminderID])
        h.wall.advance(to: h.at(700))

        // A new process (same boot) at 13:20 left: the alert once, at stage 3, then at 13:00 left.
        let wall = ManualWallClock(now: h.at(700))
        let machine = ManualMachineClock(wall: wall, awake: h.machine.now().awakeMicros.seconds)
        let store = try ReminderStore(path: h.store.path, schemas: [.focus])
        let again = RecordingNotifier()
        let second = Scheduler(
            store: store,
            notifier: again,
            clock: wall,
            systemZone: { FocusRunnerTests.utc },
            families: [
                FocusFamily(
                    timer: FocusTimer(store: store, clock: machine),
                    icon: nil,
                    stageIcon: FocusRunnerTests.stageIcon,
                    zone: { FocusRunnerTests.utc }
                )
            ]
        )
        let loop2 = Task { await second.run(waker: wall) }
        #expect(await wall.parked() == h.at(720))
        wall.poke()
        #expect(await wall.parked() == h.at(720))
        #expect(again.posts.map(\.title) == ["Focusing: 14 min left"])
        #expect(again.posts.first?.id == session.reminderID)
        #expect(again.posts.first?.icon == "/usr/share/chime/icons/tree-stage-3.svg")
        wall.advance(to: h.at(720))
        #expect(await wall.parked() == h.at(780))
        #expect(again.posts.map(\.title) == ["Focusing: 14 min left", "Focusing: 13 min left"])
        wall.shutdown()
        await loop2.value
    }

    @Test(.timeLimit(.minutes(1)))
    func withItsCompletionAlertCancelledTheSessionEndsWithTheLiveAlertClosed() async throws {
        let h = try FocusHarness()
        defer { h.cleanUp() }
        let notifier = RecordingNotifier()
        let scheduler = Self.scheduler(h, notifier: notifier)
        let session = try h.timer.start(minutes: 10)
        let loop = Task { await scheduler.run(waker: h.wall) }
        _ = await notifier.nextPost()
        #expect(await h.wall.parked() == h.at(60))
        // `chime cancel focus-1`: the session still completes, silently.
        _ = try h.store.cancel(id: session.reminderID, now: h.wall.now())
        h.wall.poke()
        for minute in 1...9 {
            #expect(await h.wall.parked() == h.at(TimeInterval(60 * minute)))
            h.wall.advance(to: h.at(TimeInterval(60 * minute)))
        }
        // No alert to fire, but the loop wakes at the end: the session completes, the live
        // alert is closed.
        #expect(await h.wall.parked() == h.at(600))
        h.wall.advance(to: h.at(600))
        while notifier.withdrawals.isEmpty {
            await h.wall.parked()
            await Task.yield()
        }
        #expect(notifier.withdrawals == [session.reminderID])
        #expect(try h.timer.latest()?.state == .completed)
        #expect(!notifier.posts.contains { $0.title == "Tree planted!" })
        #expect(Self.live(notifier.posts).count == 10)
        #expect(await h.wall.parked() == FocusRunnerTests.wake(h.at(900)))
        h.wall.shutdown()
        await loop.value
    }

    @Test(.timeLimit(.minutes(1)))
    func keepGoingOrTheWindowsEndPutsTheAlertBackAndALatePressAsksAgain() async throws {
        let h = try FocusHarness()
        defer { h.cleanUp() }
        let notifier = RecordingNotifier()
        let scheduler = Self.scheduler(h, notifier: notifier)
        let session = try h.timer.start(minutes: 10)
        let loop = Task { await scheduler.run(waker: h.wall) }
        let normal = await notifier.nextPost()
        #expect(normal.title == "Focusing: 10 min left")
        h.wall.advance(to: h.at(5))
        let giveUp = NoteResponse(noteID: session.reminderID, kind: .action("give-up"))

        // Keep going: the alert as it was, and the next wake the next minute again.
        notifier.respond(giveUp)
        #expect(await notifier.nextPost().title == FocusLiveAlert.giveUpQuestion)
        #expect(await h.wall.parked() == h.at(15))
        h.wall.advance(to: h.at(8))
        notifier.respond(NoteResponse(noteID: session.reminderID, kind: .action("keep-going")))
        let back = await notifier.nextPost()
        #expect(back.title == "Focusing: 10 min left" && back.actions == normal.actions && back.body == normal.body)
        #expect(await h.wall.parked() == h.at(60))
        // A Give up after Keep going asks again (it does not count as the second press).
        h.wall.advance(to: h.at(9))
        notifier.respond(giveUp)
        #expect(await notifier.nextPost().title == FocusLiveAlert.giveUpQuestion)
        #expect(await h.wall.parked() == h.at(19))

        // No second press: at the window's end the runner wakes and puts the alert back.
        h.wall.advance(to: h.at(19))
        #expect(await notifier.nextPost().title == "Focusing: 10 min left")
        #expect(await h.wall.parked() == h.at(60))
        // A Give up after the window asks again; the session is still active throughout.
        h.wall.advance(to: h.at(30))
        notifier.respond(giveUp)
        #expect(await notifier.nextPost().title == FocusLiveAlert.giveUpQuestion)
        #expect(try h.timer.current().openSession?.state == .active)
        h.wall.advance(to: h.at(41))
        #expect(await notifier.nextPost().title == "Focusing: 10 min left")
        // Still nothing between the minutes; nothing withdrawn, nothing given up.
        #expect(await h.wall.parked() == h.at(60))
        #expect(Self.live(notifier.posts).count == 7)
        #expect(notifier.withdrawals.isEmpty)
        #expect(try h.timer.current().openSession?.state == .active)
        h.wall.shutdown()
        await loop.value
    }

    @Test(.timeLimit(.minutes(1)))
    func aPausedSessionsGiveUpAsksTooAndKeepGoingLeavesItPaused() async throws {
        let h = try FocusHarness()
        defer { h.cleanUp() }
        let notifier = RecordingNotifier()
        let scheduler = Self.scheduler(h, notifier: notifier)
        let session = try h.timer.start(minutes: 10)
        let loop = Task { await scheduler.run(waker: h.wall) }
        _ = await notifier.nextPost()
        h.wall.advance(to: h.at(30))
        notifier.respond(NoteResponse(noteID: session.reminderID, kind: .action("pause")))
        #expect(await notifier.nextPost().title == "Paused: 09:30 left")
        #expect(await h.wall.parked() == nil)
        notifier.respond(NoteResponse(noteID: session.reminderID, kind: .action("give-up")))
        let asked = await notifier.nextPost()
        #expect(asked.title == FocusLiveAlert.giveUpQuestion)
        #expect(asked.body == "Paused: 09:30 left. Keep going, or press Give up again within 10 s.")
        // Paused, the only wake is the window's end.
        #expect(await h.wall.parked() == h.at(40))
        notifier.respond(NoteResponse(noteID: session.reminderID, kind: .action("keep-going")))
        #expect(await notifier.nextPost().title == "Paused: 09:30 left")
        #expect(await h.wall.parked() == nil)
        #expect(try h.timer.current().openSession?.state == .paused)
        // An answer to another session's alert, or Keep going with nothing asked, changes nothing.
        notifier.respond(NoteResponse(noteID: "focus-99", kind: .action("give-up")))
        notifier.respond(NoteResponse(noteID: session.reminderID, kind: .action("keep-going")))
        h.wall.poke()
        #expect(await h.wall.parked() == nil)
        #expect(Self.live(notifier.posts).count == 4)
        h.wall.shutdown()
        await loop.value
    }

    @Test
    func minutesLeftAreRoundedUpAndChangeOnWholeMinutes() throws {
        #expect(FocusLiveAlert.minutesLeft(remainingSeconds: 1_500) == "25 min left")
        #expect(FocusLiveAlert.minutesLeft(remainingSeconds: 420) == "7 min left")
        #expect(FocusLiveAlert.minutesLeft(remainingSeconds: 373) == "7 min left")
        #expect(FocusLiveAlert.minutesLeft(remainingSeconds: 361) == "7 min left")
        #expect(FocusLiveAlert.minutesLeft(remainingSeconds: 360) == "6 min left")
        #expect(FocusLiveAlert.minutesLeft(remainingSeconds: 61) == "2 min left")
        #expect(FocusLiveAlert.minutesLeft(remainingSeconds: 60) == "less than a minute left")
        #expect(FocusLiveAlert.minutesLeft(remainingSeconds: 1) == "less than a minute left")
        let h = try FocusHarness()
        defer { h.cleanUp() }
        let session = try h.timer.start()
        #expect(FocusLiveAlert.nextMinuteChange(session, at: h.machine.now()) == h.at(60))
        h.wall.advance(to: h.at(59.5))
        #expect(FocusLiveAlert.nextMinuteChange(session, at: h.machine.now()) == h.at(60))
        #expect(FocusLiveAlert.progress(session, at: h.machine.now()) == 3)
        h.wall.advance(to: h.at(60))
        #expect(FocusLiveAlert.nextMinuteChange(session, at: h.machine.now()) == h.at(120))
        h.wall.advance(to: h.at(1_441))
        // In the last minute: the end.
        #expect(FocusLiveAlert.nextMinuteChange(session, at: h.machine.now()) == h.at(1_500))
        h.wall.advance(to: h.at(1_500))
        #expect(FocusLiveAlert.nextMinuteChange(session, at: h.machine.now()) == nil)
        #expect(FocusLiveAlert.progress(session, at: h.machine.now()) == 100)
    }

    @Test
    func stageChangesFallOnTheSeedsBoundaries() throws {
        let h = try FocusHarness()
        defer { h.cleanUp() }
        let session = try h.timer.start()
        let time = h.machine.now()
        #expect(FocusLiveAlert.nextStageChange(session, at: time) == h.at(300))
        h.wall.advance(to: h.at(299.5))
        #expect(FocusLiveAlert.nextStageChange(session, at: h.machine.now()) == h.at(300))
        h.wall.advance(to: h.at(300))
        #expect(session.stage(at: h.machine.now()) == 2)
        #expect(FocusLiveAlert.nextStageChange(session, at: h.machine.now()) == h.at(600))
        h.wall.advance(to: h.at(1_200))
        #expect(session.stage(at: h.machine.now()) == 5)
        // At stage 5, the end.
        #expect(FocusLiveAlert.nextStageChange(session, at: h.machine.now()) == h.at(1_500))
        // A 13-minute session: stage 2 at 2:36 elapsed (⌈780 ÷ 5⌉ = 156 s).
        let other = FocusSession(
            id: 9,
            state: .active,
            lengthSeconds: 780,
            startedAt: h.at(0),
            segment: .init(boot: time.boot, awakeMicros: time.awakeMicros, wall: h.at(0))
        )
        #expect(FocusLiveAlert.nextStageChange(other, at: time) == h.at(156))
        #expect(TreeStage.stage(remainingSeconds: 780 - 155, lengthSeconds: 780) == 1)
        #expect(TreeStage.stage(remainingSeconds: 780 - 156, lengthSeconds: 780) == 2)
    }
}

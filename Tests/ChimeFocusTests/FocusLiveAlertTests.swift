import ChimeCore
import ChimeFocus
import ChimeStore
import ChimeTesting
import Foundation
import Testing

/// The live focus alert in the scheduler's loop, on the injected clocks and the recording
/// notifier: posted once per stage change and on pause / resume, never per second; its actions
/// run the session; the completion alert replaces it under the same id.
struct FocusLiveAlertTests {
    static func scheduler(_ h: FocusHarness, notifier: RecordingNotifier) -> Scheduler {
        FocusRunnerTests.scheduler(h, notifier: notifier, live: true)
    }

    /// The live alerts among `posts` (the completion alert is "Tree planted!").
    static func live(_ posts: [Note]) -> [Note] { posts.filter { $0.category == FocusLiveAlert.category } }

    @Test(.timeLimit(.minutes(1)))
    func theLiveAlertIsUpdatedOncePerStageChangeAndNeverPerSecond() async throws {
        let h = try FocusHarness()
        defer { h.cleanUp() }
        let notifier = RecordingNotifier()
        let scheduler = Self.scheduler(h, notifier: notifier)
        let session = try h.timer.start()
        let loop = Task { await scheduler.run(waker: h.wall) }

        // At once: the seedling, 25:00 left, with Pause and Give up.
        let first = await notifier.nextPost()
        #expect(first.id == session.reminderID)
        #expect(first.title == "Focusing: 25:00 left")
        #expect(first.body == "Tree stage 1 of 5, ends at 09:25.")
        #expect(first.icon == "/usr/share/chime/icons/tree-stage-1.svg")
        #expect(first.actions.map(\.key) == ["pause", "give-up"])
        #expect(first.actions.map(\.label) == ["Pause", "Give up"])
        #expect(first.transient)
        #expect(first.answerInstead == "Pause: chime focus pause. Give up: chime focus give-up --yes")
        // The next wake is the next stage change (20:00 left), not the next second.
        #expect(await h.wall.parked() == h.at(300))

        // Every second of the session passes, one at a time.
        let waitsBefore = h.wall.waits
        for second in 1...1_500 {
            h.wall.advance(to: h.at(TimeInterval(second)))
            await h.wall.parked()
        }
        #expect(try h.timer.latest()?.state == .completed)
        let posts = notifier.posts
        let live = Self.live(posts)
        // One per stage (the first at the start, then at 20:00, 15:00, 10:00 and 5:00 left) …
        #expect(
            live.map(\.title) == [
                "Focusing: 25:00 left", "Focusing: 20:00 left", "Focusing: 15:00 left", "Focusing: 10:00 left", "Focusing: 05:00 left",
            ]
        )
        #expect(live.map(\.postedAt) == [h.at(0), h.at(300), h.at(600), h.at(900), h.at(1_200)])
        #expect(live.map(\.icon) == (1...5).map { "/usr/share/chime/icons/tree-stage-\($0).svg" })
        #expect(Set(live.map(\.id)) == [session.reminderID])
        // … then the completion alert under the same id (it replaces the live one), once.
        #expect(posts.count == 6)
        #expect(posts.last?.title == "Tree planted!")
        #expect(posts.last?.id == session.reminderID)
        #expect(posts.last?.actions.map(\.key) == ["plant-another"])
        // The loop woke at the four stage changes and at the alert's look-ahead and instant:
        // none per second, and the live alert was never withdrawn (it was replaced).
        #expect(h.wall.waits - waitsBefore <= 8)
        #expect(notifier.withdrawals.isEmpty)
        #expect(await h.wall.parked() == nil)
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
        #expect(await notifier.nextPost().title == "Focusing: 10:00 left")
        // Stages of a 10-minute session change every 2 minutes.
        #expect(await h.wall.parked() == h.at(120))
        h.wall.advance(to: h.at(90))
        // Pause from the alert: the runner's answer goes to the family, which pauses.
        notifier.respond(NoteResponse(noteID: session.reminderID, kind: .action("pause")))
        let paused = await notifier.nextPost()
        #expect(paused.id == session.reminderID)
        #expect(paused.title == "Paused: 08:30 left")
        #expect(paused.actions.map(\.key) == ["resume", "give-up"])
        #expect(paused.icon == "/usr/share/chime/icons/tree-stage-1.svg")
        #expect(try h.timer.current().openSession?.state == .paused)
        // Paused: nothing to wake for, however long.
        #expect(await h.wall.parked() == nil)
        h.wall.advance(to: h.at(5_000))
        notifier.respond(NoteResponse(noteID: session.reminderID, kind: .action("resume")))
        let resumed = await notifier.nextPost()
        #expect(resumed.title == "Focusing: 08:30 left")
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
        #expect(Self.live(notifier.posts).count == 3)
        h.wall.shutdown()
        await loop.value
    }

    @Test(.timeLimit(.minutes(1)))
    func giveUpFromTheAlertClosesItAndPlantAnotherStartsTheSameLength() async throws {
        let h = try FocusHarness()
        defer { h.cleanUp() }
        let notifier = RecordingNotifier()
        let scheduler = Self.scheduler(h, notifier: notifier)
        let first = try h.timer.start(minutes: 10)
        let loop = Task { await scheduler.run(waker: h.wall) }
        _ = await notifier.nextPost()
        h.wall.advance(to: h.at(60))
        notifier.respond(NoteResponse(noteID: first.reminderID, kind: .action("give-up")))
        // Closed, not replaced; the session is given up; nothing left to wake for.
        while notifier.withdrawals.isEmpty {
            await h.wall.parked()
            await Task.yield()
        }
        #expect(notifier.withdrawals == [first.reminderID])
        #expect(await h.wall.parked() == nil)
        let given = try #require(try h.timer.latest())
        #expect(given.state == .abandoned && given.endReason == .gaveUp)
        #expect(Self.live(notifier.posts).count == 1)

        // A full session, then "Plant another" on its completion alert.
        let second = try h.timer.start(minutes: 10)
        h.wall.poke()
        #expect(await notifier.nextPost().id == second.reminderID)
        h.wall.advance(to: h.at(60 + 600))
        var planted = await notifier.nextPost()
        while planted.title != "Tree planted!" { planted = await notifier.nextPost() }
        #expect(planted.id == second.reminderID)
        #expect(planted.answerInstead == "Plant another: chime focus start --minutes 10")
        #expect(await h.wall.parked() == nil)
        notifier.respond(NoteResponse(noteID: second.reminderID, kind: .action("plant-another")))
        let third = await notifier.nextPost()
        #expect(third.title == "Focusing: 10:00 left")
        let open = try #require(try h.timer.current().openSession)
        #expect(open.id == second.id + 1 && open.lengthSeconds == 600)
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
        #expect(await h.wall.parked() == h.at(300))
        h.wall.advance(to: h.at(300))
        #expect(await h.wall.parked() == h.at(600))
        h.wall.advance(to: h.at(599))
        h.wall.shutdown()
        await loop.value
        #expect(Self.live(notifier.posts).map(\.title) == ["Focusing: 25:00 left", "Focusing: 20:00 left"])
        // Stopped, the runner closed its live alert (its buttons would reach no one).
        #expect(notifier.withdrawals == [session.reminderID])
        h.wall.advance(to: h.at(700))

        // A new process (same boot) at 13:20 left: the alert once, at stage 3, then stage 4 at 10:00.
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
        #expect(await wall.parked() == h.at(900))
        wall.poke()
        #expect(await wall.parked() == h.at(900))
        #expect(again.posts.map(\.title) == ["Focusing: 13:20 left"])
        #expect(again.posts.first?.id == session.reminderID)
        #expect(again.posts.first?.icon == "/usr/share/chime/icons/tree-stage-3.svg")
        wall.advance(to: h.at(900))
        #expect(await wall.parked() == h.at(1_200))
        #expect(again.posts.map(\.title) == ["Focusing: 13:20 left", "Focusing: 10:00 left"])
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
        #expect(await h.wall.parked() == h.at(120))
        // `chime cancel focus-1`: the session still completes, silently.
        _ = try h.store.cancel(id: session.reminderID, now: h.wall.now())
        h.wall.poke()
        for stage in 1...4 {
            #expect(await h.wall.parked() == h.at(TimeInterval(120 * stage)))
            h.wall.advance(to: h.at(TimeInterval(120 * stage)))
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
        #expect(Self.live(notifier.posts).count == 5)
        #expect(await h.wall.parked() == nil)
        h.wall.shutdown()
        await loop.value
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

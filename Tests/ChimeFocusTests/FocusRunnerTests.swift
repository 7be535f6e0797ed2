import ChimeCore
import ChimeFocus
import ChimeStore
import ChimeTesting
import Foundation
import Testing

/// Focus sessions in the scheduler's loop (what the runner runs), on the injected clocks: the
/// alert fires at the end of focus time, through the scheduler, exactly once.
struct FocusRunnerTests {
    static let utc = TimeZone(identifier: "UTC")!
    static let icon = "/usr/share/chime/icons/tree-stage-5.svg"

    /// The scheduler with the focus family, on the harness's store and clocks. These tests are
    /// about the completion alert: the live alert is off (`FocusLiveAlertTests` has it on).
    static func scheduler(_ h: FocusHarness, notifier: RecordingNotifier, timer: FocusTimer? = nil, live: Bool = false) -> Scheduler {
        Scheduler(
            store: h.store,
            notifier: notifier,
            clock: h.wall,
            systemZone: { utc },
            families: [FocusFamily(timer: timer ?? h.timer, icon: icon, liveAlert: live, stageIcon: stageIcon, zone: { utc })]
        )
    }

    /// The stage icons the tests expect (as FocusIcons would find them installed).
    static let stageIcon: @Sendable (Int) -> String? = { "/usr/share/chime/icons/tree-stage-\($0).svg" }

    /// The wake for an alert due at `instant`: the scheduler's look-ahead before it.
    static func wake(_ instant: Date) -> Date { instant.addingTimeInterval(-0.025) }

    @Test(.timeLimit(.minutes(1)))
    func theAlertFiresAtTheEndWithTheGrownTreeAndTheSessionCompletes() async throws {
        let h = try FocusHarness()
        defer { h.cleanUp() }
        let notifier = RecordingNotifier()
        let scheduler = Self.scheduler(h, notifier: notifier)
        let session = try h.timer.start()
        let loop = Task { await scheduler.run(waker: h.wall) }
        #expect(await h.wall.parked() == Self.wake(h.at(1_500)))

        h.wall.advance(to: h.at(1_500))
        let note = await notifier.nextPost()
        #expect(note.id == session.reminderID)
        #expect(note.title == "Tree planted!")
        #expect(note.body == "Great focus session! Break: 5 min.")
        #expect(note.icon == Self.icon)
        #expect(note.category == "x-chime.focus")
        #expect(note.postedAt == h.at(1_500))
        // Right after the post, the loop settles the session: completed, nothing left to wait for.
        #expect(await h.wall.parked() == Self.wake(h.at(1_800)))  // the break's end
        #expect(try h.storedState(session.id) == "completed")
        let done = try #require(try h.timer.latest())
        #expect(done.state == .completed)
        #expect(done.endedAt == h.at(1_500))
        #expect(done.focusMicros == 1_500_000_000)
        #expect(try h.store.ledger(id: session.reminderID).map(\.state) == ["posted"])

        h.wall.shutdown()
        await loop.value
        #expect(notifier.posts.count == 1)
    }

    @Test(.timeLimit(.minutes(1)))
    func aSuspendMidSessionMovesTheAlertInsteadOfFiringItOnResume() async throws {
        let h = try FocusHarness()
        defer { h.cleanUp() }
        let notifier = RecordingNotifier()
        let scheduler = Self.scheduler(h, notifier: notifier)
        _ = try h.timer.start()
        let loop = Task { await scheduler.run(waker: h.wall) }
        #expect(await h.wall.parked() == Self.wake(h.at(1_500)))
        h.wall.advance(to: h.at(600))
        // Asleep for an hour, past the alert's old instant: on resume nothing fires; it moves.
        h.machine.suspend(for: 3_600)
        #expect(await h.wall.parked() == Self.wake(h.at(600 + 3_600 + 900)))
        #expect(notifier.posts.isEmpty)
        #expect(try h.timer.current().openSession?.stage(at: h.machine.now()) == 3)

        h.wall.advance(to: h.at(600 + 3_600 + 900))
        let note = await notifier.nextPost()
        #expect(note.title == "Tree planted!")
        #expect(note.postedAt == h.at(5_100))
        #expect(await h.wall.parked() == Self.wake(h.at(5_100 + 300)))
        #expect(try h.timer.latest()?.state == .completed)
        h.wall.shutdown()
        await loop.value
    }

    @Test(.timeLimit(.minutes(1)))
    func pauseAndResumeFromTheCLIMoveTheAlertInTheRunningLoop() async throws {
        let h = try FocusHarness()
        defer { h.cleanUp() }
        let notifier = RecordingNotifier()
        let scheduler = Self.scheduler(h, notifier: notifier)
        _ = try h.timer.start()
        let loop = Task { await scheduler.run(waker: h.wall) }
        #expect(await h.wall.parked() == Self.wake(h.at(1_500)))
        h.wall.advance(to: h.at(1_000))
        _ = try h.timer.pause()
        h.wall.poke()
        #expect(await h.wall.parked() == nil)
        // Paused past the old end: nothing fires.
        h.wall.advance(to: h.at(3_000))
        #expect(notifier.posts.isEmpty)
        _ = try h.timer.resume()
        h.wall.poke()
        #expect(await h.wall.parked() == Self.wake(h.at(3_500)))
        h.wall.advance(to: h.at(3_500))
        #expect(await notifier.nextPost().postedAt == h.at(3_500))
        h.wall.shutdown()
        await loop.value
        #expect(notifier.posts.count == 1)
    }

    @Test(.timeLimit(.minutes(1)))
    func givingUpJustBeforeTheEndCancelsTheStagedAlert() async throws {
        let h = try FocusHarness()
        defer { h.cleanUp() }
        let notifier = RecordingNotifier()
        let scheduler = Self.scheduler(h, notifier: notifier)
        let session = try h.timer.start()
        let loop = Task { await scheduler.run(waker: h.wall) }
        #expect(await h.wall.parked() == Self.wake(h.at(1_500)))
        // The look-ahead wake records the alert as due, then parks until its instant.
        h.wall.advance(to: Self.wake(h.at(1_500)))
        #expect(await h.wall.parked() == h.at(1_500))
        #expect(try h.store.ledger(id: session.reminderID).map(\.state) == ["due"])
        h.wall.advance(to: h.at(1_499.99))
        _ = try h.timer.giveUp()
        h.wall.poke()
        #expect(await h.wall.parked() == nil)
        h.wall.advance(to: h.at(1_600))
        h.wall.shutdown()
        await loop.value
        #expect(notifier.posts.isEmpty)
        #expect(try h.store.ledger(id: session.reminderID).map(\.state) == ["cancelled"])
        #expect(try h.timer.latest()?.state == .abandoned)
    }

    @Test(.timeLimit(.minutes(1)))
    func aRunnerRestartedInTheSameBootFiresTheAlertOnceAtTheSameEnd() async throws {
        let h = try FocusHarness()
        defer { h.cleanUp() }
        let notifier = RecordingNotifier()
        _ = try h.timer.start()
        let first = Self.scheduler(h, notifier: notifier)
        let loop = Task { await first.run(waker: h.wall) }
        #expect(await h.wall.parked() == Self.wake(h.at(1_500)))
        h.wall.advance(to: h.at(700))
        h.wall.shutdown()
        await loop.value

        // A new process: its own store connection and timer, the same boot.
        let wall = h.wall
        let store = try ReminderStore(path: h.store.path, schemas: [.focus])
        let clock = ManualWallClock(now: wall.now())
        let machine = ManualMachineClock(wall: clock, awake: h.machine.now().awakeMicros.seconds)
        let timer = FocusTimer(store: store, clock: machine)
        let second = Scheduler(
            store: store,
            notifier: notifier,
            clock: clock,
            systemZone: { Self.utc },
            families: [FocusFamily(timer: timer, icon: nil, liveAlert: false)]
        )
        let again = Task { await second.run(waker: clock) }
        #expect(await clock.parked() == Self.wake(h.at(1_500)))
        clock.advance(to: h.at(1_500))
        #expect(await notifier.nextPost().title == "Tree planted!")
        #expect(await clock.parked() == Self.wake(h.at(1_800)))
        #expect(try h.storedState(1) == "completed")
        clock.shutdown()
        await again.value
        #expect(notifier.posts.count == 1)
    }

    @Test(.timeLimit(.minutes(1)))
    func afterARebootTheRunnerAbandonsTheSessionAndNeverFiresItsAlert() async throws {
        let h = try FocusHarness()
        defer { h.cleanUp() }
        let notifier = RecordingNotifier()
        let session = try h.timer.start()
        h.wall.advance(to: h.at(600))
        // Down for an hour; the runner starts with the new boot.
        h.machine.reboot(downFor: 3_600)
        let scheduler = Self.scheduler(h, notifier: notifier)
        let loop = Task { await scheduler.run(waker: h.wall) }
        #expect(await h.wall.parked() == nil)
        h.wall.advance(by: 7_200)
        h.wall.shutdown()
        await loop.value
        #expect(notifier.posts.isEmpty)
        let abandoned = try #require(try h.timer.latest())
        #expect(abandoned.id == session.id)
        #expect(abandoned.state == .abandoned)
        #expect(abandoned.endReason == .restarted)
    }
}

extension Int64 {
    /// Microseconds as seconds.
    var seconds: TimeInterval { TimeInterval(self) / 1_000_000 }
}

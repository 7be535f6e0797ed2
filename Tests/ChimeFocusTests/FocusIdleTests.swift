import ChimeCore
import ChimeFocus
import ChimeStore
import ChimeTesting
import Foundation
import Synchronization
import Testing

/// An idle source the test speaks for: it records what the family asks (watch, unwatch) and
/// tells the family what the test says, at once, on the test's thread.
final class ScriptedIdleSource: IdleSource {
    let name = "scripted"
    private struct State {
        var handler: (@Sendable (IdleEvent) -> Void)?
        var thresholds: [Duration] = []
        var unwatches = 0
    }
    private let state = Mutex(State())

    var watching: Bool { state.withLock { $0.handler != nil } }
    var thresholds: [Duration] { state.withLock { $0.thresholds } }
    var unwatches: Int { state.withLock { $0.unwatches } }

    func watch(threshold: Duration, handler: @escaping @Sendable (IdleEvent) -> Void) {
        state.withLock {
            $0.handler = handler
            $0.thresholds.append(threshold)
        }
    }

    func unwatch() {
        state.withLock {
            $0.handler = nil
            $0.unwatches += 1
        }
    }

    /// Says `event` to the family (only while it watches, as a real source).
    func say(_ event: IdleEvent) {
        state.withLock { $0.handler }?(event)
    }
}

/// `[focus] idle_pause` and `wait_for_activity` on a real store with the injected clocks and a
/// scripted idle source: idleness pauses the active session back to when it began, the person
/// back is asked "Paused while you were away 12 min: resume?", and a break that ends while they
/// are away starts the next session only when they are back.
struct FocusIdleTests {
    static func family(_ h: FocusHarness, timer: FocusTimer? = nil, idle: ScriptedIdleSource, pause: Int64? = 300) -> FocusFamily {
        let family = FocusFamily(
            timer: timer ?? h.timer,
            icon: FocusRunnerTests.icon,
            liveAlert: true,
            stageIcon: FocusRunnerTests.stageIcon,
            zone: { FocusRunnerTests.utc },
            idle: idle,
            idleSettings: FocusIdle(pauseSeconds: pause)
        )
        family.connect(poke: { h.wall.poke() })
        return family
    }

    @Test func idlenessPausesTheActiveSessionBackToWhenItBeganAndRecordsWhy() throws {
        let h = try FocusHarness()
        defer { h.cleanUp() }
        let session = try h.timer.start()
        h.wall.advance(to: h.at(600))
        // Idle for 4 minutes, said at 10:00 into the session: paused at 6:00.
        let paused = try #require(try h.timer.pauseForIdle(idleMicros: 240_000_000))
        #expect(paused.id == session.id)
        #expect(paused.state == .paused)
        #expect(paused.pausedAt == h.at(360))
        #expect(paused.focusMicros == 360_000_000)
        #expect(paused.remainingSeconds(at: h.machine.now()) == 1_140)
        #expect(paused.pauseReason == .idle)
        #expect(paused.idlePauses == 1)
        #expect(try h.timer.current().openSession == paused)
        // Its alert is cancelled, as a pause's is.
        #expect(try h.alert(of: session) == nil)
        // Already paused: nothing more.
        #expect(try h.timer.pauseForIdle(idleMicros: 1) == nil)

        // Resumed at 15:00: the 9 minutes from 6:00 were paused time; the reason goes.
        h.wall.advance(to: h.at(900))
        let resumed = try h.timer.resume()
        #expect(resumed.pausedMicros == 540_000_000)
        #expect(resumed.pauseReason == nil)
        #expect(resumed.idlePauses == 1)
        // Idleness said longer than the session ran since the resume goes back to the resume only.
        h.wall.advance(to: h.at(960))
        let again = try #require(try h.timer.pauseForIdle(idleMicros: 600_000_000))
        #expect(again.pausedAt == h.at(900))
        #expect(again.focusMicros == 360_000_000)
        #expect(again.idlePauses == 2)
        // The person's own pause is not an idle one.
        _ = try h.timer.resume()
        #expect(try h.timer.pause().pauseReason == nil)
        #expect(try h.timer.current().openSession?.idlePauses == 2)
    }

    @Test(.timeLimit(.minutes(1)))
    func awayDuringASessionPausesItAndBackAsksToResumeOnTheLiveAlertWithoutWakingTheRunnerBetween() async throws {
        let h = try FocusHarness()
        defer { h.cleanUp() }
        let idle = ScriptedIdleSource()
        let notifier = RecordingNotifier()
        let family = Self.family(h, idle: idle)
        let scheduler = Scheduler(
            store: h.store,
            notifier: notifier,
            clock: h.wall,
            systemZone: { FocusRunnerTests.utc },
            families: [family]
        )
        let loop = Task { await scheduler.run(waker: h.wall) }
        // No session: the source is not watched (a polling source polls nothing).
        #expect(await h.wall.parked() == nil)
        #expect(!idle.watching)

        let session = try h.timer.start()
        h.wall.poke()
        #expect(await notifier.nextPost().title == "Focusing: 25 min left")
        #expect(idle.watching)
        #expect(idle.thresholds == [.seconds(300)])
        // Watching adds no wake: the next is the live alert's next minute.
        #expect(await h.wall.parked() == h.at(60))
        h.wall.advance(to: h.at(420))
        #expect(await notifier.nextPost().title == "Focusing: 18 min left")
        #expect(await h.wall.parked() == h.at(480))

        // Idle for 5 minutes at 7:00: paused back to 2:00 (23:00 left), the alert says so.
        idle.say(.idle(idleMicros: 300_000_000))
        let paused = await notifier.nextPost()
        #expect(paused.title == "Paused: 23:00 left")
        let stored = try #require(try h.timer.current().openSession)
        #expect(stored.state == .paused && stored.pauseReason == .idle && stored.pausedAt == h.at(120))
        // Away: nothing to wake for, however long; still watched, to hear them come back.
        #expect(await h.wall.parked() == nil)
        let waits = h.wall.waits
        h.wall.advance(to: h.at(840))
        #expect(idle.watching)

        // Back at 14:00, 12 minutes after the idleness began: the live alert asks.
        idle.say(.active)
        let back = await notifier.nextPost()
        #expect(back.id == session.reminderID)
        #expect(back.title == "Paused while you were away 12 min: resume?")
        #expect(back.body == "Tree stage 1 of 5, 23:00 left.")
        #expect(back.actions.map(\.key) == ["resume", "give-up"])
        #expect(back.actions.map(\.label) == ["Resume", "Give up"])
        #expect(back.answerInstead == "Resume: chime focus resume. Give up: chime focus give-up --yes")
        #expect(await h.wall.parked() == nil)
        #expect(h.wall.waits - waits <= 2)

        // Resume from it: the session goes on from 23:00 left.
        notifier.respond(NoteResponse(noteID: session.reminderID, kind: .action("resume")))
        let resumed = await notifier.nextPost()
        #expect(resumed.title == "Focusing: 23 min left")
        let active = try #require(try h.timer.current().openSession)
        #expect(active.state == .active && active.pausedMicros == 720_000_000 && active.idlePauses == 1)
        #expect(idle.watching)

        // Given up: nothing to watch for.
        _ = try h.timer.giveUp()
        h.wall.poke()
        while idle.watching { await h.wall.parked() }
        #expect(idle.unwatches == 1)
        h.wall.shutdown()
        await loop.value
    }

    @Test(.timeLimit(.minutes(1)))
    func withoutALiveAlertTheReturnIsAnAlertOfItsOwnOnce() async throws {
        let h = try FocusHarness()
        defer { h.cleanUp() }
        let idle = ScriptedIdleSource()
        let notifier = RecordingNotifier()
        let family = FocusFamily(
            timer: h.timer,
            icon: FocusRunnerTests.icon,
            liveAlert: false,
            zone: { FocusRunnerTests.utc },
            idle: idle,
            idleSettings: FocusIdle(pauseSeconds: 300)
        )
        family.connect(poke: { h.wall.poke() })
        let scheduler = Scheduler(
            store: h.store,
            notifier: notifier,
            clock: h.wall,
            systemZone: { FocusRunnerTests.utc },
            families: [family]
        )
        let session = try h.timer.start()
        let loop = Task { await scheduler.run(waker: h.wall) }
        #expect(await h.wall.parked() == FocusRunnerTests.wake(h.at(1_500)))
        h.wall.advance(to: h.at(600))
        idle.say(.idle(idleMicros: 300_000_000))
        #expect(await h.wall.parked() == nil)
        h.wall.advance(to: h.at(900))
        idle.say(.active)
        let back = await notifier.nextPost()
        #expect(back.id == session.reminderID)
        #expect(back.title == "Paused while you were away 10 min: resume?")
        #expect(back.actions.map(\.key) == ["resume", "give-up"])
        h.wall.poke()
        #expect(await h.wall.parked() == nil)
        #expect(notifier.posts.count == 1)
        h.wall.shutdown()
        await loop.value
    }

    @Test(.timeLimit(.minutes(1)))
    func aRunnerRestartedAfterThePersonIsBackAsksTheSameFromTheStore() async throws {
        let h = try FocusHarness()
        defer { h.cleanUp() }
        let idle = ScriptedIdleSource()
        let notifier = RecordingNotifier()
        let family = Self.family(h, idle: idle)
        let scheduler = Scheduler(
            store: h.store,
            notifier: notifier,
            clock: h.wall,
            systemZone: { FocusRunnerTests.utc },
            families: [family]
        )
        let session = try h.timer.start()
        let loop = Task { await scheduler.run(waker: h.wall) }
        #expect(await notifier.nextPost().title == "Focusing: 25 min left")
        // Idle for 5 minutes at 7:00 (paused back to 2:00), back at 14:00: 12 minutes away.
        h.wall.advance(to: h.at(420))
        idle.say(.idle(idleMicros: 300_000_000))
        #expect(await notifier.nextPost().title == "Paused: 23:00 left")
        h.wall.advance(to: h.at(840))
        idle.say(.active)
        #expect(await notifier.nextPost().title == "Paused while you were away 12 min: resume?")
        // The moment they came back is in the session's row.
        #expect(try h.timer.current().openSession?.backAt == h.at(840))
        h.wall.shutdown()
        await loop.value

        // A runner started again 6 minutes later, the person here (its source says nothing):
        // the same question, the same 12 minutes (not 18, not a plain "Paused").
        let wall = ManualWallClock(now: h.at(1_200))
        let machine = ManualMachineClock(wall: wall, awake: h.machine.now().awakeMicros.seconds + 360)
        let store = try ReminderStore(path: h.store.path, schemas: [.focus])
        let timer = FocusTimer(store: store, clock: machine)
        let again = RecordingNotifier()
        let idleAgain = ScriptedIdleSource()
        let restarted = FocusFamily(
            timer: timer,
            icon: FocusRunnerTests.icon,
            liveAlert: true,
            stageIcon: FocusRunnerTests.stageIcon,
            zone: { FocusRunnerTests.utc },
            idle: idleAgain,
            idleSettings: FocusIdle(pauseSeconds: 300)
        )
        restarted.connect(poke: { wall.poke() })
        let second = Scheduler(store: store, notifier: again, clock: wall, systemZone: { FocusRunnerTests.utc }, families: [restarted])
        let loop2 = Task { await second.run(waker: wall) }
        let asked = await again.nextPost()
        #expect(asked.id == session.reminderID)
        #expect(asked.title == "Paused while you were away 12 min: resume?")
        #expect(asked.actions.map(\.key) == ["resume", "give-up"])
        #expect(await wall.parked() == nil)
        #expect(again.posts.count == 1)
        #expect(idleAgain.watching)

        // Away again and back at 30:00: the question counts from the pause to the latest return.
        idleAgain.say(.idle(idleMicros: 0))
        wall.advance(to: h.at(1_800))
        idleAgain.say(.active)
        #expect(await again.nextPost().title == "Paused while you were away 28 min: resume?")
        // Resumed: the return is cleared with the pause.
        let resumed = try timer.resume()
        #expect(resumed.backAt == nil && resumed.pausedAt == nil)
        #expect(try timer.current().openSession?.backAt == nil)
        wall.shutdown()
        await loop2.value
    }

    @Test func idlePauseOffPausesNothingAndAPersonsOwnPauseAsksNothingOnReturn() throws {
        let h = try FocusHarness()
        defer { h.cleanUp() }
        let idle = ScriptedIdleSource()
        let off = Self.family(h, idle: idle, pause: nil)
        _ = try h.timer.start()
        try off.prepare(reason: .poked)
        // Off, and no wait_for_activity: the source is not even watched.
        #expect(!idle.watching)
        off.idleChanged(.idle(idleMicros: 600_000_000))
        #expect(try h.timer.current().openSession?.state == .active)

        let on = Self.family(h, idle: idle)
        try on.prepare(reason: .poked)
        #expect(idle.watching)
        _ = try h.timer.pause()
        try on.prepare(reason: .poked)
        // Paused by the person: not watched (nothing to resume for them).
        #expect(!idle.watching)
    }

    @Test func aBreakThatEndsWhileThePersonIsAwayStartsTheNextSessionWhenTheyAreBack() throws {
        let h = try FocusHarness()
        defer { h.cleanUp() }
        let breaks = FocusBreaks(autoStartSessions: true, waitForActivity: true)
        let timer = FocusTimer(store: h.store, clock: h.machine, breaks: breaks)
        let idle = ScriptedIdleSource()
        let family = Self.family(h, timer: timer, idle: idle)
        let first = try timer.start()
        try family.prepare(reason: .poked)
        #expect(idle.watching)
        h.wall.advance(to: h.at(1_500))
        try family.prepare(reason: .deadline)
        let rest = try #require(try timer.runningBreak())
        // Away from 25:00 (said at 27:00), through the break's end at 30:00.
        h.wall.advance(to: h.at(1_620))
        family.idleChanged(.idle(idleMicros: 120_000_000))
        #expect(timer.presence.awaySince == h.at(1_500))
        h.wall.advance(to: rest.endsAt)
        try family.prepare(reason: .deadline)
        #expect(try timer.current().openSession == nil)
        #expect(try timer.runningBreak() == nil)
        #expect(idle.watching)
        // Back at 40:00: the session starts now, as long as the one before.
        h.wall.advance(to: h.at(2_400))
        family.idleChanged(.active)
        let next = try #require(try timer.current().openSession)
        #expect(next.id == first.id + 1)
        #expect(next.startedAt == h.at(2_400))
        #expect(next.lengthSeconds == first.lengthSeconds)
        #expect(timer.presence.awaySince == nil)
        // Once only.
        family.idleChanged(.active)
        #expect(try timer.latest()?.id == next.id)
    }

    @Test func aSessionThatCompletesWhileThePersonIsAwayStartsItsBreakWhenTheyAreBack() throws {
        let h = try FocusHarness()
        defer { h.cleanUp() }
        // idle_pause off: the session runs on while they are away; wait_for_activity alone.
        let timer = FocusTimer(store: h.store, clock: h.machine, breaks: FocusBreaks(waitForActivity: true))
        let idle = ScriptedIdleSource()
        let family = Self.family(h, timer: timer, idle: idle, pause: nil)
        let session = try timer.start()
        try family.prepare(reason: .poked)
        #expect(idle.watching)
        #expect(idle.thresholds == [.seconds(FocusIdle.defaultPauseSeconds)])
        h.wall.advance(to: h.at(1_200))
        family.idleChanged(.idle(idleMicros: 600_000_000))
        #expect(try timer.current().openSession?.state == .active)
        h.wall.advance(to: h.at(1_500))
        try family.prepare(reason: .deadline)
        #expect(try timer.latest()?.state == .completed)
        // Completed while they were away: no break yet.
        #expect(try timer.runningBreak() == nil)
        #expect(idle.watching)
        // Back at 32:00: the break starts now, 5 minutes from now.
        h.wall.advance(to: h.at(1_920))
        family.idleChanged(.active)
        let rest = try #require(try timer.runningBreak())
        #expect(rest.sessionID == session.id)
        #expect(rest.startedAt == h.at(1_920))
        #expect(rest.endsAt == h.at(2_220))
        #expect(try timer.current().openSession == nil)
        // Once only.
        family.idleChanged(.active)
        #expect(try timer.breakCounts() == BreakCounts(taken: 0, skipped: 0))
        #expect(try timer.runningBreak()?.id == rest.id)
    }

    @Test func backMoreThanAnHourAfterTheBreakEndedStartsNothing() throws {
        let h = try FocusHarness()
        defer { h.cleanUp() }
        let timer = FocusTimer(store: h.store, clock: h.machine, breaks: FocusBreaks(autoStartSessions: true, waitForActivity: true))
        let idle = ScriptedIdleSource()
        let family = Self.family(h, timer: timer, idle: idle)
        _ = try timer.start()
        try family.prepare(reason: .poked)
        h.wall.advance(to: h.at(1_500))
        try family.prepare(reason: .deadline)
        family.idleChanged(.idle(idleMicros: 0))
        h.wall.advance(to: h.at(1_800))
        try family.prepare(reason: .deadline)
        h.wall.advance(to: h.at(1_800 + 3_601))
        family.idleChanged(.active)
        #expect(try timer.current().openSession == nil)
        // Without wait_for_activity the session starts at the break's end, away or not.
        let h2 = try FocusHarness()
        defer { h2.cleanUp() }
        let plain = FocusTimer(store: h2.store, clock: h2.machine, breaks: FocusBreaks(autoStartSessions: true))
        let other = Self.family(h2, timer: plain, idle: idle)
        _ = try plain.start()
        h2.wall.advance(to: h2.at(1_500))
        try other.prepare(reason: .deadline)
        other.idleChanged(.idle(idleMicros: 0))
        h2.wall.advance(to: h2.at(1_800))
        try other.prepare(reason: .deadline)
        #expect(try plain.current().openSession?.startedAt == h2.at(1_800))
    }

    @Test func theConfigKeysTakeADurationOrOffAndSayWhatTheyAccept() throws {
        #expect(ConfigKey.focusIdlePause.parse(text: "5m") == .seconds(300))
        #expect(ConfigKey.focusIdlePause.parse(text: "off") == .text("off"))
        #expect(ConfigKey.focusIdlePause.parse(text: "30s") == nil)
        #expect(ConfigKey.focusIdlePause.parse(text: "5") == nil)
        #expect(ConfigKey.focusIdlePause.accepted == "a duration from \"1m\" to \"4h\", or \"off\"")
        #expect(ConfigKey.focusIdlePause.builtInDefault(environment: [:]) == .seconds(600))
        #expect(FocusIdle.configured { $0 == .focusIdlePause ? .text("off") : $0.builtInDefault(environment: [:]) }.pauseSeconds == nil)
        #expect(FocusIdle.configured { $0.builtInDefault(environment: [:]) } == FocusIdle(pauseSeconds: 600))
        let breaks = FocusBreaks.configured { $0 == .focusWaitForActivity ? .flag(true) : $0.builtInDefault(environment: [:]) }
        #expect(breaks.waitForActivity)
        #expect(FocusIdle.awayMinutes(seconds: 719) == 12)
        #expect(FocusIdle.awayMinutes(seconds: 5) == 1)
    }
}

import ChimeCore
import ChimeFocus
import ChimeStore
import ChimeTesting
import ChimeViewModels
import Foundation
import Testing

/// The timer screen (the seed's TimerViewModel contract) over FocusTimer, on the injected clock.
struct TimerViewModelTests {
    @Test func idleOffersToPlantA25MinuteTree() throws {
        let h = try ViewModelHarness()
        defer { h.cleanUp() }
        let model = TimerViewModel(timer: h.timer, zone: ViewModelHarness.utc)
        let state = model.state
        #expect(state.phase == .idle)
        #expect(state.countdown == "25:00")
        #expect(state.stage == 1)
        #expect(state.canStart && !state.canPause && !state.canResume && !state.canGiveUp)
        #expect(state.message == nil)
        #expect(TimerViewModel(timer: h.timer, minutes: 50).state.countdown == "50:00")
    }

    @Test func startCountsDownAndGrowsTheTreeOnTheInjectedClock() throws {
        let h = try ViewModelHarness()
        defer { h.cleanUp() }
        let model = TimerViewModel(timer: h.timer, zone: ViewModelHarness.utc)
        let started = model.start()
        #expect(started.phase == .active)
        #expect(started.isSessionActive)
        #expect(started.countdown == "25:00")
        #expect(started.remainingSeconds == 1_500)
        #expect(started.stage == 1)
        #expect(started.error == nil)
        // The completion alert is the family's, scheduled by the use case.
        #expect(try h.store.pending().map(\.title) == ["Tree planted!"])

        // The seed's mapping: stage 1 from 25:00 to 20:01, 2 from 20:00, …, 5 from 5:00.
        let expected: [(TimeInterval, String, Int)] = [
            (0.5, "25:00", 1), (1, "24:59", 1), (299, "20:01", 1), (300, "20:00", 2), (600, "15:00", 3),
            (900, "10:00", 4), (1_199, "05:01", 4), (1_200, "05:00", 5), (1_499, "00:01", 5),
        ]
        for (seconds, countdown, stage) in expected {
            h.wall.advance(to: h.at(seconds))
            let state = model.refresh()
            #expect(state.countdown == countdown, "at \(seconds) s")
            #expect(state.stage == stage, "at \(seconds) s")
            #expect(state.phase == .active)
        }
        #expect(abs(model.state.progress - 1_499.0 / 1_500) < 1e-9)
    }

    @Test func pauseStopsTheCountdownAndResumeGoesOnFromIt() throws {
        let h = try ViewModelHarness()
        defer { h.cleanUp() }
        let model = TimerViewModel(timer: h.timer, zone: ViewModelHarness.utc)
        model.start()
        h.wall.advance(by: 60)
        let paused = model.pause()
        #expect(paused.phase == .paused)
        #expect(paused.countdown == "24:00")
        #expect(paused.message == "Paused with 24:00 to go.")
        #expect(!paused.canPause && paused.canResume && paused.canGiveUp && !paused.isSessionActive)
        #expect(try h.store.pendingCount() == 0)
        // Time paused is not focus time.
        h.wall.advance(by: 600)
        #expect(model.refresh().countdown == "24:00")
        let resumed = model.resume()
        #expect(resumed.phase == .active)
        #expect(resumed.countdown == "24:00")
        h.wall.advance(by: 30)
        #expect(model.refresh().countdown == "23:30")
        #expect(try h.store.pending().first?.nextDue == h.at(660 + 1_440))
    }

    @Test func givingUpAbandonsTheTreeUntilDismissed() throws {
        let h = try ViewModelHarness()
        defer { h.cleanUp() }
        let model = TimerViewModel(timer: h.timer, zone: ViewModelHarness.utc)
        let id = try #require(model.start().sessionID)
        h.wall.advance(by: 5 * 60)
        let gaveUp = model.giveUp()
        #expect(gaveUp.phase == .abandoned)
        #expect(gaveUp.message == "Gave up focus session #\(id) after 5 minutes of focus. The tree did not make it.")
        #expect(gaveUp.canStart && !gaveUp.canGiveUp)
        #expect(try h.timer.latest()?.state == .abandoned)
        #expect(try h.store.pendingCount() == 0)
        // It stays on screen across refreshes, until dismissed.
        #expect(model.refresh().phase == .abandoned)
        let idle = model.dismiss()
        #expect(idle.phase == .idle)
        #expect(idle.countdown == "25:00")
        #expect(idle.message == "The last one, #\(id), was given up Mon 2026-01-05 09:05 +00:00 after 5 minutes of focus.")
        #expect(TimerViewModel.giveUpQuestion == "This will kill your tree. Give up?")
    }

    @Test func givingUpKeepsTheStoppedCountdownUntilTheNextTree() throws {
        let h = try ViewModelHarness()
        defer { h.cleanUp() }
        let model = TimerViewModel(timer: h.timer, zone: ViewModelHarness.utc)
        model.start()
        h.wall.advance(by: 5 * 60 + 9)
        let gaveUp = model.giveUp()
        #expect(gaveUp.countdown == "19:51")
        #expect(gaveUp.stage == 2)
        #expect(abs(gaveUp.progress - 309.0 / 1_500) < 1e-9)
        // Time passes, the pages refresh (and the focus length changes): still the stopped countdown, not 25:00.
        h.wall.advance(by: 600)
        #expect(model.refresh().countdown == "19:51")
        let longer = model.setMinutes(30)
        #expect(longer.phase == .abandoned && longer.countdown == "19:51")
        // Until the next tree.
        let next = model.start()
        #expect(next.phase == .active && next.countdown == "30:00")

        // Given up elsewhere (the CLI) while this screen watched it: the same.
        h.wall.advance(by: 60)
        _ = try h.timer.giveUp()
        h.wall.advance(by: 60)
        let elsewhere = model.refresh()
        #expect(elsewhere.phase == .abandoned && elsewhere.countdown == "29:00")
        // An idle screen shows a new length at once.
        #expect(model.dismiss().countdown == "30:00")
        #expect(model.setMinutes(45).countdown == "45:00")
    }

    @Test func completionShowsTreePlantedAtZeroBeforeAndAfterTheRunnerSettles() throws {
        let h = try ViewModelHarness()
        defer { h.cleanUp() }
        let model = TimerViewModel(timer: h.timer, zone: ViewModelHarness.utc)
        let id = try #require(model.start().sessionID)
        h.wall.advance(by: 1_500)
        // Not settled yet (the runner completes it): the screen does not settle it itself.
        let atEnd = model.refresh()
        #expect(atEnd.phase == .completed)
        #expect(atEnd.countdown == "00:00")
        #expect(atEnd.stage == 5)
        #expect(atEnd.headline == "Tree planted!")
        #expect(atEnd.message == "Great focus session!")
        #expect(try h.timer.openWithoutSettling()?.state == .active)
        // The runner settles it: still the completion screen.
        guard case .completed = try h.timer.settle() else {
            Issue.record("not completed")
            return
        }
        let settled = model.refresh()
        #expect(settled.phase == .completed && settled.sessionID == id && settled.progress == 1)
        #expect(model.dismiss().phase == .idle)
        #expect(model.state.message?.hasPrefix("The last one, #\(id), was completed Mon 2026-01-05 09:25 +00:00") == true)
    }

    @Test func theBreakAfterACompletedSessionShowsItsTimeLeftAndSkipBreakEndsIt() throws {
        let h = try ViewModelHarness()
        defer { h.cleanUp() }
        let model = TimerViewModel(timer: h.timer, zone: ViewModelHarness.utc)
        #expect(model.state.breakLeft == nil && !model.state.canSkipBreak && !model.state.ticks)
        model.start()
        h.wall.advance(by: 1_500)
        _ = try h.timer.settle()
        h.wall.advance(by: 48)
        let resting = model.refresh()
        #expect(resting.phase == .completed)
        #expect(resting.breakLeft == "Break: 04:12 left")
        #expect(resting.canSkipBreak && resting.ticks)
        let skipped = model.skipBreak()
        #expect(skipped.error == nil)
        #expect(skipped.breakLeft == nil && !skipped.canSkipBreak)
        #expect(try h.timer.breakCounts().skipped == 1)
        // Nothing to skip now: the error says so, and nothing changes.
        #expect(model.skipBreak().error?.code == .notFound)
    }

    @Test func refusedActionsSayWhyAndChangeNothing() throws {
        let h = try ViewModelHarness()
        defer { h.cleanUp() }
        let model = TimerViewModel(timer: h.timer, zone: ViewModelHarness.utc)
        let nothing = model.pause()
        #expect(nothing.phase == .idle)
        #expect(nothing.error?.code == .notFound)
        #expect(nothing.error?.message == "no focus session to pause: start one with 'chime focus start'")
        model.start()
        #expect(model.state.error == nil)
        let twice = model.resume()
        #expect(twice.phase == .active)
        #expect(twice.error?.code == .conflict)
        // A second screen (or the CLI) starting a session while one runs is refused by the use case.
        let other = TimerViewModel(timer: h.timer)
        #expect(other.state.phase == .active)
        #expect(other.start().error?.code == .conflict)
    }

    @Test func aSessionStartedElsewhereShowsOnRefresh() throws {
        let h = try ViewModelHarness()
        defer { h.cleanUp() }
        let model = TimerViewModel(timer: h.timer, zone: ViewModelHarness.utc)
        #expect(model.state.phase == .idle)
        _ = try h.timer.start(minutes: 10)
        h.wall.advance(by: 2)
        let state = model.refresh()
        #expect(state.phase == .active)
        #expect(state.countdown == "09:58")
        #expect(state.lengthSeconds == 600)
    }

    @Test func aSuspendDoesNotGrowTheTreeAndARestartEndsIt() throws {
        let h = try ViewModelHarness()
        defer { h.cleanUp() }
        let model = TimerViewModel(timer: h.timer, zone: ViewModelHarness.utc)
        let id = try #require(model.start().sessionID)
        h.wall.advance(by: 60)
        // Time asleep is not focus time.
        h.machine.suspend(for: 3_600)
        #expect(model.refresh().countdown == "24:00")
        // After a restart the runner abandons it (the seed's rule): the screen says so.
        h.machine.reboot()
        guard case .abandoned = try h.timer.settle() else {
            Issue.record("not abandoned")
            return
        }
        let ended = model.refresh()
        #expect(ended.phase == .abandoned)
        #expect(ended.sessionID == id)
        #expect(ended.message?.hasPrefix("The last one, #\(id), was abandoned: the machine restarted during it") == true)
    }

    @Test func plantTreeWithALabelShowsItAndABadOneIsSaidWithoutStarting() throws {
        let h = try ViewModelHarness()
        defer { h.cleanUp() }
        let model = TimerViewModel(timer: h.timer, zone: ViewModelHarness.utc)
        let refused = model.start(label: "a\tb")
        #expect(refused.phase == .idle)
        #expect(refused.error?.code == .usage)
        #expect(refused.error?.message.hasPrefix("invalid label 'a\\u{9}b'") == true, "\(refused.error?.message ?? "")")
        let started = model.start(label: " thesis ")
        #expect(started.phase == .active)
        #expect(started.error == nil)
        #expect(started.label == "thesis")
        #expect(model.refresh().label == "thesis")
        _ = model.giveUp()
        model.dismiss()
        // A blank entry is no label.
        #expect(model.start(label: "   ").label == nil)
        #expect(try h.timer.current().openSession?.label == nil)
        // The withered tree's name ends with its label.
        let plots = ForestViewModel(forest: Forest(store: h.store), zone: ViewModelHarness.utc).state.plots
        #expect(plots.first?.accessibilityLabel == "Withered tree, given up 5 Jan 09:00 after 0 min, thesis")
    }
}

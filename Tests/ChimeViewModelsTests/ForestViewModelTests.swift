import ChimeCore
import ChimeFocus
import ChimeStore
import ChimeTesting
import ChimeViewModels
import Foundation
import Testing

/// The forest screen (the seed's ForestViewModel contract) and the focus stats, on a real store.
struct ForestViewModelTests {
    @Test func anEmptyForestShowsTheSeedsEmptyState() throws {
        let h = try ViewModelHarness()
        defer { h.cleanUp() }
        let state = ForestViewModel(forest: Forest(store: h.store), zone: ViewModelHarness.utc).state
        #expect(state.isEmpty)
        #expect(state.trees.isEmpty)
        #expect(state.title == "My Forest (0)")
        #expect(state.emptyTitle == "Plant your first tree")
        #expect(state.emptyMessage == "Start a 25-minute focus session to grow your forest")
        #expect(!state.showingDetail)
    }

    @Test func theGridListsCompletedTreesNewestFirstWithTheirNumbers() throws {
        let h = try ViewModelHarness()
        defer { h.cleanUp() }
        let first = try h.plantTree()
        h.wall.advance(by: 86_400)
        // Given up and open sessions are not trees.
        _ = try h.timer.start()
        h.wall.advance(by: 60)
        _ = try h.timer.giveUp()
        let second = try h.plantTree(minutes: 10)
        _ = try h.timer.start()
        let model = ForestViewModel(forest: Forest(store: h.store), zone: ViewModelHarness.utc)
        let state = model.state
        #expect(!state.isEmpty)
        #expect(state.treeCount == 2)
        #expect(state.title == "My Forest (2)")
        #expect(state.heading == "My Forest: 2 trees planted")
        #expect(state.trees.map(\.id) == [second.id, first.id])
        #expect(state.trees.map(\.number) == [2, 1])
        #expect(state.trees.map(\.completedDay) == ["Jan 6", "Jan 5"])
        #expect(state.trees.allSatisfy { $0.stage == 5 })
        #expect(state.trees[1].accessibilityLabel == "Completed tree from Mon 2026-01-05 09:25 +00:00")

        // A tree completed later appears on refresh.
        h.wall.advance(by: 1_500)
        _ = try h.timer.settle()
        #expect(model.refresh().trees.map(\.number) == [3, 2, 1])
    }

    @Test func selectingATreeShowsItsDetailUntilDismissed() throws {
        let h = try ViewModelHarness()
        defer { h.cleanUp() }
        let session = try h.timer.start()
        h.wall.advance(by: 300)
        _ = try h.timer.pause()
        h.wall.advance(by: 120)
        _ = try h.timer.resume()
        h.wall.advance(by: 1_200)
        _ = try h.timer.settle()
        let model = ForestViewModel(forest: Forest(store: h.store), zone: ViewModelHarness.utc)
        let state = model.selectTree(number: 1)
        let detail = try #require(state.selected)
        #expect(state.showingDetail)
        #expect(detail.title == "Tree #1 (focus session #\(session.id))")
        #expect(detail.stage == 5)
        #expect(
            detail.rows == [
                LabeledValue("Completed", "Mon 2026-01-05 09:27 +00:00"),
                LabeledValue("Focus Time", "25 minutes"),
                LabeledValue("Started", "Mon 2026-01-05 09:00 +00:00"),
                LabeledValue("Paused", "2 minutes"),
            ]
        )
        let missing = model.selectTree(number: 4)
        #expect(missing.error?.code == .notFound)
        #expect(missing.error?.message == "no tree #4: the forest has 1 tree, #1")
        #expect(missing.selected == detail)
        #expect(!model.dismissDetail().showingDetail)
    }

    @Test func statsAndStreaksFollowTheInjectedClock() throws {
        let h = try ViewModelHarness()
        defer { h.cleanUp() }
        let model = FocusStatsViewModel(forest: Forest(store: h.store), clock: h.wall, zone: ViewModelHarness.utc)
        #expect(model.state.stats.totalTrees == 0)
        #expect(!model.state.showStreakBanner)
        #expect(model.state.rows.last == LabeledValue("Completion rate", "—"))

        // Two days in a row with a tree, and one given up.
        try h.plantTree()
        h.wall.advance(by: 86_400)
        try h.plantTree()
        _ = try h.timer.start()
        h.wall.advance(by: 120)
        _ = try h.timer.giveUp()
        let state = model.refresh()
        #expect(state.stats.currentStreak == 2)
        #expect(state.showStreakBanner)
        #expect(state.currentStreakText == "2 days")
        #expect(
            state.rows == [
                LabeledValue("Trees planted", "2"),
                LabeledValue("Focus time", "50m"),
                LabeledValue("Today", "1 tree, 25m"),
                LabeledValue("Current streak", "2 days"),
                LabeledValue("Longest streak", "2 days"),
                LabeledValue("Sessions", "3 (1 abandoned)"),
                LabeledValue("Completion rate", "67%"),
            ]
        )
        #expect(state.lastDays.count == 30)
        #expect(state.lastDays.last == ForestStats.Day(date: "2026-01-06", trees: 1, focusMicros: 1_500_000_000))
        #expect(state.lastDays.suffix(2).first?.date == "2026-01-05")

        // A day passes without a tree: the streak still counts until that day ends.
        h.wall.advance(by: 86_400)
        #expect(model.refresh().stats.currentStreak == 2)
        h.wall.advance(by: 86_400)
        let broken = model.refresh()
        #expect(broken.stats.currentStreak == 0)
        #expect(!broken.showStreakBanner)
        #expect(broken.stats.longestStreak == 2)
    }

    @Test func theAppsGridHasEveryEndedSessionNewestFirstAGivenUpOneWithered() throws {
        let h = try ViewModelHarness()
        defer { h.cleanUp() }
        let first = try h.plantTree()
        // Given up after 7 minutes (stage 2 of 5), then an open session (not in the grid).
        let gaveUp = try h.timer.start()
        h.wall.advance(by: 7 * 60)
        _ = try h.timer.giveUp()
        _ = try h.timer.start()
        let state = ForestViewModel(forest: Forest(store: h.store), zone: ViewModelHarness.utc).state
        #expect(state.plots.map(\.id) == [gaveUp.id, first.id])
        #expect(state.plots.map(\.withered) == [true, false])
        #expect(state.plots.map(\.stage) == [2, 5])
        #expect(
            state.plots.map(\.accessibilityLabel) == [
                "Withered tree, given up 5 Jan 09:32 after 7 min", "Tree planted 5 Jan 09:25, 25 min",
            ]
        )
        // The seed's grid is still the completed trees only.
        #expect(state.trees.map(\.id) == [first.id])
    }

    @Test func theChartHasTheLastSevenDaysAndSaysTheirFigures() throws {
        let h = try ViewModelHarness()
        defer { h.cleanUp() }
        try h.plantTree()
        h.wall.advance(by: 86_400)
        try h.plantTree()
        try h.plantTree()
        let state = FocusStatsViewModel(forest: Forest(store: h.store), clock: h.wall, zone: ViewModelHarness.utc).state
        #expect(state.lastWeek.map(\.label) == ["Wed", "Thu", "Fri", "Sat", "Sun", "Mon", "Today"])
        #expect(state.lastWeek.map(\.trees) == [0, 0, 0, 0, 0, 1, 2])
        #expect(state.lastWeek.last?.date == "2026-01-06")
        #expect(
            state.chartDescription
                == "Trees planted in the last 7 days: Wed 31 Dec 0, Thu 1 Jan 0, Fri 2 Jan 0, Sat 3 Jan 0, Sun 4 Jan 0, Mon 5 Jan 1, today 2."
        )
    }
}

import ChimeCore
import ChimeFocus
import Foundation
import Synchronization

/// What the forest screen shows (the seed's `ForestViewModel` outputs).
public struct ForestState: Sendable, Hashable {
    /// One cell of the grid (the seed's `TreeCellData`).
    public struct Tree: Sendable, Hashable, Identifiable {
        /// The focus session's id.
        public var id: Int64
        /// Its number in the forest, as the grid labels it: 1 for the first tree planted.
        public var number: Int
        public var completedAt: Date
        /// `Nov 22`, local.
        public var completedDay: String
        /// Always 5: a completed tree is grown.
        public var stage: Int
        public var focusMicros: Int64
        /// The seed's VoiceOver label: `Completed tree from Mon 2026-01-05 09:25 +00:00`.
        public var accessibilityLabel: String
    }

    /// The tree selected (the seed's detail view).
    public struct Detail: Sendable, Hashable {
        public var number: Int
        public var sessionID: Int64
        /// `Tree #3 (focus session #12)`.
        public var title: String
        public var stage: Int
        /// Completed, Focus Time, Started (and Paused), as `chime forest show` prints them.
        public var rows: [LabeledValue]
    }

    /// One session's tree in the app's grid: grown when completed, withered at the stage it
    /// reached when given up (or abandoned at a restart).
    public struct Plot: Sendable, Hashable, Identifiable {
        /// The focus session's id.
        public var id: Int64
        public var withered: Bool
        /// The picture's stage, 1 to 5.
        public var stage: Int
        /// `Tree planted 27 Nov 14:05, 25 min`; `Withered tree, given up 27 Nov 14:05 after 3 min`;
        /// a labelled session's ends with its label: `Tree planted 27 Nov 14:05, 25 min, thesis`.
        public var accessibilityLabel: String
    }

    /// Completed trees, newest first (by completion).
    public var trees: [Tree]
    /// Completed and abandoned sessions, newest first (by end): the app's grid.
    public var plots: [Plot] = []
    public var treeCount: Int
    /// The seed's navigation title: `My Forest (3)`.
    public var title: String
    /// `My Forest: 3 trees planted`, as `chime forest` heads its grid.
    public var heading: String
    /// The empty state: shown instead of the grid when ``isEmpty``.
    public var emptyTitle: String
    public var emptyMessage: String
    public var selected: Detail?
    public var error: ChimeError?

    public var isEmpty: Bool { treeCount == 0 }
    /// The seed's `showingDetail`: derived from ``selected``.
    public var showingDetail: Bool { selected != nil }
}

/// The forest screen (the seed's `ForestViewModel`) over ``Forest``: the grid newest first,
/// the empty state, a tree's detail. It reads only: the runner completes sessions.
public final class ForestViewModel: Sendable {
    public let forest: Forest
    public let zone: TimeZone
    /// At most this many trees in ``ForestState/trees`` (nil: all).
    public let limit: Int?
    private let current: Mutex<ForestState>

    /// At most this many sessions in ``ForestState/plots``.
    public let plotLimit: Int

    public init(forest: Forest, zone: TimeZone = .current, limit: Int? = nil, plotLimit: Int = 60) {
        self.forest = forest
        self.zone = zone
        self.limit = limit
        self.plotLimit = plotLimit
        current = Mutex(
            ForestState(
                trees: [],
                treeCount: 0,
                title: "My Forest (0)",
                heading: FocusText.forestHeading(count: 0),
                emptyTitle: FocusText.emptyForestTitle,
                emptyMessage: FocusText.emptyForestMessage,
                selected: nil,
                error: nil
            )
        )
        refresh()
    }

    public var state: ForestState { current.withLock { $0 } }

    /// Reads the forest again (after the runner signals a completed session).
    @discardableResult
    public func refresh() -> ForestState {
        do {
            let count = try forest.treeCount()
            let sessions = try forest.trees(limit: limit)
            let trees = sessions.enumerated().map { index, session in
                ForestState.Tree(
                    id: session.id,
                    number: count - index,
                    completedAt: session.endedAt!,
                    completedDay: FocusText.shortDay(session.endedAt!, zone: zone),
                    stage: TreeStage.grown,
                    focusMicros: session.focusMicros,
                    accessibilityLabel: "Completed tree from \(TimeText.local(session.endedAt!, in: zone))"
                )
            }
            let plots = try forest.endedSessions(limit: plotLimit).map { session in
                ForestState.Plot(
                    id: session.id,
                    withered: session.state != .completed,
                    stage: session.state == .completed ? TreeStage.grown : Self.stageReached(session),
                    accessibilityLabel: Self.plotLabel(session, zone: zone)
                )
            }
            current.withLock { state in
                state.plots = plots
                state.trees = trees
                state.treeCount = count
                state.title = "My Forest (\(count))"
                state.heading = FocusText.forestHeading(count: count)
                state.error = nil
            }
        } catch {
            current.withLock { $0.error = error }
        }
        return state
    }

    /// `Tree planted 27 Nov 14:05, 25 min`, or `Withered tree, given up 27 Nov 14:05 after 3 min`
    /// (`abandoned` for a session a restart ended).
    static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// The stage an ended session's tree reached (its focus time over its length).
    static func stageReached(_ session: FocusSession) -> Int {
        let remaining = max(0, session.lengthMicros - session.focusMicros)
        return TreeStage.stage(remainingSeconds: Int((remaining + 999_999) / 1_000_000), lengthSeconds: session.lengthSeconds)
    }

    static func plotLabel(_ session: FocusSession, zone: TimeZone) -> String {
        let (local, _) = ZoneMath.civil(session.endedAt ?? session.startedAt, in: zone)
        let when = "\(local.day) \(months[local.month - 1]) " + String(format: "%02d:%02d", local.hour, local.minute)
        let minutes = "\(session.focusMicros / 60_000_000) min"
        // Its label last: `Tree planted 27 Nov 14:05, 25 min, thesis`.
        let label = session.label.map { ", \($0)" } ?? ""
        guard session.state == .completed else {
            let how = session.endReason == .gaveUp ? "given up" : "abandoned"
            return "Withered tree, \(how) \(when) after \(minutes)\(label)"
        }
        return "Tree planted \(when), \(minutes)\(label)"
    }

    /// A tree tapped: its detail (tree `number`, as the grid labels it).
    @discardableResult
    public func selectTree(number: Int) -> ForestState {
        do {
            let session = try forest.requireTree(number: number)
            let detail = ForestState.Detail(
                number: number,
                sessionID: session.id,
                title: FocusText.treeTitle(session, number: number),
                stage: TreeStage.grown,
                rows: [LabeledValue](FocusText.treeDetail(session, zone: zone))
            )
            current.withLock {
                $0.selected = detail
                $0.error = nil
            }
        } catch {
            current.withLock { $0.error = error }
        }
        return state
    }

    @discardableResult
    public func dismissDetail() -> ForestState {
        current.withLock { $0.selected = nil }
        return state
    }
}

/// What the focus stats screen shows: the totals and streaks as `chime stats` words them, and
/// the trees per day of the last 30 days.
public struct FocusStatsState: Sendable, Hashable {
    public var stats: ForestStats
    /// Trees planted, Focus time, Today, Current streak, Longest streak, Sessions, Completion rate.
    public var rows: [LabeledValue]
    /// The last 30 local days, oldest first.
    public var lastDays: [ForestStats.Day]
    /// One bar of the last week's chart: `Mon` (`Today` for today), its date and trees.
    public struct Bar: Sendable, Hashable {
        public var label: String
        public var date: String
        public var trees: Int
    }

    /// The last 7 local days, oldest first (the app's chart).
    public var lastWeek: [Bar] = []
    /// The chart's figures in words, for assistive technology: `Trees planted in the last 7 days:
    /// Sat 21 Nov 0, …, today 2.`
    public var chartDescription = ""
    /// `3 days` (`1 day`); the streak banner shows it while the streak runs.
    public var currentStreakText: String
    public var showStreakBanner: Bool
    public var error: ChimeError?
}

/// The focus stats and streaks (the seed's `ForestStats`) over ``Forest``, as of the injected
/// wall clock's now in `zone`.
public final class FocusStatsViewModel: Sendable {
    public let forest: Forest
    public let clock: any WallClock
    public let zone: TimeZone
    private let current: Mutex<FocusStatsState>

    public init(forest: Forest, clock: any WallClock, zone: TimeZone = .current) {
        self.forest = forest
        self.clock = clock
        self.zone = zone
        let empty = ForestStats.from(days: [:], abandoned: 0, today: 0)
        current = Mutex(
            FocusStatsState(stats: empty, rows: [], lastDays: [], currentStreakText: "0 days", showStreakBanner: false, error: nil)
        )
        refresh()
    }

    public var state: FocusStatsState { current.withLock { $0 } }

    static let weekdays = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]

    static func week(_ days: [Int: DayTotals], today: Int) -> [FocusStatsState.Bar] {
        ((today - 6)...today).map { day in
            let civil = ZoneMath.civilFromDays(day)
            return FocusStatsState.Bar(
                label: day == today ? "Today" : weekdays[ZoneMath.isoWeekday(dayNumber: day) - 1],
                date: String(format: "%04d-%02d-%02d", civil.year, civil.month, civil.day),
                trees: days[day]?.trees ?? 0
            )
        }
    }

    static func describe(_ bars: [FocusStatsState.Bar]) -> String {
        let figures = bars.map { bar in
            let civil = bar.date.split(separator: "-").compactMap { Int($0) }
            let day = civil.count == 3 ? " \(civil[2]) \(ForestViewModel.months[civil[1] - 1])" : ""
            return (bar.label == "Today" ? "today" : bar.label + day) + " \(bar.trees)"
        }
        return "Trees planted in the last 7 days: " + figures.joined(separator: ", ") + "."
    }

    /// Reads the stats again at the clock's now (a new day can end a streak without any write).
    @discardableResult
    public func refresh() -> FocusStatsState {
        do {
            let now = clock.now()
            let (stats, days) = try forest.stats(now: now, zone: zone)
            var localDays = LocalDays(zone: zone)
            let today = localDays.number(of: now)
            let rows = [LabeledValue](stats.summaryRows)
            current.withLock { state in
                state.stats = stats
                state.rows = rows
                state.lastDays = ForestStats.lastDays(days, today: today)
                state.lastWeek = Self.week(days, today: today)
                state.chartDescription = Self.describe(state.lastWeek)
                state.currentStreakText = ForestStats.days(stats.currentStreak)
                state.showStreakBanner = stats.currentStreak > 0
                state.error = nil
            }
        } catch {
            current.withLock { $0.error = error }
        }
        return state
    }
}

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

    /// Completed trees, newest first (by completion).
    public var trees: [Tree]
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

    public init(forest: Forest, zone: TimeZone = .current, limit: Int? = nil) {
        self.forest = forest
        self.zone = zone
        self.limit = limit
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
            current.withLock { state in
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

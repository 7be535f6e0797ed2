import ChimeCore
import ChimeGateway
import Foundation
import Synchronization

/// What the gateway's hub shows (the seed's `HubViewModel` outputs).
public struct GateHubState: Sendable, Hashable {
    /// One gated program, with what needs doing when its gate is not right.
    public struct Program: Sendable, Hashable, Identifiable {
        /// The desktop entry id: `firefox`.
        public var id: String
        public var isOK: Bool
        /// `ok`, `original-changed`, … (as `chime gate list` says it).
        public var status: String
        /// What to do, for a gate that is not right; nil when it is.
        public var advice: String?
    }

    /// `Your Mindful Hub.`
    public var greeting: String
    /// Consecutive mindful days (the seed's `streakCount`).
    public var streakCount: Int
    public var showStreakBanner: Bool
    /// `3 mindful days in a row. Keep going.`; empty with no banner.
    public var streakMessage: String
    public var programs: [Program]
    /// `No program is gated yet` with none.
    public var emptyText: String?
    /// The pause and interests are not chosen yet: the seed's first-run experience.
    public var shouldShowFRE: Bool
    public var error: ChimeError?
}

/// The gateway's hub (the seed's `HubViewModel`) over ``GateBook`` and ``LauncherOverrides``:
/// the greeting, the streak banner and the gated programs.
public final class GateHubViewModel: Sendable {
    public let book: GateBook
    public let overrides: LauncherOverrides
    public let zone: TimeZone
    private let current: Mutex<GateHubState>

    public init(book: GateBook, overrides: LauncherOverrides, zone: TimeZone = .current) {
        self.book = book
        self.overrides = overrides
        self.zone = zone
        current = Mutex(
            GateHubState(
                greeting: GateHub.greeting,
                streakCount: 0,
                showStreakBanner: false,
                streakMessage: "",
                programs: [],
                emptyText: nil,
                shouldShowFRE: false,
                error: nil
            )
        )
        loadHubData()
    }

    public var state: GateHubState { current.withLock { $0 } }

    /// Reads the streak, the gated programs and whether the profile is set up (the seed's
    /// `loadHubData`, on appearing and after a gate's event).
    @discardableResult
    public func loadHubData() -> GateHubState {
        do {
            let streak = try book.stats(zone: zone).streak
            let profile = try book.profile()
            let programs: [GateHubState.Program]
            do {
                programs = try overrides.list().map {
                    GateHubState.Program(
                        id: $0.id.rawValue,
                        isOK: $0.status == .ok,
                        status: $0.status.rawValue,
                        advice: $0.status == .ok ? nil : $0.advice
                    )
                }
            } catch {
                throw error as? ChimeError ?? ChimeError(.failure, "\(error)")
            }
            current.withLock { state in
                state.streakCount = streak.count
                state.showStreakBanner = streak.showsBanner
                state.streakMessage = streak.message
                state.programs = programs
                state.emptyText = programs.isEmpty ? GateHub.noPrograms : nil
                state.shouldShowFRE = !profile.isSetUp
                state.error = nil
            }
        } catch let error as ChimeError {
            current.withLock { $0.error = error }
        } catch {
            current.withLock { $0.error = ChimeError(.failure, "\(error)") }
        }
        return state
    }
}

/// What the gateway's statistics show (the seed's `StatisticsViewModel` outputs).
public struct GateStatsState: Sendable, Hashable {
    /// `Proof It's Working.`
    public var headerTitle: String
    public var hoursReclaimed: Double
    public var totalConsciousExits: Int
    /// Seconds; nil while no gate has ended.
    public var averagePauseTime: TimeInterval?
    /// 0 to 1; nil with neither exits nor proceeds.
    public var intentionalityScore: Double?
    /// As `chime gate stats` prints them: Hours reclaimed, Conscious exits, Average pause,
    /// Intentionality score (and Streak while one runs).
    public var rows: [LabeledValue]
    /// The last 30 local days, oldest first.
    public var dailyTrends: [GateDay]
    public var error: ChimeError?
}

/// The gateway's statistics (the seed's `StatisticsViewModel`) over ``GateBook/stats(zone:)``.
public final class GateStatsViewModel: Sendable {
    public let book: GateBook
    public let zone: TimeZone
    private let current: Mutex<GateStatsState>

    public init(book: GateBook, zone: TimeZone = .current) {
        self.book = book
        self.zone = zone
        current = Mutex(
            GateStatsState(
                headerTitle: GateStats.header,
                hoursReclaimed: 0,
                totalConsciousExits: 0,
                averagePauseTime: nil,
                intentionalityScore: nil,
                rows: [],
                dailyTrends: [],
                error: nil
            )
        )
        loadStatistics()
    }

    public var state: GateStatsState { current.withLock { $0 } }

    /// Reads the statistics again at the book's clock's now (the seed's `loadStatistics`,
    /// `refreshStatistics`).
    @discardableResult
    public func loadStatistics() -> GateStatsState {
        do {
            let stats = try book.stats(zone: zone)
            current.withLock { state in
                state.hoursReclaimed = stats.hoursReclaimed
                state.totalConsciousExits = stats.consciousExits
                state.averagePauseTime = stats.averagePauseSeconds
                state.intentionalityScore = stats.intentionalityScore
                state.rows = [LabeledValue](stats.summaryRows)
                state.dailyTrends = stats.trend
                state.error = nil
            }
        } catch {
            current.withLock { $0.error = error }
        }
        return state
    }
}

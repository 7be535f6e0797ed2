import ChimeCore
import ChimeStore
import Foundation
import GRDB

/// Completed and abandoned sessions per local day.
public struct DayTotals: Sendable, Hashable {
    public var trees = 0
    public var focusMicros: Int64 = 0
    public init(trees: Int = 0, focusMicros: Int64 = 0) {
        self.trees = trees
        self.focusMicros = focusMicros
    }
}

/// The seed's `ForestStats`, computed on demand (never stored, so never stale).
public struct ForestStats: Sendable, Hashable {
    public var totalTrees: Int
    /// Focus time of the completed sessions (paused time excluded).
    public var totalFocusMicros: Int64
    /// Completed and abandoned sessions.
    public var totalSessions: Int
    public var todaysTrees: Int
    public var todaysFocusMicros: Int64
    /// Consecutive local days with at least one completed session, up to today (or up to
    /// yesterday while today has none yet: a streak breaks only when a day ends without a tree).
    public var currentStreak: Int
    public var longestStreak: Int
    public var abandonedCount: Int
    /// Completed ÷ (completed + abandoned) × 100; 0 with no sessions.
    public var completionRate: Double

    /// `2h 5m`, or `45m` under an hour (the seed's `formattedTotalFocusTime`).
    public var formattedTotalFocusTime: String { Self.formatFocus(totalFocusMicros) }
    public var formattedTodaysFocusTime: String { Self.formatFocus(todaysFocusMicros) }

    public static func formatFocus(_ micros: Int64) -> String {
        let seconds = micros / 1_000_000
        let hours = seconds / 3_600
        let minutes = seconds % 3_600 / 60
        return hours > 0 ? "\(hours)h \(minutes)m" : "\(minutes)m"
    }

    /// The stats as labelled rows, as `chime stats` prints them and the app shows them:
    /// `Trees planted 12`, `Current streak 3 days`, `Completion rate 92%` (`—` with no sessions).
    public var summaryRows: [(label: String, value: String)] {
        [
            ("Trees planted", "\(totalTrees)"),
            ("Focus time", formattedTotalFocusTime),
            ("Today", "\(todaysTrees) \(todaysTrees == 1 ? "tree" : "trees"), \(formattedTodaysFocusTime)"),
            ("Current streak", Self.days(currentStreak)),
            ("Longest streak", Self.days(longestStreak)),
            ("Sessions", "\(totalSessions) (\(abandonedCount) abandoned)"),
            ("Completion rate", totalSessions == 0 ? "—" : "\(String(format: "%.0f", completionRate))%"),
        ]
    }

    /// `1 day`, `3 days`: a streak's length.
    public static func days(_ count: Int) -> String { count == 1 ? "1 day" : "\(count) days" }

    /// One local day's trees, for the last-days chart: `date` as `2026-11-22`.
    public struct Day: Sendable, Hashable {
        public var date: String
        public var trees: Int
        public var focusMicros: Int64

        public init(date: String, trees: Int, focusMicros: Int64) {
            self.date = date
            self.trees = trees
            self.focusMicros = focusMicros
        }
    }

    /// The `count` local days up to `today` (oldest first), each with its trees and focus time
    /// (`chime stats --json`'s `last_30_days`, the app's chart).
    public static func lastDays(_ days: [Int: DayTotals], today: Int, count: Int = 30) -> [Day] {
        ((today - count + 1)...today).map { day in
            let civil = ZoneMath.civilFromDays(day)
            return Day(
                date: String(format: "%04d-%02d-%02d", civil.year, civil.month, civil.day),
                trees: days[day]?.trees ?? 0,
                focusMicros: days[day]?.focusMicros ?? 0
            )
        }
    }

    /// The stats from completed trees per local day (`day` numbers as ``ZoneMath/daysFromCivil(year:month:day:)``),
    /// the abandoned count, and today's local day.
    public static func from(days: [Int: DayTotals], abandoned: Int, today: Int) -> ForestStats {
        let totalTrees = days.values.reduce(0) { $0 + $1.trees }
        let totalFocus = days.values.reduce(Int64(0)) { $0 + $1.focusMicros }
        let treeDays = days.filter { $0.value.trees > 0 }.keys.sorted()
        var longest = 0
        var run = 0
        var previous: Int?
        for day in treeDays {
            run = previous == day - 1 ? run + 1 : 1
            longest = max(longest, run)
            previous = day
        }
        var current = 0
        let hasTree = Set(treeDays)
        var day = hasTree.contains(today) ? today : today - 1
        while hasTree.contains(day) {
            current += 1
            day -= 1
        }
        let sessions = totalTrees + abandoned
        return ForestStats(
            totalTrees: totalTrees,
            totalFocusMicros: totalFocus,
            totalSessions: sessions,
            todaysTrees: days[today]?.trees ?? 0,
            todaysFocusMicros: days[today]?.focusMicros ?? 0,
            currentStreak: current,
            longestStreak: longest,
            abandonedCount: abandoned,
            completionRate: sessions > 0 ? Double(totalTrees) / Double(sessions) * 100 : 0
        )
    }

    /// The seed's `ForestStats.from(sessions:)`: valid completed trees count (see
    /// ``FocusSession/isValidTree``), abandoned ones count against the completion rate.
    public static func from(sessions: [FocusSession], now: Date, zone: TimeZone) -> ForestStats {
        var days: [Int: DayTotals] = [:]
        var localDay = LocalDays(zone: zone)
        for session in sessions where session.isValidTree {
            let day = localDay.number(of: session.endedAt!)
            days[day, default: DayTotals()].trees += 1
            days[day, default: DayTotals()].focusMicros += session.focusMicros
        }
        let abandoned = sessions.filter { $0.state == .abandoned }.count
        return from(days: days, abandoned: abandoned, today: localDay.number(of: now))
    }
}

/// The forest (the seed's `ForestViewModel`) and the stats, read from the store. Only valid
/// trees appear (completed, with an end time and focus time): a bad row is left out, never a
/// crash.
public struct Forest: Sendable {
    public let store: ReminderStore

    public init(store: ReminderStore) { self.store = store }

    static let validTree = "state = 'completed' AND ended_us IS NOT NULL AND focus_us > 0"

    /// `AND label = ?` when `label` is given (with its argument), else nothing.
    static func labelFilter(_ label: String?) -> (sql: String, arguments: StatementArguments) {
        guard let label else { return ("", []) }
        return (" AND label = ?", [label])
    }

    /// How many trees are planted (with `label` only, when given).
    public func treeCount(label: String? = nil) throws(ChimeError) -> Int {
        let filter = Self.labelFilter(label)
        return try store.read { db in
            let sql = "SELECT count(*) FROM focus_session WHERE \(Self.validTree)\(filter.sql)"
            return try Int.fetchOne(db, sql: sql, arguments: filter.arguments) ?? 0
        }
    }

    /// Completed trees, newest first (by end time); at most `limit`; with `label` only, when given.
    public func trees(limit: Int? = nil, label: String? = nil) throws(ChimeError) -> [FocusSession] {
        let filter = Self.labelFilter(label)
        return try store.read { db in
            // Only the columns a tree has, read by position: decoding whole rows by column name
            // was half the time of listing 100,000 trees.
            let cursor = try Row.fetchCursor(
                db,
                sql: """
                    SELECT id, length_s, started_us, ended_us, focus_us, paused_us, label FROM focus_session
                    WHERE \(Self.validTree)\(filter.sql) ORDER BY ended_us DESC LIMIT ?
                    """,
                arguments: filter.arguments + [limit ?? -1]
            )
            var result: [FocusSession] = []
            while let row = try cursor.next() {
                result.append(
                    FocusSession(
                        id: row[0],
                        state: .completed,
                        lengthSeconds: row[1],
                        startedAt: Date(micros: row[2]),
                        endedAt: Date(micros: row[3]),
                        focusMicros: row[4],
                        pausedMicros: row[5],
                        label: row[6]
                    )
                )
            }
            return result
        }
    }

    /// The trees with `label`, newest first, each with its number in the whole forest (as
    /// ``tree(number:)`` finds it: a filtered forest keeps the numbers of the full one); at most
    /// `limit`.
    public func trees(label: String, limit: Int? = nil) throws(ChimeError) -> [(number: Int, tree: FocusSession)] {
        try store.read { db in
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT * FROM (
                        SELECT id, length_s, started_us, ended_us, focus_us, paused_us, label,
                            row_number() OVER (ORDER BY ended_us, id) AS number
                        FROM focus_session WHERE \(Self.validTree)
                    ) WHERE label = ? ORDER BY number DESC LIMIT ?
                    """,
                arguments: [label, limit ?? -1]
            )
            return rows.map { row in
                (
                    number: row[7],
                    tree: FocusSession(
                        id: row[0],
                        state: .completed,
                        lengthSeconds: row[1],
                        startedAt: Date(micros: row[2]),
                        endedAt: Date(micros: row[3]),
                        focusMicros: row[4],
                        pausedMicros: row[5],
                        label: row[6]
                    )
                )
            }
        }
    }

    /// The ended sessions, completed and abandoned, newest first (by end time); at most `limit`:
    /// the app's forest grid, where a given-up session's tree stands withered.
    public func endedSessions(limit: Int) throws(ChimeError) -> [FocusSession] {
        try store.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT * FROM focus_session WHERE state IN ('completed', 'abandoned') AND ended_us IS NOT NULL
                    ORDER BY ended_us DESC, id DESC LIMIT ?
                    """,
                arguments: [limit]
            ).map(FocusTimer.session(from:))
        }
    }

    /// Tree `number` of the forest: 1 is the first planted (the oldest by completion), the
    /// newest is ``treeCount()``; nil when there is no such tree. The forest labels trees so
    /// (`#3`), not by their sessions' ids, which abandoned sessions leave gaps in.
    public func tree(number: Int) throws(ChimeError) -> FocusSession? {
        guard number > 0 else { return nil }
        return try store.read { db in
            try Row.fetchOne(
                db,
                sql: "SELECT * FROM focus_session WHERE \(Self.validTree) ORDER BY ended_us, id LIMIT 1 OFFSET ?",
                arguments: [number - 1]
            ).map(FocusTimer.session(from:))
        }
    }

    /// Tree `number`, or a not-found error saying which numbers the forest has.
    /// - Throws: `.notFound`: `no tree #7: the forest has 3 trees, #1 to #3`.
    public func requireTree(number: Int) throws(ChimeError) -> FocusSession {
        if let tree = try tree(number: number) { return tree }
        let count = try treeCount()
        let has =
            switch count {
            case 0: "the forest has no trees yet ('chime focus start' plants one)"
            case 1: "the forest has 1 tree, #1"
            default: "the forest has \(count) trees, #1 to #\(count)"
            }
        throw ChimeError(.notFound, "no tree #\(number): \(has)")
    }

    /// Trees and focus time per local day in `zone`, and the abandoned count (of the sessions
    /// with `label` only, when given).
    public func days(zone: TimeZone, label: String? = nil) throws(ChimeError) -> (days: [Int: DayTotals], abandoned: Int) {
        let filter = Self.labelFilter(label)
        return try store.read { db in
            var days: [Int: DayTotals] = [:]
            var localDay = LocalDays(zone: zone)
            // The index (state, ended_us, focus_us) covers this without a label: no table rows are read.
            let statement = try db.makeStatement(
                sql: "SELECT ended_us, focus_us FROM focus_session WHERE \(Self.validTree)\(filter.sql) ORDER BY ended_us"
            )
            let cursor = try Row.fetchCursor(statement, arguments: filter.arguments)
            while let row = try cursor.next() {
                let ended: Int64 = row[0]
                let focus: Int64 = row[1]
                let day = localDay.number(of: Date(micros: ended))
                days[day, default: DayTotals()].trees += 1
                days[day, default: DayTotals()].focusMicros += focus
            }
            let abandoned =
                try Int.fetchOne(
                    db,
                    sql: "SELECT count(*) FROM focus_session WHERE state = 'abandoned'\(filter.sql)",
                    arguments: filter.arguments
                ) ?? 0
            return (days, abandoned)
        }
    }

    /// The stats as of `now` in `zone` (of the sessions with `label` only, when given).
    public func stats(now: Date, zone: TimeZone, label: String? = nil) throws(ChimeError) -> (stats: ForestStats, days: [Int: DayTotals]) {
        let (days, abandoned) = try days(zone: zone, label: label)
        var localDay = LocalDays(zone: zone)
        return (ForestStats.from(days: days, abandoned: abandoned, today: localDay.number(of: now)), days)
    }
}

/// One label's share of the ended sessions (`chime stats`' breakdown by label).
public struct LabelTotals: Sendable, Hashable {
    /// The label; nil for the sessions without one.
    public var label: String?
    /// Completed and abandoned sessions.
    public var sessions: Int
    /// Completed sessions (trees).
    public var trees: Int
    /// Abandoned sessions (given up, or ended by a restart).
    public var abandoned: Int
    /// Focus time of the completed sessions, as the stats' total counts it.
    public var focusMicros: Int64

    public init(label: String?, sessions: Int, trees: Int, abandoned: Int, focusMicros: Int64) {
        self.label = label
        self.sessions = sessions
        self.trees = trees
        self.abandoned = abandoned
        self.focusMicros = focusMicros
    }
}

extension Forest {
    /// The ended sessions per label: the most focus time first (then by label), the sessions
    /// without a label last; only `label` when given. A label with no ended session is not listed.
    public func labelTotals(label: String? = nil) throws(ChimeError) -> [LabelTotals] {
        let filter = Self.labelFilter(label)
        return try store.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT label,
                        count(*) AS sessions,
                        sum(CASE WHEN \(Self.validTree) THEN 1 ELSE 0 END) AS trees,
                        sum(CASE WHEN state = 'abandoned' THEN 1 ELSE 0 END) AS abandoned,
                        sum(CASE WHEN \(Self.validTree) THEN focus_us ELSE 0 END) AS focus_total
                    FROM focus_session
                    WHERE (\(Self.validTree) OR state = 'abandoned')\(filter.sql)
                    GROUP BY label
                    ORDER BY label IS NULL, focus_total DESC, label
                    """,
                arguments: filter.arguments
            ).map { row in
                LabelTotals(
                    label: row["label"],
                    sessions: row["sessions"],
                    trees: row["trees"],
                    abandoned: row["abandoned"],
                    focusMicros: row["focus_total"]
                )
            }
        }
    }
}

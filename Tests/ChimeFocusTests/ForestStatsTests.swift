import ChimeCore
import ChimeFocus
import ChimeStore
import ChimeTesting
import Foundation
import GRDB
import Testing

/// The forest and its stats: the seed's ForestStats, streaks by local day, invalid rows.
struct ForestStatsTests {
    static let utc = TimeZone(identifier: "UTC")!
    static let berlin = TimeZone(identifier: "Europe/Berlin")!

    /// An instant given as local wall time in `zone`.
    static func local(_ year: Int, _ month: Int, _ day: Int, _ hour: Int, _ minute: Int = 0, in zone: TimeZone) -> Date {
        ZoneMath.resolve(CivilDateTime(year: year, month: month, day: day, hour: hour, minute: minute), in: zone).instant
    }

    static func tree(_ id: Int64, endedAt end: Date, minutes: Int = 25) -> FocusSession {
        FocusSession(
            id: id,
            state: .completed,
            lengthSeconds: minutes * 60,
            startedAt: end.addingTimeInterval(-Double(minutes * 60)),
            endedAt: end,
            focusMicros: Int64(minutes) * 60_000_000
        )
    }

    static func abandoned(_ id: Int64, at end: Date) -> FocusSession {
        FocusSession(
            id: id,
            state: .abandoned,
            lengthSeconds: 1_500,
            startedAt: end,
            endedAt: end,
            focusMicros: 60_000_000,
            endReason: .gaveUp
        )
    }

    @Test func noSessionsAtAll() {
        let stats = ForestStats.from(sessions: [], now: Date(), zone: Self.utc)
        #expect(stats.totalTrees == 0)
        #expect(stats.totalSessions == 0)
        #expect(stats.completionRate == 0)
        #expect(stats.currentStreak == 0)
        #expect(stats.longestStreak == 0)
        #expect(stats.formattedTotalFocusTime == "0m")
    }

    @Test func totalsTodayAndCompletionRate() {
        let now = Self.local(2026, 3, 10, 18, in: Self.utc)
        var sessions = (1...4).map { Self.tree(Int64($0), endedAt: Self.local(2026, 3, 10, 8 + $0, in: Self.utc)) }
        sessions.append(Self.tree(5, endedAt: Self.local(2026, 3, 9, 23, 59, in: Self.utc), minutes: 45))
        sessions.append(Self.abandoned(6, at: Self.local(2026, 3, 10, 7, in: Self.utc)))
        // Open sessions are neither trees nor ended sessions.
        sessions.append(FocusSession(id: 7, state: .active, lengthSeconds: 1_500, startedAt: now))
        let stats = ForestStats.from(sessions: sessions, now: now, zone: Self.utc)
        #expect(stats.totalTrees == 5)
        #expect(stats.totalFocusMicros == Int64(4 * 25 + 45) * 60_000_000)
        #expect(stats.formattedTotalFocusTime == "2h 25m")
        #expect(stats.totalSessions == 6)
        #expect(stats.todaysTrees == 4)
        #expect(stats.formattedTodaysFocusTime == "1h 40m")
        #expect(stats.abandonedCount == 1)
        #expect(abs(stats.completionRate - 5.0 / 6.0 * 100) < 1e-9)
        #expect(ForestStats.formatFocus(45 * 60_000_000) == "45m")
        #expect(ForestStats.formatFocus(125 * 60_000_000) == "2h 5m")
    }

    @Test func streaksRunAcrossMonthAndYearEnds() {
        // Jan 30, Jan 31, Feb 1 (a streak of 3 across the month end); Dec 31 2025 → Jan 1 2026 (2).
        let days = [(2025, 12, 31), (2026, 1, 1), (2026, 1, 30), (2026, 1, 31), (2026, 2, 1)]
        let sessions = days.enumerated().map { index, day in
            Self.tree(Int64(index + 1), endedAt: Self.local(day.0, day.1, day.2, 12, in: Self.utc))
        }
        let onFeb1 = ForestStats.from(sessions: sessions, now: Self.local(2026, 2, 1, 20, in: Self.utc), zone: Self.utc)
        #expect(onFeb1.currentStreak == 3)
        #expect(onFeb1.longestStreak == 3)
        // The next day, no tree yet: the streak holds until the day ends.
        let onFeb2 = ForestStats.from(sessions: sessions, now: Self.local(2026, 2, 2, 23, 59, in: Self.utc), zone: Self.utc)
        #expect(onFeb2.currentStreak == 3)
        #expect(onFeb2.todaysTrees == 0)
        // A whole day without a tree breaks it.
        let onFeb3 = ForestStats.from(sessions: sessions, now: Self.local(2026, 2, 3, 0, 0, in: Self.utc), zone: Self.utc)
        #expect(onFeb3.currentStreak == 0)
        #expect(onFeb3.longestStreak == 3)
        // Leap day: Feb 28 → Feb 29 → Mar 1 2028.
        let leap = [(2028, 2, 28), (2028, 2, 29), (2028, 3, 1)].enumerated().map { index, day in
            Self.tree(Int64(index + 1), endedAt: Self.local(day.0, day.1, day.2, 9, in: Self.utc))
        }
        #expect(ForestStats.from(sessions: leap, now: Self.local(2028, 3, 1, 10, in: Self.utc), zone: Self.utc).currentStreak == 3)
    }

    @Test func daysEndAtLocalMidnightAcrossDSTChanges() {
        // Berlin, spring forward on Sun 2026-03-29 (23 hours) and fall back on Sun 2026-10-25 (25 hours).
        let z = Self.berlin
        let spring = [
            Self.tree(1, endedAt: Self.local(2026, 3, 28, 23, 30, in: z)),
            // 00:30 local on the short day is still 23:30 UTC the day before: a day of its own here.
            Self.tree(2, endedAt: Self.local(2026, 3, 29, 0, 30, in: z)),
            Self.tree(3, endedAt: Self.local(2026, 3, 29, 23, 50, in: z)),
            Self.tree(4, endedAt: Self.local(2026, 3, 30, 0, 10, in: z)),
        ]
        let stats = ForestStats.from(sessions: spring, now: Self.local(2026, 3, 30, 12, in: z), zone: z)
        #expect(stats.currentStreak == 3)
        #expect(stats.todaysTrees == 1)
        let inUTC = ForestStats.from(sessions: spring, now: Self.local(2026, 3, 30, 12, in: z), zone: Self.utc)
        #expect(inUTC.todaysTrees == 0)  // 00:10 Berlin is 22:10 UTC on the 29th
        // The 25-hour day: 00:30 and 23:30 local are both the 25th; the 26th continues the streak.
        let fall = [
            Self.tree(1, endedAt: Self.local(2026, 10, 25, 0, 30, in: z)),
            Self.tree(2, endedAt: Self.local(2026, 10, 25, 23, 30, in: z)),
            Self.tree(3, endedAt: Self.local(2026, 10, 26, 0, 5, in: z)),
        ]
        let autumn = ForestStats.from(sessions: fall, now: Self.local(2026, 10, 26, 9, in: z), zone: z)
        #expect(autumn.currentStreak == 2)
        #expect(autumn.longestStreak == 2)
        #expect(autumn.todaysTrees == 1)
        var days = LocalDays(zone: z)
        #expect(days.number(of: Self.local(2026, 10, 25, 23, 59, in: z)) == days.number(of: Self.local(2026, 10, 25, 0, 0, in: z)))
    }

    @Test func invalidRowsAreLeftOutOfTheForestAndStats() throws {
        let h = try FocusHarness()
        defer { h.cleanUp() }
        let queue = try DatabaseQueue(path: h.store.path)
        try queue.write { db in
            let end = FocusHarness.t0.micros
            // Two valid trees, one without an end time, one with zero focus time, one abandoned.
            for (ended, focus, state) in [
                (end - 7_200_000_000, 1_500_000_000, "completed"),
                (end, 1_500_000_000, "completed"),
                (nil, 1_500_000_000, "completed"),
                (end, 0, "completed"),
                (end, 600_000_000, "abandoned"),
            ] as [(Int64?, Int64, String)] {
                try db.execute(
                    sql: "INSERT INTO focus_session (state, length_s, started_us, ended_us, focus_us) VALUES (?, 1500, ?, ?, ?)",
                    arguments: [state, end - 10_000_000_000, ended, focus]
                )
            }
        }
        let forest = Forest(store: h.store)
        #expect(try forest.treeCount() == 2)
        let trees = try forest.trees()
        #expect(trees.map(\.id) == [2, 1])  // newest first, by end time
        #expect(trees.allSatisfy { $0.isValidTree })
        #expect(try forest.trees(limit: 1).map(\.id) == [2])
        let (stats, _) = try forest.stats(now: FocusHarness.t0, zone: Self.utc)
        #expect(stats.totalTrees == 2)
        #expect(stats.abandonedCount == 1)
        #expect(stats.totalSessions == 3)
        #expect(stats.todaysTrees == 2)
        // The grid draws only what it is given, and never crashes on an empty forest.
        #expect(FocusText.grid([], width: 80, zone: Self.utc).isEmpty)
    }

    @Test func theGridFitsTheTerminalWidth() {
        let trees = (1...7).map { Self.tree(Int64($0), endedAt: Self.local(2026, 11, $0, 10, in: Self.utc)) }
        for width in [20, 40, 80, 132] {
            let lines = FocusText.grid(trees, width: width, zone: Self.utc)
            #expect(lines.allSatisfy { $0.count <= max(width, TreeArt.width) }, "width \(width)")
            let perRow = max(1, width / (TreeArt.width + 2))
            let rows = (trees.count + perRow - 1) / perRow
            #expect(lines.count == rows * (TreeArt.height + 3), "width \(width)")
        }
        let lines = FocusText.grid(Array(trees.prefix(2)), width: 80, zone: Self.utc)
        #expect(lines[TreeArt.height].contains("#1") && lines[TreeArt.height].contains("#2"))
        #expect(lines[TreeArt.height + 1].contains("Nov 1") && lines[TreeArt.height + 1].contains("Nov 2"))
    }

    @Test func theGridLabelsTreesByTheirNumberInTheForestNotTheirIds() {
        // Sessions 40 and 17 (others were given up): the newest is tree #12 of twelve.
        let trees = [
            Self.tree(40, endedAt: Self.local(2026, 11, 3, 10, in: Self.utc)),
            Self.tree(17, endedAt: Self.local(2026, 11, 2, 10, in: Self.utc)),
        ]
        let lines = FocusText.grid(trees, newest: 12, width: 80, zone: Self.utc)
        let labels = lines[TreeArt.height].split(separator: " ")
        #expect(labels == ["#12", "#11"])
        #expect(!lines.joined().contains("#40") && !lines.joined().contains("#17"))
    }

    @Test func forestNumbersCountFromTheFirstTreePlanted() throws {
        let h = try FocusHarness()
        defer { h.cleanUp() }
        // A tree, a given-up session, another tree.
        _ = try h.timer.start(minutes: 10)
        h.wall.advance(by: 600)
        _ = try h.timer.settle()
        _ = try h.timer.start(minutes: 10)
        _ = try h.timer.giveUp()
        let third = try h.timer.start(minutes: 10)
        h.wall.advance(by: 600)
        _ = try h.timer.settle()
        let forest = Forest(store: h.store)
        #expect(try forest.tree(number: 1)?.id == 1)
        #expect(try forest.tree(number: 2)?.id == third.id)
        #expect(third.id == 3)
        #expect(try forest.tree(number: 3) == nil)
        #expect(try forest.tree(number: 0) == nil)
    }

    @Test func theCountdownAndItsWatchFitFortyColumns() throws {
        let h = try FocusHarness()
        defer { h.cleanUp() }
        let session = try h.timer.start(minutes: 120)
        var long = session
        long.id = 12_345_678
        for seconds in [0, 1_440, 3_600, 7_199] {
            h.wall.advance(to: h.at(TimeInterval(seconds)))
            let time = h.machine.now()
            for state in [SessionState.active, .paused] {
                long.state = state
                let lines = FocusText.watch(long, at: time, zone: Self.utc)
                #expect(lines.allSatisfy { $0.count <= FocusText.narrowest }, "\(lines.filter { $0.count > 40 })")
                #expect(lines.contains { $0.contains(FocusTimer.countdown(long.remainingSeconds(at: time))) })
                #expect(lines.contains { $0.contains("stage \(long.stage(at: time)) of 5") })
            }
        }
        #expect(FocusText.narrowest == 40)
    }

    @Test func theChartHasOneColumnPerDayScaledToThePeak() {
        let today = ZoneMath.daysFromCivil(year: 2026, month: 11, day: 22)
        let days: [Int: DayTotals] = [today: DayTotals(trees: 4), today - 1: DayTotals(trees: 2), today - 29: DayTotals(trees: 1)]
        let lines = FocusText.chart(days: days, today: today, count: 30, height: 4)
        #expect(lines.count == 4 + 2)
        #expect(lines[0].hasPrefix("4 │"))
        // Today's column is full height; yesterday's reaches half; 30 days ago shows on the bottom row.
        let bottom = Array(lines[3])
        let top = Array(lines[0])
        let origin = lines[3].distance(from: lines[3].startIndex, to: lines[3].firstIndex(of: "│")!) + 1
        #expect(top.count >= origin + 60 && top[origin + 58] == "█")
        #expect(top[origin + 56] == " ")
        #expect(bottom[origin + 56] == "█")
        #expect(bottom[origin] != " ")
        #expect(lines[5].hasSuffix("22"))
    }
}

import ChimeCore
import ChimeGateway
import Foundation
import Testing

@Suite struct GateStatsTests {
    let paris = TimeZone(identifier: "Europe/Paris")!

    /// The instant of a local time in `zone`.
    func at(_ year: Int, _ month: Int, _ day: Int, _ hour: Int = 12, _ minute: Int = 0, in zone: TimeZone) -> Date {
        ZoneMath.resolve(CivilDateTime(year: year, month: month, day: day, hour: hour, minute: minute), in: zone).instant
    }

    func event(_ outcome: GateEvent.Outcome, _ at: Date, pause: TimeInterval = 30, program: String = "firefox") -> GateEvent {
        GateEvent(programID: program, at: at, pauseSeconds: pause, outcome: outcome)
    }

    @Test func header() {
        #expect(GateStats.header == "Proof It's Working.")
        #expect(GateHub.greeting == "Your Mindful Hub.")
    }

    @Test func noEvents() {
        let now = at(2026, 5, 10, in: paris)
        let stats = GateStats.from(events: [], now: now, zone: paris)
        #expect(stats.hoursReclaimed == 0)
        #expect(stats.consciousExits == 0)
        #expect(stats.averagePauseSeconds == nil)
        #expect(stats.intentionalityScore == nil)
        #expect(stats.trend.count == 30)
        #expect(stats.trend.allSatisfy { $0.exits == 0 && $0.proceeds == 0 && $0.deepens == 0 })
        #expect(stats.trend.first?.date == "2026-04-11")
        #expect(stats.trend.last?.date == "2026-05-10")
        #expect(stats.streak == GateStreak(count: 0))
        #expect(!stats.streak.showsBanner)
        #expect(stats.streak.message == "")
    }

    @Test func onlyExits() {
        let now = at(2026, 5, 10, in: paris)
        let events = (0..<3).map { event(.exit, now - Double($0) * 60, pause: 10) }
        let stats = GateStats.from(events: events, now: now, zone: paris)
        #expect(stats.consciousExits == 3)
        #expect(stats.intentionalityScore == 1)
        #expect(stats.hoursReclaimed == 1)  // 3 × 20 min
        #expect(stats.averagePauseSeconds == 10)
        #expect(stats.trend.last?.exits == 3)
        #expect(stats.streak.count == 1)
    }

    @Test func onlyProceeds() {
        let now = at(2026, 5, 10, in: paris)
        let stats = GateStats.from(events: [event(.proceed, now), event(.proceed, now - 86_400)], now: now, zone: paris)
        #expect(stats.consciousExits == 0)
        #expect(stats.intentionalityScore == 0)
        #expect(stats.hoursReclaimed == 0)
        #expect(stats.averagePauseSeconds == 30)
        #expect(stats.streak.count == 0)
    }

    @Test func intentionalityIgnoresClosedDeepenAndNotGated() {
        let now = at(2026, 5, 10, in: paris)
        let events = [
            event(.exit, now), event(.proceed, now), event(.proceed, now), event(.proceed, now),
            event(.closed, now), event(.deepen, now), event(.notGated(reason: "grace"), now),
        ]
        #expect(GateStats.intentionalityScore(events) == 0.25)
        #expect(GateStats.intentionalityScore([event(.closed, now), event(.deepen, now)]) == nil)
    }

    @Test func hoursReclaimedPerProgram() {
        let now = at(2026, 5, 10, in: paris)
        let events = [event(.exit, now, program: "firefox"), event(.exit, now, program: "steam"), event(.proceed, now, program: "steam")]
        #expect(GateStats.hoursReclaimed(events) == 40.0 / 60)
        #expect(GateStats.hoursReclaimed(events, sessionLengths: ["steam": 2 * 3_600]) == 2 + 20.0 / 60)
        #expect(GateStats.hoursReclaimed(events, defaultSessionLength: 30 * 60) == 1)
    }

    @Test func averagePauseCountsDeepensIntoTheirGate() {
        let now = at(2026, 5, 10, in: paris)
        // One gate: 30 s, Deepen, 30 s, Deepen, 40 s, Proceed (100 s); another: Exit after 20 s.
        let events = [
            event(.deepen, now, pause: 30), event(.deepen, now, pause: 30), event(.proceed, now, pause: 40),
            event(.exit, now, pause: 20), event(.notGated(reason: "no display"), now, pause: 0),
        ]
        #expect(GateStats.averagePauseSeconds(events) == 60)
        #expect(GateStats.averagePauseSeconds([event(.deepen, now)]) == nil)
    }

    @Test func aDayWithNoneIsInTheTrendWithZeros() {
        let now = at(2026, 5, 10, in: paris)
        let events = [event(.exit, at(2026, 5, 8, 9, in: paris)), event(.proceed, at(2026, 5, 10, 0, 30, in: paris))]
        let trend = GateStats.trend(events, now: now, zone: paris)
        #expect(trend.suffix(3).map(\.date) == ["2026-05-08", "2026-05-09", "2026-05-10"])
        #expect(trend.suffix(3).map(\.exits) == [1, 0, 0])
        #expect(trend.suffix(3).map(\.proceeds) == [0, 0, 1])
    }

    @Test func eventsOutsideTheWindowAreLeftOut() {
        let now = at(2026, 5, 10, in: paris)
        let events = [event(.exit, at(2026, 4, 10, 23, 59, in: paris)), event(.exit, at(2026, 5, 11, 0, 1, in: paris))]
        #expect(GateStats.trend(events, now: now, zone: paris).allSatisfy { $0.exits == 0 })
    }

    /// Days on both sides of a DST change: each local day once, in order, its events counted by
    /// local midnight (the 23- and 25-hour days included).
    @Test(arguments: [
        ("America/New_York", 2026, 3, 8, 20),  // spring forward: a 23-hour day
        ("America/New_York", 2025, 11, 2, 20),  // fall back: a 25-hour day
        ("Europe/Paris", 2026, 3, 29, 5),
        ("Australia/Lord_Howe", 2026, 4, 5, 3),  // a half-hour change
    ])
    func trendOverADSTDay(zoneID: String, year: Int, month: Int, day: Int, nowDay: Int) throws {
        let zone = try #require(TimeZone(identifier: zoneID))
        let nowMonth = nowDay < day ? month + 1 : month
        let now = at(year, nowMonth, nowDay, 12, in: zone)
        let events = [
            event(.exit, at(year, month, day, 0, 10, in: zone)),
            event(.exit, at(year, month, day, 23, 50, in: zone)),
            event(.proceed, at(year, month, day + 1, 0, 10, in: zone)),
            event(.proceed, at(year, month, day - 1, 23, 50, in: zone)),
        ]
        let trend = GateStats.trend(events, now: now, zone: zone)
        #expect(trend.count == 30)
        #expect(Set(trend.map(\.date)).count == 30)
        #expect(trend.map(\.date) == trend.map(\.date).sorted())
        let two = { (n: Int) in n < 10 ? "0\(n)" : "\(n)" }
        let dstDay = try #require(trend.first { $0.date == "\(year)-\(two(month))-\(two(day))" })
        #expect(dstDay.exits == 2)
        #expect(dstDay.proceeds == 0)
        #expect(trend.reduce(0) { $0 + $1.proceeds } == 2)
    }

    @Test func streakCountsMindfulDaysUpToToday() {
        let now = at(2026, 5, 10, 18, in: paris)
        let days = [10, 9, 8].map { event(.exit, at(2026, 5, $0, 9, in: paris)) }
        #expect(GateStats.streak(days, now: now, zone: paris).count == 3)
    }

    @Test func todayWithoutAnExitYetKeepsYesterdaysStreak() {
        let now = at(2026, 5, 10, 8, in: paris)
        let days = [9, 8].map { event(.exit, at(2026, 5, $0, 9, in: paris)) }
        #expect(GateStats.streak(days, now: now, zone: paris).count == 2)
        // A day that ended without an exit breaks it.
        #expect(GateStats.streak(days, now: at(2026, 5, 11, 8, in: paris), zone: paris).count == 0)
    }

    @Test func moreProceedsThanExitsIsNotAMindfulDay() {
        let now = at(2026, 5, 10, 18, in: paris)
        let events = [
            event(.exit, at(2026, 5, 10, 9, in: paris)),
            event(.exit, at(2026, 5, 9, 9, in: paris)), event(.proceed, at(2026, 5, 9, 10, in: paris)),
            event(.proceed, at(2026, 5, 9, 11, in: paris)),
            event(.exit, at(2026, 5, 8, 9, in: paris)),
        ]
        #expect(GateStats.streak(events, now: now, zone: paris).count == 1)
        // As many proceeds as exits still counts.
        let even = events.filter { $0.at != at(2026, 5, 9, 11, in: paris) }
        #expect(GateStats.streak(even, now: now, zone: paris).count == 3)
    }

    @Test(arguments: [
        (0, false, ""),
        (1, true, "1 mindful day. A fine start."),
        (2, true, "2 mindful days in a row. Keep going."),
        (6, true, "6 mindful days in a row. Keep going."),
        (7, true, "7 mindful days in a row. It's becoming a habit."),
        (29, true, "29 mindful days in a row. It's becoming a habit."),
        (30, true, "30 mindful days in a row. Proof it's working."),
        (365, true, "365 mindful days in a row. Proof it's working."),
    ])
    func streakBanner(count: Int, shows: Bool, message: String) {
        let streak = GateStreak(count: count)
        #expect(streak.showsBanner == shows)
        #expect(streak.message == message)
    }

    @Test func statsEncodeForJSON() throws {
        let now = at(2026, 5, 10, in: paris)
        let data = try JSONEncoder().encode(GateStats.from(events: [event(.exit, now)], now: now, zone: paris))
        let text = String(decoding: data, as: UTF8.self)
        #expect(text.contains("\"message\":\"1 mindful day. A fine start.\""))
        #expect(text.contains("\"intentionalityScore\":1"))
    }
}

import ChimeCore
import Foundation
import Testing

/// Every occurrence in [from, until), by iterating nextOccurrence; checks it never stalls or goes back.
func walkOccurrences(_ trigger: Trigger, from: Date, until: Date, zone: TimeZone, limit: Int = 5_000) -> [Date] {
    var out: [Date] = []
    var cursor = from
    while out.count < limit, let next = trigger.nextOccurrence(after: cursor, systemZone: zone), next < until {
        #expect(next > cursor, "nextOccurrence(after: \(isoZ(cursor))) returned \(isoZ(next))")
        out.append(next)
        cursor = next
    }
    return out
}

/// Occurrences per local calendar day.
func countsPerLocalDay(_ instants: [Date], in zone: TimeZone) -> [Int: Int] {
    var counts: [Int: Int] = [:]
    for i in instants { counts[ZoneMath.civil(i, in: zone).local.dayNumber, default: 0] += 1 }
    return counts
}

@Suite("Trigger: weekly rules across DST")
struct WeeklyDSTTests {
    struct DailyCase: Sendable, CustomTestStringConvertible {
        var zone: String
        var time: String
        var first: CivilDateTime  // first of five local days
        var transitionDay: Int  // day of month of the transition
        var expectedOnTransition: Date
        var expectedLocal: String  // wall clock on the transition day
        var testDescription: String { "\(zone) daily \(time) around \(first.year)-\(first.month)-\(transitionDay)" }
    }

    static let dailyCases: [DailyCase] = [
        DailyCase(
            zone: "America/New_York",
            time: "02:30",
            first: .init(year: 2026, month: 3, day: 6),
            transitionDay: 8,
            expectedOnTransition: utcInstant(2026, 3, 8, 7, 30),
            expectedLocal: "03:30"
        ),
        DailyCase(
            zone: "America/New_York",
            time: "01:30",
            first: .init(year: 2026, month: 10, day: 30),
            transitionDay: 1,
            expectedOnTransition: utcInstant(2026, 11, 1, 5, 30),
            expectedLocal: "01:30"
        ),
        DailyCase(
            zone: "Europe/Berlin",
            time: "02:30",
            first: .init(year: 2026, month: 3, day: 27),
            transitionDay: 29,
            expectedOnTransition: utcInstant(2026, 3, 29, 1, 30),
            expectedLocal: "03:30"
        ),
        DailyCase(
            zone: "Europe/Berlin",
            time: "02:30",
            first: .init(year: 2026, month: 10, day: 23),
            transitionDay: 25,
            expectedOnTransition: utcInstant(2026, 10, 25, 0, 30),
            expectedLocal: "02:30"
        ),
        DailyCase(
            zone: "Australia/Lord_Howe",
            time: "02:15",
            first: .init(year: 2026, month: 10, day: 2),
            transitionDay: 4,
            expectedOnTransition: utcInstant(2026, 10, 3, 15, 45),
            expectedLocal: "02:45"
        ),
        DailyCase(
            zone: "Australia/Lord_Howe",
            time: "01:45",
            first: .init(year: 2026, month: 4, day: 3),
            transitionDay: 5,
            expectedOnTransition: utcInstant(2026, 4, 4, 14, 45),
            expectedLocal: "01:45"
        ),
    ]

    @Test("A daily time fires exactly once per local day across a transition", arguments: dailyCases)
    func dailyAcrossTransition(_ c: DailyCase) {
        let zone = TestZones.zone(c.zone)
        let trigger = Trigger.weekly(times: [hm(c.time)], days: .everyDay, zone: .fixed(c.zone))
        let start = ZoneMath.resolve(c.first, in: zone).instant
        let end = ZoneMath.resolve(CivilDateTime(dayNumber: c.first.dayNumber + 5, time: hm("00:00")), in: zone).instant
        let all = walkOccurrences(trigger, from: start.addingTimeInterval(-1), until: end, zone: TestZones.utc)
        #expect(all.count == 5)
        let counts = countsPerLocalDay(all, in: zone)
        #expect(counts.count == 5)
        #expect(counts.values.allSatisfy { $0 == 1 })
        let onTransition = all.filter { ZoneMath.civil($0, in: zone).local.day == c.transitionDay }
        #expect(onTransition.map(isoZ) == [isoZ(c.expectedOnTransition)])
        if let t = onTransition.first {
            let l = ZoneMath.civil(t, in: zone).local
            #expect(hm(c.expectedLocal) == LocalTime(hour: l.hour, minute: l.minute))
        }
    }

    @Test("Pacific/Apia: 08:00 daily over the skipped 2011-12-30 fires Dec 28, 29, 31 once, Jan 1")
    func apiaSkippedDay() {
        let trigger = Trigger.weekly(times: [hm("08:00")], days: .everyDay, zone: .fixed("Pacific/Apia"))
        let start = localInstant(TestZones.apia, 2011, 12, 28)
        let occ = trigger.occurrences(after: start, count: 5, systemZone: TestZones.utc)
        #expect(
            occ.map { isoZ($0.instant) }
                == [
                    utcInstant(2011, 12, 28, 18), utcInstant(2011, 12, 29, 18), utcInstant(2011, 12, 30, 18), utcInstant(2011, 12, 31, 18),
                    utcInstant(2012, 1, 1, 18),
                ].map(isoZ)
        )
        #expect(occ.map { ZoneMath.civil($0.instant, in: TestZones.apia).local.day } == [28, 29, 31, 1, 2])
        #expect(occ.allSatisfy { $0.resolution == .exact })  // Dec 31 08:00 was asked for exactly
    }

    @Test("Pacific/Apia: a Friday-only 08:00 on the skipped Friday fires at Dec 31 08:00 +14, shifted a day")
    func apiaSkippedFriday() {
        let trigger = Trigger.weekly(times: [hm("08:00")], days: .friday, zone: .fixed("Pacific/Apia"))
        let occ = trigger.occurrences(after: localInstant(TestZones.apia, 2011, 12, 27), count: 2, systemZone: TestZones.utc)
        #expect(occ.map { isoZ($0.instant) } == [isoZ(utcInstant(2011, 12, 30, 18)), isoZ(utcInstant(2012, 1, 5, 18))])
        #expect(occ.first?.resolution == .shiftedForward(seconds: 86_400, requested: hm("08:00")))
    }

    @Test("Pacific/Apia: a month of daily 08:00 around the skip has one per local day and none on Dec 30")
    func apiaMonth() {
        let trigger = Trigger.weekly(times: [hm("08:00")], days: .everyDay, zone: .fixed("Pacific/Apia"))
        let all = walkOccurrences(
            trigger,
            from: localInstant(TestZones.apia, 2011, 12, 1),
            until: localInstant(TestZones.apia, 2012, 1, 31),
            zone: TestZones.utc
        )
        let counts = countsPerLocalDay(all, in: TestZones.apia)
        #expect(all.count == 60)  // Dec 1...Jan 30 is 61 calendar days, less the skipped one
        #expect(counts.values.allSatisfy { $0 == 1 })
        #expect(counts[ZoneMath.daysFromCivil(year: 2011, month: 12, day: 30)] == nil)
    }

    @Test(
        "A year of two times a day: strictly increasing, exactly two per local day",
        arguments: ["America/New_York", "Europe/Berlin", "Australia/Lord_Howe"]
    )
    func yearOfTransitions(_ id: String) {
        let zone = TestZones.zone(id)
        let times = [hm("01:45"), hm("02:30")]
        let trigger = Trigger.weekly(times: times, days: .everyDay, zone: .floating)
        let all = walkOccurrences(trigger, from: localInstant(zone, 2026, 1, 1), until: localInstant(zone, 2027, 1, 1), zone: zone)
        #expect(all.count == 730)
        let counts = countsPerLocalDay(all, in: zone)
        #expect(counts.count == 365)
        #expect(counts.values.allSatisfy { $0 == 2 })
        // Every resolution reported by occurrences agrees with the wall clock.
        let occ = trigger.occurrences(after: localInstant(zone, 2026, 1, 1), count: 730, systemZone: zone)
        #expect(occ.map(\.instant) == all)
        for o in occ {
            let l = ZoneMath.civil(o.instant, in: zone).local
            let wall = l.hour * 3600 + l.minute * 60
            switch o.resolution {
            case .exact, .firstOfRepeated:
                #expect(times.contains { $0.secondsIntoDay == wall })
            case .shiftedForward(let seconds, let requested):
                #expect(requested.secondsIntoDay + seconds == wall)
            }
        }
    }
}

@Suite("Trigger: weekday sets, several times, zones")
struct WeeklyRuleTests {
    @Test("Weekdays skip the weekend")
    func weekdays() {
        let trigger = Trigger.weekly(times: [hm("08:00")], days: .weekdays, zone: .fixed("America/New_York"))
        // Friday 2026-03-13 09:00 → Monday 2026-03-16 08:00 (EDT).
        let next = trigger.nextOccurrence(after: localInstant(TestZones.newYork, 2026, 3, 13, 9), systemZone: TestZones.berlin)
        #expect(next.map(isoZ) == isoZ(utcInstant(2026, 3, 16, 12)))
    }

    @Test("Weekend only")
    func weekend() {
        let trigger = Trigger.weekly(times: [hm("10:00")], days: .weekend, zone: .fixed("Europe/Berlin"))
        let occ = trigger.occurrences(after: localInstant(TestZones.berlin, 2026, 6, 1), count: 3, systemZone: TestZones.utc)
        #expect(
            occ.map { isoZ($0.instant) } == [utcInstant(2026, 6, 6, 8), utcInstant(2026, 6, 7, 8), utcInstant(2026, 6, 13, 8)].map(isoZ)
        )
    }

    @Test("mon,wed,fri at 08:00 and 20:00, in order")
    func severalTimes() throws {
        let trigger = Trigger.weekly(
            times: [hm("08:00"), hm("20:00")],
            days: [.monday, .wednesday, .friday],
            zone: .fixed("Europe/Berlin")
        )
        // Monday 2026-06-01 09:00 Berlin (+02:00).
        let occ = trigger.occurrences(after: localInstant(TestZones.berlin, 2026, 6, 1, 9), count: 6, systemZone: TestZones.newYork)
        #expect(
            occ.map { isoZ($0.instant) }
                == [
                    utcInstant(2026, 6, 1, 18), utcInstant(2026, 6, 3, 6), utcInstant(2026, 6, 3, 18), utcInstant(2026, 6, 5, 6),
                    utcInstant(2026, 6, 5, 18),
                    utcInstant(2026, 6, 8, 6),
                ].map(isoZ)
        )
    }

    @Test("An occurrence at exactly the input instant is not returned")
    func strictlyAfter() {
        let trigger = Trigger.weekly(times: [hm("08:00")], days: .everyDay, zone: .fixed("Europe/Berlin"))
        let at = localInstant(TestZones.berlin, 2026, 6, 1, 8)
        #expect(trigger.nextOccurrence(after: at, systemZone: TestZones.utc) == localInstant(TestZones.berlin, 2026, 6, 2, 8))
        #expect(trigger.nextOccurrence(after: at.addingTimeInterval(-0.001), systemZone: TestZones.utc) == at)
    }

    @Test("Floating: 08:00 stays 08:00 after travel")
    func floatingFollowsSystemZone() throws {
        let trigger = Trigger.weekly(times: [hm("08:00")], days: .everyDay, zone: .floating)
        let after = utcInstant(2026, 6, 1)
        let inBerlin = try #require(trigger.nextOccurrence(after: after, systemZone: TestZones.berlin))
        let inNewYork = try #require(trigger.nextOccurrence(after: after, systemZone: TestZones.newYork))
        #expect(inBerlin != inNewYork)
        #expect(isoZ(inBerlin) == isoZ(utcInstant(2026, 6, 1, 6)))
        #expect(isoZ(inNewYork) == isoZ(utcInstant(2026, 6, 1, 12)))
        for (instant, zone) in [(inBerlin, TestZones.berlin), (inNewYork, TestZones.newYork)] {
            let l = ZoneMath.civil(instant, in: zone).local
            #expect(l.hour == 8 && l.minute == 0)
        }
    }

    @Test("Fixed: the rule's zone wins over the system zone")
    func fixedIgnoresSystemZone() {
        let trigger = Trigger.weekly(times: [hm("08:00")], days: .everyDay, zone: .fixed("Europe/Berlin"))
        let after = utcInstant(2026, 6, 1)
        let a = trigger.nextOccurrence(after: after, systemZone: TestZones.newYork)
        let b = trigger.nextOccurrence(after: after, systemZone: TestZones.lordHowe)
        #expect(a == b)
        #expect(a.map(isoZ) == isoZ(utcInstant(2026, 6, 1, 6)))
    }

    @Test("Empty days or times never fire")
    func emptyRule() {
        #expect(
            Trigger.weekly(times: [], days: .everyDay, zone: .floating).nextOccurrence(
                after: utcInstant(2026, 1, 1),
                systemZone: TestZones.utc
            ) == nil
        )
        #expect(
            Trigger.weekly(times: [hm("08:00")], days: [], zone: .floating).nextOccurrence(
                after: utcInstant(2026, 1, 1),
                systemZone: TestZones.utc
            ) == nil
        )
    }
}

@Suite("Trigger: interval and once")
struct IntervalAndOnceTests {
    static let anchor = utcInstant(2026, 6, 1, 12)

    @Test(
        "Interval occurrences are anchor + k·s with k ≥ 1",
        arguments: [
            (-100.0, 7_200.0), (0.0, 7_200.0), (7_199.5, 7_200.0), (7_200.0, 14_400.0), (1_000_000.0, 1_000_800.0),
        ]
    )
    func interval(_ afterOffset: Double, _ expectedOffset: Double) {
        let trigger = Trigger.interval(seconds: 7_200, anchor: Self.anchor)
        let next = trigger.nextOccurrence(after: Self.anchor.addingTimeInterval(afterOffset), systemZone: TestZones.utc)
        #expect(next == Self.anchor.addingTimeInterval(expectedOffset))
    }

    @Test("Interval with a fractional anchor never repeats or goes back")
    func intervalPrecision() {
        let anchor = Date(timeIntervalSince1970: 1_780_000_000.123_456_7)
        let trigger = Trigger.interval(seconds: 45, anchor: anchor)
        let occ = trigger.occurrences(after: anchor, count: 10_000, systemZone: TestZones.utc)
        #expect(occ.count == 10_000)
        var previous = anchor
        for o in occ {
            #expect(o.instant > previous)
            #expect(abs(o.instant.timeIntervalSince(previous) - 45) < 0.001)
            #expect(o.resolution == .exact)
            previous = o.instant
        }
    }

    @Test("Once fires only if it is still ahead")
    func once() {
        let at = utcInstant(2026, 12, 24, 17)
        let trigger = Trigger.once(at)
        #expect(trigger.nextOccurrence(after: at.addingTimeInterval(-1), systemZone: TestZones.utc) == at)
        #expect(trigger.nextOccurrence(after: at, systemZone: TestZones.utc) == nil)
        #expect(trigger.nextOccurrence(after: at.addingTimeInterval(1), systemZone: TestZones.utc) == nil)
        #expect(
            trigger.occurrences(after: utcInstant(2026, 1, 1), count: 5, systemZone: TestZones.utc) == [
                Occurrence(instant: at, resolution: .exact)
            ]
        )
        #expect(!trigger.isRecurring)
        #expect(Trigger.interval(seconds: 60, anchor: at).isRecurring)
        #expect(Trigger.weekly(times: [hm("08:00")], days: .everyDay, zone: .floating).isRecurring)
    }

    @Test(
        "Summaries",
        arguments: [
            (Trigger.once(utcInstant(2026, 1, 1)), "once"),
            (.weekly(times: [hm("08:00")], days: .weekdays, zone: .floating), "every weekday 08:00"),
            (.weekly(times: [hm("08:00")], days: .everyDay, zone: .floating), "every day 08:00"),
            (
                .weekly(times: [hm("08:00"), hm("20:00")], days: [.monday, .wednesday, .friday], zone: .fixed("Europe/Berlin")),
                "every mon,wed,fri 08:00,20:00 (Europe/Berlin)"
            ),
            (.interval(seconds: 7_200, anchor: utcInstant(2026, 1, 1)), "every 2h"),
            (.interval(seconds: 5_400, anchor: utcInstant(2026, 1, 1)), "every 90m"),
            (.interval(seconds: 45, anchor: utcInstant(2026, 1, 1)), "every 45s"),
            (.interval(seconds: 172_800, anchor: utcInstant(2026, 1, 1)), "every 2d"),
            (.interval(seconds: 604_800, anchor: utcInstant(2026, 1, 1)), "every 1w"),
        ]
    )
    func summary(_ trigger: Trigger, _ expected: String) {
        #expect(trigger.summary == expected)
    }

    @Test("Triggers round-trip through JSON")
    func codable() throws {
        let triggers: [Trigger] = [
            .once(Date(timeIntervalSince1970: 1_790_000_000)),
            .weekly(times: [hm("08:00"), hm("20:00")], days: [.monday, .friday], zone: .fixed("Europe/Berlin")),
            .weekly(times: [hm("07:05")], days: .weekend, zone: .floating),
            .interval(seconds: 90, anchor: Date(timeIntervalSince1970: 1_790_000_000)),
        ]
        let data = try JSONEncoder().encode(triggers)
        #expect(try JSONDecoder().decode([Trigger].self, from: data) == triggers)
        #expect(String(decoding: try JSONEncoder().encode(hm("08:05")), as: UTF8.self) == "\"08:05\"")
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(LocalTime.self, from: Data("\"25:00\"".utf8)) }
    }
}

@Suite("Trigger: occurrences from a stored next due time")
struct OccurrencesFromTests {
    @Test(
        "A one-shot far in the future is its own first occurrence (1 µs before it is the same Date past about 2550)",
        arguments: [2030, 2600, 9000]
    )
    func farFutureOneShot(year: Int) throws {
        let due = try TimeParsing.instant("\(year)-01-01T10:00:00Z", now: Date(), zone: TimeZone(identifier: "UTC")!)
        let trigger = Trigger.once(due)
        #expect(trigger.occurrences(from: due, count: 5, systemZone: .current).map(\.instant) == [due])
        #expect(trigger.occurrences(from: due.addingTimeInterval(1), count: 5, systemZone: .current).isEmpty)
    }
}

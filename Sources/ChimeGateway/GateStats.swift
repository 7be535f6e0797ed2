import ChimeCore
import Foundation

/// The gateway's statistics ("Proof It's Working."), computed from usage events on demand
/// (never stored, so never stale). Each figure is a pure function of the events, defined here:
///
/// - **Conscious exits**: the number of Exit to Focus choices.
/// - **Hours reclaimed**: each conscious exit × the program's typical session length, in
///   hours. Chime cannot see how long a program would have been used, so the length is a stated
///   default, ``defaultSessionLength`` (20 minutes), overridable per program id.
/// - **Average pause time**: the seconds spent at gates (every pause, Deepen's included) ÷ the
///   number of gates that ended (exit, proceed, closed); nil with none. Launches that were not
///   gated count on neither side.
/// - **Intentionality score**: exits ÷ (exits + proceeds), from 0 to 1; nil when there are
///   neither (never a made-up 0). Closed gates and Deepens count on neither side.
/// - **Trend**: the last 30 local days (in the zone given), oldest first, each with its counts;
///   days without events are there with zeros.
/// - **Streak**: see ``GateStreak``.
public struct GateStats: Sendable, Equatable, Codable {
    /// The statistics screen's header, as in the seed.
    public static let header = "Proof It's Working."
    /// The typical session length of a program whose length was not given: 20 minutes.
    public static let defaultSessionLength: TimeInterval = 20 * 60

    public var hoursReclaimed: Double
    public var consciousExits: Int
    public var proceeds: Int
    /// Seconds; nil when no gate has ended.
    public var averagePauseSeconds: TimeInterval?
    /// From 0 to 1; nil with neither exits nor proceeds.
    public var intentionalityScore: Double?
    /// The last ``trendDays`` local days, oldest first, today last.
    public var trend: [GateDay]
    public var streak: GateStreak

    /// The figures as labelled rows, as `chime gate stats` prints them and the app shows them:
    /// Hours reclaimed `1.5`, Conscious exits `4`, Average pause `42 s` (`—` with none),
    /// Intentionality score `80 %` (`—`), and Streak with its message while it runs.
    public var summaryRows: [(label: String, value: String)] {
        var rows = [
            ("Hours reclaimed", String(format: "%.1f", hoursReclaimed)),
            ("Conscious exits", "\(consciousExits)"),
            ("Average pause", averagePauseSeconds.map { String(format: "%.0f s", $0) } ?? "—"),
            ("Intentionality score", intentionalityScore.map { "\(Int(($0 * 100).rounded())) %" } ?? "—"),
        ]
        if streak.showsBanner { rows.append(("Streak", streak.message)) }
        return rows
    }

    /// How many days the trend covers.
    public static let trendDays = 30

    /// The statistics of `events` at `now`, with days as they are in `zone`.
    /// - Parameter sessionLengths: the typical session length of programs, by program id, in
    ///   seconds; others take `defaultSessionLength`.
    public static func from(
        events: [GateEvent],
        now: Date,
        zone: TimeZone,
        sessionLengths: [String: TimeInterval] = [:],
        defaultSessionLength: TimeInterval = GateStats.defaultSessionLength
    ) -> GateStats {
        from(
            tallies: events.map(GateTally.init),
            now: now,
            zone: zone,
            sessionLengths: sessionLengths,
            defaultSessionLength: defaultSessionLength
        )
    }

    /// The statistics of events counted in `tallies` (the store counts them by quarter hour, so
    /// the figures of 100,000 events take one pass over a few thousand tallies).
    public static func from(
        tallies: [GateTally],
        now: Date,
        zone: TimeZone,
        sessionLengths: [String: TimeInterval] = [:],
        defaultSessionLength: TimeInterval = GateStats.defaultSessionLength
    ) -> GateStats {
        GateStats(
            hoursReclaimed: hoursReclaimed(tallies, sessionLengths: sessionLengths, defaultSessionLength: defaultSessionLength),
            consciousExits: count(.exit, in: tallies),
            proceeds: count(.proceed, in: tallies),
            averagePauseSeconds: averagePauseSeconds(tallies),
            intentionalityScore: intentionalityScore(tallies),
            trend: trend(tallies, now: now, zone: zone),
            streak: streak(tallies, now: now, zone: zone)
        )
    }

    /// The number of Exit to Focus choices.
    public static func consciousExits(_ events: [GateEvent]) -> Int {
        count(.exit, in: events.map(GateTally.init))
    }

    static func count(_ outcome: GateEvent.Outcome, in tallies: [GateTally]) -> Int {
        tallies.reduce(0) { $0 + ($1.outcome == outcome ? $1.count : 0) }
    }

    /// Σ over exits of the program's typical session length, in hours.
    public static func hoursReclaimed(
        _ events: [GateEvent],
        sessionLengths: [String: TimeInterval] = [:],
        defaultSessionLength: TimeInterval = GateStats.defaultSessionLength
    ) -> Double {
        hoursReclaimed(events.map(GateTally.init), sessionLengths: sessionLengths, defaultSessionLength: defaultSessionLength)
    }

    static func hoursReclaimed(
        _ tallies: [GateTally],
        sessionLengths: [String: TimeInterval],
        defaultSessionLength: TimeInterval
    ) -> Double {
        tallies.lazy.filter { $0.outcome == .exit }
            .map { Double($0.count) * max(sessionLengths[$0.programID] ?? defaultSessionLength, 0) }
            .reduce(0, +) / 3_600
    }

    /// Seconds at gates ÷ gates ended; nil when no gate has ended.
    public static func averagePauseSeconds(_ events: [GateEvent]) -> TimeInterval? {
        averagePauseSeconds(events.map(GateTally.init))
    }

    static func averagePauseSeconds(_ tallies: [GateTally]) -> TimeInterval? {
        var seconds: TimeInterval = 0
        var gates = 0
        for tally in tallies {
            switch tally.outcome {
            case .notGated: continue
            case .deepen: seconds += max(tally.pauseSeconds, 0)
            case .exit, .proceed, .closed:
                seconds += max(tally.pauseSeconds, 0)
                gates += tally.count
            }
        }
        return gates > 0 ? seconds / Double(gates) : nil
    }

    /// Exits ÷ (exits + proceeds); nil when both are 0.
    public static func intentionalityScore(_ events: [GateEvent]) -> Double? {
        intentionalityScore(events.map(GateTally.init))
    }

    static func intentionalityScore(_ tallies: [GateTally]) -> Double? {
        let exits = count(.exit, in: tallies)
        let proceeds = count(.proceed, in: tallies)
        return exits + proceeds > 0 ? Double(exits) / Double(exits + proceeds) : nil
    }

    /// The last `days` local days in `zone` up to `now`'s, oldest first; each is there, with
    /// zeros when it has no events. A day is midnight to midnight, 23 or 25 hours on DST days.
    public static func trend(_ events: [GateEvent], now: Date, zone: TimeZone, days: Int = GateStats.trendDays) -> [GateDay] {
        trend(events.map(GateTally.init), now: now, zone: zone, days: days)
    }

    static func trend(_ tallies: [GateTally], now: Date, zone: TimeZone, days: Int = GateStats.trendDays) -> [GateDay] {
        var localDays = LocalDays(zone: zone)
        let today = localDays.number(of: now)
        let first = today - max(days, 1) + 1
        var result = (first...today).map { GateDay(dayNumber: $0) }
        for tally in tallies {
            let day = localDays.number(of: tally.at)
            guard day >= first, day <= today else { continue }
            result[day - first].count(tally.outcome, tally.count)
        }
        return result
    }

    /// The hub's streak at `now` (see ``GateStreak``).
    public static func streak(_ events: [GateEvent], now: Date, zone: TimeZone) -> GateStreak {
        streak(events.map(GateTally.init), now: now, zone: zone)
    }

    static func streak(_ tallies: [GateTally], now: Date, zone: TimeZone) -> GateStreak {
        var localDays = LocalDays(zone: zone)
        var byDay: [Int: GateDay] = [:]
        for tally in tallies {
            let day = localDays.number(of: tally.at)
            byDay[day, default: GateDay(dayNumber: day)].count(tally.outcome, tally.count)
        }
        let today = localDays.number(of: now)
        var day = byDay[today]?.isMindful == true ? today : today - 1
        var count = 0
        while byDay[day]?.isMindful == true {
            count += 1
            day -= 1
        }
        return GateStreak(count: count)
    }
}

/// Events of one program and one outcome counted together: `count` of them at `at` (one event,
/// or those of a quarter hour, which never straddles a local midnight: every zone's offset is a
/// whole number of quarter hours), with the seconds of their pauses summed.
public struct GateTally: Sendable, Equatable {
    public var programID: String
    public var at: Date
    public var outcome: GateEvent.Outcome
    public var count: Int
    public var pauseSeconds: TimeInterval

    public init(programID: String, at: Date, outcome: GateEvent.Outcome, count: Int, pauseSeconds: TimeInterval) {
        (self.programID, self.at, self.outcome, self.count, self.pauseSeconds) = (programID, at, outcome, count, pauseSeconds)
    }

    /// One event.
    public init(_ event: GateEvent) {
        self.init(programID: event.programID, at: event.at, outcome: event.outcome, count: 1, pauseSeconds: event.pauseSeconds)
    }
}

/// One local day of the trend.
public struct GateDay: Sendable, Hashable, Codable {
    /// The day, "2026-03-08".
    public var date: String
    public var exits = 0
    public var proceeds = 0
    public var deepens = 0
    public var closed = 0
    public var notGated = 0

    /// The day `dayNumber` days after 1970-01-01, with no events.
    public init(dayNumber: Int) {
        let civil = ZoneMath.civilFromDays(dayNumber)
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        date = "\(civil.year)-\(two(civil.month))-\(two(civil.day))"
    }

    /// A mindful day (one that counts for the streak): at least one conscious exit, and no more
    /// proceeds than exits.
    public var isMindful: Bool { exits > 0 && exits >= proceeds }

    mutating func count(_ outcome: GateEvent.Outcome, _ count: Int = 1) {
        switch outcome {
        case .exit: exits += count
        case .proceed: proceeds += count
        case .deepen: deepens += count
        case .closed: closed += count
        case .notGated: notGated += count
        }
    }
}

/// The hub's streak banner: how many mindful days in a row, and what the banner says.
///
/// A mindful day is a local day with at least one Exit to Focus and no more Proceeds than
/// Exits (the person chose focus at least as often as the program). The streak counts mindful
/// days in a row up to today, or up to yesterday while today is not (yet) one: as the focus
/// forest's streak, it breaks only when a day ends without being mindful. The banner shows from
/// one day on. Its messages:
///
/// | days | message |
/// |---|---|
/// | 0 | (no banner) |
/// | 1 | "1 mindful day. A fine start." |
/// | 2–6 | "N mindful days in a row. Keep going." |
/// | 7–29 | "N mindful days in a row. It's becoming a habit." |
/// | 30 and more | "N mindful days in a row. Proof it's working." |
public struct GateStreak: Sendable, Equatable, Codable {
    public var count: Int
    public var showsBanner: Bool { count > 0 }
    /// The banner's message; empty when no banner shows.
    public var message: String {
        switch count {
        case ...0: ""
        case 1: "1 mindful day. A fine start."
        case 2...6: "\(count) mindful days in a row. Keep going."
        case 7...29: "\(count) mindful days in a row. It's becoming a habit."
        default: "\(count) mindful days in a row. Proof it's working."
        }
    }

    public init(count: Int) { self.count = count }

    enum CodingKeys: String, CodingKey { case count, showsBanner, message }

    public init(from decoder: any Decoder) throws {
        count = try decoder.container(keyedBy: CodingKeys.self).decode(Int.self, forKey: .count)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(count, forKey: .count)
        try container.encode(showsBanner, forKey: .showsBanner)
        try container.encode(message, forKey: .message)
    }
}

/// The hub's greeting, as in the seed.
public enum GateHub {
    public static let greeting = "Your Mindful Hub."
    /// The hub with no gated program.
    public static let noPrograms = "No program is gated yet"
}

import ChimeCore
import ChimeStore
import Foundation
import GRDB

/// One program's figures over the 30-day trend (`chime gate stats`, per program):
///
/// - **Opens**: its Proceeds and its launches opened without a gate, not those in the grace
///   after a Proceed (as ``GateBook/opensToday(programID:zone:)`` counts them).
/// - **Minutes**: its running time (``GateRun``), each day's the union of its runs in that day.
/// - **Budgets kept**: the days within its budget ÷ the days with a budget. A day has a budget
///   when the program's rule has one now and the day is on or after the day the rule was last
///   saved (its history is not kept: each day is measured against the budget as it is now). A
///   day is within it when its opens are no more than the opens budget and its minutes no more
///   than the minutes budget (whichever are set); today counts as it stands.
public struct GateProgramStats: Sendable, Equatable {
    public var programID: String
    public var opens: Int
    /// Seconds of running time.
    public var seconds: TimeInterval
    public var budget: GateBudget?
    public var minutesBudget: GateMinutesBudget?
    /// Days with a budget, and of those, days within it.
    public var daysWithBudget: Int
    public var daysWithinBudget: Int
    /// The last 30 local days, oldest first.
    public var trend: [Day]

    public struct Day: Sendable, Equatable {
        /// "2026-03-08".
        public var date: String
        public var opens: Int
        public var seconds: TimeInterval
    }

    /// Whole minutes.
    public var minutes: Int { Int(seconds / 60) }

    /// "6 opens, 95 min; budget 3/day and 60m/day kept 4 of 5 days".
    public var line: String {
        var text = "\(opens) open\(opens == 1 ? "" : "s"), \(minutes) min"
        let budgets = [budget?.description, minutesBudget?.description].compactMap { $0 }
        if !budgets.isEmpty {
            text +=
                "; budget \(budgets.joined(separator: " and ")) kept \(daysWithinBudget) of \(daysWithBudget) day"
                + (daysWithBudget == 1 ? "" : "s")
        }
        return text
    }

    /// The figures of each program with opens, runs or a rule with a budget in the `days` local
    /// days up to `now`'s, by program id.
    /// - Parameters:
    ///   - opens: the instants of each open (see above), by program id.
    ///   - runs: the runs that overlap those days.
    ///   - rules: each program's rule, with the instant it was last saved.
    public static func from(
        opens: [String: [Date]],
        runs: [GateRun],
        rules: [String: (rule: GateRule, savedAt: Date)],
        now: Date,
        zone: TimeZone,
        days: Int = GateStats.trendDays
    ) -> [GateProgramStats] {
        var localDays = LocalDays(zone: zone)
        let today = localDays.number(of: now)
        let first = today - max(days, 1) + 1
        let bounds = (first...today + 1).map { ZoneMath.resolve(CivilDateTime(dayNumber: $0, time: .midnight), in: zone).instant }
        let runsByProgram = Dictionary(grouping: runs, by: \.programID)
        let budgeted = rules.filter { $0.value.rule.budget != nil || $0.value.rule.minutesBudget != nil }.keys
        let programs = Set(opens.keys).union(runsByProgram.keys).union(budgeted).sorted()
        return programs.map { program in
            var trend = (first...today).map { day in
                let civil = ZoneMath.civilFromDays(day)
                return Day(date: String(format: "%04d-%02d-%02d", civil.year, civil.month, civil.day), opens: 0, seconds: 0)
            }
            for open in opens[program] ?? [] {
                let day = localDays.number(of: open)
                if day >= first, day <= today { trend[day - first].opens += 1 }
            }
            let programRuns = runsByProgram[program] ?? []
            if !programRuns.isEmpty {
                for index in trend.indices {
                    trend[index].seconds = GateRun.seconds(of: programRuns, from: bounds[index], to: bounds[index + 1], now: now)
                }
            }
            let rule = rules[program]
            var withBudget = 0
            var within = 0
            if let rule, rule.rule.budget != nil || rule.rule.minutesBudget != nil {
                let since = localDays.number(of: rule.savedAt)
                for (index, day) in trend.enumerated() where first + index >= since {
                    withBudget += 1
                    let opensKept = rule.rule.budget.map { day.opens <= $0.opensPerDay } ?? true
                    let minutesKept = rule.rule.minutesBudget.map { day.seconds <= Double($0.minutesPerDay * 60) } ?? true
                    if opensKept && minutesKept { within += 1 }
                }
            }
            return GateProgramStats(
                programID: program,
                opens: trend.reduce(0) { $0 + $1.opens },
                seconds: trend.reduce(0) { $0 + $1.seconds },
                budget: rule?.rule.budget,
                minutesBudget: rule?.rule.minutesBudget,
                daysWithBudget: withBudget,
                daysWithinBudget: within,
                trend: trend
            )
        }
    }
}

extension GateBook {
    /// ``GateProgramStats`` of every program over the 30-day trend, now, with days in `zone`.
    public func programStats(zone: TimeZone) throws(ChimeError) -> [GateProgramStats] {
        let now = clock.now()
        var localDays = LocalDays(zone: zone)
        let today = localDays.number(of: now)
        let from = ZoneMath.resolve(CivilDateTime(dayNumber: today - GateStats.trendDays + 1, time: .midnight), in: zone).instant
        let to = ZoneMath.resolve(CivilDateTime(dayNumber: today + 1, time: .midnight), in: zone).instant
        let (opens, rules) = try store.read { db in
            let opens = try Row.fetchAll(
                db,
                sql: """
                    SELECT program, at_us FROM gate_event WHERE at_us >= ? AND at_us < ?
                        AND (outcome = 'proceed' OR (outcome = 'not_gated' AND coalesce(reason, '') NOT LIKE 'grace%'))
                    """,
                arguments: [Self.micros(from), Self.micros(to)]
            ).reduce(into: [String: [Date]]()) { $0[$1["program"] as String, default: []].append(Self.date($1["at_us"])) }
            let rules = try Row.fetchAll(db, sql: "SELECT * FROM gate_rule").reduce(into: [String: (rule: GateRule, savedAt: Date)]()) {
                let rule = Self.rule($1)
                $0[rule.programID] = (rule, Self.date($1["updated_us"]))
            }
            return (opens, rules)
        }
        return GateProgramStats.from(opens: opens, runs: try runs(from: from, to: to), rules: rules, now: now, zone: zone)
    }
}

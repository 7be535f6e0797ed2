import ChimeCore
import ChimeStore
import Foundation
import GRDB
import GRDBSQLite

/// What a person chose at onboarding (`chime gate setup`), or the defaults before they did.
public struct GateProfile: Sendable, Equatable, Codable {
    /// 1 to 10; the pause follows it (``Gate/pauseLength(determination:)``). 5 by default.
    public var determination: Int
    /// A pause of the person's own, 1 to 120 seconds, in place of the determination's; nil for
    /// the determination's.
    public var pause: TimeInterval?
    /// The interests quotes are chosen by; every interest when empty.
    public var interests: Set<Interest>
    /// After Proceed, the same program opens without a gate this long.
    public var grace: GateGrace
    /// With no focus session running, Exit starts one.
    public var focusOnExit: Bool
    /// A program's typical session, in seconds: what one Exit reclaims.
    public var sessionLength: TimeInterval
    /// Whether the person went through onboarding (false: these are the defaults).
    public var isSetUp: Bool

    /// The defaults before onboarding: determination 5 (a 30-second pause), every interest, a
    /// 10-minute grace, Exit does not start a focus session, 20-minute sessions.
    public static let defaults = GateProfile(
        determination: 5,
        pause: nil,
        interests: [],
        grace: GateGrace(),
        focusOnExit: false,
        sessionLength: GateStats.defaultSessionLength,
        isSetUp: false
    )

    public init(
        determination: Int,
        pause: TimeInterval? = nil,
        interests: Set<Interest>,
        grace: GateGrace,
        focusOnExit: Bool,
        sessionLength: TimeInterval,
        isSetUp: Bool = true
    ) {
        self.determination = determination
        self.pause = pause
        self.interests = interests
        self.grace = grace
        self.focusOnExit = focusOnExit
        self.sessionLength = sessionLength
        self.isSetUp = isSetUp
    }

    /// The pause this profile sets, in seconds.
    public var pauseLength: TimeInterval { pause ?? Gate.pauseLength(determination: determination) }

    /// Refuses values out of range, naming the value and what is accepted.
    public func validated() throws(ChimeError) -> GateProfile {
        guard (1...10).contains(determination) else {
            throw ChimeError.invalid("determination", String(determination), expected: "a whole number from 1 to 10")
        }
        if let pause, !(1...120).contains(pause) || pause != pause.rounded() {
            throw ChimeError.invalid(
                "pause",
                Trigger.formatInterval(Int64(pause)),
                expected: "from 1s to 2m, in whole seconds (or the determination's)"
            )
        }
        guard (0...86_400).contains(grace.length), grace.length == grace.length.rounded() else {
            throw ChimeError.invalid(
                "grace",
                Trigger.formatInterval(Int64(grace.length)),
                expected: "from 0s (none) to 1d, in whole seconds"
            )
        }
        guard (60...86_400).contains(sessionLength), sessionLength == sessionLength.rounded() else {
            throw ChimeError.invalid("session length", Trigger.formatInterval(Int64(sessionLength)), expected: "from 1m to 1d")
        }
        return self
    }
}

/// The gateway's use cases over the store: the profile, the usage events, and what is read
/// from them (the grace, the last quote, the statistics).
public struct GateBook: Sendable {
    public let store: ReminderStore
    let clock: any WallClock
    /// The profile before onboarding.
    public let defaults: GateProfile

    /// - Parameter defaults: the profile before onboarding: ``GateProfile/defaults``, or the
    ///   config file's `[gate]` values over them.
    public init(store: ReminderStore, clock: any WallClock = SystemWallClock(), defaults: GateProfile = .defaults) {
        store.require(.gateway)
        self.store = store
        self.clock = clock
        self.defaults = defaults
    }

    /// The person's profile, or the defaults (``GateProfile/defaults`` unless the config file
    /// says otherwise) before onboarding.
    public func profile() throws(ChimeError) -> GateProfile {
        try savedProfile() ?? defaults
    }

    /// The profile `chime gate setup` saved, or nil before onboarding.
    public func savedProfile() throws(ChimeError) -> GateProfile? {
        try store.read { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT * FROM gate_profile WHERE id = 1") else { return nil }
            let interests = (row["interests"] as String).split(separator: ",").compactMap { Interest(rawValue: String($0)) }
            return GateProfile(
                determination: row["determination"],
                pause: (row["pause_s"] as Int64?).map(TimeInterval.init),
                interests: Set(interests),
                grace: GateGrace(length: TimeInterval(row["grace_s"] as Int64)),
                focusOnExit: row["focus_on_exit"],
                sessionLength: TimeInterval(row["session_s"] as Int64)
            )
        }
    }

    /// Saves `profile` (onboarding, or a later change), after checking it.
    @discardableResult
    public func save(_ profile: GateProfile) throws(ChimeError) -> GateProfile {
        let profile = try profile.validated()
        let interests = Interest.allCases.filter(profile.interests.contains).map(\.rawValue).joined(separator: ",")
        try store.write { db in
            try db.execute(
                sql: """
                    INSERT INTO gate_profile (id, determination, pause_s, interests, grace_s, focus_on_exit, session_s, updated_us)
                    VALUES (1, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (id) DO UPDATE SET determination = excluded.determination, pause_s = excluded.pause_s,
                        interests = excluded.interests,
                        grace_s = excluded.grace_s, focus_on_exit = excluded.focus_on_exit, session_s = excluded.session_s,
                        updated_us = excluded.updated_us
                    """,
                arguments: [
                    profile.determination, profile.pause.map { Int64($0) }, interests, Int64(profile.grace.length), profile.focusOnExit,
                    Int64(profile.sessionLength), Self.micros(clock.now()),
                ]
            )
        }
        var saved = profile
        saved.isSetUp = true
        return saved
    }

    /// Records `events` (a gate's pauses and its outcome, or a launch not gated) in one
    /// transaction.
    public func record(_ events: [GateEvent]) throws(ChimeError) {
        guard !events.isEmpty else { return }
        try store.write { db in
            let insert = try db.makeStatement(
                sql: """
                    INSERT INTO gate_event (program, at_us, pause_us, outcome, reason, quote_text, quote_author, quote_source, quote_interest)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """
            )
            for event in events {
                let (outcome, reason) = Self.column(event.outcome)
                try insert.execute(arguments: [
                    event.programID, Self.micros(event.at), Int64((event.pauseSeconds * 1e6).rounded()), outcome, reason,
                    event.quote?.text, event.quote?.author, event.quote?.source, event.quote?.interest.rawValue,
                ])
                // Exit and Proceed are the gate's events a hook can follow (``HookEvent``).
                if outcome == "exit" || outcome == "proceed" {
                    let hook = HookEvent(
                        "gate.\(outcome)",
                        subject: String(db.lastInsertedRowID),
                        environment: [
                            "CHIME_TITLE": event.programID, "CHIME_GATE_PROGRAM": event.programID,
                            "CHIME_GATE_PAUSE_SECONDS": String(Int(event.pauseSeconds.rounded())),
                        ]
                    )
                    try ReminderStore.recordHook(hook, at: event.at, in: db)
                }
            }
        }
    }

    /// When `programID` was last opened through Proceed, for the grace.
    public func lastProceed(programID: String) throws(ChimeError) -> Date? {
        try store.read { db in
            try Int64.fetchOne(
                db,
                sql: "SELECT max(at_us) FROM gate_event WHERE program = ? AND outcome = 'proceed'",
                arguments: [programID]
            ).map(Self.date)
        }
    }

    /// The quote the latest pause showed (the next gate shows another).
    public func lastQuote() throws(ChimeError) -> Quote? {
        try store.read { db in
            try Row.fetchOne(
                db,
                sql:
                    "SELECT quote_text, quote_author, quote_source, quote_interest FROM gate_event WHERE quote_text IS NOT NULL ORDER BY at_us DESC, id DESC LIMIT 1"
            ).flatMap(Self.quote)
        }
    }

    /// Every usage event, oldest first.
    public func events() throws(ChimeError) -> [GateEvent] {
        try store.read { db in
            try Row.fetchCursor(db, sql: "SELECT * FROM gate_event ORDER BY at_us, id").map { row in
                GateEvent(
                    programID: row["program"],
                    at: Self.date(row["at_us"]),
                    pauseSeconds: TimeInterval(row["pause_us"] as Int64) / 1e6,
                    outcome: Self.outcome(row["outcome"], reason: row["reason"]),
                    quote: Self.quote(row)
                )
            }.reduce(into: []) { $0.append($1) }
        }
    }

    /// "Proof It's Working.": the statistics of every event, now, with days in `zone`.
    public func stats(zone: TimeZone) throws(ChimeError) -> GateStats {
        let profile = try profile()
        // Counted here by quarter hour and outcome, in one pass over the rows: a few thousand
        // tallies for 100,000 events (a quarter hour never straddles a local midnight). SQLite
        // gives each row's quarter and outcome as integers, read through its C API: GRDB's
        // `Row` decoding and a dictionary lookup per row took most of the command's time at
        // 100,000 events, and SQLite's GROUP BY sorts every row first (over 150 ms). Rows come
        // in time order from the index `gate_event_by_time` (which covers the query), so one
        // quarter's counts are kept until it changes.
        // (Not by program: the book gives every program the same session length.)
        let outcomes: [GateEvent.Outcome] = [.exit, .proceed, .deepen, .closed, .notGated(reason: "")]
        let tallies = try store.read { db in
            var tallies: [GateTally] = []
            var quarter = Int64.min
            var counts = [Int](repeating: 0, count: 5)
            var pauses = [Int64](repeating: 0, count: 5)
            func flush() {
                for index in 0..<5 where counts[index] > 0 {
                    tallies.append(
                        GateTally(
                            programID: "",
                            at: Date(timeIntervalSince1970: TimeInterval(quarter) * 900),
                            outcome: outcomes[index],
                            count: counts[index],
                            pauseSeconds: TimeInterval(pauses[index]) / 1e6
                        )
                    )
                    counts[index] = 0
                    pauses[index] = 0
                }
            }
            let statement = try db.makeStatement(
                sql: """
                    SELECT at_us / 900000000, CASE outcome WHEN 'exit' THEN 0 WHEN 'proceed' THEN 1
                        WHEN 'deepen' THEN 2 WHEN 'closed' THEN 3 ELSE 4 END, pause_us
                    FROM gate_event ORDER BY at_us
                    """
            )
            let rows = try Row.fetchCursor(statement)
            let sqlite = statement.sqliteStatement
            while try rows.next() != nil {
                let rowQuarter = sqlite3_column_int64(sqlite, 0)
                if rowQuarter != quarter {
                    flush()
                    quarter = rowQuarter
                }
                let outcome = Int(sqlite3_column_int64(sqlite, 1))
                counts[outcome] += 1
                pauses[outcome] += sqlite3_column_int64(sqlite, 2)
            }
            flush()
            return tallies
        }
        return GateStats.from(
            tallies: tallies,
            now: clock.now(),
            zone: zone,
            defaultSessionLength: profile.sessionLength
        )
    }

    // MARK: Schedules and budgets

    /// Every program's rule (those gated always without a budget have none), by program id.
    public func rules() throws(ChimeError) -> [String: GateRule] {
        try store.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM gate_rule ORDER BY program").reduce(into: [:]) { rules, row in
                let rule = Self.rule(row)
                rules[rule.programID] = rule
            }
        }
    }

    /// `programID`'s rule: gated always, without a budget, when none was set.
    public func rule(programID: String) throws(ChimeError) -> GateRule {
        try store.read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM gate_rule WHERE program = ?", arguments: [programID]).map(Self.rule)
        } ?? GateRule(programID: programID)
    }

    /// Saves `rule` in place of the program's rule (a rule that says nothing is deleted).
    public func save(_ rule: GateRule) throws(ChimeError) {
        try store.write { db in
            guard !rule.isDefault else {
                try db.execute(sql: "DELETE FROM gate_rule WHERE program = ?", arguments: [rule.programID])
                return
            }
            try db.execute(
                sql: """
                    INSERT INTO gate_rule (program, hours_start_min, hours_end_min, days, budget_per_day, budget_min_per_day,
                        remind_after_min, updated_us)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (program) DO UPDATE SET hours_start_min = excluded.hours_start_min,
                        hours_end_min = excluded.hours_end_min, days = excluded.days,
                        budget_per_day = excluded.budget_per_day, budget_min_per_day = excluded.budget_min_per_day,
                        remind_after_min = excluded.remind_after_min, updated_us = excluded.updated_us
                    """,
                arguments: [
                    rule.programID, rule.hours.map { $0.start.secondsIntoDay / 60 }, rule.hours.map { $0.end.secondsIntoDay / 60 },
                    rule.days.flatMap { $0 == .everyDay ? nil : Int($0.rawValue) }, rule.budget?.opensPerDay,
                    rule.minutesBudget?.minutesPerDay, rule.remindAfter, Self.micros(clock.now()),
                ]
            )
        }
    }

    /// Forgets `programID`'s rule (the program was un-gated).
    public func removeRule(programID: String) throws(ChimeError) {
        try store.write { db in try db.execute(sql: "DELETE FROM gate_rule WHERE program = ?", arguments: [programID]) }
    }

    /// How many times `programID` opened on `now`'s local day in `zone`: its Proceeds, and its
    /// launches that opened without a gate (outside its hours, no display…), but not those in
    /// the grace after a Proceed (the same sitting). Exits and closed gates opened nothing.
    public func opensToday(programID: String, zone: TimeZone) throws(ChimeError) -> Int {
        try opensToday(zone: zone)[programID] ?? 0
    }

    /// ``opensToday(programID:zone:)`` of every program that opened today.
    public func opensToday(zone: TimeZone) throws(ChimeError) -> [String: Int] {
        try today(zone: zone).reduce(into: [:]) { $0[$1.programID] = $1.opens }
    }

    /// Today's opens of every program that opened today or has a budget, by program id, each
    /// with its budget and how many of its opens were outside its schedule.
    public func today(zone: TimeZone) throws(ChimeError) -> [GateToday] {
        let (start, end) = Self.localDay(of: clock.now(), zone: zone)
        var days = try store.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT program,
                        sum(outcome = 'proceed' OR (outcome = 'not_gated' AND coalesce(reason, '') NOT LIKE 'grace%')) AS opens,
                        sum(outcome = 'not_gated' AND coalesce(reason, '') LIKE 'outside its %') AS outside
                    FROM gate_event WHERE at_us >= ? AND at_us < ? GROUP BY program
                    """,
                arguments: [Self.micros(start), Self.micros(end)]
            ).reduce(into: [String: GateToday]()) { days, row in
                let program: String = row["program"]
                days[program] = GateToday(
                    programID: program,
                    opens: (row["opens"] as Int?) ?? 0,
                    outsideSchedule: (row["outside"] as Int?) ?? 0
                )
            }
        }
        for (program, rule) in try rules() where rule.budget != nil || rule.minutesBudget != nil {
            days[program, default: GateToday(programID: program)].budget = rule.budget
            days[program, default: GateToday(programID: program)].minutesBudget = rule.minutesBudget
        }
        for (program, used) in try minutesToday(zone: zone) where used > 0 {
            days[program, default: GateToday(programID: program)].used = used
        }
        return days.values.filter { $0.opens > 0 || $0.used > 0 || $0.budget != nil || $0.minutesBudget != nil }
            .sorted { $0.programID < $1.programID }
    }

    /// The local day of `now` in `zone`: its first instant and the next day's.
    static func localDay(of now: Date, zone: TimeZone) -> (start: Date, end: Date) {
        let today = ZoneMath.civil(now, in: zone).local.dayNumber
        return (
            ZoneMath.resolve(CivilDateTime(dayNumber: today, time: .midnight), in: zone).instant,
            ZoneMath.resolve(CivilDateTime(dayNumber: today + 1, time: .midnight), in: zone).instant
        )
    }

    static func rule(_ row: Row) -> GateRule {
        var hours: GateHours?
        if let start = row["hours_start_min"] as Int?, let end = row["hours_end_min"] as Int? {
            hours = LocalTime(hour: start / 60, minute: start % 60).flatMap { start in
                LocalTime(hour: end / 60, minute: end % 60).flatMap { GateHours(start: start, end: $0) }
            }
        }
        return GateRule(
            programID: row["program"],
            hours: hours,
            days: (row["days"] as Int?).map { WeekdaySet(rawValue: UInt8(truncatingIfNeeded: $0)) },
            budget: (row["budget_per_day"] as Int?).flatMap(GateBudget.init(opensPerDay:)),
            minutesBudget: (row["budget_min_per_day"] as Int?).flatMap(GateMinutesBudget.init(minutesPerDay:)),
            remindAfter: row["remind_after_min"]
        )
    }

    static func column(_ outcome: GateEvent.Outcome) -> (String, String?) {
        switch outcome {
        case .exit: ("exit", nil)
        case .deepen: ("deepen", nil)
        case .proceed: ("proceed", nil)
        case .closed: ("closed", nil)
        case .notGated(let reason): ("not_gated", reason)
        }
    }

    static func outcome(_ column: String, reason: String?) -> GateEvent.Outcome {
        switch column {
        case "exit": .exit
        case "deepen": .deepen
        case "proceed": .proceed
        case "closed": .closed
        default: .notGated(reason: reason ?? "")
        }
    }

    static func quote(_ row: Row) -> Quote? {
        guard let text = row["quote_text"] as String?, let author = row["quote_author"] as String?,
            let source = row["quote_source"] as String?
        else { return nil }
        return Quote(
            text: text,
            author: author,
            source: source,
            interest: (row["quote_interest"] as String?).flatMap(Interest.init(rawValue:)) ?? .mindfulness
        )
    }

    static func micros(_ date: Date) -> Int64 { date.micros }
    static func date(_ micros: Int64) -> Date { Date(micros: micros) }
}

/// One program's opens today (``GateBook/today(zone:)``), against its budget.
public struct GateToday: Sendable, Equatable {
    public var programID: String
    /// Proceeds, and launches opened without a gate (not those in the grace).
    public var opens = 0
    /// Of those, the launches outside the program's schedule.
    public var outsideSchedule = 0
    public var budget: GateBudget?
    /// Seconds of running time today (``GateBook/minutesToday(zone:)``).
    public var used: TimeInterval = 0
    public var minutesBudget: GateMinutesBudget?

    public init(
        programID: String,
        opens: Int = 0,
        outsideSchedule: Int = 0,
        budget: GateBudget? = nil,
        used: TimeInterval = 0,
        minutesBudget: GateMinutesBudget? = nil
    ) {
        (self.programID, self.opens, self.outsideSchedule, self.budget) = (programID, opens, outsideSchedule, budget)
        (self.used, self.minutesBudget) = (used, minutesBudget)
    }

    /// "4 opens today, budget 3 (over: the pause grows); 62 of 60 min today (over: the pause
    /// grows); 1 outside its schedule, not gated".
    public var line: String {
        var text = "\(opens) open\(opens == 1 ? "" : "s") today"
        if let budget { text += ", budget \(budget.opensPerDay)" + (opens > budget.opensPerDay ? " (over: the pause grows)" : "") }
        if let minutesBudget {
            text +=
                "; " + minutesBudget.line(used: used) + (used > Double(minutesBudget.minutesPerDay * 60) ? " (over: the pause grows)" : "")
        } else if used >= 60 {
            text += "; \(Int(used / 60)) min"
        }
        if outsideSchedule > 0 { text += "; \(outsideSchedule) outside its schedule, not gated" }
        return text
    }
}

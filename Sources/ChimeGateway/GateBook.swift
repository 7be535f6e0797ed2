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

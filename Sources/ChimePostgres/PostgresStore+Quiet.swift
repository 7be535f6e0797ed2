import ChimeCore
import Foundation
import Synchronization

/// Quiet hours and holds on the PostgreSQL store, as on SQLite (ChimeStore's
/// `ReminderStore+Quiet`): the settings in the one-row table `quiet`, read by every runner at
/// every pass; a held occurrence stays `pending` in the ledger with `held_us` (since when) and
/// `retry_at` (until when; 'infinity' until released), so a restart, a kill or another runner
/// loses nothing and posts nothing twice. Instants are the database's clock's.
extension PostgresStore {
    /// The quiet state as stored (without the config file's window, which ``quietState()``
    /// adds), and whether any occurrence is held (so that a runner asks for them only then): one
    /// statement, at every pass.
    public func quietStateAndHeld() throws -> (state: QuietState, anyHeld: Bool) {
        let rows = try client.rows(
            prepared: "chime_quiet",
            """
            SELECT q.hours_start, q.hours_end, q.essential, q.family_hold, q.until_us, q.window_off_until_us,
                EXISTS (SELECT 1 FROM occurrence WHERE state = 'pending' AND held_us IS NOT NULL) AS any_held
            FROM (SELECT 1) one LEFT JOIN quiet q ON q.id = 1
            """
        )
        var state = QuietState()
        var anyHeld = false
        for row in rows {
            anyHeld = try row["any_held"].decode(Bool.self)
            state = try Self.quietState(from: row) ?? QuietState()
        }
        return (state, anyHeld)
    }

    /// The quiet state from a row of the `quiet` table's columns; nil when there is no row (the
    /// columns are NULL: a LEFT JOIN found none).
    static func quietState(from r: PostgresRow) throws -> QuietState? {
        guard let essential = try r["essential"].decode(String?.self) else { return nil }
        var settings = QuietSettings()
        if let start = try r["hours_start"].decode(String?.self), let end = try r["hours_end"].decode(String?.self),
            let startTime = try? LocalTime.parse(start), let endTime = try? LocalTime.parse(end)
        {
            settings.hours = QuietSettings.Window(start: startTime, end: endTime)
        }
        settings.essential = QuietSettings.Essential(rawValue: essential) ?? .come
        settings.familyHold = try r["family_hold"].decode(Bool.self)
        return QuietState(
            settings: settings,
            until: try r["until_us"].decode(Int64?.self).map(Date.init(micros:)),
            windowOffUntil: try r["window_off_until_us"].decode(Int64?.self).map(Date.init(micros:))
        )
    }

    /// The quiet state, with the config file's window where none is stored.
    public func quietState() throws -> QuietState {
        var state = try quietStateAndHeld().state
        if state.settings.hours == nil { state.settings.hours = quietHoursDefault.withLock { $0 } }
        return state
    }

    /// The window `chime quiet hours` stored, or nil (then the config file's applies).
    public func storedQuietHours() throws -> QuietSettings.Window? {
        try quietStateAndHeld().state.settings.hours
    }

    /// The window that applies while none is stored: the config file's `quiet.hours`.
    public func setQuietHoursDefault(_ window: QuietSettings.Window?) {
        quietHoursDefault.withLock { $0 = window }
    }

    /// Changes the quiet state in one transaction (the row locked: two changes at once from two
    /// hosts apply one after the other) and wakes the runners: `change` gets the current state
    /// and returns the new one, which is written and returned.
    @discardableResult
    public func updateQuiet(_ change: (inout QuietState) throws(ChimeError) -> Void) throws -> QuietState {
        try transaction { connection in
            try connection.run("INSERT INTO quiet (id) VALUES (1) ON CONFLICT (id) DO NOTHING")
            let rows = try connection.rows(
                """
                SELECT hours_start, hours_end, essential, family_hold, until_us, window_off_until_us
                FROM quiet WHERE id = 1 FOR UPDATE
                """
            )
            var state = QuietState()
            for row in rows { state = try Self.quietState(from: row) ?? QuietState() }
            // The change sees the window in effect (the default's, when none is stored); the
            // default is not written as if it had been chosen.
            let defaultHours = state.settings.hours == nil ? quietHoursDefault.withLock { $0 } : nil
            if let defaultHours { state.settings.hours = defaultHours }
            try change(&state)
            var settings = state.settings
            if defaultHours != nil && settings.hours == defaultHours { settings.hours = nil }
            try connection.run(
                """
                UPDATE quiet SET hours_start = \(settings.hours?.start.description), hours_end = \(settings.hours?.end.description),
                    essential = \(settings.essential.rawValue), family_hold = \(settings.familyHold),
                    until_us = \(state.until?.micros), window_off_until_us = \(state.windowOffUntil?.micros)
                WHERE id = 1
                """
            )
            try Self.notifyChange(id: "", connection)
            return state
        }
    }

    /// The columns a held or snoozed occurrence is read with.
    static let waitingColumns = """
        o.reminder_key, o.due_us, o.missed_count, o.attempts, o.held_us, o.snooze_of_us,
        CASE WHEN o.retry_at IS NULL OR NOT isfinite(o.retry_at) THEN NULL
             ELSE (extract(epoch FROM o.retry_at) * 1000000)::bigint END AS ready_us,
        o.retry_at = 'infinity' AS held_on, r.id, r.kind, r.title, r.body, r.urgency, r.sticky, r.icon, r.sound, r.actions,
        CASE WHEN o.snooze_of_us IS NULL THEN r.command END AS command
        """

    static func waitingAlert(_ row: PostgresRow) throws -> WaitingAlert {
        let r = row.makeRandomAccess()
        let key = OccurrenceKey(reminderKey: try r["reminder_key"].decode(Int64.self), dueMicros: try r["due_us"].decode(Int64.self))
        let ready: Date? =
            try r["held_on"].decode(Bool?.self) == true ? .distantFuture : try r["ready_us"].decode(Int64?.self).map(Date.init(micros:))
        let occurrence = PendingOccurrence(
            key: key,
            reminderID: try r["id"].decode(String.self),
            kind: try r["kind"].decode(String.self),
            title: try r["title"].decode(String.self),
            body: try r["body"].decode(String.self),
            missedCount: try r["missed_count"].decode(Int.self),
            attempts: try r["attempts"].decode(Int.self),
            readyAt: ready,
            presentation: try presentation(from: r),
            heldSince: try r["held_us"].decode(Int64?.self).map(Date.init(micros:)),
            command: try r["command"].decode(String?.self).flatMap(ReminderCommand.init(stored:))
        )
        return WaitingAlert(occurrence: occurrence, snoozeOf: try r["snooze_of_us"].decode(Int64?.self).map(Date.init(micros:)))
    }

    /// The alerts waiting outside the reminders' own schedules, earliest first: snoozes'
    /// re-alerts and held occurrences (`chime list`, `chime quiet status`).
    public func waitingAlerts() throws -> [WaitingAlert] {
        try client.rows(
            """
            SELECT \(unescaped: Self.waitingColumns)
            FROM occurrence o JOIN reminder r ON r.key = o.reminder_key
            WHERE o.state IN ('pending', 'posting') AND (o.held_us IS NOT NULL OR o.snooze_of_us IS NOT NULL)
            ORDER BY o.due_us, r.id
            """
        ).map(Self.waitingAlert)
    }

    /// Occurrences held, in `channels`: pending with `held_us`, earliest first.
    public func heldOccurrences(channels: [String]) throws -> [PendingOccurrence] {
        try client.rows(
            """
            SELECT \(unescaped: Self.waitingColumns)
            FROM occurrence o JOIN reminder r ON r.key = o.reminder_key
            WHERE o.state = 'pending' AND o.held_us IS NOT NULL AND r.channel = ANY(\(channels)::text[])
            ORDER BY o.due_us
            """
        ).map { try Self.waitingAlert($0).occurrence }
    }

    /// Holds `keys`: each pending one, or claimed by `owner` (under its lease), stays (or goes
    /// back to) pending, not ready before `until` (nil: until released), `held_us` = `since`
    /// where unset. In the same transaction a claimed one's reminder advances past it, as a
    /// post's mark would advance it: the next occurrence is recorded and comes (or is held) on
    /// its own. Returns the keys held.
    @discardableResult
    public func hold(_ keys: [OccurrenceKey], owner: String, since: Date, until: Date?, systemZone: TimeZone) throws -> [OccurrenceKey] {
        guard !keys.isEmpty else { return [] }
        let untilMicros = until?.micros
        return try transaction { connection in
            let rows = try connection.rows(
                """
                UPDATE occurrence SET state = 'pending', held_us = coalesce(held_us, \(since.micros)), retry_at = CASE WHEN \(untilMicros)::bigint IS NULL THEN 'infinity'::timestamptz
                        ELSE 'epoch'::timestamptz + \(untilMicros)::bigint * interval '1 microsecond' END,
                    lease_owner = NULL, lease_until = NULL
                WHERE (reminder_key, due_us) IN (SELECT * FROM unnest(\(keys.map(\.reminderKey))::bigint[], \(keys.map(\.dueMicros))::bigint[]))
                  AND (state = 'pending' OR (state = 'posting' AND lease_owner = \(owner)))
                RETURNING reminder_key, due_us
                """
            )
            var held: [OccurrenceKey] = []
            for row in rows {
                let (key, due) = try row.decode((Int64, Int64).self)
                held.append(OccurrenceKey(reminderKey: key, dueMicros: due))
            }
            let nowMicros = try Self.now(connection)
            for key in held { _ = try Self.advance(after: key, nowMicros: nowMicros, systemZone: systemZone, connection) }
            return held
        }
    }

    /// Lets held occurrences go: ready now (still marked held: they come in the summary).
    public func release(held keys: [OccurrenceKey]) throws {
        guard !keys.isEmpty else { return }
        try client.run(
            """
            UPDATE occurrence SET retry_at = NULL
            WHERE (reminder_key, due_us) IN (SELECT * FROM unnest(\(keys.map(\.reminderKey))::bigint[], \(keys.map(\.dueMicros))::bigint[]))
              AND state = 'pending' AND held_us IS NOT NULL
            """
        )
    }
}

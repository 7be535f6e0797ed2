import ChimeCore
import Foundation
import GRDB
import Synchronization

/// Quiet hours in the store: the settings row (`quiet`, v9) and the occurrences quiet holds
/// (`occurrence.held_us`): held ones stay due in the ledger, so a restart, a kill or a clock
/// change loses nothing and posts nothing twice.
extension ReminderStore {
    /// The quiet state, with the default window (``setQuietHoursDefault(_:)``) where no window
    /// is stored: a window `chime quiet hours` stored beats the config file's; `quiet hours off`
    /// removes the stored one, so the file's applies again.
    public func quietState() throws -> QuietState {
        var state = try read { db in try Self.quietState(in: db) }
        if state.settings.hours == nil { state.settings.hours = quietHoursDefault.withLock { $0 } }
        return state
    }

    /// The window `chime quiet hours` stored, or nil (then the config file's applies).
    public func storedQuietHours() throws -> QuietSettings.Window? {
        try read { db in try Self.quietState(in: db) }.settings.hours
    }

    /// The window that applies while none is stored: the config file's `quiet.hours`.
    public func setQuietHoursDefault(_ window: QuietSettings.Window?) {
        quietHoursDefault.withLock { $0 = window }
    }

    static func quietState(in db: Database) throws -> QuietState {
        guard try db.tableExists("quiet"), let row = try Row.fetchOne(db, sql: "SELECT * FROM quiet WHERE id = 1") else {
            return QuietState()
        }
        var settings = QuietSettings()
        if let start: String = row["hours_start"], let end: String = row["hours_end"],
            let startTime = try? LocalTime.parse(start), let endTime = try? LocalTime.parse(end)
        {
            settings.hours = QuietSettings.Window(start: startTime, end: endTime)
        }
        settings.essential = QuietSettings.Essential(rawValue: row["essential"]) ?? .come
        settings.familyHold = row["family_hold"]
        let until: Int64? = row["until_us"]
        let windowOff: Int64? = row["window_off_until_us"]
        return QuietState(settings: settings, until: until.map(Date.init(micros:)), windowOffUntil: windowOff.map(Date.init(micros:)))
    }

    /// Changes the quiet state in one transaction: `change` gets the current state and returns
    /// the new one, which is written and returned.
    @discardableResult
    public func updateQuiet(_ change: (inout QuietState) throws(ChimeError) -> Void) throws(ChimeError) -> QuietState {
        let result: Result<QuietState, ChimeError> = try write { db in
            var state = try Self.quietState(in: db)
            // The change sees the window in effect (the default's, when none is stored); the
            // default is not written as if it had been chosen.
            let defaultHours = state.settings.hours == nil ? quietHoursDefault.withLock { $0 } : nil
            if let defaultHours { state.settings.hours = defaultHours }
            do throws(ChimeError) {
                try change(&state)
            } catch {
                return .failure(error)
            }
            var settings = state.settings
            if defaultHours != nil && settings.hours == defaultHours { settings.hours = nil }
            try db.execute(
                sql: """
                    INSERT INTO quiet (id, hours_start, hours_end, essential, family_hold, until_us, window_off_until_us)
                    VALUES (1, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (id) DO UPDATE SET hours_start = excluded.hours_start, hours_end = excluded.hours_end,
                        essential = excluded.essential, family_hold = excluded.family_hold, until_us = excluded.until_us,
                        window_off_until_us = excluded.window_off_until_us
                    """,
                arguments: [
                    settings.hours?.start.description, settings.hours?.end.description, settings.essential.rawValue,
                    settings.familyHold, state.until?.micros, state.windowOffUntil?.micros,
                ]
            )
            return .success(state)
        }
        return try result.get()
    }

    public func heldOccurrences() throws -> [PendingOccurrence] {
        try read { db in
            guard try db.columns(in: "occurrence").contains(where: { $0.name == "held_us" }) else { return [] }
            return try Row.fetchAll(
                db,
                sql: """
                    SELECT \(Self.pendingColumns)
                    FROM occurrence o JOIN reminder r ON r.key = o.reminder_key
                    WHERE o.state = 'due' AND o.held_us IS NOT NULL ORDER BY o.due_us
                    """
            ).map(Self.pendingOccurrence)
        }
    }

    /// The alerts waiting outside the reminders' own schedules, earliest first: the re-alerts a
    /// snooze brought back (due at the snooze's end; `snoozeOf` the occurrence snoozed) and the
    /// occurrences quiet or a family holds. `chime list` shows them: a snoozed one-shot reminder
    /// is no longer pending, its re-alert is.
    public func waitingAlerts() throws -> [WaitingAlert] {
        try read { db in
            let columns = try db.columns(in: "occurrence").map(\.name)
            guard columns.contains("held_us"), columns.contains("snooze_of_us") else { return [] }
            return try Row.fetchAll(
                db,
                sql: """
                    SELECT \(Self.pendingColumns), o.snooze_of_us
                    FROM occurrence o JOIN reminder r ON r.key = o.reminder_key
                    WHERE o.state = 'due' AND (o.held_us IS NOT NULL OR o.snooze_of_us IS NOT NULL)
                    ORDER BY o.due_us, r.id
                    """
            ).map { row in
                WaitingAlert(
                    occurrence: Self.pendingOccurrence(row),
                    snoozeOf: (row["snooze_of_us"] as Int64?).map(Date.init(micros:))
                )
            }
        }
    }

    public func hold(_ keys: [OccurrenceKey], since: Date, until: Date?) throws {
        try write { db in
            let statement = try db.cachedStatement(
                sql: """
                    UPDATE occurrence SET held_us = coalesce(held_us, ?), next_attempt_us = ?
                    WHERE reminder_key = ? AND due_us = ? AND state = 'due'
                    """
            )
            for key in keys {
                try statement.execute(arguments: [since.micros, until?.micros, key.reminderKey, key.dueMicros])
            }
        }
    }

    public func release(_ keys: [OccurrenceKey], at instant: Date) throws {
        try write { db in
            let statement = try db.cachedStatement(
                sql: "UPDATE occurrence SET next_attempt_us = ? WHERE reminder_key = ? AND due_us = ? AND state = 'due'"
            )
            for key in keys { try statement.execute(arguments: [instant.micros, key.reminderKey, key.dueMicros]) }
        }
    }
}

extension ReminderStore {
    /// What holds alerts at `now` and why, as the scheduler decides it: the quiet state, the
    /// families' holds (each family asked as at a pass: a read), the desktop's do-not-disturb as
    /// read by the caller; and the alerts waiting (snoozed, held) with the hold of each.
    public func holdStatus(
        families: [any ReminderFamily],
        desktopDoNotDisturb: Bool?,
        now: Date,
        zone: TimeZone
    ) throws -> HoldStatus {
        try HoldStatus(
            quiet: quietState(),
            waiting: waitingAlerts(),
            families: families,
            desktopDoNotDisturb: desktopDoNotDisturb,
            now: now,
            zone: zone
        )
    }
}

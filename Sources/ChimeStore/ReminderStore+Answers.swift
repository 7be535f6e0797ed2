import ChimeCore
import Foundation
import GRDB

extension ReminderStore {
    /// How long after it was shown an alert counts as still showing: ``ShownAlert/showingWindow``.
    public static let showingWindow: TimeInterval = ShownAlert.showingWindow

    /// The alert shown last for reminder `id` (any reminder that had the id), or nil when none
    /// was ever shown.
    public func lastShown(id: String) throws(ChimeError) -> ShownAlert? {
        try read { db in try Self.lastShown(id: id, in: db)?.alert }
    }

    /// The title of the alert shown last for `id` (the scheduler's confirmation names it).
    public func shownTitle(id: String) throws -> String? {
        try lastShown(id: id)?.title
    }

    /// The alerts that `chime done` and `chime snooze` can answer at `now`, the last shown first:
    /// for each reminder id, the alert shown last, when that was within ``showingWindow`` and it
    /// has no answer yet (one closed without an answer counts as none), as ``answerShown(id:action:snoozeUntil:now:)``
    /// finds them.
    public func showing(now: Date) throws(ChimeError) -> [ShownAlert] {
        try read { db in
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT r.id, o.due_us, o.posted_us, o.response, r.kind, r.title, r.state, r.trigger_kind
                    FROM occurrence o JOIN reminder r ON r.key = o.reminder_key
                    WHERE o.state = 'posted' AND o.posted_us >= ? ORDER BY o.posted_us DESC
                    """,
                arguments: [now.addingTimeInterval(-Self.showingWindow).micros]
            )
            var seen: Set<String> = []
            return rows.compactMap { row -> ShownAlert? in
                // The latest alert of each id decides, as lastShown(id:in:) reads it.
                let id: String = row[0]
                guard seen.insert(id).inserted else { return nil }
                let response: String? = row[3]
                if let response, !response.hasPrefix("closed:") { return nil }
                return ShownAlert(
                    reminderID: id,
                    kind: row[4],
                    title: row[5],
                    due: Date(micros: row[1]),
                    postedAt: Date(micros: row[2]),
                    response: response,
                    recurring: row[6] as String == "pending" && row[7] as String != "once"
                )
            }
        }
    }

    /// Answers from the command line the alert last shown for reminder `id` with `action`
    /// (`done`, `snooze`), as its button would, and with `snoozeUntil` brings it back once then.
    /// In one transaction: the answer and the re-alert, or nothing.
    ///
    /// An alert closed without an answer (expired, dismissed) can still be answered; one
    /// answered already cannot (the first answer stands), except that `done` on a snoozed
    /// alert whose re-alert is still to come ends the snooze: the re-alert is cancelled, with
    /// `done` as its answer.
    ///
    /// - Throws: `.notFound` when nothing is showing for `id` (no alert shown, or the last one
    ///   shown more than ``showingWindow`` ago), `.conflict` when it was answered already.
    public func answerShown(id: String, action: String, snoozeUntil: Date?, now: Date) throws(ChimeError) -> AnsweredAlert {
        try write { db in
            guard let (alert, reminderKey) = try Self.lastShown(id: id, in: db) else {
                throw try Self.nothingShown(id: id, in: db)
            }
            try Self.checkShowing(alert, now: now)
            // Snoozed, its re-alert not shown yet: "done" ends the snooze (the re-alert is
            // cancelled, with done as its answer); the reminder keeps its schedule.
            if alert.response == "snooze", snoozeUntil == nil, let until = try Self.pendingSnooze(reminderKey, of: alert.due, in: db) {
                try db.execute(
                    sql: """
                        UPDATE occurrence SET state = 'cancelled', response = ?, answered_us = ?
                        WHERE reminder_key = ? AND due_us = ? AND state = 'due'
                        """,
                    arguments: [action, now.micros, reminderKey, until.micros]
                )
                return AnsweredAlert(alert: alert, response: action, snoozedUntil: nil)
            }
            if let response = alert.response, !response.hasPrefix("closed:") {
                let shown = TimeText.local(alert.postedAt, in: .current)
                throw ChimeError(.conflict, "the alert of '\(id)' shown \(shown) was already answered (\(response)): nothing changed")
            }
            try db.execute(
                sql: """
                    UPDATE occurrence SET response = ?, answered_us = ?
                    WHERE reminder_key = ? AND due_us = ? AND (response IS NULL OR response LIKE 'closed:%')
                    """,
                arguments: [action, now.micros, reminderKey, alert.due.micros]
            )
            if let snoozeUntil {
                try Self.recordSnooze(reminderKey: reminderKey, of: alert.due, until: snoozeUntil, now: now, in: db)
            }
            return AnsweredAlert(alert: alert, response: action, snoozedUntil: snoozeUntil)
        }
    }

    public func snoozeShown(id: String, until: Date, at instant: Date) throws -> Bool {
        try write { db in
            // The scheduler asks only after recording the answer (the first stands); the unique
            // index keeps it to one re-alert per shown occurrence.
            guard let (alert, reminderKey) = try Self.lastShown(id: id, in: db) else { return false }
            return try Self.recordSnooze(reminderKey: reminderKey, of: alert.due, until: until, now: instant, in: db)
        }
    }

    /// One more occurrence of reminder `reminderKey`, due at `until`, re-alerting the one due at
    /// `due`: at most one per shown occurrence (the unique index `occurrence_snooze`). Returns
    /// whether it was recorded.
    @discardableResult
    static func recordSnooze(reminderKey: Int64, of due: Date, until: Date, now: Date, in db: Database) throws -> Bool {
        try db.execute(
            sql: """
                INSERT INTO occurrence (reminder_key, due_us, state, missed_count, recorded_us, next_attempt_us, snooze_of_us)
                VALUES (?1, ?2, 'due', 0, ?3, ?2, ?4) ON CONFLICT DO NOTHING
                """,
            arguments: [reminderKey, until.micros, now.micros, due.micros]
        )
        return db.changesCount > 0
    }

    /// The due instant of the re-alert of the occurrence due at `due` (a snooze) when it is
    /// still to be shown.
    static func pendingSnooze(_ reminderKey: Int64, of due: Date, in db: Database) throws -> Date? {
        try Int64.fetchOne(
            db,
            sql: "SELECT due_us FROM occurrence WHERE reminder_key = ? AND snooze_of_us = ? AND state = 'due'",
            arguments: [reminderKey, due.micros]
        ).map(Date.init(micros:))
    }

    /// The latest posted occurrence of any reminder that had the id `id`, with its reminder's key.
    static func lastShown(id: String, in db: Database) throws -> (alert: ShownAlert, reminderKey: Int64)? {
        guard
            let row = try Row.fetchOne(
                db,
                sql: """
                    SELECT o.reminder_key, o.due_us, o.posted_us, o.response, r.kind, r.title, r.state, r.trigger_kind
                    FROM occurrence o JOIN reminder r ON r.key = o.reminder_key
                    WHERE r.id = ? AND o.state = 'posted' ORDER BY o.posted_us DESC LIMIT 1
                    """,
                arguments: [id]
            )
        else { return nil }
        let alert = ShownAlert(
            reminderID: id,
            kind: row[4],
            title: row[5],
            due: Date(micros: row[1]),
            postedAt: Date(micros: row[2]),
            response: row[3],
            recurring: row[6] as String == "pending" && row[7] as String != "once"
        )
        return (alert, row[0])
    }

    /// Refuses an alert shown more than ``showingWindow`` ago.
    static func checkShowing(_ alert: ShownAlert, now: Date) throws(ChimeError) {
        guard now.timeIntervalSince(alert.postedAt) <= showingWindow else {
            let shown = TimeText.local(alert.postedAt, in: .current)
            throw ChimeError(.notFound, "nothing is showing for '\(alert.reminderID)': its last alert was shown \(shown), over a day ago")
        }
    }

    /// Why nothing is showing for `id`, when no alert of it was ever shown.
    static func nothingShown(id: String, in db: Database) throws -> ChimeError {
        if try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM reminder WHERE id = ?)", arguments: [id]) == true {
            return ChimeError(.notFound, "nothing is showing for '\(id)': no alert of it has been shown yet")
        }
        return ChimeError(.notFound, "no reminder has the id '\(id)': see 'chime list'")
    }

    /// Cancels the alert showing for the one-shot `id` that has fired (shown within
    /// ``showingWindow``, not answered): records `cancelled` as its answer, in the caller's
    /// transaction. Returns the reminder and its alert, or nil when no such alert is showing.
    static func cancelShown(id: String, at micros: Int64, in db: Database) throws -> (reminder: Reminder, alert: ShownAlert)? {
        guard let (alert, reminderKey) = try lastShown(id: id, in: db), alert.response == nil,
            Double(micros - alert.postedAt.micros) / 1e6 <= showingWindow,
            let row = try Row.fetchOne(
                db,
                sql: "SELECT * FROM reminder WHERE key = ? AND state = 'done' AND trigger_kind = 'once'",
                arguments: [reminderKey]
            )
        else { return nil }
        try db.execute(
            sql: "UPDATE occurrence SET response = 'cancelled', answered_us = ? WHERE reminder_key = ? AND due_us = ? AND response IS NULL",
            arguments: [micros, reminderKey, alert.due.micros]
        )
        return (try reminder(from: row), alert)
    }
}

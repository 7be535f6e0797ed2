import ChimeCore
import Foundation

/// Answers to shown alerts on the PostgreSQL store, as on SQLite (ChimeStore's
/// `ReminderStore+Answers`): the same rules, on the database's clock.
///
/// - An answer is recorded against the latest posted occurrence of the reminder id; the first
///   answer stands (an alert closed without one can still be answered).
/// - A snooze records one more occurrence of the same reminder, due at the snooze's end (at most
///   one per shown occurrence: the index `occurrence_snooze`), which any runner serving its
///   channel claims.
/// - The alert on screen belongs to the runner that posted it (its notifier holds it; the
///   notification server's id is kept in `server_id`). A command on any host tells it over
///   `NOTIFY chime_alerts` (``alertsChannel``), sent at commit: that runner replaces the alert by
///   the confirmation, or closes it. With no runner up, the alert stays until it expires.
extension PostgresStore {
    /// The channel on which a command asks the runner that showed a reminder's alerts to close
    /// them or replace them by a confirmation. The payload is ``alertPayload(_:)``.
    public static let alertsChannel = "chime_alerts"

    /// NOTIFY's payload must be shorter than 8000 bytes (PostgreSQL 15 docs, NOTIFY): a
    /// confirmation's body is cut to fit.
    static let payloadLimit = 7_900

    /// `ID`, or `ID<TAB>TITLE<TAB>BODY` for an alert to replace by a confirmation: tabs and
    /// line breaks in the texts become spaces; cut, on a character, to fit NOTIFY's payload.
    public static func alertPayload(_ withdrawal: Withdrawal) -> String {
        guard let confirmation = withdrawal.confirmation else { return withdrawal.id }
        func flat(_ text: String) -> String {
            String(text.map { $0 == "\t" || $0.isNewline ? " " : $0 })
        }
        var payload = [withdrawal.id, flat(confirmation.title), flat(confirmation.body)].joined(separator: "\t")
        while payload.utf8.count > payloadLimit { payload.removeLast() }
        return payload
    }

    /// The withdrawal an ``alertPayload(_:)`` stands for; nil for an empty one.
    public static func withdrawal(fromPayload payload: String) -> Withdrawal? {
        let fields = payload.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
        guard let id = fields.first, !id.isEmpty else { return nil }
        guard fields.count > 1 else { return Withdrawal(id: id) }
        return Withdrawal(id: id, confirmation: Withdrawal.Confirmation(title: fields[1], body: fields.count > 2 ? fields[2] : ""))
    }

    /// Asks, at commit, the runner that showed `withdrawal`'s alerts to close or replace them.
    static func notifyAlerts(_ withdrawal: Withdrawal, _ connection: PostgresSession) throws {
        try connection.run("SELECT pg_notify(\(alertsChannel), \(alertPayload(withdrawal)))")
    }

    /// ``notifyAlerts(_:_:)`` in a statement of its own (the confirmation is worded after the
    /// answer is recorded).
    public func notifyAlerts(_ withdrawal: Withdrawal) throws {
        try client.run("SELECT pg_notify(\(Self.alertsChannel), \(Self.alertPayload(withdrawal)))")
    }

    /// The columns of ``lastShown(id:_:lock:)``.
    private static let shownColumns = """
        o.reminder_key, o.due_us, (extract(epoch FROM o.posted_at) * 1000000)::bigint AS posted_us, o.response,
        r.kind, r.title, r.state, r.trigger_kind
        """

    /// The latest posted occurrence of any reminder that had the id `id`, with its reminder's
    /// key; `lock`: locked for the caller's transaction (an answer from the alert and one from
    /// the command line at once: the second waits, then sees the first).
    static func lastShown(id: String, _ connection: PostgresSession, lock: Bool = false) throws -> (alert: ShownAlert, reminderKey: Int64)?
    {
        let rows = try connection.rows(
            """
            SELECT \(unescaped: shownColumns)
            FROM occurrence o JOIN reminder r ON r.key = o.reminder_key
            WHERE r.id = \(id) AND o.state = 'posted' ORDER BY o.posted_at DESC LIMIT 1 \(unescaped: lock ? "FOR UPDATE OF o" : "")
            """
        )
        for row in rows {
            let r = row.makeRandomAccess()
            let state = try r["state"].decode(String.self)
            let trigger = try r["trigger_kind"].decode(String.self)
            let alert = ShownAlert(
                reminderID: id,
                kind: try r["kind"].decode(String.self),
                title: try r["title"].decode(String.self),
                due: Date(micros: try r["due_us"].decode(Int64.self)),
                postedAt: Date(micros: try r["posted_us"].decode(Int64.self)),
                response: try r["response"].decode(String?.self),
                recurring: state == "pending" && trigger != "once"
            )
            return (alert, try r["reminder_key"].decode(Int64.self))
        }
        return nil
    }

    /// The alert shown last for reminder `id` (any reminder that had the id), or nil when none
    /// was ever shown.
    public func lastShown(id: String) throws -> ShownAlert? {
        try client.withSession { try Self.lastShown(id: id, $0)?.alert }
    }

    /// Answers from the command line the alert last shown for reminder `id` with `action`
    /// (`done`, `snooze`), as its button would; with `snoozeFor`, it comes back once that many
    /// seconds after the database's now. In one transaction, with the word to the runner that
    /// shows it (``alertsChannel``): the answer, the re-alert and the confirmation, or nothing.
    ///
    /// The SQLite store's rules: an alert closed without an answer can still be answered; one
    /// answered already cannot, except that `done` on a snoozed alert whose re-alert is still to
    /// come ends the snooze (the re-alert is cancelled, with `done` as its answer).
    ///
    /// - Parameter confirmation: the confirmation's texts, from the alert answered and when a
    ///   snoozed one comes back.
    /// - Throws: `.notFound` when nothing is showing for `id` (none shown, or the last one shown
    ///   more than a day ago), `.conflict` when it was answered already.
    public func answerShown(
        id: String,
        action: String,
        snoozeFor: TimeInterval?,
        confirmation: (AnsweredAlert) -> Withdrawal.Confirmation
    ) throws -> AnsweredAlert {
        try transaction { connection in
            guard let (alert, reminderKey) = try Self.lastShown(id: id, connection, lock: true) else {
                throw try Self.nothingShown(id: id, connection)
            }
            let now = Date(micros: try Self.now(connection))
            guard now.timeIntervalSince(alert.postedAt) <= ShownAlert.showingWindow else {
                let shown = TimeText.local(alert.postedAt, in: .current)
                throw ChimeError(.notFound, "nothing is showing for '\(id)': its last alert was shown \(shown), over a day ago")
            }
            var answered = AnsweredAlert(alert: alert, response: action, snoozedUntil: nil)
            // Snoozed, its re-alert not shown yet: "done" ends the snooze; the reminder keeps
            // its schedule.
            if alert.response == "snooze", snoozeFor == nil {
                let ended = try connection.run(
                    """
                    UPDATE occurrence SET state = 'cancelled', response = \(action), answered_at = now()
                    WHERE reminder_key = \(reminderKey) AND snooze_of_us = \(alert.due.micros) AND state = 'pending'
                    """
                )
                if ended > 0 {
                    try Self.notifyChange(id: id, connection)
                    try Self.notifyAlerts(Withdrawal(id: id, confirmation: confirmation(answered)), connection)
                    return answered
                }
            }
            if let response = alert.response, !response.hasPrefix("closed:") {
                let shown = TimeText.local(alert.postedAt, in: .current)
                throw ChimeError(.conflict, "the alert of '\(id)' shown \(shown) was already answered (\(response)): nothing changed")
            }
            try connection.run(
                """
                UPDATE occurrence SET response = \(action), answered_at = now()
                WHERE reminder_key = \(reminderKey) AND due_us = \(alert.due.micros)
                """
            )
            if let snoozeFor {
                let until = now.addingTimeInterval(snoozeFor)
                try Self.recordSnooze(reminderKey: reminderKey, of: alert.due, until: until, connection)
                answered.snoozedUntil = until
                try Self.notifyChange(id: id, connection)
            }
            try Self.notifyAlerts(Withdrawal(id: id, confirmation: confirmation(answered)), connection)
            return answered
        }
    }

    /// Why nothing is showing for `id`, when no alert of it was ever shown.
    static func nothingShown(id: String, _ connection: PostgresSession) throws -> ChimeError {
        let rows = try connection.rows("SELECT EXISTS (SELECT 1 FROM reminder WHERE id = \(id))")
        for row in rows where try row.decode(Bool.self) {
            return ChimeError(.notFound, "nothing is showing for '\(id)': no alert of it has been shown yet")
        }
        return ChimeError(.notFound, "no reminder has the id '\(id)': see 'chime list'")
    }

    /// One more occurrence of reminder `reminderKey`, due at `until`, re-alerting the one due at
    /// `due`: at most one per shown occurrence. Returns whether it was recorded.
    @discardableResult
    static func recordSnooze(reminderKey: Int64, of due: Date, until: Date, _ connection: PostgresSession) throws -> Bool {
        try connection.run(
            """
            INSERT INTO occurrence (reminder_key, due_us, snooze_of_us) VALUES (\(reminderKey), \(until.micros), \(due.micros))
            ON CONFLICT DO NOTHING
            """
        ) > 0
    }

    /// Records what a person did with a shown alert (an action's key, or `closed:<reason>`)
    /// against the latest posted occurrence of reminder `id`, unless it has an answer already.
    /// Returns that reminder's kind, or nil when it recorded nothing.
    public func recordResponse(id: String, response: String) throws -> String? {
        try transaction { connection in
            guard let (alert, reminderKey) = try Self.lastShown(id: id, connection, lock: true), alert.response == nil else {
                return nil
            }
            try connection.run(
                """
                UPDATE occurrence SET response = \(response), answered_at = now()
                WHERE reminder_key = \(reminderKey) AND due_us = \(alert.due.micros) AND response IS NULL
                """
            )
            return alert.kind
        }
    }

    /// Brings the alert last shown for `id` back once at `until` (it was answered with snooze
    /// from its button). Returns whether it recorded the re-alert.
    public func snoozeShown(id: String, until: Date) throws -> Bool {
        try transaction { connection in
            guard let (alert, reminderKey) = try Self.lastShown(id: id, connection) else { return false }
            let recorded = try Self.recordSnooze(reminderKey: reminderKey, of: alert.due, until: until, connection)
            if recorded { try Self.notifyChange(id: id, connection) }
            return recorded
        }
    }

    /// The alerts `owner` posted for reminder `id` that have a server id (what may still be on
    /// its desktop): only the runner that showed an alert closes it, never one on another host,
    /// where the same server id is another application's alert.
    public func shownAlerts(id: String, owner: String) throws -> [PostedNote] {
        var shown: [PostedNote] = []
        let rows = try client.rows(
            """
            SELECT DISTINCT o.server_id FROM reminder r JOIN occurrence o ON o.reminder_key = r.key
            WHERE r.id = \(id) AND o.state = 'posted' AND o.server_id IS NOT NULL AND o.lease_owner = \(owner)
            """
        )
        for row in rows {
            if let server = UInt32(exactly: try row.decode(Int64.self)) { shown.append(PostedNote(id: id, serverID: server)) }
        }
        return shown
    }
}

import ChimeCore
import ChimeStore
import Foundation
import GRDB

/// Someone else told about a medication's doses (Medisafe's Medfriend): the medication's rule
/// (`medication_tell`), and one message per dose waiting until it is sent (`dose_tell`).
///
/// A settle records a dose's "not taken" message once it is unanswered ``DoseTellRule/after``
/// its time, or missed; the runner part (``DoseFamily``) sends what is recorded through its
/// ``DoseTeller`` and records it sent, so that no dose is told twice, across restarts too. A
/// message not yet sent when the dose is answered is dropped; one sent is followed by "took …
/// at 09:12" (or "skipped …").
extension DoseBook {
    /// Sets (or, with nil, removes) who is told about `reference`'s doses. Doses due before now
    /// are never told about.
    public func setTell(_ reference: String, _ rule: DoseTellRule?) throws(ChimeError) -> MedicationDetail {
        let now = clock.now()
        let zone = systemZone()
        return try store.write { db in
            guard let medication = try Self.findMedication(reference, in: db) else { throw try Self.medicationNotFound(reference, in: db) }
            if let rule {
                try db.execute(
                    sql: """
                        INSERT INTO medication_tell (medication_id, channel, after_s, since_us) VALUES (?, ?, ?, ?)
                        ON CONFLICT (medication_id) DO UPDATE SET channel = excluded.channel, after_s = excluded.after_s
                        """,
                    arguments: [medication.id, rule.channel.stored, rule.after, now.micros]
                )
            } else {
                try db.execute(sql: "DELETE FROM medication_tell WHERE medication_id = ?", arguments: [medication.id])
            }
            try Self.settle(now: now, zone: zone, repeats: repeats, in: db)
            return try Self.detail(id: medication.id, now: now, zone: zone, in: db)
        }
    }

    /// Changes only when the other person is told (`--tell-after` without `--tell`).
    /// - Throws: `.conflict` when the medication tells no one.
    public func setTellAfter(_ reference: String, _ after: Int?) throws(ChimeError) -> MedicationDetail {
        let current = try medication(reference)
        guard var rule = current.tell else {
            throw ChimeError(
                .conflict,
                "\(current.medication.name) tells no one: name who is told, such as 'chime med tell \(current.medication.id) ntfy:TOPIC'; nothing was changed"
            )
        }
        rule.after = after
        return try setTell(String(current.medication.id), rule)
    }

    static func fetchTell(of medicationID: Int64, in db: Database) throws -> DoseTellRule? {
        guard
            let row = try Row.fetchOne(
                db,
                sql: "SELECT channel, after_s FROM medication_tell WHERE medication_id = ?",
                arguments: [medicationID]
            ),
            let channel = try? DoseTellChannel.parse(row[0])
        else { return nil }
        return DoseTellRule(channel: channel, after: row[1])
    }

    // MARK: - Recording (in a settle's transaction)

    /// Records the messages that fell due by `now`, drops those whose dose was answered before
    /// they were sent, and follows a sent one whose dose was answered since; returns when the
    /// next dose's message falls due.
    static func planTells(now: Date, in db: Database) throws -> Date? {
        let nowMicros = now.micros
        // Answered before the message went: nothing to tell.
        try db.execute(
            sql: """
                UPDATE dose_tell SET state = 'dropped', error = 'answered before it was sent'
                WHERE state = 'pending' AND kind = 'not_taken'
                  AND dose_id IN (SELECT id FROM dose WHERE answered = 1 OR status IN ('taken', 'skipped'))
                """
        )
        // Told, then taken or skipped: say so.
        try db.execute(
            sql: """
                INSERT OR IGNORE INTO dose_tell (dose_id, kind, channel, recorded_us, next_us)
                SELECT t.dose_id, 'answered', t.channel, ?, ? FROM dose_tell t JOIN dose d ON d.id = t.dose_id
                WHERE t.kind = 'not_taken' AND t.state = 'sent' AND d.status IN ('taken', 'skipped')
                  AND NOT EXISTS (SELECT 1 FROM dose_tell a WHERE a.dose_id = t.dose_id AND a.kind = 'answered')
                """,
            arguments: [nowMicros, nowMicros]
        )
        // Unanswered doses of medications that tell someone, not told yet: within a dose's
        // longest window (7 days), so the look stays small.
        let rows = try Row.fetchAll(
            db,
            sql: """
                SELECT d.id, d.scheduled_us, d.missed_us, d.status, d.snooze_until_us, mt.channel, mt.after_s
                FROM dose d JOIN medication_tell mt ON mt.medication_id = d.medication_id
                WHERE d.as_needed = 0 AND d.answered = 0 AND d.status IN ('pending', 'missed')
                  AND d.scheduled_us >= mt.since_us AND d.scheduled_us >= ?
                  AND NOT EXISTS (SELECT 1 FROM dose_tell t WHERE t.dose_id = d.id AND t.kind = 'not_taken')
                """,
            arguments: [nowMicros - 8 * 86_400 * 1_000_000]
        )
        var next: Date?
        for row in rows {
            let scheduled: Int64 = row[1]
            let missed: Int64 = row[2]
            let afterSeconds: Int64? = row[6]
            // Unanswered `after` its time, or missed, whichever comes first; not while snoozed.
            var due = afterSeconds.map { min(scheduled + $0 * 1_000_000, missed) } ?? missed
            if let until = row[4] as Int64? { due = max(due, until) }
            guard due <= nowMicros else {
                next = min(next ?? Date(micros: due), Date(micros: due))
                continue
            }
            let stale = Double(nowMicros - due) / 1e6 > DoseTellRules.catchUpLimit
            try db.execute(
                sql: """
                    INSERT INTO dose_tell (dose_id, kind, channel, recorded_us, next_us, state, error)
                    VALUES (?, 'not_taken', ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    row[0] as Int64, row[5] as String, nowMicros, nowMicros, stale ? "dropped" : "pending",
                    stale ? "its time passed more than 12 h before Chime looked" : nil,
                ]
            )
        }
        return next
    }

    // MARK: - Sending (the runner part)

    /// The messages to send now, oldest first, and when the next one waiting is to be tried.
    public func dueTells() throws(ChimeError) -> (due: [DoseTell], next: Date?) {
        let now = clock.now()
        return try store.read { db in
            let due = try Self.fetchTells(where: "t.state = 'pending' AND t.next_us <= ?", [now.micros], in: db)
            let next = try Int64.fetchOne(
                db,
                sql: "SELECT min(next_us) FROM dose_tell WHERE state = 'pending' AND next_us > ?",
                arguments: [now.micros]
            )
            return (due, next.map(Date.init(micros:)))
        }
    }

    /// Every message about dose `doseID`, oldest first (for tests and `chime dose show`-like views).
    public func tells(ofDose doseID: Int64) throws(ChimeError) -> [(tell: DoseTell, state: String, error: String?)] {
        try store.read { db in
            let tells = try Self.fetchTells(where: "t.dose_id = ?", [doseID], in: db)
            return try tells.map { tell in
                let row = try Row.fetchOne(db, sql: "SELECT state, error FROM dose_tell WHERE id = ?", arguments: [tell.id])
                return (tell, row?[0] ?? "", row?[1])
            }
        }
    }

    static func fetchTells(where condition: String, _ arguments: StatementArguments, in db: Database) throws -> [DoseTell] {
        try Row.fetchAll(
            db,
            sql: """
                SELECT t.id, t.dose_id, t.kind, t.channel, t.recorded_us, t.attempts,
                       d.scheduled_us, d.zone, d.status, d.taken_us, m.name, m.amount, m.unit
                FROM dose_tell t JOIN dose d ON d.id = t.dose_id JOIN medication m ON m.id = d.medication_id
                WHERE \(condition) ORDER BY t.id
                """,
            arguments: arguments
        ).compactMap { row in
            guard let kind = DoseTell.Kind(rawValue: row[2]), let channel = try? DoseTellChannel.parse(row[3]) else { return nil }
            return DoseTell(
                id: row[0],
                doseID: row[1],
                kind: kind,
                channel: channel,
                medication: Medication(name: row[10], amount: row[11], unit: row[12]).alertTitle,
                scheduled: Date(micros: row[6]),
                zone: TimeZone(identifier: row[7]) ?? .current,
                status: DoseStatus(rawValue: row[8]) ?? .pending,
                takenAt: (row[9] as Int64?).map(Date.init(micros:)),
                recordedAt: Date(micros: row[4]),
                attempts: row[5]
            )
        }
    }

    /// Whether `tell` is still to be sent now: a "not taken" whose dose was answered meanwhile,
    /// or a follow-up whose dose is no longer taken or skipped (reset), is dropped instead.
    public func claimTell(_ tell: DoseTell) throws(ChimeError) -> Bool {
        let now = clock.now()
        return try store.write { db in
            _ = try Self.planTells(now: now, in: db)
            if tell.kind == .answered {
                try db.execute(
                    sql: """
                        UPDATE dose_tell SET state = 'dropped', error = 'the dose is unanswered again'
                        WHERE id = ? AND state = 'pending' AND dose_id NOT IN (SELECT id FROM dose WHERE status IN ('taken', 'skipped'))
                        """,
                    arguments: [tell.id]
                )
            }
            return try Bool.fetchOne(db, sql: "SELECT state = 'pending' FROM dose_tell WHERE id = ?", arguments: [tell.id]) ?? false
        }
    }

    /// Records `tell` sent (never sent again), and its follow-up when its dose was answered meanwhile.
    public func tellSent(_ tell: DoseTell) throws(ChimeError) {
        let now = clock.now()
        try store.write { db in
            try db.execute(
                sql: "UPDATE dose_tell SET state = 'sent', sent_us = ?, error = NULL, attempts = attempts + 1 WHERE id = ?",
                arguments: [now.micros, tell.id]
            )
            _ = try Self.planTells(now: now, in: db)
        }
    }

    /// Records a failed attempt: tried again after ``DoseTellRules/retryDelay(afterAttempts:)``,
    /// or given up a day after it was recorded.
    public func tellFailed(_ tell: DoseTell, reason: String) throws(ChimeError) {
        let now = clock.now()
        let attempts = tell.attempts + 1
        let next = now.addingTimeInterval(DoseTellRules.retryDelay(afterAttempts: attempts))
        let givenUp = next.timeIntervalSince(tell.recordedAt) > DoseTellRules.giveUpAfter
        try store.write { db in
            try db.execute(
                sql: "UPDATE dose_tell SET state = ?, attempts = ?, next_us = ?, error = ? WHERE id = ? AND state = 'pending'",
                arguments: [givenUp ? "failed" : "pending", attempts, next.micros, reason, tell.id]
            )
        }
    }
}

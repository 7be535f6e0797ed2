import ChimeCore
import ChimeStore
import Foundation
import GRDB

/// Medications, their schedules and doses over Chime's store (the seed's view models, as one
/// type): every change is one transaction that changes the doses and their alerts together.
///
/// A dose's alert is an ordinary one-shot reminder of kind ``kind`` whose id is the dose's
/// occurrence id (`med-{scheduleID}-{yyyyMMdd-HHmm}`): the scheduler fires it exactly once, and
/// a repeat or a snoozed re-alert reuses the id, so the desktop updates the alert in place.
///
/// Nothing here ticks. Every reader settles first (``settle()``), and the runner settles
/// before each pass (``DoseFamily``):
/// - each enabled schedule's occurrences become doses, up to its next one in the future, whose
///   alert is scheduled;
/// - a dose whose missed window passed unanswered becomes missed (its alert cancelled);
/// - an unanswered alert is repeated every 15 minutes, at most 3 times, until the window ends;
/// - doses that fell due while nothing ran (the runner down, the machine off) and are past their
///   grace window get no alert of their own: one summary alert lists them.
public struct DoseBook: Sendable {
    /// The reminder kind of dose alerts.
    public static let kind = "dose"
    /// The seed's texts: the first line of a dose alert's body, and the title of the summary
    /// of doses that fell due while nothing ran. (Before Chime 0.9 every dose alert had this
    /// title, and the snoozed one ``snoozedTitle``; stores may still hold such alerts.)
    public static let alertTitle = "Medication Reminder"
    public static let snoozedTitle = "Medication Reminder (Snoozed)"

    public let store: ReminderStore
    public let clock: any WallClock
    public let systemZone: @Sendable () -> TimeZone
    /// How an unanswered dose alert repeats (the config file's `doses.repeat_every` and `repeat_count`).
    public let repeats: DoseRepeats
    /// For tests: runs in ``editMedication(_:_:)`` after its checks, just before its write
    /// transaction begins, so that a test can commit a change that races the edit.
    var beforeEditWrite: (@Sendable () -> Void)?

    public init(
        store: ReminderStore,
        clock: any WallClock = SystemWallClock(),
        systemZone: @escaping @Sendable () -> TimeZone = { TimeZone.current },
        repeats: DoseRepeats = DoseRepeats()
    ) {
        store.require(.doses)
        self.repeats = repeats
        self.store = store
        self.clock = clock
        self.systemZone = systemZone
    }

    /// What a settle did.
    public struct Settled: Sendable, Hashable {
        /// Doses created from schedules.
        public var created = 0
        /// Doses marked missed because their window passed unanswered.
        public var missed: [Int64] = []
        /// Doses that fell due while nothing ran, reported in one summary alert (``summaryID``).
        public var summarized: [Int64] = []
        public var summaryID: String?
        /// Repeats scheduled for unanswered alerts.
        public var repeats: [String] = []
        /// When a settle next has work: the earliest next dose to create, missed window to end,
        /// or message to the other person to record (``nextTell``).
        public var nextCheck: Date?
        /// When the next message to someone else about a dose falls due (``DoseBook/setTell(_:_:)``).
        public var nextTell: Date?
    }

    /// Brings the doses in step with the clock (see the type's documentation).
    @discardableResult
    public func settle() throws(ChimeError) -> Settled {
        let now = clock.now()
        let zone = systemZone()
        return try store.write { db in try Self.settle(now: now, zone: zone, repeats: repeats, in: db) }
    }

    // MARK: - Settling

    @discardableResult
    static func settle(now: Date, zone: TimeZone, repeats: DoseRepeats, in db: Database) throws -> Settled {
        var settled = Settled()
        var caughtUp: [CaughtUp] = []
        let nowMicros = now.micros
        // Windows that passed unanswered: missed, alert cancelled. One whose alert was never
        // shown (nothing ran from before its time to past its window) goes in the summary, as
        // the doses created missed at catch-up do: not silently missed.
        for row in try Row.fetchAll(
            db,
            sql: """
                SELECT d.id, d.occurrence, d.summarized, d.scheduled_us, d.zone, m.name, coalesce(d.amount, m.amount), m.unit
                FROM dose d JOIN medication m ON m.id = d.medication_id
                WHERE d.status = 'pending' AND d.answered = 0 AND d.missed_us <= ?
                """,
            arguments: [nowMicros]
        ) {
            let doseID: Int64 = row[0]
            let occurrence: String? = row[1]
            var unseen = false
            if let occurrence, !(row[2] as Bool) { unseen = try !ReminderStore.wasEverShown(id: occurrence, kind: kind, in: db) }
            try db.execute(
                sql: "UPDATE dose SET status = 'missed', auto_missed = 1, summarized = summarized OR ?, updated_us = ? WHERE id = ?",
                arguments: [unseen, nowMicros, doseID]
            )
            if let occurrence { _ = try ReminderStore.cancel(id: occurrence, at: nowMicros, in: db) }
            let medication = Medication(name: row[5], amount: row[6], unit: row[7])
            try ReminderStore.recordHook(
                Self.hookEvent(
                    "dose.missed",
                    doseID: doseID,
                    title: medication.alertTitle,
                    medication: medication.name,
                    scheduled: Date(micros: row[3])
                ),
                at: now,
                in: db
            )
            settled.missed.append(doseID)
            if unseen {
                let label = Medication(name: row[5], amount: row[6], unit: row[7]).label
                let zone = TimeZone(identifier: row[4]) ?? .current
                caughtUp.append(CaughtUp(doseID: doseID, label: label, scheduled: Date(micros: row[3]), zone: zone, missed: true))
            }
        }
        try followSystemZone(zone, now: now, in: db)
        let taperEnd = try endTapers(now: now, zone: zone, in: db)
        try materialize(now: now, zone: zone, settled: &settled, caughtUp: &caughtUp, in: db)
        try summarizeStale(now: now, caughtUp: &caughtUp, settled: &settled, in: db)
        try planRepeats(now: now, repeats: repeats, settled: &settled, in: db)
        if !caughtUp.isEmpty { settled.summaryID = try scheduleSummary(caughtUp, now: now, zone: zone, in: db) }
        settled.nextTell = try planTells(now: now, in: db)
        let nextCursor = try Int64.fetchOne(
            db,
            sql: """
                SELECT min(s.cursor_us) FROM dose_schedule s JOIN medication m ON m.id = s.medication_id
                WHERE s.enabled = 1 AND s.frequency != 'as-needed' AND m.active = 1
                """
        )
        let nextMissed = try Int64.fetchOne(db, sql: "SELECT min(missed_us) FROM dose WHERE status = 'pending' AND answered = 0")
        let nextInStore = [nextCursor, nextMissed, taperEnd?.micros].compactMap { $0 }.map(Date.init(micros:))
        settled.nextCheck = (nextInStore + [settled.nextTell].compactMap { $0 }).min()
        return settled
    }

    /// A taper that stops ends its medication: deactivated once its last day is over and none
    /// of its doses is still open (answered or missed). Returns when the next one ends.
    static func endTapers(now: Date, zone: TimeZone, in db: Database) throws -> Date? {
        let today = CivilDay.of(now, in: zone)
        var next: Date?
        for row in try Row.fetchAll(
            db,
            sql: "SELECT id, end_day FROM medication WHERE active = 1 AND taper LIKE '%stop' AND end_day IS NOT NULL"
        ) {
            let id: Int64 = row[0]
            let last: Int = row[1]
            let open = try Bool.fetchOne(
                db,
                sql: "SELECT EXISTS (SELECT 1 FROM dose WHERE medication_id = ? AND status = 'pending' AND answered = 0)",
                arguments: [id]
            )
            if last < today, open == false {
                try db.execute(sql: "UPDATE medication SET active = 0 WHERE id = ?", arguments: [id])
                try remakeFutureDoses(of: id, now: now, in: db)
            } else if last >= today {
                let end = ZoneMath.resolve(CivilDateTime(dayNumber: last + 1, time: .midnight), in: zone).instant
                next = min(next ?? end, end)
            }
        }
        return next
    }

    /// A dose that fell due while nothing ran, for the summary.
    struct CaughtUp {
        var doseID: Int64
        var label: String
        var scheduled: Date
        var zone: TimeZone
        var missed: Bool
    }

    /// Floating schedules follow the system zone (travel): a future dose made in another zone is
    /// made again in this one.
    static func followSystemZone(_ zone: TimeZone, now: Date, in db: Database) throws {
        let moved = try Row.fetchAll(
            db,
            sql: """
                SELECT d.id, d.occurrence, d.schedule_id FROM dose d JOIN dose_schedule s ON s.id = d.schedule_id
                WHERE d.status = 'pending' AND d.scheduled_us > ? AND s.zone IS NULL AND d.zone != ? AND d.snoozed_us IS NULL
                """,
            arguments: [now.micros, zone.identifier]
        )
        for row in moved {
            try removeFutureDose(id: row[0], occurrence: row[1], scheduleID: row[2], now: now, in: db)
        }
    }

    /// Deletes a future dose (never alerted) and its alert, and lets its schedule make it again from `now`.
    static func removeFutureDose(id: Int64, occurrence: String?, scheduleID: Int64?, now: Date, in db: Database) throws {
        try db.execute(sql: "DELETE FROM dose WHERE id = ?", arguments: [id])
        if let occurrence { _ = try ReminderStore.cancel(id: occurrence, at: now.micros, in: db) }
        if let scheduleID {
            try db.execute(
                sql: "UPDATE dose_schedule SET cursor_us = min(cursor_us, ?) WHERE id = ?",
                arguments: [now.micros, scheduleID]
            )
        }
    }

    /// Makes each enabled schedule's occurrences into doses, up to its first one after `now`.
    static func materialize(
        now: Date,
        zone systemZone: TimeZone,
        settled: inout Settled,
        caughtUp: inout [CaughtUp],
        in db: Database
    ) throws {
        let due = try Int64.fetchAll(
            db,
            sql: """
                SELECT s.id FROM dose_schedule s JOIN medication m ON m.id = s.medication_id
                WHERE s.enabled = 1 AND s.frequency != 'as-needed' AND m.active = 1 AND s.cursor_us <= ?
                """,
            arguments: [now.micros]
        )
        guard !due.isEmpty else { return }
        let insert = try db.cachedStatement(
            sql: """
                INSERT INTO dose (medication_id, schedule_id, occurrence, scheduled_us, zone, status, overdue_us, missed_us,
                                  auto_missed, summarized, updated_us, amount)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (occurrence) DO NOTHING
                """
        )
        for scheduleID in due {
            guard let schedule = try fetchSchedule(id: scheduleID, in: db),
                let medication = try fetchMedication(id: schedule.medicationID, in: db),
                let cursorMicros = try Int64.fetchOne(db, sql: "SELECT cursor_us FROM dose_schedule WHERE id = ?", arguments: [scheduleID])
            else { continue }
            let grace = TimeInterval(medication.grace)
            let body = alertBody(instructions: medication.instructions)
            // The next dose of any of the medication's schedules ends a dose's window.
            let siblings = try schedules(of: medication.id, in: db).filter(\.isEnabled)
            var cursor = Date(micros: cursorMicros)
            var finished = false
            // An after-last schedule: its one next dose, then nothing until an answer wakes it.
            var afterLast = schedule.afterLast != nil
            while true {
                // The same expansion as `chime med next` (start and end dates, DST, zones).
                let next: PlannedDose?
                if afterLast {
                    afterLast = false
                    finished = true
                    next = try afterLastDue(schedule, of: medication, zone: systemZone, in: db).flatMap { due in
                        try coming(schedule, of: medication, after: due.addingTimeInterval(-0.000_001), count: 1, zone: systemZone, in: db)
                            .first
                    }
                } else {
                    next = schedule.afterLast == nil ? plan(schedule, of: medication, after: cursor, count: 1, zone: systemZone).first : nil
                }
                guard let planned = next else {
                    finished = true
                    break
                }
                let due = planned.due
                cursor = due
                let nextSibling = nextDose(of: siblings, medication: medication, after: due, zone: systemZone)
                let missedAt = min(due.addingTimeInterval(TimeInterval(medication.missedAfter)), nextSibling ?? .distantFuture)
                let isMissed = due <= now && now >= missedAt
                let isStale = due <= now && !isMissed && now.timeIntervalSince(due) > grace
                // A taper's amount of the dose's day (its label and title say it).
                let dayAmount = medication.taper == nil ? nil : planned.amount
                let title = medication.on(day: CivilDay.of(due, in: planned.zone)).alertTitle
                try insert.execute(arguments: [
                    medication.id, scheduleID, planned.occurrence, due.micros, planned.zone.identifier, isMissed ? "missed" : "pending",
                    due.addingTimeInterval(grace).micros, missedAt.micros, isMissed, isStale, now.micros, dayAmount,
                ])
                if db.changesCount > 0 {
                    settled.created += 1
                    let doseID = db.lastInsertedRowID
                    if isMissed || isStale {
                        caughtUp.append(
                            CaughtUp(doseID: doseID, label: planned.label, scheduled: due, zone: planned.zone, missed: isMissed)
                        )
                        if isMissed { settled.missed.append(doseID) } else { settled.summarized.append(doseID) }
                    } else {
                        // Due now or later (within its grace window when late): its own alert.
                        try ReminderStore.scheduleOnce(
                            NewReminder(id: planned.occurrence, title: title, body: body, trigger: .once(due), kind: kind),
                            now: now,
                            in: db
                        )
                    }
                }
                if due > now { break }
            }
            // A finished schedule (past its medication's end date) is not looked at again.
            try db.execute(
                sql: "UPDATE dose_schedule SET cursor_us = ? WHERE id = ?",
                arguments: [finished ? Int64.max : cursor.micros, scheduleID]
            )
        }
    }

    /// The first dose after `instant` of any of `schedules` (their days, start and end dates
    /// included): it ends the window of a dose due at `instant`.
    static func nextDose(of schedules: [DoseSchedule], medication: Medication, after instant: Date, zone: TimeZone) -> Date? {
        schedules.compactMap { plan($0, of: medication, after: instant, count: 1, zone: zone).first?.due }.min()
    }

    /// Alerts that were due while nothing ran (still pending, more than the grace window ago)
    /// are not shown late one by one: cancelled, and their doses go in the summary.
    static func summarizeStale(now: Date, caughtUp: inout [CaughtUp], settled: inout Settled, in db: Database) throws {
        let stale = try Row.fetchAll(
            db,
            sql: """
                SELECT d.id, d.occurrence, d.scheduled_us, d.zone, m.name, coalesce(d.amount, m.amount), m.unit, m.grace_s
                FROM dose d JOIN medication m ON m.id = d.medication_id
                WHERE d.status = 'pending' AND d.summarized = 0 AND d.scheduled_us <= ? AND d.occurrence IS NOT NULL
                """,
            arguments: [now.micros]
        )
        for row in stale {
            // Its alert still pending, and due more than the grace window ago.
            guard let due = try ReminderStore.pendingDue(id: row[1], kind: kind, in: db),
                due.micros + (row[7] as Int64) * 1_000_000 < now.micros
            else { continue }
            let doseID: Int64 = row[0]
            _ = try ReminderStore.cancel(id: row[1], at: now.micros, in: db)
            try db.execute(sql: "UPDATE dose SET summarized = 1, updated_us = ? WHERE id = ?", arguments: [now.micros, doseID])
            let zone = TimeZone(identifier: row[3]) ?? .current
            let label = Medication(name: row[4], amount: row[5], unit: row[6]).label
            caughtUp.append(CaughtUp(doseID: doseID, label: label, scheduled: Date(micros: row[2]), zone: zone, missed: false))
            settled.summarized.append(doseID)
        }
    }

    /// An alert shown and not answered is shown again (same id: updated in place) every 15
    /// minutes, at most 3 times, within the dose's window. A person who cancelled the alert
    /// (`chime cancel med-…`) stops the repeats.
    static func planRepeats(now: Date, repeats: DoseRepeats, settled: inout Settled, in db: Database) throws {
        let open = try Row.fetchAll(
            db,
            sql: """
                SELECT d.occurrence, d.scheduled_us, d.missed_us, d.snoozed_us, d.zone, m.name, coalesce(d.amount, m.amount), m.unit,
                    m.instructions
                FROM dose d JOIN medication m ON m.id = d.medication_id
                WHERE d.status = 'pending' AND d.summarized = 0 AND d.scheduled_us <= ? AND d.occurrence IS NOT NULL
                """,
            arguments: [now.micros]
        )
        for row in open {
            let id: String = row[0]
            // In flight (pending, or recorded and not yet posted), or stopped by a person.
            guard try ReminderStore.isDelivered(id: id, kind: kind, in: db) else { continue }
            let snoozedMicros: Int64? = row[3]
            let shown = try ReminderStore.timesShown(id: id, kind: kind, since: snoozedMicros.map(Date.init(micros:)), in: db)
            guard shown.count > 0, shown.count <= repeats.count, let lastPosted = shown.last else { continue }
            let next = lastPosted.addingTimeInterval(TimeInterval(repeats.interval))
            guard next.micros < row[2] as Int64 else { continue }
            let zone = TimeZone(identifier: row[4]) ?? .current
            let medication = Medication(name: row[5], amount: row[6], unit: row[7])
            let scheduled = Date(micros: row[1])
            let body = alertBody(instructions: row[8]) + "\nDue at \(TimeText.clock(scheduled, in: zone))"
            // "Zinc 25 mg (repeat 1 of 3)": which showing this is, after the first (or the snooze's).
            let which = "repeat \(shown.count) of \(repeats.count)"
            let title = medication.alertTitle + (snoozedMicros == nil ? " (\(which))" : " (snoozed, \(which))")
            try ReminderStore.scheduleOnce(
                NewReminder(id: id, title: title, body: body, trigger: .once(next), kind: kind),
                now: now,
                in: db
            )
            settled.repeats.append(id)
        }
    }

    /// One alert for the doses that fell due while nothing ran.
    static func scheduleSummary(_ doses: [CaughtUp], now: Date, zone: TimeZone, in db: Database) throws -> String {
        let sorted = doses.sorted { $0.scheduled < $1.scheduled }
        var lines = ["While Chime was not running, \(sorted.count) dose\(sorted.count == 1 ? "" : "s") fell due:"]
        for dose in sorted.prefix(10) {
            let when = TimeText.local(dose.scheduled, in: dose.zone)
            lines.append(
                dose.missed ? "• \(dose.label), \(when): missed" : "• \(dose.label), \(when): overdue, 'chime dose take \(dose.doseID)'"
            )
        }
        if sorted.count > 10 { lines.append("… and \(sorted.count - 10) more: 'chime doses --last 7d'") }
        let local = ZoneMath.civil(now, in: zone).local
        let id =
            DoseOccurrenceID.make(scheduleID: 0, local: local).replacingOccurrences(of: "med-0-", with: "med-summary-")
            + String(format: "%02d", local.second)
        try ReminderStore.scheduleOnce(
            NewReminder(id: id, title: alertTitle, body: lines.joined(separator: "\n"), trigger: .once(now), kind: kind),
            now: now,
            in: db
        )
        return id
    }

    /// The seed's "Medication Reminder" (the title names the medication), and the
    /// instructions on the next line, when set.
    static func alertBody(instructions: String) -> String {
        instructions.isEmpty ? alertTitle : alertTitle + "\n" + instructions
    }
}

extension Medication {
    /// A medication with only what its label needs (for texts built inside a transaction).
    init(name: String, amount: Double, unit: String) {
        self.init(
            id: 0,
            name: name,
            amount: amount,
            unit: unit,
            instructions: "",
            prescribedBy: "",
            startDay: 0,
            endDay: nil,
            isActive: true,
            grace: DoseRules.defaultGrace,
            missedAfter: DoseRules.defaultMissedAfter,
            stock: nil,
            refillDays: DoseRules.defaultRefillDays,
            createdAt: Date(timeIntervalSince1970: 0)
        )
    }
}

import ChimeCore
import ChimeStore
import Foundation
import GRDB

/// What a person does with a dose.
public enum DoseAnswer: String, Sendable, Hashable, CaseIterable {
    case take, skip, miss, reset

    var status: DoseStatus {
        switch self {
        case .take: .taken
        case .skip: .skipped
        case .miss: .missed
        case .reset: .pending
        }
    }
}

/// Which dose a command means.
public enum DoseReference: Sendable, Hashable {
    /// A dose's number (`chime doses` shows it).
    case id(Int64)
    /// An alert's identifier, `med-3-20261122-0800`.
    case occurrence(String)
    /// The medication's dose due now (or, for an as-needed medication, a new dose).
    case medication(String)
    /// The one dose due now, of any medication.
    case due

    /// A number, an occurrence id, else a medication name.
    public static func parse(_ text: String) -> DoseReference {
        if let id = Int64(text), id > 0 { return .id(id) }
        if DoseOccurrenceID.matches(text) { return .occurrence(text) }
        return .medication(text)
    }
}

/// The outcome of answering a dose.
public struct AnsweredDose: Sendable, Hashable {
    public var entry: DoseEntry
    public var previous: DoseStatus?
    /// As needed: taken sooner than the medication's minimum interval.
    public var warning: String?
    /// The stock fell to its refill threshold: a refill reminder was scheduled.
    public var refill: String?
}

extension DoseBook {
    /// Marks a dose taken, skipped or missed, or resets it to pending, with optional notes; its
    /// alert (and any repeat) is cancelled. Taking a dose of an as-needed medication by name logs
    /// a new dose, with a warning when it comes sooner than the minimum interval.
    ///
    /// - Throws: `.notFound` (no such dose or medication), `.conflict` (already in that status;
    ///   several doses due and none named), `.usage` (notes too long).
    public func answer(_ answer: DoseAnswer, _ reference: DoseReference, notes: String? = nil) throws(ChimeError) -> AnsweredDose {
        if let notes, notes.count > 500 {
            throw ChimeError(.usage, "invalid notes '\(notes.prefix(40))…': expected at most 500 characters")
        }
        if let notes { try UserText.check(notes, field: "notes", limit: 500) }
        let now = clock.now()
        let zone = systemZone()
        let repeats = repeats
        return try store.write { db in
            try Self.settle(now: now, zone: zone, repeats: repeats, in: db)
            if answer == .take, case .medication(let name) = reference, let medication = try Self.findMedication(name, in: db) {
                if let schedule = try Self.asNeededSchedule(of: medication.id, in: db) {
                    try Self.checkMaximum(of: medication, now: now, zone: zone, in: db)
                    return try Self.logAsNeeded(medication, schedule: schedule, notes: notes, now: now, zone: zone, in: db)
                }
                // After-last with no dose due (before the first, or after one missed): a dose taken
                // now, logged (outside adherence, as an as-needed one); the next comes from it.
                if let schedule = try Self.afterLastSchedule(of: medication.id, in: db),
                    try Self.dueDoses(medicationID: medication.id, now: now, in: db).isEmpty
                {
                    try Self.checkMaximum(of: medication, now: now, zone: zone, in: db)
                    let logged = try Self.logAsNeeded(medication, schedule: schedule, notes: notes, now: now, zone: zone, in: db)
                    try Self.wakeAfterLast(medication.id, now: now, zone: zone, repeats: repeats, in: db)
                    return logged
                }
            }
            let dose = try Self.resolve(reference, for: answer, now: now, zone: zone, in: db)
            if answer == .take, dose.dose.status != .taken, let medication = try Self.fetchMedication(id: dose.dose.medicationID, in: db) {
                try Self.checkMaximum(of: medication, now: now, zone: zone, in: db)
            }
            let answered = try Self.apply(answer, to: dose, notes: notes, now: now, in: db)
            try Self.wakeAfterLast(dose.dose.medicationID, now: now, zone: zone, repeats: repeats, in: db)
            return answered
        }
    }

    /// Snoozes a due dose: its alert comes again in `minutes` (10 by default), titled with the
    /// dose and "(snoozed)" ("Aspirin 100 mg (snoozed)"), and is repeated from there while unanswered.
    public func snooze(_ reference: DoseReference, minutes: Int = DoseRules.snoozeMinutes) throws(ChimeError) -> DoseEntry {
        guard (1...240).contains(minutes) else {
            throw ChimeError.invalid("minutes", String(minutes), expected: "a whole number of minutes from 1 to 240 (default 10)")
        }
        let now = clock.now()
        let zone = systemZone()
        return try store.write { db in
            try Self.settle(now: now, zone: zone, repeats: repeats, in: db)
            let entry = try Self.resolve(reference, now: now, zone: zone, in: db)
            return try Self.snooze(entry, minutes: minutes, now: now, in: db)
        }
    }

    /// The dose whose alert is `occurrence` (`med-3-20261122-0800`), or nil.
    public func entry(occurrence: String) throws(ChimeError) -> DoseEntry? {
        try store.read { db in try Self.entry(where: "d.occurrence = ?", [occurrence], in: db) }
    }

    /// The doses a command without a dose could mean: due (or within their grace window ahead)
    /// and pending, newest first.
    public func dueDoses() throws(ChimeError) -> [DoseEntry] {
        let now = clock.now()
        let zone = systemZone()
        return try store.write { db in
            try Self.settle(now: now, zone: zone, repeats: repeats, in: db)
            return try Self.dueDoses(medicationID: nil, now: now, in: db)
        }
    }

    // MARK: - In a transaction

    /// The enabled after-last schedule of a medication, if it has one.
    static func afterLastSchedule(of medicationID: Int64, in db: Database) throws -> DoseSchedule? {
        try Row.fetchOne(
            db,
            sql:
                "SELECT * FROM dose_schedule WHERE medication_id = ? AND enabled = 1 AND after_last_s IS NOT NULL ORDER BY id DESC LIMIT 1",
            arguments: [medicationID]
        ).map(schedule(from:))
    }

    /// After an answer, an after-last schedule makes its next dose (and its alert) at once.
    static func wakeAfterLast(_ medicationID: Int64, now: Date, zone: TimeZone, repeats: DoseRepeats, in db: Database) throws {
        try db.execute(
            sql: "UPDATE dose_schedule SET cursor_us = ? WHERE medication_id = ? AND enabled = 1 AND after_last_s IS NOT NULL",
            arguments: [now.micros, medicationID]
        )
        if db.changesCount > 0 { try settle(now: now, zone: zone, repeats: repeats, in: db) }
    }

    /// A daily maximum (`--max 4/day`): at most that many doses taken in any 24 hours (a rolling
    /// window, as a label's "no more than 4 in 24 hours" means). - Throws: `.conflict` (exit 4)
    /// with when the next is allowed.
    static func checkMaximum(of medication: Medication, now: Date, zone: TimeZone, in db: Database) throws {
        guard
            let maximum = try Int.fetchOne(
                db,
                sql: "SELECT max_per_day FROM dose_schedule WHERE medication_id = ? AND enabled = 1 AND max_per_day IS NOT NULL",
                arguments: [medication.id]
            )
        else { return }
        let taken = try Int64.fetchAll(
            db,
            sql: "SELECT taken_us FROM dose WHERE medication_id = ? AND status = 'taken' AND taken_us > ? ORDER BY taken_us",
            arguments: [medication.id, now.addingTimeInterval(-86_400).micros]
        ).map(Date.init(micros:))
        guard taken.count >= maximum else { return }
        let allowed = taken[taken.count - maximum].addingTimeInterval(86_400)
        throw ChimeError(
            .conflict,
            "\(medication.name) is at its maximum of \(maximum) in 24 hours: \(taken.count) taken since "
                + "\(nearClock(taken[0], now: now, zone: zone)); the next is allowed \(nearClock(allowed, now: now, zone: zone, at: true))"
        )
    }

    /// `14:30`, `yesterday 14:30`, `tomorrow 14:30` (with `at`: `at 14:30`, `tomorrow at 14:30`), else the date and time.
    static func nearClock(_ date: Date, now: Date, zone: TimeZone, at: Bool = false) -> String {
        let time = TimeText.clock(date, in: zone)
        let prefix = at ? "at " : ""
        switch CivilDay.of(date, in: zone) - CivilDay.of(now, in: zone) {
        case 0: return prefix + time
        case -1: return "yesterday " + prefix + time
        case 1: return "tomorrow " + prefix + time
        default: return prefix + TimeText.local(date, in: zone)
        }
    }

    static func snooze(_ entry: DoseEntry, minutes: Int, now: Date, in db: Database) throws -> DoseEntry {
        let dose = entry.dose
        guard dose.status == .pending else {
            throw ChimeError(
                .conflict,
                "dose \(dose.id) (\(describe(entry))) is \(dose.status.rawValue): only a pending dose can be snoozed"
            )
        }
        guard let occurrence = dose.occurrence else {
            throw ChimeError(.conflict, "dose \(dose.id) has no alert to snooze")
        }
        if dose.scheduled > now {
            throw ChimeError(.conflict, "dose \(dose.id) (\(describe(entry))) is not due yet: nothing to snooze")
        }
        let until = now.addingTimeInterval(TimeInterval(minutes * 60))
        try db.execute(
            sql: "UPDATE dose SET snoozed_us = ?, snooze_until_us = ?, summarized = 0, updated_us = ? WHERE id = ?",
            arguments: [now.micros, until.micros, now.micros, dose.id]
        )
        let instructions =
            try String.fetchOne(db, sql: "SELECT instructions FROM medication WHERE id = ?", arguments: [dose.medicationID]) ?? ""
        let body = alertBody(instructions: instructions) + "\nDue at \(TimeText.clock(dose.scheduled, in: dose.timeZone))"
        try ReminderStore.scheduleOnce(
            NewReminder(id: occurrence, title: entry.title + " (snoozed)", body: body, trigger: .once(until), kind: kind),
            now: now,
            in: db
        )
        return try entryFor(id: dose.id, in: db)
    }

    static func apply(_ answer: DoseAnswer, to entry: DoseEntry, notes: String?, now: Date, in db: Database) throws -> AnsweredDose {
        let dose = entry.dose
        let status = answer.status
        if dose.status == status {
            var text = "dose \(dose.id) (\(describe(entry))) is already \(status.rawValue)"
            if status == .taken, let taken = dose.takenAt { text += " (at \(TimeText.clock(taken, in: dose.timeZone)))" }
            throw ChimeError(.conflict, text + ": 'chime dose reset \(dose.id)' first to change it")
        }
        // Taken or missed ahead of time would be a false record; a dose may be skipped ahead.
        if answer == .take || answer == .miss {
            let grace = try Int.fetchOne(db, sql: "SELECT grace_s FROM medication WHERE id = ?", arguments: [dose.medicationID]) ?? 0
            if dose.scheduled.timeIntervalSince(now) > TimeInterval(grace) {
                throw ChimeError(
                    .conflict,
                    "dose \(dose.id) (\(describe(entry))) is not due yet: it can be taken from \(TimeText.clock(dose.scheduled.addingTimeInterval(-TimeInterval(grace)), in: dose.timeZone)) (or skipped now)"
                )
            }
        }
        try db.execute(
            sql: """
                UPDATE dose SET status = ?, taken_us = ?, notes = coalesce(?, notes), answered = 1, auto_missed = 0, updated_us = ?
                WHERE id = ?
                """,
            arguments: [status.rawValue, status == .taken ? now.micros : nil, notes, now.micros, dose.id]
        )
        if status != .pending {
            let event = hookEvent(
                "dose.\(status.rawValue)",
                doseID: dose.id,
                title: entry.title,
                medication: entry.medicationName,
                scheduled: dose.scheduled
            )
            try ReminderStore.recordHook(event, at: now, in: db)
        }
        if status != .pending, let occurrence = dose.occurrence {
            _ = try ReminderStore.cancel(id: occurrence, at: now.micros, in: db)
        } else if let occurrence = dose.occurrence, dose.scheduled > now {
            // A dose skipped ahead of its time and reset: its alert comes at its time again.
            let instructions =
                try String.fetchOne(db, sql: "SELECT instructions FROM medication WHERE id = ?", arguments: [dose.medicationID]) ?? ""
            try ReminderStore.scheduleOnce(
                NewReminder(
                    id: occurrence,
                    title: entry.title,
                    body: alertBody(instructions: instructions),
                    trigger: .once(dose.scheduled),
                    kind: kind
                ),
                now: now,
                in: db
            )
        }
        var refill: String?
        if status == .taken {
            refill = try takeFromStock(dose.medicationID, now: now, in: db)
        } else if dose.status == .taken {
            try db.execute(
                sql: "UPDATE medication SET stock = stock + 1 WHERE id = ? AND stock IS NOT NULL",
                arguments: [dose.medicationID]
            )
        }
        return AnsweredDose(entry: try entryFor(id: dose.id, in: db), previous: dose.status, refill: refill)
    }

    /// An as-needed dose, logged as taken now; a warning when it comes sooner than the minimum interval.
    static func logAsNeeded(
        _ medication: Medication,
        schedule: DoseSchedule,
        notes: String?,
        now: Date,
        zone: TimeZone,
        in db: Database
    ) throws -> AnsweredDose {
        var warning: String?
        if let interval = schedule.minInterval,
            let last = try Int64.fetchOne(
                db,
                sql: "SELECT max(taken_us) FROM dose WHERE medication_id = ? AND status = 'taken'",
                arguments: [medication.id]
            ).map(Date.init(micros:)),
            now.timeIntervalSince(last) < TimeInterval(interval)
        {
            let since = Duration.seconds(max(1, Int64(now.timeIntervalSince(last))))
            let nextSafe = last.addingTimeInterval(TimeInterval(interval))
            warning =
                "\(medication.name) was last taken \(formatDuration(since)) ago, sooner than its minimum interval of "
                + "\(Trigger.formatInterval(Int64(interval))) (next from \(TimeText.clock(nextSafe, in: zone)))"
        }
        let today = CivilDay.of(now, in: zone)
        try db.execute(
            sql: """
                INSERT INTO dose (medication_id, schedule_id, scheduled_us, zone, status, taken_us, notes, overdue_us, missed_us,
                                  answered, as_needed, updated_us, amount)
                VALUES (?1, ?2, ?3, ?4, 'taken', ?3, ?5, ?3, ?3, 1, 1, ?3, ?6)
                """,
            arguments: [
                medication.id, schedule.id, now.micros, zone.identifier, notes ?? "",
                medication.taper == nil ? nil : medication.on(day: today).amount,
            ]
        )
        let id = db.lastInsertedRowID
        let title = medication.on(day: today).alertTitle
        let event = hookEvent("dose.taken", doseID: id, title: title, medication: medication.name, scheduled: now)
        try ReminderStore.recordHook(event, at: now, in: db)
        let refill = try takeFromStock(medication.id, now: now, in: db)
        return AnsweredDose(entry: try entryFor(id: id, in: db), previous: nil, warning: warning, refill: refill)
    }

    /// One dose taken from the medication's stock, when counted; at the refill threshold a
    /// refill reminder is scheduled (once, until the stock is set again or refilled).
    static func takeFromStock(_ medicationID: Int64, now: Date, in db: Database) throws -> String? {
        try db.execute(sql: "UPDATE medication SET stock = max(stock - 1, 0) WHERE id = ? AND stock IS NOT NULL", arguments: [medicationID])
        guard let medication = try fetchMedication(id: medicationID, in: db), let stock = medication.stock,
            try Bool.fetchOne(db, sql: "SELECT refill_alerted FROM medication WHERE id = ?", arguments: [medicationID]) == false
        else { return nil }
        let perDay = try schedules(of: medicationID, in: db).filter(\.isEnabled).map(\.dosesPerDay).reduce(0, +)
        let daysLeft = perDay > 0 ? Double(stock) / perDay : nil
        guard MedicationDetail.isLow(stock: stock, dosesPerDay: perDay, refillDays: medication.refillDays) else { return nil }
        let text: String
        if stock == 0 {
            text = "\(medication.name) has run out: refill it, then 'chime med refill \(medication.id) N'"
        } else {
            let days = Int(daysLeft!.rounded(.down))
            text =
                "\(stock) dose\(stock == 1 ? "" : "s") of \(medication.name) left, about \(days) day\(days == 1 ? "" : "s"): time to refill"
        }
        try db.execute(sql: "UPDATE medication SET refill_alerted = 1 WHERE id = ?", arguments: [medicationID])
        try ReminderStore.scheduleOnce(
            NewReminder(id: "refill-\(medicationID)", title: "Refill \(medication.name)", body: text, trigger: .once(now), kind: kind),
            now: now,
            in: db
        )
        return text
    }

    /// The dose `reference` names.
    ///
    /// - An alert id names a dose made already, or one its schedule will make (every id
    ///   `chime med next` shows): that dose is made now, without an alert of its own, so that it
    ///   can be skipped ahead of time (when it falls due, the schedule finds it made).
    /// - A medication's name names its dose due now; to take (`answer` `.take`), when none is
    ///   due, its latest dose already due when that one is missed: a dose taken late, after its
    ///   window, as `take NUMBER` takes it. Only the latest: once the next dose falls due, the
    ///   missed one is named by its number.
    static func resolve(
        _ reference: DoseReference,
        for answer: DoseAnswer? = nil,
        now: Date,
        zone: TimeZone,
        in db: Database
    ) throws -> DoseEntry {
        switch reference {
        case .id(let id):
            guard let entry = try entry(where: "d.id = ?", [id], in: db) else {
                throw ChimeError(.notFound, "no dose has the number \(id): see 'chime doses'")
            }
            return entry
        case .occurrence(let occurrence):
            if let entry = try entry(where: "d.occurrence = ?", [occurrence], in: db) { return entry }
            if let entry = try makePlannedDose(occurrence, now: now, zone: zone, in: db) { return entry }
            throw ChimeError(.notFound, "no dose has the alert id '\(occurrence)': see 'chime doses' and 'chime med next'")
        case .medication(let name):
            guard let medication = try findMedication(name, in: db) else { throw try medicationNotFound(name, in: db) }
            let due = try dueDoses(medicationID: medication.id, now: now, in: db)
            if let first = due.first { return first }
            if answer == .take, let latest = try latestDueDose(medicationID: medication.id, now: now, in: db), latest.dose.status == .missed
            {
                return latest
            }
            throw ChimeError(.notFound, "no dose of \(medication.name) is due: see 'chime doses --med \(medication.name)'")
        case .due:
            let due = try dueDoses(medicationID: nil, now: now, in: db)
            guard let first = due.first else {
                throw ChimeError(.notFound, "no dose is due: name one ('chime dose take 12'); see 'chime doses'")
            }
            if due.count > 1 {
                let names = due.prefix(5).map { "\($0.dose.id) (\(describe($0)))" }.joined(separator: ", ")
                throw ChimeError(.conflict, "\(due.count) doses are due: \(names): name one, such as 'chime dose take \(first.dose.id)'")
            }
            return first
        }
    }

    /// A medication's scheduled dose due most recently (not after `now`), whatever its status.
    static func latestDueDose(medicationID: Int64, now: Date, in db: Database) throws -> DoseEntry? {
        try entries(
            where: "d.medication_id = ?1 AND d.as_needed = 0 AND d.scheduled_us <= ?2",
            [medicationID, now.micros],
            order: "d.scheduled_us DESC",
            limit: 1,
            in: db
        ).first
    }

    /// The dose of `occurrence` when its schedule (enabled, of an active medication) makes it
    /// among its next 500 (as far as `chime med next` looks), made now as the schedule would
    /// make it, without an alert; nil when no schedule makes it.
    static func makePlannedDose(_ occurrence: String, now: Date, zone: TimeZone, in db: Database) throws -> DoseEntry? {
        let parts = occurrence.split(separator: "-")
        guard DoseOccurrenceID.matches(occurrence), let scheduleID = Int64(parts[1]),
            let schedule = try fetchSchedule(id: scheduleID, in: db), schedule.isEnabled,
            let medication = try fetchMedication(id: schedule.medicationID, in: db), medication.isActive,
            let planned = plan(schedule, of: medication, after: now, count: 500, zone: zone).first(where: { $0.occurrence == occurrence })
        else { return nil }
        // Its window, as `materialize` sets it: the next dose of any of its medication's schedules ends it.
        let siblings = try schedules(of: medication.id, in: db).filter(\.isEnabled)
        let nextSibling = nextDose(of: siblings, medication: medication, after: planned.due, zone: zone)
        let missedAt = min(planned.due.addingTimeInterval(TimeInterval(medication.missedAfter)), nextSibling ?? .distantFuture)
        try db.execute(
            sql: """
                INSERT INTO dose (medication_id, schedule_id, occurrence, scheduled_us, zone, status, overdue_us, missed_us,
                                  auto_missed, summarized, updated_us, amount)
                VALUES (?, ?, ?, ?, ?, 'pending', ?, ?, 0, 0, ?, ?)
                """,
            arguments: [
                medication.id, scheduleID, occurrence, planned.due.micros, planned.zone.identifier,
                planned.due.addingTimeInterval(TimeInterval(medication.grace)).micros, missedAt.micros, now.micros,
                medication.taper == nil ? nil : planned.amount,
            ]
        )
        return try entryFor(id: db.lastInsertedRowID, in: db)
    }

    /// Pending doses due now, or within their grace window ahead (taken a little early), newest first.
    static func dueDoses(medicationID: Int64?, now: Date, in db: Database) throws -> [DoseEntry] {
        try entries(
            where: """
                d.status = 'pending' AND d.scheduled_us <= ?1 + (SELECT grace_s FROM medication WHERE id = d.medication_id) * 1000000
                AND (?2 IS NULL OR d.medication_id = ?2)
                """,
            [now.micros, medicationID],
            order: "d.scheduled_us DESC",
            in: db
        )
    }

    /// "Aspirin (100 mg), Sun 2026-11-22 08:00".
    static func describe(_ entry: DoseEntry) -> String {
        "\(entry.label), \(TimeText.local(entry.dose.scheduled, in: entry.dose.timeZone))"
    }

    static let entryColumns = Dose.columns + ", m.name, coalesce(d.amount, m.amount), m.unit"

    static func entries(
        where condition: String,
        _ arguments: StatementArguments,
        order: String = "d.scheduled_us",
        limit: Int? = nil,
        in db: Database
    )
        throws -> [DoseEntry]
    {
        try Row.fetchAll(
            db,
            sql: """
                SELECT \(entryColumns) FROM dose d JOIN medication m ON m.id = d.medication_id
                WHERE \(condition) ORDER BY \(order) LIMIT \(limit ?? -1)
                """,
            arguments: arguments
        ).map(entry(from:))
    }

    static func entry(where condition: String, _ arguments: StatementArguments, in db: Database) throws -> DoseEntry? {
        try entries(where: condition, arguments, limit: 1, in: db).first
    }

    static func entryFor(id: Int64, in db: Database) throws -> DoseEntry {
        guard let entry = try entry(where: "d.id = ?", [id], in: db) else {
            throw ChimeError(.notFound, "no dose has the number \(id)")
        }
        return entry
    }

    static func entry(from row: Row) -> DoseEntry {
        let dose = Dose(row: row)
        let name: String = row[14]
        let medication = Medication(name: name, amount: row[15], unit: row[16])
        var entry = DoseEntry(dose: dose, medicationName: name, label: medication.label, title: medication.alertTitle)
        entry.amount = medication.amount
        return entry
    }
}

extension DoseBook {
    /// A dose's event for its hook (``HookEvent``): `CHIME_ID` its id, `CHIME_TITLE` its alert's
    /// title, `CHIME_DOSE_MEDICATION` the medication's name, `CHIME_DOSE_SCHEDULED` its time.
    static func hookEvent(_ name: String, doseID: Int64, title: String, medication: String, scheduled: Date) -> HookEvent {
        HookEvent(
            name,
            subject: String(doseID),
            environment: [
                "CHIME_TITLE": title, "CHIME_DOSE_MEDICATION": medication, "CHIME_DOSE_SCHEDULED": TimeText.iso(scheduled),
            ]
        )
    }
}

import ChimeCore
import ChimeStore
import Foundation
import GRDB

/// A medication with its schedules and when its next dose falls due.
public struct MedicationDetail: Sendable, Hashable {
    public var medication: Medication
    public var schedules: [DoseSchedule]
    /// The next dose time of its enabled schedules, when active.
    public var nextDose: Date?
    /// Who is told when a dose is not taken (``DoseBook/setTell(_:_:)``), or nil.
    public var tell: DoseTellRule? = nil
}

/// What deleting a medication takes with it.
public struct DeletionImpact: Sendable, Hashable {
    public var medication: Medication
    public var schedules: Int
    public var doses: Int
}

/// Changes to a medication; nil leaves a field as it is.
public struct MedicationChanges: Sendable, Hashable {
    public var name: String?
    public var amount: String?
    public var unit: String?
    public var instructions: String?
    public var prescribedBy: String?
    public var startDay: Int?
    /// `.some(nil)` clears the end date.
    public var endDay: Int??
    public var grace: Int?
    public var missedAfter: Int?
    /// `.some(nil)` stops counting.
    public var stock: Int??
    public var refillDays: Int?
    /// A new schedule replacing the enabled ones (their history stays).
    public var schedule: ScheduleDraft?
    /// `.some(taper)` sets a taper, `.some(nil)` removes it; an ``amount`` alone removes it too.
    public var taper: DoseTaper??
    /// A change to the enabled schedule: the fields it gives replace the schedule's, the others
    /// keep the values they have when the edit is written (merged inside its transaction).
    public var scheduleChange: ScheduleChange?

    public init() {}

    public var isEmpty: Bool { self == MedicationChanges() }
}

/// A medication after `chime med refill`: its stock now, and the count before.
public struct Refill: Sendable, Hashable {
    public var detail: MedicationDetail
    /// The doses added.
    public var added: Int
    /// The stock before.
    public var previous: Int
}

extension Refill {
    /// How many doses a refill may add at once.
    public static let counts = 1...100_000
    static let countExpected = "a whole number of doses from 1 to 100000, such as 30"

    /// The N of `chime med refill NAME N`: a whole number from 1 to 100,000 (not 0, -5, 2.5,
    /// 30x, or a number too large to count).
    /// - Throws: `.usage` naming the value.
    public static func count(_ text: String) throws(ChimeError) -> Int {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty, trimmed.utf8.count <= 6, trimmed.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
            let value = Int(trimmed), counts.contains(value)
        else { throw ChimeError.invalid("refill count", text, expected: countExpected) }
        return value
    }

    /// The refusal of a refill without N: Chime knows no box or pack size.
    public static func missingCount(_ reference: String) -> ChimeError {
        ChimeError(
            .usage,
            "missing N: how many doses the new box holds, such as 'chime med refill \(reference) 30' (Chime knows no box size)"
        )
    }
}

extension MedicationDetail {
    /// Doses a day at the enabled schedules' pace (0 when as needed only).
    public var dosesPerDay: Double { schedules.filter(\.isEnabled).map(\.dosesPerDay).reduce(0, +) }

    /// Whether the stock is at or below its refill threshold, the rule of the refill reminder:
    /// none left, or at most ``Medication/refillDays`` days of doses at the schedules' pace.
    /// False when the stock is not counted.
    public var isLowOnStock: Bool {
        guard let stock = medication.stock else { return false }
        return Self.isLow(stock: stock, dosesPerDay: dosesPerDay, refillDays: medication.refillDays)
    }

    /// The refill reminder's rule: `stock` is none, or lasts at most `refillDays` days.
    static func isLow(stock: Int, dosesPerDay: Double, refillDays: Int) -> Bool {
        stock == 0 || (dosesPerDay > 0 && Double(stock) / dosesPerDay <= Double(refillDays))
    }

    /// One line when the stock is at or below its refill threshold (for `med add`, `med edit`
    /// and `med refill`), else nil.
    public var lowStockWarning: String? {
        guard isLowOnStock, let stock = medication.stock else { return nil }
        let refill = "'chime med refill \(medication.id) N' adds a box"
        guard stock > 0 else { return "\(medication.name) has no doses in stock: \(refill)" }
        let doses = "\(stock) dose\(stock == 1 ? "" : "s")"
        let days = stockDaysLeft.map { ", about \($0) day\($0 == 1 ? "" : "s") left" } ?? ""
        return "\(medication.name) is low: \(doses)\(days), at or below its refill threshold of "
            + "\(medication.refillDays) day\(medication.refillDays == 1 ? "" : "s"): \(refill)"
    }
}

/// A dose the schedules will create: for `chime med next`.
public struct PlannedDose: Sendable, Hashable {
    public var medicationID: Int64
    public var medicationName: String
    /// One dose's amount and its unit.
    public var amount: Double
    public var unit: String
    public var label: String
    public var scheduleID: Int64
    public var due: Date
    public var zone: TimeZone
    /// Its alert's identifier, `med-{scheduleID}-{yyyyMMdd-HHmm}`.
    public var occurrence: String
    /// How the local time was read (shifted forward on a spring-forward day).
    public var resolution: LocalResolution
}

extension DoseBook {
    /// Adds a medication with its schedule (one transaction); its first dose is scheduled at once.
    /// - Throws: `.usage` naming the field and the rule; `.conflict` when the name is taken.
    public func addMedication(_ draft: MedicationDraft, schedule: ScheduleDraft) throws(ChimeError) -> MedicationDetail {
        let (checked, amount) = try draft.validated()
        let plan = try schedule.validated()
        let now = clock.now()
        let zone = systemZone()
        return try store.write { db in
            if let existing = try Self.findMedication(checked.name, in: db) {
                throw ChimeError(
                    .conflict,
                    "a medication named '\(existing.name)' exists already (number \(existing.id)): choose another name, or 'chime med edit \(existing.id)'"
                )
            }
            try db.execute(
                sql: """
                    INSERT INTO medication (name, amount, unit, instructions, prescribed_by, start_day, end_day, grace_s, missed_after_s,
                                            stock, refill_days, created_us)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    checked.name, amount, checked.unit, checked.instructions, checked.prescribedBy, checked.startDay, checked.endDay,
                    checked.grace, checked.missedAfter, checked.stock, checked.refillDays, now.micros,
                ]
            )
            let id = db.lastInsertedRowID
            if let taper = checked.taper {
                try db.execute(sql: "UPDATE medication SET taper = ? WHERE id = ?", arguments: [taper.stored, id])
            }
            try Self.insertSchedule(plan, medicationID: id, now: now, in: db)
            try Self.settle(now: now, zone: zone, repeats: repeats, in: db)
            return try Self.detail(id: id, now: now, zone: zone, in: db)
        }
    }

    /// Medications by name (case-insensitive), the seed's list: `search` matches part of the
    /// name; inactive ones only with `includeInactive`.
    public func medications(search: String? = nil, includeInactive: Bool = false) throws(ChimeError) -> [MedicationDetail] {
        let now = clock.now()
        let zone = systemZone()
        return try store.read { db in
            let pattern = search.map { "%" + $0.replacingOccurrences(of: "%", with: "").replacingOccurrences(of: "_", with: "") + "%" }
            return try Int64.fetchAll(
                db,
                sql: """
                    SELECT id FROM medication WHERE (?1 IS NULL OR name LIKE ?1) AND (?2 OR active = 1) ORDER BY name COLLATE NOCASE
                    """,
                arguments: [pattern, includeInactive]
            ).map { try Self.detail(id: $0, now: now, zone: zone, in: db) }
        }
    }

    /// The medication named by its number or its name (any case). - Throws: `.notFound`.
    public func medication(_ reference: String) throws(ChimeError) -> MedicationDetail {
        let now = clock.now()
        let zone = systemZone()
        return try store.read { db in
            guard let medication = try Self.findMedication(reference, in: db) else { throw try Self.medicationNotFound(reference, in: db) }
            return try Self.detail(id: medication.id, now: now, zone: zone, in: db)
        }
    }

    /// Edits a medication; the result is checked by the same rules as a new one. Its doses not
    /// yet due are made again (new texts, a new schedule); its history stays. A
    /// ``MedicationChanges/scheduleChange`` is merged over the enabled schedule inside the
    /// edit's transaction: two edits of different fields, run at once, both take effect.
    public func editMedication(_ reference: String, _ changes: MedicationChanges) throws(ChimeError) -> MedicationDetail {
        guard !changes.isEmpty else {
            throw ChimeError(.usage, "nothing to change: give at least one of --name, --amount, --unit, --at, --days, --stock …")
        }
        let given = try changes.schedule.map { schedule throws(ChimeError) in try schedule.validated() }
        let now = clock.now()
        let zone = systemZone()
        beforeEditWrite?()
        return try store.write { db in
            guard let current = try Self.findMedication(reference, in: db) else { throw try Self.medicationNotFound(reference, in: db) }
            // A schedule change is merged over the schedule as it is now, in this transaction,
            // so a change committed since the caller last read it is kept, not overwritten.
            let enabled = try Self.schedules(of: current.id, in: db).last(where: \.isEnabled)
            // A new start date alone moves the first day of an every-N-days or cycle rule with it.
            var change = changes.scheduleChange
            if change == nil, let startDay = changes.startDay, let rule = enabled?.dayRule, rule.anchor != startDay {
                change = ScheduleChange(anchorDay: startDay)
            }
            let plan = try given ?? change.map { change in try change.merged(over: enabled).validated() }
            // A taper given replaces the current one; an amount alone ends it (that amount every day).
            let taper = changes.taper ?? (changes.amount != nil ? nil : current.taper)
            var draft = MedicationDraft(
                name: changes.name ?? current.name,
                amount: changes.amount ?? (taper != nil ? "" : Medication.format(amount: current.amount)),
                unit: changes.unit ?? current.unit,
                startDay: changes.startDay ?? current.startDay
            )
            draft.taper = taper
            draft.instructions = changes.instructions ?? current.instructions
            draft.prescribedBy = changes.prescribedBy ?? current.prescribedBy
            draft.endDay = changes.endDay ?? current.endDay
            // The end a taper that stops set goes with it (a new taper sets its own).
            if changes.endDay == nil, let last = current.taper?.lastDay, last == current.endDay, taper != current.taper {
                draft.endDay = nil
            }
            draft.grace = changes.grace ?? current.grace
            draft.missedAfter = changes.missedAfter ?? current.missedAfter
            draft.stock = changes.stock ?? current.stock
            draft.refillDays = changes.refillDays ?? current.refillDays
            let (checked, amount) = try draft.validated()
            if let other = try Self.findMedication(checked.name, in: db), other.id != current.id {
                throw ChimeError(.conflict, "a medication named '\(other.name)' exists already (number \(other.id)): choose another name")
            }
            let stockChanged = changes.stock != nil
            try db.execute(sql: "UPDATE medication SET taper = ? WHERE id = ?", arguments: [checked.taper?.stored, current.id])
            try db.execute(
                sql: """
                    UPDATE medication SET name = ?, amount = ?, unit = ?, instructions = ?, prescribed_by = ?, start_day = ?, end_day = ?,
                        grace_s = ?, missed_after_s = ?, stock = ?, refill_days = ?,
                        refill_alerted = CASE WHEN ? THEN 0 ELSE refill_alerted END
                    WHERE id = ?
                    """,
                arguments: [
                    checked.name, amount, checked.unit, checked.instructions, checked.prescribedBy, checked.startDay, checked.endDay,
                    checked.grace, checked.missedAfter, checked.stock, checked.refillDays, stockChanged, current.id,
                ]
            )
            if let plan {
                try db.execute(sql: "UPDATE dose_schedule SET enabled = 0 WHERE medication_id = ? AND enabled = 1", arguments: [current.id])
                try Self.insertSchedule(plan, medicationID: current.id, now: now, in: db)
            }
            try Self.remakeFutureDoses(of: current.id, now: now, in: db)
            try Self.settle(now: now, zone: zone, repeats: repeats, in: db)
            return try Self.detail(id: current.id, now: now, zone: zone, in: db)
        }
    }

    /// Adds `count` doses (a new box) to a medication's stock; the refill reminder comes again
    /// when the stock next reaches its threshold (a pending one is cancelled).
    /// - Throws: `.usage` for a count out of ``Refill/counts`` or a stock too large to count;
    ///   `.notFound`; `.conflict` when the medication's stock is not counted.
    public func refill(_ reference: String, adding count: Int) throws(ChimeError) -> Refill {
        guard Refill.counts.contains(count) else { throw ChimeError.invalid("refill count", String(count), expected: Refill.countExpected) }
        let now = clock.now()
        let zone = systemZone()
        return try store.write { db in
            guard let medication = try Self.findMedication(reference, in: db) else { throw try Self.medicationNotFound(reference, in: db) }
            guard let previous = medication.stock else {
                throw ChimeError(
                    .conflict,
                    "\(medication.name)'s stock is not counted: start counting with 'chime med edit \(medication.id) --stock N'"
                )
            }
            let (total, overflow) = previous.addingReportingOverflow(count)
            guard !overflow else {
                throw ChimeError(.usage, "invalid refill count '\(count)': \(previous) + \(count) doses is too many to count")
            }
            try db.execute(sql: "UPDATE medication SET stock = ?, refill_alerted = 0 WHERE id = ?", arguments: [total, medication.id])
            _ = try ReminderStore.cancel(id: "refill-\(medication.id)", at: now.micros, in: db)
            return Refill(detail: try Self.detail(id: medication.id, now: now, zone: zone, in: db), added: count, previous: previous)
        }
    }

    /// Deactivates or reactivates a medication: an inactive one gets no doses and no alerts
    /// (its history stays); a reactivated one starts again from now, with nothing counted as
    /// missed for the time it was inactive.
    public func setActive(_ reference: String, _ active: Bool) throws(ChimeError) -> MedicationDetail {
        let now = clock.now()
        let zone = systemZone()
        return try store.write { db in
            guard let medication = try Self.findMedication(reference, in: db) else { throw try Self.medicationNotFound(reference, in: db) }
            if medication.isActive == active {
                throw ChimeError(.conflict, "\(medication.name) is already \(active ? "active" : "inactive")")
            }
            try db.execute(sql: "UPDATE medication SET active = ? WHERE id = ?", arguments: [active, medication.id])
            if active {
                try db.execute(
                    sql: "UPDATE dose_schedule SET cursor_us = ? WHERE medication_id = ? AND enabled = 1",
                    arguments: [now.micros, medication.id]
                )
                // After-last: a next dose that fell due while inactive is not made (nor missed);
                // the interval starts again from the next dose taken.
                var reactivated = medication
                reactivated.isActive = true
                for schedule in try Self.schedules(of: medication.id, in: db) where schedule.isEnabled && schedule.afterLast != nil {
                    if try Self.afterLastDue(schedule, of: reactivated, zone: zone, in: db).map({ $0 <= now }) ?? true {
                        try db.execute(sql: "UPDATE dose_schedule SET cursor_us = ? WHERE id = ?", arguments: [Int64.max, schedule.id])
                    }
                }
            } else {
                try Self.remakeFutureDoses(of: medication.id, now: now, in: db)
                // Due and unanswered: no more alerts; the doses stay, to be answered or missed.
                for occurrence in try String.fetchAll(
                    db,
                    sql: "SELECT occurrence FROM dose WHERE medication_id = ? AND status = 'pending' AND occurrence IS NOT NULL",
                    arguments: [medication.id]
                ) {
                    _ = try ReminderStore.cancel(id: occurrence, at: now.micros, in: db)
                }
            }
            try Self.settle(now: now, zone: zone, repeats: repeats, in: db)
            return try Self.detail(id: medication.id, now: now, zone: zone, in: db)
        }
    }

    /// What deleting a medication would take with it, for the question before it.
    public func deletionImpact(_ reference: String) throws(ChimeError) -> DeletionImpact {
        try store.read { db in
            guard let medication = try Self.findMedication(reference, in: db) else { throw try Self.medicationNotFound(reference, in: db) }
            return try Self.impact(of: medication, in: db)
        }
    }

    /// Deletes a medication with its schedules and its whole dose history; its alerts are cancelled.
    @discardableResult
    public func deleteMedication(_ reference: String) throws(ChimeError) -> DeletionImpact {
        let now = clock.now()
        return try store.write { db in
            guard let medication = try Self.findMedication(reference, in: db) else { throw try Self.medicationNotFound(reference, in: db) }
            let impact = try Self.impact(of: medication, in: db)
            for occurrence in try String.fetchAll(
                db,
                sql: "SELECT occurrence FROM dose WHERE medication_id = ? AND status = 'pending' AND occurrence IS NOT NULL",
                arguments: [medication.id]
            ) {
                _ = try ReminderStore.cancel(id: occurrence, at: now.micros, in: db)
            }
            _ = try ReminderStore.cancel(id: "refill-\(medication.id)", at: now.micros, in: db)
            try db.execute(sql: "DELETE FROM medication WHERE id = ?", arguments: [medication.id])
            return impact
        }
    }

    /// The next `count` doses the schedules will create (of one medication, or all active ones),
    /// in time order: what `chime med next` previews, DST days and fixed zones included.
    public func nextDoses(count: Int, medication reference: String? = nil) throws(ChimeError) -> [PlannedDose] {
        let now = clock.now()
        let zone = systemZone()
        return try store.read { db in
            var medicationID: Int64?
            if let reference {
                guard let medication = try Self.findMedication(reference, in: db) else {
                    throw try Self.medicationNotFound(reference, in: db)
                }
                medicationID = medication.id
            }
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT s.id FROM dose_schedule s JOIN medication m ON m.id = s.medication_id
                    WHERE s.enabled = 1 AND s.frequency != 'as-needed' AND m.active = 1 AND (?1 IS NULL OR m.id = ?1)
                    """,
                arguments: [medicationID]
            )
            var planned: [PlannedDose] = []
            for row in rows {
                guard let schedule = try Self.fetchSchedule(id: row[0], in: db),
                    let medication = try Self.fetchMedication(id: schedule.medicationID, in: db)
                else { continue }
                planned += try Self.coming(schedule, of: medication, after: now, count: count, zone: zone, in: db)
            }
            // A dose postponed ('chime dose postpone') comes at its new time.
            let moved = try db.cachedStatement(sql: "SELECT scheduled_us FROM dose WHERE occurrence = ? AND status = 'pending'")
            for index in planned.indices {
                if let micros = try Int64.fetchOne(moved, arguments: [planned[index].occurrence]), micros != planned[index].due.micros {
                    planned[index].due = Date(micros: micros)
                }
            }
            return Array(planned.sorted { ($0.due, $0.occurrence) < ($1.due, $1.occurrence) }.prefix(count))
        }
    }

    /// The next dose of each enabled schedule of a medication, by schedule id: what `chime med
    /// show` prints beside each schedule. Empty for an inactive or as-needed medication.
    public func nextDoseBySchedule(_ reference: String) throws(ChimeError) -> [Int64: Date] {
        let now = clock.now()
        let zone = systemZone()
        return try store.read { db in
            guard let medication = try Self.findMedication(reference, in: db) else { throw try Self.medicationNotFound(reference, in: db) }
            guard medication.isActive else { return [:] }
            var next: [Int64: Date] = [:]
            for schedule in try Self.schedules(of: medication.id, in: db) where schedule.isEnabled {
                if let first = try Self.coming(schedule, of: medication, after: now, count: 1, zone: zone, in: db).first {
                    next[schedule.id] = first.due
                }
            }
            return next
        }
    }

    // MARK: - In a transaction

    /// The coming doses of a schedule: ``plan(_:of:after:count:zone:)`` for times of day; for an
    /// after-last schedule its one next dose (made already, or one interval after the last
    /// dose taken): the one after depends on when that one is taken.
    static func coming(
        _ schedule: DoseSchedule,
        of medication: Medication,
        after instant: Date,
        count: Int,
        zone systemZone: TimeZone,
        in db: Database
    ) throws -> [PlannedDose] {
        guard schedule.afterLast != nil else { return plan(schedule, of: medication, after: instant, count: count, zone: systemZone) }
        let zone = schedule.zone.resolve(system: systemZone)
        let due: Date
        let occurrence: String
        if let made = try Row.fetchOne(
            db,
            sql: """
                SELECT scheduled_us, occurrence FROM dose WHERE schedule_id = ? AND status = 'pending' AND scheduled_us > ?
                ORDER BY scheduled_us LIMIT 1
                """,
            arguments: [schedule.id, instant.micros]
        ) {
            due = Date(micros: made[0])
            occurrence = made[1]
        } else if let next = try afterLastDue(schedule, of: medication, zone: systemZone, in: db), next > instant {
            due = next
            occurrence = try afterLastOccurrence(scheduleID: schedule.id, due: next, zone: zone, in: db)
        } else {
            return []
        }
        let ofDay = medication.on(day: CivilDay.of(due, in: zone))
        return [
            PlannedDose(
                medicationID: medication.id,
                medicationName: medication.name,
                amount: ofDay.amount,
                unit: medication.unit,
                label: ofDay.label,
                scheduleID: schedule.id,
                due: due,
                zone: zone,
                occurrence: occurrence,
                resolution: .exact
            )
        ]
    }

    /// The alert id of an after-last dose due at `due`: `med-{schedule}-{yyyyMMdd-HHmm}` of its
    /// local time, or of the first free minute after it when a dose has that id already (one
    /// postponed or moved from that minute).
    static func afterLastOccurrence(scheduleID: Int64, due: Date, zone: TimeZone, in db: Database) throws -> String {
        var instant = due
        var id = DoseOccurrenceID.make(scheduleID: scheduleID, local: ZoneMath.civil(instant, in: zone).local)
        for _ in 0..<60 {
            let taken = try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM dose WHERE occurrence = ?)", arguments: [id])
            if taken != true { break }
            instant = instant.addingTimeInterval(60)
            id = DoseOccurrenceID.make(scheduleID: scheduleID, local: ZoneMath.civil(instant, in: zone).local)
        }
        return id
    }

    /// An after-last schedule's next dose not made yet: one interval after the last dose of its
    /// medication taken (or the time of the last of its doses skipped), within the medication's
    /// dates. Nil before the first dose taken, and while a dose at or after that time exists
    /// (pending, answered, or missed: after a missed dose nothing comes until the next one taken),
    /// and when it would fall before the schedule existed (changed since: from the next one taken).
    static func afterLastDue(
        _ schedule: DoseSchedule,
        of medication: Medication,
        zone systemZone: TimeZone,
        in db: Database
    ) throws
        -> Date?
    {
        guard let interval = schedule.afterLast, schedule.isEnabled, medication.isActive else { return nil }
        let taken = try Int64.fetchOne(
            db,
            sql: "SELECT max(taken_us) FROM dose WHERE medication_id = ? AND status = 'taken'",
            arguments: [medication.id]
        )
        let skipped = try Int64.fetchOne(
            db,
            sql: "SELECT max(scheduled_us) FROM dose WHERE medication_id = ? AND status = 'skipped' AND as_needed = 0",
            arguments: [medication.id]
        )
        guard let anchor = [taken, skipped].compactMap({ $0 }).max() else { return nil }
        // Elapsed time, as RFC 5545 counts hours and minutes: 6h across a DST change is 6 hours.
        let due = Date(micros: anchor).addingTimeInterval(TimeInterval(interval))
        let made = try Bool.fetchOne(
            db,
            sql: "SELECT EXISTS (SELECT 1 FROM dose WHERE medication_id = ? AND as_needed = 0 AND scheduled_us >= ?)",
            arguments: [medication.id, due.micros]
        )
        // Made already; or due before this schedule existed (an edit): it waits for the next one taken.
        guard made == false, due >= schedule.createdAt else { return nil }
        let day = CivilDay.of(due, in: schedule.zone.resolve(system: systemZone))
        if let end = medication.endDay, day > end { return nil }
        if day < medication.startDay { return nil }
        return due
    }

    static func plan(
        _ schedule: DoseSchedule,
        of medication: Medication,
        after instant: Date,
        count: Int,
        zone systemZone: TimeZone
    )
        -> [PlannedDose]
    {
        guard let trigger = schedule.trigger else { return [] }
        let zone = schedule.zone.resolve(system: systemZone)
        var result: [PlannedDose] = []
        var cursor = instant
        var steps = 0
        while result.count < count, steps < count + 1_000 {
            steps += 1
            guard let occurrence = trigger.occurrences(after: cursor, count: 1, systemZone: systemZone).first else { break }
            cursor = occurrence.instant
            let local = DoseOccurrenceID.nominal(occurrence, in: zone)
            if let end = medication.endDay, local.dayNumber > end { break }
            // Before the start date, or a day its rule leaves out (between every-N days, a
            // cycle's off days): on from the next day it has doses, as the daily rule reads it.
            var firstDay: Int?
            if local.dayNumber < medication.startDay {
                firstDay =
                    schedule.dayRule.map { $0.includes(medication.startDay) ? medication.startDay : $0.nextDay(after: medication.startDay) }
                    ?? medication.startDay
            } else if let rule = schedule.dayRule, !rule.includes(local.dayNumber) {
                firstDay = rule.nextDay(after: local.dayNumber)
            }
            if let firstDay {
                if let end = medication.endDay, firstDay > end { break }
                let start = ZoneMath.resolve(CivilDateTime(dayNumber: firstDay, time: .midnight), in: zone).instant
                cursor = max(cursor, start.addingTimeInterval(-1))
                continue
            }
            // A taper's amount of that day.
            let ofDay = medication.on(day: local.dayNumber)
            result.append(
                PlannedDose(
                    medicationID: medication.id,
                    medicationName: medication.name,
                    amount: ofDay.amount,
                    unit: medication.unit,
                    label: ofDay.label,
                    scheduleID: schedule.id,
                    due: occurrence.instant,
                    zone: zone,
                    occurrence: DoseOccurrenceID.make(scheduleID: schedule.id, local: local),
                    resolution: occurrence.resolution
                )
            )
        }
        return result
    }

    static func insertSchedule(_ plan: ScheduleDraft, medicationID: Int64, now: Date, in db: Database) throws {
        var zone: String?
        if case .fixed(let name) = plan.zone { zone = name }
        var every: Int?
        var cycle: (on: Int, off: Int)?
        switch plan.dayRule {
        case .every(let days, _): every = days
        case .cycle(let on, let off, _): cycle = (on, off)
        case nil: break
        }
        try db.execute(
            sql: """
                INSERT INTO dose_schedule (medication_id, frequency, times, days, zone, min_interval_s, created_us, cursor_us,
                                           every_days, cycle_on, cycle_off, anchor_day)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [
                medicationID, plan.frequency.rawValue, plan.times.map(\.description).joined(separator: ","), Int(plan.days.rawValue), zone,
                plan.minInterval, now.micros, now.micros, every, cycle?.on, cycle?.off, plan.dayRule?.anchor,
            ]
        )
        if plan.afterLast != nil || plan.maxPerDay != nil {
            try db.execute(
                sql: "UPDATE dose_schedule SET after_last_s = ?, max_per_day = ? WHERE id = ?",
                arguments: [plan.afterLast, plan.maxPerDay, db.lastInsertedRowID]
            )
        }
    }

    /// Deletes a medication's doses not yet due (never shown) and their alerts; its schedules
    /// make them again from `now` at the next settle.
    static func remakeFutureDoses(of medicationID: Int64, now: Date, in db: Database) throws {
        for row in try Row.fetchAll(
            db,
            sql: """
                SELECT id, occurrence, schedule_id FROM dose
                WHERE medication_id = ? AND status = 'pending' AND scheduled_us > ? AND snoozed_us IS NULL
                """,
            arguments: [medicationID, now.micros]
        ) {
            try removeFutureDose(id: row[0], occurrence: row[1], scheduleID: row[2], now: now, in: db)
        }
        try db.execute(
            sql: "UPDATE dose_schedule SET cursor_us = max(min(cursor_us, ?), created_us) WHERE medication_id = ? AND enabled = 1",
            arguments: [now.micros, medicationID]
        )
    }

    static func impact(of medication: Medication, in db: Database) throws -> DeletionImpact {
        DeletionImpact(
            medication: medication,
            schedules: try Int.fetchOne(db, sql: "SELECT count(*) FROM dose_schedule WHERE medication_id = ?", arguments: [medication.id])
                ?? 0,
            doses: try Int.fetchOne(db, sql: "SELECT count(*) FROM dose WHERE medication_id = ?", arguments: [medication.id]) ?? 0
        )
    }

    static func detail(id: Int64, now: Date, zone: TimeZone, in db: Database) throws -> MedicationDetail {
        guard let medication = try fetchMedication(id: id, in: db) else {
            throw ChimeError(.notFound, "no medication has the number \(id)")
        }
        let schedules = try schedules(of: id, in: db)
        let next =
            medication.isActive
            ? try schedules.filter(\.isEnabled).compactMap {
                try coming($0, of: medication, after: now, count: 1, zone: zone, in: db).first?.due
            }
            .min()
            : nil
        var detail = MedicationDetail(medication: medication, schedules: schedules, nextDose: next)
        detail.tell = try fetchTell(of: id, in: db)
        return detail
    }

    /// By number, else by name (any case).
    static func findMedication(_ reference: String, in db: Database) throws -> Medication? {
        if let id = Int64(reference), let medication = try fetchMedication(id: id, in: db) { return medication }
        let id = try Int64.fetchOne(
            db,
            sql: "SELECT id FROM medication WHERE name = ? COLLATE NOCASE",
            arguments: [reference.trimmingCharacters(in: .whitespaces)]
        )
        return try id.flatMap { try fetchMedication(id: $0, in: db) }
    }

    static func medicationNotFound(_ reference: String, in db: Database) throws -> ChimeError {
        let names = try String.fetchAll(db, sql: "SELECT name FROM medication ORDER BY name COLLATE NOCASE LIMIT 8")
        let known = names.isEmpty ? "none yet: 'chime med add' adds one" : "known: " + names.joined(separator: ", ")
        return ChimeError(.notFound, "no medication is named or numbered '\(reference)' (\(known))")
    }

    static func fetchMedication(id: Int64, in db: Database) throws -> Medication? {
        try Row.fetchOne(db, sql: "SELECT * FROM medication WHERE id = ?", arguments: [id]).map { row in
            var medication = Medication(
                id: row["id"],
                name: row["name"],
                amount: row["amount"],
                unit: row["unit"],
                instructions: row["instructions"],
                prescribedBy: row["prescribed_by"],
                startDay: row["start_day"],
                endDay: row["end_day"],
                isActive: row["active"],
                grace: row["grace_s"],
                missedAfter: row["missed_after_s"],
                stock: row["stock"],
                refillDays: row["refill_days"],
                createdAt: Date(micros: row["created_us"])
            )
            medication.taper = (row["taper"] as String?).flatMap(DoseTaper.init(stored:))
            return medication
        }
    }

    static func schedules(of medicationID: Int64, in db: Database) throws -> [DoseSchedule] {
        try Row.fetchAll(db, sql: "SELECT * FROM dose_schedule WHERE medication_id = ? ORDER BY id", arguments: [medicationID]).map(
            schedule(from:)
        )
    }

    static func fetchSchedule(id: Int64, in db: Database) throws -> DoseSchedule? {
        try Row.fetchOne(db, sql: "SELECT * FROM dose_schedule WHERE id = ?", arguments: [id]).map(schedule(from:))
    }

    static func asNeededSchedule(of medicationID: Int64, in db: Database) throws -> DoseSchedule? {
        try Row.fetchOne(
            db,
            sql: "SELECT * FROM dose_schedule WHERE medication_id = ? AND enabled = 1 AND frequency = 'as-needed' ORDER BY id DESC LIMIT 1",
            arguments: [medicationID]
        ).map(schedule(from:))
    }

    static func schedule(from row: Row) throws -> DoseSchedule {
        let times: String = row["times"]
        var rule: DoseDayRule?
        if let anchor: Int = row["anchor_day"] {
            if let every: Int = row["every_days"] {
                rule = .every(days: every, from: anchor)
            } else if let on: Int = row["cycle_on"], let off: Int = row["cycle_off"] {
                rule = .cycle(on: on, off: off, from: anchor)
            }
        }
        var schedule = DoseSchedule(
            id: row["id"],
            medicationID: row["medication_id"],
            frequency: DoseFrequency(rawValue: row["frequency"]) ?? .daily,
            times: times.isEmpty ? [] : try LocalTime.parseList(times),
            days: WeekdaySet(rawValue: UInt8(row["days"] as Int)),
            zone: (row["zone"] as String?).map { .fixed($0) } ?? .floating,
            minInterval: row["min_interval_s"],
            isEnabled: row["enabled"],
            createdAt: Date(micros: row["created_us"]),
            dayRule: rule
        )
        schedule.afterLast = row["after_last_s"]
        schedule.maxPerDay = row["max_per_day"]
        return schedule
    }
}

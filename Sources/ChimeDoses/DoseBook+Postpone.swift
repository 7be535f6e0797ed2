import ChimeCore
import ChimeStore
import Foundation
import GRDB

/// Where `chime dose postpone` moves a dose.
public enum PostponeTarget: Sendable, Hashable {
    /// This many seconds after its time (`2h`).
    case by(Int)
    /// This time of day on the dose's own day, in its zone (`--to 14:00`).
    case to(LocalTime)
}

/// A dose postponed: the dose at its new time, and its time before.
public struct PostponedDose: Sendable, Hashable {
    public var entry: DoseEntry
    public var previous: Date
}

extension DoseBook {
    /// How far `chime dose postpone DOSE DURATION` may move a dose.
    public static let postponeSeconds = 60...(24 * 3_600)

    /// Moves one coming dose later without changing its schedule: its alert (same id) comes at
    /// the new time, its grace and missed windows start from there (the window still ends at the
    /// medication's next dose at the latest). The new time must be after the dose's time and
    /// before the medication's next dose. A medication's name means its next dose.
    ///
    /// - Throws: `.notFound`; `.conflict` for a dose answered, due already (snooze it instead) or
    ///   logged as needed; `.usage` for a time not after the dose's or not before the next dose.
    public func postpone(_ reference: DoseReference, _ target: PostponeTarget) throws(ChimeError) -> PostponedDose {
        if case .by(let seconds) = target, !Self.postponeSeconds.contains(seconds) {
            throw ChimeError.invalid("postponement", Trigger.formatInterval(Int64(seconds)), expected: "from 1m to 24h, such as 2h")
        }
        let now = clock.now()
        let zone = systemZone()
        return try store.write { db in
            try Self.settle(now: now, zone: zone, repeats: repeats, in: db)
            let entry = try Self.comingDose(reference, now: now, zone: zone, in: db)
            let dose = entry.dose
            guard dose.status == .pending, let occurrence = dose.occurrence else {
                throw ChimeError(
                    .conflict,
                    "dose \(dose.id) (\(Self.describe(entry))) is \(dose.occurrence == nil ? "logged as needed" : dose.status.rawValue): only a coming dose can be postponed"
                )
            }
            guard dose.scheduled > now else {
                throw ChimeError(
                    .conflict,
                    "dose \(dose.id) (\(Self.describe(entry))) is due already: snooze it instead ('chime dose snooze \(dose.id)')"
                )
            }
            guard let medication = try Self.fetchMedication(id: dose.medicationID, in: db) else {
                throw ChimeError(.notFound, "no medication has the number \(dose.medicationID)")
            }
            let doseZone = dose.timeZone
            let newTime: Date
            let asTyped: String
            switch target {
            case .by(let seconds):
                newTime = dose.scheduled.addingTimeInterval(TimeInterval(seconds))
                asTyped = Trigger.formatInterval(Int64(seconds))
            case .to(let time):
                let day = CivilDay.of(dose.scheduled, in: doseZone)
                newTime = ZoneMath.resolve(CivilDateTime(dayNumber: day, time: time), in: doseZone).instant
                asTyped = time.description
            }
            let siblings = try Self.schedules(of: medication.id, in: db).filter(\.isEnabled)
            let next = Self.nextDose(of: siblings, medication: medication, after: dose.scheduled, zone: zone)
            let from = TimeText.clock(dose.scheduled, in: doseZone)
            if newTime <= dose.scheduled || next.map({ newTime >= $0 }) == true {
                let before = next.map { " and before the next dose, \(TimeText.local($0, in: doseZone))" } ?? ""
                throw ChimeError.invalid("postponement", asTyped, expected: "a time after the dose's \(from)\(before)")
            }
            let missedAt = min(newTime.addingTimeInterval(TimeInterval(medication.missedAfter)), next ?? .distantFuture)
            try db.execute(
                sql: "UPDATE dose SET scheduled_us = ?, overdue_us = ?, missed_us = ?, summarized = 0, updated_us = ? WHERE id = ?",
                arguments: [
                    newTime.micros, newTime.addingTimeInterval(TimeInterval(medication.grace)).micros, missedAt.micros, now.micros, dose.id,
                ]
            )
            // Its alert moves (a dose made ahead has none yet: it gets one).
            if try !ReminderStore.moveOnce(id: occurrence, to: newTime, in: db) {
                try ReminderStore.scheduleOnce(
                    NewReminder(
                        id: occurrence,
                        title: entry.title,
                        body: Self.alertBody(instructions: medication.instructions),
                        trigger: .once(newTime),
                        kind: Self.kind
                    ),
                    now: now,
                    in: db
                )
            }
            guard let moved = try Self.entry(where: "d.id = ?", [dose.id], in: db) else {
                throw ChimeError(.notFound, "no dose has the number \(dose.id)")
            }
            return PostponedDose(entry: moved, previous: dose.scheduled)
        }
    }

    /// The dose a postponement means: by number or alert id (a dose not yet made is made), or a
    /// medication's next dose.
    static func comingDose(_ reference: DoseReference, now: Date, zone: TimeZone, in db: Database) throws -> DoseEntry {
        guard case .medication(let name) = reference else { return try resolve(reference, now: now, zone: zone, in: db) }
        guard let medication = try findMedication(name, in: db) else { throw try medicationNotFound(name, in: db) }
        let next =
            medication.isActive
            ? try schedules(of: medication.id, in: db).filter(\.isEnabled)
                .compactMap { plan($0, of: medication, after: now, count: 1, zone: zone).first }.min { $0.due < $1.due } : nil
        // A dose postponed already comes at its new time, before the schedule's next one.
        if let made = try entry(
            where: "d.medication_id = ? AND d.status = 'pending' AND d.occurrence IS NOT NULL AND d.scheduled_us > ?",
            [medication.id, now.micros],
            in: db
        ), next.map({ made.dose.scheduled <= $0.due }) ?? true {
            return made
        }
        guard let next else {
            throw ChimeError(.notFound, "no dose of \(medication.name) is coming: inactive, as needed, or past its end date")
        }
        return try resolve(.occurrence(next.occurrence), now: now, zone: zone, in: db)
    }
}

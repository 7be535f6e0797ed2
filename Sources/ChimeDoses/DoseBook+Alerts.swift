import ChimeCore
import ChimeStore
import Foundation
import GRDB

/// Dose alerts among the other reminders: they belong to their dose, not to the person's list
/// of reminders to cancel.
extension DoseBook {
    /// Refuses `chime cancel` of a dose's alert (one stored, a dose's, or one a schedule will
    /// make): cancelling it would leave the dose unanswered, to be marked missed. The person
    /// answers the dose instead.
    /// - Throws: `.conflict` naming the first such id and `chime dose skip` with it.
    public func refuseCancel(_ ids: [String]) throws(ChimeError) {
        let now = clock.now()
        let zone = systemZone()
        let refused: String? = try store.read { db in
            for id in ids where DoseOccurrenceID.matches(id) {
                if try ReminderStore.pendingDue(id: id, kind: Self.kind, in: db) != nil
                    || Int64.fetchOne(db, sql: "SELECT id FROM dose WHERE occurrence = ?", arguments: [id]) != nil
                    || Self.isPlanned(id, now: now, zone: zone, in: db)
                {
                    return id
                }
            }
            return nil
        }
        guard let refused else { return }
        throw ChimeError(
            .conflict,
            "'\(refused)' is a dose's alert, not a reminder: answer the dose instead, as 'chime dose skip \(refused)' "
                + "(or take, miss, snooze); nothing was cancelled"
        )
    }

    /// Whether a schedule makes the dose `occurrence` among its next 500.
    static func isPlanned(_ occurrence: String, now: Date, zone: TimeZone, in db: Database) throws -> Bool {
        guard let scheduleID = Int64(occurrence.split(separator: "-")[1]), let schedule = try fetchSchedule(id: scheduleID, in: db),
            schedule.isEnabled, let medication = try fetchMedication(id: schedule.medicationID, in: db)
        else { return false }
        return plan(schedule, of: medication, after: now, count: 500, zone: zone).contains { $0.occurrence == occurrence }
    }

    /// How a reminder reads in a list of reminders (`chime list`): its title, which names a
    /// dose's medication ("Aspirin 100 mg"); a dose alert stored by an older Chime, titled
    /// "Medication Reminder", with its medication from the alert's text.
    public static func listTitle(of reminder: Reminder) -> String {
        guard reminder.kind == kind, reminder.title == alertTitle || reminder.title == snoozedTitle,
            DoseOccurrenceID.matches(reminder.id), let label = reminder.body.split(separator: "\n").first
        else { return reminder.title }
        return "\(reminder.title): \(label)"
    }
}

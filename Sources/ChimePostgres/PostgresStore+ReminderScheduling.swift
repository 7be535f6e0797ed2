import ChimeCore
import Foundation

/// The PostgreSQL store as ChimeCore's ``ReminderScheduling`` (schedule, pending and reminder(id:)
/// are its own): its clock is the database's.
extension PostgresStore: ReminderScheduling {
    public func now() throws -> Date { try databaseNow() }

    /// In the default channel.
    @discardableResult
    public func schedule(_ new: NewReminder, replace: Bool, systemZone: TimeZone) throws -> ScheduleResult {
        try schedule(new, replace: replace, systemZone: systemZone, channel: Self.defaultChannel)
    }

    public func cancel(ids: [String]) throws -> [Reminder] {
        try cancelReporting(ids: ids).cancelled
    }
}

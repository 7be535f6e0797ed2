import ChimeCore
import Foundation

/// The SQLite store as ChimeCore's ``ReminderScheduling``, on a clock of the caller's (the
/// host's by default; tests inject theirs).
public struct SQLiteReminders: ReminderScheduling {
    public let store: ReminderStore
    let clock: @Sendable () -> Date

    public init(store: ReminderStore, clock: @escaping @Sendable () -> Date = { Date() }) {
        self.store = store
        self.clock = clock
    }

    public func now() async throws -> Date { clock() }

    public func schedule(_ new: NewReminder, replace: Bool, systemZone: TimeZone) async throws -> ScheduleResult {
        try store.schedule(new, replace: replace, now: clock(), systemZone: systemZone)
    }

    public func cancel(ids: [String]) async throws -> [Reminder] {
        try store.cancel(ids: ids, now: clock())
    }

    public func pending(limit: Int?) async throws -> [Reminder] {
        try store.pending(limit: limit)
    }

    public func reminder(id: String) async throws -> Reminder {
        try store.reminder(id: id)
    }
}

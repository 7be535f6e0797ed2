import Foundation

/// The reminder side of a store, the same on the embedded SQLite store and on PostgreSQL (issue
/// 20): schedule, cancel by id, list, look one up. Async because PostgreSQL's client is; the
/// SQLite store's synchronous API stays as it is (its runner and commands keep their speed) and
/// is adapted to this one (`ChimeStore`'s `SQLiteReminders`). One behaviour suite runs against
/// both (`StoreBehaviourTests`), so the two cannot drift apart.
public protocol ReminderScheduling: Sendable {
    /// The store's clock: the host's for SQLite (one machine), the database's for PostgreSQL
    /// (every runner compares with it, whatever its host's clock says).
    func now() async throws -> Date
    /// Schedules `new`, its first occurrence after ``now()``. With `replace`, a pending reminder
    /// with the same id is replaced; without, that is `.conflict`.
    /// - Throws: `.usage` for a reminder that would never fire; `.conflict`.
    func schedule(_ new: NewReminder, replace: Bool, systemZone: TimeZone) async throws -> ScheduleResult
    /// Cancels every reminder in `ids`, all of them or none (`.notFound` naming the first that
    /// is not pending, saying what became of it).
    func cancel(ids: [String]) async throws -> [Reminder]
    /// The pending reminders, soonest first (then by id).
    func pending(limit: Int?) async throws -> [Reminder]
    /// The pending reminder `id`. - Throws: `.notFound`, saying what became of it.
    func reminder(id: String) async throws -> Reminder
}

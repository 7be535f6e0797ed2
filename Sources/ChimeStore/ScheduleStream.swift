import ChimeCore
import Foundation
import GRDB

/// What a streamed batch scheduled: the ids in order, and how many replaced a pending reminder.
public struct ScheduledIds: Sendable, Hashable {
    public var ids: [String] = []
    public var replaced = 0
}

extension ReminderStore {
    /// Schedules the reminders that `produce` hands over, chunk by chunk, in one transaction:
    /// all of them, or none when `produce` or a reminder fails (the transaction is rolled back).
    ///
    /// For `chime import` of a large file: only one chunk of reminders is held at a time, where
    /// ``scheduleBatch(_:replace:now:systemZone:)`` holds the whole batch, its rows and results.
    /// - Parameters:
    ///   - name: prefixes the message of an error about the reminder at an index of the stream
    ///     ("reminders.json: reminder 3").
    ///   - produce: calls its argument with each chunk, in order.
    public func scheduleStream(
        replace: Bool = true,
        now: Date,
        systemZone: TimeZone,
        name: @escaping (Int) -> String,
        produce: (_ chunk: ([NewReminder]) throws -> Void) throws -> Void
    ) throws(ChimeError) -> ScheduledIds {
        try write { db in
            var rng = SystemRandomNumberGenerator()
            var scheduled = ScheduledIds()
            let inserts = try BatchInsert.Pair(db)
            try produce { chunk in
                let first = scheduled.ids.count
                let validated = try Self.validate(chunk, now: now, systemZone: systemZone, firstIndex: first, name: name)
                let results = try Self.insert(
                    validated,
                    replace: replace,
                    nowMicros: now.micros,
                    rng: &rng,
                    in: db,
                    firstIndex: first,
                    name: name,
                    inserts: inserts
                )
                for result in results {
                    scheduled.ids.append(result.reminder.id)
                    if result.replaced { scheduled.replaced += 1 }
                }
            }
            return scheduled
        }
    }
}

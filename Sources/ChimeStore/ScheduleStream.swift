import ChimeCore
import Foundation
import GRDB

/// What a streamed batch scheduled: how many, their ids in order (when asked for), and how many
/// replaced a pending reminder.
public struct ScheduledIds: Sendable, Hashable {
    public var count = 0
    public var ids: [String] = []
    public var replaced = 0
}

extension ReminderStore {
    /// SQLite's page cache while a stream is scheduled, in KiB (the CLI's is 16 MiB): enough
    /// for the pages that the rows of a stream keep coming back to (the indexes of pending ids
    /// and due times, 4 MB at 100,000 reminders), not for every page the transaction writes.
    /// The pages past it are written to the write-ahead log before the commit rather than at it.
    /// `chime import` of 100,000 reminders (`/usr/bin/time`, static release build): peak RSS
    /// 57 MB with 16 MiB (the 13 MB of the new rows stayed in the cache) and a dictionary of
    /// the ids read; 36 MB with 4 MiB and none (28.5 MB of it is the command's for one
    /// reminder); 2.1 s either way, within the noise.
    static let streamCacheKiB = 4_096

    /// Schedules the reminders that `produce` hands over, chunk by chunk, in one transaction:
    /// all of them, or none when `produce` or a reminder fails (the transaction is rolled back).
    ///
    /// For `chime import` of a large file: only one chunk of reminders is held at a time, where
    /// ``scheduleBatch(_:replace:now:systemZone:)`` holds the whole batch, its rows and results;
    /// and memory stays flat however long the stream (SQLite's page cache capped, see
    /// ``streamCacheKiB``). A reminder whose id an earlier reminder of the stream has is
    /// refused (`.usage`), whatever `replace` says: the store finds it among the rows the
    /// stream made, so no list of ids is kept.
    /// - Parameters:
    ///   - keepIds: collect the ids scheduled in ``ScheduledIds/ids`` (for `--json`).
    ///   - name: prefixes the message of an error about the reminder at an index of the stream
    ///     ("reminders.json: reminder 3").
    ///   - produce: calls its argument with each chunk, in order.
    public func scheduleStream(
        replace: Bool = true,
        now: Date,
        systemZone: TimeZone,
        keepIds: Bool = true,
        name: @escaping (Int) -> String,
        produce: (_ chunk: ([NewReminder]) throws -> Void) throws -> Void
    ) throws(ChimeError) -> ScheduledIds {
        try scheduleStream(
            replace: replace,
            now: now,
            systemZone: systemZone,
            keepIds: keepIds,
            prevalidated: false,
            name: name,
            produce: produce
        )
    }

    /// ``scheduleStream(replace:now:systemZone:keepIds:name:produce:)``; with `prevalidated`,
    /// for reminders that are `validated()` already (as `ReminderImport.Reader` hands them
    /// over): their checks are not run a second time (3.5% of `chime import`'s time, `perf`).
    /// With `pastOneShots`, a one-shot whose time has passed is scheduled at that time (the
    /// runner shows it at once, saying how late: `chime import --past fire`) rather than refused.
    package func scheduleStream(
        replace: Bool = true,
        now: Date,
        systemZone: TimeZone,
        keepIds: Bool = true,
        prevalidated: Bool,
        pastOneShots: Bool = false,
        name: @escaping (Int) -> String,
        produce: (_ chunk: ([NewReminder]) throws -> Void) throws -> Void
    ) throws(ChimeError) -> ScheduledIds {
        try write { db in
            let cacheSize = try Int.fetchOne(db, sql: "PRAGMA cache_size") ?? -2_000
            try db.execute(sql: "PRAGMA cache_size = -\(Self.streamCacheKiB)")
            defer { try? db.execute(sql: "PRAGMA cache_size = \(cacheSize)") }
            // Rows this stream makes have keys above it (a rowid is one more than the largest).
            let streamAfterKey = try Int64.fetchOne(db, sql: "SELECT coalesce(max(key), 0) FROM reminder") ?? 0
            var rng = SystemRandomNumberGenerator()
            var scheduled = ScheduledIds()
            let inserts = try BatchInsert.Pair(db)
            try produce { chunk in
                let first = scheduled.count
                let validated = try Self.validate(
                    chunk,
                    now: now,
                    systemZone: systemZone,
                    firstIndex: first,
                    name: name,
                    prevalidated: prevalidated,
                    pastOneShots: pastOneShots
                )
                let results = try Self.insert(
                    validated,
                    replace: replace,
                    nowMicros: now.micros,
                    rng: &rng,
                    in: db,
                    firstIndex: first,
                    name: name,
                    inserts: inserts,
                    streamAfterKey: streamAfterKey
                )
                scheduled.count += results.count
                for result in results {
                    if keepIds { scheduled.ids.append(result.reminder.id) }
                    if result.replaced { scheduled.replaced += 1 }
                }
            }
            return scheduled
        }
    }
}

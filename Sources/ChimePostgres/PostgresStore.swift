import ChimeCore
import Foundation
import Synchronization

/// The reminder store on PostgreSQL, for several runners sharing one database
/// (DESIGN.md "Beyond one machine"). The SQLite store (ChimeStore) stays the embedded default.
///
/// - ``schedule(_:replace:systemZone:channel:)``, ``cancel(id:)``, ``pending(limit:)``: as
///   `ReminderStore`'s, with the trigger in ChimeCore's ``TriggerColumns``. Scheduling records
///   the reminder's first occurrence in the ledger as `pending`.
/// - ``claim(owner:lease:channels:limit:)``: one statement takes the due occurrences of
///   the runner's channels under a lease (`FOR UPDATE SKIP LOCKED`), so two runners never take
///   the same one.
/// - ``stillWanted(_:owner:)``: the check just before a post (a cancel from any host after the claim).
/// - ``markPosted(_:owner:noteID:systemZone:)``: fenced on the lease; in the same transaction
///   the next occurrence of a recurring reminder is recorded (at most once: the ledger's key).
///   ``markFailed(_:owner:retryAfter:error:)``: fenced too; back to pending with a retry time.
/// - ``reapExpiredLeases()``: any runner returns expired leases (there is no leader).
/// - ``nextDeadlines(channels:)``: what a runner's timer needs, with the database's now.
///
/// ``PostgresLedger`` puts these behind ChimeCore's `SchedulerStore`, for the one Scheduler.
///
/// Every time comparison uses the database's `now()` (through `chime_now_us()`), never the
/// host's clock. Statements go over one libpq connection (``PostgresConnection``), made on first
/// use and again after it broke; calls are synchronous and bounded by its timeouts.
public final class PostgresStore: Sendable {
    /// The connection every statement goes through.
    public let client: PostgresConnection
    /// The quiet hours that apply while `chime quiet hours` stored none: the config file's.
    let quietHoursDefault = Mutex<QuietSettings.Window?>(nil)

    /// The channel `NOTIFY`ed (in the same transaction) when a reminder is scheduled or cancelled;
    /// its payload is the reminder's id.
    public static let changesChannel = "chime_changes"

    /// A store on `url`; nothing connects before the first statement.
    public init(_ url: PostgresURL, options: PostgresConnectionOptions = PostgresConnectionOptions()) {
        self.client = PostgresConnection(url, options: options)
    }

    /// Where the store is.
    public var url: PostgresURL { client.url }

    /// Drops the connection, so that the next statement goes over one made from now on.
    ///
    /// For a failover: a connection left on a node that has become read-only answers
    /// every write with SQLSTATE 25006 for as long as it lives; a new one reaches whatever node
    /// the URL's host names now (the promoted primary, behind a moved address or socket).
    public func renewConnections() { client.reset() }

    /// Runs `body` with a store for `url` (its connection closed after).
    @discardableResult
    public static func withStore<Result: Sendable>(
        _ url: PostgresURL,
        applicationName: String? = nil,
        _ body: (PostgresStore) async throws -> Result
    ) async throws -> Result {
        let store = PostgresStore(url, options: PostgresConnectionOptions(applicationName: applicationName))
        defer { store.client.reset() }
        return try await body(store)
    }

    /// `body` in a transaction: BEGIN, COMMIT, or ROLLBACK when `body` throws (its own error
    /// rethrown). A transaction PostgreSQL ended as a deadlock's victim (SQLSTATE 40P01) or for a
    /// serialization failure (40001) is run again, up to twice more, as PostgreSQL's manual asks
    /// of its clients: a `chime cancel` racing two runners' claims once failed so. (Every body
    /// here keeps its state in its own variables: nothing of the failed attempt survives.)
    /// Each retry waits a few milliseconds first (jittered, longer each time): at once, it could
    /// take its first lock again before the other transaction, woken by the abort, took it, and
    /// be the victim of the same deadlock again (seen under load).
    func transaction<Result>(_ body: (PostgresSession) throws -> Result) throws -> Result {
        var attempt = 1
        while true {
            do {
                return try client.transaction(body)
            } catch let error as PostgresError where attempt < 3 && ["40P01", "40001"].contains(error.sqlState ?? "") {
                usleep(UInt32(attempt) * UInt32.random(in: 5_000...25_000))
                attempt += 1
            }
        }
    }

    /// The database's clock: the instant every comparison of this store uses.
    public func databaseNow() throws -> Date {
        for row in try client.rows("SELECT chime_now_us()") { return Date(micros: try row.decode(Int64.self)) }
        throw ChimeError(.store, "the database did not answer SELECT chime_now_us()")
    }
}

// MARK: - Reminders

extension PostgresStore {
    /// The reminder columns ``reminder(from:)`` reads: its own, and the trigger's.
    static let reminderColumns =
        "key, id, kind, title, body, created_us, next_due_us, last_due_us, urgency, sticky, icon, sound, actions, command, app_id, "
        + triggerColumnNames.joined(separator: ", ")

    /// A reminder's presentation from a row with the columns urgency, sticky, icon and sound
    /// (migration 0005-presentation), and actions (its own buttons, migration 0008).
    static func presentation(from r: PostgresRow) throws -> Presentation {
        Presentation(
            urgency: try r["urgency"].decode(String?.self).flatMap(Note.Urgency.init(rawValue:)),
            sticky: try r["sticky"].decode(Bool.self),
            icon: try r["icon"].decode(String?.self),
            sound: try r["sound"].decode(String?.self),
            actions: Presentation.actions(stored: try r["actions"].decode(String?.self))
        )
    }

    /// The trigger columns of the reminder table, as ``triggerColumns(from:)`` reads them.
    static let triggerColumnNames = [
        "trigger_kind", "at_us", "times", "days", "zone", "interval_s", "anchor_us", "by_month", "by_month_day",
        "until_day", "rule_count", "count_start_us",
    ]

    /// A reminder's trigger from a row with the columns ``triggerColumnNames`` names.
    static func triggerColumns(from r: PostgresRow) throws -> TriggerColumns {
        TriggerColumns(
            kind: try r["trigger_kind"].decode(String.self),
            atMicros: try r["at_us"].decode(Int64?.self),
            times: try r["times"].decode(String?.self),
            days: try r["days"].decode(Int?.self),
            zone: try r["zone"].decode(String?.self),
            intervalSeconds: try r["interval_s"].decode(Int64?.self),
            anchorMicros: try r["anchor_us"].decode(Int64?.self),
            byMonth: try r["by_month"].decode(Int?.self),
            byMonthDay: try r["by_month_day"].decode(Int?.self),
            untilDay: try r["until_day"].decode(Int?.self),
            ruleCount: try r["rule_count"].decode(Int?.self),
            countStartMicros: try r["count_start_us"].decode(Int64?.self)
        )
    }

    static func reminder(from row: PostgresRow) throws -> (key: Int64, reminder: Reminder) {
        let r = row.makeRandomAccess()
        let columns = try triggerColumns(from: r)
        let reminder = Reminder(
            id: try r["id"].decode(String.self),
            title: try r["title"].decode(String.self),
            body: try r["body"].decode(String.self),
            trigger: try columns.trigger(),
            kind: try r["kind"].decode(String.self),
            createdAt: Date(micros: try r["created_us"].decode(Int64.self)),
            nextDue: try r["next_due_us"].decode(Int64?.self).map(Date.init(micros:)),
            lastDue: try r["last_due_us"].decode(Int64?.self).map(Date.init(micros:)),
            presentation: try presentation(from: r),
            command: try r["command"].decode(String?.self).flatMap(ReminderCommand.init(stored:)),
            appID: try r["app_id"].decode(String?.self)
        )
        return (try r["key"].decode(Int64.self), reminder)
    }

    /// Schedules one reminder and records its first occurrence in the ledger, due at the
    /// trigger's first instant after the database's `now()`. With `replace`, a pending reminder
    /// with the same id is replaced (its pending occurrences cancelled); without, that is a
    /// `.conflict`. Notifies ``changesChannel``.
    /// - Parameter channel: the channel that shows it (see ``validateChannel(_:)``): only a
    ///   runner serving that channel claims its occurrences.
    /// - Throws: `.usage` for a bad reminder, a bad channel or one that would never fire; `.conflict`.
    @discardableResult
    public func schedule(
        _ new: NewReminder,
        replace: Bool = true,
        systemZone: TimeZone,
        channel: String = PostgresStore.defaultChannel
    ) throws -> ScheduleResult {
        let checked = try new.validated()
        try Self.validateChannel(channel)
        return try transaction { connection in
            let nowMicros = try Self.now(connection)
            guard let nextDue = checked.trigger.nextOccurrence(after: Date(micros: nowMicros), systemZone: systemZone) else {
                throw ChimeError(.usage, "'\(checked.title)' would never fire: its time is in the past")
            }
            var rng = SystemRandomNumberGenerator()
            let result = try Self.insert(
                checked,
                nextDue: nextDue.micros,
                replace: replace,
                nowMicros: nowMicros,
                channel: channel,
                rng: &rng,
                connection
            )
            try Self.notifyChange(id: result.reminder.id, connection)
            return result
        }
    }

    /// Inserts the checked reminder `checked` and its first occurrence, due at `nextDue`, in the
    /// caller's transaction (no NOTIFY: the caller's). With `replace`, a pending reminder with
    /// the same id is replaced (its pending occurrences cancelled); without, that is a `.conflict`.
    /// - Parameter taken: asked, when the id is taken by a pending reminder, for the error to
    ///   throw instead of replacing it (an import: the id is the file's twice).
    static func insert(
        _ checked: NewReminder,
        nextDue dueMicros: Int64,
        replace: Bool,
        nowMicros: Int64,
        channel: String,
        rng: inout SystemRandomNumberGenerator,
        _ connection: PostgresSession,
        taken: ((_ id: String, _ key: Int64) throws -> ChimeError?)? = nil
    ) throws -> ScheduleResult {
        var id = checked.id ?? ReminderIdentifier.generate(using: &rng)
        let existing = checked.id == nil ? nil : try Self.pendingKey(id: id, connection)
        if checked.id == nil {
            // A generated id taken by a pending reminder: draw again, longer after a few tries.
            var tries = 0
            while try Self.pendingKey(id: id, connection) != nil {
                tries += 1
                id = ReminderIdentifier.generate(length: 4 + tries / 3, using: &rng)
            }
        } else if let old = existing {
            if let taken, let error = try taken(id, old) { throw error }
            guard replace else {
                throw ChimeError(
                    .conflict,
                    "a pending reminder already has the id '\(id)': cancel it, choose another --id, or leave out --no-replace"
                )
            }
            try connection.run(
                "UPDATE reminder SET state = 'replaced', ended_us = \(nowMicros) WHERE key = \(old)"
            )
            try connection.run(
                "UPDATE occurrence SET state = 'cancelled' WHERE reminder_key = \(old) AND state = 'pending'"
            )
        }
        let replaced = existing != nil
        let c = TriggerColumns(checked.trigger)
        let presentation = checked.presentation
        // Another host inserting the same id at the same moment (neither saw the other's row
        // pending): the unique index on pending ids decides, and the loser is told as if it
        // had seen it (SQLSTATE 23505, unique_violation).
        let inserted: [PostgresRow]
        do throws(any Error) {
            inserted = try connection.rows(
                """
                INSERT INTO reminder (id, kind, title, body, trigger_kind, at_us, times, days, zone, interval_s, anchor_us,
                    by_month, by_month_day, until_day, rule_count, count_start_us, created_us, next_due_us, channel,
                    urgency, sticky, icon, sound, command, app_id, actions)
                VALUES (\(id), \(checked.kind), \(checked.title), \(checked.body), \(c.kind), \(c.atMicros), \(c.times),
                    \(c.days), \(c.zone), \(c.intervalSeconds), \(c.anchorMicros), \(c.byMonth), \(c.byMonthDay),
                    \(c.untilDay), \(c.ruleCount), \(c.countStartMicros), \(nowMicros), \(dueMicros), \(channel),
                    \(presentation.urgency?.rawValue), \(presentation.sticky), \(presentation.icon), \(presentation.sound), \(checked.command?.stored),
                    \(checked.appID), \(presentation.storedActions))
                RETURNING key
                """
            )
        } catch let error as PostgresError where error.sqlState == "23505" {
            throw ChimeError(
                .conflict,
                "a pending reminder already has the id '\(id)' (scheduled from elsewhere just now): cancel it or choose another --id"
            )
        }
        var key: Int64?
        for row in inserted {
            let value = try row.decode(Int64.self)
            key = value
        }
        guard let key else { throw ChimeError(.store, "INSERT INTO reminder returned no key") }
        try connection.run(
            "INSERT INTO occurrence (reminder_key, due_us) VALUES (\(key), \(dueMicros))"
        )
        let reminder = Reminder(
            id: id,
            title: checked.title,
            body: checked.body,
            trigger: checked.trigger,
            kind: checked.kind,
            createdAt: Date(micros: nowMicros),
            nextDue: Date(micros: dueMicros),
            presentation: presentation,
            command: checked.command,
            appID: checked.appID
        )
        return ScheduleResult(reminder: reminder, replaced: replaced)
    }

    /// What ``cancel(id:)`` did.
    public struct Cancellation: Sendable, Hashable {
        public var cancelled: Reminder
        /// Occurrences that were being posted (claimed under a lease) when the cancel committed:
        /// they are left to their runner, which records them as posted if it shows them.
        public var inFlight: Int
    }

    /// Cancels the pending reminder `id` and its pending occurrences, for every runner.
    /// Notifies ``changesChannel``.
    /// - Throws: `.notFound` when no pending reminder has that id (saying what became of it).
    @discardableResult
    public func cancel(id: String) throws -> Cancellation {
        // One id of ``cancelReporting(ids:)``, which holds the statements.
        let outcome = try cancelReporting(ids: [id])
        return Cancellation(cancelled: outcome.cancelled[0], inFlight: outcome.inFlight.count)
    }

    /// The pending reminders, soonest first (then by id).
    public func pending(limit: Int? = nil) throws -> [Reminder] {
        try pendingWithChannels(limit: limit).map(\.reminder)
    }

    /// Calls `body` with each pending reminder, soonest first (then by id), as the rows arrive
    /// (one held at a time: `chime list` of 200,000 reminders). With `after`, only those after
    /// the pending reminder of that id in that order (the next page); with `limit`, at most that many.
    /// - Throws: `.notFound` when `after` names no pending reminder; what `body` throws.
    public func eachPending(after: String? = nil, limit: Int? = nil, _ body: (Reminder) throws -> Void) throws {
        let count = Int64(limit ?? Int(Int32.max))
        let query: PostgresQuery
        if let after {
            var due: Int64?
            for row in try client.rows("SELECT next_due_us FROM reminder WHERE id = \(after) AND state = 'pending'") {
                due = try row.decode(Int64.self)
            }
            guard let due else {
                throw ChimeError(
                    .notFound,
                    "no pending reminder has the id '\(after)' to list after: give the id of a pending reminder (the last one of the page before)"
                )
            }
            query = """
                SELECT \(unescaped: Self.reminderColumns) FROM reminder WHERE state = 'pending'
                AND (next_due_us, id) > (\(due), \(after)) ORDER BY next_due_us, id LIMIT \(count)
                """
        } else {
            query = """
                SELECT \(unescaped: Self.reminderColumns) FROM reminder WHERE state = 'pending'
                ORDER BY next_due_us, id LIMIT \(count)
                """
        }
        try client.forEachRow(query) { row in try body(try Self.reminder(from: row).reminder) }
    }

    /// ``pending(limit:)`` with each reminder's channel (which `Reminder` does not carry: the
    /// SQLite store has no channels), for `chime list --json`.
    public func pendingWithChannels(limit: Int? = nil) throws -> [(reminder: Reminder, channel: String)] {
        let rows = try client.rows(
            """
            SELECT \(unescaped: Self.reminderColumns), channel FROM reminder WHERE state = 'pending'
            ORDER BY next_due_us, id LIMIT \(Int64(limit ?? Int(Int32.max)))
            """
        )
        var result: [(reminder: Reminder, channel: String)] = []
        for row in rows {
            let reminder = try Self.reminder(from: row).reminder
            let channel = try row.makeRandomAccess()["channel"].decode(String.self)
            result.append((reminder, channel))
        }
        return result
    }

    static func now(_ connection: PostgresSession) throws -> Int64 {
        for row in try connection.rows("SELECT chime_now_us()") {
            return try row.decode(Int64.self)
        }
        throw ChimeError(.store, "the database did not answer SELECT chime_now_us()")
    }

    static func pendingKey(id: String, _ connection: PostgresSession) throws -> Int64? {
        let rows = try connection.rows(
            "SELECT key FROM reminder WHERE id = \(id) AND state = 'pending' FOR UPDATE"
        )
        for row in rows {
            let key = try row.decode(Int64.self)
            return key
        }
        return nil
    }

    /// `NOTIFY chime_changes, id`: delivered to the listeners when the transaction commits
    /// (PostgreSQL 15 docs, NOTIFY: "if a NOTIFY is executed inside a transaction, the notify
    /// events are not delivered until and unless the transaction is committed"). pg_notify()
    /// rather than NOTIFY, which takes no bound parameter.
    static func notifyChange(id: String, _ connection: PostgresSession) throws {
        try connection.run("SELECT pg_notify(\(changesChannel), \(id))")
    }

    /// A not-found error that says what became of the id, when it existed (as the SQLite store's).
    static func notFound(id: String, _ connection: PostgresSession) throws -> ChimeError {
        var last: String?
        let rows = try connection.rows(
            "SELECT state FROM reminder WHERE id = \(id) ORDER BY key DESC LIMIT 1"
        )
        for row in rows {
            let state = try row.decode(String.self)
            last = state
        }
        return .noPendingReminder(id: id, lastState: last)
    }
}

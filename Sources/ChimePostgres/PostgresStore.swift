import ChimeCore
import Foundation
import Logging
import PostgresNIO
import Synchronization

/// The reminder store on PostgreSQL, for several runners sharing one database (issue 20;
/// DESIGN.md "Beyond one machine"). The SQLite store (ChimeStore) stays the embedded default;
/// this one mirrors its scheduler side, asynchronously (postgres-nio is async):
///
/// - ``schedule(_:replace:systemZone:)``, ``cancel(id:)``, ``pending(limit:)``: as
///   `ReminderStore`'s, with the trigger in ChimeCore's ``TriggerColumns``. Scheduling records
///   the reminder's first occurrence in the ledger as `pending`.
/// - ``claimDue(owner:lease:channels:limit:)``: one statement takes the due occurrences of
///   the runner's channels under a lease (`FOR UPDATE SKIP LOCKED`), so two runners never take
///   the same one.
/// - ``stillWanted(_:owner:)``: the check just before a post (a cancel from any host after the claim).
/// - ``markPosted(_:owner:noteID:systemZone:)``: fenced on the lease; in the same transaction
///   the next occurrence of a recurring reminder is recorded (at most once: the ledger's key).
///   The runner marks an occurrence from ``claim(owner:lease:channels:limit:)`` (it carries
///   the trigger) with the same fence and effects in one statement.
///   ``markFailed(_:owner:retryAfter:error:)``: fenced too; back to pending with a retry time.
/// - ``reapExpiredLeases()``: any runner returns expired leases (there is no leader).
/// - ``nextDeadlines(channels:)``: what a runner's timer needs, with the database's now.
///
/// ``PostgresRunner`` is the loop over these.
///
/// Every time comparison uses the database's `now()` (through `chime_now_us()`), never the
/// host's clock. The client is postgres-nio's `PostgresClient` (a pool; README "Creating a
/// client": it works while its `run()` runs), which ``withStore(_:logger:_:)`` runs.
public final class PostgresStore: Sendable {
    /// The pool every statement goes through: the current one (see ``renewConnections()``).
    public var client: PostgresClient { pool.withLock { $0.client } }
    let logger: Logger

    /// The current client, and how many times it was replaced.
    private struct Pool {
        var client: PostgresClient
        var renewals = 0
    }

    private let pool: Mutex<Pool>
    /// What a new pool is made from; nil for a client the caller runs (it cannot be renewed).
    private let configuration: PostgresClient.Configuration?
    /// The clients to run, in order, for ``runClients()``: each replaces the one before.
    private let clients: (stream: AsyncStream<PostgresClient>, continuation: AsyncStream<PostgresClient>.Continuation)?

    /// The channel `NOTIFY`ed (in the same transaction) when a reminder is scheduled or cancelled;
    /// its payload is the reminder's id.
    public static let changesChannel = "chime_changes"

    /// A store on `client`, which the caller runs (`client.run()`). Its connections cannot be
    /// renewed (``renewConnections()`` returns false).
    public init(client: PostgresClient, logger: Logger = PostgresStore.silentLogger) {
        self.pool = Mutex(Pool(client: client))
        self.configuration = nil
        self.clients = nil
        self.logger = logger
    }

    /// A store that makes its clients from `configuration`; ``runClients()`` runs them.
    init(configuration: PostgresClient.Configuration, logger: Logger) {
        let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        let clients = AsyncStream<PostgresClient>.makeStream()
        clients.continuation.yield(client)
        self.pool = Mutex(Pool(client: client))
        self.configuration = configuration
        self.clients = clients
        self.logger = logger
    }

    /// How many times ``renewConnections()`` replaced the pool.
    public var renewals: Int { pool.withLock { $0.renewals } }

    /// Replaces the pool with a new one, so that every later statement goes over a connection
    /// made from now on, and ends the old one (its connections close once nothing holds them).
    ///
    /// For a failover (issue 20): a connection left on a node that has become read-only answers
    /// every write with SQLSTATE 25006 for as long as it lives, and postgres-nio's pool keeps an
    /// idle connection open and offers no way to drop one (1.33: `PostgresClient` has no such
    /// call), so the whole pool is made again. New connections reach whatever node the URL's
    /// host names now (the promoted primary, behind a moved address or socket).
    /// - Returns: false for a store on a client the caller runs, which is left as it is.
    @discardableResult
    public func renewConnections() -> Bool {
        guard let configuration, let clients else { return false }
        let fresh = PostgresClient(configuration: configuration, backgroundLogger: logger)
        pool.withLock { pool in
            pool.client = fresh
            pool.renewals += 1
        }
        clients.continuation.yield(fresh)
        return true
    }

    /// Runs the store's clients until the task is cancelled: each one until the next replaces
    /// it (``renewConnections()``), then cancels its `run()` (postgres-nio: that shuts the pool
    /// down, README "Creating a client"). All of it in child tasks, so that cancelling this
    /// task ends every pool.
    func runClients() async {
        guard let clients else { return }
        await withDiscardingTaskGroup { group in
            var retirePrevious: AsyncStream<Void>.Continuation?
            for await client in clients.stream {
                let (retired, retire) = AsyncStream<Void>.makeStream()
                group.addTask {
                    await withDiscardingTaskGroup { running in
                        running.addTask { await client.run() }
                        // Until the next client comes (or this task is cancelled).
                        for await _ in retired { break }
                        running.cancelAll()
                    }
                }
                retirePrevious?.finish()
                retirePrevious = retire
            }
        }
    }

    /// A logger that drops everything (postgres-nio logs each query at debug level).
    public static let silentLogger = Logger(label: "chime.postgres", factory: { _ in SwiftLogNoOpLogHandler() })

    /// Runs `body` with a store on a client of its own for `url`, running the client for the
    /// time of `body` and shutting it down after (by cancelling its `run()`, as postgres-nio's
    /// README says). `connections`: the most connections its pool opens (postgres-nio's default, 20,
    /// would let a few runners and tests exhaust a server's default 100).
    public static func withStore<Result: Sendable>(
        _ url: PostgresURL,
        connections: Int = 4,
        applicationName: String? = nil,
        logger: Logger = PostgresStore.silentLogger,
        _ body: @Sendable (PostgresStore) async throws -> Result
    ) async throws -> Result {
        var configuration = url.clientConfiguration(applicationName: applicationName)
        configuration.options.maximumConnections = max(1, connections)
        let store = PostgresStore(configuration: configuration, logger: logger)
        return try await withThrowingTaskGroup(of: Void.self, returning: Result.self) { group in
            group.addTask { await store.runClients() }
            defer { group.cancelAll() }
            return try await body(store)
        }
    }

    /// The database's clock: the instant every comparison of this store uses.
    public func databaseNow() async throws -> Date {
        let rows = try await client.rows("SELECT chime_now_us()", logger: logger)
        for row in rows {
            let micros = try row.decode(Int64.self)
            return Date(micros: micros)
        }
        throw ChimeError(.store, "the database did not answer SELECT chime_now_us()")
    }
}

// MARK: - Reminders

extension PostgresStore {
    /// The reminder columns ``reminder(from:)`` reads: its own, and the trigger's.
    static let reminderColumns =
        "key, id, kind, title, body, created_us, next_due_us, last_due_us, " + triggerColumnNames.joined(separator: ", ")

    /// The trigger columns of the reminder table, as ``triggerColumns(from:)`` reads them.
    static let triggerColumnNames = [
        "trigger_kind", "at_us", "times", "days", "zone", "interval_s", "anchor_us", "by_month", "by_month_day",
        "until_day", "rule_count", "count_start_us",
    ]

    /// A reminder's trigger from a row with the columns ``triggerColumnNames`` names.
    static func triggerColumns(from r: PostgresRandomAccessRow) throws -> TriggerColumns {
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
            lastDue: try r["last_due_us"].decode(Int64?.self).map(Date.init(micros:))
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
    ) async throws -> ScheduleResult {
        let checked = try new.validated()
        try Self.validateChannel(channel)
        return try await transaction { connection in
            let nowMicros = try await Self.now(connection, logger)
            guard let nextDue = checked.trigger.nextOccurrence(after: Date(micros: nowMicros), systemZone: systemZone) else {
                throw ChimeError(.usage, "'\(checked.title)' would never fire: its time is in the past")
            }
            var rng = SystemRandomNumberGenerator()
            var id = checked.id ?? ReminderIdentifier.generate(using: &rng)
            let existing = checked.id == nil ? nil : try await Self.pendingKey(id: id, connection, logger)
            if checked.id == nil {
                // A generated id taken by a pending reminder: draw again, longer after a few tries.
                var tries = 0
                while try await Self.pendingKey(id: id, connection, logger) != nil {
                    tries += 1
                    id = ReminderIdentifier.generate(length: 4 + tries / 3, using: &rng)
                }
            } else if let old = existing {
                guard replace else {
                    throw ChimeError(
                        .conflict,
                        "a pending reminder already has the id '\(id)': cancel it, choose another --id, or leave out --no-replace"
                    )
                }
                try await connection.run(
                    "UPDATE reminder SET state = 'replaced', ended_us = \(nowMicros) WHERE key = \(old)",
                    logger: logger
                )
                try await connection.run(
                    "UPDATE occurrence SET state = 'cancelled' WHERE reminder_key = \(old) AND state = 'pending'",
                    logger: logger
                )
            }
            let replaced = existing != nil
            let c = TriggerColumns(checked.trigger)
            let dueMicros = nextDue.micros
            // Another host inserting the same id at the same moment (neither saw the other's row
            // pending): the unique index on pending ids decides, and the loser is told as if it
            // had seen it (SQLSTATE 23505, unique_violation).
            let inserted: [PostgresRow]
            do {
                inserted = try await connection.rows(
                    """
                    INSERT INTO reminder (id, kind, title, body, trigger_kind, at_us, times, days, zone, interval_s, anchor_us,
                        by_month, by_month_day, until_day, rule_count, count_start_us, created_us, next_due_us, channel)
                    VALUES (\(id), \(checked.kind), \(checked.title), \(checked.body), \(c.kind), \(c.atMicros), \(c.times),
                        \(c.days), \(c.zone), \(c.intervalSeconds), \(c.anchorMicros), \(c.byMonth), \(c.byMonthDay),
                        \(c.untilDay), \(c.ruleCount), \(c.countStartMicros), \(nowMicros), \(dueMicros), \(channel))
                    RETURNING key
                    """,
                    logger: logger
                )
            } catch let error as PSQLError where error.serverInfo?[.sqlState] == "23505" {
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
            try await connection.run(
                "INSERT INTO occurrence (reminder_key, due_us) VALUES (\(key), \(dueMicros))",
                logger: logger
            )
            try await Self.notifyChange(id: id, connection, logger)
            let reminder = Reminder(
                id: id,
                title: checked.title,
                body: checked.body,
                trigger: checked.trigger,
                kind: checked.kind,
                createdAt: Date(micros: nowMicros),
                nextDue: Date(micros: dueMicros)
            )
            return ScheduleResult(reminder: reminder, replaced: replaced)
        }
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
    public func cancel(id: String) async throws -> Cancellation {
        // One id of ``cancelReporting(ids:)``, which holds the statements.
        let outcome = try await cancelReporting(ids: [id])
        return Cancellation(cancelled: outcome.cancelled[0], inFlight: outcome.inFlight.count)
    }

    /// The pending reminders, soonest first (then by id).
    public func pending(limit: Int? = nil) async throws -> [Reminder] {
        try await pendingWithChannels(limit: limit).map(\.reminder)
    }

    /// Calls `body` with each pending reminder, soonest first (then by id), as the rows arrive
    /// (one held at a time: `chime list` of 200,000 reminders). With `after`, only those after
    /// the pending reminder of that id in that order (the next page); with `limit`, at most that many.
    /// - Throws: `.notFound` when `after` names no pending reminder; what `body` throws.
    public func eachPending(after: String? = nil, limit: Int? = nil, _ body: (Reminder) throws -> Void) async throws {
        let count = Int64(limit ?? Int(Int32.max))
        let query: PostgresQuery
        if let after {
            var due: Int64?
            for try await row in try await client.query(
                "SELECT next_due_us FROM reminder WHERE id = \(after) AND state = 'pending'",
                logger: logger
            ) { due = try row.decode(Int64.self) }
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
        for try await row in try await client.query(query, logger: logger) { try body(try Self.reminder(from: row).reminder) }
    }

    /// ``pending(limit:)`` with each reminder's channel (which `Reminder` does not carry: the
    /// SQLite store has no channels), for `chime list --json`.
    public func pendingWithChannels(limit: Int? = nil) async throws -> [(reminder: Reminder, channel: String)] {
        let rows = try await client.rows(
            """
            SELECT \(unescaped: Self.reminderColumns), channel FROM reminder WHERE state = 'pending'
            ORDER BY next_due_us, id LIMIT \(Int64(limit ?? Int(Int32.max)))
            """,
            logger: logger
        )
        var result: [(reminder: Reminder, channel: String)] = []
        for row in rows {
            let reminder = try Self.reminder(from: row).reminder
            let channel = try row.makeRandomAccess()["channel"].decode(String.self)
            result.append((reminder, channel))
        }
        return result
    }

    static func now(_ connection: PostgresConnection, _ logger: Logger) async throws -> Int64 {
        for row in try await connection.rows("SELECT chime_now_us()", logger: logger) {
            return try row.decode(Int64.self)
        }
        throw ChimeError(.store, "the database did not answer SELECT chime_now_us()")
    }

    static func pendingKey(id: String, _ connection: PostgresConnection, _ logger: Logger) async throws -> Int64? {
        let rows = try await connection.rows(
            "SELECT key FROM reminder WHERE id = \(id) AND state = 'pending' FOR UPDATE",
            logger: logger
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
    static func notifyChange(id: String, _ connection: PostgresConnection, _ logger: Logger) async throws {
        try await connection.run("SELECT pg_notify(\(changesChannel), \(id))", logger: logger)
    }

    /// A not-found error that says what became of the id, when it existed (as the SQLite store's).
    static func notFound(id: String, _ connection: PostgresConnection, _ logger: Logger) async throws -> ChimeError {
        var last: String?
        let rows = try await connection.rows(
            "SELECT state FROM reminder WHERE id = \(id) ORDER BY key DESC LIMIT 1",
            logger: logger
        )
        for row in rows {
            let state = try row.decode(String.self)
            last = state
        }
        return .noPendingReminder(id: id, lastState: last)
    }
}

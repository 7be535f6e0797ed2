import ChimeCore
import Foundation
import Logging
import PostgresNIO

// What the CLI's commands need of the PostgreSQL store beyond the scheduler's side: a reminder
// by id (`chime next`), a cancel of several ids that is all or nothing (`chime cancel`, as on
// SQLite), what became of occurrences that were being posted when a cancel committed, how many
// runners are connected (`chime list`), and errors in one line.

extension PostgresStore {
    /// The pending reminder `id`.
    /// - Throws: `.notFound`, saying what became of it when it existed.
    public func reminder(id: String) async throws -> Reminder {
        try ReminderIdentifier.validate(id)
        return try await transaction { connection in
            let rows = try await connection.rows(
                "SELECT \(unescaped: Self.reminderColumns) FROM reminder WHERE id = \(id) AND state = 'pending'",
                logger: logger
            )
            for row in rows { return try Self.reminder(from: row).reminder }
            throw try await Self.notFound(id: id, connection, logger)
        }
    }

    /// An occurrence that was being posted (claimed under a lease) when a cancel committed.
    public struct InFlight: Sendable, Hashable {
        public var reminderID: String
        public var key: OccurrenceKey
    }

    /// Cancels the pending reminders `ids` in one transaction: all of them or none (the first id
    /// that is not pending throws `.notFound`, and nothing is cancelled), for every runner.
    /// Returns the cancelled reminders, in the order given, and their occurrences that were
    /// being posted as the cancel committed: a runner checks them once more just before its
    /// post; ``settle(_:timeout:)`` says what became of them.
    public func cancelReporting(ids: [String]) async throws -> (cancelled: [Reminder], inFlight: [InFlight]) {
        try ReminderIdentifier.validate(list: ids)
        return try await transaction { connection in
            var cancelled: [Reminder] = []
            var inFlight: [InFlight] = []
            for id in ids {
                let rows = try await connection.rows(
                    """
                    UPDATE reminder SET state = 'cancelled', ended_us = chime_now_us() WHERE id = \(id) AND state = 'pending'
                    RETURNING \(unescaped: Self.reminderColumns)
                    """,
                    logger: logger
                )
                var found: (key: Int64, reminder: Reminder)?
                for row in rows { found = try Self.reminder(from: row) }
                guard let found else { throw try await Self.notFound(id: id, connection, logger) }
                try await connection.run(
                    "UPDATE occurrence SET state = 'cancelled' WHERE reminder_key = \(found.key) AND state = 'pending'",
                    logger: logger
                )
                let posting = try await connection.rows(
                    "SELECT due_us FROM occurrence WHERE reminder_key = \(found.key) AND state = 'posting'",
                    logger: logger
                )
                for row in posting {
                    let due = try row.decode(Int64.self)
                    inFlight.append(InFlight(reminderID: id, key: OccurrenceKey(reminderKey: found.key, dueMicros: due)))
                }
                try await Self.notifyChange(id: id, connection, logger)
                cancelled.append(found.reminder)
            }
            return (cancelled, inFlight)
        }
    }

    /// What became of an occurrence that was being posted when its reminder was cancelled.
    public enum Settled: Sendable, Hashable {
        /// Its runner showed it (before it saw the cancel), at this instant.
        case posted(at: Date)
        /// Not shown: its runner (or the reaper, after its lease) recorded it cancelled.
        case notPosted
        /// Still being posted when the wait ended.
        case unknown
    }

    /// Waits, at most `timeout` (polling the ledger every 50 ms), until each of `inFlight` is no
    /// longer being posted, and says what became of it.
    public func settle(_ inFlight: [InFlight], timeout: Duration) async throws -> [Settled] {
        guard !inFlight.isEmpty else { return [] }
        let deadline = ContinuousClock.now + timeout
        while true {
            var states: [Settled] = []
            for item in inFlight {
                let rows = try await client.rows(
                    """
                    SELECT state, (extract(epoch FROM posted_at) * 1000000)::bigint FROM occurrence
                    WHERE reminder_key = \(item.key.reminderKey) AND due_us = \(item.key.dueMicros)
                    """,
                    logger: logger
                )
                var settled = Settled.unknown
                for row in rows {
                    let (state, posted) = try row.decode((String, Int64?).self)
                    switch state {
                    case "posted": settled = .posted(at: posted.map(Date.init(micros:)) ?? Date())
                    case "posting": settled = .unknown
                    default: settled = .notPosted
                    }
                }
                states.append(settled)
            }
            if !states.contains(.unknown) || ContinuousClock.now >= deadline { return states }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// Hands back occurrences `owner` claimed and will not post (a runner stopping): they are due
    /// again at once for any runner, which a notification wakes, rather than after the lease.
    /// Fenced like the mark. Returns how many it handed back.
    @discardableResult
    public func release(_ keys: [OccurrenceKey], owner: String) async throws -> Int {
        guard !keys.isEmpty else { return 0 }
        let reminderKeys = keys.map(\.reminderKey)
        let dues = keys.map(\.dueMicros)
        return try await transaction { connection in
            let released = try await connection.run(
                """
                UPDATE occurrence SET state = 'pending', lease_owner = NULL, lease_until = NULL
                WHERE state = 'posting' AND lease_owner = \(owner)
                  AND (reminder_key, due_us) IN (SELECT * FROM unnest(\(reminderKeys)::bigint[], \(dues)::bigint[]))
                RETURNING 1
                """,
                logger: logger
            )
            if released > 0 { try await Self.notifyChange(id: "", connection, logger) }
            return released
        }
    }

    /// The application name a runner's connections carry (`chime list` counts them).
    public static let runnerApplicationName = "chime run"

    /// How many runners are connected to this database now: their LISTEN connections, one
    /// each, named "chime run OWNER listen" in `pg_stat_activity`.
    public func runnerCount() async throws -> Int {
        let rows = try await client.rows(
            """
            SELECT count(*) FROM pg_stat_activity
            WHERE datname = current_database() AND application_name LIKE \(Self.runnerApplicationName + " % listen")
            """,
            logger: logger
        )
        for row in rows { return Int(try row.decode(Int64.self)) }
        return 0
    }
}

extension PostgresStore {
    /// Runs `body` with a store for `url`, as ``withStore(_:connections:logger:_:)``, after one
    /// direct connection has shown that the server is there and lets this user in: the pool
    /// would otherwise retry connecting for as long as a query waits, and a command would hang
    /// on a server that is down. Errors become one-line ``ChimeError``s (``storeError(_:url:)``).
    public static func withCheckedStore<Result: Sendable>(
        _ url: PostgresURL,
        connections: Int = 1,
        applicationName: String? = nil,
        logger: Logger = PostgresStore.silentLogger,
        _ body: @Sendable (PostgresStore) async throws -> Result
    ) async throws -> Result {
        do {
            let probe = try await PostgresConnection.connect(
                configuration: url.connectionConfiguration(applicationName: applicationName),
                id: 0,
                logger: logger
            )
            try? await probe.close()
            return try await withStore(url, connections: connections, applicationName: applicationName, logger: logger, body)
        } catch let error as ChimeError {
            throw error
        } catch {
            throw storeError(error, url: url)
        }
    }

    /// A database error in one line for a person: what the server said (and its SQLSTATE), or
    /// why there was no answer. A missing table means the schema was never made: say how.
    public static func storeError(_ error: any Error, url: PostgresURL) -> ChimeError {
        if let error = error as? PSQLError {
            if let message = error.serverInfo?[.message] {
                let state = error.serverInfo?[.sqlState] ?? ""
                if state == "42P01" || state == "42883" {
                    return ChimeError(.store, "the PostgreSQL store \(url) has no Chime schema yet: run 'chime store init'")
                }
                return ChimeError(.store, "the PostgreSQL store \(url): \(message) (SQLSTATE \(state))")
            }
            if let underlying = error.underlying {
                return ChimeError(.store, "cannot reach the PostgreSQL store \(url): \(oneLine(String(describing: underlying)))")
            }
            return ChimeError(.store, "the PostgreSQL store \(url): \(error.code)")
        }
        return ChimeError(.store, "the PostgreSQL store \(url): \(oneLine(String(describing: error)))")
    }

    static func oneLine(_ text: String) -> String {
        text.split(whereSeparator: \.isNewline).joined(separator: " ")
    }
}

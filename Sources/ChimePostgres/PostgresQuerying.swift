import ChimeCore
import Logging
import PostgresNIO

extension PostgresConnection {
    /// Runs `query` and reads every row it returns. Every statement of the store goes through
    /// here (or ``run(_:logger:)``): postgres-nio hands back a query's row sequence before the
    /// statement has finished, and a failure that comes after (a unique violation, say) arrives
    /// only to whoever reads the sequence to its end. Unread, it was lost, the transaction
    /// aborted, and the COMMIT that followed rolled back without a word.
    func rows(_ query: PostgresQuery, logger: Logger) async throws -> [PostgresRow] {
        var rows: [PostgresRow] = []
        for try await row in try await self.query(query, logger: logger) { rows.append(row) }
        return rows
    }

    /// Runs `query` to its end; returns how many rows it returned.
    @discardableResult
    func run(_ query: PostgresQuery, logger: Logger) async throws -> Int {
        try await rows(query, logger: logger).count
    }
}

extension PostgresClient {
    /// ``PostgresConnection/rows(_:logger:)`` on a connection of the pool.
    func rows(_ query: PostgresQuery, logger: Logger) async throws -> [PostgresRow] {
        var rows: [PostgresRow] = []
        for try await row in try await self.query(query, logger: logger) { rows.append(row) }
        return rows
    }

    /// `statement` on a connection of the pool, prepared there the first time (postgres-nio
    /// keeps it for the connection's life), every row read to the end as ``rows(_:logger:)`` does.
    func prepared<Statement: PostgresPreparedStatement>(
        _ statement: Statement,
        logger: Logger
    ) async throws -> [Statement.Row] {
        var rows: [Statement.Row] = []
        for try await row in try await self.execute(statement, logger: logger) { rows.append(row) }
        return rows
    }

    /// ``PostgresConnection/run(_:logger:)`` on a connection of the pool.
    @discardableResult
    func run(_ query: PostgresQuery, logger: Logger) async throws -> Int {
        try await rows(query, logger: logger).count
    }
}

extension PostgresStore {
    /// `body` in a transaction (postgres-nio's `withTransaction`: BEGIN, COMMIT, or ROLLBACK when
    /// `body` throws), rethrowing `body`'s own error as it was rather than wrapped in a
    /// `PostgresTransactionError`, so that a ``ChimeError`` reaches the caller as one.
    func transaction<Result: Sendable>(_ body: (PostgresConnection) async throws -> Result) async throws -> Result {
        do {
            return try await client.withTransaction(logger: logger) { connection in try await body(connection) }
        } catch let error as PostgresTransactionError {
            if let closureError = error.closureError { throw closureError }
            throw error
        }
    }
}

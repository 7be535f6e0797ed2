import ChimeCore
import ChimePostgres
import Foundation

/// The real PostgreSQL server these tests run against: one per test run, started by
/// scripts/test (scripts/postgres-server), found through `CHIME_TEST_POSTGRES_URL`. Each test
/// makes a database of its own on it (``withFreshDatabase(_:)``), so tests are independent and
/// may run in parallel.
enum TestServer {
    static let variable = "CHIME_TEST_POSTGRES_URL"

    /// Thrown when no server was started: the test fails with this one line (never skipped).
    struct NotStarted: Error, CustomStringConvertible {
        var description: String {
            "\(TestServer.variable) is not set: the PostgreSQL tests need a real server; run scripts/test, or "
                + "scripts/postgres-server start /tmp/chime-pg && . /tmp/chime-pg/env before swift test"
        }
    }

    static func url(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> PostgresURL {
        guard let text = environment[variable], !text.isEmpty else { throw NotStarted() }
        return try PostgresURL(text, environment: environment)
    }
}

/// Runs `body` with a database of its own on the test server, dropped afterwards (also when
/// `body` throws). With `migrated`, the store's schema is applied first.
func withFreshDatabase(migrated: Bool = true, _ body: @Sendable (PostgresURL) async throws -> Void) async throws {
    let server = try TestServer.url()
    // An identifier made here of [a-z0-9_] only: CREATE DATABASE takes no bound parameter.
    let name = "chime_test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
    try await PostgresStore.withStore(server) { admin in
        try admin.client.run(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"))
    }
    let url = server.with(database: name)
    do {
        if migrated { _ = try await PostgresStore.withStore(url) { try $0.migrate() } }
        try await body(url)
    } catch {
        try? await dropDatabase(name, on: server)
        throw error
    }
    try await dropDatabase(name, on: server)
}

private func dropDatabase(_ name: String, on server: PostgresURL) async throws {
    try await PostgresStore.withStore(server) { admin in
        // FORCE (PostgreSQL 13+): a client shut down a moment ago may still be disconnecting.
        try admin.client.run(PostgresQuery(unsafeSQL: "DROP DATABASE IF EXISTS \(name) WITH (FORCE)"))
    }
}

extension PostgresStore {
    /// Moves every stored instant `seconds` earlier (due times, reminders' instants, retry
    /// times): for the store, the database's clock moved on by that much. Time is injected through SQL; no test sleeps for it.
    func advanceClock(by seconds: Double) throws {
        let micros = Int64((seconds * 1_000_000).rounded())
        // Through negative values: the ledger's key (reminder, due) is checked row by row, and
        // moving a due onto its neighbour's old value would collide half-way.
        try client.transaction { connection in
            try connection.run("UPDATE occurrence SET due_us = -(due_us - \(micros))")
            try connection.run("UPDATE occurrence SET due_us = -due_us")
            // What answers and quiet keep: the alert a snooze re-alerts, since when one is held,
            // when it was shown and answered; the quiet asked for by hand.
            try connection.run(
                """
                UPDATE occurrence SET snooze_of_us = snooze_of_us - \(micros), held_us = held_us - \(micros),
                    posted_at = posted_at - \(micros) * interval '1 microsecond',
                    answered_at = answered_at - \(micros) * interval '1 microsecond'
                """
            )
            try connection.run(
                "UPDATE quiet SET until_us = until_us - \(micros), window_off_until_us = window_off_until_us - \(micros)"
            )
            // A failed post's retry time too (leases are ended by expireLeases()).
            try connection.run(
                "UPDATE occurrence SET retry_at = retry_at - \(micros) * interval '1 microsecond' WHERE retry_at IS NOT NULL"
            )
            try connection.run(
                """
                UPDATE reminder SET next_due_us = next_due_us - \(micros), last_due_us = last_due_us - \(micros),
                    at_us = at_us - \(micros), anchor_us = anchor_us - \(micros), created_us = created_us - \(micros)
                """
            )
        }
    }

    /// Ends every lease now, by the database's clock (as if the lease's time had passed).
    func expireLeases() throws {
        try client.run("UPDATE occurrence SET lease_until = now() - interval '1 millisecond' WHERE state = 'posting'")
    }

    /// The ledger of reminder `id`: each occurrence's due instant and state, by due instant.
    func ledger(id: String) throws -> [(due: Int64, state: String, owner: String?, note: String?)] {
        try client.rows(
            """
            SELECT o.due_us, o.state, o.lease_owner, o.note_id FROM occurrence o JOIN reminder r ON r.key = o.reminder_key
            WHERE r.id = \(id) ORDER BY o.due_us
            """
        ).map { row in
            let (due, state, owner, note) = try row.decode((Int64, String, String?, String?).self)
            return (due, state, owner, note)
        }
    }

    func count(_ sql: String) throws -> Int {
        var count = 0
        for row in try client.rows(PostgresQuery(unsafeSQL: sql)) { count = Int(try row.decode(Int64.self)) }
        return count
    }

    /// Runs `sql` on the store's connection.
    func run(_ sql: String) throws {
        try client.run(PostgresQuery(unsafeSQL: sql))
    }
}

import ChimeCore
import Foundation

// What the CLI's commands need of the PostgreSQL store beyond the scheduler's side: a reminder
// by id (`chime next`), a cancel of several ids that is all or nothing (`chime cancel`, as on
// SQLite), what became of occurrences that were being posted when a cancel committed, how many
// runners are connected (`chime list`), and errors in one line.

extension PostgresStore {
    /// The pending reminder `id`.
    /// - Throws: `.notFound`, saying what became of it when it existed.
    public func reminder(id: String) throws -> Reminder {
        try ReminderIdentifier.validate(id)
        return try transaction { connection in
            let rows = try connection.rows(
                "SELECT \(unescaped: Self.reminderColumns) FROM reminder WHERE id = \(id) AND state = 'pending'"
            )
            for row in rows { return try Self.reminder(from: row).reminder }
            throw try Self.notFound(id: id, connection)
        }
    }

    /// An occurrence that was being posted (claimed under a lease) when a cancel committed.
    public struct InFlight: Sendable, Hashable {
        public var reminderID: String
        public var key: OccurrenceKey
    }

    /// A one-shot's alert that was showing when it was cancelled (as the SQLite store's
    /// `Cancellation.Closed`): the cancel came too late for it.
    public struct Closed: Sendable, Hashable {
        public var reminderID: String
        public var due: Date
        public var posted: Date
    }

    /// Cancels the pending reminders `ids` in one transaction: all of them or none (the first id
    /// that is neither pending nor a one-shot still showing throws `.notFound`, and nothing is
    /// cancelled), for every runner. Returns the cancelled reminders, in the order given, their
    /// occurrences that were being posted as the cancel committed (a runner checks them once
    /// more just before its post; ``settle(_:timeout:)`` says what became of them), and the
    /// one-shots among them that had fired and were still showing (``Closed``: shown within a
    /// day, unanswered; `cancelled` is recorded as their answer), as the SQLite store does.
    public func cancelReporting(ids: [String]) throws -> (cancelled: [Reminder], inFlight: [InFlight], closed: [Closed]) {
        try ReminderIdentifier.validate(list: ids)
        return try transaction { connection in
            var cancelled: [Reminder] = []
            var inFlight: [InFlight] = []
            var closed: [Closed] = []
            for id in ids {
                let rows = try connection.rows(
                    """
                    UPDATE reminder SET state = 'cancelled', ended_us = chime_now_us() WHERE id = \(id) AND state = 'pending'
                    RETURNING \(unescaped: Self.reminderColumns)
                    """
                )
                var found: (key: Int64, reminder: Reminder)?
                for row in rows { found = try Self.reminder(from: row) }
                if found == nil {
                    // A one-shot that fired, with an alert still to come: a snooze's re-alert, or
                    // one quiet holds. Cancelled as a pending one is, as on SQLite.
                    let waiting = try connection.rows(
                        """
                        UPDATE reminder SET state = 'cancelled', ended_us = chime_now_us()
                        WHERE key = (
                            SELECT r.key FROM reminder r WHERE r.id = \(id) AND r.state = 'done'
                              AND EXISTS (SELECT 1 FROM occurrence o WHERE o.reminder_key = r.key AND o.state IN ('pending', 'posting'))
                            ORDER BY r.key DESC LIMIT 1)
                        RETURNING \(unescaped: Self.reminderColumns)
                        """
                    )
                    for row in waiting { found = try Self.reminder(from: row) }
                }
                guard let found else {
                    if let shown = try Self.cancelShown(id: id, connection) {
                        // The runner that shows it closes it (at commit), as on SQLite.
                        try Self.notifyAlerts(Withdrawal(id: id), connection)
                        cancelled.append(shown.reminder)
                        closed.append(shown.closed)
                        continue
                    }
                    throw try Self.notFound(id: id, connection)
                }
                try connection.run(
                    "UPDATE occurrence SET state = 'cancelled' WHERE reminder_key = \(found.key) AND state = 'pending'"
                )
                let posting = try connection.rows(
                    "SELECT due_us FROM occurrence WHERE reminder_key = \(found.key) AND state = 'posting'"
                )
                for row in posting {
                    let due = try row.decode(Int64.self)
                    inFlight.append(InFlight(reminderID: id, key: OccurrenceKey(reminderKey: found.key, dueMicros: due)))
                }
                try Self.notifyChange(id: id, connection)
                // Its alerts still on a desktop go too (closed by the runner that showed them).
                try Self.notifyAlerts(Withdrawal(id: id), connection)
                cancelled.append(found.reminder)
            }
            return (cancelled, inFlight, closed)
        }
    }

    /// How long after it was shown an unanswered alert counts as still showing (the SQLite
    /// store's `showingWindow`): a day.
    static let showingWindowMicros: Int64 = 86_400_000_000

    /// Cancels the alert showing for the one-shot `id` that has fired (its latest posted
    /// occurrence, shown within a day by the database's clock, not answered): records `cancelled`
    /// as its answer, in the caller's transaction, as the SQLite store's `cancelShown`. Returns the
    /// reminder and its alert, or nil when no such alert is showing.
    ///
    /// The caller asks the runner that showed the alert to close it (``notifyAlerts(_:_:)``).
    static func cancelShown(id: String, _ connection: PostgresSession) throws -> (reminder: Reminder, closed: Closed)? {
        let columns = reminderColumns.split(separator: ", ").map { "r." + $0 }.joined(separator: ", ")
        let rows = try connection.rows(
            """
            WITH last AS (
                SELECT o.reminder_key, o.due_us, o.posted_at, o.response FROM occurrence o JOIN reminder r ON r.key = o.reminder_key
                WHERE r.id = \(id) AND o.state = 'posted' ORDER BY o.posted_at DESC LIMIT 1)
            UPDATE occurrence o SET response = 'cancelled', answered_at = now()
            FROM last, reminder r
            WHERE o.reminder_key = last.reminder_key AND o.due_us = last.due_us AND o.response IS NULL
              AND (extract(epoch FROM last.posted_at) * 1000000)::bigint >= chime_now_us() - \(showingWindowMicros)
              AND r.key = o.reminder_key AND r.state = 'done' AND r.trigger_kind = 'once'
            RETURNING o.due_us AS shown_due_us, (extract(epoch FROM o.posted_at) * 1000000)::bigint AS shown_posted_us,
                \(unescaped: columns)
            """
        )
        for row in rows {
            let r = row.makeRandomAccess()
            let reminder = try Self.reminder(from: row).reminder
            let closed = Closed(
                reminderID: reminder.id,
                due: Date(micros: try r["shown_due_us"].decode(Int64.self)),
                posted: Date(micros: try r["shown_posted_us"].decode(Int64.self))
            )
            return (reminder, closed)
        }
        return nil
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
            let states = try settledStates(inFlight)
            if !states.contains(.unknown) || ContinuousClock.now >= deadline { return states }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// ``settle(_:timeout:)`` blocking the calling thread: for a thread of its own that must not
    /// wait on Swift's cooperative pool (the D-Bus service's worker).
    public func settleBlocking(_ inFlight: [InFlight], timeout: Duration) throws -> [Settled] {
        guard !inFlight.isEmpty else { return [] }
        let deadline = ContinuousClock.now + timeout
        while true {
            let states = try settledStates(inFlight)
            if !states.contains(.unknown) || ContinuousClock.now >= deadline { return states }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    /// What became of each of `inFlight` so far.
    private func settledStates(_ inFlight: [InFlight]) throws -> [Settled] {
        var states: [Settled] = []
        for item in inFlight {
            let rows = try client.rows(
                """
                SELECT state, (extract(epoch FROM posted_at) * 1000000)::bigint FROM occurrence
                WHERE reminder_key = \(item.key.reminderKey) AND due_us = \(item.key.dueMicros)
                """
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
        return states
    }

    /// The app ids of the pending reminders scheduled by apps (``Reminder/appID``), sorted (as
    /// the SQLite store's).
    public func pendingAppIDs() throws -> [String] {
        try client.rows("SELECT DISTINCT app_id FROM reminder WHERE state = 'pending' AND app_id IS NOT NULL ORDER BY 1").map {
            try $0.decode(String.self)
        }
    }

    /// The app id of the latest reminder with `id`, pending or not (the one whose alert was
    /// answered); nil when it has none or there is no such reminder.
    public func appID(ofReminder id: String) throws -> String? {
        for row in try client.rows("SELECT app_id FROM reminder WHERE id = \(id) ORDER BY key DESC LIMIT 1") {
            return try row.decode(String?.self)
        }
        return nil
    }

    /// Hands back occurrences `owner` claimed and will not post (a runner stopping): they are due
    /// again at once for any runner, which a notification wakes, rather than after the lease.
    /// Fenced like the mark. Returns how many it handed back.
    @discardableResult
    public func release(_ keys: [OccurrenceKey], owner: String) throws -> Int {
        guard !keys.isEmpty else { return 0 }
        let reminderKeys = keys.map(\.reminderKey)
        let dues = keys.map(\.dueMicros)
        return try transaction { connection in
            let released = try connection.run(
                """
                UPDATE occurrence SET state = 'pending', lease_owner = NULL, lease_until = NULL
                WHERE state = 'posting' AND lease_owner = \(owner)
                  AND (reminder_key, due_us) IN (SELECT * FROM unnest(\(reminderKeys)::bigint[], \(dues)::bigint[]))
                RETURNING 1
                """
            )
            if released > 0 { try Self.notifyChange(id: "", connection) }
            return released
        }
    }

    /// The application name a runner's connections carry (`chime list` counts them).
    public static let runnerApplicationName = "chime run"

    /// How many runners are connected to this database now: their LISTEN connections, one
    /// each, named "chime run OWNER listen" in `pg_stat_activity`.
    public func runnerCount() throws -> Int {
        let rows = try client.rows(
            """
            SELECT count(*) FROM pg_stat_activity
            WHERE datname = current_database() AND application_name LIKE \(Self.runnerApplicationName + " % listen")
            """
        )
        for row in rows { return Int(try row.decode(Int64.self)) }
        return 0
    }
}

extension PostgresStore {
    /// Runs `body` with a store for `url`, once its connection is made: a server that is down,
    /// or that does not let this user in, is one line after libpq's connect timeout rather than
    /// an error from the first statement. Errors become one-line ``ChimeError``s
    /// (``storeError(_:url:)``).
    public static func withCheckedStore<Result: Sendable>(
        _ url: PostgresURL,
        applicationName: String? = nil,
        _ body: (PostgresStore) async throws -> Result
    ) async throws -> Result {
        do {
            return try await withStore(url, applicationName: applicationName) { store in
                try store.client.withSession { _ in }
                return try await body(store)
            }
        } catch let error as ChimeError {
            throw error
        } catch let error as PostgresError where error.sqlState.map(Self.missingObject.contains) == true {
            // A table, column or function this Chime uses is not there: an older Chime's
            // schema (its migrations say which are missing), or none at all.
            if let missing = try? await withStore(url, { try $0.missingMigrations() }), !missing.isEmpty,
                missing.count < PostgresSchema.migrations.count
            {
                throw ChimeError(
                    .store,
                    "the PostgreSQL store \(url) has the schema of an older Chime (missing \(missing.joined(separator: ", "))): run 'chime store init'",
                    cause: error
                )
            }
            throw storeError(error, url: url)
        } catch {
            throw storeError(error, url: url)
        }
    }

    /// SQLSTATEs of an object that is not there: undefined table, column, function.
    static let missingObject: Set<String> = ["42P01", "42703", "42883"]

    /// A database error in one line for a person: what the server said (and its SQLSTATE), or
    /// why there was no answer. A missing table means the schema was never made: say how.
    public static func storeError(_ error: any Error, url: PostgresURL) -> ChimeError {
        guard let error = error as? PostgresError else {
            return ChimeError(.store, "the PostgreSQL store \(url): \(oneLine(String(describing: error)))")
        }
        switch error.kind {
        case .server:
            let state = error.sqlState ?? ""
            if state == "42P01" || state == "42883" {
                return ChimeError(.store, "the PostgreSQL store \(url) has no Chime schema yet: run 'chime store init'", cause: error)
            }
            // A column this Chime reads is not there: the schema was made by an older Chime.
            if state == "42703" {
                return ChimeError(
                    .store,
                    "the PostgreSQL store \(url) has the schema of an older Chime: run 'chime store init'",
                    cause: error
                )
            }
            return ChimeError(.store, "the PostgreSQL store \(url): \(error.message) (SQLSTATE \(state))", cause: error)
        case .connection:
            return ChimeError(.store, "cannot reach the PostgreSQL store \(url): \(Redaction.redacted(error.message))", cause: error)
        case .decoding:
            return ChimeError(.store, "the PostgreSQL store \(url): \(error.message)", cause: error)
        }
    }

    static func oneLine(_ text: String) -> String {
        text.split(whereSeparator: \.isNewline).joined(separator: " ")
    }
}

extension PostgresStore {
    /// How many reminders are pending (`chime doctor`).
    public func pendingCount() throws -> Int {
        for row in try client.rows("SELECT count(*) FROM reminder WHERE state = 'pending'") {
            return Int(try row.decode(Int64.self))
        }
        return 0
    }
}

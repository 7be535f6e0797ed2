import ChimeCore
import Foundation
import GRDB

/// One row of the delivery ledger, for `chime` and tests to inspect.
public struct LedgerEntry: Sendable, Hashable {
    public var reminderID: String
    public var due: Date
    public var state: String
    public var missedCount: Int
    public var postedAt: Date?
    public var attempts: Int
    public var lastError: String?
    /// What the person did with the alert: an action's key, or `closed:<reason>`.
    public var response: String?
}

extension ReminderStore {
    /// Schedules one reminder. With `replace`, a pending reminder with the same id is replaced
    /// (its undelivered occurrences cancelled); without, that is a `.conflict`.
    @discardableResult
    public func schedule(_ new: NewReminder, replace: Bool = true, now: Date, systemZone: TimeZone) throws(ChimeError) -> ScheduleResult {
        try scheduleBatch([new], replace: replace, now: now, systemZone: systemZone)[0]
    }

    /// Schedules many reminders in one transaction: all of them, or none.
    public func scheduleBatch(
        _ batch: [NewReminder],
        replace: Bool = true,
        now: Date,
        systemZone: TimeZone
    ) throws(ChimeError) -> [ScheduleResult] {
        let validated = try Self.validate(batch, now: now, systemZone: systemZone)
        return try write { db in
            var rng = SystemRandomNumberGenerator()
            return try Self.insert(validated, replace: replace, nowMicros: now.micros, rng: &rng, in: db)
        }
    }

    /// Each reminder of `batch` checked, with its first due instant; `name(i)` prefixes the
    /// message of an error about the reminder at `firstIndex + i` ("reminders.json: reminder 3").
    /// With `prevalidated`, each is taken to be `validated()` already (its checks are not run
    /// again); with `pastOneShots`, a one-shot whose time has passed is due at that time.
    static func validate(
        _ batch: [NewReminder],
        now: Date,
        systemZone: TimeZone,
        firstIndex: Int = 0,
        name: ((Int) -> String)? = nil,
        prevalidated: Bool = false,
        pastOneShots: Bool = false
    ) throws(ChimeError) -> [(reminder: NewReminder, nextDue: Int64)] {
        var validated: [(reminder: NewReminder, nextDue: Int64)] = []
        validated.reserveCapacity(batch.count)
        for (offset, new) in batch.enumerated() {
            do throws(ChimeError) {
                let checked = prevalidated ? new : try new.validated()
                if pastOneShots, case .once(let at) = checked.trigger, at <= now {
                    validated.append((checked, at.micros))
                    continue
                }
                guard let nextDue = checked.trigger.nextOccurrence(after: now, systemZone: systemZone) else {
                    if case .bounded(_, let end) = checked.trigger {
                        throw ChimeError(
                            .usage,
                            "'\(checked.title)' would never fire: its rule ends (\(end.summary)) before its first occurrence"
                        )
                    }
                    throw ChimeError(.usage, "'\(checked.title)' would never fire: its time is in the past")
                }
                validated.append((checked, nextDue.micros))
            } catch {
                guard let name else { throw error }
                throw ChimeError(error.code, "\(name(firstIndex + offset)): \(error.message)")
            }
        }
        return validated
    }

    /// Inserts `validated` in the open transaction of `db`; see ``scheduleBatch(_:replace:now:systemZone:)``.
    static func insert(
        _ validated: [(reminder: NewReminder, nextDue: Int64)],
        replace: Bool,
        nowMicros: Int64,
        rng: inout SystemRandomNumberGenerator,
        in db: Database,
        firstIndex: Int = 0,
        name: ((Int) -> String)? = nil,
        inserts: BatchInsert.Pair? = nil,
        streamAfterKey: Int64? = nil
    ) throws -> [ScheduleResult] {
        let rows = validated.map { new, nextDue in
            BatchInsert.Row(
                id: new.id ?? ReminderIdentifier.generate(using: &rng),
                new: new,
                columns: TriggerColumns(new.trigger),
                nextDueMicros: nextDue
            )
        }
        var results: [ScheduleResult] = []
        results.reserveCapacity(rows.count)
        func result(_ row: BatchInsert.Row, replaced: Bool) -> ScheduleResult {
            let reminder = Reminder(
                id: row.id,
                title: row.new.title,
                body: row.new.body,
                trigger: row.new.trigger,
                kind: row.new.kind,
                createdAt: Date(micros: nowMicros),
                nextDue: Date(micros: row.nextDueMicros),
                presentation: row.new.presentation,
                command: row.new.command,
                appID: row.new.appID
            )
            return ScheduleResult(reminder: reminder, replaced: replaced)
        }
        // v8's columns (a monthly or yearly rule, a rule's end), set after the insert: few rows
        // have them, and binding them in BatchInsert would cost every one-shot of a large batch.
        let extras = try db.cachedStatement(
            sql: """
                UPDATE reminder SET by_month = ?, by_month_day = ?, until_day = ?, rule_count = ?, count_start_us = ?
                WHERE id = ? AND state = 'pending'
                """
        )
        // v10's command, set after the insert as v8's columns are.
        let setCommand = try db.cachedStatement(sql: "UPDATE reminder SET command = ? WHERE id = ? AND state = 'pending'")
        // v11's app id and actions, set after the insert as v8's columns are.
        let setApp = try db.cachedStatement(sql: "UPDATE reminder SET app_id = ?, actions = ? WHERE id = ? AND state = 'pending'")
        func setExtras(_ row: BatchInsert.Row) throws {
            if let command = row.new.command { try setCommand.execute(arguments: [command.stored, row.id]) }
            if row.new.appID != nil || !row.new.presentation.actions.isEmpty {
                try setApp.execute(arguments: [row.new.appID, row.new.presentation.storedActions, row.id])
            }
            let c = row.columns
            guard c.byMonthDay != nil || c.untilDay != nil || c.ruleCount != nil else { return }
            try extras.execute(arguments: [c.byMonth, c.byMonthDay, c.untilDay, c.ruleCount, c.countStartMicros, row.id])
        }
        let single = try inserts?.single ?? BatchInsert(db, rowsPerStatement: 1)
        let chunk = rows.count >= Self.insertChunk ? try inserts?.chunk ?? BatchInsert(db, rowsPerStatement: Self.insertChunk) : nil
        var index = 0
        while index < rows.count {
            // Fast path: a whole chunk in one statement. A taken id anywhere in it fails the
            // statement (nothing inserted), and the rows go one by one below.
            if let chunk, rows.count - index >= Self.insertChunk {
                let slice = rows[index..<(index + Self.insertChunk)]
                do {
                    try chunk.insert(slice, createdMicros: nowMicros)
                    for row in slice {
                        try setExtras(row)
                        results.append(result(row, replaced: false))
                    }
                    index += Self.insertChunk
                    continue
                } catch let error as DatabaseError where error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE {}
            }
            var row = rows[index]
            var generatedTries = 0
            var replaced = false
            while true {
                do {
                    try single.insert([row][...], createdMicros: nowMicros)
                    break
                } catch let error as DatabaseError where error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE {
                    if let streamAfterKey, row.new.id != nil, !replaced,
                        let key = try Int64.fetchOne(
                            db.cachedStatement(sql: "SELECT key FROM reminder WHERE id = ? AND state = 'pending'"),
                            arguments: [row.id]
                        ), key > streamAfterKey
                    {
                        // Made by this stream: the n-th row it inserted is its n-th reminder.
                        let message = "the id '\(row.id)' is also reminder \(key - streamAfterKey)'s: give each reminder its own id"
                        throw ChimeError(.usage, name.map { "\($0(firstIndex + index)): \(message)" } ?? message)
                    }
                    if row.new.id == nil {
                        // Taken by a pending reminder: draw again, longer once the short ones get crowded.
                        generatedTries += 1
                        row.id = ReminderIdentifier.generate(length: 4 + generatedTries / 3, using: &rng)
                    } else if replace && !replaced {
                        try Self.end(id: row.id, as: "replaced", at: nowMicros, in: db)
                        replaced = true
                    } else {
                        let message =
                            "a pending reminder already has the id '\(row.id)': cancel it, choose another --id, or leave out --no-replace"
                        throw ChimeError(.conflict, name.map { "\($0(firstIndex + index)): \(message)" } ?? message)
                    }
                }
            }
            try setExtras(row)
            results.append(result(row, replaced: replaced))
            index += 1
        }
        return results
    }

    /// Rows per INSERT statement in a batch (17 values each, well under SQLite's 32,766).
    static let insertChunk = 64

    /// Cancels the pending reminder `id`, and any of its occurrences not yet posted.
    /// - Throws: `.notFound` when no pending reminder has that id (saying whether it fired or was cancelled).
    @discardableResult
    public func cancel(id: String, now: Date) throws(ChimeError) -> Reminder {
        try cancel(ids: [id], now: now)[0]
    }

    /// Cancels every reminder in `ids` in one transaction: all of them, or (when one is neither
    /// pending nor waiting to be posted) none, with `.notFound` naming it.
    ///
    /// A one-shot whose occurrence is recorded but not yet posted (the notifier failing, or
    /// within the scheduler's look-ahead) is still cancellable: it has not been shown.
    @discardableResult
    public func cancel(ids: [String], now: Date) throws(ChimeError) -> [Reminder] {
        try cancelReporting(ids: ids, now: now).cancelled
    }

    /// What ``cancelReporting(ids:now:)`` did: the reminders cancelled, and their occurrences
    /// that were already recorded as due (a runner may have staged them for their instant, or
    /// be showing one right now: `chime cancel` asks the runner about these).
    public struct Cancellation: Sendable {
        public var cancelled: [Reminder]
        public var inFlight: [InFlight]
        /// One-shots among ``cancelled`` that had fired and whose alert was still showing (shown
        /// lately, unanswered): the answer `cancelled` is recorded, and the caller closes the
        /// alert (and says the cancel came too late for it).
        public var closed: [Closed] = []

        /// A one-shot's alert that was showing when it was cancelled.
        public struct Closed: Sendable, Hashable {
            public var reminderID: String
            public var due: Date
            public var posted: Date
        }

        /// An occurrence that was recorded as due, not posted, when its reminder was cancelled.
        public struct InFlight: Sendable, Hashable {
            public var reminderID: String
            public var key: OccurrenceKey
            public var due: Date { Date(micros: key.dueMicros) }
        }
    }

    /// ``cancel(ids:now:)``, saying which occurrences were in flight.
    public func cancelReporting(ids: [String], now: Date) throws(ChimeError) -> Cancellation {
        // Bad or repeated ids are refused before the store is touched (as the PostgreSQL store does).
        try ReminderIdentifier.validate(list: ids)
        return try write { db in
            var result = Cancellation(cancelled: [], inFlight: [])
            for id in ids {
                guard let (reminder, key, dueMicros) = try Self.cancelReporting(id: id, at: now.micros, in: db) else {
                    // A one-shot that fired and is still showing: its alert is closed.
                    if let (reminder, alert) = try Self.cancelShown(id: id, at: now.micros, in: db) {
                        result.cancelled.append(reminder)
                        result.closed.append(Cancellation.Closed(reminderID: reminder.id, due: alert.due, posted: alert.postedAt))
                        continue
                    }
                    throw try Self.notFound(id: id, in: db)
                }
                result.cancelled.append(reminder)
                result.inFlight += dueMicros.map {
                    Cancellation.InFlight(reminderID: reminder.id, key: OccurrenceKey(reminderKey: key, dueMicros: $0))
                }
            }
            return result
        }
    }

    /// Cancels reminder `id` in the caller's transaction: the pending one, or a one-shot whose
    /// occurrence is recorded but not yet posted. Returns it, or nil when neither exists.
    package static func cancel(id: String, at micros: Int64, in db: Database) throws -> Reminder? {
        try cancelReporting(id: id, at: micros, in: db)?.reminder
    }

    /// ``cancel(id:at:in:)``, with the reminder's store key and the due instants of the
    /// occurrences it cancelled (recorded as due, not yet posted).
    static func cancelReporting(
        id: String,
        at micros: Int64,
        in db: Database
    ) throws -> (
        reminder: Reminder, key: Int64, inFlight: [Int64]
    )? {
        if let row = try fetchPendingRow(id: id, in: db) {
            let key: Int64 = row["key"]
            let inFlight = try end(key: key, as: "cancelled", at: micros, in: db)
            return (try reminder(from: row), key, inFlight)
        }
        guard
            let row = try Row.fetchOne(
                db,
                sql: """
                    SELECT r.* FROM reminder r
                    WHERE r.id = ? AND r.state = 'done'
                      AND EXISTS (SELECT 1 FROM occurrence o WHERE o.reminder_key = r.key AND o.state = 'due')
                    ORDER BY r.key DESC LIMIT 1
                    """,
                arguments: [id]
            )
        else { return nil }
        let key: Int64 = row["key"]
        try db.execute(sql: "UPDATE reminder SET state = 'cancelled', ended_us = ? WHERE key = ?", arguments: [micros, key])
        let inFlight = try cancelUndelivered(key: key, in: db)
        return (try reminder(from: row), key, inFlight)
    }

    /// Schedules a one-shot reminder in the caller's transaction (a family's alert, written
    /// together with the family's own rows), replacing a pending reminder with the same id.
    /// - Precondition: `new` has an id and a `.once` trigger.
    @discardableResult
    package static func scheduleOnce(_ new: NewReminder, now: Date, in db: Database) throws -> Reminder {
        guard let id = new.id, case .once(let due) = new.trigger else {
            preconditionFailure("scheduleOnce takes a one-shot reminder with an id")
        }
        try end(id: id, as: "replaced", at: now.micros, in: db)
        let insert = try BatchInsert(db, rowsPerStatement: 1)
        let row = BatchInsert.Row(id: id, new: new, columns: TriggerColumns(new.trigger), nextDueMicros: due.micros)
        try insert.insert([row][...], createdMicros: now.micros)
        return Reminder(
            id: id,
            title: new.title,
            body: new.body,
            trigger: new.trigger,
            kind: new.kind,
            createdAt: Date(micros: now.micros),
            nextDue: Date(micros: due.micros),
            presentation: new.presentation
        )
    }

    /// Moves the pending one-shot `id` to `due`, in the caller's transaction. Returns false when
    /// it is not pending (already recorded as due, fired or cancelled): then nothing changes.
    package static func moveOnce(id: String, to due: Date, in db: Database) throws -> Bool {
        try db.execute(
            sql: """
                UPDATE reminder SET at_us = ?1, next_due_us = ?1
                WHERE id = ?2 AND state = 'pending' AND trigger_kind = 'once'
                """,
            arguments: [due.micros, id]
        )
        return db.changesCount > 0
    }

    /// Whether an alert of the latest reminder `id` has been shown (posted), in the caller's transaction.
    package static func wasShown(id: String, in db: Database) throws -> Bool {
        try Bool.fetchOne(
            db,
            sql: """
                SELECT EXISTS (SELECT 1 FROM occurrence
                               WHERE reminder_key = (SELECT max(key) FROM reminder WHERE id = ?) AND state = 'posted')
                """,
            arguments: [id]
        ) ?? false
    }

    /// The next due time of the pending reminder `id`, in the caller's transaction.
    package static func pendingDue(id: String, in db: Database) throws -> Date? {
        try Int64.fetchOne(db, sql: "SELECT next_due_us FROM reminder WHERE id = ? AND state = 'pending'", arguments: [id])
            .map(Date.init(micros:))
    }

    // MARK: - A family's alerts, by kind and id

    /// The next due time of the pending reminder `id` of kind `kind`, in the caller's
    /// transaction; nil when no reminder of that kind with that id is pending.
    package static func pendingDue(id: String, kind: String, in db: Database) throws -> Date? {
        try Int64.fetchOne(
            db.cachedStatement(
                sql: "SELECT next_due_us FROM reminder WHERE kind = \(kindLiteral(kind)) AND id = ? AND state = 'pending'"
            ),
            arguments: [id]
        ).map(Date.init(micros:))
    }

    /// Whether an alert of any reminder of kind `kind` that had the id `id` has been shown
    /// (posted), in the caller's transaction. (``wasShown(id:in:)`` asks about the latest
    /// reminder with the id only.)
    package static func wasEverShown(id: String, kind: String, in db: Database) throws -> Bool {
        try Bool.fetchOne(
            db.cachedStatement(
                sql: """
                    SELECT EXISTS (SELECT 1 FROM occurrence o JOIN reminder r ON r.key = o.reminder_key
                                   WHERE r.kind = \(kindLiteral(kind)) AND r.id = ? AND o.state = 'posted')
                    """
            ),
            arguments: [id]
        ) ?? false
    }

    /// Whether the latest reminder of kind `kind` with the id `id` has fired and its alert is
    /// no longer in flight, in the caller's transaction: the reminder is done and none of its
    /// occurrences is recorded as due and not yet posted. False when there is no such
    /// reminder, or it is pending, cancelled or replaced.
    package static func isDelivered(id: String, kind: String, in db: Database) throws -> Bool {
        guard
            let latest = try Row.fetchOne(
                db.cachedStatement(
                    sql: "SELECT key, state FROM reminder WHERE kind = \(kindLiteral(kind)) AND id = ? ORDER BY key DESC LIMIT 1"
                ),
                arguments: [id]
            ),
            latest["state"] as String == "done"
        else { return false }
        let inFlight = try Bool.fetchOne(
            db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM occurrence WHERE reminder_key = ? AND state = 'due')"),
            arguments: [latest["key"] as Int64]
        )
        return inFlight != true
    }

    /// How many alerts of the reminders of kind `kind` that had the id `id` were shown (posted)
    /// at or after `since` (any time when nil), and when the last of them was, in the caller's
    /// transaction.
    package static func timesShown(
        id: String,
        kind: String,
        since: Date?,
        in db: Database
    ) throws -> (count: Int, last: Date?) {
        guard
            let row = try Row.fetchOne(
                db.cachedStatement(
                    sql: """
                        SELECT count(*), max(o.posted_us) FROM occurrence o JOIN reminder r ON r.key = o.reminder_key
                        WHERE r.kind = \(kindLiteral(kind)) AND r.id = ? AND o.state = 'posted' AND o.posted_us >= ?
                        """
                ),
                arguments: [id, since?.micros ?? 0]
            )
        else { return (0, nil) }
        return (row[0], (row[1] as Int64?).map(Date.init(micros:)))
    }

    /// `kind` as an SQL string literal. The kind is written into the SQL, not bound: SQLite
    /// uses a family's partial index `reminder_KIND ON reminder(id) WHERE kind = 'KIND'` only
    /// for a query whose WHERE names the same literal (bound, the occurrence table is scanned).
    /// - Precondition: `kind` is letters, digits, '.', '_' and '-', as the families' kinds are.
    static func kindLiteral(_ kind: String) -> String {
        precondition(
            !kind.isEmpty && kind.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) },
            "a reminder kind is letters, digits, '.', '_' and '-'"
        )
        return "'" + kind + "'"
    }

    /// Calls `body` with each pending reminder, earliest next due time first (then by id), in
    /// one read transaction, holding one at a time: `chime list` of 200,000 reminders. With
    /// `after`, only those that come after the pending reminder of that id in that order (the
    /// next page); with `limit`, at most that many.
    /// - Throws: `.notFound` when `after` names no pending reminder; what `body` throws.
    public func eachPending(
        after: String? = nil,
        limit: Int? = nil,
        _ body: (Reminder) throws -> Void
    ) throws(ChimeError) {
        try read { db in
            var position: (due: Int64, id: String)?
            if let after {
                guard
                    let row = try Row.fetchOne(
                        db,
                        sql: "SELECT next_due_us, id FROM reminder WHERE id = ? AND state = 'pending'",
                        arguments: [after]
                    )
                else {
                    throw ChimeError(
                        .notFound,
                        "no pending reminder has the id '\(after)' to list after: give the id of a pending reminder (the last one of the page before)"
                    )
                }
                position = (row[0], row[1])
            }
            let rows = try Row.fetchCursor(
                db,
                sql: """
                    SELECT * FROM reminder WHERE state = 'pending'
                    AND (?1 IS NULL OR (next_due_us >= ?2 AND (next_due_us > ?2 OR id > ?1)))
                    ORDER BY next_due_us, id LIMIT ?3
                    """,
                arguments: [position?.id, position?.due, limit ?? -1]
            )
            while let row = try rows.next() { try body(try Self.reminder(from: row)) }
        }
    }

    /// Pending reminders, earliest next due time first.
    public func pending(limit: Int? = nil) throws(ChimeError) -> [Reminder] {
        try read { db in
            let rows = try Row.fetchCursor(
                db,
                sql: """
                    SELECT * FROM reminder WHERE state = 'pending' ORDER BY next_due_us, id LIMIT ?
                    """,
                arguments: [limit ?? -1]
            )
            var result: [Reminder] = []
            while let row = try rows.next() { result.append(try Self.reminder(from: row)) }
            return result
        }
    }

    /// The app ids of the pending reminders scheduled by apps (``Reminder/appID``), sorted.
    public func pendingAppIDs() throws(ChimeError) -> [String] {
        try read { db in
            try String.fetchAll(db, sql: "SELECT DISTINCT app_id FROM reminder WHERE state = 'pending' AND app_id IS NOT NULL ORDER BY 1")
        }
    }

    /// The app id of the latest reminder with `id`, pending or not (the one whose alert was
    /// answered); nil when it has none or there is no such reminder.
    public func appID(ofReminder id: String) throws(ChimeError) -> String? {
        try read { db in
            try String.fetchOne(db, sql: "SELECT app_id FROM reminder WHERE id = ? ORDER BY key DESC LIMIT 1", arguments: [id])
        }
    }

    /// How many reminders are pending.
    public func pendingCount() throws(ChimeError) -> Int {
        try read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM reminder WHERE state = 'pending'") ?? 0 }
    }

    /// How many occurrences are recorded as due but not yet posted (the notifier failing).
    public func undeliveredCount() throws(ChimeError) -> Int {
        try read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM occurrence WHERE state = 'due'") ?? 0 }
    }

    /// How many of those wait for a notification server to appear (``Scheduler/waitingForNotifier``).
    public func waitingForNotifierCount() throws(ChimeError) -> Int {
        try read { db in
            try Int.fetchOne(
                db,
                sql: "SELECT count(*) FROM occurrence WHERE state = 'due' AND next_attempt_us >= ?",
                arguments: [Scheduler.waitingForNotifier.micros]
            ) ?? 0
        }
    }

    /// The pending reminder `id`. - Throws: `.notFound`.
    public func reminder(id: String) throws(ChimeError) -> Reminder {
        try read { db in
            guard let reminder = try Self.fetchPending(id: id, in: db) else { throw try Self.notFound(id: id, in: db) }
            return reminder
        }
    }

    /// When each of `keys` was posted, for those the ledger records as posted.
    public func postedTimes(of keys: [OccurrenceKey]) throws(ChimeError) -> [OccurrenceKey: Date] {
        try read { db in
            var posted: [OccurrenceKey: Date] = [:]
            let statement = try db.cachedStatement(
                sql: "SELECT posted_us FROM occurrence WHERE reminder_key = ? AND due_us = ? AND state = 'posted'"
            )
            for key in keys {
                if let micros = try Int64.fetchOne(statement, arguments: [key.reminderKey, key.dueMicros]) {
                    posted[key] = Date(micros: micros)
                }
            }
            return posted
        }
    }

    /// The ledger rows of reminder `id` (every reminder that had that id), oldest first.
    public func ledger(id: String? = nil) throws(ChimeError) -> [LedgerEntry] {
        try read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT r.id, o.due_us, o.state, o.missed_count, o.posted_us, o.attempts, o.last_error, o.response
                    FROM occurrence o JOIN reminder r ON r.key = o.reminder_key
                    WHERE ?1 IS NULL OR r.id = ?1 ORDER BY o.due_us, r.id
                    """,
                arguments: [id]
            ).map { row in
                LedgerEntry(
                    reminderID: row[0],
                    due: Date(micros: row[1]),
                    state: row[2],
                    missedCount: row[3],
                    postedAt: (row[4] as Int64?).map(Date.init(micros:)),
                    attempts: row[5],
                    lastError: row[6],
                    response: row[7]
                )
            }
        }
    }

    /// Recomputes the next due time of floating recurring reminders for `systemZone`, after the
    /// system zone changed (travel): 08:00 stays 08:00 local.
    public func followSystemZone(_ systemZone: TimeZone, now: Date) throws(ChimeError) {
        try write { db in
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT * FROM reminder WHERE state = 'pending' AND trigger_kind = 'weekly' AND zone IS NULL
                    """
            )
            for row in rows {
                let reminder = try Self.reminder(from: row)
                let cursor = reminder.lastDue ?? reminder.createdAt
                guard let next = reminder.trigger.nextOccurrence(after: cursor, systemZone: systemZone) else { continue }
                try db.execute(sql: "UPDATE reminder SET next_due_us = ? WHERE key = ?", arguments: [next.micros, row["key"] as Int64])
            }
        }
    }

    // MARK: - Rows

    /// Ends the pending reminder `id` (cancelled or replaced) and cancels its undelivered
    /// occurrences. Returns false when none was pending.
    @discardableResult
    static func end(id: String, as state: String, at micros: Int64, in db: Database) throws -> Bool {
        let find = try db.cachedStatement(sql: "SELECT key FROM reminder WHERE id = ? AND state = 'pending'")
        guard let key = try Int64.fetchOne(find, arguments: [id]) else { return false }
        _ = try end(key: key, as: state, at: micros, in: db)
        return true
    }

    /// Ends the reminder with the store's `key` and cancels its undelivered occurrences.
    /// (Cached statements here and in ``fetchPending(id:in:)``: preparing them anew for each of
    /// 50,000 cancels in one call cost ten times the work itself.)
    /// Returns the due instants (microseconds) of the occurrences it cancelled.
    @discardableResult
    static func end(key: Int64, as state: String, at micros: Int64, in db: Database) throws -> [Int64] {
        try db.cachedStatement(sql: "UPDATE reminder SET state = ?, ended_us = ? WHERE key = ?").execute(arguments: [state, micros, key])
        return try cancelUndelivered(key: key, in: db)
    }

    /// Cancels the undelivered occurrences of the reminder with the store's `key`; returns their
    /// due instants. (Most reminders have none: the plain UPDATE is the whole cost then, and
    /// only when it changed rows are they read back. A reminder's rows are cancelled once, when
    /// it ends, so its cancelled rows are exactly these. `RETURNING` cost a third more on
    /// 50,000 cancels in one call: chime-bench cancel.)
    static func cancelUndelivered(key: Int64, in db: Database) throws -> [Int64] {
        try db.cachedStatement(sql: "UPDATE occurrence SET state = 'cancelled' WHERE reminder_key = ? AND state = 'due'").execute(
            arguments: [key]
        )
        guard db.changesCount > 0 else { return [] }
        return try Int64.fetchAll(
            db.cachedStatement(sql: "SELECT due_us FROM occurrence WHERE reminder_key = ? AND state = 'cancelled'"),
            arguments: [key]
        )
    }

    static func fetchPendingRow(id: String, in db: Database) throws -> Row? {
        try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM reminder WHERE id = ? AND state = 'pending'"), arguments: [id])
    }

    static func fetchPending(id: String, in db: Database) throws -> Reminder? {
        try fetchPendingRow(id: id, in: db).map(reminder(from:))
    }

    /// A not-found error that says what became of the id, when it existed.
    static func notFound(id: String, in db: Database) throws -> ChimeError {
        let last = try String.fetchOne(db, sql: "SELECT state FROM reminder WHERE id = ? ORDER BY key DESC LIMIT 1", arguments: [id])
        return .noPendingReminder(id: id, lastState: last)
    }

    static func reminder(from row: Row) throws -> Reminder {
        Reminder(
            id: row["id"],
            title: row["title"],
            body: row["body"],
            trigger: try TriggerColumns.trigger(from: row),
            kind: row["kind"],
            createdAt: Date(micros: row["created_us"]),
            nextDue: (row["next_due_us"] as Int64?).map(Date.init(micros:)),
            lastDue: (row["last_due_us"] as Int64?).map(Date.init(micros:)),
            presentation: presentation(from: row),
            command: (row["command"] as String?).flatMap(ReminderCommand.init(stored:)),
            appID: row["app_id"]
        )
    }

    /// A reminder row's urgency, sticky, icon and sound columns (v7), and its own actions (v11).
    static func presentation(from row: Row) -> Presentation {
        Presentation(
            urgency: (row["urgency"] as String?).flatMap(Note.Urgency.init(rawValue:)),
            sticky: row["sticky"] as Bool? ?? false,
            icon: row["icon"],
            sound: row["sound"],
            actions: Presentation.actions(stored: row["actions"])
        )
    }
}

extension TriggerColumns {
    /// The trigger of a reminder row (the columns ChimeCore's ``TriggerColumns`` names).
    static func trigger(from row: Row) throws -> Trigger {
        try TriggerColumns(
            kind: row["trigger_kind"],
            atMicros: row["at_us"],
            times: row["times"],
            days: row["days"],
            zone: row["zone"],
            intervalSeconds: row["interval_s"],
            anchorMicros: row["anchor_us"],
            byMonth: row["by_month"],
            byMonthDay: row["by_month_day"],
            untilDay: row["until_day"],
            ruleCount: row["rule_count"],
            countStartMicros: row["count_start_us"]
        ).trigger()
    }
}

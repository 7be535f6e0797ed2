import ChimeCore
import Foundation

/// An occurrence ``PostgresStore/claim(owner:lease:channels:limit:)`` took, with its
/// reminder's trigger.
public struct ClaimedOccurrence: Sendable, Hashable {
    public var occurrence: PendingOccurrence
    public var trigger: Trigger
    /// For a snooze's re-alert: the due instant (microseconds) of the alert snoozed.
    public var snoozeOf: Int64?

    public init(occurrence: PendingOccurrence, trigger: Trigger, snoozeOf: Int64? = nil) {
        self.occurrence = occurrence
        self.trigger = trigger
        self.snoozeOf = snoozeOf
    }

    /// Whether it is its reminder's own occurrence in the schedule (not a snooze's re-alert, not
    /// one quiet held, whose reminder advanced when it was held): only those catch up.
    public var isScheduled: Bool { snoozeOf == nil && occurrence.heldSince == nil }
}

/// What ``PostgresStore/markPosted(_:owner:noteID:systemZone:)`` did.
public struct MarkResult: Sendable, Hashable {
    /// Recorded as posted by this call.
    public var posted: [OccurrenceKey] = []
    /// Not recorded: this owner no longer held their lease (it expired, was reaped, and maybe
    /// another runner claimed and posted them). The caller counts them: each is a possible
    /// duplicate alert.
    public var leaseLost: [OccurrenceKey] = []
    /// Next occurrences of recurring reminders this call recorded in the ledger.
    public var materialized: Int = 0

    public init(posted: [OccurrenceKey] = [], leaseLost: [OccurrenceKey] = [], materialized: Int = 0) {
        self.posted = posted
        self.leaseLost = leaseLost
        self.materialized = materialized
    }
}

extension PostgresStore {
    /// Claims up to `limit` occurrences due at the database's `now()` in `channels`, soonest
    /// first (of those due at the same instant, the ones claimed before and returned by the
    /// reaper first: a dead runner's occurrences do not wait behind a backlog due with them),
    /// for `owner` until `now() + lease`: they become `posting`, and no other runner's
    /// claim sees them until ``reapExpiredLeases()`` returns them after the lease. An occurrence
    /// whose post failed (``markFailed(_:owner:retryAfter:error:)``) is not claimed before its
    /// `retry_at`.
    ///
    /// One statement: the inner SELECT locks the rows it picks `FOR UPDATE OF o SKIP LOCKED`
    /// (PostgreSQL 15 docs, SELECT, "The Locking Clause": rows another transaction has locked
    /// are skipped rather than waited for; an inconsistent view, "suitable for queue-like
    /// tables"; `OF o`: the occurrence rows only, not their reminders, which a cancel or another
    /// runner's claim of a sibling occurrence may hold), and the UPDATE takes the lease on exactly
    /// those. The selection is a `MATERIALIZED` CTE that the UPDATE's `IN` reads: with the
    /// sub-SELECT written inside the `IN`, the planner may run it more than once in a nested
    /// loop and update more rows than the LIMIT (a known surprise with SKIP LOCKED, reported e.g.
    /// as LIMIT "ignored" under load).
    ///
    /// The plan (EXPLAIN on 4,000 pending rows, see PostgresStoreTests'
    /// `theClaimScansThePendingByDueIndex`): a Limit over LockRows over a Nested Loop of an Index
    /// Scan on `occurrence_pending_due` (`due_us <= chime_now_us()`, the retry and channel
    /// conditions as filters) and the reminder's primary key: the scan stops after `limit` rows
    /// in the channels, however many are pending.
    public func claimDue(
        owner: String,
        lease: Duration,
        channels: [String] = [PostgresStore.defaultChannel],
        limit: Int = Scheduler.claimBatch
    ) throws -> [PendingOccurrence] {
        try claim(owner: owner, lease: lease, channels: channels, limit: limit).map(\.occurrence)
    }

    /// ``claimDue(owner:lease:channels:limit:)``, each occurrence with its reminder's trigger:
    /// what ``markPosted(_:owner:noteID:systemZone:)-(ClaimedOccurrence,_,_,_)`` needs to
    /// advance the reminder in the statement that records the post. A reminder's trigger never
    /// changes (a replace makes a new reminder), so the one read with the claim is the one the
    /// mark would read.
    public func claim(
        owner: String,
        lease: Duration,
        channels: [String] = [PostgresStore.defaultChannel],
        limit: Int = Scheduler.claimBatch
    ) throws -> [ClaimedOccurrence] {
        let rows = try client.rows(prepared: "chime_claim", Self.claimQuery(owner: owner, lease: lease, channels: channels, limit: limit))
        var claimed: [ClaimedOccurrence] = []
        for row in rows {
            let r = row.makeRandomAccess()
            let occurrence = PendingOccurrence(
                key: OccurrenceKey(reminderKey: try r["reminder_key"].decode(Int64.self), dueMicros: try r["due_us"].decode(Int64.self)),
                reminderID: try r["id"].decode(String.self),
                kind: try r["kind"].decode(String.self),
                title: try r["title"].decode(String.self),
                body: try r["body"].decode(String.self),
                missedCount: try r["missed_count"].decode(Int.self),
                attempts: try r["attempts"].decode(Int.self),
                presentation: try Self.presentation(from: r),
                heldSince: try r["held_us"].decode(Int64?.self).map(Date.init(micros:)),
                command: try r["command"].decode(String?.self).flatMap(ReminderCommand.init(stored:))
            )
            claimed.append(
                ClaimedOccurrence(
                    occurrence: occurrence,
                    trigger: try Self.triggerColumns(from: r).trigger(),
                    snoozeOf: try r["snooze_of_us"].decode(Int64?.self)
                )
            )
        }
        return claimed.sorted {
            ($0.occurrence.key.dueMicros, $0.occurrence.key.reminderKey) < ($1.occurrence.key.dueMicros, $1.occurrence.key.reminderKey)
        }
    }

    /// The statement of ``claimDue(owner:lease:channels:limit:)`` (the tests EXPLAIN it).
    package static func claimQuery(owner: String, lease: Duration, channels: [String], limit: Int) -> PostgresQuery {
        """
        WITH picked AS MATERIALIZED (
            SELECT o.reminder_key, o.due_us FROM occurrence o JOIN reminder r ON r.key = o.reminder_key
            WHERE o.state = 'pending' AND o.due_us <= chime_now_us() AND (o.retry_at IS NULL OR o.retry_at <= now())
              AND r.channel = ANY(\(channels)::text[])
            ORDER BY o.due_us, o.claimed_at LIMIT \(Int64(limit)) FOR UPDATE OF o SKIP LOCKED)
        UPDATE occurrence o SET state = 'posting', lease_owner = \(owner),
            lease_until = now() + \(micros(lease)) * interval '1 microsecond', claimed_at = now()
        FROM reminder r
        WHERE (o.reminder_key, o.due_us) IN (SELECT reminder_key, due_us FROM picked) AND r.key = o.reminder_key
        RETURNING o.reminder_key, o.due_us, o.missed_count, o.attempts, o.held_us, o.snooze_of_us, r.id, r.kind, r.title, r.body,
            r.urgency, r.sticky, r.icon, r.sound, r.actions, CASE WHEN o.snooze_of_us IS NULL THEN r.command END AS command,
            \(unescaped: triggerColumnNames.map { "r." + $0 }.joined(separator: ", "))
        """
    }

    /// Records a failed post of `keys` by `owner`, fenced on the lease as
    /// ``markPosted(_:owner:noteID:systemZone:)`` is: each occurrence still `posting` under
    /// `owner`'s lease goes back to `pending`, one more attempt, not to be claimed before the
    /// database's `now() + retryAfter`, with `error` as its `last_error`.
    /// - Returns: the keys whose lease `owner` had lost (nothing written for those).
    @discardableResult
    public func markFailed(_ keys: [OccurrenceKey], owner: String, retryAfter: Duration, error: String) throws -> [OccurrenceKey] {
        guard !keys.isEmpty else { return [] }
        let rows = try client.rows(
            """
            UPDATE occurrence SET state = 'pending', attempts = attempts + 1,
                retry_at = now() + \(Self.micros(retryAfter)) * interval '1 microsecond', last_error = \(error),
                lease_owner = NULL, lease_until = NULL
            WHERE state = 'posting' AND lease_owner = \(owner)
              AND (reminder_key, due_us) IN (SELECT * FROM unnest(\(keys.map(\.reminderKey))::bigint[], \(keys.map(\.dueMicros))::bigint[]))
            RETURNING reminder_key, due_us
            """
        )
        var marked = Set<OccurrenceKey>()
        for row in rows {
            let (key, due) = try row.decode((Int64, Int64).self)
            marked.insert(OccurrenceKey(reminderKey: key, dueMicros: due))
        }
        return keys.filter { !marked.contains($0) }
    }

    /// What ``stillWanted(_:owner:)`` found.
    public struct PostCheck: Sendable, Hashable {
        /// Still `posting` under the owner's lease, their reminder still pending: post them.
        public var wanted: [OccurrenceKey] = []
        /// Their reminder was cancelled (or replaced) after the claim: recorded `cancelled` by
        /// this call; not to be posted.
        public var cancelled: [OccurrenceKey] = []
        /// No longer under the owner's lease (it is over, or was reaped and maybe claimed by
        /// another runner): not to be posted by this one.
        public var leaseLost: [OccurrenceKey] = []

        public init() {}
    }

    /// The cancel check "once more just before the post": of `keys`, claimed by
    /// `owner`, which are still wanted (`posting` under `owner`'s lease, the lease not over by
    /// the database's clock, the reminder not cancelled or replaced). A cancel committed after the claim leaves a `posting`
    /// occurrence to its runner (``cancel(id:)``); here, in the same statement, the runner
    /// records those whose reminder is cancelled or replaced as `cancelled`, fenced on its lease.
    ///
    /// One statement: a data-modifying CTE marks the cancelled ones; the outer SELECT reads the
    /// snapshot from before that UPDATE (PostgreSQL 15 docs, 7.8.4 "Data-Modifying Statements in
    /// WITH": the sub-statements and the main query see the same snapshot), so it still sees
    /// every occurrence this owner holds, and tells the cancelled from the wanted.
    ///
    /// One key (the runner's check before each post) goes through ``CheckOne``, prepared.
    public func stillWanted(_ keys: [OccurrenceKey], owner: String) throws -> PostCheck {
        guard !keys.isEmpty else { return PostCheck() }
        if keys.count == 1 {
            var check = PostCheck()
            let key = keys[0]
            let rows = try client.withSession {
                try $0.execute(prepared: CheckOne.name, CheckOne.query(key: key, owner: owner)).rows
            }
            for row in rows {
                let (cancelled, wanted) = try row.decode((Bool, Bool).self)
                if cancelled {
                    check.cancelled = keys
                } else if wanted {
                    check.wanted = keys
                } else {
                    check.leaseLost = keys
                }
                return check
            }
            throw ChimeError(.store, "the database did not answer the check before a post")
        }
        let rows = try client.rows(
            """
            WITH k AS (SELECT * FROM unnest(\(keys.map(\.reminderKey))::bigint[], \(keys.map(\.dueMicros))::bigint[])
                       AS k(reminder_key, due_us)),
            dropped AS (
                UPDATE occurrence o SET state = 'cancelled', lease_until = NULL
                FROM reminder r, k
                WHERE o.reminder_key = k.reminder_key AND o.due_us = k.due_us AND r.key = o.reminder_key
                  AND o.state = 'posting' AND o.lease_owner = \(owner) AND r.state IN ('cancelled', 'replaced')
                RETURNING o.reminder_key, o.due_us)
            SELECT o.reminder_key, o.due_us,
                   EXISTS (SELECT 1 FROM dropped d WHERE d.reminder_key = o.reminder_key AND d.due_us = o.due_us)
            FROM occurrence o JOIN k ON o.reminder_key = k.reminder_key AND o.due_us = k.due_us
            WHERE o.state = 'posting' AND o.lease_owner = \(owner) AND (o.lease_until > now() OR EXISTS (
                SELECT 1 FROM dropped d WHERE d.reminder_key = o.reminder_key AND d.due_us = o.due_us))
            """
        )
        var wanted = Set<OccurrenceKey>()
        var cancelled = Set<OccurrenceKey>()
        for row in rows {
            let (key, due, dropped) = try row.decode((Int64, Int64, Bool).self)
            let occurrence = OccurrenceKey(reminderKey: key, dueMicros: due)
            if dropped { cancelled.insert(occurrence) } else { wanted.insert(occurrence) }
        }
        var check = PostCheck()
        for key in keys {
            if wanted.contains(key) {
                check.wanted.append(key)
            } else if cancelled.contains(key) {
                check.cancelled.append(key)
            } else {
                check.leaseLost.append(key)
            }
        }
        return check
    }

    /// ``stillWanted(_:owner:)``'s statement for one occurrence, prepared once on each connection
    /// (planned each time, the many-key form took ten times as long to plan as to run). The
    /// same rule: cancelled (and recorded so) when its reminder is cancelled or replaced and it is
    /// `posting` under the owner; else wanted while the owner's lease is not over by `now()`;
    /// else the lease is lost. The SELECT reads the snapshot from before the CTE's UPDATE.
    enum CheckOne {
        static let name = "chime_check_one"

        static func query(key: OccurrenceKey, owner: String) -> PostgresQuery {
            """
            WITH dropped AS (
                UPDATE occurrence o SET state = 'cancelled', lease_until = NULL
                FROM reminder r
                WHERE o.reminder_key = \(key.reminderKey) AND o.due_us = \(key.dueMicros) AND r.key = o.reminder_key
                  AND o.state = 'posting' AND o.lease_owner = \(owner) AND r.state IN ('cancelled', 'replaced')
                RETURNING 1)
            SELECT EXISTS (SELECT 1 FROM dropped), EXISTS (
                SELECT 1 FROM occurrence
                WHERE reminder_key = \(key.reminderKey) AND due_us = \(key.dueMicros) AND state = 'posting'
                  AND lease_owner = \(owner) AND lease_until > now())
            """
        }
    }

    /// Records `keys` as posted by `owner`, fenced on the lease: only occurrences still
    /// `posting` under `owner`'s lease are recorded (`WHERE state = 'posting' AND lease_owner =
    /// owner`); the others are returned in ``MarkResult/leaseLost``. In the same transaction,
    /// for each recorded occurrence that is its reminder's next due one, the reminder advances:
    /// a one-shot is done; a recurring reminder's next occurrence after it (those already past
    /// the database's `now()` folded into the latest, as the SQLite store folds them) is
    /// recorded as pending in the ledger, whose key (reminder, due instant) makes that once
    /// however runners race.
    public func markPosted(
        _ keys: [OccurrenceKey],
        owner: String,
        noteID: String,
        serverID: UInt32? = nil,
        via: String? = nil,
        systemZone: TimeZone
    ) throws -> MarkResult {
        guard !keys.isEmpty else { return MarkResult() }
        let reminderKeys = keys.map(\.reminderKey)
        let dues = keys.map(\.dueMicros)
        return try transaction { connection in
            var result = MarkResult()
            let rows = try connection.rows(
                """
                UPDATE occurrence SET state = 'posted', posted_at = now(), note_id = \(noteID), server_id = \(serverID.map(Int64.init))::bigint,
                    via = \(via)::text, lease_until = NULL
                WHERE state = 'posting' AND lease_owner = \(owner)
                  AND (reminder_key, due_us) IN (SELECT * FROM unnest(\(reminderKeys)::bigint[], \(dues)::bigint[]))
                RETURNING reminder_key, due_us
                """
            )
            var posted = Set<OccurrenceKey>()
            for row in rows {
                let (key, due) = try row.decode((Int64, Int64).self)
                posted.insert(OccurrenceKey(reminderKey: key, dueMicros: due))
            }
            result.posted = keys.filter { posted.contains($0) }
            result.leaseLost = keys.filter { !posted.contains($0) }
            guard !result.posted.isEmpty else { return result }
            let nowMicros = try Self.now(connection)
            for key in result.posted {
                if try Self.advance(after: key, nowMicros: nowMicros, systemZone: systemZone, connection) {
                    result.materialized += 1
                }
            }
            return result
        }
    }

    /// ``markPosted(_:owner:noteID:systemZone:)-([OccurrenceKey],_,_,_)`` for one claimed
    /// occurrence, in one statement rather than a transaction of five or more: the runner's
    /// mark after each post (one round trip instead of six; `chime-bench postgres` measures the
    /// throughput against the bare claim and mark driven by pgbench).
    ///
    /// The reminder's next occurrence is worked out here from the trigger read with the claim,
    /// and the statement's data-modifying CTEs do what the transaction does, on the same rows
    /// and with the same fences (PostgreSQL 15 docs, 7.8.4 "Data-Modifying Statements in WITH":
    /// all run on one snapshot, each exactly once, in one transaction): the fenced mark; the
    /// reminder advanced only if that mark took and the reminder is still pending with this
    /// occurrence as its next (its UPDATE waits for and re-checks a concurrent cancel, READ
    /// COMMITTED's rule for UPDATE); the next occurrence inserted only if the reminder advanced,
    /// once (the ledger's key).
    ///
    /// One case it leaves alone: a next occurrence already past the database's `now()` (a
    /// runner catching up) must be folded with the others past it, which the transaction does
    /// with `now()` in hand. Then the statement writes nothing and the transaction runs instead.
    public func markPosted(
        _ claimed: ClaimedOccurrence,
        owner: String,
        noteID: String,
        serverID: UInt32? = nil,
        via: String? = nil,
        systemZone: TimeZone
    ) throws -> MarkResult {
        let key = claimed.occurrence.key
        let next = claimed.trigger.nextOccurrence(after: Date(micros: key.dueMicros), systemZone: systemZone)?.micros
        let rows = try client.withSession {
            try $0.execute(
                prepared: MarkOne.name,
                MarkOne.query(key: key, next: next, owner: owner, noteID: noteID, serverID: serverID, via: via)
            ).rows
        }
        for row in rows {
            let (fresh, marked, inserted) = try row.decode((Bool, Bool, Bool).self)
            guard fresh else { break }
            return marked
                ? MarkResult(posted: [key], leaseLost: [], materialized: inserted ? 1 : 0)
                : MarkResult(posted: [], leaseLost: [key], materialized: 0)
        }
        return try markPosted([key], owner: owner, noteID: noteID, serverID: serverID, via: via, systemZone: systemZone)
    }

    /// The statement of ``markPosted(_:owner:noteID:systemZone:)-(ClaimedOccurrence,_,_,_)``,
    /// prepared once on each connection (postgres-nio's `PostgresPreparedStatement`): planned
    /// each time, its data-modifying CTEs took twice as long to plan as to run. `next` is the
    /// reminder's next occurrence after `key` (nil: it ends with this one). It answers one row:
    /// whether `next` is still ahead of `now()` (false: nothing was written), whether the fenced
    /// mark took, and whether it recorded the next occurrence.
    package enum MarkOne {
        package static let name = "chime_mark_one"

        package static func query(
            key: OccurrenceKey,
            next: Int64?,
            owner: String,
            noteID: String,
            serverID: UInt32? = nil,
            via: String? = nil
        ) -> PostgresQuery {
            """
            WITH fresh AS (SELECT (\(next)::bigint IS NULL OR \(next)::bigint > chime_now_us()) AS ok),
            marked AS (
                UPDATE occurrence SET state = 'posted', posted_at = now(), note_id = \(noteID),
                    server_id = \(serverID.map(Int64.init))::bigint, via = \(via)::text, lease_until = NULL
                WHERE reminder_key = \(key.reminderKey) AND due_us = \(key.dueMicros) AND state = 'posting'
                  AND lease_owner = \(owner) AND (SELECT ok FROM fresh)
                RETURNING reminder_key),
            advanced AS (
                UPDATE reminder SET last_due_us = next_due_us, next_due_us = \(next)::bigint,
                    state = CASE WHEN \(next)::bigint IS NULL THEN 'done' ELSE 'pending' END,
                    ended_us = CASE WHEN \(next)::bigint IS NULL THEN chime_now_us() ELSE ended_us END
                WHERE key = \(key.reminderKey) AND state = 'pending' AND next_due_us = \(key.dueMicros)
                  AND EXISTS (SELECT 1 FROM marked)
                RETURNING key),
            inserted AS (
                INSERT INTO occurrence (reminder_key, due_us, missed_count)
                SELECT key, \(next)::bigint, 0 FROM advanced WHERE \(next)::bigint IS NOT NULL
                ON CONFLICT (reminder_key, due_us) DO NOTHING
                RETURNING 1)
            SELECT (SELECT ok FROM fresh), EXISTS (SELECT 1 FROM marked), EXISTS (SELECT 1 FROM inserted)
            """
        }
    }

    /// Advances the reminder of `key` past it when `key` is its next due occurrence: finishes a
    /// one-shot (or a rule that ended), or records the next occurrence. Returns whether it
    /// recorded one (false also when the ledger already had it).
    static func advance(
        after key: OccurrenceKey,
        nowMicros: Int64,
        systemZone: TimeZone,
        _ connection: PostgresSession
    ) throws -> Bool {
        let rows = try connection.rows(
            """
            SELECT \(unescaped: reminderColumns) FROM reminder
            WHERE key = \(key.reminderKey) AND state = 'pending' AND next_due_us = \(key.dueMicros) FOR UPDATE
            """
        )
        var found: Reminder?
        for row in rows { found = try reminder(from: row).reminder }
        guard let reminder = found else { return false }
        let due = Date(micros: key.dueMicros)
        guard var next = reminder.trigger.nextOccurrence(after: due, systemZone: systemZone) else {
            try connection.run(
                """
                UPDATE reminder SET state = 'done', last_due_us = next_due_us, next_due_us = NULL, ended_us = \(nowMicros)
                WHERE key = \(key.reminderKey)
                """
            )
            return false
        }
        // Occurrences already past the database's now fold into the latest of them: it fires
        // once, late, saying how many it stands for (ChimeCore's catch-up, as on SQLite).
        var missed = 0
        if next.micros <= nowMicros {
            (next, missed) = reminder.trigger.caughtUp(from: next, through: Date(micros: nowMicros), systemZone: systemZone)
        }
        let inserted = try connection.rows(
            """
            INSERT INTO occurrence (reminder_key, due_us, missed_count) VALUES (\(key.reminderKey), \(next.micros), \(missed))
            ON CONFLICT (reminder_key, due_us) DO NOTHING RETURNING 1
            """
        )
        var recorded = false
        recorded = !inserted.isEmpty
        try connection.run(
            "UPDATE reminder SET last_due_us = \(key.dueMicros), next_due_us = \(next.micros) WHERE key = \(key.reminderKey)"
        )
        return recorded
    }

    /// Returns every occurrence whose lease has expired by the database's `now()` to `pending`
    /// (or to `cancelled`, when its reminder was cancelled or replaced meanwhile), for any runner to claim.
    /// Any runner may call it at any time: there is no leader. Returns how many it returned.
    @discardableResult
    public func reapExpiredLeases() throws -> Int {
        let rows = try client.rows(
            prepared: "chime_reap",
            """
            UPDATE occurrence o
            SET state = CASE WHEN r.state IN ('cancelled', 'replaced') THEN 'cancelled' ELSE 'pending' END,
                lease_owner = NULL, lease_until = NULL
            FROM reminder r
            WHERE r.key = o.reminder_key AND o.state = 'posting' AND o.lease_until < now()
            RETURNING 1
            """
        )
        var count = 0
        count = rows.count
        return count
    }

    /// What a runner's timer needs, all on the database's clock (see ``nextDeadlines(channels:)``).
    public struct Deadlines: Sendable, Hashable {
        /// The database's `now()` when it answered: a runner sleeps for `deadline - now`, never
        /// comparing with its host's clock (hosts' clocks may disagree by minutes).
        public var now: Date
        /// When the next pending occurrence becomes ready: its due instant, or its `retry_at`
        /// after a failed post (nil: none pending).
        public var due: Date?
        /// The earliest end of a lease (when the reaper has something to do).
        public var leaseEnds: Date?

        public init(now: Date, due: Date?, leaseEnds: Date?) {
            self.now = now
            self.due = due
            self.leaseEnds = leaseEnds
        }

        /// The earliest of ``due`` and ``leaseEnds``.
        public var next: Date? {
            switch (due, leaseEnds) {
            case (let due?, let lease?): min(due, lease)
            case (let due, let lease): due ?? lease
            }
        }
    }

    /// The database's now, when the next pending occurrence in `channels` (nil: in any channel)
    /// becomes ready, and the earliest end of a lease, for a runner's timer.
    ///
    /// The ready time of the pending: the first due one without a retry time (the
    /// `occurrence_pending_due` index in order, stopping at the first row in the channels),
    /// and the earliest `greatest(due, retry_at)` of those with one (few: failed posts).
    public func nextDeadlines(channels: [String]? = nil) throws -> Deadlines {
        let all = channels == nil
        let served = channels ?? []
        let rows = try client.rows(
            prepared: "chime_deadlines",
            """
            SELECT chime_now_us(),
                (SELECT o.due_us FROM occurrence o JOIN reminder r ON r.key = o.reminder_key
                 WHERE o.state = 'pending' AND o.retry_at IS NULL AND (\(all) OR r.channel = ANY(\(served)::text[]))
                 ORDER BY o.due_us LIMIT 1),
                (SELECT min(greatest(o.due_us, (extract(epoch FROM o.retry_at) * 1000000)::bigint))
                 FROM occurrence o JOIN reminder r ON r.key = o.reminder_key
                 WHERE o.state = 'pending' AND o.retry_at IS NOT NULL AND isfinite(o.retry_at) AND (\(all) OR r.channel = ANY(\(served)::text[]))),
                (SELECT (extract(epoch FROM min(lease_until)) * 1000000)::bigint FROM occurrence WHERE state = 'posting')
            """
        )
        for row in rows {
            let (now, due, retry, lease) = try row.decode((Int64, Int64?, Int64?, Int64?).self)
            let ready = [due, retry].compactMap { $0 }.min()
            return Deadlines(now: Date(micros: now), due: ready.map(Date.init(micros:)), leaseEnds: lease.map(Date.init(micros:)))
        }
        throw ChimeError(.store, "the database did not answer the deadlines' query")
    }

    /// A duration in whole microseconds (rounded down).
    static func micros(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1_000_000 + attoseconds / 1_000_000_000_000
    }
}

extension PostgresStore {
    /// Moves an occurrence `owner` holds under its lease from its due instant to `latest`
    /// (catch-up: the occurrences in between were missed), adding `missed` to its missed count,
    /// and its reminder's next due instant with it. Fenced on the lease; nothing is written when
    /// the ledger already has an occurrence at `latest`. Returns whether it moved.
    func moveClaimed(_ key: OccurrenceKey, to latest: Int64, adding missed: Int, owner: String) throws -> Bool {
        try transaction { connection in
            let moved = try connection.run(
                """
                UPDATE occurrence SET due_us = \(latest), missed_count = missed_count + \(missed)
                WHERE reminder_key = \(key.reminderKey) AND due_us = \(key.dueMicros) AND state = 'posting'
                  AND lease_owner = \(owner)
                  AND NOT EXISTS (SELECT 1 FROM occurrence WHERE reminder_key = \(key.reminderKey) AND due_us = \(latest))
                """
            )
            guard moved == 1 else { return false }
            try connection.run(
                """
                UPDATE reminder SET next_due_us = \(latest)
                WHERE key = \(key.reminderKey) AND next_due_us = \(key.dueMicros) AND state = 'pending'
                """
            )
            return true
        }
    }
}

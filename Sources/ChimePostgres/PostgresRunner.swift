import ChimeCore
import Foundation
import Logging
import PostgresNIO
import Synchronization

/// Why a ``PostgresRunner`` sleeps, told to its ``PostgresRunnerSleeper`` (a test releases each
/// kind on its own).
public enum PostgresRunnerSleep: Sendable, Hashable {
    /// Between passes: until the next deadline (on the database's clock) or the jittered poll,
    /// whichever comes first; a NOTIFY ends it early.
    case idle
    /// After a pass failed on a database error, before trying again.
    case databaseBackoff
    /// Before re-making the LISTEN connection after it dropped.
    case reconnect
    /// After ``PostgresRunner/stop()``, before a pass still waiting on the database is abandoned.
    case stopping
}

/// How a ``PostgresRunner`` waits. The real one sleeps; a test's records each wait and lets it
/// end when the test says.
public protocol PostgresRunnerSleeper: Sendable {
    /// Returns after `duration`; throws (`CancellationError`) when the task is cancelled first.
    func sleep(for duration: Duration, reason: PostgresRunnerSleep) async throws
}

/// Sleeps on the monotonic clock (`ContinuousClock`): a wall clock set back or forward on the
/// host changes nothing, and deadlines come from the database's clock anyway.
public struct MonotonicSleeper: PostgresRunnerSleeper {
    public init() {}
    public func sleep(for duration: Duration, reason: PostgresRunnerSleep) async throws {
        try await Task.sleep(for: duration, clock: .continuous)
    }
}

/// A runner on the PostgreSQL store (issue 20): one of several, on as many hosts, sharing one
/// database, with no leader. Each pass it returns expired leases (the reaper), claims what is
/// due in the channels it serves under a lease (``PostgresStore/claim(owner:lease:channels:limit:)``),
/// checks each occurrence once more just before its post (``PostgresStore/stillWanted(_:owner:)``:
/// a cancel from any host after the claim stops it), posts it, and records it with a fenced mark
/// that advances its reminder in the same statement (a lost lease is counted and logged, never
/// written over): two round trips an occurrence, and a claim for each batch. A failed post goes
/// back to the ledger with a retry time (backoff); a database error ends the pass, is logged in
/// one line, and the pass is tried again after a backoff: the ledger still holds everything.
///
/// Between passes it sleeps until the earliest of: the next deadline (a due occurrence, a retry,
/// a lease's end), measured as `deadline - now` with both from the database (hosts' clocks may
/// disagree by minutes; the host's is never compared with anything); the poll (±10 % jitter, so
/// that runners started together do not poll together); a notification on
/// ``PostgresStore/changesChannel``, received on a LISTEN connection of its own (not the pool's:
/// LISTEN belongs to one session). That connection is re-made with backoff (1 s, 2 s, … 30 s)
/// when it drops, and every (re)connect is followed by a full pass, since notifications sent
/// while it was down are lost (PostgreSQL 15 docs, NOTIFY: only sessions listening at commit
/// receive them). An idle runner wakes only for the poll and its deadlines.
public actor PostgresRunner {
    /// What the runner did, since it was made.
    public struct Counters: Sendable, Hashable {
        /// Occurrences posted and recorded as posted.
        public var posted = 0
        /// Occurrences whose lease this runner had lost when it checked or marked them (each a
        /// possible duplicate alert when it had already posted it).
        public var leaseLost = 0
        /// Posts the notifier failed (each retried later).
        public var failed = 0
        /// Occurrences claimed, then found cancelled (or replaced) just before the post: not posted.
        public var cancelledBeforePost = 0
        /// Waits a notification ended (NOTIFY on the changes channel).
        public var wakeups = 0
        /// Waits the timer ended (the poll or a deadline).
        public var polls = 0
        /// Passes made after the LISTEN connection was (re)made.
        public var rescans = 0
        /// Passes completed (a pass that failed on a database error is not one).
        public var passes = 0
        /// LISTEN connections made (1 + reconnects).
        public var listens = 0
        /// Passes that failed on a database error.
        public var databaseErrors = 0
        /// Times the store's pool and the LISTEN connection were made again after the database
        /// answered read-only (SQLSTATE 25006).
        public var renewals = 0
        public init() {}
    }

    public private(set) var counters = Counters()

    let url: PostgresURL
    let store: PostgresStore
    let notifier: any Notifier
    let owner: String
    let channels: [String]
    let lease: Duration
    let poll: Duration
    let systemZone: TimeZone
    let logger: Logger
    let sleeper: any PostgresRunnerSleeper
    let claimBatch: Int
    let retryBase: Duration
    let retryMax: Duration
    private var random: SeededGenerator
    /// The database's clock as last read, and the monotonic instant it was read at: a note's
    /// `postedAt` is that instant moved on by the monotonic time since (never the host's clock).
    private var databaseClock: (now: Date, at: ContinuousClock.Instant)?
    /// Posted, not yet recorded as posted (the mark failed on a database error).
    private var shownUnrecorded: [OccurrenceKey: (claimed: ClaimedOccurrence, noteID: String)] = [:]
    /// When the current run of failed passes began (nil: the database answers).
    private var outageSince: ContinuousClock.Instant?
    /// Set by ``stop()``: the loop ends after the occurrence being posted.
    private var stopping = false
    /// The pass in progress, for ``stop()`` to abandon when the database does not answer.
    private var currentPass: Task<Duration, any Error>?
    /// True while the notifier posts an alert (a stop never interrupts that).
    private var inPost = false
    private var wakeup: Wakeup?
    /// Ends the LISTEN session in progress (``renewAfterReadOnly()``): the connection is closed
    /// and made again.
    private var endListenSession: AsyncStream<Void>.Continuation?
    /// Ends the LISTEN connection's backoff early: set while it waits to be re-made.
    private var retryListenNow: AsyncStream<Void>.Continuation?

    /// The shortest sleep between passes: a deadline already past (an occurrence another
    /// runner's claim was locking a moment ago) does not make the loop spin.
    static let minimumWait: Duration = .milliseconds(20)

    /// How long ``stop()`` lets a pass wait on the database before abandoning it.
    static let stopGrace: Duration = .seconds(5)

    /// - Parameters:
    ///   - url: the database, for the LISTEN connection (the store's pool serves the rest).
    ///   - owner: this runner's name in the leases: unique among the runners (host and pid, say).
    ///   - channels: the channels it serves (see ``PostgresStore/validateChannel(_:)``; checked by ``run()``).
    ///   - lease: how long a claim is this runner's; after it, any runner's reaper returns it.
    ///     Posting a batch of `claimBatch` must take less.
    ///   - poll: the slow poll that covers lost notifications (jittered ±10 %).
    ///   - systemZone: the zone floating recurring reminders follow when their next occurrence is recorded.
    ///   - claimBatch: the most occurrences one claim takes.
    ///   - retryBase, retryMax: the backoff after a failed post (ChimeCore's
    ///     ``Scheduler/backoff(afterAttempts:base:max:)``): 5 s, 10 s, 20 s … at most 10 min.
    ///   - jitterSeed: seeds the poll's jitter (a test repeats it); nil: a random seed.
    public init(
        url: PostgresURL,
        store: PostgresStore,
        notifier: any Notifier,
        owner: String,
        channels: [String] = [PostgresStore.defaultChannel],
        lease: Duration = .seconds(30),
        poll: Duration = .seconds(30),
        systemZone: TimeZone = .current,
        logger: Logger,
        sleeper: some PostgresRunnerSleeper = MonotonicSleeper(),
        claimBatch: Int = 32,
        retryBase: Duration = .seconds(5),
        retryMax: Duration = .seconds(600),
        jitterSeed: UInt64? = nil
    ) {
        self.url = url
        self.store = store
        self.notifier = notifier
        self.owner = owner
        self.channels = channels
        self.lease = lease
        self.poll = poll
        self.systemZone = systemZone
        self.logger = logger
        self.sleeper = sleeper
        self.claimBatch = max(1, claimBatch)
        self.retryBase = retryBase
        self.retryMax = retryMax
        var seeder = SystemRandomNumberGenerator()
        self.random = SeededGenerator(seed: jitterSeed ?? seeder.next())
    }

    /// Runs until its task is cancelled, then returns (the LISTEN connection closed; what it had
    /// claimed and not posted is returned by a reaper after the lease).
    /// - Throws: `.usage` at once for a bad or empty list of channels; nothing else (a database
    ///   error is logged and retried).
    public func run() async throws {
        guard !channels.isEmpty else {
            throw ChimeError(.usage, "a runner needs a channel to serve: give at least one (\(PostgresStore.acceptedChannel))")
        }
        for channel in channels { try PostgresStore.validateChannel(channel) }
        logger.info(
            "runner \(owner) serving \(channels.joined(separator: ", ")) on \(url) (lease \(formatDuration(lease)), poll \(formatDuration(poll)))"
        )
        let wakeup = Wakeup()
        self.wakeup = wakeup
        await withDiscardingTaskGroup { group in
            group.addTask { await self.listen(wakeup) }
            await self.loop(wakeup)
            group.cancelAll()
        }
    }

    /// Ends ``run()`` gracefully (SIGTERM): the occurrence being posted is posted and marked,
    /// the rest of the claimed batch is handed back at once (not after the lease), then `run()`
    /// returns. Cancelling `run()`'s task instead may interrupt a post between the post and its
    /// mark, which another runner repeats after the lease.
    ///
    /// While the database is down, a pass waits for a connection (postgres-nio's pool waits and
    /// reconnects; nothing is lost meanwhile). A stop does not wait for the database to come
    /// back: after ``stopGrace`` a pass still waiting is abandoned (never an alert being
    /// posted). An alert posted and not yet recorded then is shown again by another runner
    /// after its lease, as after a crash; the log says so.
    public func stop() {
        stopping = true
        wakeup?.signal(.timer)
        guard let pass = currentPass else { return }
        let sleeper = self.sleeper
        Task {
            try? await sleeper.sleep(for: Self.stopGrace, reason: .stopping)
            await self.abandon(pass)
        }
    }

    /// Cancels `pass` if it is still the one in progress, once no alert is being posted.
    private func abandon(_ pass: Task<Duration, any Error>) async {
        while inPost && currentPass == pass { try? await Task.sleep(for: .milliseconds(50)) }
        guard currentPass == pass else { return }
        let unrecorded = shownUnrecorded.count
        let shown =
            unrecorded > 0 ? "; \(unrecorded) alerts shown and not recorded may be shown again by another runner after the lease" : ""
        logger.warning("stopping while the database does not answer (\(formatDuration(Self.stopGrace)) after the stop)\(shown)")
        pass.cancel()
    }

    // MARK: The loop

    private func loop(_ wakeup: Wakeup) async {
        var failures = 0
        while !Task.isCancelled && !stopping {
            let wait: Duration
            let reason: PostgresRunnerSleep
            do {
                // A task of its own, so that stop() can abandon it (see stop()); cancelling
                // the loop cancels it too.
                let pass = Task { try await self.pass() }
                currentPass = pass
                defer { currentPass = nil }
                wait = try await withTaskCancellationHandler {
                    try await pass.value
                } onCancel: {
                    pass.cancel()
                }
                reason = .idle
                if failures > 0, let since = outageSince {
                    logger.notice(
                        "the database answers again after \(failures) failed passes (\(formatDuration(ContinuousClock.now - since)))"
                    )
                }
                failures = 0
                outageSince = nil
                // The database answers: a LISTEN connection waiting out its backoff (up to 30 s
                // after an outage) is re-made now, so that notifications wake this runner again.
                retryListenNow?.finish()
                retryListenNow = nil
            } catch {
                if Task.isCancelled || stopping { break }
                failures += 1
                counters.databaseErrors += 1
                wait = Self.reconnectBackoff(failures)
                reason = .databaseBackoff
                logDatabaseError(error, failures: failures, retryIn: wait)
                if Self.sqlState(of: error) == "25006" { renewAfterReadOnly() }
            }
            let generation = wakeup.arm()
            let timer = Task { [sleeper] in
                do {
                    try await sleeper.sleep(for: wait, reason: reason)
                    wakeup.timerFired(generation)
                } catch {}
            }
            let reasons = await wakeup.wait()
            timer.cancel()
            if reasons.contains(.notification) { counters.wakeups += 1 }
            if reasons.contains(.timer) { counters.polls += 1 }
            if reasons.contains(.listening) { counters.rescans += 1 }
        }
    }

    /// One pass: reap, claim and post until nothing more is due in the channels, then read the
    /// deadlines. Returns how long to sleep.
    private func pass() async throws -> Duration {
        try await recordShown()
        let reaped = try await store.reapExpiredLeases()
        if reaped > 0 { logger.info("returned \(reaped) occurrences whose lease had expired") }
        if databaseClock == nil {
            databaseClock = (try await store.databaseNow(), .now)
        }
        while !Task.isCancelled && !stopping {
            let claimed = try await store.claim(owner: owner, lease: lease, channels: channels, limit: claimBatch)
            for (index, one) in claimed.enumerated() {
                if stopping || Task.isCancelled {
                    // Stopping: what is left of the batch goes back now, for the other runners.
                    let rest = claimed[index...].map(\.occurrence.key)
                    if let released = try? await store.release(rest, owner: owner), released > 0 {
                        logger.info("handed back \(released) claimed occurrences on stopping")
                    }
                    break
                }
                try await deliver(one)
            }
            if claimed.count < claimBatch { break }
            // A backlog keeps this loop going: return the leases of a runner that died meanwhile
            // now, not after the backlog (its occurrences were waiting lease + backlog, measured
            // by chime-bench postgres's failover: none within lease + poll).
            let returned = try await store.reapExpiredLeases()
            if returned > 0 { logger.info("returned \(returned) occurrences whose lease had expired") }
        }
        let deadlines = try await store.nextDeadlines(channels: channels)
        databaseClock = (deadlines.now, .now)
        counters.passes += 1
        var wait = jitteredPoll()
        if let next = deadlines.next {
            let untilNext = Duration.microseconds(next.micros - deadlines.now.micros)
            wait = min(wait, max(untilNext, Self.minimumWait))
        }
        return wait
    }

    /// Checks one claimed occurrence once more, posts it, and records what happened.
    private func deliver(_ claimed: ClaimedOccurrence) async throws {
        let occurrence = claimed.occurrence
        let key = occurrence.key
        let check = try await store.stillWanted([key], owner: owner)
        if !check.cancelled.isEmpty {
            counters.cancelledBeforePost += 1
            logger.info("not posting reminder \(occurrence.reminderID) due \(TimeText.iso(occurrence.due)): cancelled after it was claimed")
            return
        }
        if !check.leaseLost.isEmpty {
            leaseLost(occurrence, when: "before posting it (not posted here)")
            return
        }
        let note = Scheduler.note(for: occurrence, postedAt: estimatedDatabaseNow())
        let posted: PostedNote
        inPost = true
        do {
            posted = try await notifier.post(note)
            inPost = false
        } catch {
            inPost = false
            if Task.isCancelled { return }  // left to the reaper, after the lease
            counters.failed += 1
            let attempt = occurrence.attempts + 1
            let wait = Scheduler.backoff(afterAttempts: attempt, base: retryBase, max: retryMax)
            logger.warning(
                "posting reminder \(occurrence.reminderID) due \(TimeText.iso(occurrence.due)) failed (attempt \(attempt)): \(Self.oneLine(error)); retrying in \(formatDuration(wait))"
            )
            let lost = try await store.markFailed([key], owner: owner, retryAfter: wait, error: Self.oneLine(error))
            if !lost.isEmpty { leaseLost(occurrence, when: "recording a failed post") }
            return
        }
        // Remembered until recorded: a mark that fails on a database error is made again at the
        // start of the next pass (before this runner's reaper), not posted again.
        shownUnrecorded[key] = (claimed, posted.id)
        try await record(claimed, noteID: posted.id)
    }

    /// The fenced mark of a posted occurrence, and what it says.
    private func record(_ claimed: ClaimedOccurrence, noteID: String) async throws {
        let occurrence = claimed.occurrence
        let result = try await store.markPosted(claimed, owner: owner, noteID: noteID, systemZone: systemZone)
        shownUnrecorded[occurrence.key] = nil
        if result.posted.isEmpty {
            leaseLost(occurrence, when: "after posting it (another runner may post it too)")
        } else {
            counters.posted += 1
            logger.debug("posted reminder \(occurrence.reminderID) due \(TimeText.iso(occurrence.due))")
        }
    }

    /// Records what was posted while the database failed, while the lease is still this
    /// runner's (the mark is fenced: after a longer outage another runner may have taken it
    /// over, and that is counted as a lost lease). Like the SQLite scheduler's `shownUnrecorded`.
    private func recordShown() async throws {
        let shown = shownUnrecorded.values.sorted { $0.claimed.occurrence.key.dueMicros < $1.claimed.occurrence.key.dueMicros }
        for (claimed, noteID) in shown {
            try await record(claimed, noteID: noteID)
        }
    }

    private func leaseLost(_ occurrence: PendingOccurrence, when: String) {
        counters.leaseLost += 1
        logger.notice(
            "lost the lease on reminder \(occurrence.reminderID) due \(TimeText.iso(occurrence.due)) \(when)",
            metadata: ["reminder": "\(occurrence.reminderID)", "due": "\(TimeText.iso(occurrence.due))"]
        )
    }

    private func jitteredPoll() -> Duration {
        let factor = Double.random(in: 0.9...1.1, using: &random)
        return poll * factor
    }

    /// The database's now, from its last reading moved on by the monotonic clock.
    private func estimatedDatabaseNow() -> Date {
        guard let clock = databaseClock else { return Date(timeIntervalSince1970: 0) }
        let elapsed = ContinuousClock.now - clock.at
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return clock.now.addingTimeInterval(seconds)
    }

    /// 1 s, 2 s, 4 s … at most 30 s: the wait before a pass or a LISTEN connection is tried again.
    static func reconnectBackoff(_ failures: Int) -> Duration {
        Scheduler.backoff(afterAttempts: failures, base: .seconds(1), max: .seconds(30))
    }

    /// One line for a failed pass: the first of an outage at error level, the rest at debug (a
    /// server down for an hour is not 120 error lines), the end of it at notice.
    private func logDatabaseError(_ error: any Error, failures: Int, retryIn wait: Duration) {
        if outageSince == nil { outageSince = ContinuousClock.now }
        let readOnly = PostgresRunner.sqlState(of: error) == "25006"
        let what =
            readOnly
            ? "the database is read-only (SQLSTATE 25006: a standby, or a primary demoted by a failover)"
            : "a pass failed on a database error"
        let line = "\(what): \(Self.oneLine(error)); nothing is lost, trying again in \(formatDuration(wait))"
        if failures == 1 { logger.error("\(line)") } else { logger.debug("\(line) (failure \(failures))") }
    }

    /// The database answered read-only (SQLSTATE 25006): the connections in use reach a node
    /// that cannot take writes (a standby, or a primary fenced or demoted by a failover), and
    /// would go on answering so for as long as they live. They are dropped and made again, each
    /// time (at the backoff's pace), so that the runner follows the URL's host to whichever node
    /// is the primary now: the store's pool (``PostgresStore/renewConnections()``) and the LISTEN
    /// connection (notifications are sent only on the primary; a LISTEN left on the old node
    /// would hear none, and the runner would be woken only by its poll). What was claimed stays
    /// claimed under its lease; what was posted and not recorded is recorded by the next pass.
    private func renewAfterReadOnly() {
        guard store.renewConnections() else { return }
        counters.renewals += 1
        logger.notice("dropping the connections to the read-only node and making new ones (renewal \(counters.renewals))")
        endListenSession?.finish()
        endListenSession = nil
    }

    private func listenSession(_ end: AsyncStream<Void>.Continuation?) {
        endListenSession = end
    }

    // MARK: LISTEN

    /// Keeps a LISTEN connection of its own on the changes channel, re-making it with backoff
    /// when it drops; each notification, and each (re)connect, wakes the loop.
    private nonisolated func listen(_ wakeup: Wakeup) async {
        var failures = 0
        // postgres-nio's LISTEN (Docs.docc/listen.md, 1.33): `listen(on:consume:)` sends LISTEN,
        // returns once the server confirmed it, and sends UNLISTEN when `consume` returns.
        let configuration = url.connectionConfiguration(applicationName: "\(PostgresStore.runnerApplicationName) \(owner) listen")
        while !Task.isCancelled {
            var why = "the connection closed"
            do {
                let connection = try await PostgresConnection.connect(
                    configuration: configuration,
                    id: 1,
                    logger: PostgresStore.silentLogger
                )
                // The session ends when the connection drops, or when a renewal ends it: a
                // child task each, the first to end cancels the other.
                let (ended, end) = AsyncStream<Void>.makeStream()
                await self.listenSession(end)
                let confirmed = Flag()
                do {
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        group.addTask {
                            try await connection.listen(on: PostgresStore.changesChannel) { notifications in
                                confirmed.set()
                                await self.listening()
                                wakeup.signal(.listening)
                                for try await _ in notifications { wakeup.signal(.notification) }
                            }
                        }
                        group.addTask {
                            for await _ in ended { break }
                            if !Task.isCancelled { throw ListenSessionEnded() }
                        }
                        try await group.next()
                        group.cancelAll()
                    }
                } catch is ListenSessionEnded {
                    why = "ended to follow a failover (the database answered read-only)"
                } catch {
                    why = Self.oneLine(error)
                }
                if confirmed.isSet { failures = 0 }
                await self.listenSession(nil)
                try? await connection.close()
            } catch {
                why = Self.oneLine(error)
            }
            if Task.isCancelled { break }
            failures += 1
            let wait = Self.reconnectBackoff(failures)
            logger.warning("the LISTEN connection is down (\(why)); re-making it in \(formatDuration(wait)), then a full pass")
            await reconnectWait(wait)
        }
    }

    /// The backoff before re-making the LISTEN connection, ended early by a pass that the
    /// database answered (see ``loop(_:)``).
    private nonisolated func reconnectWait(_ wait: Duration) async {
        let (answered, answer) = AsyncStream<Void>.makeStream()
        await setRetryListenNow(answer)
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await self.sleeper.sleep(for: wait, reason: .reconnect) }
            group.addTask { for await _ in answered { break } }
            await group.next()
            group.cancelAll()
        }
        await setRetryListenNow(nil)
    }

    private func setRetryListenNow(_ retry: AsyncStream<Void>.Continuation?) {
        retryListenNow = retry
    }

    private struct ListenSessionEnded: Error {}

    /// Set once, read after (by the task that made it).
    private final class Flag: Sendable {
        private let value = Mutex(false)
        func set() { value.withLock { $0 = true } }
        var isSet: Bool { value.withLock { $0 } }
    }

    private func listening() {
        counters.listens += 1
        if counters.listens > 1 { logger.notice("listening again on \(PostgresStore.changesChannel): a full pass follows") }
    }

    // MARK: Errors

    /// The SQLSTATE of a server's error (nil for another error).
    static func sqlState(of error: any Error) -> String? {
        (error as? PSQLError)?.serverInfo?[.sqlState]
    }

    /// An error in one line. PSQLError's own description hides everything ("Generic description
    /// to prevent accidental leakage of sensitive data"): the SQLSTATE and the server's message,
    /// or the client's code and the underlying error, are what an operator needs.
    static func oneLine(_ error: any Error) -> String {
        let text: String
        if let error = error as? PSQLError {
            if let state = error.serverInfo?[.sqlState] {
                text = "SQLSTATE \(state): \(error.serverInfo?[.message] ?? "")"
            } else if let underlying = error.underlying {
                text = "\(error.code): \(underlying)"
            } else {
                text = "\(error.code)"
            }
        } else {
            text = String(describing: error)
        }
        return text.split(whereSeparator: \.isNewline).joined(separator: " ")
    }
}

/// What ends a runner's wait: a NOTIFY, a (re)connected LISTEN, or the timer of the current
/// wait. Coalesced (many notifications during a pass make one more pass, not many), and a
/// timer of an earlier wait is ignored (it lost a race with its cancellation).
final class Wakeup: Sendable {
    struct Reasons: OptionSet, Sendable {
        let rawValue: Int
        static let notification = Reasons(rawValue: 1)
        static let listening = Reasons(rawValue: 2)
        static let timer = Reasons(rawValue: 4)
    }

    private struct State {
        var pending: Reasons = []
        var generation = 0
        var waiter: CheckedContinuation<Reasons, Never>?
        var cancelled = false
    }

    private let state = Mutex(State())

    func signal(_ reasons: Reasons) {
        let woken: (CheckedContinuation<Reasons, Never>, Reasons)? = state.withLock { state in
            state.pending.formUnion(reasons)
            guard let waiter = state.waiter else { return nil }
            let pending = state.pending
            state.waiter = nil
            state.pending = []
            return (waiter, pending)
        }
        if let (waiter, pending) = woken { waiter.resume(returning: pending) }
    }

    /// A new wait's generation, for its timer.
    func arm() -> Int {
        state.withLock { state in
            state.generation += 1
            return state.generation
        }
    }

    func timerFired(_ generation: Int) {
        let current = state.withLock { $0.generation == generation }
        if current { signal(.timer) }
    }

    /// Waits for a signal (returns at once when one came since the last wait); returns the
    /// reasons, or none when the task is cancelled.
    func wait() async -> Reasons {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let ready: Reasons? = state.withLock { state in
                    if state.cancelled { return [] }
                    if !state.pending.isEmpty {
                        let pending = state.pending
                        state.pending = []
                        return pending
                    }
                    state.waiter = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            let waiter: CheckedContinuation<Reasons, Never>? = state.withLock { state in
                state.cancelled = true
                let waiter = state.waiter
                state.waiter = nil
                return waiter
            }
            waiter?.resume(returning: [])
        }
    }
}

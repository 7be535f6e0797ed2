import ChimeCore
import Foundation
import Synchronization

/// The database's clock as this process sees it: the last reading of `chime_now_us()`, moved on
/// by the monotonic clock since. The Scheduler reads it as its ``WallClock`` on a PostgreSQL
/// store, so every instant it compares (due, late, retry) is the database's, whatever the
/// host's own clock says (hosts may disagree by minutes).
public final class DatabaseClock: WallClock {
    private let reading = Mutex<(now: Date, at: ContinuousClock.Instant)?>(nil)

    public init() {}

    /// The database's now, estimated; the host's clock until the first reading.
    public func now() -> Date {
        guard let (now, at) = reading.withLock({ $0 }) else { return Date() }
        let elapsed = ContinuousClock.now - at
        return now.addingTimeInterval(Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }

    /// Records a reading of the database's clock, taken just now.
    public func set(_ databaseNow: Date) {
        reading.withLock { $0 = (databaseNow, .now) }
    }

    /// Whether the clock has been read from the database yet.
    public var isSet: Bool { reading.withLock { $0 != nil } }

    /// The host's wall-clock instant at which the database's clock reads `deadline`: what a
    /// timer on the host's clock (the runner's timerfd) is armed with.
    public func hostInstant(for deadline: Date) -> Date {
        deadline.addingTimeInterval(Date().timeIntervalSince(now()))
    }
}

/// What a ``PostgresLedger`` tells its log.
public enum PostgresLedgerEvent: Sendable, Hashable {
    /// The reaper returned this many occurrences whose lease had expired (another runner died).
    case reaped(Int)
    /// This runner had lost the lease on an occurrence `when` (before its post: not posted
    /// here; after it: another runner may post it too).
    case leaseLost(id: String, due: Date, when: String)
    /// Claimed, then found cancelled (or replaced) just before its post: not posted.
    case cancelledBeforePost(id: String, due: Date)
    /// Occurrences claimed and not posted, handed back on stopping.
    case handedBack(Int)
    /// Commands recorded as running by a runner that is gone (no connection to the database),
    /// found during a pass and recorded as interrupted (never run again): their reminder ids.
    case commandsInterrupted(ids: [String])
}

/// The PostgreSQL store as the one Scheduler's ledger (ChimeCore's ``SchedulerStore``): the
/// engine is the same on both stores; what differs is what this protocol's calls do here.
///
/// - A claim returns expired leases first (every runner reaps: there is no leader), then takes
///   what is due by the database's clock in the channels this runner serves, under a lease
///   (``PostgresStore/claim(owner:lease:channels:limit:)``); a recurring reminder's occurrences
///   missed meanwhile fold into the latest (ChimeCore's ``Trigger/caughtUp(from:through:systemZone:)``,
///   as on SQLite).
/// - Just before each post, ``stillWanted(_:)`` checks the occurrence once more: a cancel from
///   any host after the claim, or a lease lost, stops it.
/// - A post is recorded with a fenced mark that advances its reminder in the same statement; a
///   failed post goes back with a retry time, fenced too.
/// - The next deadline is the database's, and at most one (jittered) poll away, which covers a
///   notification lost while the LISTEN connection was down.
public final class PostgresLedger: SchedulerStore {
    /// What the ledger did, since it was made.
    public struct Counters: Sendable, Hashable {
        /// Occurrences recorded as posted.
        public var posted = 0
        /// Occurrences whose lease this runner had lost when it checked or marked them.
        public var leaseLost = 0
        /// Posts recorded as failed (each retried later).
        public var failed = 0
        /// Occurrences claimed, then found cancelled just before the post.
        public var cancelledBeforePost = 0
        /// Occurrences returned by this runner's reaper.
        public var reaped = 0
        /// Claims made.
        public var claims = 0
        public init() {}
    }

    public let store: PostgresStore
    public let owner: String
    public let channels: [String]
    public let lease: Duration
    public let poll: Duration
    public let clock: DatabaseClock
    private let systemZone: @Sendable () -> TimeZone
    private let log: @Sendable (PostgresLedgerEvent) -> Void

    private struct State {
        /// Claimed by this runner and not yet recorded, with their triggers (the mark advances
        /// the reminder from it).
        var claimed: [OccurrenceKey: ClaimedOccurrence] = [:]
        var counters = Counters()
        var random: SeededGenerator
        /// Set by ``stop()``: nothing more is posted; what is claimed is handed back.
        var stopping = false
        /// The last claim failed on the database (an outage), and none has succeeded since.
        var failing = false
        /// Whether any occurrence was held when the quiet state was last read (else
        /// ``heldOccurrences()`` has nothing to ask for).
        var anyHeld = true
        /// When a pass last looked for commands left running by a runner that is gone.
        var commandsCheckedAt: ContinuousClock.Instant?
    }

    private let state: Mutex<State>

    /// - Parameters:
    ///   - owner: this runner's name in the leases: unique among the runners (host and pid, say).
    ///   - channels: the channels it serves (each checked by ``PostgresStore/validateChannel(_:)``).
    ///   - lease: how long a claim is this runner's; after it, any runner's reaper returns it.
    ///   - poll: the longest wait between passes (jittered ±10 %, so that runners started
    ///     together do not poll together): it covers a notification lost while LISTEN was down.
    ///   - jitterSeed: seeds the poll's jitter (a test repeats it); nil: a random seed.
    public init(
        store: PostgresStore,
        owner: String,
        channels: [String] = [PostgresStore.defaultChannel],
        lease: Duration = .seconds(30),
        poll: Duration = .seconds(30),
        clock: DatabaseClock = DatabaseClock(),
        systemZone: @escaping @Sendable () -> TimeZone = { TimeZone.current },
        jitterSeed: UInt64? = nil,
        log: @escaping @Sendable (PostgresLedgerEvent) -> Void = { _ in }
    ) throws(ChimeError) {
        guard !channels.isEmpty else {
            throw ChimeError(.usage, "a runner needs a channel to serve: give at least one (\(PostgresStore.acceptedChannel))")
        }
        for channel in channels { try PostgresStore.validateChannel(channel) }
        self.store = store
        self.owner = owner
        self.channels = channels
        self.lease = lease
        self.poll = poll
        self.clock = clock
        self.systemZone = systemZone
        self.log = log
        var seeder = SystemRandomNumberGenerator()
        self.state = Mutex(State(random: SeededGenerator(seed: jitterSeed ?? seeder.next())))
    }

    public var counters: Counters { state.withLock { $0.counters } }

    /// What is claimed by this runner and not yet recorded (posted or not).
    public var claimedCount: Int { state.withLock { $0.claimed.count } }

    // MARK: SchedulerStore

    public func claimDue(now: Date, horizon: Date, systemZone: TimeZone) throws -> [PendingOccurrence] {
        if state.withLock({ $0.stopping }) { return [] }
        do {
            let claimed = try claim(systemZone: systemZone)
            state.withLock { $0.failing = false }
            return claimed
        } catch {
            state.withLock { $0.failing = true }
            throw error
        }
    }

    /// Whether the database failed the last claim (and none has succeeded since).
    public var databaseFailing: Bool { state.withLock { $0.failing } }

    private func claim(systemZone: TimeZone) throws -> [PendingOccurrence] {
        if !clock.isSet { clock.set(try store.databaseNow()) }
        let reaped = try store.reapExpiredLeases()
        if reaped > 0 {
            state.withLock { $0.counters.reaped += reaped }
            log(.reaped(reaped))
        }
        try interruptGoneCommands()
        var claimed = try store.claim(owner: owner, lease: lease, channels: channels, limit: Scheduler.claimBatch)
        for index in claimed.indices {
            claimed[index] = try caughtUp(claimed[index], now: clock.now(), systemZone: systemZone)
        }
        state.withLock { state in
            state.counters.claims += 1
            for one in claimed { state.claimed[one.occurrence.key] = one }
        }
        return claimed.map(\.occurrence)
    }

    /// The check just before a post: still this runner's and still wanted. Not after ``stop()``.
    public func stillWanted(_ occurrence: PendingOccurrence) throws -> Bool {
        if state.withLock({ $0.stopping }) { return false }
        let key = occurrence.key
        let check = try store.stillWanted([key], owner: owner)
        if !check.cancelled.isEmpty {
            state.withLock { state in
                state.counters.cancelledBeforePost += 1
                state.claimed[key] = nil
            }
            log(.cancelledBeforePost(id: occurrence.reminderID, due: occurrence.due))
            return false
        }
        if !check.leaseLost.isEmpty {
            state.withLock { state in
                state.counters.leaseLost += 1
                state.claimed[key] = nil
            }
            log(.leaseLost(id: occurrence.reminderID, due: occurrence.due, when: "before posting it (not posted here)"))
            return false
        }
        return true
    }

    public func markPosted(_ keys: [OccurrenceKey], at: Date, noteID: String, serverID: UInt32?) throws {
        try markPosted(keys, at: at, noteID: noteID, serverID: serverID, via: nil)
    }

    public func markPosted(_ keys: [OccurrenceKey], at: Date, noteID: String, serverID: UInt32?, via: String?) throws {
        guard !keys.isEmpty else { return }
        let one = keys.count == 1 ? state.withLock { $0.claimed[keys[0]] } : nil
        let result: MarkResult
        if let one {
            result = try store.markPosted(one, owner: owner, noteID: noteID, serverID: serverID, via: via, systemZone: systemZone())
        } else {
            result = try store.markPosted(keys, owner: owner, noteID: noteID, serverID: serverID, via: via, systemZone: systemZone())
        }
        let lost: [ClaimedOccurrence?] = state.withLock { state in
            state.counters.posted += result.posted.count
            state.counters.leaseLost += result.leaseLost.count
            defer { for key in keys { state.claimed[key] = nil } }
            return result.leaseLost.map { state.claimed[$0] }
        }
        for (key, claimed) in zip(result.leaseLost, lost) {
            log(
                .leaseLost(
                    id: claimed?.occurrence.reminderID ?? "#\(key.reminderKey)",
                    due: Date(micros: key.dueMicros),
                    when: "after posting it (another runner may post it too)"
                )
            )
        }
    }

    public func markFailed(_ keys: [OccurrenceKey], at: Date, retryAt: Date, error: String) throws {
        let wait = max(0, retryAt.timeIntervalSince(at))
        let lost = try store.markFailed(keys, owner: owner, retryAfter: .microseconds(Int64(min(wait, 9e15 / 1e6) * 1e6)), error: error)
        state.withLock { state in
            state.counters.failed += keys.count - lost.count
            state.counters.leaseLost += lost.count
            for key in keys { state.claimed[key] = nil }
        }
        for key in lost {
            log(.leaseLost(id: "#\(key.reminderKey)", due: Date(micros: key.dueMicros), when: "recording a failed post"))
        }
    }

    public func nextDeadlines() throws -> (due: Date?, ready: Date?) {
        let deadlines = try store.nextDeadlines(channels: channels)
        clock.set(deadlines.now)
        let factor = state.withLock { Double.random(in: 0.9...1.1, using: &$0.random) }
        let (seconds, attoseconds) = self.poll.components
        let poll = deadlines.now.addingTimeInterval((Double(seconds) + Double(attoseconds) / 1e18) * factor)
        // Ready times, not due times: the Scheduler claims what is due by the database's clock
        // at the instant itself (no look-ahead: a claim takes a lease).
        return (nil, min(deadlines.next ?? poll, poll))
    }

    // MARK: Commands

    /// Fenced as the mark is: only the runner that posted the occurrence (it is still
    /// `lease_owner` of the posted row) records its run, once (``PostgresStore/beginCommand(_:owner:at:)``).
    public func beginCommand(_ key: OccurrenceKey, at instant: Date) throws -> Bool {
        try store.beginCommand(key, owner: owner, at: instant)
    }

    public func commandSpawned(_ key: OccurrenceKey, pid: Int32) throws {
        try store.commandSpawned(key, owner: owner, pid: pid)
    }

    public func finishCommand(_ key: OccurrenceKey, _ run: CommandRun) throws {
        try store.finishCommand(key, owner: owner, run)
    }

    /// At start-up: the runs left running under this runner's name, and those of runners with no
    /// connection to the database (see ``PostgresStore/interruptCommands(owner:at:)``).
    public func interruptCommands(at instant: Date) throws -> [String] {
        let ids = try store.interruptCommands(owner: owner, at: instant)
        state.withLock { $0.commandsCheckedAt = .now }
        return ids
    }

    /// During the passes, once per ``lease`` at most: runs left running by a runner that is gone
    /// are recorded as interrupted by whichever runner looks first.
    private func interruptGoneCommands() throws {
        let due = state.withLock { state in
            guard state.commandsCheckedAt.map({ ContinuousClock.now - $0 < lease }) != true else { return false }
            state.commandsCheckedAt = .now
            return true
        }
        guard due else { return }
        let ids = try store.interruptCommands(owner: nil, at: clock.now())
        if !ids.isEmpty { log(.commandsInterrupted(ids: ids)) }
    }

    // MARK: Answers

    public func recordResponse(_ response: NoteResponse, at instant: Date) throws -> String? {
        let text: String =
            switch response.kind {
            case .action(let key): key
            case .closed(let reason): "closed:" + reason.rawValue
            }
        return try store.recordResponse(id: response.noteID, response: text)
    }

    /// Only what this runner posted: an alert on another host's desktop is that runner's.
    public func shownAlerts(id: String) throws -> [PostedNote] {
        try store.shownAlerts(id: id, owner: owner)
    }

    public func snoozeShown(id: String, until: Date, at instant: Date) throws -> Bool {
        try store.snoozeShown(id: id, until: until)
    }

    public func shownTitle(id: String) throws -> String? {
        try store.lastShown(id: id)?.title
    }

    // MARK: Quiet

    public func quietState() throws -> QuietState {
        var (quiet, anyHeld) = try store.quietStateAndHeld()
        if quiet.settings.hours == nil { quiet.settings.hours = store.quietHoursDefault.withLock { $0 } }
        state.withLock { $0.anyHeld = anyHeld }
        return quiet
    }

    public func heldOccurrences() throws -> [PendingOccurrence] {
        guard state.withLock({ $0.anyHeld }) else { return [] }
        return try store.heldOccurrences(channels: channels)
    }

    /// Held back to the ledger (pending, not ready before `until`): no longer this runner's
    /// claim; its reminder advances past it as a post's mark would.
    public func hold(_ keys: [OccurrenceKey], since: Date, until: Date?) throws {
        try store.hold(keys, owner: owner, since: since, until: until, systemZone: systemZone())
        state.withLock { state in
            state.anyHeld = true
            for key in keys { state.claimed[key] = nil }
        }
    }

    public func release(_ keys: [OccurrenceKey], at instant: Date) throws {
        try store.release(held: keys)
    }

    // MARK: Stopping

    /// Stops posting: the occurrence being posted is posted and recorded; the rest are not
    /// posted (``stillWanted(_:)`` says so) and ``handBack()`` returns them.
    public func stop() {
        state.withLock { $0.stopping = true }
    }

    /// Hands back what this runner claimed and did not post, for the other runners at once
    /// (rather than after the lease). Returns how many.
    @discardableResult
    public func handBack() -> Int {
        let keys = state.withLock { state in
            defer { state.claimed = [:] }
            return Array(state.claimed.keys)
        }
        guard !keys.isEmpty, let released = try? store.release(keys, owner: owner) else { return 0 }
        if released > 0 { log(.handedBack(released)) }
        return released
    }

    // MARK: Catch-up

    /// A claimed occurrence of a recurring reminder whose later occurrences are already past
    /// `now` (the runners were down): moved to the latest of them, counting those it folds, so
    /// that it fires once, as on SQLite. Fenced on this runner's lease; left as it was when the
    /// ledger already has the latest one.
    private func caughtUp(_ claimed: ClaimedOccurrence, now: Date, systemZone: TimeZone) throws -> ClaimedOccurrence {
        let occurrence = claimed.occurrence
        guard claimed.isScheduled, let next = claimed.trigger.nextOccurrence(after: occurrence.due, systemZone: systemZone), next <= now
        else {
            return claimed
        }
        let (latest, missed) = claimed.trigger.caughtUp(from: occurrence.due, through: now, systemZone: systemZone)
        guard latest.micros != occurrence.key.dueMicros,
            try store.moveClaimed(occurrence.key, to: latest.micros, adding: missed, owner: owner)
        else { return claimed }
        var moved = claimed
        moved.occurrence.key.dueMicros = latest.micros
        moved.occurrence.missedCount += missed
        moved.occurrence.readyAt = latest
        return moved
    }
}

import Foundation

/// Fires every due occurrence exactly once through a ``Notifier``.
///
/// Each pass claims what is due in the store's ledger (one transaction that also advances
/// recurring reminders), posts it, and records it as posted. A post that throws leaves the
/// occurrence due with a retry time (exponential backoff): nothing is lost. After a crash, at
/// most the one note in flight can be posted again. Occurrences that come late (the runner was
/// down, the machine asleep, the notifier failing) say how late; more than
/// ``Configuration/summaryThreshold`` late ones in one pass collapse into one summary alert.
public actor Scheduler {
    public struct Configuration: Sendable {
        /// An occurrence posted later than this after its due time counts as late.
        public var lateThreshold: Duration = .seconds(1)
        /// More late occurrences than this in one pass become one summary alert.
        public var summaryThreshold: Int = 3
        /// The first retry waits this long; each further one twice as long.
        public var retryBase: Duration = .seconds(1)
        /// The longest wait between retries.
        public var retryMax: Duration = .seconds(300)
        /// How long before an occurrence's instant its ledger row is written, so that at the
        /// instant the scheduler only posts. Zero writes it at the instant.
        public var lookahead: Duration = .milliseconds(25)

        public init() {}
    }

    public nonisolated let store: any SchedulerStore
    public nonisolated let notifier: any Notifier
    public nonisolated let clock: any WallClock
    public nonisolated let configuration: Configuration
    private let systemZone: @Sendable () -> TimeZone
    private let log: @Sendable (SchedulerEvent) -> Void

    /// - Parameters:
    ///   - systemZone: the zone floating reminders follow, read at each pass and after a
    ///     ``WakeReason/zoneChanged`` (travel changes it).
    ///   - log: told about failures and catch-up; the runner forwards it to swift-log.
    public init(
        store: any SchedulerStore,
        notifier: any Notifier,
        clock: any WallClock = SystemWallClock(),
        configuration: Configuration = Configuration(),
        systemZone: @escaping @Sendable () -> TimeZone = { TimeZone.current },
        log: @escaping @Sendable (SchedulerEvent) -> Void = { _ in }
    ) {
        self.store = store
        self.notifier = notifier
        self.clock = clock
        self.configuration = configuration
        self.systemZone = systemZone
        self.log = log
    }

    /// Occurrences already recorded as due whose instant had not come at the last pass,
    /// ready-time order: at that instant they are posted without touching the store first.
    private var staged: [PendingOccurrence] = []

    /// Fires everything due now, records what falls due within the look-ahead, and returns the
    /// next instant the scheduler must wake at.
    @discardableResult
    public func runPass() async -> Date? {
        staged = []
        var claimedAll = false
        let lookahead = Self.seconds(configuration.lookahead)
        while !claimedAll {
            let now = clock.now()
            let claimed: [PendingOccurrence]
            do {
                claimed = try store.claimDue(now: now, horizon: now.addingTimeInterval(lookahead), systemZone: systemZone())
            } catch {
                log(.storeFailed(String(describing: error)))
                // The store is unwell (disk full, locked): try again shortly rather than spin.
                return now.addingTimeInterval(Self.seconds(configuration.retryBase))
            }
            claimedAll = claimed.count < Self.claimBatch
            let ready = claimed.filter { $0.readyAt <= now }
            staged = claimed.filter { $0.readyAt > now }
            if ready.isEmpty { break }
            await deliver(ready, now: now)
        }
        do {
            let (due, ready) = try store.nextDeadlines()
            // Wake a little before the next due time to record it, and at the ready time of
            // what is recorded (staged occurrences and retries).
            let candidates = [due.map { $0.addingTimeInterval(-lookahead) }, ready, staged.first?.readyAt].compactMap { $0 }
            let next = candidates.min()
            if next.map({ $0.timeIntervalSince(clock.now()) > 1 }) ?? true { store.idle() }
            return next
        } catch {
            log(.storeFailed(String(describing: error)))
            return clock.now().addingTimeInterval(Self.seconds(configuration.retryBase))
        }
    }

    /// Posts the staged occurrences whose instant has come: the firing path, with no store
    /// access before the notifier is called (the ledger already says *due*).
    private func postStaged() async {
        let now = clock.now()
        let ready = staged.prefix { $0.readyAt <= now }
        guard !ready.isEmpty else { return }
        staged.removeFirst(ready.count)
        await deliver(Array(ready), now: now)
    }

    /// The runner's loop: a pass, then park on `waker` until the next deadline, until shutdown
    /// or cancellation. A poke or a clock change drops what was staged and reads the store
    /// again (a cancelled reminder is not posted).
    public func run(waker: any Waker) async {
        var reason = WakeReason.poked
        while !Task.isCancelled {
            if reason == .deadline { await postStaged() }
            if reason == .zoneChanged {
                do {
                    try store.followSystemZone(systemZone(), now: clock.now())
                } catch {
                    log(.storeFailed(String(describing: error)))
                }
            }
            let next = await runPass()
            reason = await waker.wait(until: next)
            if reason == .shutdown { return }
        }
    }

    /// How many occurrences ``SchedulerStore/claimDue(now:systemZone:)`` returns at most; a
    /// full batch means more may be waiting.
    public static let claimBatch = 512

    private func deliver(_ ready: [PendingOccurrence], now: Date) async {
        let late = ready.filter { Self.duration(from: $0.due, to: now) > configuration.lateThreshold }
        if late.count > configuration.summaryThreshold {
            let lateKeys = Set(late.map(\.key))
            await post(summary(of: late), covering: late)
            for occurrence in ready where !lateKeys.contains(occurrence.key) {
                await post(note(for: occurrence), covering: [occurrence])
            }
        } else {
            for occurrence in ready {
                await post(note(for: occurrence), covering: [occurrence])
            }
        }
    }

    private func post(_ makeNote: (Date) -> Note, covering occurrences: [PendingOccurrence]) async {
        let postedAt = clock.now()
        let note = makeNote(postedAt)
        let keys = occurrences.map(\.key)
        do {
            let posted = try await notifier.post(note)
            do {
                // The server's id where there is one: `chime cancel` closes a shown alert by it.
                try store.markPosted(keys, at: postedAt, noteID: posted.serverID.map { "desktop:\($0)" } ?? posted.id)
            } catch {
                // Shown but not recorded: the one case where a restart could show it again.
                log(.storeFailed(String(describing: error)))
            }
        } catch {
            let attempts = (occurrences.map(\.attempts).max() ?? 0) + 1
            let retryAt = clock.now().addingTimeInterval(Self.seconds(backoff(afterAttempts: attempts)))
            log(.deliveryFailed(ids: occurrences.map(\.reminderID), attempt: attempts, retryAt: retryAt, error: String(describing: error)))
            do {
                try store.markFailed(keys, at: postedAt, retryAt: retryAt, error: String(describing: error))
            } catch {
                log(.storeFailed(String(describing: error)))
            }
        }
    }

    /// The wait before retry number `attempts` (1, 2, 4 … seconds, at most ``Configuration/retryMax``).
    public nonisolated func backoff(afterAttempts attempts: Int) -> Duration {
        let exponent = min(max(attempts - 1, 0), 30)
        let wait = configuration.retryBase * (1 << exponent)
        return min(wait, configuration.retryMax)
    }

    private func note(for occurrence: PendingOccurrence) -> (Date) -> Note {
        { postedAt in
            Note(
                id: occurrence.reminderID,
                title: occurrence.title,
                body: occurrence.body,
                deliveries: [Self.delivery(occurrence)],
                postedAt: postedAt
            )
        }
    }

    private func summary(of late: [PendingOccurrence]) -> (Date) -> Note {
        { postedAt in
            let lines = late.prefix(10).map { "• \($0.title)" }
            let more = late.count > 10 ? ["… and \(late.count - 10) more"] : []
            return Note(
                id: "summary",
                title: "\(late.count) missed reminders",
                body: (lines + more).joined(separator: "\n"),
                deliveries: late.map(Self.delivery),
                postedAt: postedAt
            )
        }
    }

    private static func delivery(_ occurrence: PendingOccurrence) -> Note.Delivery {
        Note.Delivery(
            reminderID: occurrence.reminderID,
            title: occurrence.title,
            body: occurrence.body,
            due: occurrence.due,
            missedCount: occurrence.missedCount
        )
    }

    static func duration(from start: Date, to end: Date) -> Duration {
        .nanoseconds(Int64((end.timeIntervalSince(start) * 1e9).rounded()))
    }

    static func seconds(_ duration: Duration) -> TimeInterval {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}

/// What the scheduler reports to its log.
public enum SchedulerEvent: Sendable, Hashable {
    case deliveryFailed(ids: [String], attempt: Int, retryAt: Date, error: String)
    case storeFailed(String)
}

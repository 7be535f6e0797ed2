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
    /// The families whose state the scheduler keeps in step, in the order they were handed in.
    private let families: [any ReminderFamily]
    /// The same, by the reminder kind each owns: an alert's answer goes to its kind's family.
    private let familiesByKind: [String: any ReminderFamily]
    /// Starts reminders' commands (`--exec`); nil: none is run (the commands wait in the ledger's
    /// reminders, never recorded as started).
    public nonisolated let commands: (any CommandLauncher)?
    /// The hooks the config names, by event (``HookEvent/names``), run through ``commands``.
    public nonisolated let hooks: [String: ReminderCommand]
    /// Told after each pass of ``run(waker:)`` (the D-Bus service reads its properties again).
    private let afterPass: @Sendable () -> Void

    /// - Parameters:
    ///   - systemZone: the zone floating reminders follow, read at each pass and after a
    ///     ``WakeReason/zoneChanged`` (travel changes it).
    ///   - log: told about failures and catch-up; the runner forwards it to swift-log.
    ///   - families: prepared before every pass of ``run(waker:)``, in this order; they dress
    ///     their own alerts, take their next step after one is shown, and get the answers to them.
    public init(
        store: any SchedulerStore,
        notifier: any Notifier,
        clock: any WallClock = SystemWallClock(),
        configuration: Configuration = Configuration(),
        systemZone: @escaping @Sendable () -> TimeZone = { TimeZone.current },
        log: @escaping @Sendable (SchedulerEvent) -> Void = { _ in },
        families: [any ReminderFamily] = [],
        commands: (any CommandLauncher)? = nil,
        hooks: [String: ReminderCommand] = [:],
        afterPass: @escaping @Sendable () -> Void = {}
    ) {
        self.commands = commands
        self.hooks = hooks
        self.afterPass = afterPass
        self.store = store
        self.notifier = notifier
        self.clock = clock
        self.configuration = configuration
        self.systemZone = systemZone
        self.log = log
        self.families = families
        self.familiesByKind = Dictionary(families.map { ($0.kind, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// Occurrences already recorded as due whose instant had not come at the last pass,
    /// ready-time order: at that instant they are posted without touching the store first.
    private var staged: [PendingOccurrence] = []

    /// Occurrences this process has shown but could not record as posted (the store full or
    /// locked): never shown again; recorded as posted once the store takes writes again.
    private var shownUnrecorded: [OccurrenceKey: (posted: PostedNote, postedAt: Date)] = [:]

    /// What this process posted lately and when, to answer a ``DeliveryQuery``: an occurrence
    /// cancelled as it was being shown is told apart from one that never will be. Kept for
    /// ``recentWindow`` (a cancel asks within seconds), and at most ``recentCap`` entries.
    private var recentlyPosted: [OccurrenceKey: Date] = [:]
    /// The confirmation's title on an alert whose button was pressed after it was answered.
    public static let alreadyAnswered = "Already answered"
    static let recentWindow: TimeInterval = 600
    static let recentCap = 10_000

    /// Occurrences a ``DeliveryQuery`` was told are not shown: cancelled in the store, and never
    /// posted from what this process had staged or claimed before the cancel (until the next
    /// pass, which reads the store again, drops all of that).
    private var withdrawn: Set<OccurrenceKey> = []

    /// The waker of ``run(waker:)``, asked for questions between two posts as well as between
    /// passes: a long pass (many alerts, a slow notification server) neither keeps a cancel
    /// waiting nor posts what the cancel was told would not be.
    private var questions: (any Waker)?

    /// The last store failure logged, so that an outage is logged once, not at every retry.
    private var storeFailure: String?

    /// How many times the notifier said it is available again (``Notifier/availability``): a
    /// post that failed with ``NotifierUnavailable`` while this changed is retried after its
    /// backoff instead of waiting for the next appearance (it may already have happened).
    private var availableCount = 0

    /// The retry time of an occurrence waiting for the notifier to become available (see
    /// ``NotifierUnavailable``): 9999-12-31T23:59:59Z, never a deadline the runner wakes for.
    public static let waitingForNotifier = Date(micros: 253_402_300_799_000_000)
    /// The quiet settings and hand-made quiet as of the last pass (see ``holdStep(_:now:recorded:)``).
    private var quiet = QuietState()
    /// The families asking to hold ordinary alerts at the last pass, by kind.
    private var familyHolds: [(kind: String, hold: FamilyHold)] = []

    /// Fires everything due now, records what falls due within the look-ahead, and returns the
    /// next instant the scheduler must wake at.
    @discardableResult
    public func runPass() async -> Date? {
        staged = []
        withdrawn = []
        var claimedAll = false
        let lookahead = Self.seconds(configuration.lookahead)
        readHolds()
        while !claimedAll {
            let now = clock.now()
            let claimed: [PendingOccurrence]
            do {
                try recordShown()
                claimed = try store.claimDue(now: now, horizon: now.addingTimeInterval(lookahead), systemZone: systemZone())
                storeRecovered()
            } catch {
                storeFailed(error)
                // The store cannot record what is due (disk full, locked): still show what is
                // due, once, from a read; it is recorded when the store recovers. Try again
                // shortly rather than spin.
                await deliverUnclaimed()
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
            // (An occurrence waiting for the notifier is not a deadline: its availability wakes the loop.)
            let waiting = ready.map { $0 >= Self.waitingForNotifier } ?? false
            let candidates = [due.map { $0.addingTimeInterval(-lookahead) }, waiting ? nil : ready, staged.first?.readyAt].compactMap { $0 }
            let next = candidates.min()
            // Housekeeping (folding the write-ahead log back, an fsync or two: milliseconds) in
            // any gap of a quarter second or more, so that a busy stretch never lets the log
            // grow until SQLite folds it at a commit, in the middle of firing.
            if next.map({ $0.timeIntervalSince(clock.now()) > 0.25 }) ?? true { store.idle() }
            return next
        } catch {
            storeFailed(error)
            return clock.now().addingTimeInterval(Self.seconds(configuration.retryBase))
        }
    }

    /// Records what this process showed while the store could not be written (see
    /// ``shownUnrecorded``), before anything is claimed: so the claim neither shows it again
    /// nor counts it as missed.
    private func recordShown() throws {
        for (key, shown) in shownUnrecorded.sorted(by: { $0.key.dueMicros < $1.key.dueMicros }) {
            try store.recordShown(
                key,
                at: shown.postedAt,
                noteID: shown.posted.id,
                serverID: shown.posted.serverID,
                systemZone: systemZone()
            )
            shownUnrecorded[key] = nil
        }
    }

    /// The fallback when the store cannot be written: shows what is due now, read without
    /// recording it, each occurrence once.
    private func deliverUnclaimed() async {
        // Now, not the pass's start: a claim can wait out the store's busy timeout first.
        let now = clock.now()
        guard let due = try? store.dueWithoutClaiming(now: now) else { return }
        let unseen = due.filter { shownUnrecorded[$0.key] == nil }
        guard !unseen.isEmpty else { return }
        await deliver(unseen, now: now, recorded: false)
    }

    private func storeFailed(_ error: any Error) {
        let text = String(describing: error)
        guard text != storeFailure else { return }
        storeFailure = text
        log(.storeFailed(text))
    }

    private func storeRecovered() {
        guard storeFailure != nil else { return }
        storeFailure = nil
        log(.storeRecovered)
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
        // Start with the write-ahead log folded back (the CLI may have left it long).
        store.idle()
        // What an earlier process left waiting for its notifier is tried again with this one
        // (its notifier tells only of changes from now on). A store that cannot be written
        // now is logged here, once (a removed write-ahead log is recovered by this first write,
        // and must be on record).
        retryWaitingNow()
        interruptCommands()
        questions = waker
        defer { questions = nil }
        // What people do with the alerts (an action, a close) comes in while others fall due: a
        // child task (it runs where the loop runs: the runner's own thread, not the global pool).
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.handleResponses(waker: waker) }
            group.addTask { await self.followAvailability(waker: waker) }
            if let commands { group.addTask { await self.followCommands(commands) } }
            await loop(waker: waker)
            group.cancelAll()
        }
        stopCommands()
        // The families' live notes show what only a running scheduler keeps up to date, and
        // their buttons answer to it: they are closed when it stops.
        for family in families { await family.closeLiveNotes(through: notifier) }
    }

    /// ``run(waker:)``'s loop: a pass, then park until the next deadline, until shutdown.
    private func loop(waker: any Waker) async {
        var reason = WakeReason.poked
        while !Task.isCancelled {
            // At a deadline, post what was recorded ahead, unless a poke is waiting: the CLI
            // changed the store (perhaps cancelled one of them), so the pass reads it first.
            if reason == .deadline && !waker.hasPendingWake() { await postStaged() }
            // Questions from `chime cancel` are answered here, before the pass below drops what
            // was staged and reads the store again: what is not posted by now never will be.
            answer(waker.takeQueries())
            await withdraw(waker.takeWithdrawals())
            if reason == .clockChanged {
                // Set back, a retry's wall-clock instant would lie further off than its backoff.
                do {
                    try store.clampRetries(now: clock.now()) { attempts in Self.seconds(backoff(afterAttempts: attempts)) }
                } catch {
                    storeFailed(error)
                }
            }
            if reason == .zoneChanged {
                do {
                    try store.followSystemZone(systemZone(), now: clock.now())
                } catch {
                    storeFailed(error)
                }
            }
            prepareFamilies(reason)
            startHooks()
            let next = await runPass()
            let live = await updateLiveNotes()
            afterPass()
            reason = await waker.wait(until: [next, live].compactMap { $0 }.min())
            if reason == .shutdown { return }
        }
    }

    /// Closes the alerts shown for each withdrawal's reminder through the notifier (a command
    /// cancelled them), or replaces them by its confirmation (a command answered them): the
    /// notifier closes or replaces its own, or closes by the server's id.
    private func withdraw(_ withdrawals: [Withdrawal]) async {
        for withdrawal in withdrawals {
            let shown: [PostedNote]
            do {
                shown = try store.shownAlerts(id: withdrawal.id)
            } catch {
                storeFailed(error)
                continue
            }
            for alert in shown {
                if let confirmation = withdrawal.confirmation {
                    let note = Note.confirmation(id: withdrawal.id, title: confirmation.title, body: confirmation.body, at: clock.now())
                    try? await notifier.confirm(alert, with: note)
                } else {
                    try? await notifier.withdraw(alert)
                }
            }
        }
    }

    /// Answers each query with the occurrences among its keys that this process has shown; the
    /// others are withdrawn (see ``withdrawn``).
    private func answer(_ queries: [DeliveryQuery]) {
        for query in queries {
            var shown: [OccurrenceKey: Date] = [:]
            for key in query.keys {
                if let postedAt = recentlyPosted[key] ?? shownUnrecorded[key]?.postedAt {
                    shown[key] = postedAt
                } else {
                    withdrawn.insert(key)
                }
            }
            query.answer(shown)
        }
    }

    /// Remembers what was just shown, for ``answer(_:)``, forgetting what is older than the window.
    private func remember(_ keys: [OccurrenceKey], postedAt: Date) {
        if recentlyPosted.count >= Self.recentCap {
            let horizon = postedAt.addingTimeInterval(-Self.recentWindow)
            recentlyPosted = recentlyPosted.filter { $0.value >= horizon }
            // Still full (a burst of posts within the window): the oldest half goes.
            if recentlyPosted.count >= Self.recentCap {
                let kept = recentlyPosted.sorted { $0.value > $1.value }.prefix(Self.recentCap / 2)
                recentlyPosted = Dictionary(uniqueKeysWithValues: kept.map { ($0.key, $0.value) })
            }
        }
        for key in keys { recentlyPosted[key] = postedAt }
    }

    /// Records each answer to an alert in the ledger and hands it to the family of the alert's
    /// kind; when that family changed the store, the loop looks at it again.
    private func handleResponses(waker: any Waker) async {
        for await response in notifier.responses {
            let now = clock.now()
            let kind: String?
            do {
                kind = try store.recordResponse(response, at: now)
            } catch {
                storeFailed(error)
                continue
            }
            // An answer to a family's live note (not in the ledger) goes to the family that owns it.
            let liveNoteOwner = kind == nil ? families.first { $0.ownsLiveNote(response.noteID) } : nil
            let owner = kind.flatMap { familiesByKind[$0] } ?? liveNoteOwner
            var confirmation: Note?
            var changed = false
            if let family = owner {
                do {
                    let answer = try family.answer(response, at: now)
                    changed = answer.changed
                    confirmation = answer.confirmation
                } catch {
                    storeFailed(error)
                }
            }
            if case .action = response.kind, kind == nil, liveNoteOwner == nil {
                // A button pressed on an alert answered already (a second press, or answered
                // from the command line while no runner could close it): the first answer
                // stands, and the alert says so rather than staying as it was.
                confirmation = Note.confirmation(
                    id: response.noteID,
                    title: Self.alreadyAnswered,
                    body: "Nothing changed: the first answer stands.",
                    at: now
                )
            }
            // What the person sees once the answer is handled: the alert, replaced in place.
            if let confirmation { try? await notifier.confirm(PostedNote(id: response.noteID), with: confirmation) }
            if changed { waker.poke() }
            // Told once the answer is recorded and its family has acted on it.
            log(.answered(id: response.noteID, response: response.kind, recorded: kind != nil || liveNoteOwner != nil))
        }
    }

    /// Follows the notifier's ``Notifier/availability``: each time it can deliver again, what
    /// waits for a retry is retried at once (see ``notifierBecameAvailable()``).
    private func followAvailability(waker: any Waker) async {
        for await available in notifier.availability {
            log(.notifierChanged(available: available, destination: notifier.destination))
            guard available else { continue }
            notifierBecameAvailable()
            waker.poke()
        }
    }

    /// The notifier can deliver again: every occurrence waiting for a retry (for the notifier,
    /// or for its backoff) is made ready now in the ledger, so the next pass posts each once.
    public func notifierBecameAvailable() {
        availableCount += 1
        retryWaitingNow()
    }

    /// Makes every occurrence waiting for a retry ready now in the ledger; a store failure is logged.
    private func retryWaitingNow() {
        do {
            try store.clampRetries(now: clock.now()) { _ in 0 }
        } catch {
            storeFailed(error)
        }
    }

    /// Lets each family bring its state in step before a pass (see ``ReminderFamily/prepare(reason:)``).
    private func prepareFamilies(_ reason: WakeReason) {
        for family in families {
            do {
                try family.prepare(reason: reason)
            } catch {
                storeFailed(error)
            }
        }
    }

    /// Lets each family show or update its live notes after a pass (see
    /// ``ReminderFamily/updateLiveNotes(through:at:)``); returns the earliest instant one of
    /// them needs to look again.
    private func updateLiveNotes() async -> Date? {
        var next: Date?
        for family in families {
            if let wake = await family.updateLiveNotes(through: notifier, at: clock.now()) { next = min(next ?? wake, wake) }
        }
        return next
    }

    /// How many occurrences ``SchedulerStore/claimDue(now:systemZone:)`` returns at most; a
    /// full batch means more may be waiting.
    public static let claimBatch = 512

    /// - Parameter recorded: whether the ledger holds these occurrences as due; when it does
    ///   not (read while the store could not be written), a post is only remembered, to be
    ///   recorded by ``recordShown()``: marking an absent row as posted would change nothing,
    ///   and succeed even on a full disk.
    private func deliver(_ ready: [PendingOccurrence], now: Date, recorded: Bool = true) async {
        let (ready, released) = holdStep(ready, now: now, recorded: recorded)
        let late = ready.filter { Self.duration(from: $0.due, to: now) > configuration.lateThreshold }
        if late.count > configuration.summaryThreshold {
            let lateKeys = Set(late.map(\.key))
            await post(late, asSummary: true, recorded: recorded)
            for occurrence in ready where !lateKeys.contains(occurrence.key) {
                await post([occurrence], asSummary: false, recorded: recorded)
            }
        } else {
            for occurrence in ready {
                await post([occurrence], asSummary: false, recorded: recorded)
            }
        }
        // What a hold let go comes after what falls due now (a planted tree, then the summary).
        await deliverReleased(released, recorded: recorded)
    }

    // MARK: Quiet

    /// Whether an occurrence is posted now or held, and until when (nil: until a family lets go).
    enum HoldDecision: Sendable, Hashable {
        case post
        case hold(until: Date?)
    }

    /// Reads the quiet settings and asks the families whether they hold, once per pass. A store
    /// that cannot be read keeps the last settings.
    private func readHolds() {
        do {
            quiet = try store.quietState()
        } catch {
            storeFailed(error)
        }
        familyHolds = []
        if quiet.settings.familyHold {
            for family in families {
                do {
                    if let hold = try family.hold() { familyHolds.append((family.kind, hold)) }
                } catch {
                    storeFailed(error)
                }
            }
        }
        reconcileHeld(now: clock.now())
    }

    /// What quiet does with `occurrence`, whose alert would have `urgency` (after its family
    /// decorated it). A critical alert always comes; an essential family's (a dose) comes unless
    /// the person chose `wait`; the rest is held while quiet, or while another family holds.
    func holdDecision(_ occurrence: PendingOccurrence, urgency: Note.Urgency, now: Date) -> HoldDecision {
        if urgency == .critical { return .post }
        let essential = familiesByKind[occurrence.kind]?.isEssential ?? false
        if let period = quiet.period(at: now, zone: systemZone()), !essential || quiet.settings.essential == .wait {
            return .hold(until: period.end)
        }
        if !essential, familyHolds.contains(where: { $0.kind != occurrence.kind }) { return .hold(until: nil) }
        return .post
    }

    /// Before a pass claims: each occurrence held earlier is held on (until the current quiet's
    /// end, which may have moved) or let go (ready now, to come in the summary). What is held
    /// stays due in the ledger, so a restart or a clock change loses nothing and doubles nothing.
    private func reconcileHeld(now: Date) {
        do {
            let held = try store.heldOccurrences()
            guard !held.isEmpty else { return }
            var release: [OccurrenceKey] = []
            var rehold: [Date?: [OccurrenceKey]] = [:]
            for occurrence in held {
                let urgency = note(for: occurrence)(now).urgency
                switch holdDecision(occurrence, urgency: urgency, now: now) {
                case .post:
                    release.append(occurrence.key)
                case .hold(let until):
                    let current = occurrence.readyAt == .distantFuture ? nil : occurrence.readyAt
                    if current?.micros != until?.micros { rehold[until, default: []].append(occurrence.key) }
                }
            }
            for (until, keys) in rehold { try store.hold(keys, since: now, until: until) }
            if !release.isEmpty { try store.release(release, at: now) }
        } catch {
            storeFailed(error)
        }
    }

    /// Takes out of `ready` what quiet holds now, recording it as held (when the ledger has it:
    /// a read made while the store could not be written is only left for later). Returns what
    /// is posted as usual, and what a hold let go, for ``deliverReleased(_:recorded:)``.
    private func holdStep(
        _ ready: [PendingOccurrence],
        now: Date,
        recorded: Bool
    ) -> (ready: [PendingOccurrence], released: [PendingOccurrence]) {
        // The firing path when nothing holds (the usual case): no alert is dressed twice.
        if familyHolds.isEmpty && quiet.period(at: now, zone: systemZone()) == nil {
            guard ready.contains(where: { $0.heldSince != nil }) else { return (ready, []) }
            return (ready.filter { $0.heldSince == nil }, ready.filter { $0.heldSince != nil })
        }
        var post: [PendingOccurrence] = []
        var released: [PendingOccurrence] = []
        var holds: [Date?: [PendingOccurrence]] = [:]
        for occurrence in ready {
            let urgency = note(for: occurrence)(now).urgency
            switch holdDecision(occurrence, urgency: urgency, now: now) {
            case .post where occurrence.heldSince != nil: released.append(occurrence)
            case .post: post.append(occurrence)
            case .hold(let until): holds[until, default: []].append(occurrence)
            }
        }
        guard recorded else { return (post, released) }
        for (until, occurrences) in holds {
            do {
                try store.hold(occurrences.map(\.key), since: now, until: until)
                log(.held(ids: occurrences.map(\.reminderID), until: until))
            } catch {
                // Not recorded as held: posted now rather than risk it never coming.
                storeFailed(error)
                post += occurrences
            }
        }
        return (post, released)
    }

    /// What a hold let go: essential alerts one by one (each with its own actions), the others
    /// as one summary (its own alert when only one was held).
    private func deliverReleased(_ released: [PendingOccurrence], recorded: Bool) async {
        guard !released.isEmpty else { return }
        log(.released(ids: released.map(\.reminderID)))
        let essential = released.filter { familiesByKind[$0.kind]?.isEssential ?? false }
        let ordinary = released.filter { !(familiesByKind[$0.kind]?.isEssential ?? false) }
        for occurrence in essential { await post([occurrence], asSummary: false, recorded: recorded) }
        if !ordinary.isEmpty {
            await post(ordinary, asSummary: true, recorded: recorded) { count in "\(count) reminders held while quiet" }
        }
    }

    /// Posts one note for `candidates` (a summary of them, or the one occurrence's own), less
    /// any a cancel has withdrawn meanwhile; and records it.
    private func post(
        _ candidates: [PendingOccurrence],
        asSummary: Bool,
        recorded: Bool,
        summaryTitle: (@Sendable (Int) -> String)? = nil
    ) async {
        // A question that came in since the last post is answered first (a mutex, no syscall),
        // so that what it is told "not shown" is not posted below.
        if let questions {
            let queries = questions.takeQueries()
            if !queries.isEmpty { answer(queries) }
        }
        var occurrences = withdrawn.isEmpty ? candidates : candidates.filter { !withdrawn.contains($0.key) }
        if recorded {
            // The ledger's last word before the post (a ledger several runners share: cancelled
            // elsewhere since the claim, or no longer this runner's). Not checked, not posted.
            do {
                occurrences = try occurrences.filter { try store.stillWanted($0) }
            } catch {
                storeFailed(error)
                return
            }
        }
        guard let first = occurrences.first else { return }
        let makeNote =
            asSummary && occurrences.count > 1
            ? summary(of: occurrences, title: summaryTitle?(occurrences.count)) : note(for: first)
        let postedAt = clock.now()
        let note = makeNote(postedAt)
        await show(note, for: occurrences, postedAt: postedAt, recorded: recorded)
        // The commands run once the alert is out (or failed to go out: the alert is retried, the
        // command is not); the ledger records each as started before it is spawned.
        if recorded { startCommands(occurrences) }
    }

    /// Posts `note` for `occurrences` and records it (see ``post(_:asSummary:recorded:summaryTitle:)``).
    private func show(_ note: Note, for occurrences: [PendingOccurrence], postedAt: Date, recorded: Bool) async {
        let keys = occurrences.map(\.key)
        let availableBefore = availableCount
        do {
            let posted = try await notifier.post(note)
            remember(keys, postedAt: postedAt)
            // The server's id where there is one: `chime cancel` closes a shown alert by it.
            guard recorded else {
                for key in keys { shownUnrecorded[key] = (posted, postedAt) }
                return
            }
            do {
                try store.markPosted(keys, at: postedAt, noteID: posted.id, serverID: posted.serverID, via: posted.via)
            } catch {
                // Shown but not recorded: never shown again by this process, recorded when the
                // store recovers (only a crash before then could show it again).
                for key in keys { shownUnrecorded[key] = (posted, postedAt) }
                storeFailed(error)
                return
            }
            // Each family shown takes its next step (a dose's repeat planned, its next dose made).
            for family in families {
                let its = occurrences.filter { $0.kind == family.kind }
                guard !its.isEmpty else { continue }
                do {
                    try family.didPost(its, at: postedAt)
                } catch {
                    storeFailed(error)
                }
            }
        } catch {
            let attempts = (occurrences.map(\.attempts).max() ?? 0) + 1
            let retryAt: Date
            let ids = occurrences.map(\.reminderID)
            if error is NotifierUnavailable && availableCount == availableBefore {
                // No timer: the notifier's next appearance retries it (followAvailability).
                retryAt = Self.waitingForNotifier
                log(.deliveryWaiting(ids: ids, error: String(describing: error)))
            } else {
                retryAt = clock.now().addingTimeInterval(Self.seconds(backoff(afterAttempts: attempts)))
                log(.deliveryFailed(ids: ids, attempt: attempts, retryAt: retryAt, error: String(describing: error)))
            }
            do {
                try store.markFailed(keys, at: postedAt, retryAt: retryAt, error: String(describing: error))
            } catch {
                storeFailed(error)
            }
        }
    }

    // MARK: Commands

    /// Starts the command of each occurrence that has one, once: recorded as started in the
    /// ledger first, so a runner killed while it runs reports it rather than running it again.
    private func startCommands(_ occurrences: [PendingOccurrence]) {
        guard let commands else { return }
        for occurrence in occurrences {
            guard let command = occurrence.command else { continue }
            let startedAt = clock.now()
            do {
                guard try store.beginCommand(occurrence.key, at: startedAt) else { continue }
            } catch {
                storeFailed(error)
                continue
            }
            let environment = [
                "CHIME_ID": occurrence.reminderID,
                "CHIME_TITLE": occurrence.title,
                "CHIME_DUE": TimeText.iso(occurrence.due),
            ]
            do {
                let pid = try commands.launch(command, for: occurrence.key, environment: environment)
                runningCommands[occurrence.key] = occurrence.reminderID
                log(.commandStarted(id: occurrence.reminderID, pid: pid))
                do {
                    try store.commandSpawned(occurrence.key, pid: pid)
                } catch {
                    storeFailed(error)
                }
            } catch {
                let reason = (error as? ChimeError)?.message ?? String(describing: error)
                log(.commandEnded(id: occurrence.reminderID, outcome: "failed to start: \(reason)"))
                let run = CommandRun(state: .failed, startedAt: startedAt, finishedAt: clock.now(), error: reason)
                do {
                    try store.finishCommand(occurrence.key, run)
                } catch {
                    storeFailed(error)
                }
            }
        }
    }

    // MARK: Hooks

    /// Runs the hook of each family event recorded since the last pass, once: recorded as
    /// running before it is spawned. An event the config names no hook for is forgotten.
    ///
    /// One at a time, in the order of their events: the next starts when the one running ends
    /// (``finishCommand(_:)``; its time limit bounds the wait). Hooks come in pairs that undo
    /// each other (focus started: do not disturb on; given up: off), and two run at once could
    /// end in either order, leaving the person in the state of the first event.
    public func startHooks() {
        guard let commands else { return }
        let pending: [HookRecord]
        do {
            pending = try store.pendingHooks()
        } catch {
            storeFailed(error)
            return
        }
        for record in pending {
            let event = record.event
            do {
                guard let command = hooks[event.name] else {
                    try store.dropHook(record.id)
                    continue
                }
                guard runningHooks.isEmpty else { continue }  // the next once the one running ends
                let startedAt = clock.now()
                guard try store.beginHook(record.id, command: command, at: startedAt) else { continue }
                let pid: Int32
                do {
                    pid = try commands.launch(command, for: record.launchKey, environment: event.hookEnvironment)
                } catch {
                    let reason = (error as? ChimeError)?.message ?? String(describing: error)
                    log(.hookEnded(event: event.name, subject: event.subject, outcome: "failed to start: \(reason)"))
                    let run = CommandRun(state: .failed, startedAt: startedAt, finishedAt: clock.now(), error: reason)
                    try store.finishHook(record.id, run)
                    continue
                }
                runningHooks[record.id] = event
                log(.hookStarted(event: event.name, subject: event.subject, pid: pid))
                try store.hookSpawned(record.id, pid: pid)
            } catch {
                storeFailed(error)
            }
        }
    }

    /// The events of the hooks this process started and that have not ended, by row.
    private var runningHooks: [Int64: HookEvent] = [:]

    /// The reminder ids of the commands this process started and that have not ended, for the log.
    private var runningCommands: [OccurrenceKey: String] = [:]

    /// Records each command's end as its launcher tells it.
    private func followCommands(_ commands: any CommandLauncher) async {
        for await end in commands.ends { finishCommand(end) }
    }

    /// Records how a command ended (see ``followCommands(_:)``).
    public func finishCommand(_ end: CommandEnd) {
        let now = clock.now()
        var run = CommandRun(state: .exited, startedAt: now, finishedAt: now, output: end.output)
        switch end.how {
        case .exited(let status): run.exitStatus = status
        case .timedOut: run.state = .timedOut
        case .interrupted:
            run.state = .interrupted
            run.error = CommandRun.interruptedReason
        }
        if let id = HookRecord.hookID(end.key) {
            let event = runningHooks.removeValue(forKey: id)
            log(.hookEnded(event: event?.name ?? "-", subject: event?.subject ?? "-", outcome: run.summary))
            do {
                try store.finishHook(id, run)
            } catch {
                storeFailed(error)
            }
            startHooks()  // the next event's, in order
            return
        }
        log(.commandEnded(id: runningCommands.removeValue(forKey: end.key), outcome: run.summary))
        do {
            try store.finishCommand(end.key, run)
        } catch {
            storeFailed(error)
        }
    }

    /// At start-up: commands an earlier runner left running (it was killed while they ran) are
    /// recorded as interrupted and never run again.
    private func interruptCommands() {
        do {
            let ids = try store.interruptCommands(at: clock.now())
            if !ids.isEmpty { log(.commandsInterrupted(ids: ids)) }
            let events = try store.interruptHooks(at: clock.now())
            if !events.isEmpty { log(.hooksInterrupted(events: events)) }
        } catch {
            storeFailed(error)
        }
    }

    /// At shutdown: what still runs has its process group sent SIGTERM, and is recorded as interrupted.
    private func stopCommands() {
        guard let commands else { return }
        for key in commands.stopAll() { finishCommand(CommandEnd(key: key, how: .interrupted, output: "")) }
    }

    /// The wait before retry number `attempts` (1, 2, 4 … seconds, at most ``Configuration/retryMax``).
    public nonisolated func backoff(afterAttempts attempts: Int) -> Duration {
        Self.backoff(afterAttempts: attempts, base: configuration.retryBase, max: configuration.retryMax)
    }

    /// The wait before retry number `attempts`: `base`, twice as long each further time, at most
    /// `max`.
    public static func backoff(afterAttempts attempts: Int, base: Duration, max: Duration) -> Duration {
        let exponent = Swift.min(Swift.max(attempts - 1, 0), 30)
        return Swift.min(base * (1 << exponent), max)
    }

    /// The alert for one occurrence, before any family dresses it: the reminder's id, title and
    /// body, its delivery (due, missed count, kind, attempt) and its own look.
    public static func note(for occurrence: PendingOccurrence, postedAt: Date) -> Note {
        var note = Note(
            id: occurrence.reminderID,
            title: occurrence.title,
            body: occurrence.body,
            deliveries: [delivery(occurrence)],
            postedAt: postedAt
        )
        occurrence.presentation.apply(to: &note)
        return note
    }

    private func note(for occurrence: PendingOccurrence) -> (Date) -> Note {
        let family = familiesByKind[occurrence.kind]
        return { postedAt in
            // The reminder's own look first (urgency, sticky, icon, sound); its family dresses it after.
            var note = Self.note(for: occurrence, postedAt: postedAt)
            family?.decorate(&note, for: occurrence)
            return note
        }
    }

    private func summary(of late: [PendingOccurrence], title: String? = nil) -> (Date) -> Note {
        { postedAt in
            let lines = late.prefix(10).map { "• \($0.title)" }
            let more = late.count > 10 ? ["… and \(late.count - 10) more"] : []
            return Note(
                id: "summary",
                title: title ?? "\(late.count) missed reminders",
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
            missedCount: occurrence.missedCount,
            kind: occurrence.kind,
            attempt: occurrence.attempts + 1
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
    /// The store failed (disk full, locked, I/O error); logged once per outage.
    case storeFailed(String)
    /// A person answered the alert for reminder `id`; `recorded` when it matched a shown alert.
    case answered(id: String, response: NoteResponse.Kind, recorded: Bool)
    /// The store takes writes again after a failure.
    case storeRecovered
    /// The notifier could not deliver these and said it will tell when it can
    /// (``NotifierUnavailable``): they wait for it, without a retry timer.
    case deliveryWaiting(ids: [String], error: String)
    /// The notifier can deliver again (`available`), or no longer can; `destination` is where
    /// alerts go now (``Notifier/destination``).
    case notifierChanged(available: Bool, destination: String?)
    /// Quiet (or a family's hold) held these reminders' alerts, until `until` (nil: until the
    /// family lets go); they stay due in the ledger.
    case held(ids: [String], until: Date?)
    /// A hold ended: these held alerts come now (in one summary, essential ones on their own).
    case released(ids: [String])
    /// Reminder `id`'s command started, as process `pid`.
    case commandStarted(id: String, pid: Int32)
    /// A command ended: "exit 0", "timed out", "failed to start: …" (`id` when known).
    case commandEnded(id: String?, outcome: String)
    /// At start-up: these reminders' commands were running when the last runner stopped;
    /// recorded as interrupted, not run again.
    case commandsInterrupted(ids: [String])
    /// The hook of `event` (about `subject`) started, as process `pid`.
    case hookStarted(event: String, subject: String, pid: Int32)
    /// A hook ended: "exit 0", "timed out", "failed to start: …".
    case hookEnded(event: String, subject: String, outcome: String)
    /// At start-up: these events' hooks were running when the last runner stopped; recorded as
    /// interrupted, not run again.
    case hooksInterrupted(events: [String])
}

import Foundation

/// Identifies one occurrence in the delivery ledger: a reminder (by the store's own key, so a
/// replaced reminder with the same id is a different one) and its due instant.
public struct OccurrenceKey: Sendable, Hashable {
    public var reminderKey: Int64
    /// Due instant in microseconds since 1970, as the ledger stores it.
    public var dueMicros: Int64
    public init(reminderKey: Int64, dueMicros: Int64) {
        self.reminderKey = reminderKey
        self.dueMicros = dueMicros
    }
}

/// An occurrence recorded as due and not yet posted.
/// An alert waiting outside its reminder's schedule (see `ReminderStore.waitingAlerts()`): a
/// snooze's re-alert, or an occurrence quiet or a family holds.
public struct WaitingAlert: Sendable, Hashable {
    public var occurrence: PendingOccurrence
    /// For a snooze's re-alert: the due instant of the alert snoozed. Its own due instant is the
    /// snooze's end.
    public var snoozeOf: Date?

    public init(occurrence: PendingOccurrence, snoozeOf: Date? = nil) {
        (self.occurrence, self.snoozeOf) = (occurrence, snoozeOf)
    }

    public var isSnoozed: Bool { snoozeOf != nil }
    public var isHeld: Bool { occurrence.heldSince != nil }
    /// When it was due: a snooze's end, or the reminder's time.
    public var due: Date { Date(micros: occurrence.key.dueMicros) }
}

public struct PendingOccurrence: Sendable, Hashable {
    public var key: OccurrenceKey
    public var reminderID: String
    public var kind: String
    public var title: String
    public var body: String
    public var missedCount: Int
    /// Failed posts so far.
    public var attempts: Int
    /// When it may be posted: its due time, or the retry time after a failed post (for one held
    /// until a family lets it go, `distantFuture`).
    public var readyAt: Date
    /// How the reminder's alert looks (urgency, sticky, icon, sound).
    public var presentation: Presentation
    /// When quiet (or a family's hold) held it back; nil for one never held. A held occurrence
    /// stays due in the ledger until the hold ends, then comes in the end-of-quiet summary.
    public var heldSince: Date?
    /// The command its reminder runs when it fires (none for a snoozed alert's re-alert: the
    /// command ran for the occurrence snoozed).
    public var command: ReminderCommand?

    public init(
        key: OccurrenceKey,
        reminderID: String,
        kind: String = "plain",
        title: String,
        body: String,
        missedCount: Int = 0,
        attempts: Int = 0,
        readyAt: Date? = nil,
        presentation: Presentation = Presentation(),
        heldSince: Date? = nil,
        command: ReminderCommand? = nil
    ) {
        self.command = command
        self.key = key
        self.reminderID = reminderID
        self.kind = kind
        self.title = title
        self.body = body
        self.missedCount = missedCount
        self.attempts = attempts
        self.readyAt = readyAt ?? Date(micros: key.dueMicros)
        self.presentation = presentation
        self.heldSince = heldSince
    }

    public var due: Date { Date(micros: key.dueMicros) }
}

/// The persistence the scheduler needs. ChimeStore implements it on SQLite; its guarantees
/// are what make delivery exactly-once.
public protocol SchedulerStore: Sendable {
    /// In one transaction: records every occurrence due at or before `horizon` in the ledger
    /// as *due* (at most once per occurrence, ready at its due time), advances recurring
    /// reminders past it (occurrences missed before `now` fold into the latest one) and
    /// finishes one-shots; then returns the due occurrences ready at or before `horizon`,
    /// by ready time.
    ///
    /// A `horizon` a little after `now` lets the scheduler write the ledger *before* an
    /// occurrence's instant, so that at the instant itself it only has to post.
    func claimDue(now: Date, horizon: Date, systemZone: TimeZone) throws -> [PendingOccurrence]
    /// What is due at or before `now`, read without writing: pending reminders whose next due
    /// time has come (keyed by that due time, as ``claimDue(now:horizon:systemZone:)`` would
    /// record them) and occurrences recorded as due and ready. The scheduler's fallback when
    /// the store cannot be written (disk full, locked): it still shows what is due, once.
    func dueWithoutClaiming(now: Date) throws -> [PendingOccurrence]
    /// Records an occurrence the scheduler showed while the store could not be written: in the
    /// ledger as posted (whether or not it was recorded as due), and, when it is the
    /// reminder's next due time, advances the reminder past it (a one-shot is finished).
    func recordShown(_ key: OccurrenceKey, at postedAt: Date, noteID: String, serverID: UInt32?, systemZone: TimeZone) throws
    /// After the wall clock was set back: brings each retry that now lies further ahead than
    /// its own backoff (`maxWait(attempts)` seconds) back to `now` plus that backoff, so a
    /// clock set back an hour does not delay a retry by an hour.
    func clampRetries(now: Date, maxWait: (_ attempts: Int) -> TimeInterval) throws
    /// The last check just before `occurrence` is posted: false when it must not be (on a
    /// ledger shared by several runners: cancelled from another host after the claim, or no
    /// longer this runner's). A store whose claims cannot go stale need not implement it: the
    /// default says yes without a look.
    func stillWanted(_ occurrence: PendingOccurrence) throws -> Bool
    /// Records that these occurrences were posted.
    /// - Parameters: noteID: the note's id; serverID: the notification server's own id for the
    ///   alert, where there is one (the desktop's), to close it later from any process.
    func markPosted(_ keys: [OccurrenceKey], at: Date, noteID: String, serverID: UInt32?) throws
    /// ``markPosted(_:at:noteID:serverID:)``, also recording `via`, the channel that showed
    /// them (``PostedNote/via``), for `chime history`. (A store that keeps no channel need not
    /// implement it: the default records the rest.)
    func markPosted(_ keys: [OccurrenceKey], at: Date, noteID: String, serverID: UInt32?, via: String?) throws
    /// Records a failed post; the occurrences stay due and become ready again at `retryAt`.
    func markFailed(_ keys: [OccurrenceKey], at: Date, retryAt: Date, error: String) throws
    /// The earliest next due time of a pending reminder, and the earliest ready time of an
    /// occurrence recorded as due but not posted.
    func nextDeadlines() throws -> (due: Date?, ready: Date?)
    /// Housekeeping the store defers to a quiet moment (the scheduler calls it when nothing is
    /// due for a while): e.g. folding SQLite's write-ahead log back into the database.
    func idle()
    /// Recomputes the next due time of floating recurring reminders after the system zone
    /// changed, so that 08:00 stays 08:00 local.
    func followSystemZone(_ systemZone: TimeZone, now: Date) throws
    /// Records what a person did with a shown alert (an action, or closed) against the latest
    /// posted occurrence of the reminder it was for. Returns that reminder's ``Reminder/kind``,
    /// so the answer can go to its family; nil when it matched no shown alert (the first
    /// answer stands).
    func recordResponse(_ response: NoteResponse, at instant: Date) throws -> String?
    /// The alerts shown for reminder `id` that may still be on screen (with the server's id
    /// where there is one): what `chime cancel` asks the runner to withdraw.
    func shownAlerts(id: String) throws -> [PostedNote]
    /// Brings the alert last shown for reminder `id` back once at `until`, after it was answered
    /// with `snooze` (``recordResponse(_:at:)`` recorded that): one more occurrence of the same
    /// reminder, due then. At most one per shown alert, however often it is asked. Returns
    /// whether it recorded one.
    func snoozeShown(id: String, until: Date, at instant: Date) throws -> Bool
    /// The title of the alert shown last for reminder `id`, for the confirmation that replaces
    /// it once answered; nil when none was shown (or the store keeps no titles).
    func shownTitle(id: String) throws -> String?
    /// The quiet settings and the quiet asked for by hand, read at every pass.
    func quietState() throws -> QuietState
    /// Occurrences held by quiet: recorded as due, not posted, with ``PendingOccurrence/heldSince``.
    func heldOccurrences() throws -> [PendingOccurrence]
    /// Holds due occurrences: they stay due in the ledger, not ready before `until` (nil: until
    /// ``release(_:at:)``); ``PendingOccurrence/heldSince`` becomes `since` where it was unset.
    func hold(_ keys: [OccurrenceKey], since: Date, until: Date?) throws
    /// Lets held occurrences go: ready at `instant`, still marked as held (they come in the summary).
    func release(_ keys: [OccurrenceKey], at instant: Date) throws
    /// Records, before it is spawned, that the command of occurrence `key` starts at `instant`:
    /// true the first time, false when it was started before (it is never started again).
    func beginCommand(_ key: OccurrenceKey, at instant: Date) throws -> Bool
    /// Records the process id of a command ``beginCommand(_:at:)`` recorded.
    func commandSpawned(_ key: OccurrenceKey, pid: Int32) throws
    /// Records how a command's run ended (exited, timed out, interrupted, failed to start).
    func finishCommand(_ key: OccurrenceKey, _ run: CommandRun) throws
    /// At start-up: each command recorded as running whose runner is gone (it stopped while the
    /// command ran) is recorded as interrupted, never run again. Returns their reminder ids.
    func interruptCommands(at instant: Date) throws -> [String]
    /// Family events recorded and not yet handled (``HookEvent``), oldest first.
    func pendingHooks() throws -> [HookRecord]
    /// Records, before it is spawned, that hook row `id` runs `command` from `instant`: true the
    /// first time, false when it was handled before (it never runs again).
    func beginHook(_ id: Int64, command: ReminderCommand, at instant: Date) throws -> Bool
    /// Records the process id of a hook ``beginHook(_:command:at:)`` recorded.
    func hookSpawned(_ id: Int64, pid: Int32) throws
    /// Records how a hook's run ended.
    func finishHook(_ id: Int64, _ run: CommandRun) throws
    /// Forgets an event no hook follows (the config names none for it).
    func dropHook(_ id: Int64) throws
    /// At start-up: hooks recorded as running are recorded as interrupted. Returns their events.
    func interruptHooks(at instant: Date) throws -> [String]
}

extension SchedulerStore {
    public func idle() {}

    public func stillWanted(_ occurrence: PendingOccurrence) throws -> Bool { true }

    public func recordResponse(_ response: NoteResponse, at instant: Date) throws -> String? { nil }

    public func shownAlerts(id: String) throws -> [PostedNote] { [] }

    public func snoozeShown(id: String, until: Date, at instant: Date) throws -> Bool { false }

    public func shownTitle(id: String) throws -> String? { nil }

    /// ``markPosted(_:at:noteID:serverID:)`` for an alert with no server id.
    public func markPosted(_ keys: [OccurrenceKey], at: Date, noteID: String) throws {
        try markPosted(keys, at: at, noteID: noteID, serverID: nil)
    }

    public func markPosted(_ keys: [OccurrenceKey], at: Date, noteID: String, serverID: UInt32?, via: String?) throws {
        try markPosted(keys, at: at, noteID: noteID, serverID: serverID)
    }

    public func dueWithoutClaiming(now: Date) throws -> [PendingOccurrence] { [] }

    public func clampRetries(now: Date, maxWait: (_ attempts: Int) -> TimeInterval) throws {}

    public func recordShown(_ key: OccurrenceKey, at postedAt: Date, noteID: String, serverID: UInt32?, systemZone: TimeZone) throws {
        try markPosted([key], at: postedAt, noteID: noteID, serverID: serverID)
    }

    public func followSystemZone(_ systemZone: TimeZone, now: Date) throws {}

    /// Never quiet: a store that keeps no settings.
    public func quietState() throws -> QuietState { QuietState() }

    public func heldOccurrences() throws -> [PendingOccurrence] { [] }

    /// A store that cannot hold refuses: the scheduler then posts (better heard than lost).
    public func hold(_ keys: [OccurrenceKey], since: Date, until: Date?) throws {
        throw ChimeError(.failure, "this store cannot hold alerts")
    }

    public func release(_ keys: [OccurrenceKey], at instant: Date) throws {}

    /// A store that keeps no command runs starts none (it cannot promise once).
    public func beginCommand(_ key: OccurrenceKey, at instant: Date) throws -> Bool { false }

    public func commandSpawned(_ key: OccurrenceKey, pid: Int32) throws {}

    public func finishCommand(_ key: OccurrenceKey, _ run: CommandRun) throws {}

    public func interruptCommands(at instant: Date) throws -> [String] { [] }

    /// A store that keeps no hook runs (PostgreSQL, whose stores hold no families) runs none.
    public func pendingHooks() throws -> [HookRecord] { [] }

    public func beginHook(_ id: Int64, command: ReminderCommand, at instant: Date) throws -> Bool { false }

    public func hookSpawned(_ id: Int64, pid: Int32) throws {}

    public func finishHook(_ id: Int64, _ run: CommandRun) throws {}

    public func dropHook(_ id: Int64) throws {}

    public func interruptHooks(at instant: Date) throws -> [String] { [] }

    /// Claims what is due at `now` (no look-ahead).
    public func claimDue(now: Date, systemZone: TimeZone) throws -> [PendingOccurrence] {
        try claimDue(now: now, horizon: now, systemZone: systemZone)
    }

    /// The earliest instant at which something will be due or ready to post.
    public func nextWake() throws -> Date? {
        let (due, ready) = try nextDeadlines()
        switch (due, ready) {
        case let (due?, ready?): return min(due, ready)
        case let (due, ready): return due ?? ready
        }
    }
}

extension Date {
    /// Microseconds from 1970 to Date's own reference instant, 2001-01-01T00:00:00Z.
    static let referenceMicros: Int64 = 978_307_200_000_000

    /// The instant `micros` microseconds after 1970-01-01T00:00:00Z.
    ///
    /// Counted from 2001, where Date keeps its Double, so that `Date(micros: m).micros == m` for
    /// every instant whose microseconds a Double can tell apart (some 272 years either side of 2001).
    /// Through 1970 the two conversions round twice each way: in 1831 an occurrence stored as
    /// `m + 1` read back as `m`, a microsecond before itself, and came due a second time.
    public init(micros: Int64) {
        let (fromReference, overflow) = micros.subtractingReportingOverflow(Self.referenceMicros)
        if overflow {
            self.init(timeIntervalSince1970: Double(micros) / 1_000_000)
        } else {
            self.init(timeIntervalSinceReferenceDate: Double(fromReference) / 1_000_000)
        }
    }

    /// Microseconds since 1970, rounded to the nearest: how the store keeps instants. The inverse of
    /// `init(micros:)`: whole seconds and the fraction are scaled apart (both exactly), so that the
    /// only rounding is the last one.
    public var micros: Int64 {
        let r = timeIntervalSinceReferenceDate
        guard abs(r) < 9e12 else { return Int64((timeIntervalSince1970 * 1_000_000).rounded()) }
        let seconds = r.rounded(.down)
        return Int64(seconds) * 1_000_000 + Int64(((r - seconds) * 1_000_000).rounded()) + Self.referenceMicros
    }
}

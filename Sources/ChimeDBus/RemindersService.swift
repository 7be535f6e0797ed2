import ChimeApp
import ChimeCore
import ChimeFocus
import ChimeRunner
import ChimeStore
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// What the D-Bus interface does, without D-Bus: each method through the use case and the
/// parsers the command line uses (ChimeCore's time grammar, the store's schedule, cancel and
/// answer), its errors the command line's. Runs on the service's worker thread, never on the
/// GLib thread nor the runner's. The same on both stores (``ServedStore``: SQLite's or PostgreSQL's).
public struct RemindersService: Sendable {
    public let store: any ServedStore
    /// The focus timer's clocks (wall, awake time, boot).
    private let machineClock: any MachineClock
    private let systemZone: @Sendable () -> TimeZone
    private let environment: [String: String]
    /// Wakes the runner to read the store again.
    private let poke: @Sendable () -> Void
    /// Told the ids of the reminders a method changed.
    private let changed: @Sendable ([String]) -> Void
    /// Told a reminder's alert answered through the service: its id and the answer.
    private let answered: @Sendable (String, String) -> Void
    /// Where callers' processes are read (`/proc`: their sandbox's `.flatpak-info`).
    private let procRoot: String
    /// The user the runner runs as: callers of another are refused.
    private let userID: UInt32

    /// On the SQLite store, on `clock`.
    public init(
        store: ReminderStore,
        clock: @escaping @Sendable () -> Date = { Date() },
        machineClock: any MachineClock = SystemMachineClock(),
        systemZone: @escaping @Sendable () -> TimeZone = { TimeZone.current },
        environment: [String: String] = ProcessInfo.processInfo.environment,
        poke: @escaping @Sendable () -> Void,
        changed: @escaping @Sendable ([String]) -> Void = { _ in },
        answered: @escaping @Sendable (String, String) -> Void = { _, _ in },
        procRoot: String = "/proc",
        userID: UInt32 = getuid()
    ) {
        self.init(
            served: SQLiteServedStore(store: store, clock: clock, environment: environment),
            machineClock: machineClock,
            systemZone: systemZone,
            environment: environment,
            poke: poke,
            changed: changed,
            answered: answered,
            procRoot: procRoot,
            userID: userID
        )
    }

    /// On `served`, on its clock.
    public init(
        served: any ServedStore,
        machineClock: any MachineClock = SystemMachineClock(),
        systemZone: @escaping @Sendable () -> TimeZone = { TimeZone.current },
        environment: [String: String] = ProcessInfo.processInfo.environment,
        poke: @escaping @Sendable () -> Void,
        changed: @escaping @Sendable ([String]) -> Void = { _ in },
        answered: @escaping @Sendable (String, String) -> Void = { _, _ in },
        procRoot: String = "/proc",
        userID: UInt32 = getuid()
    ) {
        self.procRoot = procRoot
        self.userID = userID
        self.store = served
        self.machineClock = machineClock
        self.systemZone = systemZone
        self.environment = environment
        self.poke = poke
        self.changed = changed
        self.answered = answered
    }

    /// The keys `Schedule` takes.
    public static let scheduleKeys = [
        "title", "body", "in", "at", "every", "id", "urgency", "exec", "exec-shell", "exec-timeout", "app-id", "actions",
    ]

    /// Who calls, from what the bus says of the caller's connection (see ``BusCaller``): its
    /// user (another user's call is refused), its process (a Flatpak sandbox's app id is read
    /// from it), and `owns`, whether it owns a bus name.
    public func identify(uid: UInt32?, pid: UInt32?, owns: (String) -> Bool) throws(BusRefusal) -> BusCaller {
        guard let uid, uid == userID else {
            let who = uid.map(String.init) ?? "unknown"
            throw .accessDenied("the caller runs as another user (uid \(who)): Chime serves its own user only")
        }
        if let pid, let app = FlatpakInfo.appID(pid: pid, procRoot: procRoot) { return .sandboxed(app) }
        let apps: [String]
        do {
            apps = try store.pendingAppIDList()
        } catch {
            throw BusRefusal(name: ChimeBus.errorName(error.code), message: error.message)
        }
        let owned = apps.filter(owns)
        return owned.isEmpty ? .everyone : BusCaller(scope: Set(owned))
    }

    /// The app a scheduled reminder is under: a sandboxed caller's own (an `app-id` that
    /// differs is refused), else the `app-id` given, else none.
    func appID(_ fields: [String: BusValue], caller: BusCaller) throws(ChimeError) -> String? {
        let given = try Self.text(fields, "app-id")
        if let given { try ApplicationID.validate(given) }
        guard let own = caller.sandboxAppID else { return given }
        if let given, given != own {
            throw ChimeError(
                .usage,
                "invalid app-id '\(UserText.oneLine(given))': the caller is the sandboxed app \(own), and schedules as itself only"
            )
        }
        return own
    }

    /// The reminder's own buttons, `actions` (`a(ss)`: key, label).
    static func actions(_ fields: [String: BusValue]) throws(ChimeError) -> [Note.Action] {
        switch fields["actions"] {
        case nil: return []
        case .actions(let actions):
            try Presentation.checkActions(actions)
            return actions
        case let value?:
            throw ChimeError(
                .usage,
                "'actions' must be an array of (key, label) pairs (D-Bus type a(ss)), not \(UserText.oneLine(value.signature))"
            )
        }
    }

    /// Refuses `id` as not found when the caller may not see it (another app's reminder: the
    /// same answer as for an id that does not exist, so it tells nothing).
    func check(_ id: String, visibleTo caller: BusCaller) throws(ChimeError) {
        try ReminderIdentifier.validate(id)
        guard caller.scope != nil else { return }
        guard caller.sees(try store.appID(ofReminderWithID: id)) else { throw .noPendingReminder(id: id, lastState: nil) }
    }

    /// The app to send the action of an answer to, and the action's name: when `answer` is one
    /// of the reminder's own actions (`action:KEY`) and the reminder was scheduled by an app
    /// whose desktop entry is D-Bus activatable (so a closed app is started for it, as for
    /// GNotification); nil otherwise.
    public func route(id: String, answer: String) -> (appID: String, action: String)? {
        guard let action = Presentation.ownAction(answer), let appID = (try? store.appID(ofReminderWithID: id)) ?? nil,
            DesktopEntries.isDBusActivatable(appID, environment: environment)
        else { return nil }
        return (appID, action)
    }

    /// Schedules a reminder as `chime in`, `chime at` or `chime every` would (replacing a
    /// pending one with the same id); returns its id.
    /// Under `caller`'s app (``appID(_:caller:)``); an `id` that names a pending reminder the
    /// caller may not see is refused as taken, never replaced.
    public func schedule(_ fields: [String: BusValue], caller: BusCaller = .everyone) throws(ChimeError) -> String {
        for key in fields.keys.sorted() where !Self.scheduleKeys.contains(key) {
            throw ChimeError(
                .usage,
                "unknown key '\(UserText.oneLine(key))': expected title, body, in, at, every, id, urgency, exec, exec-shell, exec-timeout, app-id or actions"
            )
        }
        let appID = try appID(fields, caller: caller)
        guard let title = try Self.text(fields, "title") else {
            throw ChimeError(.usage, "missing 'title': expected a string such as \"Tea is ready\"")
        }
        let whens = ["in", "at", "every"].filter { fields[$0] != nil }
        guard whens.count == 1 else {
            let given = whens.isEmpty ? "none" : whens.map { "'\($0)'" }.joined(separator: " and ")
            throw ChimeError(.usage, "expected one of 'in' (25m), 'at' (14:30) or 'every' (weekday 08:00), got \(given)")
        }
        let when = whens[0]
        let value = try Self.text(fields, when) ?? ""
        let now = try store.clock()
        let trigger: Trigger
        switch when {
        case "in":
            trigger = .once(now.addingTimeInterval(TimeInterval(try TimeParsing.leadingDuration([value]))))
        case "at":
            trigger = .once(try TimeParsing.spoken(value, now: now, zone: systemZone()).instant)
        default:
            let words = value.split(whereSeparator: \.isWhitespace).map(String.init)
            guard !words.isEmpty else {
                throw ChimeError(.usage, "missing rule: expected DAYS TIMES (weekday 08:00) or an interval (2h)")
            }
            trigger = try TimeParsing.recurrence(words, now: now, zone: .floating)
        }
        let id = try Self.text(fields, "id")
        if let id { try ReminderIdentifier.validate(id) }
        let urgency = try Self.text(fields, "urgency").map { text throws(ChimeError) in try Presentation.urgency(named: text) }
        let new = try NewReminder(
            id: id,
            title: title,
            body: try Self.text(fields, "body") ?? "",
            trigger: trigger,
            presentation: Presentation(urgency: urgency, actions: try Self.actions(fields)).validated(),
            command: try command(fields),
            appID: appID
        ).validated()
        if let id, caller.scope != nil, let existing = try? store.pendingReminder(id: id), !caller.sees(existing.appID) {
            throw ChimeError(.conflict, "the id '\(id)' is in use: give another id, or none for a generated one")
        }
        let result = try store.schedule(replacing: new, now: now, systemZone: systemZone())
        poke()
        changed([result.reminder.id])
        return result.reminder.id
    }

    /// Cancels reminder `id` as `chime cancel` does; returns the outcome: `cancelled`,
    /// `too-late` (cancelled, but its alert had been shown: the command line's exit 8) or
    /// `unconfirmed` (cancelled; the runner did not say in time whether it had shown it).
    public func cancel(_ id: String, caller: BusCaller = .everyone) throws(ChimeError) -> String {
        try check(id, visibleTo: caller)
        let outcome = try store.cancelAsked(id: id)
        changed(outcome.cancelled)
        return outcome.outcome
    }

    /// The interface's properties, as they are now:
    /// - `NextDue` (x): the soonest pending occurrence, microseconds since the epoch; 0 for none.
    /// - `Next` and `NextDose` (a{sv}): that reminder, and the soonest dose: `id`, `title`,
    ///   `kind`, `due_us`; empty for none.
    /// - `Focus` (a{sv}): `state` (`none`, `active`, `paused`, `break`), and with a session `id`,
    ///   `length_s`, `remaining_s`, `stage` (the tree's, 0 to 4), `end_us` while active, `label`
    ///   when the session has one (added later: a dictionary grows without breaking readers),
    ///   `paused_for` (`idle`) while paused because the person was away (`[focus] idle_pause`); during
    ///   a break `id` (the break's), `kind` (`short`, `long`), `length_s`, `remaining_s`, `end_us`.
    /// - `Quiet` (a{sv}): `active` (b), and while active `until_us` and `reasons` (as).
    public func properties() throws(ChimeError) -> [String: BusValue] {
        let now = try store.clock()
        let (next, nextDose) = try store.soonest()
        func brief(_ reminder: Reminder?) -> BusValue {
            guard let reminder, let due = reminder.nextDue else { return .dictionary([:]) }
            return .dictionary([
                "id": .string(reminder.id), "title": .string(reminder.title), "kind": .string(reminder.kind),
                "due_us": .int64(Self.micros(due)),
            ])
        }
        var focus: [String: BusValue] = ["state": .string("none")]
        if let session = try store.openFocusSession(clock: machineClock) {
            let time = machineClock.now()
            let remaining = max(0, session.remainingSeconds(at: time))
            focus = [
                "state": .string(session.state.rawValue), "id": .int64(session.id), "length_s": .int64(Int64(session.lengthSeconds)),
                "remaining_s": .int64(Int64(remaining)), "stage": .int32(Int32(session.stage(at: time))),
            ]
            if let label = session.label { focus["label"] = .string(label) }
            if session.state == .paused, let reason = session.pauseReason { focus["paused_for"] = .string(reason.rawValue) }
            if session.state == .active {
                focus["end_us"] = .int64(Self.micros(time.wall.addingTimeInterval(TimeInterval(session.remainingMicros(at: time)) / 1e6)))
            }
        } else if let rest = try store.runningFocusBreak(at: machineClock.now().wall) {
            let remaining = rest.remainingSeconds(at: machineClock.now().wall)
            focus = [
                "state": .string("break"), "id": .int64(rest.id), "kind": .string(rest.kind.rawValue),
                "length_s": .int64(Int64(rest.lengthSeconds)), "remaining_s": .int64(Int64(remaining)),
                "end_us": .int64(Self.micros(rest.endsAt)),
            ]
        }
        let quietState = try store.currentQuietState()
        var quiet: [String: BusValue] = ["active": .bool(false)]
        if let period = quietState.period(at: now, zone: systemZone()) {
            quiet = [
                "active": .bool(true), "until_us": .int64(Self.micros(period.end)), "reasons": .strings(period.reasons.map(\.rawValue)),
            ]
        }
        return [
            "NextDue": .int64(next?.nextDue.map(Self.micros) ?? 0), "Next": brief(next), "NextDose": brief(nextDose),
            "Focus": .dictionary(focus), "Quiet": .dictionary(quiet),
        ]
    }

    /// The pending reminders, soonest first, as ``get(_:)`` gives each.
    public func list(caller: BusCaller = .everyone) throws(ChimeError) -> [[String: BusValue]] {
        var reminders: [[String: BusValue]] = []
        try store.eachPendingReminder { if caller.sees($0.appID) { reminders.append(Self.describe($0)) } }
        return reminders
    }

    /// A pending reminder: id, title, body, kind, trigger, recurring, urgency, and next_due
    /// (RFC 3339) with next_due_us (microseconds since the epoch) while one is due.
    public func get(_ id: String, caller: BusCaller = .everyone) throws(ChimeError) -> [String: BusValue] {
        try check(id, visibleTo: caller)
        return Self.describe(try store.pendingReminder(id: id))
    }

    /// Snoozes the alert shown last for `id`, as `chime snooze ID DURATION` does.
    public func snooze(_ id: String, duration: String, caller: BusCaller = .everyone) throws(ChimeError) {
        try check(id, visibleTo: caller)
        let seconds = try PlainReminders.parseSnoozeLength(duration)
        _ = try store.answer(id: id, snoozeFor: TimeInterval(seconds), zone: systemZone())
        poke()
        answered(id, PlainReminders.snooze)
        changed([id])
    }

    /// Marks the alert shown last for `id` done, as `chime done ID` does.
    public func done(_ id: String, caller: BusCaller = .everyone) throws(ChimeError) {
        try check(id, visibleTo: caller)
        _ = try store.answer(id: id, snoozeFor: nil, zone: systemZone())
        answered(id, PlainReminders.done)
    }

    /// A reminder as `Get` and `List` give it.
    static func describe(_ reminder: Reminder) -> [String: BusValue] {
        var fields: [String: BusValue] = [
            "id": .string(reminder.id),
            "title": .string(reminder.title),
            "body": .string(reminder.body),
            "kind": .string(reminder.kind),
            "trigger": .string(reminder.trigger.summary),
            "recurring": .bool(reminder.trigger.isRecurring),
            "urgency": .string((reminder.presentation.urgency ?? .normal).rawValue),
        ]
        if let command = reminder.command {
            switch command.program {
            case .argv(let argv): fields["exec"] = .strings(argv)
            case .shell(let line): fields["exec-shell"] = .string(line)
            }
            fields["exec-timeout_s"] = .int64(command.timeout.components.seconds)
        }
        if let app = reminder.appID { fields["app-id"] = .string(app) }
        if !reminder.presentation.actions.isEmpty { fields["actions"] = .actions(reminder.presentation.actions) }
        if let due = reminder.nextDue {
            fields["next_due"] = .string(TimeText.iso(due))
            fields["next_due_us"] = .int64(micros(due))
        }
        return fields
    }

    /// Microseconds since the epoch (the ledger's unit), for `Fired`'s `due_us` and `next_due_us`.
    public static func micros(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1_000_000).rounded()) }

    /// The command to run when it fires, as `--exec`, `--exec-shell` and `--exec-timeout` give
    /// it: `exec` an argv (`as`, no shell), its program found now in the runner's PATH.
    func command(_ fields: [String: BusValue]) throws(ChimeError) -> ReminderCommand? {
        let shell = try Self.text(fields, "exec-shell")
        var argv: [String]?
        switch fields["exec"] {
        case nil: argv = nil
        case .strings(let words): argv = words
        case let value?:
            throw ChimeError(.usage, "'exec' must be an array of strings (D-Bus type as), not \(UserText.oneLine(value.signature))")
        }
        if argv != nil && shell != nil {
            throw ChimeError(.usage, "both 'exec' and 'exec-shell': give one ('exec' runs an argv without a shell)")
        }
        var timeout = ReminderCommand.defaultTimeout
        if let limit = try Self.text(fields, "exec-timeout") {
            guard argv != nil || shell != nil else {
                throw ChimeError(.usage, "'exec-timeout' without a command: give 'exec' (an argv) or 'exec-shell'")
            }
            timeout = .seconds(try ReminderCommand.timeoutRule.seconds(limit))
        }
        let program: ReminderCommand.Program
        if let shell {
            program = .shell(shell)
        } else if let argv {
            program = .argv(argv)
        } else {
            return nil
        }
        return try ReminderCommand(program, timeout: timeout).validated(searchPath: environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin")
    }

    /// The string under `key`, nil when absent; another type is refused, naming it.
    static func text(_ fields: [String: BusValue], _ key: String) throws(ChimeError) -> String? {
        switch fields[key] {
        case nil: return nil
        case .string(let text): return text
        case let value?:
            throw ChimeError(.usage, "'\(key)' must be a string (D-Bus type s), not \(UserText.oneLine(value.signature))")
        }
    }
}

import ArgumentParser
import ChimeApp
import ChimeConfig
import ChimeCore
import ChimeFocus
import ChimeRunner
import ChimeStore
import Foundation

#if canImport(Glibc)
import Glibc
#endif

struct Focus: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "focus",
        abstract: "Focus sessions: grow a tree for 25 minutes of focus.",
        discussion: """
            One session at a time; the alert "Tree planted!" fires at its end through
            the runner. Focus time is time awake. On the desktop a live alert shows the
            tree and the minutes left, with Pause / Resume / Give up.
            Breaks: a completed session starts a break by itself (5 min; 15 min after
            every 4th session: focus.short_break, long_break, long_break_every), said
            in the "Tree planted!" alert; at its end "Break over: plant the next tree"
            has Start / Skip. The next session waits for Start unless
            focus.auto_start_sessions is true. 'chime focus skip' ends a break early.
            Away for focus.idle_pause (10m): the session pauses back to when you left.
            Examples:
              chime focus start --watch
              chime focus pause
              chime focus give-up --yes
              chime focus status --json
              chime focus start --label thesis
            More: man chime (chime focus start)
            """,
        subcommands: [
            FocusStart.self, FocusPause.self, FocusResume.self, FocusGiveUp.self, FocusStatus.self, FocusSkip.self,
        ]
    )
}

/// How a session appears in `--json` output.
struct SessionJSON: Encodable {
    var id: Int64
    var state: String
    var lengthSeconds: Int
    var remainingSeconds: Int
    var focusSeconds: Int64
    var pausedSeconds: Int64
    var stage: Int
    var started: String
    var ended: String?
    var endReason: String?
    var alert: String
    var alertDue: String?
    /// The session's label (`--label`); absent without one.
    var label: String?
    /// "idle" while paused because the person was away (`[focus] idle_pause`), else absent.
    var pausedFor: String?
    /// How many times it was paused because the person was away.
    var idlePauses: Int

    enum CodingKeys: String, CodingKey {
        case id, state, stage, started, ended, alert, label
        case pausedFor = "paused_for"
        case idlePauses = "idle_pauses"
        case lengthSeconds = "length_s"
        case remainingSeconds = "remaining_s"
        case focusSeconds = "focus_s"
        case pausedSeconds = "paused_s"
        case endReason = "end_reason"
        case alertDue = "alert_due"
    }

    init(_ session: FocusSession, at time: MachineTime, alertDue: Date? = nil) {
        id = session.id
        state = session.state.rawValue
        lengthSeconds = session.lengthSeconds
        remainingSeconds = session.remainingSeconds(at: time)
        focusSeconds = session.focusMicros(at: time) / 1_000_000
        var paused = session.pausedMicros
        if let pausedAt = session.pausedAt { paused += max(0, time.wall.micros - pausedAt.micros) }
        pausedSeconds = paused / 1_000_000
        stage = session.stage(at: time)
        started = TimeText.iso(session.startedAt)
        ended = session.endedAt.map(TimeText.iso)
        endReason = session.endReason?.rawValue
        alert = session.reminderID
        self.alertDue = alertDue.map(TimeText.iso)
        label = session.label
        pausedFor = session.state == .paused ? session.pauseReason?.rawValue : nil
        idlePauses = session.idlePauses
    }
}

/// What the focus commands share: the timer on the store, and how they report a session.
struct FocusContext {
    let store: ReminderStore
    let timer: FocusTimer

    /// - Parameter access: ``ReminderStore/Access/create`` for `focus start` only.
    init(_ global: GlobalOptions, _ access: ReminderStore.Access) throws(ChimeError) {
        store = try global.openStore(access)
        timer = FocusTimer(store: store, breaks: try Settings.current().focusBreaks)
    }

    func alertDue(_ session: FocusSession) -> Date? {
        guard session.state == .active else { return nil }
        return (try? store.reminder(id: session.reminderID))?.nextDue
    }

    /// After a transition: wake the runner, then print the session.
    func report(_ session: FocusSession, headline: String, json: Bool) {
        // Only an active session has an alert to fire: a paused one has none until resumed.
        let idleNote: String =
            switch session.state {
            case .active: RunnerNote.fires
            case .paused: "No runner is running for this store: the pause is saved; a paused session has no alert to fire."
            case .completed, .abandoned: "No runner is running for this store: the change is saved; no alert is left to fire."
            }
        let running = pokeRunner(store, json: json, note: idleNote)
        let time = timer.clock.now()
        let due = alertDue(session)
        let text = [headline] + (session.state.isOpen ? drawing(session, at: time, alertDue: due) : [])
        emit(Changed(session: SessionJSON(session, at: time, alertDue: due), runner: running, text: text), json: json)
    }

    /// A session after a transition, and whether a runner was woken.
    struct Changed: Report {
        var session: SessionJSON
        var runner: Bool
        private var text: [String]

        enum CodingKeys: String, CodingKey { case session, runner }

        init(session: SessionJSON, runner: Bool, text: [String]) {
            self.session = session
            self.runner = runner
            self.text = text
        }

        var lines: [String] { text }
    }

    /// An open session for a person: the tree, MM:SS and the bar, then when its alert fires;
    /// an active session whose alert was cancelled (`chime cancel focus-ID`) says so.
    func drawing(_ session: FocusSession, at time: MachineTime, alertDue due: Date?) -> [String] {
        var lines = FocusText.frame(session, at: time)
        if let due {
            lines.append(
                "    \"\(FocusTimer.alertTitle)\" at \(TimeText.local(due, in: .current, seconds: true)) (alert \(session.reminderID))"
            )
        } else if session.state == .active {
            lines.append("    No alert is scheduled (it was cancelled): the session still completes at 00:00.")
        }
        return lines
    }
}

struct FocusStart: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "start",
        abstract: "Start a focus session (25 minutes unless --minutes or the config file's focus.length says otherwise).",
        discussion: """
            A label (--label) says what the session is for: 1 to 40 characters, trimmed,
            no control characters; labels match exactly ('Thesis' is not 'thesis'). A
            session that follows by itself (a break's end, Start, Plant another) keeps
            the label before it. 'chime forest --label', 'chime stats --label' read by it.
            Examples:
              chime focus start --minutes 50 --label thesis
            More: man chime (chime focus start)
            """
    )

    @Option(
        name: .customLong("minutes"),
        parsing: .unconditional,
        help: ArgumentHelp("The session's length, 10 to 120 minutes: 25, 25m or 1h.", valueName: "minutes")
    )
    var length: DurationOption<FocusMinutes>?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("What the session is for, 1 to 40 characters (thesis): the forest and the stats read by it.", valueName: "text")
    )
    var label: String?

    /// --minutes, else `$CHIME_FOCUS_LENGTH`, the config file's `focus.length`, else 25.
    func minutes() throws(ChimeError) -> Int {
        if let length { return length.count }
        return Int(try Settings.current().seconds(.focusLength) / 60)
    }
    @Flag(help: "Then watch the countdown (as 'chime focus status --watch').")
    var watch = false
    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let minutes = try minutes()
        // Checked before the store is opened: a bad label creates nothing.
        let label = try FocusLabel.validate(label)
        let context = try FocusContext(global, .create)
        let session = try context.timer.start(minutes: minutes, label: label)
        if watch && !global.json {
            _ = pokeRunner(context.store, json: false)
            try FocusWatch(context: context).run()
            return
        }
        context.report(
            session,
            headline: "Started focus session #\(session.id)\(FocusText.labelled(session)): \(minutes) minutes. "
                + "Your tree is planted as a seed.",
            json: global.json
        )
    }
}

struct FocusPause: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pause",
        abstract: "Pause the active session: the countdown stops and its alert is cancelled.",
        discussion: """
            More: man chime (chime focus pause)
            """
    )
    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let context = try FocusContext(global, .update)
        let session = try context.timer.pause()
        let left = FocusTimer.countdown(session.remainingSeconds(at: context.timer.clock.now()))
        context.report(
            session,
            headline: "Paused focus session #\(session.id) with \(left) to go: 'chime focus resume' goes on.",
            json: global.json
        )
    }
}

struct FocusResume: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "resume",
        abstract: "Resume the paused session from its remaining time; its alert moves to the new end.",
        discussion: """
            More: man chime (chime focus resume)
            """
    )
    @Flag(help: "Then watch the countdown.")
    var watch = false
    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let context = try FocusContext(global, .update)
        let session = try context.timer.resume()
        if watch && !global.json {
            _ = pokeRunner(context.store, json: false)
            try FocusWatch(context: context).run()
            return
        }
        context.report(session, headline: "Resumed focus session #\(session.id).", json: global.json)
    }
}

struct FocusGiveUp: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "give-up",
        abstract: "Give up the session: it is recorded as abandoned, with the focus time it had.",
        discussion: """
            Asks "This will kill your tree. Give up? [y/N]" unless --yes. Without a
            terminal, --yes is required (exit 64); answering no changes nothing (exit 1).
            More: man chime (chime focus give-up)
            """
    )
    @Flag(name: [.short, .long], help: "Do not ask.")
    var yes = false
    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let context = try FocusContext(global, .update)
        guard case .open(let open) = try context.timer.current() else {
            _ = try context.timer.giveUp()  // throws the not-found error, saying what became of the last one
            return
        }
        guard try confirm("This will kill your tree. Give up?", what: "give-up", yes: yes) else {
            throw ChimeError(.failure, "not given up: focus session #\(open.id) goes on")
        }
        let session = try context.timer.giveUp()
        let focus = FocusText.minutes(session.focusMicros)
        context.report(
            session,
            headline:
                "Gave up focus session #\(session.id)\(FocusText.labelled(session)) after \(focus) of focus. The tree did not make it.",
            json: global.json
        )
    }
}

struct FocusStatus: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show the session: countdown, progress and the tree at its stage.",
        discussion: """
            With --watch, redraws every second until the session ends; Ctrl-C stops
            watching. With no session running, says how the last one ended.
            Examples:
              chime focus status --watch
            More: man chime (chime focus status)
            """
    )
    @Flag(help: "Redraw the countdown every second until the session ends.")
    var watch = false
    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let context = try FocusContext(global, .read)
        if watch && !global.json {
            try FocusWatch(context: context).run()
            return
        }
        let settled = try context.timer.current()
        let time = context.timer.clock.now()
        let session: FocusSession? =
            switch settled {
            case .open(let session), .completed(let session), .abandoned(let session): session
            case .none: try context.timer.latest()
            }
        let due = session.flatMap { context.alertDue($0) }
        let running = RunnerControl.isRunning(storePath: context.store.path)
        let cycle = try context.timer.cycle()
        var text: [String]
        if let rest = cycle.runningBreak {
            text = FocusStatus.breakLines(rest, cycle: cycle, at: time.wall)
        } else if let session {
            if session.state.isOpen {
                text = [
                    "Focus session #\(session.id)\(FocusText.labelled(session)), started \(TimeText.local(session.startedAt, in: .current))"
                ]
                text += context.drawing(session, at: time, alertDue: due)
            } else {
                text = ["No focus session running. " + (Self.outcome(session) ?? ""), "Start one with 'chime focus start'."]
            }
        } else {
            text = ["No focus session yet. Plant your first tree: chime focus start"]
        }
        let open = session?.state.isOpen ?? false
        emit(
            Status(
                state: open ? "focus" : cycle.runningBreak != nil ? "break" : "idle",
                breakJSON: cycle.runningBreak.map { BreakJSON($0, at: time.wall) },
                cyclePosition: cycle.position,
                cycleLength: cycle.length,
                session: session.map { SessionJSON($0, at: time, alertDue: due) },
                running: open,
                active: session?.state == .active,
                note: session.flatMap { Self.outcome($0) },
                runner: running,
                text: text
            ),
            json: global.json
        )
    }

    /// "Break: 4:12 left" and the cycle, for a person.
    static func breakLines(_ rest: FocusBreak, cycle: FocusCycle, at now: Date) -> [String] {
        let kind = rest.kind == .long ? "Long break" : "Break"
        return [
            "\(kind): \(FocusTimer.countdown(rest.remainingSeconds(at: now))) left, ends at "
                + "\(TimeText.local(rest.endsAt, in: .current, seconds: true)) (alert \(rest.reminderID))",
            "Session \(cycle.position) of \(cycle.length) done. Skip the break: chime focus skip",
        ]
    }

    /// The current (else the latest) session, and whether a runner is running.
    struct Status: Report {
        /// "focus" (a session is open), "break" (a break runs) or "idle".
        var state: String
        var breakJSON: BreakJSON?
        var cyclePosition: Int
        var cycleLength: Int
        var session: SessionJSON?
        var running: Bool
        var note: String?
        var runner: Bool
        /// Active, not paused: only then is there an alert to fire.
        private var active: Bool
        private var text: [String]

        enum CodingKeys: String, CodingKey {
            case state, session, running, note, runner
            case breakJSON = "break"
            case cyclePosition = "cycle_position"
            case cycleLength = "cycle_length"
        }

        init(
            state: String,
            breakJSON: BreakJSON?,
            cyclePosition: Int,
            cycleLength: Int,
            session: SessionJSON?,
            running: Bool,
            active: Bool,
            note: String?,
            runner: Bool,
            text: [String]
        ) {
            self.state = state
            self.breakJSON = breakJSON
            self.cyclePosition = cyclePosition
            self.cycleLength = cycleLength
            self.session = session
            self.running = running
            self.active = active
            self.note = note
            self.runner = runner
            self.text = text
        }

        var lines: [String] { text }

        var notes: [String] {
            // A paused session has no alert to fire (its alert comes back with 'chime focus resume').
            active && !runner ? ["No runner is running for this store: the alert fires once 'chime run' starts."] : []
        }
    }

    /// How an ended session ended, in a sentence (``FocusText/outcome(_:zone:)``).
    static func outcome(_ session: FocusSession) -> String? { FocusText.outcome(session, zone: .current) }
}

/// How a break appears in `--json` output.
struct BreakJSON: Encodable {
    var id: Int64
    var kind: String
    var state: String
    var lengthSeconds: Int
    var remainingSeconds: Int
    var started: String
    var ends: String
    var ended: String?
    var afterSession: Int64
    var alert: String

    enum CodingKeys: String, CodingKey {
        case id, kind, state, started, ends, ended, alert
        case lengthSeconds = "length_s"
        case remainingSeconds = "remaining_s"
        case afterSession = "after_session"
    }

    init(_ rest: FocusBreak, at now: Date) {
        id = rest.id
        kind = rest.kind.rawValue
        state = rest.state.rawValue
        lengthSeconds = rest.lengthSeconds
        remainingSeconds = rest.remainingSeconds(at: now)
        started = TimeText.iso(rest.startedAt)
        ends = TimeText.iso(rest.endsAt)
        ended = rest.endedAt.map(TimeText.iso)
        afterSession = rest.sessionID
        alert = rest.reminderID
    }
}

struct FocusSkip: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "skip",
        abstract: "End the running break early (it counts as skipped); its \"Break over\" alert is cancelled.",
        discussion: """
            The next session waits for 'chime focus start' (starting a session during a
            break also ends it).
            More: man chime (chime focus skip)
            """
    )
    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let context = try FocusContext(global, .update)
        let skipped = try context.timer.skipBreak()
        let running = pokeRunner(context.store, json: global.json, note: "No runner is running for this store: the skip is saved.")
        let line =
            "Skipped the \(skipped.kind == .long ? "long " : "")break after focus session #\(skipped.sessionID). "
            + "Plant the next tree: chime focus start"
        emit(Skipped(breakJSON: BreakJSON(skipped, at: context.timer.clock.now().wall), runner: running, text: [line]), json: global.json)
    }

    struct Skipped: Report {
        var breakJSON: BreakJSON
        var runner: Bool
        var text: [String]
        enum CodingKeys: String, CodingKey {
            case runner
            case breakJSON = "break"
        }
        var lines: [String] { text }
    }
}

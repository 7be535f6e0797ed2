import ChimeCore
import ChimeStore
import Foundation
import Synchronization

/// Focus sessions in the runner: before each pass the open session is settled (its alert moved
/// after a suspend or a clock change, completed at its end, abandoned after a reboot); the
/// completion alert carries the grown tree's icon and a "Plant another" action. While a session
/// is open, its live alert shows the tree and the time left, with Pause / Resume / Give up
/// (`FocusLiveAlert.swift`).
public final class FocusFamily: ReminderFamily {
    public let kind = FocusTimer.kind
    public let timer: FocusTimer
    /// The grown tree's icon file, when one is installed.
    public let icon: String?
    /// Whether a session was open at the last settle (nil: not known yet). A deadline with none
    /// open needs no look at the store: every change to sessions pokes the runner.
    private let sessionOpen = Mutex<Bool?>(nil)
    private let onChange: @Sendable (FocusTimer.Settled) -> Void
    /// Whether the live alert is shown (see ``updateLiveNotes(through:at:)``).
    public let liveAlert: Bool
    /// The icon of each stage for the live alert (nil: none installed).
    let stageIcon: @Sendable (Int) -> String?
    /// The zone the live alert's end time is shown in.
    let zone: @Sendable () -> TimeZone
    /// What the live alert shows now (see `FocusLiveAlert.swift`).
    let live = Mutex<LiveShown?>(nil)
    /// A first Give up pressed on the live alert, until its window ends (see `FocusLiveAlert.swift`).
    let giveUpAsked = Mutex<GiveUpAsked?>(nil)
    /// Where the desktop says how long the person has been idle (nil: nowhere; see `FocusIdle.swift`).
    let idle: (any IdleSource)?
    /// The config's `[focus] idle_pause`.
    let idleSettings: FocusIdle
    /// Whether the idle source is watched now.
    let watching = Mutex(false)
    /// The person came back to a session paused while they were away (the live alert asks to resume).
    let awayReturn = Mutex<AwayReturn?>(nil)
    /// Wakes the runner when the idle source speaks (``connect(poke:)``).
    let poke = Mutex<(@Sendable () -> Void)?>(nil)

    /// - Parameters:
    ///   - liveAlert: whether to keep a live alert up while a session runs.
    ///   - stageIcon: the tree icon of a stage, for the live alert.
    ///   - idle: where the desktop says the person is idle (nil: no session pauses by itself).
    ///   - idleSettings: the config's `[focus] idle_pause`.
    ///   - onChange: told when a settle completed or abandoned a session (the runner logs it).
    public init(
        timer: FocusTimer,
        icon: String? = FocusIcons.path(stage: TreeStage.grown),
        liveAlert: Bool = true,
        stageIcon: @escaping @Sendable (Int) -> String? = { FocusIcons.path(stage: $0) },
        zone: @escaping @Sendable () -> TimeZone = { TimeZone.current },
        idle: (any IdleSource)? = nil,
        idleSettings: FocusIdle = FocusIdle(),
        onChange: @escaping @Sendable (FocusTimer.Settled) -> Void = { _ in }
    ) {
        self.timer = timer
        self.idle = idle
        self.idleSettings = idleSettings
        self.icon = icon
        self.liveAlert = liveAlert
        self.stageIcon = stageIcon
        self.zone = zone
        self.onChange = onChange
    }

    /// Whether a session was open at the last settle (nil: not known yet).
    var knownOpen: Bool? { sessionOpen.withLock { $0 } }

    public func prepare(reason: WakeReason) throws {
        if reason == .deadline, sessionOpen.withLock({ $0 }) == false { return }
        let settled = try timer.settle()
        // A running break is as a session: its end is a deadline that settles it.
        let breakRunning = try timer.store.read { db in try FocusTimer.fetchRunningBreak(in: db) != nil }
        let busy = settled.openSession != nil || breakRunning
        sessionOpen.withLock { $0 = busy }
        updateIdleWatch(
            activeSession: settled.openSession?.state == .active,
            pausedForIdle: settled.openSession?.pauseReason == .idle,
            breakRunning: breakRunning
        )
        switch settled {
        case .completed, .abandoned: onChange(settled)
        case .none, .open: break
        }
    }

    public func decorate(_ note: inout Note, for occurrence: PendingOccurrence) {
        note.icon = icon
        note.category = "x-chime.focus"
        if FocusBreak.breakID(occurrence.reminderID) != nil {
            // "Break over": Start begins the next session; Skip leaves it for later. With
            // auto_start_sessions the session has begun already (its live alert has Pause / Give up).
            guard !timer.breaks.autoStartSessions else { return }
            note.actions = [
                Note.Action(key: FocusTimer.startAction, label: "Start"), Note.Action(key: FocusTimer.skipAction, label: "Skip"),
            ]
            note.answerInstead = "Start: chime focus start"
            return
        }
        // The seed's "Plant Tree" once a session is over: another session of the same length,
        // from the alert (no store read here: the firing path posts without touching the store).
        // The break has begun with the completion ("Break: 5 min"): Skip Break ends it now.
        note.actions = [
            Note.Action(key: FocusLiveAlert.plantAnother, label: "Plant another"),
            Note.Action(key: FocusTimer.skipBreakAction, label: "Skip Break"),
        ]
        note.answerInstead =
            "Plant another: chime focus start" + plantAnotherMinutes(occurrence.reminderID) + ". Skip Break: chime focus skip"
    }
}

/// The tree icons (`Resources/icons/tree-stage-1.svg` … `-5.svg`), found where they are
/// installed: `$XDG_DATA_HOME/chime/icons` (what `scripts/quickstart` installs), each of
/// `$XDG_DATA_DIRS` + `/chime/icons` (a system package), `../share/chime/icons` next to the
/// executable, or the source tree's `Resources/icons` above it (a development build).
public enum FocusIcons {
    public static func fileName(stage: Int) -> String { "tree-stage-\(min(max(stage, 1), 5)).svg" }

    /// The icon of `stage`, or nil when none is installed (the alert then goes without one).
    public static func path(
        stage: Int,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        executable: String = FocusIcons.executablePath
    ) -> String? {
        let name = fileName(stage: stage)
        return directories(environment: environment, executable: executable)
            .map { $0 + "/" + name }
            .first { FileManager.default.isReadableFile(atPath: $0) }
    }

    /// This process's executable (`/proc/self/exe`: argv[0] may be a bare name found on PATH).
    public static var executablePath: String { DataDirectories.executablePath }

    /// Where icons are looked for, in order (see ``DataDirectories``).
    public static func directories(environment: [String: String], executable: String) -> [String] {
        DataDirectories.search("icons", environment: environment, executable: executable)
    }
}

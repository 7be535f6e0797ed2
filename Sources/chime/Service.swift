import ArgumentParser
import ChimeCore
import ChimeRunner
import ChimeStore
import Foundation

struct ServiceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "service",
        abstract: "Start the runner at login: enable, status, disable.",
        discussion: """
            'enable' uses the systemd user unit chime.service when a user manager runs,
            else an XDG autostart entry; --via chooses. 'disable' undoes it.
            Examples:
              chime service enable
              chime service status --json
            More: man chime (chime service)
            """,
        subcommands: [ServiceEnable.self, ServiceStatus.self, ServiceDisable.self]
    )
}

extension StartAtLogin.Method: ExpressibleByArgument {}

struct ServiceEnable: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "enable",
        abstract: "Start the runner at every login (and now, with a systemd user manager).",
        discussion: """
            Examples:
              chime service enable --via autostart
            More: man chime (chime service)
            """
    )

    @Option(help: ArgumentHelp("How: systemd (the user unit) or autostart (the desktop's autostart entry).", valueName: "how"))
    var via: StartAtLogin.Method?
    @Flag(name: .long, help: "Print one JSON document instead of human text.")
    var json = false

    func run() async throws {
        var report = ServiceOutcome(action: "enable", outcome: try StartAtLogin().enable(via: via))
        // The autostart entry (or a unit enabled with no user manager) starts one only at the next login.
        if !report.now && !RunnerControl.isRunning(storePath: ReminderStore.defaultPath()) {
            report.notes = ["No runner is running now: start one with 'chime run', or log in again."]
        }
        emit(report, json: json)
    }
}

struct ServiceDisable: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "disable",
        abstract: "Stop starting the runner at login: undo what 'enable' did.",
        discussion: """
            Examples:
              chime service disable
            More: man chime (chime service)
            """
    )

    @Flag(name: .long, help: "Print one JSON document instead of human text.")
    var json = false

    func run() async throws {
        emit(ServiceOutcome(action: "disable", outcome: try StartAtLogin().disable()), json: json)
    }
}

struct ServiceStatus: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Say how the runner starts at login, and whether one runs for the store.",
        discussion: """
            Examples:
              chime service status
            More: man chime (chime service)
            """
    )

    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let store = global.storePath
        let pid = RunnerControl.runnerPID(storePath: store)
        emit(ServiceStatusReport(StartAtLogin().status(), store: global.shownStorePath, pid: pid), json: global.json)
    }
}

/// What `service enable` or `service disable` did.
struct ServiceOutcome: Report {
    var action: String
    @Nullable var method: String?
    /// Whether the runner was started or stopped now, not only at the next login.
    var now: Bool
    var steps: [String]
    var notes: [String] = []

    enum CodingKeys: String, CodingKey { case action, method, now, steps }

    init(action: String, outcome: StartAtLogin.Outcome) {
        self.action = action
        method = outcome.method?.rawValue
        now = outcome.now
        steps = outcome.steps
    }

    var lines: [String] { steps }
}

/// How the runner starts at login (`service status`, and doctor's line).
struct ServiceStatusReport: Report {
    struct Systemd: Encodable {
        var installed: Bool
        var managerRunning: Bool
        /// `systemctl --user is-enabled chime.service`; null when no unit is where systemd looks.
        @Nullable var unit: String?
        var enabled: Bool
        /// `systemctl --user is-active chime.service`; null without a user manager.
        @Nullable var active: String?

        enum CodingKeys: String, CodingKey {
            case installed, unit, enabled, active
            case managerRunning = "manager_running"
        }
    }
    struct Entry: Encodable {
        var path: String
        /// Whether Chime wrote it (`X-Chime-Service=true`).
        var chimes: Bool
        var enabled: Bool
        @Nullable var exec: String?

        init(_ entry: StartAtLogin.AutostartEntry) {
            path = entry.path
            chimes = entry.chimes
            enabled = entry.enabled
            exec = entry.exec
        }
    }
    struct RunnerState: Encodable {
        var store: String
        var running: Bool
        @Nullable var pid: Int32?
    }

    /// The ways that start a runner at login now: "systemd", "autostart", both or none.
    var active: [String]
    var systemd: Systemd
    /// The autostart entry a session reads (the person's, else the system's); null when none.
    @Nullable var autostart: Entry?
    var runner: RunnerState
    private var userEntryPath: String

    enum CodingKeys: String, CodingKey { case active, systemd, autostart, runner }

    init(_ status: StartAtLogin.Status, store: String, pid: Int32?, userEntryPath: String = StartAtLogin().userEntryPath) {
        active = status.active.map(\.rawValue)
        systemd = Systemd(
            installed: status.systemd.installed,
            managerRunning: status.systemd.managerRunning,
            unit: status.systemd.unitState,
            enabled: status.systemd.enabled,
            active: status.systemd.active
        )
        autostart = status.effectiveEntry.map(Entry.init)
        runner = RunnerState(store: store, running: pid != nil, pid: pid)
        self.userEntryPath = userEntryPath
    }

    /// One line: which way starts the runner at login (doctor prints it too).
    var summary: String {
        var ways: [String] = []
        if systemd.enabled { ways.append("systemd (\(StartAtLogin.unitName) enabled)") }
        if let autostart, autostart.enabled { ways.append("autostart entry \(autostart.path)") }
        return ways.isEmpty ? "not set up: 'chime service enable' sets it up" : ways.joined(separator: " and ")
    }

    var lines: [String] {
        var unit = "no \(StartAtLogin.unitName) where systemd looks (the package or scripts/quickstart installs it)"
        if !systemd.installed {
            unit = "systemctl is not installed"
        } else if let state = systemd.unit {
            unit = "\(StartAtLogin.unitName) \(state)" + (systemd.active.map { ", \($0)" } ?? "")
        }
        let manager = systemd.managerRunning ? "user manager running" : "no user manager running"
        var entry = "none (\(userEntryPath) would be Chime's)"
        if let autostart {
            let owner = autostart.path == userEntryPath ? (autostart.chimes ? "Chime's" : "your own") : "the system's"
            entry = "\(autostart.path) (\(owner), \(autostart.enabled ? "on" : "off"))"
        }
        return [
            "Start at login:   \(summary)",
            "systemd:          \(systemd.installed ? manager + "; " : "")\(unit)",
            "Autostart entry:  \(entry)",
            "Runner:           " + (runner.pid.map { "running (pid \($0)) for \(runner.store)" } ?? "not running for \(runner.store)"),
        ]
    }
}

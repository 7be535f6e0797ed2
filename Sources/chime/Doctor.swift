import ArgumentParser
import ChimeApp
import ChimeConfig
import ChimeCore
import ChimeDBus
import ChimeFocus
import ChimeGateway
import ChimeLibnotify
import ChimeRunner
import ChimeStore
import Foundation

#if canImport(Glibc)
import Glibc
#endif

struct Doctor: AsyncParsableCommand, RunsWithBadConfig {
    static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract: "Say what Chime sees: bus, store, runner, config…",
        discussion: """
            Changes nothing; each D-Bus call has a 1 s timeout. Exit 5: the store cannot
            be used (a database store: reached, or is out of date); 78: a bad config.
            Example:
              chime doctor --json
            More: man chime (chime doctor)
            """
    )

    @OptionGroup var global: GlobalOptions

    /// What doctor found: the desktop, the store and its runner, where alerts go.
    struct Diagnosis: Report {
        struct Desktop: Encodable {
            var available: Bool
            var problem: String?
            var bus: String?
            var server: String?
            var vendor: String?
            var version: String?
            var spec: String?
            var capabilities: [String]
        }

        struct Store: Encodable {
            var path: String
            /// False when there is no store file yet (the first reminder makes it).
            var exists: Bool
            var usable: Bool
            /// The result of `PRAGMA quick_check`: false with `damage` when it found any.
            var healthy: Bool?
            var damage: [String]?
            var problem: String?
            var mode: String?
            var pending: Int?
            var undelivered: Int?
            /// Of those, how many wait for a notification server to appear (shown on the console meanwhile).
            var waitingForServer: Int?

            enum CodingKeys: String, CodingKey {
                case path, exists, usable, healthy, damage, problem, mode, pending, undelivered
                case waitingForServer = "waiting_for_server"
            }
        }
        struct StartAtLoginState: Encodable {
            /// "systemd", "autostart", both or none.
            var active: [String]
            var summary: String
        }
        struct RunnerState: Encodable {
            var running: Bool
            var pid: Int32?
            /// Where the running runner's alerts go now, as it published it.
            var notifier: String?
        }
        var desktop: Desktop
        var store: Store
        var runner: RunnerState
        /// How the runner starts at login (`chime service status` in full).
        var startAtLogin: StartAtLoginState
        /// Where alerts go: the running runner's, else where `--notifier auto` would send them now.
        var notifier: String
        /// The grown tree's icon for focus alerts, when one is installed.
        var focusIcon: String?
        /// The desktop's own do-not-disturb: true or false where it could be read, else null.
        @Nullable var doNotDisturb: Bool?
        /// What was read (see ``DesktopDoNotDisturb``).
        var doNotDisturbDetail: String
        /// The config file: where, whether it is there, its error.
        var config: ConfigState
        /// The gated programs and what needs doing.
        var gateway: GatewayState
        /// With a bad config file: the error, as every command's `--json` gives it (absent otherwise).
        var error: ErrorInfo?
        /// Where the runner reads that the person is idle (`[focus] idle_pause`): the source's
        /// name, or "none: …".
        var idle: String = IdleMonitors.noneText

        struct ErrorInfo: Encodable {
            var code: String
            var message: String
            var exit: Int32
        }

        struct ConfigState: Encodable {
            var path: String
            var exists: Bool
            var valid: Bool
            @Nullable var problem: String? = nil
        }
        struct GatewayState: Encodable {
            /// How many programs are gated.
            var gated: Int
            /// One line per gated program that needs something done: "ID: what to do".
            var problems: [String]
            /// Why the gates could not be read, or null.
            @Nullable var unreadable: String? = nil
        }

        var lines: [String] {
            var lines = desktop.lines
            if !store.exists {
                lines.append("Store:                \(store.path): none yet (the first reminder you schedule creates it)")
            } else if store.usable && store.healthy != false {
                lines.append(
                    "Store:                \(store.path) (mode \(store.mode ?? "?")), \(store.pending ?? 0) pending, \(store.undelivered ?? 0) waiting to be delivered"
                        + ((store.waitingForServer ?? 0) > 0 ? " (\(store.waitingForServer ?? 0) for a notification server)" : "")
                )
            } else {
                lines.append("Store:                \(store.path): \(store.problem ?? "unusable")")
            }
            lines.append("Runner:               " + (runner.pid.map { "running (pid \($0))" } ?? "not running: start it with 'chime run'"))
            lines.append("Start at login:       \(startAtLogin.summary)")
            if runner.running {
                // What the running runner uses now, as it published it.
                lines.append("Alerts go to:         \(runner.notifier ?? "unknown (this runner does not say)")")
            } else {
                lines.append("Alerts go to:         no runner is running; one started now with --notifier auto would use the \(notifier)")
            }
            lines.append("Focus alert icon:     " + (focusIcon ?? "none installed (scripts/quickstart installs Resources/icons)"))
            lines.append("Idle:                 " + idle)
            lines.append("Do not disturb:       " + doNotDisturbDetail)
            if let problem = config.problem {
                lines.append("Config file:          \(config.path): \(problem)")
            } else {
                lines.append(
                    "Config file:          \(config.path)"
                        + (config.exists ? " (valid)" : ": none (the built-in defaults; 'chime config edit' makes one)")
                )
            }
            if let unreadable = gateway.unreadable {
                lines.append("Gateway:              cannot be read: \(unreadable)")
            } else if gateway.gated == 0 {
                lines.append("Gateway:              no program gated ('chime gate add --pick')")
            } else {
                let gated = "\(gateway.gated) program\(gateway.gated == 1 ? "" : "s") gated"
                lines.append(
                    "Gateway:              " + gated
                        + (gateway.problems.isEmpty
                            ? ", all in order"
                            : ", \(gateway.problems.count) need\(gateway.problems.count == 1 ? "s" : "") something ('chime gate doctor' mends what it can):")
                )
                lines += gateway.problems.map { "  " + $0 }
            }
            return lines
        }

        enum CodingKeys: String, CodingKey {
            case desktop, store, runner, notifier
            case startAtLogin = "start_at_login"
            case focusIcon = "focus_icon"
            case doNotDisturb = "do_not_disturb"
            case doNotDisturbDetail = "do_not_disturb_detail"
            case config, gateway, error, idle
        }
    }

    /// The store's state and its runner's; a store that cannot be opened is a finding, not a failure.
    private func inspectStore() -> (Diagnosis.Store, Diagnosis.RunnerState) {
        let store: ReminderStore
        do {
            store = try global.openStore(.read)
        } catch {
            let report = Diagnosis.Store(path: global.shownStorePath, exists: true, usable: false, problem: error.message)
            return (report, Diagnosis.RunnerState(running: false))
        }
        let pid = RunnerControl.runnerPID(storePath: store.path)
        let runner = Diagnosis.RunnerState(
            running: pid != nil,
            pid: pid,
            notifier: pid == nil ? nil : RunnerControl.destination(storePath: store.path)
        )
        guard store.isFile else {
            var info = stat()
            let exists = stat(store.path, &info) == 0
            let problem = exists ? "made by an older Chime: the runner or the next reminder upgrades it" : nil
            return (
                Diagnosis.Store(
                    path: store.path,
                    exists: exists,
                    usable: true,
                    problem: problem,
                    pending: exists ? try? store.pendingCount() : 0
                ),
                runner
            )
        }
        var info = stat()
        let mode = stat(store.path, &info) == 0 ? String(info.st_mode & 0o777, radix: 8) : nil
        var report = Diagnosis.Store(path: store.path, exists: true, usable: true, mode: mode)
        do {
            let damage = try store.quickCheck()
            report.healthy = damage == nil
            report.damage = damage
            if damage != nil {
                report.problem =
                    "damaged (PRAGMA quick_check failed): stop the runner, keep a copy (cp '\(store.path)' '\(store.path).bak'), then "
                    + "recover it: sqlite3 '\(store.path)' .recover | sqlite3 '\(store.path).recovered' and use that with --store"
            }
        } catch {
            report.usable = false
            report.problem = error.message
        }
        report.pending = try? store.pendingCount()
        report.undelivered = try? store.undeliveredCount()
        report.waitingForServer = try? store.waitingForNotifierCount()
        return (report, runner)
    }

    /// The config file as every command reads it (doctor runs with a bad one, to say so).
    func inspectConfig() -> Diagnosis.ConfigState {
        let environment = ProcessInfo.processInfo.environment
        let path = Config.path(environment: environment)
        let exists =
            FileManager.default.fileExists(atPath: path) || (try? FileManager.default.destinationOfSymbolicLink(atPath: path)) != nil
        do {
            _ = try Settings.current()
            return Diagnosis.ConfigState(path: path, exists: exists, valid: true)
        } catch {
            return Diagnosis.ConfigState(path: path, exists: exists, valid: false, problem: error.message)
        }
    }

    /// The gated launchers, read only (the lock shared, nothing written: 'chime gate doctor'
    /// is the one that mends).
    private func inspectGateway() -> Diagnosis.GatewayState {
        do {
            let programs = try GateContext.overrides().list()
            return Diagnosis.GatewayState(
                gated: programs.count,
                problems: programs.filter { $0.status != .ok }.map { "\($0.id): \($0.advice)" }
            )
        } catch {
            return Diagnosis.GatewayState(gated: 0, problems: [], unreadable: GateContext.chimeError(error).message)
        }
    }

    func run() async throws {
        let status = await LibnotifyNotifier.probe()
        let desktop = Diagnosis.Desktop(
            available: status.isAvailable,
            problem: status.problem,
            bus: status.busAddress,
            server: status.serverName,
            vendor: status.serverVendor,
            version: status.serverVersion,
            spec: status.specVersion,
            capabilities: status.capabilities
        )
        // A bad URL is a usage error, as for every command; a store that cannot be reached is a finding.
        if let url = try global.postgresURL() {
            return try await runPostgres(url, desktop: desktop, notifier: status.isAvailable ? "desktop" : "console")
        }
        let (storeReport, runner) = inspectStore()
        let doNotDisturb = DesktopDoNotDisturb.read()
        let login = ServiceStatusReport(StartAtLogin().status(), store: storeReport.path, pid: runner.pid)
        var report = Diagnosis(
            desktop: desktop,
            store: storeReport,
            runner: runner,
            startAtLogin: .init(active: login.active, summary: login.summary),
            // One word (desktop, console, json): the runner's, in full, is `runner.notifier`.
            notifier: runner.notifier.map { String($0.prefix { $0 != " " }) } ?? (status.isAvailable ? "desktop" : "console"),
            focusIcon: FocusIcons.path(stage: TreeStage.grown),
            doNotDisturb: doNotDisturb.active,
            doNotDisturbDetail: doNotDisturb.summary,
            config: inspectConfig(),
            gateway: inspectGateway()
        )
        report.idle = Self.idleText(config: try? Settings.current())
        // A store that cannot be used, or is damaged, is a failure of the whole check (exit 5);
        // a bad config file too (exit 78), every other command refusing to run on it.
        let failed = !storeReport.usable || storeReport.healthy == false
        let configError = report.config.problem.map { ChimeError(.config, $0) }
        if let configError {
            report.error = .init(code: "config", message: configError.message, exit: configError.code.exitStatus)
        }
        emit(report, json: global.json)
        try finish(failed: failed, configError: configError)
    }

    /// The idle source the runner would use (IdleMonitors), and whether the config turns idle
    /// pauses off.
    static func idleText(config: Config?) -> String {
        guard let name = IdleMonitors.detect()?.name else { return IdleMonitors.noneText }
        guard let config, config.focusIdle.pauseSeconds == nil else { return name }
        return name + " (focus sessions do not pause: [focus] idle_pause is \"off\")"
    }

    /// After the report: exit 5 when the store failed the check, else 78 for a bad config file.
    func finish(failed: Bool, configError: ChimeError?) throws {
        if failed { throw ExitCode(ChimeError.Code.store.exitStatus) }
        if let configError {
            // The file's one line on standard error too, as every command gives it (with --json
            // the document above, with its "error", is the only one on standard output).
            if global.json {
                FileHandle.standardError.write(Data("chime: \(configError.message)\n".utf8))
                throw ExitCode(configError.code.exitStatus)
            }
            throw configError
        }
    }
}

extension Doctor.Diagnosis.Desktop {
    /// The session bus and the notification server, as both stores' reports begin.
    var lines: [String] {
        var lines = ["Session bus:          \(bus ?? "none")"]
        if available {
            let name = [server, version].compactMap { $0 }.joined(separator: " ")
            lines.append("Notification server:  \(name) (\(vendor ?? "?")), spec \(spec ?? "?")")
            lines.append("Capabilities:         \(capabilities.joined(separator: ", "))")
        } else {
            lines.append("Notification server:  \(problem ?? "none")")
        }
        return lines
    }
}

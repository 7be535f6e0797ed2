import ArgumentParser
import ChimeCore
import ChimeFocus
import ChimeLibnotify
import ChimeRunner
import ChimeStore
import Foundation

#if canImport(Glibc)
import Glibc
#endif

struct Doctor: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Say what Chime sees: session bus, notification server, store, runner.",
        discussion: "Every D-Bus call it makes has a 1 s timeout; it never starts a bus or a server."
    )

    @OptionGroup var global: GlobalOptions

    struct Report: Encodable {
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
            var usable: Bool
            var problem: String?
            var mode: String?
            var pending: Int?
            var undelivered: Int?
        }
        struct RunnerState: Encodable {
            var running: Bool
            var pid: Int32?
        }
        var desktop: Desktop
        var store: Store
        var runner: RunnerState
        var notifier: String
        /// The grown tree's icon for focus alerts, when one is installed.
        var focusIcon: String?

        enum CodingKeys: String, CodingKey {
            case desktop, store, runner, notifier
            case focusIcon = "focus_icon"
        }
    }

    /// The store's state and its runner's; a store that cannot be opened is a finding, not a failure.
    private func inspectStore() -> (Report.Store, Report.RunnerState) {
        let store: ReminderStore
        do {
            store = try global.openStore()
        } catch {
            let path = global.store ?? ReminderStore.defaultPath()
            return (Report.Store(path: path, usable: false, problem: error.message), Report.RunnerState(running: false))
        }
        var info = stat()
        let mode = stat(store.path, &info) == 0 ? String(info.st_mode & 0o777, radix: 8) : nil
        let pid = RunnerControl.runnerPID(storePath: store.path)
        let report = Report.Store(
            path: store.path,
            usable: true,
            mode: mode,
            pending: try? store.pendingCount(),
            undelivered: try? store.undeliveredCount()
        )
        return (report, Report.RunnerState(running: pid != nil, pid: pid))
    }

    func run() async throws {
        let status = await LibnotifyNotifier.probe()
        let desktop = Report.Desktop(
            available: status.isAvailable,
            problem: status.problem,
            bus: status.busAddress,
            server: status.serverName,
            vendor: status.serverVendor,
            version: status.serverVersion,
            spec: status.specVersion,
            capabilities: status.capabilities
        )
        let (storeReport, runner) = inspectStore()
        let report = Report(
            desktop: desktop,
            store: storeReport,
            runner: runner,
            notifier: status.isAvailable ? "desktop" : "console",
            focusIcon: FocusIcons.path(stage: TreeStage.grown)
        )
        if global.json {
            Output.json(report)
            return
        }
        if let bus = status.busAddress {
            Output.line("Session bus:          \(bus)")
        } else {
            Output.line("Session bus:          none")
        }
        if status.isAvailable {
            let name = [status.serverName, status.serverVersion].compactMap { $0 }.joined(separator: " ")
            Output.line("Notification server:  \(name) (\(status.serverVendor ?? "?")), spec \(status.specVersion ?? "?")")
            Output.line("Capabilities:         \(status.capabilities.joined(separator: ", "))")
        } else {
            Output.line("Notification server:  \(status.problem ?? "none")")
        }
        if storeReport.usable {
            Output.line(
                "Store:                \(storeReport.path) (mode \(storeReport.mode ?? "?")), \(storeReport.pending ?? 0) pending, \(storeReport.undelivered ?? 0) waiting to be delivered"
            )
        } else {
            Output.line("Store:                \(storeReport.path): \(storeReport.problem ?? "unusable")")
        }
        Output.line("Runner:               " + (runner.pid.map { "running (pid \($0))" } ?? "not running: start it with 'chime run'"))
        Output.line("Alerts go to:         \(report.notifier) (with --notifier auto)")
        Output.line("Focus alert icon:     " + (report.focusIcon ?? "none installed (scripts/quickstart installs Resources/icons)"))
    }
}

import ArgumentParser
import ChimeAdw
import ChimeViewModels
import Foundation

// The windows' one executable: `chime-gate-window app [PAGE] --store PATH --focus-minutes N` is the
// Chime app (what `chime app` runs), on this thread, which becomes GTK's; any other arguments are
// the gate's window (GateWindowTool), as before.
if CommandLine.arguments.dropFirst().first == "app" {
    exit(AppMode.run(Array(CommandLine.arguments.dropFirst(2))))
}
await GateMode.run()

/// The gate's window: GateWindowTool's asynchronous main (in an async function, where the call
/// takes the async overload; top-level code would take ParsableCommand's synchronous one).
enum GateMode {
    static func run() async { await GateWindowTool.main() }
}

/// `chime-gate-window app`: its arguments, then the app (ChimeAdw).
struct AppMode: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "chime-gate-window app",
        abstract: "The Chime app's window (run by 'chime app', which passes the store and the focus length)."
    )

    @Argument(help: "The page to open: \(AppPage.accepted).") var page: String?
    @Option(help: "The store's path (else $CHIME_STORE, else the default location).") var store = ""
    @Option(help: "The length a new focus session plants, in minutes.") var focusMinutes = 25
    @Flag(help: "Print `first-frame since-process-start-ms=N` once the window is drawn, and quit (start-up's figure).")
    var exitAfterFirstFrame = false

    static func run(_ arguments: [String]) -> Int32 {
        let mode: AppMode
        do {
            mode = try parse(arguments)
        } catch {
            exit(withError: error)
        }
        var chosen: AppPage?
        if let page = mode.page {
            guard let known = AppPage(rawValue: page) else {
                FileHandle.standardError.write(Data("chime app: invalid page '\(page)': expected \(AppPage.accepted)\n".utf8))
                return 64
            }
            chosen = known
        }
        // The first frame is always told on standard output (the tests wait for it).
        let exitAfterFirstFrame = mode.exitAfterFirstFrame
        return ChimeAppWindow.run(
            page: chosen,
            storePath: mode.store.isEmpty ? nil : mode.store,
            focusMinutes: mode.focusMinutes,
            version: ChimeVersion.string
        ) {
            let sinceStart = ProcessFigures.sinceProcessStart().map { String(format: "%.1f", $0 * 1000) } ?? "unknown"
            emit("first-frame since-process-start-ms=\(sinceStart)")
            return exitAfterFirstFrame
        }
    }
}

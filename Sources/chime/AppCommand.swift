import ArgumentParser
import ChimeConfig
import ChimeCore
import ChimeFocus
import ChimeGateway
import ChimeViewModels
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// `chime app [PAGE]`: Chime's window. chime never links GTK: it replaces itself with the windows'
/// executable (chime-gate-window, in PREFIX/libexec/chime or beside chime) in its app mode, passing
/// the store and the focus length this chime would use. One window: a second `chime app` raises
/// the first at PAGE and exits 0. A bad config file does not keep the window shut (its Preferences
/// are where a person fixes it): the app says the file's message and uses the defaults.
struct AppCommand: ParsableCommand, RunsWithBadConfig {
    static let configuration = CommandConfiguration(
        commandName: "app",
        abstract: "Open Chime's window at a page: today, reminders, focus, doses or gateway.",
        discussion: """
            One window: when it is open already, it is raised (at PAGE, if given).
            Keys: Alt+1 to Alt+5 show today, reminders, focus, doses and gateway;
            Alt and a button's underlined letter press it; Escape closes a form;
            Ctrl+comma opens Preferences; Ctrl+? lists the shortcuts.
            Examples:
              chime app
              chime app focus
            More: man chime (chime app)
            """
    )

    @Argument(help: ArgumentHelp("The page to open: \(AppPage.accepted) (default: today).", valueName: "page"))
    var page: String?

    @Option(
        name: .long,
        help: ArgumentHelp("The store: a file (man chime).", valueName: "path"),
        completion: .file()
    )
    var store: String?

    func run() throws {
        if let page, AppPage(rawValue: page) == nil {
            throw ChimeError.invalid("page", page, expected: AppPage.accepted)
        }
        var global = GlobalOptions()
        global.store = store
        let path = global.storePath
        if PostgresStoreOption.isURL(path) || PostgresStoreOption.isOtherURL(path) {
            throw ChimeError.invalid(
                "store",
                Redaction.redacted(path),
                expected: "a SQLite file path (the app does not open a PostgreSQL store yet)"
            )
        }
        let minutes = Int((Settings.ifValid?.seconds(.focusLength) ?? Int64(FocusTimer.defaultMinutes * 60)) / 60)
        let helper = GateWindowProcess.helperPath(executable: GateContext.executable())
        guard access(helper, X_OK) == 0 else {
            throw ChimeError(
                .notFound,
                "no app window: '\(helper)' is missing (install chime-gate-window beside chime: scripts/quickstart)"
            )
        }
        let argv = [helper, "app"] + (page.map { [$0] } ?? []) + ["--store", path, "--focus-minutes", String(minutes)]
        let arguments = argv.map { strdup($0) } + [nil]
        ExecSignals.reset()
        execv(helper, arguments)
        throw ChimeError(.failure, "cannot start '\(helper)': \(String(cString: strerror(errno)))")
    }
}

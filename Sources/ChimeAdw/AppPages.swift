import CAdw
import ChimeApp
import ChimeCore
import ChimeFocus
import ChimeRunner
import ChimeStore
import ChimeViewModels

/// What every page of the app is given: the store, the window, and a way to tell the runner
/// that something changed. On GTK's thread only.
final class AppContext {
    /// The store the app opened (nil when it could not be opened: ``storeProblem`` says why).
    let store: ReminderStore?
    let storePath: String
    /// Why the store could not be opened, for the pages that need it.
    let storeProblem: String?
    /// The app's window (transient parent of the pages' dialogs).
    let window: UnsafeMutablePointer<GtkWidget>
    /// The focus session's length in minutes (`chime app`'s config; Preferences change it).
    var focusMinutes: Int
    /// The config file's settings the pages use (the snooze's length, the dose policy, the
    /// gate's defaults), read as the CLI reads them; ``reloadSettings()`` reads them again.
    private(set) var settings: AppSettings
    /// Says the config file's problem (a toast on the window), once per problem.
    var showProblem: (String) -> Void = { _ in }
    private var problemShown: String?
    /// Shows another page (e.g. Today's row opens its dose on Doses).
    var present: (AppPage) -> Void = { _ in }
    /// Every page's refresh, called after any page changes the store (set by the controller).
    var refreshAll: () -> Void = {}

    init(store: ReminderStore?, storePath: String, storeProblem: String?, window: UnsafeMutablePointer<GtkWidget>, focusMinutes: Int) {
        self.store = store
        self.storePath = storePath
        self.storeProblem = storeProblem
        self.window = window
        self.focusMinutes = focusMinutes
        settings = AppSettings.load(keys: ChimeApp.configKeys)
    }

    /// Reads the config file again (Preferences wrote it); a bad file's message is said once,
    /// and the pages then use the defaults. Call ``refreshAll`` after, for the pages to follow.
    func reloadSettings() {
        settings = AppSettings.load(keys: ChimeApp.configKeys)
        sayProblem()
    }

    /// Says the file's problem when it is a new one (at start, and after a reload).
    func sayProblem() {
        guard settings.problem != problemShown else { return }
        problemShown = settings.problem
        if let problem = settings.problem { showProblem(problem) }
    }

    /// After a page changed the store: wakes the runner (it schedules or drops the alerts) and
    /// lets every page read again.
    func changed() {
        _ = RunnerControl.poke(storePath: storePath)
        refreshAll()
    }
}

/// One page of the app: its widget (the object "page" of its `.ui` file, put in the window's
/// slot for it), told when it is shown or hidden and when the store changed.
protocol AppPageController: AnyObject {
    /// The page's top widget.
    var root: UnsafeMutablePointer<GtkWidget> { get }
    /// The page was shown (`onScreen`: visible in a mapped window) or hidden.
    func visibilityChanged(onScreen: Bool)
    /// The store changed (this app, the runner or another program): read again.
    func refresh()
}

extension AppPageController {
    func visibilityChanged(onScreen: Bool) {}
    func refresh() {}
}

/// A page's builder, from its `.ui` file in the app's resources (`/io/github/chime/Chime/NAME.ui`);
/// kept for the process's life with the page, since it holds the page's objects.
struct PageBuilder {
    let builder: OpaquePointer

    init(_ name: String) {
        builder = gtk_builder_new_from_resource("/io/github/chime/Chime/\(name).ui")!
    }

    /// The widget with id `id` in the file (a programming error if missing).
    func widget(_ id: String) -> UnsafeMutablePointer<GtkWidget> {
        guard let object = gtk_builder_get_object(builder, id) else { fatalError("no object '\(id)' in the page's .ui file") }
        return chime_adw_widget(object)!
    }
}

/// A page that is only its `.ui` file's empty state (until it has content of its own).
final class StaticPage: AppPageController {
    let builder: PageBuilder
    var root: UnsafeMutablePointer<GtkWidget> { builder.widget("page") }

    init(_ page: AppPage) {
        builder = PageBuilder(page.rawValue)
    }
}

extension AppContext {
    /// The breaks between focus sessions, from the config file (the app's settle may complete a
    /// session, and the break that then begins is the config's); the built-in ones when the file
    /// is bad.
    static let focusBreaks: FocusBreaks = (try? ChimeApp.loadConfig())?.focusBreaks ?? FocusBreaks()
}

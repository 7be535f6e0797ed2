import CAdw
import ChimeCore
import ChimeDoses
import ChimeFocus
import ChimeGateway
import ChimeRunner
import ChimeStore
import ChimeViewModels
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The Chime app: an AdwApplicationWindow titled "Chime" with five pages (Today, Reminders, Focus,
/// Doses, Gateway) in an AdwViewStack, its widget tree from the GtkBuilder file `ui/window.ui`
/// compiled into this executable (ChimeResourcesPlugin). The pages bind to the view models of
/// ChimeViewModels; the Focus page to ``TimerViewModel``.
///
/// Its application id is the runner's, io.github.chime.Chime (the desktop entry's and the icon's
/// name), with `G_APPLICATION_NON_UNIQUE`, since `chime run` owns that bus name: the app keeps to
/// one instance itself, by owning io.github.chime.Chime.App (see `chime_app_claim`), where a second
/// start asks the first to present its page, and exits.
///
/// Everything runs on the calling thread, which becomes GTK's: ``run(page:storePath:focusMinutes:)``
/// returns when the window is closed.
public enum ChimeAppWindow {
    /// The resource path of the window's builder file.
    static let windowResource = "/io/github/chime/Chime/window.ui"

    /// Runs the app at `page` (nil: Today, or the page the open window shows) on the store at
    /// `storePath` (nil: `$CHIME_STORE`, else the default location); its exit status.
    public static func run(page: AppPage?, storePath: String?, focusMinutes: Int) -> Int32 {
        let storePath = storePath ?? ReminderStore.defaultPath()
        let bundle = Data(base64Encoded: ChimeResources.bundle) ?? Data()
        let registered = bundle.withUnsafeBytes { chime_adw_register_resource($0.baseAddress, gsize($0.count)) != 0 }
        guard registered else {
            report("the window's resources are damaged (ChimeResources.bundle is not a GResource bundle)")
            return 70
        }
        let controller = AppController(storePath: storePath, focusMinutes: focusMinutes, page: page)
        let context = Unmanaged.passRetained(controller).toOpaque()
        var message: UnsafeMutablePointer<CChar>?
        let claim = chime_app_claim(
            page?.rawValue ?? "",
            { page, data in
                let page = page.map { String(cString: $0) } ?? ""
                Unmanaged<AppController>.fromOpaque(data!).takeUnretainedValue().present(AppPage(rawValue: page))
            },
            context,
            &message
        )
        if let message {
            report(String(cString: message))
            g_free(message)
        }
        if claim == 1 {
            emit("presented-by-running-instance")
            return 0
        }
        prepareEnvironment()
        guard gtk_init_check() != 0 else {
            report("GTK could not open the display (gtk_init_check failed): is DISPLAY or WAYLAND_DISPLAY set?")
            return 3
        }
        let app = adw_application_new("io.github.chime.Chime", G_APPLICATION_NON_UNIQUE)!
        chime_adw_connect(
            app,
            "activate",
            { _, data in Unmanaged<AppController>.fromOpaque(data!).takeUnretainedValue().activate() },
            context,
            nil
        )
        controller.application = app
        let status = g_application_run(chime_adw_g_application(app), 0, nil)
        g_object_unref(app)
        return status
    }

    /// The renderer and accessibility settings the gate window makes too (GtkThread): GSK's cairo
    /// renderer and no GL unless the environment chose a renderer, and GTK_A11Y=none when no
    /// accessibility bus can be reached.
    static func prepareEnvironment() {
        if getenv("GSK_RENDERER") == nil {
            setenv("GSK_RENDERER", "cairo", 0)
            if gtk_get_minor_version() >= 16 {
                setenv("GDK_DISABLE", "gl", 0)
            } else if getenv("GDK_DEBUG") == nil {
                setenv("GDK_DEBUG", "gl-disable", 0)
            }
        }
        if getenv("GTK_A11Y") == nil && chime_adw_accessibility_bus_reachable() == 0 {
            setenv("GTK_A11Y", "none", 0)
        }
    }

    /// One line on standard error: `chime app: …`.
    static func report(_ message: String) {
        FileHandle.standardError.write(Data("chime app: \(message)\n".utf8))
    }

    /// One line on standard output, at once (what the app's tests wait for).
    static func emit(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }
}

/// The window and its pages, on GTK's thread only (every method is called from GTK's signal
/// handlers or from ``ChimeAppWindow/run(page:storePath:focusMinutes:)`` on that thread).
final class AppController {
    let storePath: String
    let focusMinutes: Int
    var application: UnsafeMutablePointer<AdwApplication>?
    /// The page to show once the window is built (a Present before the first activation).
    private var pendingPage: AppPage?
    private var widgets: Widgets?
    private var focus: FocusPage?
    /// The store's failure to open, shown on the pages that need it.
    private var storeProblem: String?

    struct Widgets {
        /// Kept for the process's life: it holds the window's and the dialog's objects.
        let builder: OpaquePointer
        let window: UnsafeMutablePointer<GtkWidget>
        let stack: UnsafeMutablePointer<GtkWidget>
    }

    init(storePath: String, focusMinutes: Int, page: AppPage?) {
        self.storePath = storePath
        self.focusMinutes = focusMinutes
        pendingPage = page ?? .today
    }

    /// GApplication's "activate": builds the window the first time, then presents it.
    func activate() {
        if widgets == nil { build() }
        present(nil)
    }

    /// Shows `page` (nil: the page already shown) and raises the window: a second
    /// `chime app PAGE`, through io.github.chime.Chime.App1.Present.
    func present(_ page: AppPage?) {
        guard let widgets else {
            if let page { pendingPage = page }
            return
        }
        if let page = page ?? pendingPage {
            adw_view_stack_set_visible_child_name(chime_adw_as_view_stack(widgets.stack), page.rawValue)
        }
        pendingPage = nil
        gtk_window_present(chime_adw_as_window(widgets.window))
        ChimeAppWindow.emit("presented page=\(visiblePage?.rawValue ?? "none")")
    }

    var visiblePage: AppPage? {
        guard let widgets, let name = adw_view_stack_get_visible_child_name(chime_adw_as_view_stack(widgets.stack)) else { return nil }
        return AppPage(rawValue: String(cString: name))
    }

    private func build() {
        let builder = gtk_builder_new_from_resource(ChimeAppWindow.windowResource)!
        let window = chime_adw_widget(gtk_builder_get_object(builder, "window"))!
        let stack = chime_adw_widget(gtk_builder_get_object(builder, "stack"))!
        gtk_window_set_application(chime_adw_as_window(window), chime_adw_gtk_application(application))
        widgets = Widgets(builder: builder, window: window, stack: stack)
        let context = Unmanaged.passUnretained(self).toOpaque()
        chime_adw_connect(
            stack,
            "notify::visible-child-name",
            { _, data in Unmanaged<AppController>.fromOpaque(data!).takeUnretainedValue().pageChanged() },
            context,
            nil
        )
        for signal in ["map", "unmap"] {
            chime_adw_connect(
                window,
                signal,
                { _, data in Unmanaged<AppController>.fromOpaque(data!).takeUnretainedValue().pageChanged() },
                context,
                nil
            )
        }
        do {
            let createDirectory = storePath == ReminderStore.defaultPath()
            let store = try ReminderStore(
                path: storePath,
                schemas: [.focus, .doses, .gateway],
                access: .create,
                createDirectory: createDirectory
            )
            focus = FocusPage(builder: builder, timer: TimerViewModel(timer: FocusTimer(store: store), minutes: focusMinutes)) {
                [storePath] in
                _ = RunnerControl.poke(storePath: storePath)
            }
        } catch {
            storeProblem = error.message
            ChimeAppWindow.report("cannot open the store \(storePath): \(error.message)")
        }
        focus?.onScreen = { [weak self] in
            guard let self, let widgets = self.widgets else { return false }
            return self.visiblePage == .focus && gtk_widget_get_mapped(widgets.window) != 0
        }
    }

    /// The page shown changed, or the window was mapped or unmapped.
    private func pageChanged() {
        focus?.visibilityChanged()
    }
}

/// The Focus page, bound to ``TimerViewModel``: the tree, the countdown, the progress, the
/// headline and message, and Plant Tree, Pause, Resume and Give Up (shown when they apply).
/// The countdown ticks once a second only while the page is on screen and a session is active:
/// a GLib timeout added and removed accordingly, so an idle window makes no wake-ups.
final class FocusPage {
    let timer: TimerViewModel
    /// Wakes the runner after a change (it schedules or drops the session's alert).
    let changed: () -> Void
    /// Whether the page is on screen (the Focus page shown in a mapped window).
    var onScreen: () -> Bool = { false }
    private let tree: UnsafeMutablePointer<GtkWidget>
    private let countdown: UnsafeMutablePointer<GtkWidget>
    private let progress: UnsafeMutablePointer<GtkWidget>
    private let headline: UnsafeMutablePointer<GtkWidget>
    private let message: UnsafeMutablePointer<GtkWidget>
    private let plant: UnsafeMutablePointer<GtkWidget>
    private let pause: UnsafeMutablePointer<GtkWidget>
    private let resume: UnsafeMutablePointer<GtkWidget>
    private let giveUp: UnsafeMutablePointer<GtkWidget>
    private let dialog: UnsafeMutablePointer<GtkWidget>
    private var shownStage = 0
    /// The one-second timeout's source id while the countdown ticks, else 0.
    private var tick: guint = 0

    init(builder: OpaquePointer, timer: TimerViewModel, changed: @escaping () -> Void) {
        func object(_ id: String) -> UnsafeMutablePointer<GtkWidget> { chime_adw_widget(gtk_builder_get_object(builder, id))! }
        self.timer = timer
        self.changed = changed
        tree = object("focus_tree")
        countdown = object("focus_countdown")
        progress = object("focus_progress")
        headline = object("focus_headline")
        message = object("focus_message")
        plant = object("focus_plant")
        pause = object("focus_pause")
        resume = object("focus_resume")
        giveUp = object("focus_give_up")
        dialog = object("give_up_dialog")
        let context = Unmanaged.passUnretained(self).toOpaque()
        typealias Handler = @convention(c) (gpointer?, gpointer?) -> Void
        let handlers: [(UnsafeMutablePointer<GtkWidget>, Handler)] = [
            (plant, { _, data in FocusPage.from(data).act { $0.start() } }),
            (pause, { _, data in FocusPage.from(data).act { $0.pause() } }),
            (resume, { _, data in FocusPage.from(data).act { $0.resume() } }),
            (giveUp, { _, data in FocusPage.from(data).askToGiveUp() }),
        ]
        for (button, handler) in handlers { chime_adw_connect(button, "clicked", handler, context, nil) }
        chime_adw_connect_response(
            dialog,
            { _, response, data in
                if let response, String(cString: response) == "give-up" { FocusPage.from(data).act { $0.giveUp() } }
            },
            context,
            nil
        )
        // The seed's question, worded once (TimerViewModel).
        adw_message_dialog_set_body(chime_adw_as_message_dialog(dialog), TimerViewModel.giveUpQuestion)
        render(timer.state)
    }

    static func from(_ data: gpointer?) -> FocusPage { Unmanaged<FocusPage>.fromOpaque(data!).takeUnretainedValue() }

    private func act(_ action: (TimerViewModel) -> TimerState) {
        let state = action(timer)
        if state.error == nil { changed() }
        render(state)
        updateTicker()
    }

    private func askToGiveUp() {
        gtk_window_present(chime_adw_as_window(dialog))
    }

    /// The page was shown or hidden: read the session again when shown, and tick or stop.
    func visibilityChanged() {
        if onScreen() { render(timer.refresh()) }
        updateTicker()
    }

    private func updateTicker() {
        let wanted = onScreen() && timer.state.isSessionActive
        if wanted && tick == 0 {
            tick = g_timeout_add(
                1000,
                { data in FocusPage.from(data).ticked() ? 1 : 0 },
                Unmanaged.passUnretained(self).toOpaque()
            )
        } else if !wanted && tick != 0 {
            g_source_remove(tick)
            tick = 0
        }
    }

    /// One second passed: the countdown read again; false (the timeout removed) once it stops.
    private func ticked() -> Bool {
        let state = timer.refresh()
        render(state)
        guard state.isSessionActive && onScreen() else {
            tick = 0
            return false
        }
        return true
    }

    private func render(_ state: TimerState) {
        gtk_label_set_text(chime_adw_as_label(countdown), state.countdown)
        gtk_progress_bar_set_fraction(chime_adw_as_progress_bar(progress), state.progress)
        if state.stage != shownStage {
            shownStage = state.stage
            gtk_picture_set_resource(chime_adw_as_picture(tree), "/io/github/chime/Chime/icons/tree-stage-\(state.stage).svg")
            gtk_picture_set_alternative_text(chime_adw_as_picture(tree), TreeStageText.describe(state.stage))
        }
        set(headline, state.headline)
        set(message, state.error?.message ?? state.message)
        for (button, shown) in [(plant, state.canStart), (pause, state.canPause), (resume, state.canResume), (giveUp, state.canGiveUp)] {
            gtk_widget_set_visible(button, shown ? 1 : 0)
            gtk_widget_set_sensitive(button, shown ? 1 : 0)
        }
    }

    private func set(_ label: UnsafeMutablePointer<GtkWidget>, _ text: String?) {
        gtk_label_set_text(chime_adw_as_label(label), text ?? "")
        gtk_widget_set_visible(label, text == nil ? 0 : 1)
    }
}

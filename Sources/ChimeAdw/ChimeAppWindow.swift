import CAdw
import ChimeCore
import ChimeDoses
import ChimeFocus
import ChimeGateway
import ChimeGtk
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
/// Everything runs on the calling thread, which becomes GTK's: ``run(page:storePath:focusMinutes:version:firstFrame:)``
/// returns when the window is closed.
public enum ChimeAppWindow {
    /// The resource path of the window's builder file.
    static let windowResource = "/io/github/chime/Chime/window.ui"

    /// Runs the app at `page` (nil: Today, or the page the open window shows) on the store at
    /// `storePath` (nil: `$CHIME_STORE`, else the default location); its exit status.
    /// `firstFrame` is called once the window's first frame is drawn; when it returns true the
    /// app quits (the benchmark's and the tests' measure of start-up).
    /// `version` is what About Chime says (`chime --version`'s, from ChimeVersionPlugin).
    public static func run(
        page: AppPage?,
        storePath: String?,
        focusMinutes: Int,
        version: String = "",
        firstFrame: (() -> Bool)? = nil
    ) -> Int32 {
        let storePath = storePath ?? ReminderStore.defaultPath()
        let bundle = Data(base64Encoded: ChimeResources.bundle) ?? Data()
        let registered = bundle.withUnsafeBytes { chime_adw_register_resource($0.baseAddress, gsize($0.count)) != 0 }
        guard registered else {
            report("the window's resources are damaged (ChimeResources.bundle is not a GResource bundle)")
            return 70
        }
        let controller = AppController(storePath: storePath, focusMinutes: focusMinutes, page: page)
        controller.version = version
        controller.firstFrame = firstFrame
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
        GtkEnvironment.prepare()
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
/// handlers or from ``ChimeAppWindow/run(page:storePath:focusMinutes:version:firstFrame:)`` on that thread).
final class AppController {
    let storePath: String
    let focusMinutes: Int
    var application: UnsafeMutablePointer<AdwApplication>?
    /// The version About Chime shows.
    var version = ""
    /// Told once, when the window's first frame is drawn; true: quit then.
    var firstFrame: (() -> Bool)?
    private var firstFrameHandler: gulong = 0
    /// The page to show once the window is built (a Present before the first activation).
    private var pendingPage: AppPage?
    private var widgets: Widgets?
    /// What the pages share (the store, the window), once the window is built.
    private var app: AppContext?
    private var pages: [AppPage: any AppPageController] = [:]
    /// The Preferences window, made when first opened.
    private var preferences: PreferencesWindow?

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
        watchFirstFrame()
    }

    /// Connects the window's frame clock's "after-paint" once (the window is realized once
    /// presented), to tell ``firstFrame``.
    private func watchFirstFrame() {
        guard let widgets, firstFrame != nil, firstFrameHandler == 0, let clock = gtk_widget_get_frame_clock(widgets.window) else { return }
        firstFrameHandler = chime_adw_connect_after_paint(
            clock,
            { clock, data in Unmanaged<AppController>.fromOpaque(data!).takeUnretainedValue().drewFirstFrame(clock) },
            Unmanaged.passUnretained(self).toOpaque()
        )
    }

    private func drewFirstFrame(_ clock: OpaquePointer?) {
        guard firstFrameHandler != 0, let report = firstFrame else { return }
        g_signal_handler_disconnect(UnsafeMutableRawPointer(clock), firstFrameHandler)
        firstFrame = nil
        if report(), let application { g_application_quit(chime_adw_g_application(application)) }
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
        chime_adw_connect_notify(
            stack,
            "notify::visible-child-name",
            { _, _, data in Unmanaged<AppController>.fromOpaque(data!).takeUnretainedValue().pageChanged() },
            context
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
        var store: ReminderStore?
        var storeProblem: String?
        do {
            store = try ReminderStore(
                path: storePath,
                schemas: [.focus, .doses, .gateway],
                access: .create,
                createDirectory: storePath == ReminderStore.defaultPath()
            )
        } catch {
            storeProblem = error.message
            ChimeAppWindow.report("cannot open the store \(storePath): \(error.message)")
        }
        let app = AppContext(store: store, storePath: storePath, storeProblem: storeProblem, window: window, focusMinutes: focusMinutes)
        app.present = { [weak self] page in self?.present(page) }
        let toasts = chime_adw_widget(gtk_builder_get_object(builder, "toasts"))!
        app.showProblem = { problem in
            ChimeAppWindow.report(problem)
            // Until dismissed: the file stays bad until it is fixed (Preferences, 'chime config edit').
            chime_adw_toast(toasts, problem, 0)
        }
        app.refreshAll = { [weak self] in
            for page in self?.pages.values.map(\.self) ?? [] { page.refresh() }
        }
        self.app = app
        followRunner()
        // Built into a local first: adding a page to the stack can change its visible child, whose
        // signal reads `pages`.
        var built: [AppPage: any AppPageController] = [:]
        for page in AppPage.allCases {
            let controller = makePage(page, app)
            built[page] = controller
            gtk_box_append(chime_adw_as_box(chime_adw_widget(gtk_builder_get_object(builder, "\(page.rawValue)_slot"))), controller.root)
        }
        pages = built
        addMenuActions()
        app.sayProblem()
    }

    /// The app's actions: app.page (Alt+1 … Alt+5), app.preferences (Ctrl+comma) and app.about;
    /// GtkApplication adds win.show-help-overlay (Ctrl+?) from gtk/help-overlay.ui.
    private func addMenuActions() {
        guard let application else { return }
        let context = Unmanaged.passUnretained(self).toOpaque()
        chime_adw_add_app_action(
            application,
            "preferences",
            "<Control>comma",
            { _, _, data in Unmanaged<AppController>.fromOpaque(data!).takeUnretainedValue().showPreferences() },
            context
        )
        // Alt+1 … Alt+5: the pages (app.page('today') …), GNOME's convention for tabs.
        chime_adw_add_app_string_action(
            application,
            "page",
            { _, parameter, data in
                guard let name = chime_adw_variant_string(parameter), let page = AppPage(rawValue: String(cString: name)) else { return }
                Unmanaged<AppController>.fromOpaque(data!).takeUnretainedValue().show(page)
            },
            context
        )
        for page in AppPage.allCases {
            chime_adw_set_accel(application, "app.page('\(page.rawValue)')", page.accelerator)
        }
        chime_adw_add_app_action(
            application,
            "about",
            nil,
            { _, _, data in
                let controller = Unmanaged<AppController>.fromOpaque(data!).takeUnretainedValue()
                if let window = controller.widgets?.window { chime_adw_show_about(window, controller.version) }
            },
            context
        )
    }

    /// Shows `page` in the window (a page's shortcut).
    private func show(_ page: AppPage) {
        guard let widgets else { return }
        adw_view_stack_set_visible_child_name(chime_adw_as_view_stack(widgets.stack), page.rawValue)
    }

    private func showPreferences() {
        guard let app else { return }
        let window = preferences ?? PreferencesWindow(app)
        preferences = window
        window.present()
    }

    /// Live without polling: every signal of the runner (a reminder changed, fired or was
    /// answered; its properties changed, the focus session's among them) reads every page
    /// again, once per turn of the main loop. Without a session bus the pages are read again
    /// after their own changes only (the single-instance claim has said there is no bus).
    private func followRunner() {
        var message: UnsafeMutablePointer<CChar>?
        let context = Unmanaged.passUnretained(self).toOpaque()
        _ = chime_app_follow_runner(
            { data in Unmanaged<AppController>.fromOpaque(data!).takeUnretainedValue().app?.refreshAll() },
            context,
            &message
        )
        g_free(message)
    }

    /// Each page's controller: its own file (FocusPage.swift, …), or its empty state.
    private func makePage(_ page: AppPage, _ app: AppContext) -> any AppPageController {
        switch page {
        case .focus: FocusPage(app) ?? StaticPage(page)
        case .gateway: GatewayPage(app) ?? StaticPage(page)
        case .today: TodayPage(app) ?? StaticPage(page)
        case .reminders: RemindersPage(app) ?? StaticPage(page)
        case .doses: DosesPage(app) ?? StaticPage(page)
        }
    }

    /// The page shown changed, or the window was mapped or unmapped.
    private func pageChanged() {
        let mapped = widgets.map { gtk_widget_get_mapped($0.window) != 0 } ?? false
        let shown = visiblePage
        for (page, controller) in pages { controller.visibilityChanged(onScreen: mapped && page == shown) }
    }
}

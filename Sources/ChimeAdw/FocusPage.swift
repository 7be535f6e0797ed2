import CAdw
import ChimeCore
import ChimeFocus
import ChimeViewModels

/// The Focus page, bound to ``TimerViewModel``: the tree, the countdown, the progress, the
/// headline and message, and Plant Tree, Pause, Resume and Give Up (shown when they apply).
/// The countdown ticks once a second only while the page is on screen and a session is active:
/// a GLib timeout added and removed accordingly, so an idle window makes no wake-ups.
final class FocusPage: AppPageController {
    let timer: TimerViewModel
    let app: AppContext
    let root: UnsafeMutablePointer<GtkWidget>
    /// Whether the page is on screen (the Focus page shown in a mapped window).
    private var onScreen = false
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

    private let builder: PageBuilder

    /// Nil without a store (the page then shows its empty state).
    init?(_ app: AppContext) {
        guard let store = app.store else { return nil }
        let builder = PageBuilder("focus")
        func object(_ id: String) -> UnsafeMutablePointer<GtkWidget> { builder.widget(id) }
        self.builder = builder
        self.app = app
        timer = TimerViewModel(timer: FocusTimer(store: store), minutes: app.focusMinutes)
        root = object("page")
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
        gtk_window_set_transient_for(chime_adw_as_window(dialog), chime_adw_as_window(app.window))
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
        if state.error == nil { app.changed() }
        render(state)
        updateTicker()
    }

    private func askToGiveUp() {
        gtk_window_present(chime_adw_as_window(dialog))
    }

    /// The page was shown or hidden: read the session again when shown, and tick or stop.
    func visibilityChanged(onScreen: Bool) {
        self.onScreen = onScreen
        if onScreen { render(timer.refresh()) }
        updateTicker()
    }

    func refresh() {
        render(timer.refresh())
        updateTicker()
    }

    private func updateTicker() {
        let wanted = onScreen && timer.state.isSessionActive
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
        guard state.isSessionActive && onScreen else {
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

import CAdw
import ChimeCore
import ChimeFocus
import ChimeViewModels

/// The Focus page, bound to ``TimerViewModel``: the tree, the countdown, the session's label,
/// the progress, the headline and message, and an optional Label entry beside Plant Tree, Pause,
/// Resume and Give Up (shown when they apply);
/// below them, bound to ``FocusStatsViewModel`` and ``ForestViewModel``: the streak, a chart of
/// the last 7 days' trees (drawn; its description says the figures), the stats, and the forest
/// (every ended session's tree, newest first, a given-up one withered), each tree named.
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
    /// Shown during the break after a completed session ("Break: 4:12 left" in the message).
    private let skipBreak: UnsafeMutablePointer<GtkWidget>
    private let message: UnsafeMutablePointer<GtkWidget>
    private let plant: UnsafeMutablePointer<GtkWidget>
    /// The optional label beside Plant Tree (`chime focus start --label`).
    private let labelEntry: UnsafeMutablePointer<GtkWidget>
    /// The session's label, under the countdown.
    private let sessionLabel: UnsafeMutablePointer<GtkWidget>
    private let pause: UnsafeMutablePointer<GtkWidget>
    private let resume: UnsafeMutablePointer<GtkWidget>
    private let giveUp: UnsafeMutablePointer<GtkWidget>
    private let dialog: UnsafeMutablePointer<GtkWidget>
    private var shownStage = 0
    /// The tree's pixels: the picture grows to ~260 px on a large window; twice that for HiDPI.
    static let treePixels: Int32 = 512
    /// The one-second timeout's source id while the countdown ticks, else 0.
    private var tick: guint = 0

    private let builder: PageBuilder
    private let forest: ForestViewModel
    private let stats: FocusStatsViewModel
    private let streak: UnsafeMutablePointer<GtkWidget>
    private let chart: UnsafeMutablePointer<GtkWidget>
    private let statsList: UnsafeMutablePointer<GtkWidget>
    private let forestHeading: UnsafeMutablePointer<GtkWidget>
    private let forestEmpty: UnsafeMutablePointer<GtkWidget>
    private let forestGrid: UnsafeMutablePointer<GtkWidget>
    /// The chart's bars, as last read.
    private var bars: [FocusStatsState.Bar] = []
    /// What the grid and the list show, so they are rebuilt only when it changes.
    private var shownPlots: [ForestState.Plot]?
    private var shownRows: [LabeledValue]?
    /// A tree's detail, when one of the grid is activated.
    private var treeDialog: UnsafeMutablePointer<GtkWidget>!

    /// Nil without a store (the page then shows its empty state).
    init?(_ app: AppContext) {
        guard let store = app.store else { return nil }
        let builder = PageBuilder("focus")
        func object(_ id: String) -> UnsafeMutablePointer<GtkWidget> { builder.widget(id) }
        self.builder = builder
        self.app = app
        timer = TimerViewModel(timer: FocusTimer(store: store, breaks: AppContext.focusBreaks), minutes: app.focusMinutes)
        root = object("page")
        tree = object("focus_tree")
        countdown = object("focus_countdown")
        progress = object("focus_progress")
        headline = object("focus_headline")
        message = object("focus_message")
        plant = object("focus_plant")
        labelEntry = object("focus_label")
        sessionLabel = object("focus_session_label")
        pause = object("focus_pause")
        resume = object("focus_resume")
        giveUp = object("focus_give_up")
        skipBreak = object("focus_skip_break")
        dialog = object("give_up_dialog")
        forest = ForestViewModel(forest: Forest(store: store), limit: 60)
        stats = FocusStatsViewModel(forest: Forest(store: store), clock: SystemWallClock())
        streak = object("focus_streak")
        chart = object("focus_chart")
        statsList = object("focus_stats")
        forestHeading = object("focus_forest_heading")
        forestEmpty = object("focus_forest_empty")
        forestGrid = object("focus_forest")
        gtk_label_set_text(chime_adw_as_label(object("focus_forest_empty_message")), forest.state.emptyMessage)
        Self.addStyles()
        gtk_window_set_transient_for(chime_adw_as_window(dialog), chime_adw_as_window(app.window))
        let context = Unmanaged.passUnretained(self).toOpaque()
        typealias Handler = @convention(c) (gpointer?, gpointer?) -> Void
        let handlers: [(UnsafeMutablePointer<GtkWidget>, Handler)] = [
            (plant, { _, data in FocusPage.from(data).plantTree() }),
            (pause, { _, data in FocusPage.from(data).act { $0.pause() } }),
            (resume, { _, data in FocusPage.from(data).act { $0.resume() } }),
            (giveUp, { _, data in FocusPage.from(data).askToGiveUp() }),
            (skipBreak, { _, data in FocusPage.from(data).act { $0.skipBreak() } }),
        ]
        for (button, handler) in handlers { chime_adw_connect(button, "clicked", handler, context, nil) }
        // Enter in the label plants the tree.
        chime_adw_connect(labelEntry, "activate", { _, data in FocusPage.from(data).plantTree() }, context, nil)
        // Exactly their labels for AT-SPI (GTK 4.8 would add the button's own label: "Plant Tree Plant Tree").
        for (button, name) in [(plant, "Plant Tree"), (pause, "Pause"), (resume, "Resume"), (giveUp, "Give Up"), (skipBreak, "Skip Break")]
        {
            chime_adw_name_exactly(button, name)
        }
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
        chime_adw_set_draw_func(
            chart,
            { _, cairo, width, height, data in FocusPage.from(data).drawChart(cairo, Double(width), Double(height)) },
            context
        )
        chime_adw_on_child_activated(
            forestGrid,
            { _, child, data in FocusPage.from(data).treeActivated(Int(gtk_flow_box_child_get_index(child))) },
            context
        )
        treeDialog = adw_message_dialog_new(chime_adw_as_window(app.window), nil, nil)
        adw_message_dialog_add_response(chime_adw_as_message_dialog(treeDialog), "close", "_Close")
        adw_message_dialog_set_close_response(chime_adw_as_message_dialog(treeDialog), "close")
        gtk_window_set_hide_on_close(chime_adw_as_window(treeDialog), 1)
        gtk_window_set_modal(chime_adw_as_window(treeDialog), 1)
        render(timer.state)
        renderForest()
    }

    /// A tree of the grid activated (Enter, a click): its detail (a completed tree's, as
    /// `chime forest show` says it; a withered one's name).
    private func treeActivated(_ index: Int) {
        guard let plots = shownPlots, plots.indices.contains(index) else { return }
        let plot = plots[index]
        var heading = plot.accessibilityLabel
        var body = ""
        if !plot.withered, let tree = forest.state.trees.first(where: { $0.id == plot.id }),
            let detail = forest.selectTree(number: tree.number).selected
        {
            heading = detail.title
            body = detail.rows.map { "\($0.label): \($0.value)" }.joined(separator: "\n")
            forest.dismissDetail()
        }
        adw_message_dialog_set_heading(chime_adw_as_message_dialog(treeDialog), heading)
        adw_message_dialog_set_body(chime_adw_as_message_dialog(treeDialog), body)
        gtk_window_present(chime_adw_as_window(treeDialog))
    }

    /// A withered tree: grey and faded.
    private nonisolated(unsafe) static var stylesAdded = false
    private static func addStyles() {
        guard !stylesAdded else { return }
        stylesAdded = true
        chime_adw_add_css(".withered { filter: grayscale(1) sepia(0.4); opacity: 0.6; }")
    }

    static func from(_ data: gpointer?) -> FocusPage { Unmanaged<FocusPage>.fromOpaque(data!).takeUnretainedValue() }

    private func act(_ action: (TimerViewModel) -> TimerState) {
        let state = action(timer)
        if state.error == nil { app.changed() }
        render(state)
        updateTicker()
    }

    /// Plant Tree, with the label entry's text (empty: no label); the entry is cleared once planted.
    private func plantTree() {
        guard timer.state.canStart else { return }
        let text = String(cString: gtk_editable_get_text(chime_adw_as_editable(labelEntry)))
        act { $0.start(label: text) }
        if timer.state.error == nil { gtk_editable_set_text(chime_adw_as_editable(labelEntry), "") }
    }

    private func askToGiveUp() {
        gtk_window_present(chime_adw_as_window(dialog))
    }

    /// The page was shown or hidden: read the session again when shown, and tick or stop.
    func visibilityChanged(onScreen: Bool) {
        self.onScreen = onScreen
        if onScreen {
            render(timer.refresh())
            renderForest()
        }
        updateTicker()
    }

    func refresh() {
        if timer.minutes != app.focusMinutes { timer.setMinutes(app.focusMinutes) }
        render(timer.refresh())
        renderForest()
        updateTicker()
    }

    private func updateTicker() {
        let wanted = onScreen && timer.state.ticks
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
        guard state.ticks && onScreen else {
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
            // Drawn at the size it is shown (up to ~260 px, twice that on a HiDPI screen), not
            // the SVG's 128 px scaled up (blurry).
            let resource = "/io/github/chime/Chime/icons/tree-stage-\(state.stage).svg"
            if chime_adw_picture_set_resource_at_size(tree, resource, Self.treePixels) == 0 {
                gtk_picture_set_resource(chime_adw_as_picture(tree), resource)
            }
            gtk_picture_set_alternative_text(chime_adw_as_picture(tree), TreeStageText.describe(state.stage))
        }
        set(headline, state.headline)
        set(sessionLabel, state.label)
        gtk_widget_set_visible(labelEntry, state.canStart ? 1 : 0)
        set(message, state.error?.message ?? state.breakLeft ?? state.message)
        for (button, shown) in [
            (plant, state.canStart), (pause, state.canPause), (resume, state.canResume), (giveUp, state.canGiveUp),
            (skipBreak, state.canSkipBreak),
        ] {
            gtk_widget_set_visible(button, shown ? 1 : 0)
            gtk_widget_set_sensitive(button, shown ? 1 : 0)
        }
    }

    private func set(_ label: UnsafeMutablePointer<GtkWidget>, _ text: String?) {
        gtk_label_set_text(chime_adw_as_label(label), text ?? "")
        gtk_widget_set_visible(label, text == nil ? 0 : 1)
    }

    // MARK: - The forest and the stats

    /// Reads the forest and the stats again and shows them (on a refresh, when shown).
    private func renderForest() {
        let forestState = forest.refresh()
        let statsState = stats.refresh()
        let streakText = statsState.showStreakBanner ? "\(statsState.stats.currentStreak)-day streak" : nil
        set(streak, streakText)
        bars = statsState.lastWeek
        chime_adw_set_accessible(chart, nil, statsState.chartDescription)
        gtk_widget_queue_draw(chart)
        if shownRows != statsState.rows {
            shownRows = statsState.rows
            let list = chime_adw_as_list_box(statsList)
            while let row = gtk_widget_get_first_child(statsList) { gtk_list_box_remove(list, row) }
            for row in statsState.rows {
                let widget = adw_action_row_new()!
                adw_preferences_row_set_title(chime_adw_as_preferences_row(widget), row.label)
                adw_preferences_row_set_use_markup(chime_adw_as_preferences_row(widget), 0)
                let value = gtk_label_new(row.value)!
                gtk_widget_add_css_class(value, "dim-label")
                adw_action_row_add_suffix(chime_adw_as_action_row(widget), value)
                chime_adw_name_exactly(widget, "\(row.label): \(row.value)")
                gtk_list_box_append(list, widget)
            }
            gtk_widget_set_visible(statsList, statsState.rows.isEmpty ? 0 : 1)
        }
        gtk_label_set_text(chime_adw_as_label(forestHeading), forestState.plots.isEmpty ? "My Forest" : forestState.heading)
        gtk_widget_set_visible(forestEmpty, forestState.plots.isEmpty ? 1 : 0)
        gtk_widget_set_visible(forestGrid, forestState.plots.isEmpty ? 0 : 1)
        guard shownPlots != forestState.plots else { return }
        shownPlots = forestState.plots
        let grid = chime_adw_as_flow_box(forestGrid)
        while let child = gtk_widget_get_first_child(forestGrid) { gtk_flow_box_remove(grid, child) }
        for plot in forestState.plots {
            let picture = gtk_picture_new_for_resource("/io/github/chime/Chime/icons/tree-stage-\(plot.stage).svg")!
            gtk_picture_set_can_shrink(chime_adw_as_picture(picture), 1)
            gtk_picture_set_alternative_text(chime_adw_as_picture(picture), plot.accessibilityLabel)
            gtk_widget_set_size_request(picture, 48, 48)
            if plot.withered { gtk_widget_add_css_class(picture, "withered") }
            gtk_flow_box_append(grid, picture)
            // The grid's cell (what the keyboard focuses) carries the tree's name.
            if let cell = gtk_widget_get_parent(picture) {
                chime_adw_name_exactly(cell, plot.accessibilityLabel)
                gtk_widget_set_tooltip_text(cell, plot.accessibilityLabel)
            }
        }
    }

    /// The last 7 days' bars: trees per day, the count above a bar, the day below.
    private func drawChart(_ cairo: OpaquePointer?, _ width: Double, _ height: Double) {
        guard let cairo, !bars.isEmpty else { return }
        var foreground = GdkRGBA()
        var accent = GdkRGBA()
        chime_adw_colors(chart, &foreground, &accent)
        let labelHeight = 22.0
        let top = 20.0
        let most = Double(max(1, bars.map(\.trees).max() ?? 1))
        let slot = width / Double(bars.count)
        let barWidth = min(36, slot * 0.6)
        let area = max(1, height - labelHeight - top)
        for (index, bar) in bars.enumerated() {
            let center = slot * (Double(index) + 0.5)
            let barHeight = bar.trees == 0 ? 2 : max(4, area * Double(bar.trees) / most)
            let y = top + area - barHeight
            if bar.trees == 0 {
                cairo_set_source_rgba(cairo, Double(foreground.red), Double(foreground.green), Double(foreground.blue), 0.2)
            } else {
                cairo_set_source_rgba(cairo, Double(accent.red), Double(accent.green), Double(accent.blue), 1)
            }
            cairo_rectangle(cairo, center - barWidth / 2, y, barWidth, barHeight)
            cairo_fill(cairo)
            cairo_set_source_rgba(cairo, Double(foreground.red), Double(foreground.green), Double(foreground.blue), 0.8)
            if bar.trees > 0 { chime_adw_draw_text(chart, cairo, String(bar.trees), center, y - 10) }
            chime_adw_draw_text(chart, cairo, bar.label, center, height - labelHeight / 2)
        }
    }
}

import CAdw
import ChimeCore
import ChimeGateway
import ChimeViewModels
import Foundation

/// The Gateway page, bound to ``GateHubViewModel`` and ``GateStatsViewModel``: the hub (the
/// greeting, the streak banner, the gated programs, each with Remove), Add Program (an app
/// chooser over the desktop's installed applications, GIO's, searchable), the statistics with
/// the 30-day trend drawn as bars (described in figures for assistive technology), and the
/// setup as `chime gate doctor` checks it, with Repair Gates when a gate needs writing again.
/// Gating and un-gating go through the family's use cases (``LauncherOverrides``), as
/// `chime gate add` and `chime gate remove` do; a refusal shows its message in a toast.
final class GatewayPage: AppPageController {
    let app: AppContext
    /// Made again when the config's `[gate]` values change (``refresh()``).
    private(set) var hub: GateHubViewModel
    private(set) var stats: GateStatsViewModel
    private let overrides: LauncherOverrides
    let root: UnsafeMutablePointer<GtkWidget>
    /// The `chime` the gates run (beside this executable, or installed in `bin/`).
    let chime: String
    private let builder: PageBuilder
    private let greeting: UnsafeMutablePointer<GtkWidget>
    private let streak: UnsafeMutablePointer<GtkWidget>
    private let streakMessage: UnsafeMutablePointer<GtkWidget>
    private let programs: UnsafeMutablePointer<GtkWidget>
    private let programsEmpty: UnsafeMutablePointer<GtkWidget>
    private let add: UnsafeMutablePointer<GtkWidget>
    private let statsGroup: UnsafeMutablePointer<GtkWidget>
    private let statsList: UnsafeMutablePointer<GtkWidget>
    private let trend: UnsafeMutablePointer<GtkWidget>
    private let trendPeak: UnsafeMutablePointer<GtkWidget>
    private let setup: UnsafeMutablePointer<GtkWidget>
    private let repair: UnsafeMutablePointer<GtkWidget>
    private let chooser: UnsafeMutablePointer<GtkWidget>
    private let search: UnsafeMutablePointer<GtkWidget>
    private let chooserList: UnsafeMutablePointer<GtkWidget>
    /// The rows the page added to each list (GTK 4.8 has no gtk_list_box_remove_all).
    private var rows: [UnsafeMutablePointer<GtkWidget>: [UnsafeMutablePointer<GtkWidget>]] = [:]
    /// The desktop's applications by desktop entry id, as last read.
    private var installed: [String: InstalledApp] = [:]
    /// What the chooser shows now.
    private var offered: [GateProgramChoice] = []
    /// The days the chart draws.
    private var days: [GateDay] = []
    private var peak = 1

    struct InstalledApp {
        var name: String
        /// g_icon_to_string's text, nil without an icon.
        var icon: String?
    }

    /// Nil without a store or without a data directory (the page then shows its empty state).
    init?(_ app: AppContext) {
        guard let store = app.store else { return nil }
        let environment = ProcessInfo.processInfo.environment
        guard let overrides = try? LauncherOverrides(environment: environment) else { return nil }
        let builder = PageBuilder("gateway")
        func object(_ id: String) -> UnsafeMutablePointer<GtkWidget> { builder.widget(id) }
        self.builder = builder
        self.app = app
        chime = GateHubViewModel.chimePath(window: DataDirectories.executablePath)
        // The profile before `chime gate setup`: the config's `[gate]` values, as `chime gate`.
        let book = GateBook(store: store, defaults: app.settings.gateDefaults)
        self.overrides = overrides
        hub = GateHubViewModel(book: book, overrides: overrides, chime: chime, environment: environment)
        stats = GateStatsViewModel(book: book)
        root = object("page")
        greeting = object("gate_greeting")
        streak = object("gate_streak")
        streakMessage = object("gate_streak_message")
        programs = object("gate_programs")
        programsEmpty = object("gate_programs_empty")
        add = object("gate_add")
        statsGroup = object("gate_stats_group")
        statsList = object("gate_stats")
        trend = object("gate_trend")
        trendPeak = object("gate_trend_peak")
        setup = object("gate_setup")
        repair = object("gate_repair")
        chooser = object("chooser_dialog")
        search = object("chooser_search")
        chooserList = object("chooser_list")
        gtk_window_set_transient_for(chime_adw_as_window(chooser), chime_adw_as_window(app.window))
        let context = Unmanaged.passUnretained(self).toOpaque()
        chime_adw_connect(add, "clicked", { _, data in GatewayPage.from(data).openChooser() }, context, nil)
        chime_adw_connect(repair, "clicked", { _, data in GatewayPage.from(data).repairGates() }, context, nil)
        chime_adw_connect(search, "search-changed", { _, data in GatewayPage.from(data).renderChooser() }, context, nil)
        // Enter in the search gates the first program listed; Escape closes the chooser.
        chime_adw_connect(search, "activate", { _, data in GatewayPage.from(data).chooseFirst() }, context, nil)
        chime_adw_connect(search, "stop-search", { _, data in GatewayPage.from(data).closeChooser() }, context, nil)
        chime_adw_gateway_set_draw(
            trend,
            { area, cairo, width, height, data in
                guard let area, let cairo else { return }
                GatewayPage.from(data).draw(area, cairo, Double(width), Double(height))
            },
            context
        )
        refresh()
    }

    static func from(_ data: gpointer?) -> GatewayPage { Unmanaged<GatewayPage>.fromOpaque(data!).takeUnretainedValue() }

    // MARK: Reading

    /// Re-reads everything: the installed applications (names and icons), the hub, the statistics.
    func refresh() {
        if hub.book.defaults != app.settings.gateDefaults {
            let book = GateBook(store: hub.book.store, defaults: app.settings.gateDefaults)
            hub = GateHubViewModel(book: book, overrides: overrides, chime: chime, environment: ProcessInfo.processInfo.environment)
            stats = GateStatsViewModel(book: book)
        }
        readInstalled()
        render(hub.loadHubData())
        render(stats.loadStatistics())
        if gtk_widget_get_visible(chooser) != 0 { renderChooser() }
    }

    func visibilityChanged(onScreen: Bool) {
        // Gates change outside the store too (`chime gate add` in a terminal): read again when shown.
        if onScreen { refresh() }
    }

    private func readInstalled() {
        final class Collected {
            var apps: [String: InstalledApp] = [:]
        }
        let collected = Collected()
        withExtendedLifetime(collected) {
            chime_adw_gateway_installed_apps(
                { id, name, icon, data in
                    guard let id, let data else { return }
                    let collected = Unmanaged<Collected>.fromOpaque(data).takeUnretainedValue()
                    let key = String(cString: id)
                    collected.apps[key] = InstalledApp(
                        name: name.map { String(cString: $0) } ?? key,
                        icon: icon.map { String(cString: $0) }
                    )
                },
                Unmanaged.passUnretained(collected).toOpaque()
            )
        }
        installed = collected.apps
    }

    /// A program's name as launchers show it (its id without `.desktop` when not installed).
    private func name(of id: String) -> String {
        installed[id]?.name ?? (id.hasSuffix(".desktop") ? String(id.dropLast(8)) : id)
    }

    // MARK: The hub

    private func render(_ state: GateHubState) {
        gtk_label_set_text(chime_adw_as_label(greeting), state.greeting)
        gtk_widget_set_visible(streak, state.showStreakBanner ? 1 : 0)
        gtk_label_set_text(chime_adw_as_label(streakMessage), state.streakMessage)
        gtk_label_set_text(chime_adw_as_label(programsEmpty), state.emptyText ?? GateHub.noPrograms)
        clear(programs)
        for program in state.programs {
            let name = name(of: program.id)
            let remove = button("Remove", label: "Remove \(name)", id: program.id)
            gtk_widget_set_tooltip_text(remove, "Un-gate \(name): its launcher is put back as it was")
            chime_adw_connect(
                remove,
                "clicked",
                { button, data in
                    guard let button else { return }
                    let page = GatewayPage.from(data)
                    page.removeProgram(String(cString: gtk_widget_get_name(button.assumingMemoryBound(to: GtkWidget.self))))
                },
                Unmanaged.passUnretained(self).toOpaque(),
                nil
            )
            guard !program.isOK else {
                let row = actionRow(name, program.summary)
                gtk_widget_set_tooltip_text(row, program.id)
                adw_action_row_add_prefix(chime_adw_as_action_row(row), icon(installed[program.id]?.icon, true))
                adw_action_row_add_suffix(chime_adw_as_action_row(row), remove)
                append(row, to: programs)
                continue
            }
            // A gate that needs something done: what, in a few words, with the advice in full below.
            var actions = [remove]
            let row = adw_expander_row_new()!
            let expander = chime_adw_as_expander_row(row)
            adw_preferences_row_set_use_markup(chime_adw_as_preferences_row(row), 0)
            adw_preferences_row_set_title(chime_adw_as_preferences_row(row), name)
            adw_expander_row_set_subtitle(expander, program.summary)
            adw_expander_row_add_prefix(expander, icon(nil, false))
            if program.canRepair {
                let mend = button("Repair", label: "Repair \(name)", id: program.id)
                gtk_widget_set_tooltip_text(mend, "Write the gate of \(name) again")
                gtk_widget_add_css_class(mend, "suggested-action")
                chime_adw_connect(
                    mend,
                    "clicked",
                    { button, data in
                        guard let button else { return }
                        let page = GatewayPage.from(data)
                        page.repairProgram(String(cString: gtk_widget_get_name(button.assumingMemoryBound(to: GtkWidget.self))))
                    },
                    Unmanaged.passUnretained(self).toOpaque(),
                    nil
                )
                actions.append(mend)
            }
            let advice = gtk_label_new("\(program.id): \(program.advice ?? program.status)")!
            gtk_label_set_wrap(chime_adw_as_label(advice), 1)
            gtk_label_set_wrap_mode(chime_adw_as_label(advice), PANGO_WRAP_WORD_CHAR)
            gtk_label_set_xalign(chime_adw_as_label(advice), 0)
            gtk_label_set_selectable(chime_adw_as_label(advice), 1)
            for side in [gtk_widget_set_margin_start, gtk_widget_set_margin_end, gtk_widget_set_margin_top, gtk_widget_set_margin_bottom] {
                side(advice, 12)
            }
            // The advice and the buttons below the row's title: a narrow window keeps the title's width.
            let content = gtk_box_new(GTK_ORIENTATION_VERTICAL, 0)!
            gtk_box_append(chime_adw_as_box(content), advice)
            let buttons = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 12)!
            gtk_widget_set_halign(buttons, GTK_ALIGN_END)
            gtk_widget_set_margin_end(buttons, 12)
            gtk_widget_set_margin_bottom(buttons, 12)
            for action in actions { gtk_box_append(chime_adw_as_box(buttons), action) }
            gtk_box_append(chime_adw_as_box(content), buttons)
            adw_expander_row_add_row(expander, content)
            adw_expander_row_set_expanded(expander, 1)
            append(row, to: programs)
        }
        gtk_widget_set_visible(repair, state.needsRepair ? 1 : 0)
        clear(setup)
        for item in state.setupRows { append(actionRow(item.label, item.value), to: setup) }
        if let error = state.error {
            toast(error.message)
        } else if let notice = state.notice {
            toast(notice)
        }
    }

    private func removeProgram(_ id: String) {
        let state = hub.remove(id)
        if state.error == nil { app.changed() }
        render(state)
    }

    private func repairProgram(_ id: String) {
        let state = hub.repair(id, chime: chime)
        if state.error == nil { app.changed() }
        render(state)
    }

    private func repairGates() {
        let state = hub.repair(chime: chime)
        if state.error == nil { app.changed() }
        render(state)
    }

    // MARK: The statistics

    private func render(_ state: GateStatsState) {
        adw_preferences_group_set_title(chime_adw_as_preferences_group(statsGroup), state.headerTitle)
        clear(statsList)
        // The streak has its banner at the top of the page.
        for item in state.rows where item.label != "Streak" {
            // A long value (the streak's message) under its label; a figure at the row's end.
            let long = item.value.count > 12
            let row = actionRow(item.label, long ? item.value : nil)
            if !long {
                let value = gtk_label_new(item.value)!
                gtk_widget_add_css_class(value, "numeric")
                adw_action_row_add_suffix(chime_adw_as_action_row(row), value)
                chime_adw_set_accessible(row, "\(item.label): \(item.value)", nil)
            }
            append(row, to: statsList)
        }
        // Each program's opens, minutes and budgets kept over the trend's days.
        for program in state.programs {
            let row = actionRow(program.label, program.value)
            chime_adw_set_accessible(row, "\(program.label): \(program.value)", nil)
            append(row, to: statsList)
        }
        days = state.dailyTrends
        peak = state.trendPeak
        gtk_label_set_text(chime_adw_as_label(trendPeak), "Tallest bar: \(peak)")
        chime_adw_set_accessible(trend, nil, state.trendDescription)
        gtk_widget_set_tooltip_text(trend, state.trendDescription)
        gtk_widget_queue_draw(trend)
        if let error = state.error { toast(error.message) }
    }

    /// The trend: a column a day, oldest on the left; a day's conscious exits as a bar above the
    /// middle line (accent colour), its proceeds below it (the text colour, faint), both on one
    /// scale (the busiest day's larger count fills half the height).
    private func draw(_ area: UnsafeMutablePointer<GtkWidget>, _ cairo: OpaquePointer, _ width: Double, _ height: Double) {
        var ink = [Double](repeating: 0, count: 4)
        var accent = [Double](repeating: 0, count: 4)
        chime_adw_gateway_color(area, 0, &ink)
        chime_adw_gateway_color(area, 1, &accent)
        let middle = (height / 2).rounded()
        cairo_set_source_rgba(cairo, ink[0], ink[1], ink[2], 0.25)
        cairo_rectangle(cairo, 0, middle, width, 1)
        cairo_fill(cairo)
        guard !days.isEmpty else { return }
        let column = width / Double(days.count)
        let bar = max(2, (column * 0.6).rounded(.down))
        let half = middle - 2
        for (index, day) in days.enumerated() {
            let x = (Double(index) * column + (column - bar) / 2).rounded()
            if day.exits > 0 {
                let tall = max(2, (half * Double(day.exits) / Double(peak)).rounded())
                cairo_set_source_rgba(cairo, accent[0], accent[1], accent[2], accent[3])
                cairo_rectangle(cairo, x, middle - tall, bar, tall)
                cairo_fill(cairo)
            }
            if day.proceeds > 0 {
                let tall = max(2, (half * Double(day.proceeds) / Double(peak)).rounded())
                cairo_set_source_rgba(cairo, ink[0], ink[1], ink[2], 0.4)
                cairo_rectangle(cairo, x, middle + 1, bar, tall)
                cairo_fill(cairo)
            }
        }
    }

    // MARK: The app chooser

    private func openChooser() {
        // What is installed and gated now (a terminal's `chime gate` may have changed it).
        refresh()
        gtk_editable_set_text(chime_adw_as_editable(search), "")
        renderChooser()
        gtk_window_present(chime_adw_as_window(chooser))
        gtk_widget_grab_focus(search)
    }

    private func closeChooser() {
        gtk_widget_set_visible(chooser, 0)
    }

    /// The installed programs not gated yet that match the search, each with Gate.
    private func renderChooser() {
        let query = String(cString: gtk_editable_get_text(chime_adw_as_editable(search)))
        let gated = Set(hub.state.programs.map(\.id))
        offered = GateProgramChoice.offered(
            installed.map { GateProgramChoice(id: $0.key, name: $0.value.name) },
            gated: gated,
            query: query
        )
        clear(chooserList)
        for choice in offered {
            let row = actionRow(choice.name, choice.id)
            adw_action_row_add_prefix(chime_adw_as_action_row(row), icon(installed[choice.id]?.icon, true))
            let gate = button("Gate", label: "Gate \(choice.name)", id: choice.id)
            gtk_widget_set_tooltip_text(gate, "Gate \(choice.name): its launcher opens a pause first")
            chime_adw_connect(
                gate,
                "clicked",
                { button, data in
                    guard let button else { return }
                    let page = GatewayPage.from(data)
                    page.choose(String(cString: gtk_widget_get_name(button.assumingMemoryBound(to: GtkWidget.self))))
                },
                Unmanaged.passUnretained(self).toOpaque(),
                nil
            )
            adw_action_row_add_suffix(chime_adw_as_action_row(row), gate)
            append(row, to: chooserList)
        }
    }

    private func chooseFirst() {
        guard let first = offered.first else { return }
        choose(first.id)
    }

    /// Gates `id` as `chime gate add ID` does, closes the chooser, says what happened.
    private func choose(_ id: String) {
        closeChooser()
        let state = hub.add(id, chime: chime)
        if state.error == nil { app.changed() }
        render(state)
    }

    // MARK: Widgets

    /// An AdwActionRow with `title` and `subtitle` as plain text (not markup).
    private func actionRow(_ title: String, _ subtitle: String?) -> UnsafeMutablePointer<GtkWidget> {
        let row = adw_action_row_new()!
        adw_preferences_row_set_use_markup(chime_adw_as_preferences_row(row), 0)
        adw_preferences_row_set_title(chime_adw_as_preferences_row(row), title)
        if let subtitle { adw_action_row_set_subtitle(chime_adw_as_action_row(row), subtitle) }
        return row
    }

    /// A button showing `text`, named `label` for assistive technology, carrying `id` as its widget name.
    private func button(_ text: String, label: String, id: String) -> UnsafeMutablePointer<GtkWidget> {
        let button = gtk_button_new_with_label(text)!
        gtk_widget_set_valign(button, GTK_ALIGN_CENTER)
        gtk_widget_set_name(button, id)
        chime_adw_set_accessible(button, label, nil)
        return button
    }

    /// A program's icon (a generic one without), or a warning sign for a gate that needs something done.
    private func icon(_ icon: String?, _ isOK: Bool) -> UnsafeMutablePointer<GtkWidget> {
        let image =
            isOK ? chime_adw_gateway_icon(icon, "application-x-executable")! : gtk_image_new_from_icon_name("dialog-warning-symbolic")!
        gtk_image_set_pixel_size(chime_adw_as_image(image), isOK ? 32 : 24)
        if !isOK {
            gtk_widget_add_css_class(image, "warning")
            gtk_widget_set_margin_start(image, 4)
            gtk_widget_set_margin_end(image, 4)
        }
        return image
    }

    private func append(_ row: UnsafeMutablePointer<GtkWidget>, to list: UnsafeMutablePointer<GtkWidget>) {
        gtk_list_box_append(chime_adw_as_list_box(list), row)
        rows[list, default: []].append(row)
    }

    private func clear(_ list: UnsafeMutablePointer<GtkWidget>) {
        for row in rows[list] ?? [] { gtk_list_box_remove(chime_adw_as_list_box(list), row) }
        rows[list] = []
    }

    private func toast(_ message: String) { chime_adw_toast(root, message, 8) }
}

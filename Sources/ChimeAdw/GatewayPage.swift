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
    private let minutesChart: UnsafeMutablePointer<GtkWidget>
    private let minutesPeakLabel: UnsafeMutablePointer<GtkWidget>
    /// The rule form (Edit on a gated program's row) and its fields.
    private let ruleDialog: UnsafeMutablePointer<GtkWidget>
    private let ruleTitle: UnsafeMutablePointer<GtkWidget>
    private let ruleError: UnsafeMutablePointer<GtkWidget>
    private let ruleAllDay: UnsafeMutablePointer<GtkWidget>
    private let ruleDays: [UnsafeMutablePointer<GtkWidget>]
    private let ruleDaysError: UnsafeMutablePointer<GtkWidget>
    /// Each field's row and entry (the hours' error shows under To), with its help.
    private let ruleFields:
        [(field: GateRuleField?, row: UnsafeMutablePointer<GtkWidget>, entry: UnsafeMutablePointer<GtkWidget>, help: String)]
    /// The program the form edits: its id and name.
    private var editing: (id: String, name: String)?
    /// The rows the page added to each list (GTK 4.8 has no gtk_list_box_remove_all).
    private var rows: [UnsafeMutablePointer<GtkWidget>: [UnsafeMutablePointer<GtkWidget>]] = [:]
    /// The desktop's applications by desktop entry id, as last read.
    private var installed: [String: InstalledApp] = [:]
    /// What the chooser shows now.
    private var offered: [GateProgramChoice] = []
    /// The days the chart draws.
    private var days: [GateDay] = []
    private var peak = 1
    /// The days the minutes chart draws.
    private var minutesDays: [GateMinutesDay] = []
    private var minutesPeak = 1

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
        minutesChart = object("gate_minutes")
        minutesPeakLabel = object("gate_minutes_peak")
        ruleDialog = object("rule_dialog")
        ruleTitle = object("rule_title")
        ruleError = object("rule_error")
        ruleAllDay = object("rule_all_day")
        ruleDays = (1...7).map { object("rule_day_\($0)") }
        ruleDaysError = object("rule_days_error")
        ruleFields = [
            (nil, object("rule_from_row"), object("rule_from"), "Local time, such as 09:00 or 9am"),
            (.hours, object("rule_to_row"), object("rule_to"), "Before From: the hours cross midnight"),
            (.opens, object("rule_opens_row"), object("rule_opens"), "A number, such as 3"),
            (.minutes, object("rule_minutes_row"), object("rule_minutes"), "Minutes, such as 60, or 1h30m"),
            (.remind, object("rule_remind_row"), object("rule_remind"), "Minutes, such as 20; empty: no reminder"),
        ]
        gtk_window_set_transient_for(chime_adw_as_window(ruleDialog), chime_adw_as_window(app.window))
        // Each field named by its row's title alone (GTK 4.8 says it twice: "From From").
        for (field, title) in zip(ruleFields, ["From", "To", "Opens per day", "Minutes per day", "Remind after"]) {
            chime_adw_name_exactly(field.entry, title)
        }
        chime_adw_name_exactly(ruleAllDay, "All day")
        // A refused value's message in its row's subtitle, in the theme's error colour (as Preferences).
        chime_adw_add_css(".gate-error-row .subtitle { color: @error_color; opacity: 1; }")
        gtk_window_set_transient_for(chime_adw_as_window(chooser), chime_adw_as_window(app.window))
        let context = Unmanaged.passUnretained(self).toOpaque()
        chime_adw_connect(add, "clicked", { _, data in GatewayPage.from(data).openChooser() }, context, nil)
        chime_adw_connect(repair, "clicked", { _, data in GatewayPage.from(data).repairGates() }, context, nil)
        chime_adw_connect(search, "search-changed", { _, data in GatewayPage.from(data).renderChooser() }, context, nil)
        // Enter in the search gates the first program listed; Escape closes the chooser.
        chime_adw_connect(search, "activate", { _, data in GatewayPage.from(data).chooseFirst() }, context, nil)
        chime_adw_connect(search, "stop-search", { _, data in GatewayPage.from(data).closeChooser() }, context, nil)
        chime_adw_connect(object("rule_save"), "clicked", { _, data in GatewayPage.from(data).saveRule() }, context, nil)
        chime_adw_connect(object("rule_cancel"), "clicked", { _, data in GatewayPage.from(data).closeRuleForm() }, context, nil)
        chime_adw_connect_notify(
            ruleAllDay,
            "notify::active",
            { _, _, data in GatewayPage.from(data).allDayToggled() },
            context
        )
        chime_adw_connect(object("rule_every_day"), "clicked", { _, data in GatewayPage.from(data).setDays(.everyDay) }, context, nil)
        chime_adw_connect(object("rule_weekdays"), "clicked", { _, data in GatewayPage.from(data).setDays(.weekdays) }, context, nil)
        chime_adw_connect(object("rule_weekends"), "clicked", { _, data in GatewayPage.from(data).setDays(.weekend) }, context, nil)
        // Enter in a field saves (the entries activate the default: Save).
        gtk_window_set_default_widget(chime_adw_as_window(ruleDialog), object("rule_save"))
        chime_adw_gateway_set_draw(
            minutesChart,
            { area, cairo, width, height, data in
                guard let area, let cairo else { return }
                GatewayPage.from(data).drawMinutes(area, cairo, Double(width), Double(height))
            },
            context
        )
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
            // An icon: the row's rule keeps its width in a narrow window.
            let edit = button("Edit", icon: "document-edit-symbolic", label: "Edit \(name)", id: program.id)
            gtk_widget_set_tooltip_text(edit, "When \(name) is gated, its budget and its reminder in use")
            chime_adw_connect(
                edit,
                "clicked",
                { button, data in
                    guard let button else { return }
                    let page = GatewayPage.from(data)
                    page.openRuleForm(String(cString: gtk_widget_get_name(button.assumingMemoryBound(to: GtkWidget.self))))
                },
                Unmanaged.passUnretained(self).toOpaque(),
                nil
            )
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
                // Edit and Remove side by side; the subtitle (the rule) wraps beside them.
                let buttons = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6)!
                gtk_widget_set_valign(buttons, GTK_ALIGN_CENTER)
                gtk_box_append(chime_adw_as_box(buttons), edit)
                gtk_box_append(chime_adw_as_box(buttons), remove)
                adw_action_row_add_suffix(chime_adw_as_action_row(row), buttons)
                append(row, to: programs)
                continue
            }
            // A gate that needs something done: what, in a few words, with the advice in full below.
            var actions = [edit, remove]
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
        minutesDays = state.minutesTrend
        minutesPeak = state.minutesPeak
        gtk_label_set_text(chime_adw_as_label(minutesPeakLabel), "Tallest bar: \(minutesPeak) min")
        chime_adw_set_accessible(minutesChart, nil, state.minutesDescription)
        gtk_widget_set_tooltip_text(minutesChart, state.minutesDescription)
        gtk_widget_queue_draw(minutesChart)
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

    /// The minutes chart: a column a day, oldest on the left, a day's minutes in gated programs
    /// as a bar (accent colour) from the base line, the busiest day's filling the height.
    private func drawMinutes(_ area: UnsafeMutablePointer<GtkWidget>, _ cairo: OpaquePointer, _ width: Double, _ height: Double) {
        var ink = [Double](repeating: 0, count: 4)
        var accent = [Double](repeating: 0, count: 4)
        chime_adw_gateway_color(area, 0, &ink)
        chime_adw_gateway_color(area, 1, &accent)
        let base = height - 1
        cairo_set_source_rgba(cairo, ink[0], ink[1], ink[2], 0.25)
        cairo_rectangle(cairo, 0, base, width, 1)
        cairo_fill(cairo)
        guard !minutesDays.isEmpty else { return }
        let column = width / Double(minutesDays.count)
        let bar = max(2, (column * 0.6).rounded(.down))
        for (index, day) in minutesDays.enumerated() where day.minutes > 0 {
            let x = (Double(index) * column + (column - bar) / 2).rounded()
            let tall = max(2, ((base - 2) * Double(day.minutes) / Double(minutesPeak)).rounded())
            cairo_set_source_rgba(cairo, accent[0], accent[1], accent[2], accent[3])
            cairo_rectangle(cairo, x, base - tall, bar, tall)
            cairo_fill(cairo)
        }
    }

    // MARK: The rule form

    /// Opens the form of gated program `id`, showing its rule as it stands.
    private func openRuleForm(_ id: String) {
        let form = hub.ruleForm(id)
        let name = name(of: form.programID)
        editing = (form.programID, name)
        chime_adw_gateway_window_title(ruleTitle, "Edit Gate", name)
        gtk_switch_set_active(chime_adw_as_switch(ruleAllDay), form.allDay ? 1 : 0)
        let texts = [form.from, form.to, form.opensPerDay, form.minutesPerDay, form.remindAfter]
        for (field, text) in zip(ruleFields, texts) { gtk_editable_set_text(chime_adw_as_editable(field.entry), text) }
        setDays(form.days)
        allDayToggled()
        show([:], formError: nil)
        gtk_window_present(chime_adw_as_window(ruleDialog))
    }

    private func closeRuleForm() {
        editing = nil
        gtk_widget_set_visible(ruleDialog, 0)
    }

    /// The hours' entries only mean something when the gate is not all day.
    private func allDayToggled() {
        let allDay = gtk_switch_get_active(chime_adw_as_switch(ruleAllDay)) != 0
        for field in ruleFields.prefix(2) { gtk_widget_set_sensitive(field.row, allDay ? 0 : 1) }
    }

    private func setDays(_ days: WeekdaySet) {
        for (index, toggle) in ruleDays.enumerated() {
            gtk_toggle_button_set_active(chime_adw_as_toggle_button(toggle), days.contains(isoWeekday: index + 1) ? 1 : 0)
        }
    }

    /// Saves what the form says through `chime gate edit`'s use case; a bad value: its problem
    /// under its field, and nothing written.
    private func saveRule() {
        guard let editing else { return }
        func text(_ index: Int) -> String { String(cString: gtk_editable_get_text(chime_adw_as_editable(ruleFields[index].entry))) }
        var days: WeekdaySet = []
        for (index, toggle) in ruleDays.enumerated() where gtk_toggle_button_get_active(chime_adw_as_toggle_button(toggle)) != 0 {
            days.insert(WeekdaySet(isoWeekday: index + 1)!)
        }
        let form = GateRuleForm(
            programID: editing.id,
            allDay: gtk_switch_get_active(chime_adw_as_switch(ruleAllDay)) != 0,
            from: text(0),
            to: text(1),
            days: days,
            opensPerDay: text(2),
            minutesPerDay: text(3),
            remindAfter: text(4)
        )
        switch hub.save(form, name: editing.name) {
        case .failure(let errors):
            show(errors.fields, formError: nil)
        case .success(let state):
            if let error = state.error {
                // Refused by the use case (un-gated meanwhile?): said in the form, which stays open.
                show([:], formError: error.message)
                return
            }
            closeRuleForm()
            app.changed()
            render(state)
            render(stats.loadStatistics())
        }
    }

    /// Each field's problem in its row's subtitle (its help without one), and the form's own.
    private func show(_ errors: [GateRuleField: String], formError: String?) {
        for field in ruleFields {
            let error = field.field.flatMap { errors[$0] }
            adw_action_row_set_subtitle(chime_adw_as_action_row(field.row), error ?? field.help)
            chime_adw_set_accessible(field.entry, nil, error ?? field.help)
            if error == nil {
                gtk_widget_remove_css_class(field.entry, "error")
                gtk_widget_remove_css_class(field.row, "gate-error-row")
            } else {
                gtk_widget_add_css_class(field.entry, "error")
                gtk_widget_add_css_class(field.row, "gate-error-row")
            }
        }
        // The hours' problem concerns From too.
        chime_adw_set_accessible(ruleFields[0].entry, nil, errors[.hours] ?? ruleFields[0].help)
        if errors[.hours] == nil {
            gtk_widget_remove_css_class(ruleFields[0].entry, "error")
        } else {
            gtk_widget_add_css_class(ruleFields[0].entry, "error")
        }
        gtk_label_set_text(chime_adw_as_label(ruleDaysError), errors[.days] ?? "")
        gtk_widget_set_visible(ruleDaysError, errors[.days] == nil ? 0 : 1)
        chime_adw_set_accessible(ruleDays[0], nil, errors[.days] ?? "")
        gtk_label_set_text(chime_adw_as_label(ruleError), formError ?? "")
        gtk_widget_set_visible(ruleError, formError == nil ? 0 : 1)
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

    /// Gates `id` as `chime gate add ID` does, closes the chooser, says what happened, and
    /// offers its rule's form (Cancel leaves it gated at all times, without a budget).
    private func choose(_ id: String) {
        closeChooser()
        let state = hub.add(id, chime: chime)
        render(state)
        guard state.error == nil else { return }
        app.changed()
        openRuleForm(id)
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

    /// A button showing `text` (or the icon `icon`), named `label` for assistive technology,
    /// carrying `id` as its widget name.
    private func button(_ text: String, icon: String? = nil, label: String, id: String) -> UnsafeMutablePointer<GtkWidget> {
        let button = icon.map { gtk_button_new_from_icon_name($0)! } ?? gtk_button_new_with_label(text)!
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

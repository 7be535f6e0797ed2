import CAdw
import ChimeCore
import ChimeDoses
import ChimeRunner
import ChimeViewModels
import Foundation

/// The Doses page (`doses.ui`), bound to the doses family's view models: today's doses with
/// Take, Skip and Snooze or their answer (``DosesTodayViewModel``), the active medications with a
/// search, Edit and Refill (``MedicationListViewModel``), Add Medication and Edit in a form with
/// the schedule editor, each field's error under it in the family's words
/// (``MedicationDetailViewModel``), and the last 7 days' history with the adherence, a bar per
/// day and a level bar per medication (``DoseHistoryViewModel``). Reads again when shown and when
/// told (``refresh()``); nothing ticks.
final class DosesPage: AppPageController {
    let app: AppContext
    let root: UnsafeMutablePointer<GtkWidget>
    private let builder: PageBuilder
    /// Made again when the config's dose policy changes (``refresh()``).
    private var book: DoseBook
    private var today: DosesTodayViewModel
    private var medications: MedicationListViewModel
    private var history: DoseHistoryViewModel

    private let status: UnsafeMutablePointer<GtkWidget>
    private let todayList: UnsafeMutablePointer<GtkWidget>
    private let todayEmpty: UnsafeMutablePointer<GtkWidget>
    private let search: UnsafeMutablePointer<GtkWidget>
    private let medicationList: UnsafeMutablePointer<GtkWidget>
    private let medicationsEmpty: UnsafeMutablePointer<GtkWidget>
    private let adherence: UnsafeMutablePointer<GtkWidget>
    private let chart: UnsafeMutablePointer<GtkWidget>
    private let byMedication: UnsafeMutablePointer<GtkWidget>
    private let historySummary: UnsafeMutablePointer<GtkWidget>
    private let historyList: UnsafeMutablePointer<GtkWidget>
    private let dialog: UnsafeMutablePointer<GtkWidget>
    private let formError: UnsafeMutablePointer<GtkWidget>
    private let refillDialog: UnsafeMutablePointer<GtkWidget>
    private let refillCount: UnsafeMutablePointer<GtkWidget>
    /// The form's entries and their error labels, by field.
    private let entries: [(field: MedicationField, entry: UnsafeMutablePointer<GtkWidget>, error: UnsafeMutablePointer<GtkWidget>)]
    private let daysError: UnsafeMutablePointer<GtkWidget>
    /// Monday … Sunday.
    private let dayToggles: [UnsafeMutablePointer<GtkWidget>]
    /// The schedule's kind (days of the week, every N days, on-off cycle, as needed), one at a
    /// time, and the rows each shows; an every-N-days or cycle medication keeps and shows its rule.
    private let kindToggles: [(kind: ScheduleKind, toggle: UnsafeMutablePointer<GtkWidget>)]
    private let kindRows: [(kinds: Set<ScheduleKind>, widget: UnsafeMutablePointer<GtkWidget>)]
    /// Every N days, days on and off, and the day they count from.
    private let everyEntry: UnsafeMutablePointer<GtkWidget>
    private let cycleOnEntry: UnsafeMutablePointer<GtkWidget>
    private let cycleOffEntry: UnsafeMutablePointer<GtkWidget>
    private let ruleStartEntry: UnsafeMutablePointer<GtkWidget>
    /// What is wrong with the every-N-days or cycle fields (shown under them), or nil.
    private var ruleProblem: String?

    enum ScheduleKind: Hashable { case days, every, cycle, asNeeded, afterLast }

    /// The taper's hint, in place of its summary while nothing is read.
    private let taperSummary: UnsafeMutablePointer<GtkWidget>
    private let taperHint: String
    /// Who is told now, and the check to tell no one any more.
    private let tellCurrent: UnsafeMutablePointer<GtkWidget>
    private let tellOff: UnsafeMutablePointer<GtkWidget>
    /// Deactivate and Delete (an edit only), and Delete's confirmation.
    private let manage: UnsafeMutablePointer<GtkWidget>
    private let deactivateButton: UnsafeMutablePointer<GtkWidget>
    private let deleteDialog: UnsafeMutablePointer<GtkWidget>

    /// The form's model while the dialog is open (nil: closed).
    private var detail: MedicationDetailViewModel?
    /// Fields a person changed since the form opened: their errors show as they type; the
    /// others' once Save was pressed.
    private var touched: Set<MedicationField> = []
    private var submitted = false
    /// The form is being filled from its model: its change signals are not a person typing.
    private var loadingForm = false
    /// The medication the refill dialog is for.
    private var refillMedication: (id: Int64, name: String)?
    /// What each row button does, by the button, and the buttons of each list (rebuilt with its rows).
    private var rowActions: [UnsafeMutableRawPointer: () -> Void] = [:]
    private var listButtons: [UnsafeMutablePointer<GtkWidget>: [UnsafeMutableRawPointer]] = [:]
    /// Today's rows by dose, to give the focus back to the row just answered.
    private var doseRows: [Int64: UnsafeMutablePointer<GtkWidget>] = [:]
    private var focusDose: Int64?
    /// The chart's days (the history's adherence by day).
    private var chartDays: [DoseHistoryState.DayAdherence] = []

    static let rowsResource = "/io/github/chime/Chime/doses-rows.ui"

    /// Nil without a store (the page then shows its empty state).
    init?(_ app: AppContext) {
        guard let store = app.store else { return nil }
        let builder = PageBuilder("doses")
        func object(_ id: String) -> UnsafeMutablePointer<GtkWidget> { builder.widget(id) }
        self.builder = builder
        self.app = app
        // Its alerts repeat as the config says (`doses.repeat_every`, `repeat_count`), as `chime dose` and `chime run`.
        book = DoseBook(store: store, clock: SystemWallClock(), systemZone: { TimeZone.current }, repeats: app.settings.doseRepeats)
        today = DosesTodayViewModel(book: book)
        medications = MedicationListViewModel(book: book)
        history = DoseHistoryViewModel(book: book, range: .last7Days)
        root = object("page")
        status = object("doses_status")
        todayList = object("doses_today")
        todayEmpty = object("doses_today_empty")
        search = object("doses_search")
        medicationList = object("doses_medications")
        medicationsEmpty = object("doses_medications_empty")
        adherence = object("doses_adherence")
        chart = object("doses_chart")
        byMedication = object("doses_by_medication")
        historySummary = object("doses_history_summary")
        historyList = object("doses_history")
        dialog = object("medication_dialog")
        formError = object("med_error")
        refillDialog = object("refill_dialog")
        refillCount = object("refill_count")
        entries = [MedicationField.name, .amount, .unit, .times, .afterLast, .maxPerDay, .stock, .taper, .tell, .tellAfter].map { field in
            (field, object("med_\(field.rawValue)"), object("med_\(field.rawValue)_error"))
        }
        daysError = object("med_days_error")
        dayToggles = (1...7).map { object("med_day_\($0)") }
        kindToggles = [
            (.days, object("med_kind_days")), (.every, object("med_kind_every")), (.cycle, object("med_kind_cycle")),
            (.asNeeded, object("med_kind_as_needed")), (.afterLast, object("med_kind_after_last")),
        ]
        let timed: Set<ScheduleKind> = [.days, .every, .cycle]
        let rows: [(String, Set<ScheduleKind>)] = [
            ("med_times_heading", timed), ("med_times", timed), ("med_times_hint", timed), ("med_days_heading", [.days]),
            ("med_days", [.days]), ("med_days_quick", [.days]), ("med_every_box", [.every]), ("med_cycle_box", [.cycle]),
            ("med_rule_start_box", [.every, .cycle]), ("med_after_last_box", [.afterLast]), ("med_max_box", [.asNeeded, .afterLast]),
        ]
        kindRows = rows.map { (id, kinds) in (kinds: kinds, widget: object(id)) }
        everyEntry = object("med_every")
        cycleOnEntry = object("med_cycle_on")
        cycleOffEntry = object("med_cycle_off")
        ruleStartEntry = object("med_rule_start")
        taperSummary = object("med_taper_summary")
        taperHint = String(cString: gtk_label_get_text(chime_adw_as_label(taperSummary)))
        tellCurrent = object("med_tell_current")
        tellOff = object("med_tell_off")
        manage = object("med_manage")
        deactivateButton = object("med_deactivate")
        deleteDialog = object("delete_dialog")
        for window in [dialog, refillDialog] {
            gtk_window_set_transient_for(chime_adw_as_window(window), chime_adw_as_window(app.window))
        }
        // Delete's confirmation stands over the form.
        gtk_window_set_transient_for(chime_adw_as_window(deleteDialog), chime_adw_as_window(dialog))
        connect()
        render()
    }

    static func from(_ data: gpointer?) -> DosesPage { Unmanaged<DosesPage>.fromOpaque(data!).takeUnretainedValue() }

    private var context: gpointer { Unmanaged.passUnretained(self).toOpaque() }

    private func connect() {
        typealias Handler = @convention(c) (gpointer?, gpointer?) -> Void
        let clicks: [(String, Handler)] = [
            ("doses_add", { _, data in DosesPage.from(data).openForm(nil) }),
            ("med_cancel", { _, data in DosesPage.from(data).closeForm() }),
            ("med_save", { _, data in DosesPage.from(data).save() }),
            ("med_every_day", { _, data in DosesPage.from(data).setDays(.everyDay) }),
            ("med_weekdays", { _, data in DosesPage.from(data).setDays(.weekdays) }),
            ("med_weekends", { _, data in DosesPage.from(data).setDays(.weekend) }),
            ("med_deactivate", { _, data in DosesPage.from(data).toggleActive() }),
            ("med_delete", { _, data in DosesPage.from(data).askDelete() }),
        ]
        for (id, handler) in clicks { chime_adw_connect(builder.widget(id), "clicked", handler, context, nil) }
        chime_adw_connect(search, "search-changed", { _, data in DosesPage.from(data).searched() }, context, nil)
        for (_, entry, _) in entries {
            chime_adw_connect(entry, "changed", { entry, data in DosesPage.from(data).formChanged(entry) }, context, nil)
        }
        for toggle in dayToggles {
            chime_adw_connect(toggle, "toggled", { toggle, data in DosesPage.from(data).formChanged(toggle) }, context, nil)
        }
        for (_, toggle) in kindToggles {
            chime_adw_connect(toggle, "toggled", { toggle, data in DosesPage.from(data).kindChanged(toggle) }, context, nil)
        }
        for entry in [everyEntry, cycleOnEntry, cycleOffEntry, ruleStartEntry] {
            chime_adw_connect(entry, "changed", { entry, data in DosesPage.from(data).formChanged(entry) }, context, nil)
        }
        chime_adw_connect(tellOff, "toggled", { toggle, data in DosesPage.from(data).formChanged(toggle) }, context, nil)
        chime_adw_connect_response(
            deleteDialog,
            { _, response, data in
                if let response, String(cString: response) == "delete" { DosesPage.from(data).delete() }
            },
            context,
            nil
        )
        chime_adw_connect_response(
            refillDialog,
            { _, response, data in
                if let response, String(cString: response) == "refill" { DosesPage.from(data).refill() }
            },
            context,
            nil
        )
        chime_doses_set_draw(chart, { cr, width, height, data in DosesPage.from(data).draw(cr, width, height) }, context)
    }

    // MARK: - Reading

    func visibilityChanged(onScreen: Bool) {
        // Statuses move with the clock (overdue, missed): read again each time the page is shown.
        if onScreen { refresh() }
    }

    func refresh() {
        if book.repeats != app.settings.doseRepeats {
            book = DoseBook(store: book.store, clock: book.clock, systemZone: book.systemZone, repeats: app.settings.doseRepeats)
            today = DosesTodayViewModel(book: book)
            medications = MedicationListViewModel(book: book)
            history = DoseHistoryViewModel(book: book, range: history.state.range)
            _ = medications.search(String(cString: gtk_editable_get_text(chime_adw_as_editable(search))))
        }
        today.refresh()
        medications.refresh()
        history.refresh()
        render()
    }

    private func render() {
        renderToday(today.state)
        renderMedications(medications.state)
        renderHistory(history.state)
    }

    /// The line at the top of the page: the last action's outcome, or its error.
    private func show(message: String?, error: ChimeError?) {
        let text = error?.message ?? message
        gtk_label_set_text(chime_adw_as_label(status), text ?? "")
        gtk_widget_set_visible(status, text == nil ? 0 : 1)
        if error != nil { gtk_widget_add_css_class(status, "error") } else { gtk_widget_remove_css_class(status, "error") }
    }

    /// A row built from `doses-rows.ui`'s object `id`; `body` gets the row's builder.
    private func makeRow(_ id: String, _ body: (OpaquePointer) -> Void) -> UnsafeMutablePointer<GtkWidget> {
        let rows = chime_doses_builder(Self.rowsResource, id)!
        let row = chime_adw_widget(gtk_builder_get_object(rows, id))!
        body(rows)
        g_object_ref_sink(row)
        g_object_unref(UnsafeMutableRawPointer(rows))
        return row
    }

    private func rowWidget(_ rows: OpaquePointer, _ id: String) -> UnsafeMutablePointer<GtkWidget> {
        chime_adw_widget(gtk_builder_get_object(rows, id))!
    }

    private func append(_ row: UnsafeMutablePointer<GtkWidget>, to list: UnsafeMutablePointer<GtkWidget>) {
        gtk_list_box_append(chime_adw_as_list_box(list), row)
        g_object_unref(row)
    }

    private func setRow(_ row: UnsafeMutablePointer<GtkWidget>, title: String, subtitle: String) {
        adw_preferences_row_set_title(chime_adw_as_preferences_row(row), title)
        adw_action_row_set_subtitle(chime_adw_as_action_row(row), subtitle)
    }

    /// A row's button: its accessible name and what it does.
    private func button(
        _ button: UnsafeMutablePointer<GtkWidget>,
        in list: UnsafeMutablePointer<GtkWidget>,
        name: String,
        _ action: @escaping () -> Void
    ) {
        chime_adw_set_accessible(button, name, nil)
        gtk_widget_set_tooltip_text(button, name)
        rowActions[UnsafeMutableRawPointer(button)] = action
        listButtons[list, default: []].append(UnsafeMutableRawPointer(button))
        chime_adw_connect(button, "clicked", { button, data in DosesPage.from(data).rowClicked(button) }, context, nil)
    }

    /// Empties `list`, forgetting its buttons.
    private func clear(_ list: UnsafeMutablePointer<GtkWidget>) {
        for button in listButtons.removeValue(forKey: list) ?? [] { rowActions[button] = nil }
        chime_adw_clear_list_box(list)
    }

    private func rowClicked(_ button: gpointer?) {
        guard let button, let action = rowActions[button] else { return }
        action()
    }

    private func renderToday(_ state: DosesTodayState) {
        clear(todayList)
        doseRows = [:]
        for dose in state.doses {
            let row = makeRow("dose_row") { rows in
                let answered = dose.isAnswered
                gtk_widget_set_visible(rowWidget(rows, "dose_actions"), answered ? 0 : 1)
                let answer = rowWidget(rows, "dose_answer")
                gtk_widget_set_visible(answer, answered ? 1 : 0)
                gtk_label_set_text(chime_adw_as_label(answer), dose.statusText)
                chime_adw_set_accessible(answer, nil, "Answer, \(dose.spokenName)")
                let actions: [(String, String, Bool, (Int64) -> Void)] = [
                    ("dose_take", "Take", dose.canTake, { [unowned self] in self.answered(self.today.take($0), dose: $0) }),
                    ("dose_skip", "Skip", dose.canSkip, { [unowned self] in self.answered(self.today.skip($0), dose: $0) }),
                    ("dose_snooze", "Snooze", dose.canSnooze, { [unowned self] in self.answered(self.today.snooze($0), dose: $0) }),
                ]
                for (id, verb, enabled, act) in actions {
                    let widget = rowWidget(rows, id)
                    gtk_widget_set_sensitive(widget, enabled ? 1 : 0)
                    button(widget, in: todayList, name: "\(verb) \(dose.spokenName)") { act(dose.id) }
                }
            }
            let subtitle = dose.isAnswered ? dose.time : "\(dose.time) · \(dose.statusText)"
            setRow(row, title: dose.label, subtitle: subtitle)
            doseRows[dose.id] = row
            append(row, to: todayList)
        }
        gtk_widget_set_visible(todayList, state.doses.isEmpty ? 0 : 1)
        gtk_widget_set_visible(todayEmpty, state.doses.isEmpty ? 1 : 0)
        gtk_label_set_text(chime_adw_as_label(todayEmpty), state.emptyText ?? "")
        if let id = focusDose, let row = doseRows[id] {
            focusDose = nil
            gtk_widget_grab_focus(row)
        }
    }

    /// A dose was answered (or not): the store changed, every page reads again; the row keeps
    /// the keyboard focus.
    private func answered(_ state: DosesTodayState, dose: Int64) {
        focusDose = dose
        if state.error == nil {
            // (Every page reads again, this one too: the message was taken before.)
            app.changed()
            // The dose's alert on the desktop says what was recorded, as its button would, so
            // that nobody answers it twice (through the store's runner, as `chime dose take`).
            if let alert = state.answeredAlert, let store = app.store {
                RunnerControl.confirmThroughRunner(id: alert.occurrence, confirmation: alert.confirmation, store: store)
            }
            show(message: state.message, error: nil)
        } else {
            render()
            show(message: nil, error: state.error)
        }
    }

    private func renderMedications(_ state: MedicationListState) {
        clear(medicationList)
        for medication in state.medications {
            let row = makeRow("medication_row") { rows in
                let edit = rowWidget(rows, "medication_edit")
                // Activating the row (Enter, a click on it) edits the medication.
                adw_action_row_set_activatable_widget(chime_adw_as_action_row(rowWidget(rows, "medication_row")), edit)
                button(edit, in: medicationList, name: "Edit \(medication.label)") { [unowned self] in self.openForm(medication.id) }
                // As needed or after-last: Take logs a dose now (refused past a daily maximum, said at the top).
                let take = rowWidget(rows, "medication_take")
                gtk_widget_set_visible(take, medication.canTakeNow ? 1 : 0)
                button(take, in: medicationList, name: "Take \(medication.label) now") { [unowned self] in
                    self.answered(self.today.takeNow(medication.name), dose: 0)
                }
                // Refill adds a box to a counted stock (a stock is counted once the form gives one).
                let refill = rowWidget(rows, "medication_refill")
                gtk_widget_set_visible(refill, medication.detail.medication.stock == nil ? 0 : 1)
                button(refill, in: medicationList, name: "Refill \(medication.label)") { [unowned self] in
                    self.askRefill(medication.id, name: medication.name)
                }
            }
            // The heading line is the title; the schedules, stock and next dose are the subtitle.
            let subtitle = medication.lines.dropFirst().map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: "\n")
            setRow(row, title: medication.label + (medication.isActive ? "" : " (inactive)"), subtitle: subtitle)
            append(row, to: medicationList)
        }
        gtk_widget_set_visible(medicationList, state.medications.isEmpty ? 0 : 1)
        gtk_widget_set_visible(medicationsEmpty, state.medications.isEmpty ? 1 : 0)
        gtk_label_set_text(chime_adw_as_label(medicationsEmpty), state.emptyText ?? "")
        if let error = state.error { show(message: nil, error: error) }
    }

    private func renderHistory(_ state: DoseHistoryState) {
        gtk_label_set_text(chime_adw_as_label(adherence), state.adherenceText)
        chartDays = state.adherenceByDay
        chime_adw_set_accessible(chart, nil, state.chartDescription)
        gtk_widget_queue_draw(chart)
        chime_adw_clear_list_box(byMedication)
        for item in state.adherenceByMedication {
            let row = makeRow("adherence_row") { rows in
                let level = rowWidget(rows, "adherence_level")
                gtk_level_bar_set_value(chime_adw_as_level_bar(level), item.adherence.rate ?? 0)
                chime_adw_set_accessible(level, "Adherence of \(item.name)", item.text)
            }
            setRow(row, title: item.name, subtitle: item.figure)
            append(row, to: byMedication)
        }
        gtk_widget_set_visible(byMedication, state.adherenceByMedication.isEmpty ? 0 : 1)
        gtk_label_set_text(chime_adw_as_label(historySummary), state.emptyText ?? "Doses, \(state.range.title): \(state.summary)")
        chime_adw_clear_list_box(historyList)
        // Newest first; the last 50.
        var shown = 0
        for day in state.days.reversed() {
            for dose in day.doses.reversed() where shown < 50 {
                shown += 1
                let row = makeRow("history_row") { rows in
                    let label = rowWidget(rows, "history_status")
                    gtk_label_set_text(chime_adw_as_label(label), dose.statusText)
                    let style =
                        switch dose.status {
                        case .taken: "success"
                        case .missed: "error"
                        case .pending: dose.isOverdue ? "warning" : "dim-label"
                        case .skipped: "dim-label"
                        }
                    gtk_widget_add_css_class(label, style)
                }
                setRow(row, title: dose.label, subtitle: "\(day.heading) \(dose.time)")
                append(row, to: historyList)
            }
        }
        gtk_widget_set_visible(historyList, shown == 0 ? 0 : 1)
        if let error = state.error { show(message: nil, error: error) }
    }

    // MARK: - Search

    private func searched() {
        let text = String(cString: gtk_editable_get_text(chime_adw_as_editable(search)))
        renderMedications(medications.search(text))
    }

    // MARK: - The medication form

    private func openForm(_ id: Int64?) {
        // A new medication's grace and missed-after: the config's (`doses.grace`, `missed_after`), as `chime med add`.
        let model =
            id.map { MedicationDetailViewModel(book: book, medicationID: $0) }
            ?? MedicationDetailViewModel(book: book, grace: app.settings.doseGrace, missedAfter: app.settings.doseMissedAfter)
        detail = model
        touched = []
        submitted = false
        ruleProblem = nil
        gtk_window_set_title(chime_adw_as_window(dialog), id == nil ? "Add Medication" : "Edit Medication")
        loadingForm = true
        let form = model.state.form
        let values: [MedicationField: String] = [
            .name: form.name, .amount: form.amount, .unit: form.unit, .times: form.schedule.times, .stock: form.stock,
            .afterLast: form.schedule.afterLastText ?? "", .maxPerDay: form.schedule.maxPerDay, .taper: form.taper,
            .tell: form.tellChannel, .tellAfter: form.tellWhen,
        ]
        for (field, entry, _) in entries { gtk_editable_set_text(chime_adw_as_editable(entry), values[field] ?? "") }
        for (index, toggle) in dayToggles.enumerated() {
            gtk_toggle_button_set_active(chime_adw_as_toggle_button(toggle), form.schedule.days.contains(isoWeekday: index + 1) ? 1 : 0)
        }
        // The schedule's kind and rule as stored: an every-3-days medication opens as one.
        let kind: ScheduleKind
        var rule: (every: String, on: String, off: String, from: Int) = ("", "", "", CivilDay.of(Date(), in: .current))
        switch form.schedule.dayRule {
        case .every(let days, let from):
            kind = .every
            (rule.every, rule.from) = (String(days), from)
        case .cycle(let on, let off, let from):
            kind = .cycle
            (rule.on, rule.off, rule.from) = (String(on), String(off), from)
        case nil:
            kind = form.schedule.asNeeded ? .asNeeded : form.schedule.isAfterLast ? .afterLast : .days
        }
        for (entry, text) in [
            (everyEntry, rule.every), (cycleOnEntry, rule.on), (cycleOffEntry, rule.off), (ruleStartEntry, CivilDay.format(rule.from)),
        ] {
            gtk_editable_set_text(chime_adw_as_editable(entry), text)
        }
        for (each, toggle) in kindToggles { gtk_toggle_button_set_active(chime_adw_as_toggle_button(toggle), each == kind ? 1 : 0) }
        showKind(kind)
        gtk_check_button_set_active(chime_doses_as_check_button(tellOff), 0)
        gtk_widget_set_visible(manage, id == nil ? 0 : 1)
        loadingForm = false
        renderForm(model.state)
        gtk_window_present(chime_adw_as_window(dialog))
        gtk_widget_grab_focus(entries[0].entry)
    }

    private func closeForm() {
        gtk_widget_set_visible(dialog, 0)
        detail = nil
    }

    /// An entry or a day changed: the form is read into the model and checked again.
    private func formChanged(_ widget: gpointer?) {
        guard !loadingForm, let detail else { return }
        if let entry = entries.first(where: { UnsafeMutableRawPointer($0.entry) == widget }) {
            touched.insert(entry.field)
        } else {
            touched.insert(.days)
        }
        renderForm(detail.edit(readForm))
    }

    /// The kind chosen: only its rows show, and the form is read again.
    private func kindChanged(_ toggle: gpointer?) {
        // Each change toggles two buttons (one off, one on): the one turned on acts.
        guard let toggle, gtk_toggle_button_get_active(chime_adw_as_toggle_button(toggle.assumingMemoryBound(to: GtkWidget.self))) != 0
        else { return }
        showKind(scheduleKind)
        // Its fields' problems show once typed in (or at Save), not as soon as it is chosen.
        guard !loadingForm, let detail else { return }
        renderForm(detail.edit(readForm))
    }

    /// The kind whose toggle is on.
    private var scheduleKind: ScheduleKind {
        kindToggles.first { gtk_toggle_button_get_active(chime_adw_as_toggle_button($0.toggle)) != 0 }?.kind ?? .days
    }

    private func showKind(_ kind: ScheduleKind) {
        for (kinds, widget) in kindRows { gtk_widget_set_visible(widget, kinds.contains(kind) ? 1 : 0) }
    }

    private func setDays(_ days: WeekdaySet) {
        guard let detail else { return }
        loadingForm = true
        for (index, toggle) in dayToggles.enumerated() {
            gtk_toggle_button_set_active(chime_adw_as_toggle_button(toggle), days.contains(isoWeekday: index + 1) ? 1 : 0)
        }
        loadingForm = false
        touched.insert(.days)
        renderForm(detail.edit(readForm))
    }

    /// The days on are drawn in the accent colour (Adwaita's checked toggle is only a shade darker).
    private func styleDays() {
        for toggle in dayToggles {
            if gtk_toggle_button_get_active(chime_adw_as_toggle_button(toggle)) != 0 {
                gtk_widget_add_css_class(toggle, "suggested-action")
            } else {
                gtk_widget_remove_css_class(toggle, "suggested-action")
            }
        }
    }

    /// The form's widgets into `form`.
    private func readForm(_ form: inout MedicationForm) {
        func text(_ field: MedicationField) -> String {
            guard let entry = entries.first(where: { $0.field == field })?.entry else { return "" }
            return String(cString: gtk_editable_get_text(chime_adw_as_editable(entry)))
        }
        form.name = text(.name)
        form.amount = text(.amount)
        form.unit = text(.unit)
        form.schedule.times = text(.times)
        form.stock = text(.stock)
        form.taper = text(.taper)
        form.tellChannel = text(.tell)
        form.tellWhen = text(.tellAfter)
        form.tellOff = gtk_check_button_get_active(chime_doses_as_check_button(tellOff)) != 0
        // The maximum is for as needed and after the last dose only; the interval for the latter.
        form.schedule.maxPerDay = [.asNeeded, .afterLast].contains(scheduleKind) ? text(.maxPerDay) : ""
        if scheduleKind != .afterLast { (form.schedule.afterLast, form.schedule.afterLastText) = (nil, nil) }
        var days: WeekdaySet = []
        for (index, toggle) in dayToggles.enumerated() where gtk_toggle_button_get_active(chime_adw_as_toggle_button(toggle)) != 0 {
            if let day = WeekdaySet(isoWeekday: index + 1) { days.insert(day) }
        }
        form.schedule.days = days
        form.schedule.asNeeded = false
        form.schedule.dayRule = nil
        ruleProblem = nil
        func entered(_ entry: UnsafeMutablePointer<GtkWidget>) -> String {
            String(cString: gtk_editable_get_text(chime_adw_as_editable(entry))).trimmingCharacters(in: .whitespaces)
        }
        switch scheduleKind {
        case .days:
            break
        case .asNeeded:
            form.schedule.asNeeded = true
        case .afterLast:
            // Read by the view model with `--after-last`'s rule; no clock times.
            form.schedule.times = ""
            form.schedule.afterLastText = text(.afterLast)
        case .every, .cycle:
            // The family's own parsers and words (`chime med add --every/--cycle/--start`).
            form.schedule.days = .everyDay
            do throws(ChimeError) {
                let start = entered(ruleStartEntry)
                let from = start.isEmpty ? CivilDay.of(Date(), in: .current) : try CivilDay.parse(start, field: "start date")
                if scheduleKind == .every {
                    form.schedule.dayRule = .every(days: try DoseDayRule.every(entered(everyEntry)), from: from)
                } else {
                    let cycle = try DoseDayRule.cycle(entered(cycleOnEntry) + "/" + entered(cycleOffEntry))
                    form.schedule.dayRule = .cycle(on: cycle.on, off: cycle.off, from: from)
                }
            } catch {
                ruleProblem = error.message
                // Kept as it was, so the model's own checks do not hide this one.
                form.schedule.dayRule = .every(days: 2, from: 0)
            }
        }
    }

    /// Each field's error under it (once touched, or after Save), in the family's words; a
    /// problem of no field of the form (a name taken) at the top.
    private func renderForm(_ state: MedicationDetailState) {
        styleDays()
        for (field, entry, label) in entries {
            let error = (submitted || touched.contains(field)) ? state.validationError(for: field) : nil
            gtk_label_set_text(chime_adw_as_label(label), error ?? "")
            gtk_widget_set_visible(label, error == nil ? 0 : 1)
            if error == nil { gtk_widget_remove_css_class(entry, "error") } else { gtk_widget_add_css_class(entry, "error") }
            chime_adw_set_accessible(entry, nil, error ?? "")
        }
        let daysProblem = (submitted || touched.contains(.days)) ? ruleProblem ?? state.validationError(for: .days) : nil
        gtk_label_set_text(chime_adw_as_label(daysError), daysProblem ?? "")
        gtk_widget_set_visible(daysError, daysProblem == nil ? 0 : 1)
        let shownFields: Set<MedicationField> = [
            .name, .amount, .unit, .times, .days, .stock, .afterLast, .maxPerDay, .taper, .tell, .tellAfter,
        ]
        // The taper read back in full, else its hint; who is told now (as `chime med show`).
        gtk_label_set_text(chime_adw_as_label(taperSummary), state.taperSummary.map { "Reads as: \($0)" } ?? taperHint)
        gtk_label_set_text(chime_adw_as_label(tellCurrent), state.tellText)
        gtk_widget_set_visible(tellOff, state.tell == nil ? 0 : 1)
        let activeLabel = state.isActive ? "Deactivate" : "Reactivate"
        gtk_button_set_label(chime_adw_as_button(deactivateButton), "_" + activeLabel)
        chime_adw_set_accessible(deactivateButton, activeLabel, nil)
        let other = submitted ? state.fieldErrors.filter { !shownFields.contains($0.key) }.map(\.value).sorted().first : nil
        let problem = state.error?.message ?? other
        gtk_label_set_text(chime_adw_as_label(formError), problem ?? "")
        gtk_widget_set_visible(formError, problem == nil ? 0 : 1)
    }

    private func save() {
        guard let detail else { return }
        let isNew = detail.state.medicationID == nil
        detail.edit(readForm)
        submitted = true
        if ruleProblem != nil {
            renderForm(detail.state)
            return
        }
        guard let saved = detail.save() else {
            renderForm(detail.state)
            // The first field with a problem takes the focus.
            if let first = entries.first(where: { detail.state.hasError(for: $0.field) }) { gtk_widget_grab_focus(first.entry) }
            return
        }
        closeForm()
        app.changed()
        let label = UserText.oneLine(saved.medication.label)
        show(message: "\(isNew ? "Added" : "Changed") medication \(saved.medication.id): \(label)", error: nil)
    }

    // MARK: - Deactivate and delete

    /// Deactivate (or reactivate) the medication being edited, as `chime med deactivate`.
    private func toggleActive() {
        guard let detail, detail.state.medicationID != nil else { return }
        let wasActive = detail.state.isActive
        let state = wasActive ? detail.deactivate() : detail.reactivate()
        if let error = state.error {
            renderForm(state)
            show(message: nil, error: error)
            return
        }
        closeForm()
        app.changed()
        let label = UserText.oneLine(state.form.name)
        show(
            message: wasActive
                ? "Deactivated \(label): no more doses or alerts; its history stays."
                : "Reactivated \(label): its doses start again from now.",
            error: nil
        )
    }

    /// Delete asks first, as `chime med delete` does, naming what goes with it.
    private func askDelete() {
        guard let detail, let question = detail.deletionQuestion() else {
            if let detail { renderForm(detail.state) }
            return
        }
        adw_message_dialog_set_heading(chime_adw_as_message_dialog(deleteDialog), question)
        gtk_window_present(chime_adw_as_window(deleteDialog))
    }

    private func delete() {
        guard let detail, let id = detail.state.medicationID else { return }
        let name = UserText.oneLine(detail.state.form.name)
        guard detail.delete() else {
            renderForm(detail.state)
            return
        }
        closeForm()
        app.changed()
        show(message: "Deleted medication \(id): \(name)", error: nil)
    }

    // MARK: - Refill

    private func askRefill(_ id: Int64, name: String) {
        refillMedication = (id, name)
        adw_message_dialog_set_heading(chime_adw_as_message_dialog(refillDialog), "Refill \(name)")
        gtk_editable_set_text(chime_adw_as_editable(refillCount), "")
        gtk_window_present(chime_adw_as_window(refillDialog))
        gtk_widget_grab_focus(refillCount)
    }

    private func refill() {
        guard let medication = refillMedication else { return }
        let text = String(cString: gtk_editable_get_text(chime_adw_as_editable(refillCount)))
        let state = medications.refill(medication.id, count: text)
        if state.error == nil {
            app.changed()
            show(message: state.message, error: nil)
        } else {
            show(message: nil, error: state.error)
        }
    }

    // MARK: - The chart

    /// A bar per day of the range: its adherence (taken ÷ doses due), the rate above it and the
    /// weekday under it; an empty track for a day with nothing due.
    private func draw(_ cr: OpaquePointer?, _ width: Int32, _ height: Int32) {
        guard let cr else { return }
        var red = 0.0
        var green = 0.0
        var blue = 0.0
        chime_doses_foreground(chart, &red, &green, &blue)
        let accent = chime_doses_dark() != 0 ? (0.47, 0.68, 0.93) : (0.21, 0.52, 0.89)
        cairo_select_font_face(cr, "Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL)
        cairo_set_font_size(cr, 11)
        let (w, h) = (Double(width), Double(height))
        func text(_ string: String, centeredAt x: Double, baseline y: Double) {
            var extents = cairo_text_extents_t()
            cairo_text_extents(cr, string, &extents)
            cairo_move_to(cr, x - extents.width / 2 - extents.x_bearing, y)
            cairo_show_text(cr, string)
        }
        guard !chartDays.isEmpty else {
            cairo_set_source_rgba(cr, red, green, blue, 0.55)
            text("Nothing due yet", centeredAt: w / 2, baseline: h / 2)
            return
        }
        let top = 18.0
        let bottom = 20.0
        let track = max(1, h - top - bottom)
        let slot = w / Double(chartDays.count)
        let barWidth = min(44, slot * 0.6)
        for (index, day) in chartDays.enumerated() {
            let center = slot * (Double(index) + 0.5)
            let x = center - barWidth / 2
            cairo_set_source_rgba(cr, red, green, blue, 0.08)
            cairo_rectangle(cr, x, top, barWidth, track)
            cairo_fill(cr)
            if let rate = day.adherence.rate {
                let bar = max(2, rate * track)
                cairo_set_source_rgb(cr, accent.0, accent.1, accent.2)
                cairo_rectangle(cr, x, top + track - bar, barWidth, bar)
                cairo_fill(cr)
                cairo_set_source_rgba(cr, red, green, blue, 0.9)
                text(day.adherence.percentText, centeredAt: center, baseline: top - 5)
            } else {
                cairo_set_source_rgba(cr, red, green, blue, 0.5)
                text("—", centeredAt: center, baseline: top - 5)
            }
            cairo_set_source_rgba(cr, red, green, blue, 0.7)
            text(day.weekday, centeredAt: center, baseline: h - 5)
        }
    }
}

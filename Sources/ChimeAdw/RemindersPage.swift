import CAdw
import ChimeCore
import ChimeDoses
import ChimeRunner
import ChimeStore
import ChimeViewModels
import Foundation

/// The Reminders page, bound to ``ReminderListViewModel`` and ``ReminderFormViewModel``: the
/// pending reminders as `chime list` words them (Edit and Cancel on each), the form (New: a
/// title, a body, in a duration or at a time, as `chime in` and `chime at` read them; Edit: a
/// new title or time, as `chime edit`), the alerts showing (Snooze, as `chime snooze`) and the
/// history, the most recent first. A bad value keeps the form open with the command line's words
/// on its error line, and writes nothing.
final class RemindersPage: AppPageController {
    let app: AppContext
    /// Made again when the config's snooze length changes (``refresh()``).
    private(set) var list: ReminderListViewModel
    let form: ReminderFormViewModel
    let root: UnsafeMutablePointer<GtkWidget>
    private let builder: PageBuilder
    private let error: UnsafeMutablePointer<GtkWidget>
    private let formBox: UnsafeMutablePointer<GtkWidget>
    private let newButton: UnsafeMutablePointer<GtkWidget>
    private let heading: UnsafeMutablePointer<GtkWidget>
    private let titleEntry: UnsafeMutablePointer<GtkWidget>
    private let bodyEntry: UnsafeMutablePointer<GtkWidget>
    private let inButton: UnsafeMutablePointer<GtkWidget>
    private let atButton: UnsafeMutablePointer<GtkWidget>
    private let whenEntry: UnsafeMutablePointer<GtkWidget>
    private let formError: UnsafeMutablePointer<GtkWidget>
    private let addButton: UnsafeMutablePointer<GtkWidget>
    private let saveButton: UnsafeMutablePointer<GtkWidget>
    private let remindersList: UnsafeMutablePointer<GtkWidget>
    private let remindersEmpty: UnsafeMutablePointer<GtkWidget>
    private let alertsGroup: UnsafeMutablePointer<GtkWidget>
    private let alertsList: UnsafeMutablePointer<GtkWidget>
    private let historyList: UnsafeMutablePointer<GtkWidget>
    private let historyEmpty: UnsafeMutablePointer<GtkWidget>
    /// The reminder the form edits (its id and title then), nil when it adds one.
    private var editing: ReminderListState.Row?

    /// Nil without a store (the page then shows its empty state).
    init?(_ app: AppContext) {
        guard let store = app.store else { return nil }
        let builder = PageBuilder("reminders")
        func object(_ id: String) -> UnsafeMutablePointer<GtkWidget> { builder.widget(id) }
        self.builder = builder
        self.app = app
        list = Self.makeList(store: store, snoozeLength: app.settings.snoozeLength)
        form = ReminderFormViewModel(store: store)
        root = object("page")
        error = object("reminders_error")
        formBox = object("form")
        heading = object("form_heading")
        titleEntry = object("form_title")
        bodyEntry = object("form_body")
        inButton = object("form_in")
        atButton = object("form_at")
        whenEntry = object("form_when")
        formError = object("form_error")
        addButton = object("form_add")
        saveButton = object("form_save")
        remindersList = object("reminders_list")
        remindersEmpty = object("reminders_empty")
        alertsGroup = object("alerts_group")
        alertsList = object("alerts_list")
        historyList = object("history_list")
        historyEmpty = object("history_empty")

        newButton = object("reminders_new")
        ReminderPagesCallback.connect(newButton, "clicked") { [unowned self] in openForm(editing: nil) }
        ReminderPagesCallback.connect(object("form_close"), "clicked") { [unowned self] in closeForm() }
        ReminderPagesCallback.connect(addButton, "clicked") { [unowned self] in submit() }
        ReminderPagesCallback.connect(saveButton, "clicked") { [unowned self] in submit() }
        for entry in [titleEntry, bodyEntry, whenEntry] {
            ReminderPagesCallback.connect(entry, "activate") { [unowned self] in submit() }
        }
        ReminderPagesCallback.connect(inButton, "toggled") { [unowned self] in modeChanged() }
        // Escape in the form closes it, as its Close button does (the focus back on New).
        chime_adw_on_key(
            formBox,
            "Escape",
            { _, data in Unmanaged<RemindersPage>.fromOpaque(data!).takeUnretainedValue().escapeForm() },
            Unmanaged.passUnretained(self).toOpaque()
        )
        render(list.state)
    }

    func visibilityChanged(onScreen: Bool) {
        // The relative times ("in 25m") are read again each time the page is shown.
        if onScreen { refresh() }
    }

    func refresh() {
        // Preferences changed the snooze's length (`reminders.snooze`): Snooze follows it.
        if list.snoozeLength != app.settings.snoozeLength {
            list = Self.makeList(store: list.store, snoozeLength: app.settings.snoozeLength)
        }
        render(list.refresh())
    }

    /// The list's model; its snooze lasts `snoozeLength` (the config's `reminders.snooze`, as
    /// an alert's Snooze and `chime snooze`).
    private static func makeList(store: ReminderStore, snoozeLength: Duration) -> ReminderListViewModel {
        ReminderListViewModel(store: store, snoozeLength: snoozeLength) { id, now in
            // `chime cancel`'s use case: a dose's alert is refused (answered, not cancelled), then the
            // runner is asked whether it was too late; what it had shown is closed.
            try DoseBook(store: store).refuseCancel([id])
            let outcome = try RunnerControl.cancel(ids: [id], store: store, now: now)
            RunnerControl.withdrawThroughRunner(ids: outcome.cancelled.map(\.id), store: store)
            if let problem = outcome.problem(zone: .current) { throw problem }
        }
    }

    // MARK: - The form

    private var mode: ReminderWhen {
        gtk_toggle_button_get_active(chime_adw_as_toggle_button(atButton)) != 0 ? .atTime : .inDuration
    }

    private func openForm(editing row: ReminderListState.Row?) {
        editing = row
        setText(titleEntry, row?.plainTitle ?? "")
        setText(bodyEntry, "")
        setText(whenEntry, "")
        gtk_toggle_button_set_active(chime_adw_as_toggle_button(row == nil ? inButton : atButton), 1)
        gtk_label_set_text(chime_adw_as_label(heading), row.map { "Edit '\(UserText.oneLine($0.plainTitle))'" } ?? "New Reminder")
        // `chime edit` changes the title and the time, not the body (here).
        gtk_widget_set_visible(bodyEntry, row == nil ? 1 : 0)
        gtk_widget_set_visible(addButton, row == nil ? 1 : 0)
        gtk_widget_set_visible(saveButton, row == nil ? 0 : 1)
        showFormError(nil)
        modeChanged()
        gtk_widget_set_visible(formBox, 1)
        gtk_widget_grab_focus(titleEntry)
    }

    private func escapeForm() {
        closeForm()
        gtk_widget_grab_focus(newButton)
    }

    private func closeForm() {
        editing = nil
        showFormError(nil)
        gtk_widget_set_visible(formBox, 0)
    }

    /// The placeholder follows the choice: a duration, or a time (when editing, empty keeps the time).
    private func modeChanged() {
        var hint = mode.placeholder
        if editing != nil { hint = "Empty: same time" }
        gtk_entry_set_placeholder_text(chime_adw_as_entry(whenEntry), hint)
    }

    private func submit() {
        guard gtk_widget_get_visible(formBox) != 0 else { return }
        let draft = ReminderDraft(title: text(titleEntry), body: text(bodyEntry), mode: mode, when: text(whenEntry))
        let result = editing.map { form.edit(id: $0.id, original: $0.plainTitle, draft) } ?? form.add(draft)
        switch result {
        case .failure(let failure):
            showFormError(failure.message)
        case .success(let reminder):
            // Short: a toast is one line (the row says when).
            toast((editing == nil ? "Added" : "Changed") + " '\(UserText.oneLine(reminder.title))'.")
            closeForm()
            app.changed()
        }
    }

    private func showFormError(_ message: String?) {
        gtk_label_set_text(chime_adw_as_label(formError), message ?? "")
        gtk_widget_set_visible(formError, message == nil ? 0 : 1)
    }

    // MARK: - The lists

    private func cancel(_ id: String) {
        let state = list.cancel(id)
        if let message = state.message { toast(message) }
        if editing?.id == id { closeForm() }
        if state.error == nil { app.changed() } else { render(state) }
    }

    private func snooze(_ id: String) {
        let state = list.snooze(id)
        if let message = state.message { toast(message) }
        if state.error == nil { app.changed() } else { render(state) }
    }

    private func render(_ state: ReminderListState) {
        gtk_label_set_text(chime_adw_as_label(error), state.error?.message ?? "")
        gtk_widget_set_visible(error, state.error == nil ? 0 : 1)

        chime_adw_clear_list_box(remindersList)
        for row in state.reminders {
            let template = ReminderPagesRow("reminder-row")
            let widget = template.widget("row")
            template.setTitle(row.title, subtitle: row.subtitle)
            chime_adw_set_accessible(widget, row.title, row.subtitle)
            let name = UserText.oneLine(row.plainTitle)
            let edit = template.widget("edit")
            let cancel = template.widget("cancel")
            chime_adw_set_accessible(edit, "Edit \(name)", nil)
            chime_adw_set_accessible(cancel, "Cancel \(name)", nil)
            ReminderPagesCallback.connect(edit, "clicked") { [unowned self] in openForm(editing: row) }
            ReminderPagesCallback.connect(cancel, "clicked") { [unowned self] in self.cancel(row.id) }
            gtk_list_box_append(chime_adw_as_list_box(remindersList), widget)
        }
        gtk_widget_set_visible(remindersList, state.reminders.isEmpty ? 0 : 1)
        gtk_label_set_text(chime_adw_as_label(remindersEmpty), state.emptyText ?? "")
        gtk_widget_set_visible(remindersEmpty, state.emptyText == nil ? 0 : 1)

        chime_adw_clear_list_box(alertsList)
        for alert in state.alerts {
            let template = ReminderPagesRow("alert-row")
            let widget = template.widget("row")
            template.setTitle(alert.title, subtitle: alert.status)
            chime_adw_set_accessible(widget, alert.title, alert.status)
            let snooze = template.widget("snooze")
            gtk_button_set_label(chime_adw_as_button(snooze), app.settings.snoozeLabel)
            chime_adw_set_accessible(snooze, "Snooze \(UserText.oneLine(alert.title))", "For \(AppSettings.length(list.snoozeLength))")
            gtk_widget_set_visible(snooze, alert.canSnooze ? 1 : 0)
            ReminderPagesCallback.connect(snooze, "clicked") { [unowned self] in self.snooze(alert.id) }
            gtk_list_box_append(chime_adw_as_list_box(alertsList), widget)
        }
        gtk_widget_set_visible(alertsGroup, state.alerts.isEmpty ? 0 : 1)

        chime_adw_clear_list_box(historyList)
        for entry in state.history {
            let row = adw_action_row_new()!
            ReminderPagesRow.setTitle(row, entry.title, subtitle: entry.line)
            chime_adw_set_accessible(row, entry.title, entry.line)
            gtk_list_box_append(chime_adw_as_list_box(historyList), row)
        }
        gtk_widget_set_visible(historyList, state.history.isEmpty ? 0 : 1)
        gtk_widget_set_visible(historyEmpty, state.history.isEmpty ? 1 : 0)
    }

    private func toast(_ text: String) { chime_adw_toast(root, text, 4) }

    private func text(_ entry: UnsafeMutablePointer<GtkWidget>) -> String {
        String(cString: gtk_editable_get_text(chime_adw_as_editable(entry)))
    }

    private func setText(_ entry: UnsafeMutablePointer<GtkWidget>, _ text: String) {
        gtk_editable_set_text(chime_adw_as_editable(entry), text)
    }
}

/// A row built from its own `.ui` file (`reminder-row.ui`, `alert-row.ui`, `today-row.ui`):
/// a builder per row, let go once the row is in its list (which then holds the row).
final class ReminderPagesRow {
    let builder: OpaquePointer

    init(_ name: String) {
        builder = gtk_builder_new_from_resource("/io/github/chime/Chime/\(name).ui")!
    }

    deinit { g_object_unref(UnsafeMutableRawPointer(builder)) }

    func widget(_ id: String) -> UnsafeMutablePointer<GtkWidget> {
        guard let widget = chime_rem_builder_widget(builder, id) else { fatalError("no object '\(id)' in the row's .ui file") }
        return widget
    }

    /// Sets the row's (object `row`) title and subtitle, as plain text.
    func setTitle(_ title: String, subtitle: String) { Self.setTitle(widget("row"), title, subtitle: subtitle) }

    static func setTitle(_ row: UnsafeMutablePointer<GtkWidget>, _ title: String, subtitle: String) {
        adw_preferences_row_set_use_markup(chime_adw_as_preferences_row(row), 0)
        adw_preferences_row_set_title(chime_adw_as_preferences_row(row), UserText.oneLine(title))
        adw_action_row_set_subtitle(chime_adw_as_action_row(row), subtitle)
    }
}

/// A Swift closure as a GObject signal's handler of shape (instance, data): kept alive by the
/// signal's connection, released when it goes (the widget finalized).
final class ReminderPagesCallback {
    let action: () -> Void

    private init(_ action: @escaping () -> Void) { self.action = action }

    static func connect(_ instance: UnsafeMutablePointer<GtkWidget>, _ signal: String, _ action: @escaping () -> Void) {
        let data = Unmanaged.passRetained(ReminderPagesCallback(action)).toOpaque()
        chime_adw_connect(
            instance,
            signal,
            { _, data in Unmanaged<ReminderPagesCallback>.fromOpaque(data!).takeUnretainedValue().action() },
            data,
            { data, _ in Unmanaged<ReminderPagesCallback>.fromOpaque(data!).release() }
        )
    }
}

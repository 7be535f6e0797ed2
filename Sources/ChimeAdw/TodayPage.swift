import CAdw
import ChimeCore
import ChimeDoses
import ChimeFocus
import ChimeStore
import ChimeViewModels
import Foundation

/// The Today page, bound to ``TodayViewModel``: the focus session when one is open, the next
/// reminders, today's doses with their answers (read-only: the Doses page answers them). Every
/// row opens its page. Read when shown and when the store changed; nothing ticks here.
final class TodayPage: AppPageController {
    let app: AppContext
    /// Made again when the config's dose policy changes (``refresh()``).
    var today: TodayViewModel
    let root: UnsafeMutablePointer<GtkWidget>
    private let builder: PageBuilder
    private let error: UnsafeMutablePointer<GtkWidget>
    private let focusGroup: UnsafeMutablePointer<GtkWidget>
    private let focusList: UnsafeMutablePointer<GtkWidget>
    private let reminders: UnsafeMutablePointer<GtkWidget>
    private let remindersEmpty: UnsafeMutablePointer<GtkWidget>
    private let doses: UnsafeMutablePointer<GtkWidget>
    private let dosesEmpty: UnsafeMutablePointer<GtkWidget>

    /// Nil without a store (the page then shows its empty state).
    init?(_ app: AppContext) {
        guard let store = app.store else { return nil }
        let builder = PageBuilder("today")
        func object(_ id: String) -> UnsafeMutablePointer<GtkWidget> { builder.widget(id) }
        self.builder = builder
        self.app = app
        today = Self.makeModel(store: store, repeats: app.settings.doseRepeats)
        root = object("page")
        error = object("today_error")
        focusGroup = object("focus_group")
        focusList = object("focus_list")
        reminders = object("today_reminders")
        remindersEmpty = object("today_reminders_empty")
        doses = object("today_doses")
        dosesEmpty = object("today_doses_empty")
        render(today.state)
    }

    func visibilityChanged(onScreen: Bool) {
        if onScreen { refresh() }
    }

    func refresh() {
        // Its doses' answers repeat as the config says (`doses.repeat_*`), as the Doses page's.
        if today.book.repeats != app.settings.doseRepeats {
            today = Self.makeModel(store: today.book.store, repeats: app.settings.doseRepeats)
        }
        render(today.refresh())
    }

    private static func makeModel(store: ReminderStore, repeats: DoseRepeats) -> TodayViewModel {
        TodayViewModel(
            store: store,
            book: DoseBook(store: store, repeats: repeats),
            timer: FocusTimer(store: store, breaks: AppContext.focusBreaks)
        )
    }

    private func render(_ state: TodayState) {
        gtk_label_set_text(chime_adw_as_label(error), state.error?.message ?? "")
        gtk_widget_set_visible(error, state.error == nil ? 0 : 1)

        chime_adw_clear_list_box(focusList)
        if let focus = state.focus { addRow(to: focusList, title: focus.title, subtitle: focus.subtitle, opens: focus.page) }
        gtk_widget_set_visible(focusGroup, state.focus == nil ? 0 : 1)

        chime_adw_clear_list_box(reminders)
        for row in state.reminders { addRow(to: reminders, title: row.title, subtitle: row.subtitle, opens: row.page) }
        if state.moreReminders { addRow(to: reminders, title: "All Reminders", subtitle: "", opens: .reminders) }
        gtk_widget_set_visible(reminders, state.reminders.isEmpty ? 0 : 1)
        gtk_label_set_text(chime_adw_as_label(remindersEmpty), state.reminderEmptyText ?? "")
        gtk_widget_set_visible(remindersEmpty, state.reminderEmptyText == nil ? 0 : 1)

        chime_adw_clear_list_box(doses)
        for dose in state.doses {
            addRow(
                to: doses,
                title: dose.label,
                subtitle: dose.time,
                status: dose.status,
                style: Self.style(dose.answer, dose.status),
                opens: dose.page
            )
        }
        gtk_widget_set_visible(doses, state.doses.isEmpty ? 0 : 1)
        gtk_label_set_text(chime_adw_as_label(dosesEmpty), state.doseEmptyText ?? "")
        gtk_widget_set_visible(dosesEmpty, state.doseEmptyText == nil ? 0 : 1)
    }

    /// The answer's colour: taken in green, missed in red, skipped and overdue in yellow, pending dim.
    static func style(_ answer: DoseStatus, _ status: String) -> String {
        switch answer {
        case .taken: "success"
        case .missed: "error"
        case .skipped: "warning"
        case .pending: status.hasPrefix("overdue") ? "warning" : "dim-label"
        }
    }

    /// A row from `today-row.ui` that opens `page` when activated; named by its title, described
    /// by its subtitle and answer.
    private func addRow(
        to list: UnsafeMutablePointer<GtkWidget>,
        title: String,
        subtitle: String,
        status: String? = nil,
        style: String? = nil,
        opens page: AppPage
    ) {
        let template = ReminderPagesRow("today-row")
        let row = template.widget("row")
        template.setTitle(title, subtitle: subtitle)
        if let status {
            let label = template.widget("status")
            gtk_label_set_text(chime_adw_as_label(label), status)
            if let style { gtk_widget_add_css_class(label, style) }
            gtk_widget_set_visible(label, 1)
        }
        let description = [subtitle, status ?? ""].filter { !$0.isEmpty }.joined(separator: ", ")
        chime_adw_set_accessible(row, UserText.oneLine(title), description.isEmpty ? "Opens \(page.title)" : description)
        let open = template.widget("open")
        // (libadwaita labels the activatable widget by the row's title too: "Tea Tea".)
        chime_adw_set_accessible(open, UserText.oneLine(title), "Opens \(page.title)")
        ReminderPagesCallback.connect(open, "clicked") { [app] in app.present(page) }
        gtk_list_box_append(chime_adw_as_list_box(list), row)
    }
}

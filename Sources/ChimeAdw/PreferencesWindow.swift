import CAdw
import ChimeApp
import ChimeConfig
import ChimeCore
import ChimeDoses
import ChimeFocus
import ChimeRunner
import ChimeStore
import ChimeViewModels
import Foundation

/// Chime's Preferences (`ui/preferences.ui`), bound to ``PreferencesViewModel``: the config
/// file's quiet hours, dose policy, focus length and notifier, each written when applied (Enter,
/// leaving the field, closing the window) through ChimeConfig's ConfigWriter, as
/// `chime config set` writes; a refused value keeps its message under the field. Start at login
/// is `chime service enable` / `disable`.
final class PreferencesWindow {
    let model: PreferencesViewModel
    let app: AppContext
    let window: UnsafeMutablePointer<GtkWidget>
    private let builder: PageBuilder
    private var fields: [Field] = []
    private let notifierRow: UnsafeMutablePointer<GtkWidget>
    private let loginRow: UnsafeMutablePointer<GtkWidget>
    private let loginSwitch: UnsafeMutablePointer<GtkWidget>
    private let fileNote: UnsafeMutablePointer<GtkWidget>
    /// While the window sets its widgets from the model (their signals are not a person's).
    private var rendering = false

    /// One entry row and its key; the signals' data.
    final class Field {
        let key: ConfigKey
        let row: UnsafeMutablePointer<GtkWidget>
        let entry: UnsafeMutablePointer<GtkWidget>
        unowned let window: PreferencesWindow
        /// The model's text last put in the entry: the entry is set again only when it changes, so
        /// what a person typed in one field and has not applied yet outlives a change elsewhere.
        var shown: String?

        init(key: ConfigKey, row: UnsafeMutablePointer<GtkWidget>, entry: UnsafeMutablePointer<GtkWidget>, window: PreferencesWindow) {
            self.key = key
            self.row = row
            self.entry = entry
            self.window = window
        }

        static func from(_ data: gpointer?) -> Field { Unmanaged<Field>.fromOpaque(data!).takeUnretainedValue() }
        var text: String { String(cString: gtk_editable_get_text(chime_adw_as_editable(entry))) }
    }

    /// The entry rows' ids in the `.ui` file, by key.
    static let entryIDs: [(ConfigKey, String)] = [
        (.quietHours, "quiet_hours"), (.doseGrace, "doses_grace"), (.doseMissedAfter, "doses_missed_after"),
        (.doseRepeatEvery, "doses_repeat_every"), (.doseRepeatCount, "doses_repeat_count"), (.focusLength, "focus_length"),
    ]

    init(_ app: AppContext) {
        self.app = app
        let environment = ProcessInfo.processInfo.environment
        let store = app.store
        model = PreferencesViewModel(
            keys: ChimeApp.configKeys,
            environment: environment,
            loginStart: ServiceLoginStart(service: StartAtLogin(environment: environment, executable: Self.chimeExecutable)),
            storedQuietHours: {
                guard let store, let stored = try? store.storedQuietHours() else { return nil }
                return .some(stored)
            }
        )
        let builder = PageBuilder("preferences")
        self.builder = builder
        window = builder.widget("preferences_window")
        notifierRow = builder.widget("row_notifier")
        loginRow = builder.widget("row_start_at_login")
        loginSwitch = builder.widget("switch_start_at_login")
        fileNote = builder.widget("file_note")
        gtk_window_set_transient_for(chime_adw_as_window(window), chime_adw_as_window(app.window))
        // A refused value's message in the row's subtitle, in the theme's error color.
        chime_adw_add_css(".error-row .subtitle { color: @error_color; opacity: 1; }")
        fields = Self.entryIDs.map { key, id in
            Field(key: key, row: builder.widget("row_\(id)"), entry: builder.widget("entry_\(id)"), window: self)
        }
        // Exactly their titles for AT-SPI (GTK 4.8 would add the row's: "Focus length Focus length").
        for field in fields { chime_adw_name_exactly(field.entry, PreferencesViewModel.title(of: field.key)) }
        chime_adw_name_exactly(notifierRow, "Notifier")
        chime_adw_name_exactly(loginSwitch, "Start at login")
        for field in fields {
            let data = Unmanaged.passUnretained(field).toOpaque()
            chime_adw_connect(field.entry, "activate", { _, data in Field.from(data).window.apply(Field.from(data)) }, data, nil)
            chime_adw_on_focus_leave(field.entry, { _, data in Field.from(data).window.apply(Field.from(data)) }, data)
        }
        let choices = model.state.field(.notifier)?.choices ?? []
        let list = gtk_string_list_new(nil)!
        for choice in choices { gtk_string_list_append(list, choice) }
        adw_combo_row_set_model(chime_adw_as_combo_row(notifierRow), list)
        g_object_unref(UnsafeMutableRawPointer(list))
        let context = Unmanaged.passUnretained(self).toOpaque()
        chime_adw_connect_notify(
            notifierRow,
            "notify::selected",
            { _, _, data in Unmanaged<PreferencesWindow>.fromOpaque(data!).takeUnretainedValue().notifierChosen() },
            context
        )
        chime_adw_connect_notify(
            loginSwitch,
            "notify::active",
            { _, _, data in Unmanaged<PreferencesWindow>.fromOpaque(data!).takeUnretainedValue().loginToggled() },
            context
        )
        // Closing applies what was typed and not yet applied (hide-on-close keeps the window).
        chime_adw_on_close_request(
            window,
            { _, data in
                let preferences = Unmanaged<PreferencesWindow>.fromOpaque(data!).takeUnretainedValue()
                for field in preferences.fields { preferences.apply(field) }
                return 0
            },
            context
        )
        render(model.state)
    }

    /// Shows the window, the file read again (and its values in the fields).
    func present() {
        for field in fields { field.shown = nil }
        render(model.refresh())
        gtk_window_present(chime_adw_as_window(window))
    }

    private func apply(_ field: Field) {
        guard !rendering else { return }
        let before = model.state.field(field.key)
        guard before?.text != field.text || before?.error != nil else { return }
        changed(model.set(field.key, to: field.text))
    }

    private func notifierChosen() {
        guard !rendering, let choices = model.state.field(.notifier)?.choices else { return }
        let index = Int(adw_combo_row_get_selected(chime_adw_as_combo_row(notifierRow)))
        guard choices.indices.contains(index) else { return }
        changed(model.set(.notifier, to: choices[index]))
    }

    private func loginToggled() {
        guard !rendering else { return }
        render(model.setStartsAtLogin(gtk_switch_get_active(chime_adw_as_switch(loginSwitch)) != 0))
    }

    /// A value was written (or refused): shown, and the pages told (the Focus page's length).
    private func changed(_ state: PreferencesState) {
        render(state)
        // The pages read the settings again (the snooze's length, the dose policy, the gate's defaults).
        let before = app.settings
        app.reloadSettings()
        if app.focusMinutes != state.focusMinutes || app.settings != before {
            app.focusMinutes = state.focusMinutes
            app.refreshAll()
        }
    }

    private func render(_ state: PreferencesState) {
        rendering = true
        defer { rendering = false }
        for field in fields {
            guard let value = state.field(field.key) else { continue }
            if field.shown != value.text {
                field.shown = value.text
                if field.text != value.text { gtk_editable_set_text(chime_adw_as_editable(field.entry), value.text) }
            }
            let help = [value.subtitle, value.overridden].compactMap { $0 }.joined(separator: ". ")
            adw_action_row_set_subtitle(chime_adw_as_action_row(field.row), value.error ?? help)
            chime_adw_set_accessible(field.entry, nil, value.error ?? help)
            if value.error == nil {
                gtk_widget_remove_css_class(field.entry, "error")
                gtk_widget_remove_css_class(field.row, "error-row")
            } else {
                gtk_widget_add_css_class(field.entry, "error")
                gtk_widget_add_css_class(field.row, "error-row")
            }
        }
        if let notifier = state.field(.notifier) {
            if let index = notifier.choices.firstIndex(of: notifier.text) {
                adw_combo_row_set_selected(chime_adw_as_combo_row(notifierRow), guint(index))
            }
            let help = [notifier.subtitle, notifier.overridden].compactMap { $0 }.joined(separator: ". ")
            adw_action_row_set_subtitle(chime_adw_as_action_row(notifierRow), notifier.error ?? help)
        }
        gtk_switch_set_active(chime_adw_as_switch(loginSwitch), state.startsAtLogin ? 1 : 0)
        adw_action_row_set_subtitle(chime_adw_as_action_row(loginRow), state.startAtLoginError ?? state.startAtLoginDetail)
        var note =
            "Written to \(state.path) as 'chime config set' writes it: its comments and other keys kept. "
            + "A running 'chime run' reads the file when it starts: restart it to apply a change."
        if let problem = state.fileError {
            note = "The file has an error, so nothing is written until it is fixed ('chime config edit'): \(problem)\n\n" + note
        }
        gtk_label_set_text(chime_adw_as_label(fileNote), note)
    }

    /// `chime` beside this executable (a build), or PREFIX/bin/chime for PREFIX/libexec/chime/…:
    /// what the autostart entry starts (`chime run`), as `chime service enable` writes it.
    static var chimeExecutable: String {
        let directory = (DataDirectories.executablePath as NSString).deletingLastPathComponent
        if directory.hasSuffix("/libexec/chime") {
            let prefix = ((directory as NSString).deletingLastPathComponent as NSString).deletingLastPathComponent
            return prefix + "/bin/chime"
        }
        return directory + "/chime"
    }
}

/// Start at login through ChimeRunner's StartAtLogin, as `chime service` does.
struct ServiceLoginStart: LoginStart {
    let service: StartAtLogin

    func status() -> (enabled: Bool, detail: String) {
        let status = service.status()
        if status.active.contains(.systemd) {
            return (true, "The runner starts at login: the systemd user unit \(StartAtLogin.unitName) ('chime service status').")
        }
        if status.active.contains(.autostart), let entry = status.effectiveEntry {
            return (true, "The runner starts at login: the autostart entry \(entry.path) ('chime service status').")
        }
        return (false, "The runner does not start at login; on, it is set up as 'chime service enable' does.")
    }

    func enable() throws(ChimeError) -> [String] { try service.enable().steps }
    func disable() throws(ChimeError) -> [String] { try service.disable().steps }
}

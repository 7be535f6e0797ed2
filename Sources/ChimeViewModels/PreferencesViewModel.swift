import ChimeConfig
import ChimeCore
import ChimeDoses
import ChimeFocus
import Foundation
import Synchronization

/// Whether and how the runner starts at login (`chime service`): given to
/// ``PreferencesViewModel`` by the app (ChimeRunner's StartAtLogin), a fake in the tests.
public protocol LoginStart: Sendable {
    /// Whether the runner starts at login, and a sentence saying how (or how it would).
    func status() -> (enabled: Bool, detail: String)
    /// `chime service enable`: what it did, one sentence a step.
    func enable() throws(ChimeError) -> [String]
    /// `chime service disable`.
    func disable() throws(ChimeError) -> [String]
}

/// What the Preferences window shows: the config file's keys a person sets there, each with its
/// value in the file (or its default), what it accepts, what beats it, and the last error.
public struct PreferencesState: Sendable, Hashable {
    public struct Field: Sendable, Hashable, Identifiable {
        /// The key's dotted name: `focus.length`.
        public var id: String
        /// `Focus length`.
        public var title: String
        /// The key's summary and what it accepts (the example file's comment).
        public var subtitle: String
        /// The file's value, or the default when the file has none (`25m`); what was typed when
        /// it could not be written.
        public var text: String
        /// For a choice (the notifier): the words accepted, in order.
        public var choices: [String]
        /// What beats the file now: `CHIME_FOCUS_LENGTH=45m beats the file`, nil when nothing does.
        public var overridden: String?
        /// Why the last value typed was not written (the CLI's message); nil once written.
        public var error: String?
    }

    /// The config file's path.
    public var path: String
    /// The window's groups, in order: Quiet hours, Doses, Focus, Alerts.
    public var fields: [Field]
    /// Whether the runner starts at login (`chime service`), and how.
    public var startsAtLogin: Bool
    public var startAtLoginDetail: String
    public var startAtLoginError: String?
    /// The file's own error when it is bad (nothing can be written until it is fixed).
    public var fileError: String?
    /// The focus length in whole minutes as it applies now (the environment's beats the file's).
    public var focusMinutes: Int

    public func field(_ key: ConfigKey) -> Field? { fields.first { $0.id == key.rawValue } }
}

/// The Preferences window over the config file (ChimeConfig's ``ConfigWriter``, as
/// `chime config set`): each field is written at once when a person applies it, checked as the
/// file's values are; a bad value leaves the file as it was and its message under the field.
public final class PreferencesViewModel: Sendable {
    /// The keys the window sets, in its order, with their titles.
    public static let shown: [(key: ConfigKey, title: String)] = [
        (.quietHours, "Quiet hours"),
        (.doseGrace, "Overdue after"),
        (.doseMissedAfter, "Missed after"),
        (.doseRepeatEvery, "Repeat alert every"),
        (.doseRepeatCount, "Repeat at most"),
        (.focusLength, "Focus length"),
        (.notifier, "Notifier"),
    ]

    /// A key's title in the window (its dotted name for a key not shown).
    public static func title(of key: ConfigKey) -> String { shown.first { $0.key == key }?.title ?? key.rawValue }

    public let keys: [ConfigKey]
    public let environment: [String: String]
    private let loginStart: (any LoginStart)?
    private let storedQuietHours: @Sendable () -> QuietSettings.Window??
    private let current: Mutex<PreferencesState>
    /// What was typed and refused, by key, until written or read again.
    private let drafts = Mutex<[String: (text: String, error: String)]>([:])

    /// - Parameter keys: every key of the file (ChimeApp's list), so the file is checked whole.
    /// - Parameter storedQuietHours: the quiet hours `chime quiet hours` stored (they beat the
    ///   file): nil when unknown (no store), .some(nil) when none is stored.
    public init(
        keys: [ConfigKey],
        environment: [String: String] = ProcessInfo.processInfo.environment,
        loginStart: (any LoginStart)? = nil,
        storedQuietHours: @escaping @Sendable () -> QuietSettings.Window?? = { nil }
    ) {
        self.keys = keys
        self.environment = environment
        self.loginStart = loginStart
        self.storedQuietHours = storedQuietHours
        current = Mutex(
            PreferencesState(
                path: Config.path(environment: environment),
                fields: [],
                startsAtLogin: false,
                startAtLoginDetail: "",
                startAtLoginError: nil,
                fileError: nil,
                focusMinutes: FocusTimer.defaultMinutes
            )
        )
        refresh()
    }

    public var state: PreferencesState { current.withLock { $0 } }

    /// Reads the file (and how the runner starts at login) again.
    @discardableResult
    public func refresh() -> PreferencesState {
        drafts.withLock { $0 = [:] }
        let login = loginStart?.status()
        current.withLock { state in
            state.startsAtLogin = login?.enabled ?? false
            state.startAtLoginDetail = login?.detail ?? "Set up with 'chime service enable' (not available here)."
            state.startAtLoginError = nil
        }
        return read()
    }

    /// Writes `text` as `key`'s value (when it differs from the file's): the file replaced
    /// whole, or (a bad value, a bad file) left as it was with the message under the field.
    @discardableResult
    public func set(_ key: ConfigKey, to text: String) -> PreferencesState {
        let typed = text.trimmingCharacters(in: .whitespaces)
        if let field = state.field(key), field.text == typed, field.error == nil { return state }
        do {
            try ConfigWriter.write([.init(key, typed)], keys: keys, environment: environment)
            drafts.withLock { $0[key.rawValue] = nil }
        } catch {
            drafts.withLock { $0[key.rawValue] = (typed, error.message) }
        }
        return read()
    }

    /// Turns starting at login on or off (`chime service enable` / `disable`).
    @discardableResult
    public func setStartsAtLogin(_ on: Bool) -> PreferencesState {
        guard let loginStart else { return state }
        var failure: String?
        do {
            _ = try on ? loginStart.enable() : loginStart.disable()
        } catch {
            failure = error.message
        }
        let status = loginStart.status()
        current.withLock { state in
            state.startsAtLogin = status.enabled
            state.startAtLoginDetail = status.detail
            state.startAtLoginError = failure
        }
        return state
    }

    private func read() -> PreferencesState {
        let path = Config.path(environment: environment)
        // The file's values apart from the environment's (a variable beats the file: said beside).
        let variables = Set(keys.map(\.environmentVariable))
        let fileOnly = environment.filter { !variables.contains($0.key) }
        var fileError: String?
        var file: Config?
        var effective: Config?
        do {
            file = try Config.load(keys: keys, environment: fileOnly)
            effective = try Config.load(keys: keys, environment: environment)
        } catch {
            fileError = error.message
        }
        let stored = storedQuietHours()
        let drafts = drafts.withLock { $0 }
        var fields: [PreferencesState.Field] = []
        for (key, title) in Self.shown {
            let value = file?.setting(key).value ?? key.builtInDefault(environment: fileOnly)
            var overridden: String?
            if let text = environment[key.environmentVariable], !text.isEmpty {
                overridden = "\(key.environmentVariable)=\(key.reported(text)) beats the file"
            } else if key == .quietHours, case .some(.some(let window)) = stored {
                overridden = "'chime quiet hours' stored \(window.description), which beats the file ('chime quiet hours off' removes it)"
            }
            var choices: [String] = []
            if case .choice(let words) = key.rule { choices = words }
            let draft = drafts[key.rawValue]
            fields.append(
                PreferencesState.Field(
                    id: key.rawValue,
                    title: title,
                    subtitle: "\(key.summary): \(key.accepted.replacingOccurrences(of: "\"", with: ""))",
                    text: draft?.text ?? value.text,
                    choices: choices,
                    overridden: overridden,
                    error: draft?.error
                )
            )
        }
        let minutes = Int((effective?.seconds(.focusLength) ?? Int64(FocusTimer.defaultMinutes * 60)) / 60)
        current.withLock { state in
            state.path = path
            state.fields = fields
            state.fileError = fileError
            state.focusMinutes = minutes
        }
        return state
    }
}

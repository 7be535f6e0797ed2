internal import CLibnotifyLoader
import ChimeCore
import Foundation
import Synchronization

/// Chime's desktop notifier: the `Notifier` protocol over libnotify, on a GLib main loop of its
/// own thread.
///
/// - It reads the server's capabilities and information once, and sends actions only to a server
///   with `actions`; it escapes markup in the body when the server has `body-markup` (the
///   summary is plain text by the specification and goes as typed).
/// - A note posted again under the same id updates the shown alert in place (same server id).
/// - Every D-Bus call it makes itself has a timeout, and before each show it asks who owns
///   `org.freedesktop.Notifications` (no auto-start): an activatable server that never appears
///   cannot make libnotify block for its 25 s default timeouts.
///
/// - Connected with `follow`, it watches the name `org.freedesktop.Notifications` on the bus
///   (`NameOwnerChanged`, through GIO's `g_bus_watch_name_on_connection`: a match rule on the
///   bus, no timer, so an idle runner never wakes for it). While no server owns the name a post
///   throws ``NotifierUnavailable``; when one appears it reads the new server's capabilities
///   and says so on ``availability``.
///
/// `@unchecked Sendable`: its mutable state (`shown`, `names`, `present`) is touched only on
/// the GLib thread, through ``MainLoopThread/run(_:)``; `current` is behind a mutex.
public final class LibnotifyNotifier: Notifier, @unchecked Sendable {
    private let current: Mutex<DesktopStatus>
    private let loop: MainLoopThread
    private let connection: OpaquePointer
    private let timeoutMs: Int32
    private let follows: Bool
    private let stream: AsyncStream<NoteResponse>
    private let responder: AsyncStream<NoteResponse>.Continuation
    public let availability: AsyncStream<Bool>
    private let availabilityChanges: AsyncStream<Bool>.Continuation
    private var shown: [String: UnsafeMutablePointer<NotifyNotification>] = [:]
    private var names: [UnsafeMutablePointer<NotifyNotification>: String] = [:]
    /// Shown alerts replaced by a confirmation (GLib thread): their closing is not an answer.
    private var confirmations: Set<UnsafeMutablePointer<NotifyNotification>> = []
    /// Whether a server owned the name at the last look (GLib thread).
    private var present: Bool
    /// The app's page each shown alert's body opens (GLib thread), by note id.
    private var pages: [String: String] = [:]
    /// What a click on an alert's body does (its "default" action), given the alert's page: set
    /// by the runner, which opens the app there. Unset (every other command), alerts have no
    /// default action.
    private static let defaultAction = Mutex<(@Sendable (_ page: String) -> Void)?>(nil)

    private init(status: DesktopStatus, loop: MainLoopThread, connection: OpaquePointer, timeoutMs: Int32, follows: Bool) {
        self.current = Mutex(status)
        self.present = status.isAvailable
        self.loop = loop
        self.connection = connection
        self.timeoutMs = timeoutMs
        self.follows = follows
        (stream, responder) = AsyncStream.makeStream(of: NoteResponse.self)
        (availability, availabilityChanges) = AsyncStream.makeStream(of: Bool.self)
        // Not following: its reach is never told.
        if !follows { availabilityChanges.finish() }
    }

    /// What the desktop offers now: the server's name, version and capabilities, or the problem.
    public var status: DesktopStatus { current.withLock { $0 } }

    /// `desktop (dunst 1.9.0)`, or nil while no notification server owns the name.
    public var destination: String? {
        let status = status
        guard status.isAvailable else { return nil }
        let server = [status.serverName, status.serverVersion].compactMap { $0 }.joined(separator: " ")
        return server.isEmpty ? "desktop" : "desktop (\(server))"
    }

    /// What the desktop offers, without connecting libnotify: for `chime doctor` and `--notifier auto`.
    public static func probe(timeout: Duration = .seconds(1)) async -> DesktopStatus {
        switch await connect(timeout: timeout) {
        case .success(let notifier): return notifier.status
        case .failure(let status): return status
        }
    }

    /// Connects to the session bus and the notification server on it.
    ///
    /// - Parameter follow: also when no server owns the name yet, and follow it from then on
    ///   (see the type's notes): the runner's. Without it, a missing server is a failure.
    /// - Returns: the notifier, or the status saying what is missing (no bus, or no server
    ///   when not following).
    public static func connect(
        appName: String = "Chime",
        timeout: Duration = .seconds(1),
        follow: Bool = false
    ) async -> Result<LibnotifyNotifier, DesktopStatus> {
        guard let address = SessionBus.address() else {
            return .failure(
                DesktopStatus(problem: "No session bus: DBUS_SESSION_BUS_ADDRESS is not set and $XDG_RUNTIME_DIR/bus does not exist.")
            )
        }
        if let problem = Libnotify.open() {
            return .failure(DesktopStatus(busAddress: address, problem: problem + ".", remedy: "Install the libnotify4 package"))
        }
        let timeoutMs = Int32(timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
        let loop = MainLoopThread.onLibnotifyGLib(name: "chime-glib")
        let outcome: ConnectOutcome = await loop.run {
            var error: UnsafeMutablePointer<GError>?
            guard let connection = libnotify.g_bus_get_sync(G_BUS_TYPE_SESSION, nil, &error) else {
                return .failed(
                    DesktopStatus(
                        busAddress: address,
                        problem: "The session bus at \(address) did not answer: \(SessionBus.message(error))."
                    )
                )
            }
            var status = serverStatus(connection, address: address, timeoutMs: timeoutMs)
            if !status.isAvailable && !follow {
                libnotify.g_object_unref(UnsafeMutableRawPointer(connection))
                return .failed(status)
            }
            // The first libnotify call, on this thread: its signals come to this thread's loop.
            guard libnotify.notify_init(appName) != 0 else {
                status.problem = "libnotify could not be initialised"
                return .failed(status)
            }
            return .connected(status, connection)
        }
        switch outcome {
        case .failed(let status):
            return .failure(status)
        case .connected(let status, let connection):
            let notifier = LibnotifyNotifier(status: status, loop: loop, connection: connection, timeoutMs: timeoutMs, follows: follow)
            if follow { await loop.run { notifier.watch() } }
            return .success(notifier)
        }
    }

    /// The notification server on the bus: its information and capabilities, or the problem
    /// (no server owns the name). Blocking, with `timeoutMs` per call: on the GLib thread.
    private static func serverStatus(_ connection: OpaquePointer, address: String, timeoutMs: Int32) -> DesktopStatus {
        var error: UnsafeMutablePointer<GError>?
        var status = DesktopStatus(busAddress: address)
        guard let owner = chime_name_owner(connection, "org.freedesktop.Notifications", timeoutMs, &error) else {
            _ = SessionBus.message(error)
            status.problem = "No notification server answered on the session bus."
            return status
        }
        libnotify.g_free(owner)
        let info = SessionBus.strings(chime_server_information(connection, timeoutMs, &error))
        if info.count == 4 {
            (status.serverName, status.serverVendor, status.serverVersion, status.specVersion) = (info[0], info[1], info[2], info[3])
        } else {
            _ = SessionBus.message(error)
        }
        status.capabilities = SessionBus.strings(chime_server_capabilities(connection, timeoutMs, &error))
        return status
    }

    /// Starts watching the server's name (GLib thread: its callbacks come to this loop). The
    /// watch holds the notifier for the life of the process (the runner's).
    private func watch() {
        let me = Unmanaged.passRetained(self).toOpaque()
        _ = libnotify.g_bus_watch_name_on_connection(
            connection,
            "org.freedesktop.Notifications",
            G_BUS_NAME_WATCHER_FLAGS_NONE,
            { _, _, _, data in
                guard let data else { return }
                Unmanaged<LibnotifyNotifier>.fromOpaque(data).takeUnretainedValue().serverChanged(present: true)
            },
            { _, _, data in
                guard let data else { return }
                Unmanaged<LibnotifyNotifier>.fromOpaque(data).takeUnretainedValue().serverChanged(present: false)
            },
            me,
            nil
        )
    }

    /// A server appeared on the name, or left it (GLib thread). GIO also calls this once when
    /// the watch starts: nothing changed then, unless the server came or went in between.
    private func serverChanged(present now: Bool) {
        guard now != present else { return }
        present = now
        let address = current.withLock { $0.busAddress } ?? ""
        if now {
            // A new server (perhaps another one): its own capabilities.
            let status = Self.serverStatus(connection, address: address, timeoutMs: timeoutMs)
            current.withLock { $0 = status }
        } else {
            current.withLock { $0 = DesktopStatus(busAddress: address, problem: "No notification server answered on the session bus.") }
            // What the old server showed is gone with it: a note posted again is a new alert.
            for notification in names.keys { libnotify.g_object_unref(notification) }
            shown = [:]
            names = [:]
            pages = [:]
            confirmations = []
        }
        availabilityChanges.yield(now)
    }

    private enum ConnectOutcome: @unchecked Sendable {
        case connected(DesktopStatus, OpaquePointer)
        case failed(DesktopStatus)
    }

    public var responses: AsyncStream<NoteResponse> { stream }

    /// From now on, every alert this process shows (but confirmations, which expire by
    /// themselves) has a default action, which a click on its body invokes: `handler` is given
    /// the app's page for it (``page(for:)``). It is no answer: nothing is recorded, and the
    /// alert's buttons answer as before.
    public static func onDefaultAction(_ handler: @escaping @Sendable (_ page: String) -> Void) {
        defaultAction.withLock { $0 = handler }
    }

    /// The app's page an alert opens: Doses for a dose's, Focus for a focus session's, Today for
    /// a summary, Reminders for the rest.
    public static func page(for note: Note) -> String {
        let category = note.category ?? ""
        if category == "x-chime.dose" { return "doses" }
        if category.hasPrefix("x-chime.focus") { return "focus" }
        if note.isSummary || category == "x-chime.summary" { return "today" }
        return "reminders"
    }

    public func post(_ note: Note) async throws -> PostedNote {
        let result: Result<UInt32, any Error> = await loop.run { [self] in show(note) }
        return PostedNote(id: note.id, serverID: try result.get(), via: "desktop")
    }

    public func withdraw(_ alert: PostedNote) async throws {
        let result: Result<Void, ChimeError> = await loop.run { [self] in
            var error: UnsafeMutablePointer<GError>?
            if let notification = shown[alert.id] {
                if libnotify.notify_notification_close(notification, &error) == 0 {
                    return .failure(ChimeError(.delivery, "The alert '\(alert.id)' could not be closed: \(SessionBus.message(error))"))
                }
            } else if let serverID = alert.serverID, chime_close_notification(connection, serverID, timeoutMs, &error) == 0 {
                return .failure(ChimeError(.delivery, "The alert '\(alert.id)' could not be closed: \(SessionBus.message(error))"))
            }
            return .success(())
        }
        try result.get()
    }

    /// Replaces the alert this notifier shows under `alert.id` in place by `confirmation` (same
    /// server id, no buttons, expiring by itself); once only (a second call for the same alert
    /// leaves the confirmation). An alert it does not show (closed already, or shown by another
    /// process) is never shown again: closed by its server id, where there is one.
    public func confirm(_ alert: PostedNote, with confirmation: Note) async throws {
        let result: Result<Void, any Error> = await loop.run { [self] in
            if let existing = shown[alert.id] {
                if confirmations.contains(existing) { return .success(()) }
                return show(confirmation, confirming: true).map { _ in () }
            }
            var error: UnsafeMutablePointer<GError>?
            if let serverID = alert.serverID, chime_close_notification(connection, serverID, timeoutMs, &error) == 0 {
                return .failure(ChimeError(.delivery, "The alert '\(alert.id)' could not be closed: \(SessionBus.message(error))"))
            }
            return .success(())
        }
        try result.get()
    }

    /// Replaces `alerts` (shown by a runner that is not running now) by `confirmation`, by their
    /// server ids: what `chime dose take` and `chime done` do when no runner can. A server that
    /// no longer shows the id shows the confirmation as a new alert, which expires by itself.
    /// Bounded; nothing when no server runs.
    public static func confirm(_ alerts: [PostedNote], with confirmation: Withdrawal.Confirmation) async {
        let serverIDs = Array(Set(alerts.compactMap(\.serverID))).sorted()
        guard let last = serverIDs.last, case .success(let desktop) = await connect() else { return }
        // Only the latest is replaced; older ones (a recurring reminder's) are closed.
        await desktop.close(serverIDs: Array(serverIDs.dropLast()))
        let id = alerts.first?.id ?? "confirmation"
        let note = Note.confirmation(id: id, title: confirmation.title, body: confirmation.body, at: Date())
        _ = await desktop.loop.run { [desktop] in desktop.show(note, confirming: true, replacing: last) }
    }

    /// Closes `alerts` (shown by a runner that is not running now) by their server ids: the
    /// one helper a command uses when no runner can withdraw them. Bounded; nothing when no
    /// server runs.
    public static func close(_ alerts: [PostedNote]) async {
        let serverIDs = alerts.compactMap(\.serverID)
        guard !serverIDs.isEmpty, case .success(let desktop) = await connect() else { return }
        await desktop.close(serverIDs: serverIDs)
    }

    /// Closes alerts by their server ids, from any process.
    public func close(serverIDs: [UInt32]) async {
        await loop.run { [self] in
            for id in serverIDs {
                var error: UnsafeMutablePointer<GError>?
                if chime_close_notification(connection, id, timeoutMs, &error) == 0 { _ = SessionBus.message(error) }
            }
        }
    }

    // MARK: - On the GLib thread

    /// Shows `note`, replacing in place the alert shown under its id (or, with `replacing`, the
    /// server's alert of that id, shown by another process). A `confirming` note's closing is
    /// not told on ``responses``.
    private func show(_ note: Note, confirming: Bool = false, replacing serverID: UInt32? = nil) -> Result<UInt32, any Error> {
        var error: UnsafeMutablePointer<GError>?
        // A server that left (or never came) fails here in milliseconds, not in 2 × 25 s.
        guard let owner = chime_name_owner(connection, "org.freedesktop.Notifications", timeoutMs, &error) else {
            _ = SessionBus.message(error)
            // Following the name and the watch saw it go (or never come): its next owner is told
            // on `availability`, after this (same thread), so wait for it. (Owned as far as the
            // watch knows: a failed call, retried after its backoff.)
            if follows && !present { return .failure(NotifierUnavailable("no notification server on the session bus")) }
            return .failure(
                ChimeError(.delivery, "No notification server answered on the session bus. Start one, or run with --notifier console.")
            )
        }
        libnotify.g_free(owner)
        let status = status
        // The summary is plain text in the Desktop Notifications specification (markup is for
        // the body only): servers show it as it is or escape it themselves (dunst, mako, LXQt),
        // so it goes as typed; escaping it here would show "Tea &amp; biscuits".
        let title = note.title
        let markup = status.capabilities.contains("body-markup")
        var plainBody = note.body
        if let answer = note.answerInstead, !note.actions.isEmpty, !status.capabilities.contains("actions") {
            // No buttons on this server: say which commands answer the alert.
            plainBody += (plainBody.isEmpty ? "" : "\n") + answer
        }
        let body = markup ? Self.escapeMarkup(plainBody) : plainBody
        let notification: UnsafeMutablePointer<NotifyNotification>
        if let existing = shown[note.id] {
            // Replaced in place: the hints are the new note's only (a live note's `transient`
            // must not stay on the alert that replaces it).
            libnotify.notify_notification_clear_hints(existing)
            _ = libnotify.notify_notification_update(existing, title, body, note.icon)
            notification = existing
        } else {
            notification = libnotify.notify_notification_new(title, body, note.icon)!  // a GObject: never NULL
            let me = Unmanaged.passUnretained(self).toOpaque()
            chime_connect_closed(
                notification,
                { notification, data in
                    guard let notification, let data else { return }
                    Unmanaged<LibnotifyNotifier>.fromOpaque(data).takeUnretainedValue().closed(notification)
                },
                me
            )
            if let serverID { chime_notification_set_server_id(notification, serverID) }
        }
        let urgency: NotifyUrgency =
            switch note.urgency {
            case .low: NOTIFY_URGENCY_LOW
            case .normal: NOTIFY_URGENCY_NORMAL
            case .critical: NOTIFY_URGENCY_CRITICAL
            }
        libnotify.notify_notification_set_urgency(notification, urgency)
        if let timeout = note.timeout {
            let ms = timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000
            libnotify.notify_notification_set_timeout(notification, Int32(clamping: max(ms, 1)))
        } else {
            // Sticky and critical alerts stay until answered (persistent); the rest as the server decides.
            let persistent = note.sticky || note.urgency == .critical
            libnotify.notify_notification_set_timeout(notification, persistent ? NOTIFY_EXPIRES_NEVER : NOTIFY_EXPIRES_DEFAULT)
        }
        libnotify.notify_notification_set_category(notification, note.category ?? (note.isSummary ? "x-chime.summary" : "x-chime.reminder"))
        libnotify.notify_notification_set_hint_string(notification, "desktop-entry", ApplicationID.current)
        // Kept on screen after a button is pressed (`resident`), so that Chime can replace it by
        // what the answer recorded (``confirm(_:with:)``) rather than the server dropping it.
        if note.sticky || !note.actions.isEmpty {
            libnotify.notify_notification_set_hint(notification, "resident", libnotify.g_variant_new_boolean(1))
        }
        if note.transient { libnotify.notify_notification_set_hint(notification, "transient", libnotify.g_variant_new_boolean(1)) }
        // A sound: the spec's sound-name hint on a server that plays sounds, else a console bell (below).
        let playsSound = status.capabilities.contains("sound")
        if let sound = note.sound, playsSound { libnotify.notify_notification_set_hint_string(notification, "sound-name", sound) }
        if let progress = note.progress {
            libnotify.notify_notification_set_hint_int32(notification, "value", Int32(min(max(progress, 0), 100)))
        }
        for (key, value) in note.hints.sorted(by: { $0.key < $1.key }) {
            libnotify.notify_notification_set_hint_string(notification, key, value)
        }
        libnotify.notify_notification_clear_actions(notification)
        pages[note.id] = nil
        if status.capabilities.contains("actions") {
            let me = Unmanaged.passUnretained(self).toOpaque()
            for action in note.actions {
                libnotify.notify_notification_add_action(
                    notification,
                    action.key,
                    action.label,
                    { notification, action, data in
                        guard let notification, let action, let data else { return }
                        Unmanaged<LibnotifyNotifier>.fromOpaque(data).takeUnretainedValue().invoked(notification, String(cString: action))
                    },
                    me,
                    nil
                )
            }
            // The body's click: no button, no answer (``onDefaultAction(_:)``).
            // (A note with a "default" of its own keeps it.)
            if !confirming, Self.defaultAction.withLock({ $0 }) != nil, !note.actions.contains(where: { $0.key == "default" }) {
                pages[note.id] = Self.page(for: note)
                libnotify.notify_notification_add_action(
                    notification,
                    "default",
                    "Open Chime",
                    { notification, action, data in
                        guard let notification, let action, let data else { return }
                        Unmanaged<LibnotifyNotifier>.fromOpaque(data).takeUnretainedValue().invoked(notification, String(cString: action))
                    },
                    me,
                    nil
                )
            }
        }
        guard libnotify.notify_notification_show(notification, &error) != 0 else {
            let message = SessionBus.message(error)
            if shown[note.id] == nil { libnotify.g_object_unref(notification) }
            return .failure(ChimeError(.delivery, "The notification server did not show the alert: \(message)"))
        }
        shown[note.id] = notification
        names[notification] = note.id
        if confirming { confirmations.insert(notification) } else { confirmations.remove(notification) }
        if note.sound != nil && !playsSound { ConsoleBell.ring() }
        return .success(chime_notification_server_id(notification))
    }

    private func closed(_ notification: UnsafeMutablePointer<NotifyNotification>) {
        guard let id = names.removeValue(forKey: notification) else { return }
        shown[id] = nil
        pages[id] = nil
        // A confirmation that expired or was closed: nothing was answered.
        let answered = confirmations.remove(notification) == nil
        let reason: NoteResponse.CloseReason =
            switch libnotify.notify_notification_get_closed_reason(notification) {
            case 1: .expired
            case 2: .dismissed
            case 3: .closedByCall
            default: .undefined
            }
        if answered { responder.yield(NoteResponse(noteID: id, kind: .closed(reason))) }
        // Not inside its own signal emission: release it on the next turn of the loop.
        let pointer = UInt(bitPattern: notification)
        loop.enqueue { libnotify.g_object_unref(UnsafeMutableRawPointer(bitPattern: pointer)) }
    }

    private func invoked(_ notification: UnsafeMutablePointer<NotifyNotification>, _ action: String) {
        guard let id = names[notification] else { return }
        if action == "default", let page = pages[id] {
            // Opens the app; the alert stays unanswered.
            Self.defaultAction.withLock { $0 }?(page)
            return
        }
        responder.yield(NoteResponse(noteID: id, kind: .action(action)))
    }

    /// Text shown literally by a server that reads markup: the five XML entities. (GLib's
    /// g_markup_escape_text does the same but hands back memory to free.)
    static func escapeMarkup(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            default: out.append(character)
            }
        }
        return out
    }
}

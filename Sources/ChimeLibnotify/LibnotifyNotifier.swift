import CLibnotify
import ChimeCore
import Foundation

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
/// `@unchecked Sendable`: its mutable state (`shown`, `names`) is touched only on the GLib
/// thread, through ``GLibThread/run(_:)``.
public final class LibnotifyNotifier: Notifier, @unchecked Sendable {
    public let status: DesktopStatus
    private let loop: GLibThread
    private let connection: OpaquePointer
    private let timeoutMs: Int32
    private let stream: AsyncStream<NoteResponse>
    private let responder: AsyncStream<NoteResponse>.Continuation
    private var shown: [String: UnsafeMutablePointer<NotifyNotification>] = [:]
    private var names: [UnsafeMutablePointer<NotifyNotification>: String] = [:]

    private init(status: DesktopStatus, loop: GLibThread, connection: OpaquePointer, timeoutMs: Int32) {
        self.status = status
        self.loop = loop
        self.connection = connection
        self.timeoutMs = timeoutMs
        (stream, responder) = AsyncStream.makeStream(of: NoteResponse.self)
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
    /// - Returns: the notifier, or the status saying what is missing (no bus, no server).
    public static func connect(appName: String = "Chime", timeout: Duration = .seconds(1)) async -> Result<LibnotifyNotifier, DesktopStatus>
    {
        guard let address = SessionBus.address() else {
            return .failure(
                DesktopStatus(
                    problem:
                        "No session bus: DBUS_SESSION_BUS_ADDRESS is not set and $XDG_RUNTIME_DIR/bus does not exist. Run with --notifier console."
                )
            )
        }
        let timeoutMs = Int32(timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
        let loop = GLibThread(name: "chime-glib")
        let outcome: ConnectOutcome = await loop.run {
            var error: UnsafeMutablePointer<GError>?
            guard let connection = g_bus_get_sync(G_BUS_TYPE_SESSION, nil, &error) else {
                return .failed(
                    DesktopStatus(
                        busAddress: address,
                        problem: "The session bus at \(address) did not answer: \(SessionBus.message(error)). Run with --notifier console."
                    )
                )
            }
            var status = DesktopStatus(busAddress: address)
            guard let owner = chime_name_owner(connection, "org.freedesktop.Notifications", timeoutMs, &error) else {
                _ = SessionBus.message(error)
                status.problem = "No notification server answered on the session bus. Start one, or run with --notifier console."
                g_object_unref(UnsafeMutableRawPointer(connection))
                return .failed(status)
            }
            g_free(owner)
            let info = SessionBus.strings(chime_server_information(connection, timeoutMs, &error))
            if info.count == 4 {
                (status.serverName, status.serverVendor, status.serverVersion, status.specVersion) = (info[0], info[1], info[2], info[3])
            } else {
                _ = SessionBus.message(error)
            }
            status.capabilities = SessionBus.strings(chime_server_capabilities(connection, timeoutMs, &error))
            // The first libnotify call, on this thread: its signals come to this thread's loop.
            guard notify_init(appName) != 0 else {
                status.problem = "libnotify could not be initialised"
                return .failed(status)
            }
            return .connected(status, connection)
        }
        switch outcome {
        case .failed(let status):
            return .failure(status)
        case .connected(let status, let connection):
            return .success(LibnotifyNotifier(status: status, loop: loop, connection: connection, timeoutMs: timeoutMs))
        }
    }

    private enum ConnectOutcome: @unchecked Sendable {
        case connected(DesktopStatus, OpaquePointer)
        case failed(DesktopStatus)
    }

    public var responses: AsyncStream<NoteResponse> { stream }

    public func post(_ note: Note) async throws -> PostedNote {
        let result: Result<UInt32, ChimeError> = await loop.run { [self] in show(note) }
        return PostedNote(id: note.id, serverID: try result.get(), via: "desktop")
    }

    public func withdraw(_ alert: PostedNote) async throws {
        let result: Result<Void, ChimeError> = await loop.run { [self] in
            var error: UnsafeMutablePointer<GError>?
            if let notification = shown[alert.id] {
                if notify_notification_close(notification, &error) == 0 {
                    return .failure(ChimeError(.delivery, "The alert '\(alert.id)' could not be closed: \(SessionBus.message(error))"))
                }
            } else if let serverID = alert.serverID, chime_close_notification(connection, serverID, timeoutMs, &error) == 0 {
                return .failure(ChimeError(.delivery, "The alert '\(alert.id)' could not be closed: \(SessionBus.message(error))"))
            }
            return .success(())
        }
        try result.get()
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

    private func show(_ note: Note) -> Result<UInt32, ChimeError> {
        var error: UnsafeMutablePointer<GError>?
        // A server that left (or never came) fails here in milliseconds, not in 2 × 25 s.
        guard let owner = chime_name_owner(connection, "org.freedesktop.Notifications", timeoutMs, &error) else {
            _ = SessionBus.message(error)
            return .failure(
                ChimeError(.delivery, "No notification server answered on the session bus. Start one, or run with --notifier console.")
            )
        }
        g_free(owner)
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
            notify_notification_update(existing, title, body, note.icon)
            notification = existing
        } else {
            notification = notify_notification_new(title, body, note.icon)
            let me = Unmanaged.passUnretained(self).toOpaque()
            chime_connect_closed(
                notification,
                { notification, data in
                    guard let notification, let data else { return }
                    Unmanaged<LibnotifyNotifier>.fromOpaque(data).takeUnretainedValue().closed(notification)
                },
                me
            )
        }
        let urgency: NotifyUrgency =
            switch note.urgency {
            case .low: NOTIFY_URGENCY_LOW
            case .normal: NOTIFY_URGENCY_NORMAL
            case .critical: NOTIFY_URGENCY_CRITICAL
            }
        notify_notification_set_urgency(notification, urgency)
        if let timeout = note.timeout {
            let ms = timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000
            notify_notification_set_timeout(notification, Int32(clamping: max(ms, 1)))
        } else {
            // Sticky and critical alerts stay until answered (persistent); the rest as the server decides.
            let persistent = note.sticky || note.urgency == .critical
            notify_notification_set_timeout(notification, persistent ? NOTIFY_EXPIRES_NEVER : NOTIFY_EXPIRES_DEFAULT)
        }
        notify_notification_set_category(notification, note.category ?? (note.isSummary ? "x-chime.summary" : "x-chime.reminder"))
        notify_notification_set_hint_string(notification, "desktop-entry", "chime")
        if note.sticky { notify_notification_set_hint(notification, "resident", g_variant_new_boolean(1)) }
        for (key, value) in note.hints.sorted(by: { $0.key < $1.key }) {
            notify_notification_set_hint_string(notification, key, value)
        }
        notify_notification_clear_actions(notification)
        if status.capabilities.contains("actions") {
            let me = Unmanaged.passUnretained(self).toOpaque()
            for action in note.actions {
                notify_notification_add_action(
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
        }
        guard notify_notification_show(notification, &error) != 0 else {
            let message = SessionBus.message(error)
            if shown[note.id] == nil { g_object_unref(notification) }
            return .failure(ChimeError(.delivery, "The notification server did not show the alert: \(message)"))
        }
        shown[note.id] = notification
        names[notification] = note.id
        return .success(chime_notification_server_id(notification))
    }

    private func closed(_ notification: UnsafeMutablePointer<NotifyNotification>) {
        guard let id = names.removeValue(forKey: notification) else { return }
        shown[id] = nil
        let reason: NoteResponse.CloseReason =
            switch notify_notification_get_closed_reason(notification) {
            case 1: .expired
            case 2: .dismissed
            case 3: .closedByCall
            default: .undefined
            }
        responder.yield(NoteResponse(noteID: id, kind: .closed(reason)))
        // Not inside its own signal emission: release it on the next turn of the loop.
        let pointer = UInt(bitPattern: notification)
        loop.enqueue { g_object_unref(UnsafeMutableRawPointer(bitPattern: pointer)) }
    }

    private func invoked(_ notification: UnsafeMutablePointer<NotifyNotification>, _ action: String) {
        guard let id = names[notification] else { return }
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

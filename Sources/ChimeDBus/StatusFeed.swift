internal import CGioLoader
import ChimeCore
import Foundation

/// libgio's functions, opened when the feed starts (see CGioLoader's header for why).
private var gio: chime_gio_api { chime_gio().pointee }

/// `chime status`: the runner's properties read over D-Bus, once or followed.
///
/// Followed, it is driven by the bus alone: `PropertiesChanged` from the runner, and
/// `NameOwnerChanged` for Chime's name (a runner gone, or one started: its properties are read
/// again with `GetAll`). Nothing is polled; the only timer is at the next instant a line would
/// change by the clock (``StatusLine/nextBoundary(_:now:)``: a minute of a countdown). Its calls
/// never start a runner by D-Bus activation (`G_DBUS_CALL_FLAGS_NO_AUTO_START`): a status bar
/// only watches.
///
/// `@unchecked Sendable`: after ``follow(address:format:zone:write:)`` sets it up, everything
/// runs on the feed's GLib thread.
public final class StatusFeed: @unchecked Sendable {
    private let connection: OpaquePointer
    private let thread: MainLoopThread
    private let format: StatusFormat
    private let zone: TimeZone
    private let write: @Sendable (String) -> Void
    private var properties: [String: BusValue] = [:]
    private var runner = false
    private var lastLine: String?
    private var timer: UnsafeMutablePointer<GSource>?

    private init(
        connection: OpaquePointer,
        thread: MainLoopThread,
        format: StatusFormat,
        zone: TimeZone,
        write: @escaping @Sendable (String) -> Void
    ) {
        self.connection = connection
        self.thread = thread
        self.format = format
        self.zone = zone
        self.write = write
    }

    /// The status now (no runner: ``StatusSnapshot/noRunner``).
    public static func read(address: String) throws(ChimeError) -> StatusSnapshot {
        let connection = try connect(address)
        defer { gio.g_object_unref(UnsafeMutableRawPointer(connection)) }
        return getAll(connection).map(snapshot) ?? .noRunner
    }

    /// Follows the status: `write` is given a line at once, then one for each change of the
    /// line (on the feed's thread). Returns once it is set up; the feed runs until the process ends.
    @discardableResult
    public static func follow(
        address: String,
        format: StatusFormat,
        zone: TimeZone = .current,
        write: @escaping @Sendable (String) -> Void
    ) throws(ChimeError) -> StatusFeed {
        try open()
        let thread = MainLoopThread.onGioGLib(name: "chime-status")
        let connected: Result<UInt, ChimeError> = thread.runAndWait {
            do throws(ChimeError) {
                return .success(UInt(bitPattern: try connect(address)))
            } catch {
                return .failure(error)
            }
        }
        let connection = OpaquePointer(bitPattern: try connected.get())!
        let feed = StatusFeed(connection: connection, thread: thread, format: format, zone: zone, write: write)
        thread.runAndWait { feed.start() }
        return feed
    }

    /// The properties of `GetAll` (or of `PropertiesChanged`, merged) as a status.
    public static func snapshot(_ properties: [String: BusValue]) -> StatusSnapshot {
        func item(_ value: BusValue?) -> StatusSnapshot.Item? {
            guard case .dictionary(let fields) = value, case .string(let id) = fields["id"], case .int64(let due) = fields["due_us"] else {
                return nil
            }
            let title = if case .string(let title) = fields["title"] { title } else { id }
            return StatusSnapshot.Item(id: id, title: title, due: date(due))
        }
        var status = StatusSnapshot(next: item(properties["Next"]), dose: item(properties["NextDose"]))
        if case .dictionary(let focus) = properties["Focus"], case .string(let state) = focus["state"] {
            if state == "active", case .int64(let end) = focus["end_us"] {
                status.focus = .active(end: date(end))
            } else if state == "paused", case .int64(let remaining) = focus["remaining_s"] {
                status.focus = .paused(remaining: Int(remaining))
            }
        }
        // The session's own reminder (its end) is the focus countdown already.
        if status.focus != .none, case .dictionary(let next) = properties["Next"], next["kind"] == .string(FocusKind.name) {
            status.next = nil
        }
        if case .dictionary(let quiet) = properties["Quiet"], quiet["active"] == .bool(true), case .int64(let until) = quiet["until_us"] {
            let reasons = if case .strings(let reasons) = quiet["reasons"] { reasons } else { [String]() }
            status.quiet = StatusSnapshot.Quiet(until: date(until), reasons: reasons)
        }
        return status
    }

    /// The kind of a focus session's reminder (ChimeFocus's `FocusTimer.kind`, which this
    /// module does not import).
    enum FocusKind { static let name = "focus" }

    private static func date(_ micros: Int64) -> Date { Date(timeIntervalSince1970: TimeInterval(micros) / 1e6) }

    // MARK: On the feed's thread

    private func start() {
        let data = Unmanaged.passRetained(self).toOpaque()
        _ = gio.g_dbus_connection_signal_subscribe(
            connection,
            "org.freedesktop.DBus",
            "org.freedesktop.DBus",
            "NameOwnerChanged",
            "/org/freedesktop/DBus",
            ChimeBus.name,
            G_DBUS_SIGNAL_FLAGS_NONE,
            { _, _, _, _, _, parameters, data in
                guard let parameters, let data else { return }
                let feed = Unmanaged<StatusFeed>.fromOpaque(data).takeUnretainedValue()
                let owner = gio.g_variant_get_child_value(parameters, 2)!
                defer { gio.g_variant_unref(owner) }
                feed.ownerChanged(hasOwner: gio.g_variant_get_string(owner, nil).map { $0.pointee != 0 } ?? false)
            },
            data,
            nil
        )
        _ = gio.g_dbus_connection_signal_subscribe(
            connection,
            ChimeBus.name,
            "org.freedesktop.DBus.Properties",
            "PropertiesChanged",
            ChimeBus.objectPath,
            ChimeBus.interface,
            G_DBUS_SIGNAL_FLAGS_NONE,
            { _, _, _, _, _, parameters, data in
                guard let parameters, let data else { return }
                let feed = Unmanaged<StatusFeed>.fromOpaque(data).takeUnretainedValue()
                let changed = gio.g_variant_get_child_value(parameters, 1)!
                defer { gio.g_variant_unref(changed) }
                feed.propertiesChanged(ChimeBusServer.readDictionary(changed))
            },
            data,
            nil
        )
        // The bus gone (the session ended): GDBus raises SIGTERM, which ends the feed with 0.
        gio.g_dbus_connection_set_exit_on_close(connection, 1)
        ownerChanged(hasOwner: true)
    }

    /// A runner came (read everything again) or went.
    private func ownerChanged(hasOwner: Bool) {
        let all = hasOwner ? Self.getAll(connection) : nil
        runner = all != nil
        properties = all ?? [:]
        show()
    }

    private func propertiesChanged(_ changed: [String: BusValue]) {
        // (A runner that signals is there, even if its name came before this feed asked.)
        runner = true
        properties.merge(changed) { _, new in new }
        show()
    }

    /// Writes the line when it differs from the last one, and sets the timer for the next
    /// instant it would change by the clock.
    private func show() {
        let status = runner ? Self.snapshot(properties) : .noRunner
        let now = Date()
        let line = StatusLine.render(status, format: format, now: now, zone: zone)
        if line != lastLine {
            lastLine = line
            write(line)
        }
        if let timer {
            gio.g_source_destroy(timer)
            gio.g_source_unref(timer)
            self.timer = nil
        }
        guard let boundary = StatusLine.nextBoundary(status, now: now) else { return }
        // A few milliseconds past the boundary: the minute has turned when it fires.
        let milliseconds = max(0, boundary.timeIntervalSince(now) * 1000).rounded(.up) + 5
        let source = gio.g_timeout_source_new(guint(min(milliseconds, Double(UInt32.max))))!
        gio.g_source_set_callback(
            source,
            { data in
                let feed = Unmanaged<StatusFeed>.fromOpaque(data!).takeUnretainedValue()
                if let timer = feed.timer {
                    feed.timer = nil
                    gio.g_source_unref(timer)
                }
                feed.show()
                return 0  // G_SOURCE_REMOVE
            },
            Unmanaged.passUnretained(self).toOpaque(),
            nil
        )
        _ = gio.g_source_attach(source, thread.context)
        timer = source
    }

    // MARK: The bus

    private static func open() throws(ChimeError) {
        if let problem = chime_gio_open() {
            throw ChimeError(.delivery, "libgio could not be loaded: " + String(cString: problem))
        }
    }

    private static func connect(_ address: String) throws(ChimeError) -> OpaquePointer {
        try open()
        var error: UnsafeMutablePointer<GError>?
        let flags = GDBusConnectionFlags(
            rawValue: G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT.rawValue | G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION.rawValue
        )
        guard let connection = gio.g_dbus_connection_new_for_address_sync(address, flags, nil, nil, &error) else {
            throw ChimeError(.delivery, "cannot connect to the session bus: " + ChimeBusServer.message(error))
        }
        return connection
    }

    /// The runner's properties, or nil when no runner owns the name (never starting one).
    private static func getAll(_ connection: OpaquePointer) -> [String: BusValue]? {
        guard
            case .success(let reply) = ChimeBusServer.call(
                connection,
                ChimeBus.name,
                ChimeBus.objectPath,
                "org.freedesktop.DBus.Properties",
                "GetAll",
                ChimeBusServer.tuple([ChimeBusServer.variant(.string(ChimeBus.interface))]),
                flags: G_DBUS_CALL_FLAGS_NO_AUTO_START
            )
        else { return nil }
        defer { gio.g_variant_unref(reply) }
        let all = gio.g_variant_get_child_value(reply, 0)!
        defer { gio.g_variant_unref(all) }
        return ChimeBusServer.readDictionary(all)
    }
}

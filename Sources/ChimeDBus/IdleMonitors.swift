internal import CGioLoader
import ChimeCore
import ChimeFocus
import Foundation
import Synchronization

/// libgio's functions (see CGioLoader's header).
private var gio: chime_gio_api { chime_gio().pointee }

/// The desktop's idle sources, found in this order (``detect(environment:)``): GNOME's
/// `org.gnome.Mutter.IdleMonitor` (watches: no polling), `org.freedesktop.ScreenSaver`'s
/// `GetSessionIdleTime` (KDE and others: polled, see ``ScreenSaverIdleMonitor``), and logind's
/// `IdleHint` on the session's object (the system bus: a signal). Each runs on a GLib loop of
/// its own thread, where its signals and timers come; nothing runs while it is not watched.
public enum IdleMonitors {
    /// The session bus's address: `DBUS_SESSION_BUS_ADDRESS`, else `$XDG_RUNTIME_DIR/bus`.
    static func sessionAddress(_ environment: [String: String]) -> String? {
        SessionBusAddress.find(environment: environment, export: false)
    }

    /// The system bus's address: `CHIME_SYSTEM_BUS_ADDRESS` (tests point it at a private bus),
    /// else `DBUS_SYSTEM_BUS_ADDRESS` (as GIO reads it), else the standard socket.
    public static func systemAddress(_ environment: [String: String]) -> String {
        for name in ["CHIME_SYSTEM_BUS_ADDRESS", "DBUS_SYSTEM_BUS_ADDRESS"] {
            if let address = environment[name], !address.isEmpty { return address }
        }
        return "unix:path=/run/dbus/system_bus_socket"
    }

    /// What `chime doctor` says when none answers.
    public static let noneText = "none: focus sessions will not pause when you are away"

    /// The first source that answers, or nil (no bus, no libgio, or none of the three).
    public static func detect(environment: [String: String] = ProcessInfo.processInfo.environment) -> (any IdleSource)? {
        guard chime_gio_open() == nil else { return nil }
        let loop = MainLoopThread.onGioGLib(name: "chime-idle")
        let sessionAddress = sessionAddress(environment)
        let systemAddress = systemAddress(environment)
        let sessionID = environment["XDG_SESSION_ID"].flatMap { $0.isEmpty ? nil : $0 } ?? "auto"
        let found: Found? = loop.runAndWait {
            if let sessionAddress, let connection = connect(sessionAddress) {
                if MutterIdleMonitor.probe(connection) { return Found(kind: .mutter, connection: UInt(bitPattern: connection)) }
                for path in ScreenSaverIdleMonitor.paths where ScreenSaverIdleMonitor.probe(connection, path: path) {
                    return Found(kind: .screenSaver(path: path), connection: UInt(bitPattern: connection))
                }
                gio.g_object_unref(UnsafeMutableRawPointer(connection))
            }
            if let connection = connect(systemAddress) {
                if let path = LogindIdleMonitor.probe(connection, sessionID: sessionID) {
                    return Found(kind: .logind(path: path), connection: UInt(bitPattern: connection))
                }
                gio.g_object_unref(UnsafeMutableRawPointer(connection))
            }
            return nil
        }
        guard let found else { return nil }
        let connection = OpaquePointer(bitPattern: found.connection)!
        switch found.kind {
        case .mutter: return MutterIdleMonitor(connection: connection, loop: loop)
        case .screenSaver(let path): return ScreenSaverIdleMonitor(connection: connection, loop: loop, path: path)
        case .logind(let path): return LogindIdleMonitor(connection: connection, loop: loop, path: path)
        }
    }

    private struct Found: Sendable {
        enum Kind: Sendable {
            case mutter
            case screenSaver(path: String)
            case logind(path: String)
        }
        var kind: Kind
        var connection: UInt
    }

    static func connect(_ address: String) -> OpaquePointer? {
        var error: UnsafeMutablePointer<GError>?
        let flags = GDBusConnectionFlags(
            rawValue: G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT.rawValue | G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION.rawValue
        )
        let connection = gio.g_dbus_connection_new_for_address_sync(address, flags, nil, nil, &error)
        if connection == nil, let error { gio.g_error_free(error) }
        return connection
    }

    /// A method call on `connection` (1 s at most: a source that does not answer is none), its
    /// reply's first value read by `read`; nil when it fails. Never starts a service.
    static func call<T>(
        _ connection: OpaquePointer,
        _ destination: String,
        _ path: String,
        _ interface: String,
        _ method: String,
        _ arguments: [OpaquePointer] = [],
        read: (OpaquePointer) -> T?
    ) -> T? {
        guard
            case .success(let reply) = ChimeBusServer.call(
                connection,
                destination,
                path,
                interface,
                method,
                ChimeBusServer.tuple(arguments),
                flags: G_DBUS_CALL_FLAGS_NO_AUTO_START,
                timeoutMs: 1_000
            )
        else { return nil }
        defer { gio.g_variant_unref(reply) }
        guard gio.g_variant_n_children(reply) > 0 else { return nil }
        let value = gio.g_variant_get_child_value(reply, 0)!
        defer { gio.g_variant_unref(value) }
        return read(value)
    }

    static func uint64(_ value: OpaquePointer) -> UInt64? {
        String(cString: gio.g_variant_get_type_string(value)!) == "t" ? UInt64(gio.g_variant_get_uint64(value)) : nil
    }

    static func uint32(_ value: OpaquePointer) -> UInt32? {
        String(cString: gio.g_variant_get_type_string(value)!) == "u" ? UInt32(gio.g_variant_get_uint32(value)) : nil
    }

    /// A one-shot GLib timer on the current thread's context after `seconds`, calling `body`.
    static func timer(
        after seconds: Double,
        on loop: MainLoopThread,
        _ body: @escaping @Sendable () -> Void
    ) -> UnsafeMutablePointer<GSource> {
        let milliseconds = UInt32(min(max(0, seconds * 1_000).rounded(.up), Double(UInt32.max)))
        let source = gio.g_timeout_source_new(milliseconds)!
        gio.g_source_set_callback(
            source,
            { data in
                Unmanaged<Work>.fromOpaque(data!).takeUnretainedValue().body()
                return 0  // G_SOURCE_REMOVE
            },
            Unmanaged.passRetained(Work(body)).toOpaque(),
            { data in Unmanaged<Work>.fromOpaque(data!).release() }
        )
        _ = gio.g_source_attach(source, loop.context)
        return source
    }

    static func cancel(_ timer: UnsafeMutablePointer<GSource>?) {
        guard let timer else { return }
        gio.g_source_destroy(timer)
        gio.g_source_unref(timer)
    }

    final class Work: Sendable {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
}

/// What every source keeps: its connection, its loop, and the watch's state (touched on the
/// loop thread only, which `@unchecked Sendable` relies on).
class IdleMonitorBase: @unchecked Sendable {
    let connection: OpaquePointer
    let loop: MainLoopThread
    var handler: (@Sendable (IdleEvent) -> Void)?
    var thresholdMicros: Int64 = 0
    /// Whether ``IdleEvent/idle(idleMicros:)`` was told and ``IdleEvent/active`` not yet.
    var away = false
    var subscription: UInt32 = 0

    init(connection: OpaquePointer, loop: MainLoopThread) {
        self.connection = connection
        self.loop = loop
    }

    func watch(threshold: Duration, handler: @escaping @Sendable (IdleEvent) -> Void) {
        let micros = threshold.components.seconds * 1_000_000 + threshold.components.attoseconds / 1_000_000_000_000
        loop.enqueue { [self] in
            stopOnLoop()
            self.handler = handler
            thresholdMicros = max(1_000_000, micros)
            away = false
            startOnLoop()
        }
    }

    func unwatch() {
        loop.enqueue { [self] in stopOnLoop() }
    }

    func tell(_ event: IdleEvent) {
        switch event {
        case .idle: away = true
        case .active: away = false
        }
        handler?(event)
    }

    func startOnLoop() {}

    func stopOnLoop() {
        handler = nil
        if subscription != 0 {
            gio.g_dbus_connection_signal_unsubscribe(connection, guint(subscription))
            subscription = 0
        }
    }

    /// Subscribes to `member` of `interface` at `path` (from any sender: a well-known name's
    /// owner is not tracked by every GLib), calling `body` with the parameters on the loop.
    func subscribe(_ interface: String, _ member: String, path: String, arg0: String? = nil, _ body: @escaping (OpaquePointer) -> Void) {
        final class Box {
            let body: (OpaquePointer) -> Void
            init(_ body: @escaping (OpaquePointer) -> Void) { self.body = body }
        }
        subscription = UInt32(
            gio.g_dbus_connection_signal_subscribe(
                connection,
                nil,
                interface,
                member,
                path,
                arg0,
                G_DBUS_SIGNAL_FLAGS_NONE,
                { _, _, _, _, _, parameters, data in
                    guard let parameters, let data else { return }
                    Unmanaged<Box>.fromOpaque(data).takeUnretainedValue().body(parameters)
                },
                Unmanaged.passRetained(Box(body)).toOpaque(),
                { data in Unmanaged<Box>.fromOpaque(data!).release() }
            )
        )
    }
}

/// GNOME's `org.gnome.Mutter.IdleMonitor` at `/org/gnome/Mutter/IdleMonitor/Core`: an idle
/// watch at the threshold (`AddIdleWatch`), then a one-shot `AddUserActiveWatch` once idle;
/// both come as `WatchFired(id)`. No polling: between the person's comings and goings the
/// runner is not woken.
final class MutterIdleMonitor: IdleMonitorBase, IdleSource, @unchecked Sendable {
    let name = "GNOME Mutter IdleMonitor"
    static let bus = "org.gnome.Mutter.IdleMonitor"
    static let path = "/org/gnome/Mutter/IdleMonitor/Core"
    private var idleWatch: UInt32?
    private var activeWatch: UInt32?

    static func probe(_ connection: OpaquePointer) -> Bool { idletime(connection) != nil }

    static func idletime(_ connection: OpaquePointer) -> UInt64? {
        IdleMonitors.call(connection, bus, path, bus, "GetIdletime", read: IdleMonitors.uint64)
    }

    override func startOnLoop() {
        subscribe(Self.bus, "WatchFired", path: Self.path) { [weak self] parameters in
            let id = gio.g_variant_get_child_value(parameters, 0)!
            defer { gio.g_variant_unref(id) }
            guard let fired = IdleMonitors.uint32(id) else { return }
            self?.fired(fired)
        }
        let interval = gio.g_variant_new_uint64(guint64(thresholdMicros / 1_000))!
        idleWatch = IdleMonitors.call(connection, Self.bus, Self.path, Self.bus, "AddIdleWatch", [interval], read: IdleMonitors.uint32)
        // Idle already (the watch fires only when the idle time crosses the threshold).
        if let idle = Self.idletime(connection), Int64(idle) * 1_000 >= thresholdMicros { becameIdle(milliseconds: idle) }
    }

    private func fired(_ id: UInt32) {
        if id == idleWatch, !away {
            becameIdle(milliseconds: Self.idletime(connection) ?? UInt64(thresholdMicros / 1_000))
        } else if id == activeWatch {
            activeWatch = nil
            tell(.active)
        }
    }

    private func becameIdle(milliseconds: UInt64) {
        activeWatch = IdleMonitors.call(connection, Self.bus, Self.path, Self.bus, "AddUserActiveWatch", read: IdleMonitors.uint32)
        tell(.idle(idleMicros: Int64(milliseconds) * 1_000))
    }

    override func stopOnLoop() {
        super.stopOnLoop()
        for id in [idleWatch, activeWatch].compactMap({ $0 }) {
            _ = IdleMonitors.call(connection, Self.bus, Self.path, Self.bus, "RemoveWatch", [gio.g_variant_new_uint32(id)!]) { _ in true }
        }
        idleWatch = nil
        activeWatch = nil
    }
}

/// `org.freedesktop.ScreenSaver`'s `GetSessionIdleTime` (seconds; KDE and others), at
/// `/org/freedesktop/ScreenSaver` or `/ScreenSaver`. The interface has no watch and no signal
/// for idleness, so it is polled, only while watched (a session runs, or one is paused because
/// the person left) and coarsely: while the person is here, next when the idle time could first
/// reach the threshold (the threshold less the idle time read: at most one call per threshold
/// when they are busy); while they are away, every twentieth of the threshold (5 s to 30 s) to
/// notice them back.
final class ScreenSaverIdleMonitor: IdleMonitorBase, IdleSource, @unchecked Sendable {
    let name = "org.freedesktop.ScreenSaver"
    static let bus = "org.freedesktop.ScreenSaver"
    static let paths = ["/org/freedesktop/ScreenSaver", "/ScreenSaver"]
    let path: String
    private var timer: UnsafeMutablePointer<GSource>?
    private var lastSeconds: UInt32 = 0

    init(connection: OpaquePointer, loop: MainLoopThread, path: String) {
        self.path = path
        super.init(connection: connection, loop: loop)
    }

    static func probe(_ connection: OpaquePointer, path: String) -> Bool { idleSeconds(connection, path: path) != nil }

    static func idleSeconds(_ connection: OpaquePointer, path: String) -> UInt32? {
        IdleMonitors.call(connection, bus, path, bus, "GetSessionIdleTime", read: IdleMonitors.uint32)
    }

    /// While away: how often to look whether the person is back.
    var awayInterval: Double { min(30, max(5, Double(thresholdMicros) / 1e6 / 20)) }

    override func startOnLoop() { poll() }

    private func poll() {
        IdleMonitors.cancel(timer)
        timer = nil
        guard handler != nil else { return }
        let threshold = Double(thresholdMicros) / 1e6
        var next = threshold
        if let seconds = Self.idleSeconds(connection, path: path) {
            if !away, Double(seconds) >= threshold {
                tell(.idle(idleMicros: Int64(seconds) * 1_000_000))
            } else if away, seconds < lastSeconds || Double(seconds) < threshold {
                tell(.active)
            }
            lastSeconds = seconds
            next = away ? awayInterval : max(1, threshold - Double(seconds))
        }
        guard handler != nil else { return }
        timer = IdleMonitors.timer(after: next, on: loop) { [weak self] in self?.poll() }
    }

    override func stopOnLoop() {
        super.stopOnLoop()
        IdleMonitors.cancel(timer)
        timer = nil
    }
}

/// logind's `IdleHint` and `IdleSinceHint` on the session's object (`org.freedesktop.login1.Session`,
/// the system bus), followed by its `PropertiesChanged` signal. The desktop sets the hint after
/// its own delay; a threshold longer than that is a one-shot timer from `IdleSinceHint`, not
/// polling.
final class LogindIdleMonitor: IdleMonitorBase, IdleSource, @unchecked Sendable {
    let name = "logind IdleHint"
    static let bus = "org.freedesktop.login1"
    static let interface = "org.freedesktop.login1.Session"
    let path: String
    private var timer: UnsafeMutablePointer<GSource>?

    init(connection: OpaquePointer, loop: MainLoopThread, path: String) {
        self.path = path
        super.init(connection: connection, loop: loop)
    }

    /// The session's object path when its IdleHint reads: `GetSession(XDG_SESSION_ID or "auto")`
    /// (the caller's session), else the user's graphical session (`GetUser(uid)`'s `Display`: a
    /// runner started by the systemd user manager is in no session of its own).
    static func probe(_ connection: OpaquePointer, sessionID: String) -> String? {
        let manager = "org.freedesktop.login1.Manager"
        let own = IdleMonitors.call(
            connection,
            bus,
            "/org/freedesktop/login1",
            manager,
            "GetSession",
            [gio.g_variant_new_string(sessionID)!]
        ) {
            value in gio.g_variant_get_string(value, nil).map { String(cString: $0) }
        }
        if let own, hint(connection, path: own) != nil { return own }
        let user = IdleMonitors.call(connection, bus, "/org/freedesktop/login1", manager, "GetUser", [gio.g_variant_new_uint32(getuid())!])
        {
            value in gio.g_variant_get_string(value, nil).map { String(cString: $0) }
        }
        guard let user else { return nil }
        // Display: (so), the session's id and object path.
        let display = IdleMonitors.call(
            connection,
            bus,
            user,
            "org.freedesktop.DBus.Properties",
            "Get",
            [gio.g_variant_new_string("org.freedesktop.login1.User")!, gio.g_variant_new_string("Display")!]
        ) { boxed -> String? in
            guard let pair = gio.g_variant_get_variant(boxed) else { return nil }
            defer { gio.g_variant_unref(pair) }
            guard String(cString: gio.g_variant_get_type_string(pair)!) == "(so)" else { return nil }
            let path = gio.g_variant_get_child_value(pair, 1)!
            defer { gio.g_variant_unref(path) }
            return gio.g_variant_get_string(path, nil).map { String(cString: $0) }
        }
        guard let display, display != "/", hint(connection, path: display) != nil else { return nil }
        return display
    }

    /// IdleHint, and IdleSinceHint (µs of the wall clock).
    static func hint(_ connection: OpaquePointer, path: String) -> (idle: Bool, since: UInt64)? {
        func property(_ name: String) -> OpaquePointer? {
            IdleMonitors.call(
                connection,
                bus,
                path,
                "org.freedesktop.DBus.Properties",
                "Get",
                [gio.g_variant_new_string(interface)!, gio.g_variant_new_string(name)!]
            ) { boxed in gio.g_variant_get_variant(boxed) }
        }
        guard let idle = property("IdleHint") else { return nil }
        defer { gio.g_variant_unref(idle) }
        guard String(cString: gio.g_variant_get_type_string(idle)!) == "b" else { return nil }
        let since = property("IdleSinceHint")
        defer { if let since { gio.g_variant_unref(since) } }
        return (gio.g_variant_get_boolean(idle) != 0, since.flatMap(IdleMonitors.uint64) ?? 0)
    }

    override func startOnLoop() {
        subscribe("org.freedesktop.DBus.Properties", "PropertiesChanged", path: path, arg0: Self.interface) { [weak self] _ in
            self?.check()
        }
        check()
    }

    private func check() {
        IdleMonitors.cancel(timer)
        timer = nil
        guard handler != nil, let hint = Self.hint(connection, path: path) else { return }
        guard hint.idle else {
            if away { tell(.active) }
            return
        }
        guard !away else { return }
        let now = Date().timeIntervalSince1970 * 1e6
        let idleMicros = hint.since == 0 ? thresholdMicros : Int64(max(0, now - Double(hint.since)))
        if idleMicros >= thresholdMicros {
            tell(.idle(idleMicros: idleMicros))
        } else {
            timer = IdleMonitors.timer(after: Double(thresholdMicros - idleMicros) / 1e6, on: loop) { [weak self] in self?.check() }
        }
    }

    override func stopOnLoop() {
        super.stopOnLoop()
        IdleMonitors.cancel(timer)
        timer = nil
    }
}

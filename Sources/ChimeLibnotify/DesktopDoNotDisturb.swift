internal import CLibnotifyLoader
import ChimeCore
import Foundation

/// The desktop's own do-not-disturb, where Chime can read it.
///
/// What Chime does with it: nothing that gets around it. A notification server in do-not-disturb
/// already holds banners back and keeps the alerts (GNOME's message list, Plasma's history, dunst's
/// queue shown when unpaused), so Chime posts as usual, never raises an alert's urgency to get
/// through, and does not hold them a second time (that would show them twice over, once in the
/// server's list and once in Chime's summary). `chime doctor` and `chime quiet status` say what
/// they read, so that a person who misses an alert sees why.
public struct DesktopDoNotDisturb: Sendable, Hashable {
    /// One place read.
    public struct Source: Sendable, Hashable {
        /// `gnome` (org.gnome.desktop.notifications show-banners), `plasma` (the server's
        /// `Inhibited` property) or `dunst` (org.dunstproject.cmd0 `paused`).
        public var name: String
        /// Whether it holds banners back now.
        public var active: Bool
        /// What was read, for a person: "show-banners is false".
        public var detail: String
    }

    /// What could be read; empty when nothing could (no bus, a server with neither property).
    public var sources: [Source]

    /// True when any source holds banners back; nil when none could be read.
    public var active: Bool? { sources.isEmpty ? nil : sources.contains(where: \.active) }

    /// One line for `doctor` and `quiet status`.
    public var summary: String {
        guard !sources.isEmpty else { return "not readable here (GNOME show-banners, Plasma Inhibited, dunst paused)" }
        let state = active == true ? "on: the desktop holds banners back (Chime does not get around it)" : "off"
        return state + " (" + sources.map { "\($0.name): \($0.detail)" }.joined(separator: "; ") + ")"
    }

    /// Reads every source there is, each D-Bus call bounded by `timeout`; never starts a bus or a
    /// server.
    ///
    /// GNOME's setting is read through GSettings only on a GNOME desktop (`XDG_CURRENT_DESKTOP`)
    /// or when `GSETTINGS_BACKEND` names a backend (tests use `keyfile` under their own
    /// `XDG_CONFIG_HOME`): elsewhere GLib would fall back to a memory backend and say so on stderr.
    public static func read(
        timeout: Duration = .seconds(1),
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> DesktopDoNotDisturb {
        var sources: [Source] = []
        // Without libnotify (and so GIO) neither setting can be read, and no alert reaches the
        // desktop either: the runner's console fallback and `chime doctor` say so.
        guard Libnotify.open() == nil else { return DesktopDoNotDisturb(sources: sources) }
        let desktop = environment["XDG_CURRENT_DESKTOP"]?.uppercased() ?? ""
        if desktop.contains("GNOME") || !(environment["GSETTINGS_BACKEND"] ?? "").isEmpty, let banners = gnomeShowBanners() {
            sources.append(Source(name: "gnome", active: !banners, detail: "show-banners is \(banners)"))
        }
        if SessionBus.address(environment: environment) != nil {
            let timeoutMs = Int32(timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
            var error: UnsafeMutablePointer<GError>?
            if let connection = libnotify.g_bus_get_sync(G_BUS_TYPE_SESSION, nil, &error) {
                if let inhibited = boolProperty(connection, interface: "org.freedesktop.Notifications", name: "Inhibited", timeoutMs) {
                    sources.append(Source(name: "plasma", active: inhibited, detail: "Inhibited is \(inhibited)"))
                }
                if let paused = boolProperty(connection, interface: "org.dunstproject.cmd0", name: "paused", timeoutMs) {
                    sources.append(Source(name: "dunst", active: paused, detail: "paused is \(paused)"))
                }
                libnotify.g_object_unref(UnsafeMutableRawPointer(connection))
            } else {
                _ = SessionBus.message(error)
            }
        }
        return DesktopDoNotDisturb(sources: sources)
    }

    /// `org.gnome.desktop.notifications show-banners`, or nil when the schema is not installed.
    static func gnomeShowBanners() -> Bool? {
        // Looked up first: g_settings_new aborts the process for a schema that is not installed.
        guard let source = libnotify.g_settings_schema_source_get_default(),
            let schema = libnotify.g_settings_schema_source_lookup(source, "org.gnome.desktop.notifications", 1)
        else { return nil }
        defer { libnotify.g_settings_schema_unref(schema) }
        guard libnotify.g_settings_schema_has_key(schema, "show-banners") != 0,
            let settings = libnotify.g_settings_new_full(schema, nil, nil)
        else {
            return nil
        }
        defer { libnotify.g_object_unref(UnsafeMutableRawPointer(settings)) }
        return libnotify.g_settings_get_boolean(settings, "show-banners") != 0
    }

    /// A boolean property of the notification server's object, or nil when it has none (or
    /// did not answer in time).
    static func boolProperty(_ connection: OpaquePointer, interface: String, name: String, _ timeoutMs: Int32) -> Bool? {
        // Non-variadic GVariant builders: Swift cannot call g_variant_new("(ss)", …).
        var items: [OpaquePointer?] = [libnotify.g_variant_new_string(interface), libnotify.g_variant_new_string(name)]
        let parameters = items.withUnsafeMutableBufferPointer { libnotify.g_variant_new_tuple($0.baseAddress, 2) }
        var error: UnsafeMutablePointer<GError>?
        guard
            let reply = libnotify.g_dbus_connection_call_sync(
                connection,
                "org.freedesktop.Notifications",
                "/org/freedesktop/Notifications",
                "org.freedesktop.DBus.Properties",
                "Get",
                parameters,
                nil,
                G_DBUS_CALL_FLAGS_NO_AUTO_START,
                timeoutMs,
                nil,
                &error
            )
        else {
            _ = SessionBus.message(error)
            return nil
        }
        defer { libnotify.g_variant_unref(reply) }
        guard String(cString: libnotify.g_variant_get_type_string(reply)!) == "(v)",
            let boxed = libnotify.g_variant_get_child_value(reply, 0)
        else {
            return nil
        }
        defer { libnotify.g_variant_unref(boxed) }
        guard let value = libnotify.g_variant_get_variant(boxed) else { return nil }
        defer { libnotify.g_variant_unref(value) }
        guard String(cString: libnotify.g_variant_get_type_string(value)!) == "b" else { return nil }
        return libnotify.g_variant_get_boolean(value) != 0
    }
}

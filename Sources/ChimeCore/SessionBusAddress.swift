import Foundation

/// The session bus, found without ever letting GLib autolaunch one: the desktop notifier and
/// the D-Bus service both look for it this way.
///
/// With `DBUS_SESSION_BUS_ADDRESS` unset and `DISPLAY` set, GLib starts a bus and a server of
/// its own and leaves them behind: Chime uses the address given, or `$XDG_RUNTIME_DIR/bus`, or
/// nothing.
public enum SessionBusAddress {
    /// The address to use, or nil. `export`: also set `DBUS_SESSION_BUS_ADDRESS` to the runtime
    /// directory's bus when that is the one found (for libnotify, which asks GLib for the bus).
    public static func find(environment: [String: String] = ProcessInfo.processInfo.environment, export: Bool = true) -> String? {
        if let address = environment["DBUS_SESSION_BUS_ADDRESS"], !address.isEmpty { return address }
        if let runtime = environment["XDG_RUNTIME_DIR"], FileManager.default.fileExists(atPath: runtime + "/bus") {
            let address = "unix:path=\(runtime)/bus"
            if export { setenv("DBUS_SESSION_BUS_ADDRESS", address, 1) }
            return address
        }
        return nil
    }
}

import ChimeCore
import Foundation

/// Who called a method of the service, as far as it matters: whose reminders it sees.
///
/// A program in a Flatpak sandbox is the app its sandbox names (`/proc/PID/root/.flatpak-info`,
/// written by Flatpak, not by the app): it schedules under that id only, and sees and touches
/// only that app's reminders. A program outside a sandbox is taken at its word, as GNotification
/// and the notification portal take it: it schedules under the `app-id` it gives; when it owns
/// the bus name of an app id that pending reminders have (as a `GApplication` owns its id), it
/// sees only those; otherwise, like the `chime` command line, it sees all.
public struct BusCaller: Sendable, Hashable {
    /// The app ids whose reminders it sees and touches; nil: all of them.
    public var scope: Set<String>?
    /// The app id its sandbox names; nil outside a sandbox.
    public var sandboxAppID: String?

    public init(scope: Set<String>?, sandboxAppID: String? = nil) {
        self.scope = scope
        self.sandboxAppID = sandboxAppID
    }

    /// Sees everything (the command line's view; an unsandboxed program naming no app).
    public static let everyone = BusCaller(scope: nil)

    /// A Flatpak app: only its own reminders.
    public static func sandboxed(_ appID: String) -> BusCaller { BusCaller(scope: [appID], sandboxAppID: appID) }

    /// Whether it may see a reminder scheduled under `appID` (nil: by the command line).
    public func sees(_ appID: String?) -> Bool {
        guard let scope else { return true }
        return appID.map(scope.contains) ?? false
    }
}

/// A call refused before it ran: `org.freedesktop.DBus.Error.AccessDenied` (a caller of another
/// user), or the store's error while finding out who called.
public struct BusRefusal: Error, Sendable, Hashable {
    public var name: String
    public var message: String

    public static func accessDenied(_ message: String) -> BusRefusal {
        BusRefusal(name: "org.freedesktop.DBus.Error.AccessDenied", message: message)
    }
}

/// Flatpak's description of a sandbox: the keyfile `/.flatpak-info` inside it, which the
/// sandbox's processes cannot change. Its `[Application]` group's `name` is the app id.
public enum FlatpakInfo {
    /// The app id of the sandbox process `pid` runs in, read through `procRoot` (`/proc`):
    /// nil when the process is not in a Flatpak sandbox (no `.flatpak-info` at its root).
    public static func appID(pid: UInt32, procRoot: String = "/proc") -> String? {
        let path = procRoot + "/\(pid)/root/.flatpak-info"
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        return appID(keyfile: String(decoding: data.prefix(65_536), as: UTF8.self))
    }

    /// `name` of the `[Application]` group (a runtime's sandbox has `[Runtime]` instead: nil).
    public static func appID(keyfile: String) -> String? {
        DesktopKeyfile.value(of: "name", in: "Application", keyfile)
    }
}

/// The few keyfile reads the service needs (`.flatpak-info`, desktop entries): a key's value
/// in a group, as GLib's GKeyFile reads it (comments, blank lines, `key = value`).
enum DesktopKeyfile {
    static func value(of key: String, in group: String, _ text: String) -> String? {
        var current: String?
        for raw in text.split(whereSeparator: \.isNewline) {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { continue }
            if line.hasPrefix("[") && line.hasSuffix("]") {
                current = String(line.dropFirst().dropLast())
                continue
            }
            guard current == group, let equals = line.firstIndex(of: "=") else { continue }
            if line[..<equals].trimmingCharacters(in: .whitespaces) == key {
                return line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            }
        }
        return nil
    }
}

/// Desktop entries, as the XDG base directory and desktop entry specifications place them.
public enum DesktopEntries {
    /// The path of `appID.desktop`: the first found in `$XDG_DATA_HOME/applications`
    /// (`~/.local/share`), then each of `$XDG_DATA_DIRS` (`/usr/local/share:/usr/share`).
    public static func path(of appID: String, environment: [String: String]) -> String? {
        let home = environment["XDG_DATA_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? (environment["HOME"] ?? "") + "/.local/share"
        let dirs = (environment["XDG_DATA_DIRS"].flatMap { $0.isEmpty ? nil : $0 } ?? "/usr/local/share:/usr/share")
            .split(separator: ":").map(String.init).filter { $0.hasPrefix("/") }
        for directory in [home] + dirs {
            let path = directory + "/applications/" + appID + ".desktop"
            if FileManager.default.isReadableFile(atPath: path) { return path }
        }
        return nil
    }

    /// Whether the app's desktop entry says it is started by D-Bus activation
    /// (`DBusActivatable=true`): its actions can then be invoked on it while it is not running,
    /// as GNotification's are.
    public static func isDBusActivatable(_ appID: String, environment: [String: String]) -> Bool {
        guard let path = path(of: appID, environment: environment),
            let data = FileManager.default.contents(atPath: path)
        else { return false }
        return DesktopKeyfile.value(of: "DBusActivatable", in: "Desktop Entry", String(decoding: data, as: UTF8.self)) == "true"
    }
}

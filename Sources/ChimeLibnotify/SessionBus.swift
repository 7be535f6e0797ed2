internal import CLibnotifyLoader
import ChimeCore
import Foundation

/// libnotify's functions, and GLib's, GObject's and GIO's, opened on first use rather than at
/// every start of chime (see CLibnotifyLoader's header for why, with the figures). Only valid
/// once ``Libnotify/open()`` returned nil: every entry point of this module asks first.
var libnotify: chime_libnotify_api { chime_libnotify().pointee }

enum Libnotify {
    /// Opens libnotify once; nil, or why it cannot be used (the dynamic loader's words).
    static func open() -> String? {
        chime_libnotify_open().map { "libnotify could not be loaded: " + String(cString: $0) }
    }
}

/// What the desktop offers: the session bus, the notification server on it, its capabilities.
public struct DesktopStatus: Error, Sendable, Hashable {
    /// The session bus address in use, or nil when there is none.
    public var busAddress: String?
    /// Why the desktop cannot be used, or nil when it can.
    public var problem: String?
    /// What a person can do about `problem`, when it is not the usual (start a notification
    /// server): "Install the libnotify4 package" when libnotify cannot be loaded.
    public var remedy: String?
    public var serverName: String?
    public var serverVendor: String?
    public var serverVersion: String?
    public var specVersion: String?
    public var capabilities: [String] = []

    public var isAvailable: Bool { problem == nil }
}

/// The session bus (``SessionBusAddress``) and GLib's values as Swift's.
enum SessionBus {
    /// The address to use, exported for GLib, or nil.
    static func address(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        SessionBusAddress.find(environment: environment)
    }

    /// A GError's message, freeing it.
    static func message(_ error: UnsafeMutablePointer<GError>?) -> String {
        guard let error else { return "unknown error" }
        defer { libnotify.g_error_free(error) }
        return String(cString: error.pointee.message)
    }

    /// Strings from a NULL-terminated `gchar **`, freeing it.
    static func strings(_ vector: UnsafeMutablePointer<UnsafeMutablePointer<gchar>?>?) -> [String] {
        guard let vector else { return [] }
        defer { libnotify.g_strfreev(vector) }
        var result: [String] = []
        var index = 0
        while let item = vector[index] {
            result.append(String(cString: item))
            index += 1
        }
        return result
    }
}

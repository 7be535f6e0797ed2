import ChimeCore

/// Chime's name on the session bus, in one place: the interface, the object path and the
/// errors are derived from it. It is Chime's application id (ChimeCore's ``ApplicationID``): the
/// desktop entry's name and the alerts' `desktop-entry` hint. The desktop entry does not say
/// `DBusActivatable=true`: this name serves Reminders1, not org.freedesktop.Application.
public enum ChimeBus {
    /// The well-known name `chime run` owns on the session bus.
    public static let name = ApplicationID.current
    /// The reminders' interface.
    public static let interface = name + ".Reminders1"
    /// The object that serves it: the name with dots as slashes.
    public static let objectPath = "/" + name.split(separator: ".").joined(separator: "/")

    /// The D-Bus error name for a Chime error's kind: `<name>.Error.NotFound`, …
    public static func errorName(_ code: ChimeError.Code) -> String {
        let suffix =
            switch code {
            case .notFound: "NotFound"
            case .tooLate: "TooLate"
            case .usage: "Invalid"
            case .conflict: "Conflict"
            case .store: "Store"
            case .runnerRunning, .delivery, .config, .failure: "Failed"
            }
        return name + ".Error." + suffix
    }
}

import ChimeCore

/// Chime's name on the session bus, in one place: the interface, the object path and the
/// errors are derived from it. It is Chime's application id (ChimeCore's ``ApplicationID``): the
/// desktop entry's name and the alerts' `desktop-entry` hint. The desktop entry says
/// `DBusActivatable=true`: the object serves org.freedesktop.Application beside Reminders1, so a
/// launcher's Activate opens (or raises) the app.
public enum ChimeBus {
    /// The well-known name `chime run` owns on the session bus.
    public static let name = ApplicationID.current
    /// The reminders' interface.
    public static let interface = name + ".Reminders1"
    /// The object that serves it: the name with dots as slashes.
    public static let objectPath = "/" + name.split(separator: ".").joined(separator: "/")

    /// The Desktop Entry specification's interface for D-Bus activatable applications, served
    /// at ``objectPath`` beside ``interface``.
    public static let applicationInterface = "org.freedesktop.Application"
    /// The open app's own name (its single instance: the windows' executable owns it while a
    /// window is open), its object and interface, whose `Present(s page)` raises it at a page.
    public static let appName = name + ".App"
    public static let appObjectPath = objectPath + "/App"
    public static let appInterface = name + ".App1"

    /// org.freedesktop.Application as the Desktop Entry specification defines it.
    public static let applicationIntrospection = """
        <node>
          <interface name="org.freedesktop.Application">
            <method name="Activate">
              <arg type="a{sv}" name="platform_data" direction="in"/>
            </method>
            <method name="Open">
              <arg type="as" name="uris" direction="in"/>
              <arg type="a{sv}" name="platform_data" direction="in"/>
            </method>
            <method name="ActivateAction">
              <arg type="s" name="action_name" direction="in"/>
              <arg type="av" name="parameter" direction="in"/>
              <arg type="a{sv}" name="platform_data" direction="in"/>
            </method>
          </interface>
        </node>
        """

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

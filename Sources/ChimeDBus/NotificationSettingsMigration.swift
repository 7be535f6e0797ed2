internal import CGioLoader
import ChimeCore
import Foundation

/// libgio's functions (see CGioLoader's header for why they are opened with dlopen).
private var gio: chime_gio_api { chime_gio().pointee }

/// Carries a person's GNOME notification settings for Chime's old desktop id (`chime`, Chime
/// 0.2.0) over to ``ApplicationID/current``, once, when `chime run` starts: the package's
/// maintainer scripts cannot reach a person's settings, and the upgrade removes the old entry.
///
/// GNOME keeps them per application under the relocatable schema
/// `org.gnome.desktop.notifications.application` (``ApplicationID/gnomeSettingsPath(_:)``),
/// listing each in `org.gnome.desktop.notifications application-children`. The keys the person
/// set at the old path are copied to the new one when the new one has none of its own; the old
/// path and child are left as they are. What ran is recorded in ``markerName`` under
/// `$XDG_STATE_HOME/chime`, so it runs once.
///
/// KDE Plasma's settings (`~/.config/plasmanotifyrc`, group `[Applications][chime]`) are not
/// carried over: that file is Plasma's, written by its own settings module, and Plasma lists an
/// application without settings with its defaults; a person sets them again for "Chime".
public enum NotificationSettingsMigration {
    /// The marker file's name, under `$XDG_STATE_HOME/chime`.
    public static let markerName = "notification-settings-carried-over"
    static let schemaID = "org.gnome.desktop.notifications"

    /// What a start found.
    public enum Outcome: Sendable, Equatable {
        /// Not a GNOME session (nor `GSETTINGS_BACKEND` set), or GNOME's schema is not installed,
        /// or libgio cannot be loaded: nothing read, tried again at the next start.
        case notApplicable
        /// The marker says it ran already.
        case ranBefore
        /// Nothing set for the old id, or the new id has settings of its own: marked, nothing written.
        case nothingToCarry
        /// These keys were copied (sorted).
        case carried([String])
        /// GSettings refused a write (a key locked down): not marked, tried again next start.
        case failed(String)
    }

    /// `$XDG_STATE_HOME/chime/<markerName>` (default `~/.local/state/chime/…`).
    public static func markerPath(environment: [String: String]) -> String {
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") { return state + "/chime/" + markerName }
        return (environment["HOME"] ?? NSHomeDirectory()) + "/.local/state/chime/" + markerName
    }

    /// Runs the carry-over unless the marker says it ran. GNOME's settings are read only in a
    /// GNOME session (`XDG_CURRENT_DESKTOP`, with a session bus) or when `GSETTINGS_BACKEND` names a backend (tests
    /// use `keyfile`): elsewhere GLib would fall back to a memory backend and say so on stderr.
    public static func runOnce(environment: [String: String] = ProcessInfo.processInfo.environment) -> Outcome {
        let marker = markerPath(environment: environment)
        if FileManager.default.fileExists(atPath: marker) { return .ranBefore }
        let desktop = environment["XDG_CURRENT_DESKTOP"]?.uppercased() ?? ""
        // GNOME's dconf backend writes through the session bus: without one, nothing would be kept.
        let gnome = desktop.contains("GNOME") && SessionBusAddress.find(environment: environment, export: false) != nil
        guard gnome || !(environment["GSETTINGS_BACKEND"] ?? "").isEmpty,
            chime_gio_open() == nil,
            let source = gio.g_settings_schema_source_get_default(),
            let main = gio.g_settings_schema_source_lookup(source, schemaID, 1),
            let perApp = gio.g_settings_schema_source_lookup(source, schemaID + ".application", 1)
        else { return .notApplicable }
        defer {
            gio.g_settings_schema_unref(main)
            gio.g_settings_schema_unref(perApp)
        }
        let outcome = carry(main: main, perApp: perApp)
        guard case .failed = outcome else {
            let line =
                switch outcome {
                case .carried(let keys): "carried \(keys.joined(separator: ", ")) over\n"
                default: "nothing to carry over\n"
                }
            try? FileManager.default.createDirectory(
                atPath: (marker as NSString).deletingLastPathComponent,
                withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700]
            )
            let text = "GNOME notification settings of \(ApplicationID.previous).desktop for \(ApplicationID.current).desktop: " + line
            try? text.write(toFile: marker, atomically: true, encoding: .utf8)
            return outcome
        }
        return outcome
    }

    /// Reads both paths and `application-children`, and writes what the plan says.
    static func carry(main: OpaquePointer, perApp: OpaquePointer) -> Outcome {
        let old = gio.g_settings_new_full(perApp, nil, ApplicationID.gnomeSettingsPath(ApplicationID.previous))!
        let new = gio.g_settings_new_full(perApp, nil, ApplicationID.gnomeSettingsPath(ApplicationID.current))!
        let settings = gio.g_settings_new_full(main, nil, nil)!
        defer {
            for object in [old, new, settings] { gio.g_object_unref(UnsafeMutableRawPointer(object)) }
        }
        var keys: [String] = []
        if let list = gio.g_settings_schema_list_keys(perApp) {
            var index = 0
            while let key = list[index] {
                keys.append(String(cString: key))
                index += 1
            }
            gio.g_strfreev(list)
        }
        // The old path's user values (held until written), and which keys the new path has.
        var oldValues: [String: OpaquePointer] = [:]
        var oldPrinted: [String: String] = [:]
        var newSet: Set<String> = []
        for key in keys {
            if let value = gio.g_settings_get_user_value(old, key) {
                oldValues[key] = value
                let printed = gio.g_variant_print(value, 1)!
                oldPrinted[key] = String(cString: printed)
                gio.g_free(printed)
            }
            if let value = gio.g_settings_get_user_value(new, key) {
                newSet.insert(key)
                gio.g_variant_unref(value)
            }
        }
        defer { for value in oldValues.values { gio.g_variant_unref(value) } }
        var children: [String] = []
        if let list = gio.g_settings_get_strv(settings, "application-children") {
            var index = 0
            while let child = list[index] {
                children.append(String(cString: child))
                index += 1
            }
            gio.g_strfreev(list)
        }
        let plan = NotificationSettingsCarryOver.plan(oldSet: oldPrinted, newSet: newSet, children: children)
        guard case .carry(let values, let applicationID, let newChildren) = plan else { return .nothingToCarry }
        let copied = values.keys.sorted()
        for key in copied where gio.g_settings_set_value(new, key, oldValues[key]!) == 0 {
            return .failed("\(ApplicationID.gnomeSettingsPath(ApplicationID.current)) \(key) is not writable")
        }
        guard gio.g_settings_set_string(new, NotificationSettingsCarryOver.applicationIDKey, applicationID) != 0 else {
            return .failed("\(ApplicationID.gnomeSettingsPath(ApplicationID.current)) application-id is not writable")
        }
        let written = newChildren.withCStrings { gio.g_settings_set_strv(settings, "application-children", $0) }
        guard written != 0 else { return .failed("\(schemaID) application-children is not writable") }
        gio.g_settings_sync()
        return .carried(copied)
    }
}

extension Array where Element == String {
    /// The strings as a NULL-terminated array of C strings, valid during `body`.
    fileprivate func withCStrings<Result>(_ body: (UnsafePointer<UnsafePointer<CChar>?>) -> Result) -> Result {
        let copies = map { strdup($0) }
        defer { for copy in copies { free(copy) } }
        let pointers: [UnsafePointer<CChar>?] = copies.map { $0.map { UnsafePointer($0) } } + [nil]
        return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
    }
}

/// Chime's application id, in one place: the desktop entry's file name (less `.desktop`), the
/// alerts' `desktop-entry` hint, the icon's theme name and the D-Bus name `chime run` owns
/// (ChimeBus.name is this value).
///
/// Chime 0.2.0's desktop entry was `chime.desktop` and its alerts said `desktop-entry=chime`: a
/// person's GNOME notification settings for that id are carried over once
/// (``NotificationSettingsCarryOver``).
public enum ApplicationID {
    /// `io.github.chime.Chime`: a reverse-DNS name (Desktop Entry Specification, "Desktop File ID").
    public static let current = "io.github.chime.Chime"
    /// The desktop id earlier versions used (`chime.desktop`), for the carry-over.
    public static let previous = "chime"

    /// The name GNOME keeps an application's notification settings under: the relocatable schema
    /// `org.gnome.desktop.notifications.application` at `/org/gnome/desktop/notifications/application/<this>/`,
    /// listed in `org.gnome.desktop.notifications application-children`. As gnome-shell derives it
    /// (js/ui/messageTray.js, `NotificationApplicationPolicy._canonicalizeId`): the desktop id
    /// without `.desktop`, lowercase, each character other than `a-z`, `0-9` and `-` made `-`,
    /// then each run of dashes one dash.
    public static func gnomeSettingsName(_ desktopID: String) -> String {
        var id = desktopID
        if id.hasSuffix(".desktop") { id.removeLast(".desktop".count) }
        var name = ""
        for scalar in id.lowercased().unicodeScalars {
            let dash = !(("a"..."z").contains(scalar) || ("0"..."9").contains(scalar))
            if dash {
                if name.last != "-" { name.append("-") }
            } else {
                name.unicodeScalars.append(scalar)
            }
        }
        return name
    }

    /// The GSettings path of `desktopID`'s notification settings under GNOME.
    public static func gnomeSettingsPath(_ desktopID: String) -> String {
        "/org/gnome/desktop/notifications/application/" + gnomeSettingsName(desktopID) + "/"
    }
}

/// What carrying a person's GNOME notification settings from the old desktop id to the new one
/// does, decided from what was read (the GSettings calls are ChimeDBus's).
public enum NotificationSettingsCarryOver {
    /// The key gnome-shell writes itself (`<id>.desktop`) when an application first notifies: not
    /// a person's choice, so it neither counts as a setting nor is copied (the new path gets the
    /// new id's own).
    public static let applicationIDKey = "application-id"

    /// The outcome.
    public enum Plan: Sendable, Equatable {
        /// Nothing set for the old id: nothing to carry.
        case nothingSet
        /// The new id has settings of its own already (the person chose them): left as they are.
        case newAlreadySet
        /// Write `values` (key → the old path's value, serialized as the caller likes) at the new
        /// path, `application-id` as `applicationID`, and `children` as application-children.
        case carry(values: [String: String], applicationID: String, children: [String])
    }

    /// Decides from the keys the person set (a user value, not the default) at each path and the
    /// current `application-children`. Keeps the old id's settings and child (an older Chime, or
    /// an alert already shown, may still name it).
    public static func plan(
        oldSet: [String: String],
        newSet: Set<String>,
        children: [String],
        old: String = ApplicationID.previous,
        new: String = ApplicationID.current
    ) -> Plan {
        let values = oldSet.filter { $0.key != applicationIDKey }
        guard !values.isEmpty else { return .nothingSet }
        guard newSet.subtracting([applicationIDKey]).isEmpty else { return .newAlreadySet }
        let child = ApplicationID.gnomeSettingsName(new)
        return .carry(
            values: values,
            applicationID: new + ".desktop",
            children: children.contains(child) ? children : children + [child]
        )
    }
}

import Foundation

/// How a reminder's alert looks and sounds, kept with the reminder: its urgency, whether it
/// stays until answered, its icon, its sound. The defaults leave each to the notifier.
public struct Presentation: Sendable, Hashable {
    /// The alert's urgency; nil is normal.
    public var urgency: Note.Urgency?
    /// Stays up until answered.
    public var sticky: Bool
    /// An icon name from the icon theme (`appointment-soon`), or an absolute path to an image file.
    public var icon: String?
    /// A sound name from the sound theme (`bell`, `message-new-instant`): the `sound-name` hint on
    /// a server that plays sounds, a console bell elsewhere.
    public var sound: String?
    /// The reminder's own buttons (scheduled over D-Bus with `actions`), shown instead of its
    /// family's (Done, Snooze); empty: the family's. Each answers as `action:KEY`
    /// (``actionPrefix``), so that a key never stands for Done or Snooze.
    public var actions: [Note.Action]

    public init(
        urgency: Note.Urgency? = nil,
        sticky: Bool = false,
        icon: String? = nil,
        sound: String? = nil,
        actions: [Note.Action] = []
    ) {
        self.urgency = urgency
        self.sticky = sticky
        self.icon = icon
        self.sound = sound
        self.actions = actions
    }

    /// What an answer to one of a reminder's own ``actions`` starts with, in the ledger and in
    /// ``NoteResponse``: `action:open` for the key `open`.
    public static let actionPrefix = "action:"

    /// The key of a reminder's own action in an answer (`open` for `action:open`), nil for
    /// another answer.
    public static func ownAction(_ answer: String) -> String? {
        answer.hasPrefix(actionPrefix) ? String(answer.dropFirst(actionPrefix.count)) : nil
    }

    /// At most this many actions on one reminder (notification servers show few buttons).
    public static let actionLimit = 3

    /// A reminder's own actions as stored (JSON: `[{"key": …, "label": …}]`), nil for none.
    public var storedActions: String? {
        guard !actions.isEmpty, let data = try? JSONEncoder().encode(actions) else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    /// The actions of ``storedActions``; none for nil or for text that is not such a list.
    public static func actions(stored: String?) -> [Note.Action] {
        guard let stored else { return [] }
        return (try? JSONDecoder().decode([Note.Action].self, from: Data(stored.utf8))) ?? []
    }

    /// Checks a reminder's own actions: 1 to ``actionLimit``, each key a GAction name (1 to 64
    /// letters, digits, '-' or '.', starting with a letter or digit) given once, each label a
    /// non-empty line of at most 64 characters.
    public static func checkActions(_ actions: [Note.Action]) throws(ChimeError) {
        guard (1...actionLimit).contains(actions.count) else {
            throw ChimeError(.usage, "invalid actions: \(actions.count) given; expected 1 to \(actionLimit) (key, label) pairs")
        }
        var seen = Set<String>()
        for action in actions {
            let key = action.key
            let valid =
                (1...64).contains(key.utf8.count)
                && key.unicodeScalars.enumerated().allSatisfy { index, scalar in
                    scalar.isASCII
                        && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar)
                            || (index > 0 && "-.".unicodeScalars.contains(scalar)))
                }
            guard valid else {
                throw ChimeError.invalid(
                    "action key",
                    key,
                    expected: "1 to 64 letters, digits, '-' or '.', starting with a letter or digit (a GAction name such as open)"
                )
            }
            guard seen.insert(key).inserted else {
                throw ChimeError(.usage, "the action key '\(key)' is given twice: give each key once")
            }
            let label = action.label.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !label.isEmpty, !action.label.contains("\n") else {
                throw ChimeError.invalid("action label", action.label, expected: "a non-empty line such as Open")
            }
            try UserText.check(action.label, field: "action label", limit: 64)
        }
    }

    /// An urgency as people type it (`--urgency`, D-Bus `urgency`): low, normal or critical.
    public static func urgency(named text: String) throws(ChimeError) -> Note.Urgency {
        guard let urgency = Note.Urgency(rawValue: text) else {
            throw ChimeError.invalid("urgency", text, expected: "low, normal or critical")
        }
        return urgency
    }

    /// Nothing set: the notifier's defaults.
    public var isDefault: Bool { self == Presentation() }

    /// Sets what is given on `note`: urgency, sticky, icon and sound.
    public func apply(to note: inout Note) {
        if let urgency { note.urgency = urgency }
        if sticky { note.sticky = true }
        if let icon { note.icon = icon }
        if let sound { note.sound = sound }
        if !actions.isEmpty { note.actions = actions.map { Note.Action(key: Self.actionPrefix + $0.key, label: $0.label) } }
    }

    /// Checks what people type: an icon is a theme name or an absolute path to an existing file;
    /// a sound is a sound-theme name.
    public func validated() throws(ChimeError) -> Presentation {
        if let icon { try Self.checkIcon(icon) }
        if let sound { try Self.checkSound(sound) }
        if !actions.isEmpty { try Self.checkActions(actions) }
        return self
    }

    /// A theme name (`appointment-soon`: letters, digits, '-', '_', '.', up to 128) or an
    /// absolute path to a file that exists.
    public static func checkIcon(_ icon: String) throws(ChimeError) {
        if icon.hasPrefix("/") {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: icon, isDirectory: &isDirectory) else {
                throw ChimeError(
                    .usage,
                    "invalid icon '\(icon)': no such file; expected an icon-theme name or an absolute path to an image file"
                )
            }
            guard !isDirectory.boolValue else {
                throw ChimeError(
                    .usage,
                    "invalid icon '\(icon)': a directory; expected an icon-theme name or an absolute path to an image file"
                )
            }
            return
        }
        guard isThemeName(icon) else {
            throw ChimeError.invalid(
                "icon",
                icon,
                expected:
                    "an icon-theme name such as appointment-soon (letters, digits, '-', '_', '.') or an absolute path to an image file"
            )
        }
    }

    /// A sound-theme name as the freedesktop sound naming specification writes them:
    /// `message-new-instant`, `bell`, `alarm-clock-elapsed`.
    public static func checkSound(_ sound: String) throws(ChimeError) {
        guard isThemeName(sound) else {
            throw ChimeError.invalid(
                "sound",
                sound,
                expected: "a sound-theme name such as bell, message-new-instant or alarm-clock-elapsed (letters, digits, '-', '_', '.')"
            )
        }
    }

    /// Letters, digits, '-', '_' and '.', starting with a letter or digit, 1 to 128 characters.
    static func isThemeName(_ name: String) -> Bool {
        guard (1...128).contains(name.utf8.count), let first = name.unicodeScalars.first,
            first.isASCII, first.properties.isAlphabetic || ("0"..."9").contains(first)
        else { return false }
        return name.unicodeScalars.allSatisfy { scalar in
            scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || "-_.".unicodeScalars.contains(scalar))
        }
    }
}

#if canImport(Glibc)
import Glibc
#endif

/// The console bell, for an alert with a sound where nothing plays sounds: BEL, written only to
/// a terminal (never into a file or a JSON stream).
public enum ConsoleBell {
    public static let character = "\u{7}"

    /// Rings on `fd` when it is a terminal; returns whether it did.
    @discardableResult
    public static func ring(fd: Int32) -> Bool {
        guard isatty(fd) == 1 else { return false }
        return write(fd, character, 1) == 1
    }

    /// Rings on standard output, else standard error, whichever is a terminal first.
    @discardableResult
    public static func ring() -> Bool {
        ring(fd: STDOUT_FILENO) || ring(fd: STDERR_FILENO)
    }
}

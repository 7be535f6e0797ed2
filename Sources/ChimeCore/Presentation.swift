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

    public init(urgency: Note.Urgency? = nil, sticky: Bool = false, icon: String? = nil, sound: String? = nil) {
        self.urgency = urgency
        self.sticky = sticky
        self.icon = icon
        self.sound = sound
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
    }

    /// Checks what people type: an icon is a theme name or an absolute path to an existing file;
    /// a sound is a sound-theme name.
    public func validated() throws(ChimeError) -> Presentation {
        if let icon { try Self.checkIcon(icon) }
        if let sound { try Self.checkSound(sound) }
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

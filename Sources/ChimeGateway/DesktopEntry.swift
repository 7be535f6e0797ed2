import ChimeCore
import Foundation

/// A desktop entry file (`.desktop`), as the freedesktop Desktop Entry Specification describes
/// it, kept line by line so that writing it back gives the same bytes: comments, blank lines,
/// groups, localized keys (`Name[de]=`) and keys Chime does not know are all kept.
///
/// Values are read and written through the string escapes of the specification (`\s`, `\n`,
/// `\t`, `\r`, `\\`); a line that is neither a comment, a group header nor `Key=value` is kept as
/// it was and otherwise ignored.
public struct DesktopEntry: Sendable, Equatable {
    /// One line of the file, without its line feed.
    public struct Line: Sendable, Equatable {
        /// What a line is.
        public enum Kind: Sendable, Equatable {
            /// Empty or only white space.
            case blank
            /// Starts with `#`.
            case comment
            /// `[Group Name]`.
            case group(String)
            /// `Key[locale]=value`: the key without its locale, the locale, and the value as
            /// written (escapes not undone).
            case entry(key: String, locale: String?, rawValue: String)
            /// Anything else: kept, never interpreted.
            case other
        }

        /// The line as it is in the file (a carriage return before the line feed included).
        public let text: String
        /// What the line is, read from ``text``.
        public let kind: Kind

        /// Reads one line of a desktop entry.
        public init(_ text: String) {
            self.text = text
            self.kind = Self.kind(of: text)
        }

        /// Reads the line's structure on its UTF-8 bytes, whose syntax characters are all
        /// ASCII: a combining mark after `=` or `]` must not hide it, as it would in Characters.
        private static func kind(of text: String) -> Kind {
            var bytes = Substring(text).utf8[...]
            if bytes.last == UInt8(ascii: "\r") { bytes = bytes.dropLast() }
            let content = trimmed(bytes)
            if content.isEmpty { return .blank }
            if content.first == UInt8(ascii: "#") { return .comment }
            if content.first == UInt8(ascii: "["), content.last == UInt8(ascii: "]"), content.count >= 2 {
                return .group(string(content.dropFirst().dropLast()))
            }
            guard let equals = bytes.firstIndex(of: UInt8(ascii: "=")) else { return .other }
            var name = trimmed(bytes[..<equals])
            var value = bytes[bytes.index(after: equals)...]
            while let first = value.first, first == UInt8(ascii: " ") || first == UInt8(ascii: "\t") { value = value.dropFirst() }
            guard !name.isEmpty else { return .other }
            var locale: String?
            if name.last == UInt8(ascii: "]"), let open = name.firstIndex(of: UInt8(ascii: "[")) {
                locale = string(name[name.index(after: open)..<name.index(before: name.endIndex)])
                name = name[..<open]
            }
            return .entry(key: string(name), locale: locale, rawValue: string(value))
        }

        private static func trimmed(_ bytes: Substring.UTF8View.SubSequence) -> Substring.UTF8View.SubSequence {
            let blank = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
            guard let first = bytes.firstIndex(where: { !blank($0) }), let last = bytes.lastIndex(where: { !blank($0) }) else {
                return bytes[bytes.endIndex...]
            }
            return bytes[first...last]
        }

        private static func string(_ bytes: Substring.UTF8View.SubSequence) -> String {
            String(decoding: bytes, as: UTF8.self)
        }
    }

    /// The file's lines in order. The file's text is these lines joined by line feeds, so a file
    /// that ends with a line feed ends with an empty line here.
    public var lines: [Line]

    /// Reads a desktop entry from its text. Never fails: what cannot be read is kept as it is.
    public init(text: String) {
        // Split on the byte, not on Characters: "\r\n" is one Character, and a combining mark
        // after a line feed would join it.
        lines = text.utf8.split(separator: 0x0A, omittingEmptySubsequences: false).map { Line(String(decoding: $0, as: UTF8.self)) }
    }

    /// Reads a desktop entry from a file's bytes.
    ///
    /// - Parameter path: where the bytes come from, named in the error.
    /// - Throws: ``ChimeError`` `.usage` when the bytes are not UTF-8, which the specification requires.
    public init(data: Data, path: String) throws {
        guard let text = String(data: data, encoding: .utf8) else {
            throw ChimeError(.usage, "desktop entry '\(path)' is not UTF-8 text: expected a file the Desktop Entry Specification describes")
        }
        self.init(text: text)
    }

    /// The file's text: the same bytes as were read, plus the changes made since.
    public var text: String { lines.map(\.text).joined(separator: "\n") }

    /// The file's bytes (UTF-8).
    public var data: Data { Data(text.utf8) }

    /// The group names in the order they appear (`Desktop Entry`, `Desktop Action new-window`).
    public var groups: [String] {
        lines.compactMap { if case .group(let name) = $0.kind { name } else { nil } }
    }

    /// The index range of `group`'s lines after its header, or nil when there is no such group.
    /// A key that appears before any group belongs to no group and is never found.
    private func range(of group: String) -> Range<Int>? {
        guard let header = lines.firstIndex(where: { $0.kind == .group(group) }) else { return nil }
        let start = header + 1
        let end =
            lines[start...].firstIndex {
                if case .group = $0.kind { true } else { false }
            } ?? lines.endIndex
        return start..<end
    }

    /// The lines of `key` with exactly `locale` in `group`, in order: more than one only in a
    /// file that repeats a key.
    private func indices(of key: String, locale: String?, in group: String) -> [Int] {
        guard let range = range(of: group) else { return [] }
        return range.filter {
            if case .entry(key, locale, _) = lines[$0].kind { true } else { false }
        }
    }

    /// The value of `key` (with `locale`, when given) in `group`, its escapes undone; nil when absent.
    public func value(_ key: String, locale: String? = nil, in group: String = "Desktop Entry") -> String? {
        // A repeated key: the last wins, as GLib reads it.
        guard let index = indices(of: key, locale: locale, in: group).last,
            case .entry(_, _, let raw) = lines[index].kind
        else { return nil }
        return Self.unescape(raw)
    }

    /// Whether a boolean `key` in `group` is `true`.
    public func isTrue(_ key: String, in group: String = "Desktop Entry") -> Bool {
        value(key, in: group) == "true"
    }

    /// Sets `key` in `group` to `value` (escaped as the specification says): in place when the
    /// key is there, else as a new line after the group's last key. A key written more than once
    /// keeps only its first line, so that every reader sees `value` (readers differ on which of
    /// repeated keys wins). Does nothing when there is no such group.
    public mutating func setValue(_ value: String, for key: String, in group: String = "Desktop Entry") {
        let line = Line(key + "=" + Self.escape(value))
        let existing = indices(of: key, locale: nil, in: group)
        if let index = existing.first {
            // Keep a carriage-return line end as it was.
            lines[index] = lines[index].text.utf8.last == UInt8(ascii: "\r") ? Line(line.text + "\r") : line
            for repeated in existing.dropFirst().reversed() { lines.remove(at: repeated) }
            return
        }
        guard let range = range(of: group) else { return }
        let lastKey = range.last {
            if case .entry = lines[$0].kind { true } else { false }
        }
        let previous = lastKey ?? range.lowerBound - 1
        // A new line ends as the line before it does (a carriage return in a CRLF file).
        lines.insert(lines[previous].text.utf8.last == UInt8(ascii: "\r") ? Line(line.text + "\r") : line, at: previous + 1)
    }

    /// Removes every line of `key` in `group`, localized ones included.
    public mutating func removeValue(for key: String, in group: String = "Desktop Entry") {
        guard let range = range(of: group) else { return }
        let doomed = range.filter {
            if case .entry(key, _, _) = lines[$0].kind { true } else { false }
        }
        for index in doomed.reversed() { lines.remove(at: index) }
    }

    /// `raw` with the string escapes of the specification undone: `\s` space, `\n` line feed,
    /// `\t` tab, `\r` carriage return, `\\` backslash. Any other backslash is kept as it is.
    public static func unescape(_ raw: String) -> String {
        guard raw.contains("\\") else { return raw }
        var result = String.UnicodeScalarView()
        var pending = false
        for character in raw.unicodeScalars {
            if pending {
                pending = false
                switch character {
                case "s": result.append(" ")
                case "n": result.append("\n")
                case "t": result.append("\t")
                case "r": result.append("\r")
                case "\\": result.append("\\")
                default:
                    result.append("\\")
                    result.append(character)
                }
            } else if character == "\\" {
                pending = true
            } else {
                result.append(character)
            }
        }
        if pending { result.append("\\") }
        return String(result)
    }

    /// `value` written as a string value: backslash, line feed, tab and carriage return escaped,
    /// and a leading space written `\s` (a reader would otherwise drop it).
    public static func escape(_ value: String) -> String {
        var result = ""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\t": result += "\\t"
            case "\r": result += "\\r"
            case " " where result.isEmpty: result += "\\s"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}

/// A desktop file id: the path of an entry under an `applications/` directory with `/` turned
/// into `-` (`/usr/share/applications/kde4/foo.desktop` has the id `kde4-foo.desktop`).
public struct DesktopFileID: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    /// The id, always ending in `.desktop` (`org.mozilla.firefox.desktop`).
    public var rawValue: String

    /// Reads an id as a person types it: `firefox` and `firefox.desktop` are the same id.
    ///
    /// - Throws: ``ChimeError`` `.usage` when `text` is empty, has a `/`, starts with `.` or `-`,
    ///   or has a control character.
    public init(_ text: String) throws {
        let id = text.hasSuffix(".desktop") ? text : text + ".desktop"
        let stem = id.dropLast(".desktop".count)
        guard !stem.isEmpty, !id.contains("/"), !id.hasPrefix("."), !id.hasPrefix("-"),
            !id.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else {
            throw ChimeError.invalid(
                "desktop file id",
                text,
                expected:
                    "a desktop entry's id such as 'firefox' or 'org.mozilla.firefox.desktop' (no '/', see `ls /usr/share/applications`)"
            )
        }
        rawValue = id
    }

    /// The id of the entry at `relativePath` under an `applications/` directory (`kde4/foo.desktop`).
    public init(relativePath: String) throws {
        try self.init(relativePath.replacingOccurrences(of: "/", with: "-"))
    }

    /// The relative paths under `applications/` that can have this id: the id itself first,
    /// then each way of reading some of its dashes as directories (`kde4-foo.desktop`:
    /// `kde4-foo.desktop`, `kde4/foo.desktop`). An id with more than 8 dashes is looked up only as itself.
    public var candidatePaths: [String] {
        let parts = rawValue.split(separator: "-", omittingEmptySubsequences: false).map(String.init)
        guard parts.count > 1, parts.count <= 9 else { return [rawValue] }
        var paths: [String] = []
        for mask in 0..<(1 << (parts.count - 1)) {
            var path = parts[0]
            for (offset, part) in parts.dropFirst().enumerated() {
                path += (mask & (1 << offset)) != 0 ? "/" : "-"
                path += part
            }
            // An empty directory name (`a--b`, `-a`) is no path.
            if !path.contains("//") && !path.hasPrefix("/") && !path.contains("/.desktop") { paths.append(path) }
        }
        return paths
    }

    public var description: String { rawValue }

    /// Ids in the order of their text, as ``LauncherOverrides/list()`` gives them.
    public static func < (lhs: DesktopFileID, rhs: DesktopFileID) -> Bool { lhs.rawValue < rhs.rawValue }

    /// Decodes an id from its text, checked as ``init(_:)`` checks it.
    public init(from decoder: any Decoder) throws {
        try self.init(try decoder.singleValueContainer().decode(String.self))
    }

    /// Encodes the id as its text (`firefox.desktop`).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

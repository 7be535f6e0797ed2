import ChimeCore
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Chime's one writer of the config file (`chime config set`, the app's Preferences): sets keys
/// to values given as a person types them, line by line in the file's own text, so its comments,
/// its order and everything else in it stay as they were. The values are checked as the file's
/// are (``ConfigKey/parse(text:home:searchPath:)``), the whole new text is read back as a config
/// before anything is written, and the file is replaced at once (a temporary file renamed over
/// it): never half-written.
public enum ConfigWriter {
    /// One change: `key` to `text`, as a person types it (`30m`, `22:00-07:00`, `5`, `true`).
    public struct Change: Sendable, Hashable {
        public var key: ConfigKey
        public var text: String

        public init(_ key: ConfigKey, _ text: String) {
            self.key = key
            self.text = text
        }
    }

    /// The value `text` stands for, for `key`.
    /// - Throws: ``ChimeError/Code/usage``: `invalid focus.length '3m': expected …`, as the
    ///   environment's and the file's bad values are worded.
    public static func value(_ key: ConfigKey, _ text: String, environment: [String: String] = [:]) throws(ChimeError) -> ConfigValue {
        if case .command = key.rule {
            throw ChimeError(.usage, "\(key.rawValue) is a hook's command: set it with 'chime config edit'")
        }
        guard let value = key.parse(text: text, home: environment["HOME"], searchPath: environment["PATH"]) else {
            throw ChimeError.invalid(key.rawValue, ConfigTOMLValue.shortened(key.shown(text)), expected: key.accepted)
        }
        return value
    }

    /// The TOML literal `text` is written as for `key`: a number or a boolean bare, anything else
    /// quoted (as typed: `~/…` stays `~/…`).
    static func literal(_ key: ConfigKey, _ text: String, value: ConfigValue) -> String {
        switch value {
        case .number, .flag: value.toml
        default: ConfigValue.text(text).toml
        }
    }

    /// `text` (nil: no file yet, the commented example is the start) with `changes` made.
    /// - Throws: ``ChimeError/Code/usage`` for a bad value.
    public static func edit(
        _ text: String?,
        _ changes: [Change],
        keys: [ConfigKey],
        environment: [String: String] = [:]
    ) throws(ChimeError) -> String {
        var lines = (text ?? Config.example(keys: keys)).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        for change in changes {
            let value = try value(change.key, change.text, environment: environment)
            set(change.key, literal(change.key, change.text, value: value), in: &lines)
        }
        var result = lines.joined(separator: "\n")
        if !result.isEmpty && !result.hasSuffix("\n") { result += "\n" }
        return result
    }

    /// Makes `changes` in the config file at `Config.path(environment:)` (made from the example
    /// when missing) and returns the config read back from what was written.
    /// - Throws: ``ChimeError/Code/usage`` for a bad value; ``ChimeError/Code/config`` when the
    ///   file is bad already (its own error: fix it first) or cannot be written. The file is then
    ///   as it was.
    @discardableResult
    public static func write(
        _ changes: [Change],
        keys: [ConfigKey],
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(ChimeError) -> Config {
        let path = Config.path(environment: environment)
        let old = try Config.read(path)
        // A bad file is not made worse, nor silently rewritten: its error, as every command says it.
        if let old { _ = try Config(path: path, contents: old, environment: environment, keys: keys) }
        let new = try edit(old, changes, keys: keys, environment: environment)
        let config = try Config(path: path, contents: new, environment: [:], keys: keys)
        for change in changes {
            let wanted = try value(change.key, change.text, environment: environment)
            guard case .file = config.setting(change.key).source, config.setting(change.key).value == wanted || isPath(change.key) else {
                throw ChimeError(
                    .config,
                    "config file \(path): \(change.key.rawValue) could not be set there (its line is not one 'key = value' line): "
                        + "change it with 'chime config edit'"
                )
            }
        }
        try replace(path, with: new)
        return try Config(path: path, contents: new, environment: environment, keys: keys)
    }

    private static func isPath(_ key: ConfigKey) -> Bool {
        switch key.rule {
        case .path, .store: true
        default: false
        }
    }

    // MARK: - The text

    /// Sets `key`'s line to `literal`: its `name = …` line in its table (a trailing comment kept),
    /// else the example's commented `# name = …` line, else a new line at the end of its table
    /// (the table made at the end when missing; a top-level key before the first table).
    static func set(_ key: ConfigKey, _ literal: String, in lines: inout [String]) {
        let entries = scan(lines)
        if let line = entries.first(where: { $0.key == key.rawValue && !$0.commented }) {
            let old = lines[line.index]
            let start = old.index(old.startIndex, offsetBy: line.valueStart)
            lines[line.index] = String(old[..<start]) + literal + trailingComment(String(old[start...]))
            return
        }
        if let line = entries.first(where: { $0.key == key.rawValue && $0.commented }) {
            let indent = lines[line.index].prefix { $0 == " " || $0 == "\t" }
            lines[line.index] = indent + "\(key.name) = \(literal)"
            return
        }
        let newLine = "\(key.name) = \(literal)"
        guard let section = key.section else {
            let firstTable = lines.firstIndex { isTableHeader($0) } ?? lines.count
            var at = firstTable
            while at > 0 && lines[at - 1].trimmingCharacters(in: .whitespaces).isEmpty { at -= 1 }
            lines.insert(newLine, at: at)
            if at == firstTable && firstTable < lines.count - 1 { lines.insert("", at: at + 1) }
            return
        }
        guard let header = lines.firstIndex(where: { tableName($0) == section }) else {
            while let last = lines.last, last.trimmingCharacters(in: .whitespaces).isEmpty { lines.removeLast() }
            if !lines.isEmpty { lines.append("") }
            lines += ["[\(section)]", newLine]
            return
        }
        var end = lines[(header + 1)...].firstIndex { isTableHeader($0) } ?? lines.count
        while end > header + 1 && lines[end - 1].trimmingCharacters(in: .whitespaces).isEmpty { end -= 1 }
        lines.insert(newLine, at: end)
    }

    /// A `key = value` line (or a commented `# key = value` one) and where its value begins.
    struct Entry {
        var index: Int
        /// The dotted key: `focus.length`.
        var key: String
        var commented: Bool
        /// The value's first character, in characters from the line's start.
        var valueStart: Int
    }

    static func scan(_ lines: [String]) -> [Entry] {
        var entries: [Entry] = []
        var section: String?
        for (index, raw) in lines.enumerated() {
            if let name = tableName(raw) {
                section = name
                continue
            }
            var body = Substring(raw)
            var commented = false
            let trimmed = body.drop { $0 == " " || $0 == "\t" }
            if trimmed.hasPrefix("#") {
                commented = true
                body = trimmed.dropFirst().drop { $0 == " " }
            }
            guard let equals = body.firstIndex(of: "=") else { continue }
            let name = body[..<equals].split(separator: ".").map {
                $0.trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\"'"))
            }
            guard !name.isEmpty, name.allSatisfy({ !$0.isEmpty && !$0.contains(" ") }) else { continue }
            let dotted = ([section].compactMap { $0 } + name).joined(separator: ".")
            var start = body.index(after: equals)
            while start < body.endIndex && (body[start] == " " || body[start] == "\t") { start = body.index(after: start) }
            entries.append(
                Entry(index: index, key: dotted, commented: commented, valueStart: raw.distance(from: raw.startIndex, to: start))
            )
        }
        return entries
    }

    /// `[name]`'s name (not an array of tables' `[[name]]`), nil for another line.
    static func tableName(_ line: String) -> String? {
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        guard trimmed.hasPrefix("["), !trimmed.hasPrefix("[["), let close = trimmed.firstIndex(of: "]") else { return nil }
        return trimmed[trimmed.index(after: trimmed.startIndex)..<close].trimmingCharacters(in: .whitespaces)
    }

    static func isTableHeader(_ line: String) -> Bool { line.trimmingCharacters(in: .whitespaces).hasPrefix("[") }

    /// What follows a one-line value: its spaces and `# comment`, or "".
    static func trailingComment(_ rest: String) -> String {
        var inString: Character?
        var escaped = false
        var index = rest.startIndex
        var valueEnd = rest.startIndex
        while index < rest.endIndex {
            let character = rest[index]
            if let quote = inString {
                if escaped {
                    escaped = false
                } else if character == "\\" && quote == "\"" {
                    escaped = true
                } else if character == quote {
                    inString = nil
                }
                valueEnd = rest.index(after: index)
            } else if character == "\"" || character == "'" {
                inString = character
                valueEnd = rest.index(after: index)
            } else if character == "#" {
                let between = rest[valueEnd..<index]
                return String(between) + String(rest[index...])
            } else if character != " " && character != "\t" {
                valueEnd = rest.index(after: index)
            }
            index = rest.index(after: index)
        }
        return ""
    }

    // MARK: - The file

    /// Writes `text` to a temporary file beside `path` (the file's mode kept, a link's target
    /// written), syncs it and renames it over `path`.
    static func replace(_ path: String, with text: String) throws(ChimeError) {
        var target = path
        if let resolved = try? FileManager.default.destinationOfSymbolicLink(atPath: path) {
            target = resolved.hasPrefix("/") ? resolved : (path as NSString).deletingLastPathComponent + "/" + resolved
        }
        let directory = (target as NSString).deletingLastPathComponent
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw ChimeError(.config, "cannot make the directory \(directory): \(error.localizedDescription)")
        }
        var status = stat()
        let mode = stat(target, &status) == 0 ? status.st_mode & 0o7777 : 0o644
        var template = Array((directory + "/.config.toml.XXXXXX").utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard descriptor >= 0 else { throw ChimeError(.config, "cannot write \(target): \(String(cString: strerror(errno)))") }
        let temporary = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        let synced = fchmod(descriptor, mode) == 0 && fsync(descriptor) == 0
        let reason = String(cString: strerror(errno))
        close(descriptor)
        guard written == bytes.count, synced else {
            unlink(temporary)
            throw ChimeError(.config, "cannot write \(target): \(reason); it is as it was")
        }
        guard rename(temporary, target) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw ChimeError(.config, "cannot write \(target): \(reason); it is as it was")
        }
    }
}

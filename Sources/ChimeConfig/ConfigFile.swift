import ChimeCore
import Foundation
import TOMLKit

/// The config file's text: parsed with TOMLKit, every key checked against ``ConfigKey``.
enum ConfigFile {
    /// The tables `keys` are in, in their order.
    static func sections(_ keys: [ConfigKey]) -> [String] {
        var sections: [String] = []
        for case let section? in keys.map(\.section) where !sections.contains(section) { sections.append(section) }
        return sections
    }

    /// Each key's value and the line it was found on.
    /// - Throws: ``ChimeError/Code/config``: the first problem, as one line.
    static func parse(
        _ text: String,
        path: String,
        environment: [String: String],
        keys known: [ConfigKey]
    ) throws(ChimeError) -> [ConfigKey: (value: ConfigValue, line: Int?)] {
        let byName = Dictionary(known.map { ($0.rawValue, $0) }, uniquingKeysWith: { first, _ in first })
        let sections = Self.sections(known)
        // TOMLKit reads strings as C strings: a NUL would cut the value there, silently.
        if let line = Self.lineWithNUL(text) {
            throw ChimeError(
                .config,
                "config file \(path):\(line): holds a NUL character (a NUL byte or \\u0000), which no value may hold: remove it"
            )
        }
        let table: TOMLTable
        do {
            table = try TOMLTable(string: text)
        } catch let error as TOMLParseError {
            let at = error.source.begin
            if let hint = Self.unquotedHint(text, line: at.line) {
                throw ChimeError(.config, "config file \(path):\(at.line):\(at.column): \(hint)")
            }
            throw ChimeError(.config, "config file \(path):\(at.line):\(at.column): \(error.description)")
        } catch {
            throw ChimeError(.config, "config file \(path): \(error)")
        }
        let lines = KeyLines(text)
        var found: [ConfigKey: (value: ConfigValue, line: Int?)] = [:]
        func check(_ name: String, _ value: any TOMLValueConvertible, in section: String?) throws(ChimeError) {
            let dotted = section.map { "\($0).\(name)" } ?? name
            let line = lines.line(of: name, in: section)
            let at = "config file \(path)" + (line.map { ":\($0)" } ?? "")
            guard let key = byName[dotted] else {
                if section == nil, value.type != .table {
                    throw ChimeError(
                        .config,
                        "\(at): unknown key '\(name)': expected \(Self.list(known.filter { $0.section == nil }.map(\.name))) "
                            + "at the top level, or a section \(Self.list(sections.map { "[\($0)]" }))"
                    )
                }
                let keys = known.filter { $0.section == section }.map(\.name)
                throw ChimeError(.config, "\(at): unknown key '\(dotted)': expected \(Self.list(keys)) in [\(section ?? "")]")
            }
            let typed = Self.typed(value)
            let parsed = key.parse(toml: typed, home: environment["HOME"], searchPath: environment["PATH"])
            guard let parsed else {
                // A URL's secrets redacted, inside the quotes of a string.
                // A long value cut (``ConfigTOMLValue/shortened(_:)``): a 5 MB value is not echoed.
                let written =
                    if case .string(let text) = typed {
                        "\"\(ConfigTOMLValue.shortened(key.shown(text)))\""
                    } else {
                        ConfigTOMLValue.shortened(key.shown(typed.written))
                    }
                throw ChimeError(.config, "\(at): invalid \(key.rawValue) \(written): expected \(key.accepted)")
            }
            found[key] = (parsed, line)
        }
        for (name, value) in table {
            if let inner = value.table, byName[name] == nil {
                guard sections.contains(name) else {
                    let line = lines.line(ofSection: name)
                    throw ChimeError(
                        .config,
                        "config file \(path)\(line.map { ":\($0)" } ?? ""): unknown section [\(name)]: expected "
                            + Self.list(sections.map { "[\($0)]" })
                    )
                }
                for (innerName, innerValue) in inner { try check(innerName, innerValue, in: name) }
            } else {
                try check(name, value, in: nil)
            }
        }
        return found
    }

    static func typed(_ value: any TOMLValueConvertible) -> ConfigTOMLValue {
        switch value.type {
        case .string: .string(value.string ?? "")
        case .int: .integer(value.int ?? 0)
        case .bool: .boolean(value.bool ?? false)
        case .array: .array((value.array.map { Array($0) } ?? []).map(typed))
        case .table: .table(Dictionary((value.table.map { Array($0) } ?? []).map { ($0.0, typed($0.1)) }, uniquingKeysWith: { a, _ in a }))
        default: .other(value.tomlValue.debugDescription)
        }
    }

    /// The first line (1-based) that holds a NUL byte or a `\u0000` escape, nil when none does.
    static func lineWithNUL(_ text: String) -> Int? {
        guard text.utf8.contains(0) || text.contains("\\u0000") || text.contains("\\U00000000") else { return nil }
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
        where line.utf8.contains(0) || line.contains("\\u0000") || line.contains("\\U00000000") {
            return number + 1
        }
        return nil
    }

    /// What to write instead of a value TOML cannot type (`store = /tmp/x`, `snooze = 10m`):
    /// text goes in quotes. Nil when line `number` is not `key = value` with a bare value that
    /// is not a number or true or false (the parser's own message says more then).
    static func unquotedHint(_ text: String, line number: Int) -> String? {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard number >= 1, number <= lines.count, let equals = lines[number - 1].firstIndex(of: "=") else { return nil }
        let line = lines[number - 1]
        let key = line[..<equals].trimmingCharacters(in: .whitespaces)
        var value = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
        if let comment = value.firstIndex(of: "#") { value = value[..<comment].trimmingCharacters(in: .whitespaces) }
        guard !key.isEmpty, !value.isEmpty, !"\"'[{".contains(value.first!), value != "true", value != "false",
            Int(value) == nil, Double(value) == nil
        else { return nil }
        let shown = ConfigTOMLValue.shortened(value)
        let quoted = ConfigTOMLValue.shortened(
            value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
        )
        return
            "the value of '\(key)', \(shown), is not a TOML value: text goes in double quotes, as in \(key) = \"\(quoted)\" (numbers and true or false without)"
    }

    /// "a, b or c".
    static func list(_ items: [String]) -> String {
        items.count < 2 ? items.joined() : items.dropLast().joined(separator: ", ") + " or " + items.last!
    }
}

/// The line each key is on. TOMLKit (toml++ underneath) gives positions only for syntax errors,
/// not for values, so the lines of a file that parsed are found here: `[section]` headers and
/// `key =` lines (bare or quoted keys, and dotted `section.key =` at the top level).
struct KeyLines {
    private var keys: [String: Int] = [:]
    private var sections: [String: Int] = [:]

    init(_ text: String) {
        var section: String?
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("[") {
                let name = line.dropFirst().prefix { $0 != "]" }.trimmingCharacters(in: .whitespaces)
                section = name
                if sections[name] == nil { sections[name] = index + 1 }
            } else if !line.hasPrefix("#"), let equals = line.firstIndex(of: "=") {
                let key = line[..<equals].split(separator: ".").map {
                    $0.trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\"'"))
                }.joined(separator: ".")
                let dotted = section.map { "\($0).\(key)" } ?? key
                if keys[dotted] == nil { keys[dotted] = index + 1 }
            }
        }
    }

    func line(of name: String, in section: String?) -> Int? { keys[section.map { "\($0).\(name)" } ?? name] }
    func line(ofSection name: String) -> Int? { sections[name] ?? keys.first { $0.key.hasPrefix(name + ".") }?.value }
}

import ChimeCore
import Foundation

extension ConfigKey {
    /// Reads a value from the file: a string for every key but a number's and a flag's
    /// (an integer and a boolean).
    func parse(toml: ConfigTOMLValue, home: String? = nil, searchPath: String? = nil) -> ConfigValue? {
        switch (rule, toml) {
        case (.command, .array(let items)):
            let argv = items.compactMap { if case .string(let word) = $0 { word } else { nil } }
            guard argv.count == items.count else { return nil }
            return Self.command(argv: argv, shell: nil, timeout: nil, searchPath: searchPath)
        case (.command, .table(let fields)):
            guard Set(fields.keys).isSubset(of: ["argv", "shell", "timeout"]) else { return nil }
            var argv: [String]?
            if let value = fields["argv"] {
                guard case .array(let items) = value else { return nil }
                argv = items.compactMap { if case .string(let word) = $0 { word } else { nil } }
                guard argv?.count == items.count, argv?.isEmpty == false else { return nil }
            }
            func text(_ name: String) -> String?? {
                guard let value = fields[name] else { return .some(nil) }
                if case .string(let text) = value { return .some(text) }
                return nil
            }
            guard let shell = text("shell"), let timeout = text("timeout") else { return nil }
            return Self.command(argv: argv, shell: shell, timeout: timeout, searchPath: searchPath)
        case (.command, _): return nil
        case (.number(let range), .integer(let number)): return range.contains(number) ? .number(number) : nil
        case (.flag, .boolean(let value)): return .flag(value)
        case (.number, _), (.flag, _): return nil
        case (_, .string(let text)): return parse(text: text, home: home)
        default: return nil
        }
    }
}

/// A value of the file as TOML typed it (kept apart from TOMLKit's types so the rules above
/// are plain Swift).
enum ConfigTOMLValue: Sendable, Hashable {
    case string(String)
    case integer(Int)
    case boolean(Bool)
    /// An array (a hook's argv).
    indirect case array([ConfigTOMLValue])
    /// An inline table (a hook's `{ shell = "…", timeout = "30s" }`).
    indirect case table([String: ConfigTOMLValue])
    case other(String)

    /// How the value was written, for the error line (a long one cut: a 5 MB value is not echoed).
    var written: String {
        switch self {
        case .string(let text): "\"\(Self.shortened(text))\""
        case .integer(let number): String(number)
        case .boolean(let value): String(value)
        case .array(let items): Self.shortened("[" + items.map(\.written).joined(separator: ", ") + "]")
        case .table(let fields):
            Self.shortened(
                "{ " + fields.sorted { $0.key < $1.key }.map { "\($0.key) = \($0.value.written)" }.joined(separator: ", ") + " }"
            )
        case .other(let text): Self.shortened(text)
        }
    }

    /// `text`, or its first 60 characters and "…" with how many there are in all.
    static func shortened(_ text: String) -> String {
        guard text.count > 80 else { return text }
        return String(text.prefix(60)) + "… (\(text.count) characters)"
    }
}

import ChimeCore
import Foundation

extension ConfigKey {
    /// Reads a value from the file: a string for every key but a number's and a flag's
    /// (an integer and a boolean).
    func parse(toml: ConfigTOMLValue, home: String? = nil) -> ConfigValue? {
        switch (rule, toml) {
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
    case other(String)

    /// How the value was written, for the error line (a long one cut: a 5 MB value is not echoed).
    var written: String {
        switch self {
        case .string(let text): "\"\(Self.shortened(text))\""
        case .integer(let number): String(number)
        case .boolean(let value): String(value)
        case .other(let text): Self.shortened(text)
        }
    }

    /// `text`, or its first 60 characters and "…" with how many there are in all.
    static func shortened(_ text: String) -> String {
        guard text.count > 80 else { return text }
        return String(text.prefix(60)) + "… (\(text.count) characters)"
    }
}

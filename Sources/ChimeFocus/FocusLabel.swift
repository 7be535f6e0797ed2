import ChimeCore
import Foundation

/// A focus session's label (`chime focus start --label thesis`): a short free text that says
/// what the session was for, so the forest and the stats can be read by it.
///
/// A label is trimmed of surrounding white space, is not empty, has at most ``maxLength``
/// characters and no control characters (no tabs or line breaks: it is shown on one line). Labels
/// are matched exactly as stored (after trimming): `Thesis` and `thesis` are two labels.
public enum FocusLabel {
    /// The most characters a label may have.
    public static let maxLength = 40

    /// What a valid label is, for error messages and help.
    public static let expected = "a short text of 1 to \(maxLength) characters without control characters, such as thesis"

    /// `text` trimmed, or a usage error naming it.
    /// - Throws: `.usage`: `invalid label '': expected a short text of 1 to 40 characters …`.
    public static func validate(_ text: String) throws(ChimeError) -> String {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        let control = trimmed.unicodeScalars.contains { scalar in
            switch scalar.properties.generalCategory {
            case .control, .lineSeparator, .paragraphSeparator: true
            default: false
            }
        }
        guard !trimmed.isEmpty, trimmed.count <= maxLength, !control else {
            var why = trimmed.isEmpty ? " (it is empty)" : control ? " (it has a control character)" : ""
            if trimmed.count > maxLength { why = " (it has \(trimmed.count) characters)" }
            throw ChimeError(.usage, "invalid label '\(shown(text))'\(why): expected \(expected)")
        }
        return trimmed
    }

    /// `label` validated when there is one.
    public static func validate(_ label: String?) throws(ChimeError) -> String? {
        guard let label else { return nil }
        return try validate(label)
    }

    /// The value as one line for an error: control characters as `\u{9}`, long values cut.
    static func shown(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar.properties.generalCategory {
            case .control, .lineSeparator, .paragraphSeparator:
                out += "\\u{\(String(scalar.value, radix: 16))}"
            default:
                out.unicodeScalars.append(scalar)
            }
        }
        return out.count > 60 ? String(out.prefix(60)) + "…" : out
    }
}

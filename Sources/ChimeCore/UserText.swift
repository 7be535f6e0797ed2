/// Text people give Chime and Chime shows to people: titles, bodies, names, notes.
///
/// At input, text that could make what is shown differ from what is stored is refused:
/// bidirectional controls (a title could read backwards: U+202E makes "gnp.exe" show as
/// "exe.png") and invisible characters (text could hide between them). Zero-width joiners
/// (U+200D) and non-joiners (U+200C) are text in emoji sequences (👩‍💻), Indic scripts and
/// Persian, so they are accepted between two visible characters, and refused anywhere else.
public enum UserText {
    /// A reminder's or an alert's title: at most 500 characters.
    public static let titleLimit = 500
    /// A reminder's or an alert's body: at most 4,000 characters (a screenful; the desktop
    /// shows fewer, the JSON stream carries all).
    public static let bodyLimit = 4_000

    /// Checks `text` (a field named `field`, such as "title") against the rules above and
    /// `limit` characters.
    /// - Throws: `.usage`, naming the value, the character by its U+ code and its position
    ///   (counted in Unicode scalars from 1), or the length.
    public static func check(_ text: String, field: String, limit: Int) throws(ChimeError) {
        if text.utf8.count > limit, text.count > limit {
            throw ChimeError(.usage, "invalid \(field) '\(text.prefix(40))…': expected at most \(limit) characters (it has \(text.count))")
        }
        if let (scalar, position) = firstHidden(in: text) {
            let code = "U+" + hex(scalar.value)
            let what =
                isBidiControl(scalar) ? "a bidirectional control, which can reverse text" : "an invisible character, which can hide text"
            let shown = text.count > 40 ? String(text.prefix(40)) + "…" : text
            throw ChimeError(
                .usage,
                "invalid \(field) '\(shown)': \(code) at position \(position) is \(what): expected text without bidirectional "
                    + "controls or invisible characters (a zero-width joiner only between two visible characters, as in emoji)"
            )
        }
    }

    /// The first bidirectional control or misplaced invisible character in `text`, with its
    /// position in Unicode scalars from 1; nil when there is none.
    public static func firstHidden(in text: String) -> (scalar: Unicode.Scalar, position: Int)? {
        // Plain ASCII, the usual case, has none.
        if text.utf8.allSatisfy({ $0 < 0x80 }) { return nil }
        let scalars = Array(text.unicodeScalars)
        for (index, scalar) in scalars.enumerated() {
            if isBidiControl(scalar) || isInvisible(scalar) { return (scalar, index + 1) }
            if isJoiner(scalar) {
                guard index > 0, index + 1 < scalars.count, isVisible(scalars[index - 1]), isVisible(scalars[index + 1]) else {
                    return (scalar, index + 1)
                }
            }
        }
        return nil
    }

    /// Embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069) and the marks
    /// U+200E, U+200F and U+061C.
    public static func isBidiControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x202A...0x202E, 0x2066...0x2069, 0x200E, 0x200F, 0x061C: true
        default: false
        }
    }

    /// Zero-width space U+200B, word joiner U+2060, zero-width no-break space U+FEFF.
    static func isInvisible(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value == 0x200B || scalar.value == 0x2060 || scalar.value == 0xFEFF
    }

    /// Zero-width non-joiner U+200C and joiner U+200D.
    static func isJoiner(_ scalar: Unicode.Scalar) -> Bool { scalar.value == 0x200C || scalar.value == 0x200D }

    /// Not whitespace, a control, a format character (U+200B…, tags) or a joiner.
    static func isVisible(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.properties.isWhitespace { return false }
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator, .spaceSeparator, .unassigned, .surrogate: return false
        default: return true
        }
    }

    /// Text in a human line: control characters (C0, DEL, C1) and line or paragraph separators
    /// become spaces, so the text neither breaks the line nor drives the terminal; bidirectional
    /// controls are dropped, so nothing stored before they were refused reads backwards.
    /// (`--json` carries the text verbatim, escaped.)
    public static func oneLine(_ text: String) -> String {
        if text.utf8.allSatisfy({ (0x20..<0x7F).contains($0) }) { return text }
        func isBreaking(_ scalar: Unicode.Scalar) -> Bool {
            switch scalar.properties.generalCategory {
            case .control, .lineSeparator, .paragraphSeparator: true
            default: false
            }
        }
        guard text.unicodeScalars.contains(where: { isBreaking($0) || isBidiControl($0) }) else { return text }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars where !isBidiControl(scalar) {
            out.append(isBreaking(scalar) ? " " : scalar)
        }
        return String(out)
    }

    private static func hex(_ value: UInt32) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}

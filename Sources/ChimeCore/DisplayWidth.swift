/// How many terminal columns text takes: the human tables (`chime list`, `chime doses`) pad and
/// cut by it, so that a title in CJK or with emoji keeps the columns in line and never splits a
/// character.
///
/// A character (a grapheme cluster: a letter with its accents, an emoji sequence) takes two
/// columns when it is East Asian Wide or Fullwidth or shown as an emoji, none when it is only
/// marks or controls, one otherwise. (The ranges are Unicode's East Asian Width W and F blocks,
/// as glibc's `wcwidth` has them, without depending on the locale.)
public enum DisplayWidth {
    /// The columns `text` takes.
    public static func of(_ text: some StringProtocol) -> Int {
        // ASCII, the usual case: one column a byte (controls are gone after `UserText.oneLine`).
        if text.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) { return text.utf8.count }
        return text.reduce(0) { $0 + of(character: $1) }
    }

    /// The columns one character takes: 0, 1 or 2.
    public static func of(character: Character) -> Int {
        let scalars = character.unicodeScalars
        guard let first = scalars.first else { return 0 }
        if first.value < 0x20 || (0x7F..<0xA0).contains(first.value) { return 0 }
        // An emoji sequence, or a character asked to show as emoji (U+FE0F).
        if scalars.count > 1, scalars.contains(where: { $0.value == 0xFE0F || $0.value == 0x200D }) { return 2 }
        if first.properties.isEmojiPresentation || isWide(first.value) { return 2 }
        switch first.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format: return 0
        default: return 1
        }
    }

    static func isWide(_ value: UInt32) -> Bool {
        switch value {
        case 0x1100...0x115F, 0x231A...0x231B, 0x2329...0x232A, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF,
            0x4E00...0x9FFF, 0xA000...0xA4CF, 0xA960...0xA97F, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE10...0xFE19,
            0xFE30...0xFE6F, 0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x1F300...0x1F64F, 0x1F900...0x1F9FF, 0x20000...0x2FFFD,
            0x30000...0x3FFFD:
            return true
        default:
            return false
        }
    }

    /// `text` cut to at most `width` columns, ending in "…" when it was cut; whole characters
    /// only (an emoji or a letter with its accents is never split).
    public static func truncated(_ text: String, to width: Int) -> String {
        guard width > 0 else { return "" }
        guard of(text) > width else { return text }
        var result = ""
        var used = 0
        for character in text {
            let columns = of(character: character)
            if used + columns > width - 1 { break }
            result.append(character)
            used += columns
        }
        return result + "…"
    }

    /// `text` with spaces after it up to `width` columns (nothing added when it is wider).
    public static func padded(_ text: String, to width: Int) -> String {
        text + String(repeating: " ", count: max(0, width - of(text)))
    }

    /// `text` with spaces before it up to `width` columns.
    public static func leftPadded(_ text: String, to width: Int) -> String {
        String(repeating: " ", count: max(0, width - of(text))) + text
    }
}

import Foundation

/// JSON as Chime prints it: no raw control character in any string.
///
/// RFC 8259 requires escaping only U+0000–U+001F, so JSONEncoder passes DEL (U+007F) and the C1
/// controls (U+0080–U+009F) through raw, and U+2028/U+2029. A terminal reads U+009B as CSI and
/// some readers break lines at U+0085 or U+2028: Chime writes all of them as `\uXXXX`.
public enum JSONText {
    /// A JSON string literal of `string`, escaped as above. Written by hand for the runner's
    /// firing path, which writes a handful of fields per line.
    public static func quote(_ string: String) -> String {
        var out = "\""
        out.reserveCapacity(string.utf8.count + 2)
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case let c where needsEscape(c): out += escape(c.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    /// `data`, JSON as JSONEncoder writes it, with DEL, the C1 controls and U+2028/U+2029
    /// written as `\uXXXX` escapes. (These can only occur inside strings, where the escape
    /// reads back as the same character.) Unchanged, and not copied, when it has none.
    public static func escapingRawControls(_ data: Data) -> Data {
        func isLead(_ index: Data.Index) -> Bool {
            let byte = data[index]
            if byte == 0x7F { return true }
            let next = data.index(after: index)
            guard next < data.endIndex else { return false }
            if byte == 0xC2 { return (0x80...0x9F).contains(data[next]) }
            if byte == 0xE2, data[next] == 0x80 {
                let third = data.index(after: next)
                return third < data.endIndex && (data[third] == 0xA8 || data[third] == 0xA9)
            }
            return false
        }
        guard data.indices.contains(where: isLead) else { return data }
        var out = Data()
        out.reserveCapacity(data.count + 16)
        var index = data.startIndex
        while index < data.endIndex {
            let byte = data[index]
            if isLead(index) {
                switch byte {
                case 0x7F:
                    out.append(contentsOf: escape(0x7F).utf8)
                    index += 1
                case 0xC2:
                    out.append(contentsOf: escape(UInt32(data[index + 1])).utf8)
                    index += 2
                default:
                    out.append(contentsOf: escape(data[index + 2] == 0xA8 ? 0x2028 : 0x2029).utf8)
                    index += 3
                }
            } else {
                out.append(byte)
                index += 1
            }
        }
        return out
    }

    static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar.value == 0x2028 || scalar.value == 0x2029
    }

    private static func escape(_ value: UInt32) -> String {
        let digits = String(value, radix: 16)
        return "\\u" + String(repeating: "0", count: 4 - digits.count) + digits
    }
}

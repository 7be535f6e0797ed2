import ChimeCore

/// The command line of a desktop entry's `Exec` key, split into arguments and joined back, by
/// the quoting rules of the Desktop Entry Specification.
///
/// Arguments stay in the `Exec` key's own terms: field codes (`%f %F %u %U %i %c %k`, and the
/// deprecated `%d %D %n %N %v %m` a launcher expands to nothing) and `%%` are kept as written,
/// for the launcher to expand. Only the quoting is undone and redone.
///
/// The key is a string value, so its escapes (``DesktopEntry/unescape(_:)``) are undone before
/// the quoting is: a literal backslash inside a quoted argument is written `\\\\` in the file.
/// ``DesktopEntry/value(_:locale:in:)`` undoes the first layer; ``split(_:)`` the second.
public enum Exec {
    /// The field codes of the specification, as the character after `%`.
    public static let fieldCodes: Set<Unicode.Scalar> = ["f", "F", "u", "U", "i", "c", "k"]
    /// The deprecated field codes, which launchers expand to nothing.
    public static let deprecatedFieldCodes: Set<Unicode.Scalar> = ["d", "D", "n", "N", "v", "m"]
    /// The characters that make an argument need quotes.
    public static let reservedCharacters: Set<Unicode.Scalar> = [
        " ", "\t", "\n", "\"", "'", "\\", ">", "<", "~", "|", "&", ";", "$", "*", "?", "#", "(", ")", "`",
    ]

    /// Splits an `Exec` value (string escapes already undone) into its arguments.
    ///
    /// Double-quoted arguments are read as the specification says (`\"`, `` \` ``, `\$`, `\\`
    /// inside the quotes). Beyond it, as GLib reads `Exec` through a shell-like parser,
    /// single-quoted parts (`sh -c 'a b'`), a backslash outside quotes (`a\ b`) and quoted parts
    /// glued to unquoted ones (`--name="a b"`) are read as a shell would.
    ///
    /// - Throws: ``ChimeError`` `.usage` naming the value when a quote is not closed, when it
    ///   has no argument at all, or when a `%` is followed by anything but a field code or `%`.
    public static func split(_ value: String) throws -> [String] {
        // Unicode scalars, not Characters: a combining mark after a quote must not hide it.
        var arguments: [String] = []
        var current = String.UnicodeScalarView()
        var inArgument = false
        var iterator = value.unicodeScalars.makeIterator()
        func fail(_ why: String) -> ChimeError {
            ChimeError.invalid("Exec command line", value, expected: "\(why), as the Desktop Entry Specification quotes arguments")
        }
        while let character = iterator.next() {
            switch character {
            case " ", "\t", "\n":
                if inArgument { arguments.append(String(current)) }
                current = String.UnicodeScalarView()
                inArgument = false
            case "\"":
                inArgument = true
                var closed = false
                while let next = iterator.next() {
                    if next == "\"" {
                        closed = true
                        break
                    }
                    if next == "\\" {
                        guard let escaped = iterator.next() else { break }
                        // In double quotes a backslash escapes only these; before anything else it is itself.
                        if !["\"", "`", "$", "\\"].contains(escaped) { current.append("\\") }
                        current.append(escaped)
                    } else {
                        current.append(next)
                    }
                }
                guard closed else { throw fail("a closing double quote") }
            case "'":
                inArgument = true
                var closed = false
                while let next = iterator.next() {
                    if next == "'" {
                        closed = true
                        break
                    }
                    current.append(next)
                }
                guard closed else { throw fail("a closing single quote") }
            case "\\":
                inArgument = true
                guard let escaped = iterator.next() else { throw fail("a character after the last backslash") }
                current.append(escaped)
            default:
                inArgument = true
                current.append(character)
            }
        }
        if inArgument { arguments.append(String(current)) }
        guard !arguments.isEmpty else { throw fail("a program to run") }
        for argument in arguments { try checkFieldCodes(argument, in: value) }
        return arguments
    }

    private static func checkFieldCodes(_ argument: String, in value: String) throws {
        var iterator = argument.unicodeScalars.makeIterator()
        while let character = iterator.next() {
            guard character == "%" else { continue }
            let code = iterator.next()
            guard let code, code == "%" || fieldCodes.contains(code) || deprecatedFieldCodes.contains(code) else {
                throw ChimeError.invalid(
                    "field code in Exec",
                    code.map { "%\($0)" } ?? "%",
                    expected: "one of %f %F %u %U %i %c %k, or %% for a literal percent sign (in '\(value)')"
                )
            }
        }
    }

    /// One argument written for an `Exec` value: as it is when it has no reserved character,
    /// else in double quotes with `"`, `` ` ``, `$` and `\` escaped. An empty argument is `""`.
    /// Field codes and `%%` are left as they are.
    public static func quote(_ argument: String) -> String {
        guard argument.isEmpty || argument.unicodeScalars.contains(where: reservedCharacters.contains) else { return argument }
        var quoted = "\""
        for scalar in argument.unicodeScalars {
            if scalar == "\"" || scalar == "`" || scalar == "$" || scalar == "\\" { quoted.append("\\") }
            quoted.unicodeScalars.append(scalar)
        }
        return quoted + "\""
    }

    /// Joins `arguments` into an `Exec` value (string escapes not yet applied: see
    /// ``DesktopEntry/setValue(_:for:in:)``, which applies them).
    public static func join(_ arguments: [String]) -> String {
        arguments.map(quote).joined(separator: " ")
    }
}

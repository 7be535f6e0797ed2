import ArgumentParser
import ChimeCore

/// Words on the command line that look like options but are not: a title such as "-h", a
/// mistyped duration such as "-1h", help asked for in the middle of a command.
///
/// argument-parser shows help (exit 0, nothing done) whenever `-h`, `--help` or `-help` appears
/// anywhere before `--`, also inside a short-option group such as `-1h`; so `chime in 5m -h`
/// would print help and a script would believe a reminder was scheduled. Chime's rule:
/// - help (and `--version`) is shown only when asked for alone: `chime in --help`;
/// - anywhere else, such a word, and in `in`, `at`, `every` and `notify` any word that starts
///   with `-` and is not one of the command's options, is a usage error (exit 64) naming it;
/// - after `--` every word is taken as it is: `chime in 5m -- "-h"` schedules a reminder titled "-h".
enum CommandWords {
    /// Refuses a help or version request that is not alone after the command's name.
    /// - Parameter arguments: the command line without the program name.
    static func checkHelp(_ arguments: [String]) throws(ChimeError) {
        var path: [String] = []
        var commands = Chime.configuration.subcommands
        var rest = arguments[...]
        while let word = rest.first, let command = commands.first(where: { $0._commandName == word }) {
            path.append(word)
            commands = command.configuration.subcommands
            rest = rest.dropFirst()
        }
        // Alone: `chime in --help`, `chime --version`.
        guard rest.count > 1 else { return }
        let end = rest.firstIndex(of: "--") ?? rest.endIndex
        if let word = rest[..<end].first(where: asksForHelp) {
            throw optionLike(word, path: path)
        }
    }

    /// The words of `in`, `at`, `every` or `notify` (collected with `.allUnrecognized`, so that
    /// they include `--` and anything that is not one of the command's options) as the command
    /// means them: the first `--` removed, and every word before it that looks like an option
    /// refused, except in the first `parsedFirst` positions, whose parser names such a word
    /// with what it accepts ("invalid duration '-5m'").
    static func literal(_ words: [String], parsedFirst: Int, path: [String]) throws(ChimeError) -> [String] {
        let end = words.firstIndex(of: "--") ?? words.endIndex
        for (index, word) in words[..<end].enumerated() where index >= parsedFirst && looksLikeOption(word) {
            throw optionLike(word, path: path)
        }
        var literal = words
        if end < words.endIndex { literal.remove(at: end) }
        return literal
    }

    /// "-x", "--zon", "-5": a dash and something after it ("-" alone is a word).
    static func looksLikeOption(_ word: String) -> Bool { word.hasPrefix("-") && word.count > 1 }

    /// "-x", "--urgent", "--no-replace=x": the form of an option's name (a letter after the
    /// dashes), unlike "-5m" (a mistyped duration) or "--" alone.
    static func isOptionName(_ word: String) -> Bool {
        let name = word.hasPrefix("--") ? word.dropFirst(2) : word.hasPrefix("-") ? word.dropFirst() : ""
        return name.first?.isLetter == true
    }

    /// `-h`, `--help`, `-help`, `--version`, or a short-option group holding `h` (`-1h`), which
    /// argument-parser reads as a request for help.
    static func asksForHelp(_ word: String) -> Bool {
        if ["--help", "--version", "-help"].contains(word) { return true }
        return word.hasPrefix("-") && !word.hasPrefix("--") && word.dropFirst().contains("h")
    }

    /// The one line for a word that looks like an option where a title or a value was expected.
    static func optionLike(_ word: String, path: [String]) -> ChimeError {
        let command = (["chime"] + path).joined(separator: " ")
        let example: String =
            switch path.first {
            case "in": "chime in 5m"
            case "at": "chime at 10:00"
            case "every": "chime every 2h"
            case "notify": "chime notify"
            default: command
            }
        let help = path.isEmpty ? "'chime --help'" : "'\(command) --help'"
        guard ["in", "at", "every", "notify"].contains(path.first) else {
            // No title or free text in this command: the word can only have been a request for help.
            return ChimeError(.usage, "'\(word)' in the middle of a command line: help is shown only when asked for alone, as \(help)")
        }
        if isOptionName(word) && !asksForHelp(word) {
            // "--urgent", "-x": an option this command does not have (not "too many words").
            return ChimeError(
                .usage,
                "unknown option '\(word)' for '\(command)': see \(help); a title that starts with '-' goes after --, as in "
                    + "\(example) -- \"\(word)\""
            )
        }
        return ChimeError(
            .usage,
            "'\(word)' looks like an option, not a title or a value: put a title that starts with '-' after --, as in "
                + "\(example) -- \"\(word)\"; for help, run \(help) alone"
        )
    }
}

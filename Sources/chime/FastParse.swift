import ArgumentParser

/// The command lines people and scripts type most (`chime --version`, `in`, `at`, `list`,
/// `cancel`) parsed without argument-parser, into the same command value it would return.
///
/// Why: argument-parser's parse costs more than the rest of these commands. Under callgrind
/// (static release build, Swift 6.3.1) `chime --version` counted 41.1 M instructions, 31 M of
/// them in the Swift runtime's conformance scan (`swift_conformsToProtocol`, which reads every
/// conformance record of the ~110 MB static binary for each new (type, protocol) pair): 23.5 M
/// in `String(describing:)` of each command type whose configuration had no `commandName`
/// (argument-parser's `Tree` names every command of the tree at each parse; fixed by naming
/// them all), and about 16 M more in the parse of the one command (`Mirror` over its property
/// wrappers, `as? ArgumentSetProvider` for each, the generic metadata of each `Option<T>`),
/// paid again by every process since none of it can be cached across runs.
///
/// The fast path knows only the plain forms: the command's exact option names, each at most
/// once, every option's value a word that does not start with '-', no `--`, and the values
/// that the command's own `validate()` accepts. Anything else (help, `--`, `--id=x`, `-qj`, a
/// repeated option, a word that starts with '-', a bad value, a completion request) returns
/// nil and argument-parser parses the line as before, with its help, errors and completions.
/// `FastParseTests` checks that the two agree on every command line of the CLI tests.
enum FastParse {
    /// What the fast path understood.
    enum Parsed {
        /// `chime --version` alone: argument-parser prints the version and exits 0.
        case version
        /// A command to run, as `Chime.parseAsRoot` would have returned it.
        case command(any AsyncParsableCommand)
    }

    /// The command line (without the program's name) parsed, or nil for argument-parser.
    static func parse(_ arguments: [String]) -> Parsed? {
        guard let name = arguments.first else { return nil }
        if arguments == ["--version"] { return .version }
        let words = Array(arguments.dropFirst())
        switch name {
        case "in": return scheduling(words, zone: false).map { .command(build(In(), $0)) }
        case "at":
            return scheduling(words, zone: true).map { parsed in
                var command = build(At(), parsed)
                command.zone = parsed.values["--zone"]
                return .command(command)
            }
        case "list":
            guard let line = split(words, values: GlobalFields.values.union(["--limit", "--after"]), flags: GlobalFields.flags),
                line.positional.isEmpty
            else { return nil }
            var command = List()
            command.global = GlobalFields.make(line)
            command.after = line.values["--after"]
            command.limit = nil
            if let text = line.values["--limit"] {
                guard let limit = Int(text) else { return nil }
                command.limit = limit
            }
            guard (try? command.validate()) != nil else { return nil }
            return .command(command)
        case "cancel":
            guard let line = split(words, values: GlobalFields.values, flags: GlobalFields.flags), !line.positional.isEmpty else {
                return nil
            }
            var command = Cancel()
            command.ids = line.positional
            command.global = GlobalFields.make(line)
            guard (try? command.validate()) != nil else { return nil }
            return .command(command)
        default: return nil
        }
    }

    /// A command line split into positional words, option values and flags.
    struct Line {
        var positional: [String] = []
        var values: [String: String] = [:]
        var flags: Set<String> = []
        /// `--exec` and the words after it (its argv, options included); nil when not given.
        var exec: [String]?
    }

    /// `words` split, or nil at anything the fast path leaves to argument-parser.
    /// - Parameter flags: flag spellings, each mapped to its one name (`-q` and `--quiet` are one).
    /// - Parameter exec: whether `--exec` takes the rest of the line (a bare `--exec` is left
    ///   to argument-parser).
    static func split(_ words: [String], values: Set<String>, flags: [String: String], exec: Bool = false) -> Line? {
        var line = Line()
        var index = words.startIndex
        while index < words.endIndex {
            let word = words[index]
            index += 1
            guard word.hasPrefix("-") else {
                line.positional.append(word)
                continue
            }
            if exec && word == "--exec" {
                guard index < words.endIndex else { return nil }
                line.exec = Array(words[index...])
                break
            } else if let flag = flags[word] {
                guard line.flags.insert(flag).inserted else { return nil }
            } else if values.contains(word) {
                guard index < words.endIndex, !words[index].hasPrefix("-"), line.values[word] == nil else { return nil }
                line.values[word] = words[index]
                index += 1
            } else {
                return nil
            }
        }
        return line
    }

    /// The options of ``GlobalOptions``.
    enum GlobalFields {
        static let values: Set<String> = ["--store"]
        static let flags = ["--json": "--json"]

        static func make(_ line: Line) -> GlobalOptions {
            var global = GlobalOptions()
            global.store = line.values["--store"]
            global.json = line.flags.contains("--json")
            return global
        }
    }

    /// `in` and `at`: their words, ``ScheduleOptions`` and ``GlobalOptions`` (and `at`'s `--zone`).
    static func scheduling(_ words: [String], zone: Bool) -> Line? {
        var values = Set(["--id", "--urgency", "--icon", "--sound", "--channel", "--exec-shell", "--exec-timeout"]).union(
            GlobalFields.values
        )
        if zone { values.insert("--zone") }
        let flags = ["--no-replace": "--no-replace", "-q": "--quiet", "--quiet": "--quiet", "--sticky": "--sticky"]
            .merging(GlobalFields.flags) { first, _ in first }
        guard let line = split(words, values: values, flags: flags, exec: true) else { return nil }
        // What argument-parser would refuse in ScheduleOptions.validate(): its message, not ours.
        guard (try? schedule(line).validate()) != nil else { return nil }
        return line
    }

    static func schedule(_ line: Line) -> ScheduleOptions {
        var schedule = ScheduleOptions()
        schedule.id = line.values["--id"]
        schedule.noReplace = line.flags.contains("--no-replace")
        schedule.quiet = line.flags.contains("--quiet")
        schedule.urgency = line.values["--urgency"]
        schedule.sticky = line.flags.contains("--sticky")
        schedule.icon = line.values["--icon"]
        schedule.sound = line.values["--sound"]
        schedule.channel = line.values["--channel"]
        schedule.execShell = line.values["--exec-shell"]
        schedule.execTimeout = line.values["--exec-timeout"]
        schedule.exec = line.exec ?? []
        schedule.execGiven = line.exec != nil
        return schedule
    }

    /// `in` or `at` with its words and options set.
    static func build<Command: SchedulingCommand>(_ empty: Command, _ line: Line) -> Command {
        var command = empty
        command.given = line.positional
        command.schedule = schedule(line)
        command.global = GlobalFields.make(line)
        return command
    }
}

/// `in` and `at`: the fields the fast path sets.
protocol SchedulingCommand: AsyncParsableCommand {
    var given: [String] { get set }
    var schedule: ScheduleOptions { get set }
    var global: GlobalOptions { get set }
}

extension In: SchedulingCommand {}
extension At: SchedulingCommand {}

import ArgumentParser
import Foundation
import Testing

@testable import chime

/// `FastParse` (the hot commands parsed without argument-parser) against argument-parser itself:
/// on every command line the CLI tests pass to chime, and on edge cases, the fast path either
/// declines (nil) or returns the command argument-parser returns, with the same fields.
@Suite("Fast path of the hot commands agrees with argument-parser")
struct FastParseTests {
    /// Edge cases beside the suite's own lines: `--`, help, repeated options, `=` forms, option
    /// values that look like options, bad values, unknown options, empty words.
    static let edgeCases: [[String]] = [
        ["--version"], ["--version", "--json"], ["in", "--version"], ["-h"], ["--help"], ["help", "in"],
        ["in", "5m", "x"], ["in", "5m", "x", "body"], ["in", "5m", "x", "b", "extra"], ["in"], ["in", "5m"],
        ["in", "5m", "--", "-h"], ["in", "5m", "x", "--"], ["in", "--", "5m", "x"], ["in", "5m", "x", "-h"],
        ["in", "5m", "x", "--help"], ["in", "-5m", "x"], ["in", "5m", "-x"], ["in", "5m", "x", "--json", "--json"],
        ["in", "5m", "x", "--id", "a", "--id", "b"], ["in", "5m", "x", "--id=a"], ["in", "5m", "x", "--id"],
        ["in", "5m", "x", "--id", "-a"], ["in", "5m", "x", "--id", "bad id"], ["in", "5m", "x", "-q", "--quiet"],
        ["in", "5m", "x", "-q"], ["in", "5m", "x", "-qj"], ["in", "--json", "5m", "--store", "/tmp/s", "x"],
        ["in", "5m", "x", "--urgency", "critical", "--sticky", "--icon", "call-start", "--sound", "bell"],
        ["in", "5m", "x", "--urgency", "loud"], ["in", "5m", "x", "--sound", ""], ["in", "5m", "x", "--store", ""],
        ["in", "5m", "x", "--no-replace", "--id", "tea"], ["in", "5m", "x", "--zone", "UTC"], ["in", "", ""],
        ["in", "5m", "x", "--icon", "relative/path.png"], ["in", "5m", "x", "-"], ["in", "5m", "x", "--unknown"],
        ["at", "14:30", "x"], ["at", "tomorrow", "09:00", "x"], ["at", "14:30", "x", "--zone", "Europe/Berlin"],
        ["at", "14:30", "x", "--zone", "Nowhere/City"], ["at", "14:30", "--zone", "UTC", "--zone", "UTC", "x"],
        ["at", "07:30", "--", "-h"], ["at", "14:30", "x", "--json", "-q"],
        ["list"], ["list", "--json"], ["list", "--store", "/tmp/s"], ["list", "x"], ["list", "--json", "--json"],
        ["list", "-h"], ["list", "--store"], ["list", "--store=/tmp/s"], ["list", "--", "x"],
        ["cancel"], ["cancel", "a"], ["cancel", "a", "b", "--json"], ["cancel", "a", "--json", "b"], ["cancel", "a", "a"],
        ["cancel", "bad id"], ["cancel", "--", "-a"], ["cancel", "-a"], ["cancel", "a", "--store", "/tmp/s"],
        ["in", "10min", "x"], ["in", "5", "minutes", "Tea"], ["in", "5", "Tea"], ["in", "5m", "minutes"],
        ["at", "noon", "x"], ["at", "midnight", "x", "--zone", "UTC"], ["at", "5", "pm", "x"], ["at", "tomorrow", "noon", "x"],
        ["every", "2h", "x"], ["run"], ["---completion", "in", "--", "--store", "1", "1", "chime", "in"],
    ]

    @Test("every command line of the CLI tests, and the edge cases")
    func agrees() throws {
        let lines = try Self.suiteLines() + Self.edgeCases
        #expect(lines.count > 300, "collected only \(lines.count) command lines")
        var accepted = 0
        for line in lines {
            guard let fast = FastParse.parse(line) else { continue }
            accepted += 1
            switch fast {
            case .version:
                #expect(line == ["--version"])
                do {
                    _ = try Chime.parseAsRoot(line)
                    Issue.record("argument-parser returned a command for \(line)")
                } catch {
                    #expect(Chime.exitCode(for: error) == .success)
                    #expect(Chime.fullMessage(for: error) == ChimeVersion.string)
                }
            case .command(let command):
                // What Main does without the fast path: Chime's help check, then argument-parser.
                let reference: any ParsableCommand
                do {
                    try CommandWords.checkHelp(line)
                    reference = try Chime.parseAsRoot(line)
                } catch {
                    Issue.record("the fast path took \(line), argument-parser refused it: \(Chime.message(for: error))")
                    continue
                }
                #expect(Self.fields(command) != nil, "\(line)")
                #expect(Self.fields(command) == Self.fields(reference), "\(line)")
                // These commands all check the config file first, which the fast path does unasked.
                #expect(Settings.checksFirst(type(of: command)))
            }
        }
        // The common lines do take the fast path (a fast path that declines everything is no fast path).
        #expect(accepted > 100, "the fast path took \(accepted) of \(lines.count) lines")
        for line in [
            ["in", "5m", "x"], ["at", "14:30", "x"], ["list"], ["cancel", "a"], ["--version"], ["list", "--json"],
            ["in", "5m", "x", "--exec", "/bin/echo", "-n", "--id", "y"],
            ["in", "5m", "x", "--exec-shell", "echo hi", "--exec-timeout", "5s"],
        ] {
            #expect(FastParse.parse(line) != nil, "\(line)")
        }
    }

    /// The parsed fields of the commands the fast path returns (nil for any other command).
    static func fields(_ command: any ParsableCommand) -> [String]? {
        func global(_ options: GlobalOptions) -> [String] { ["store=\(options.store ?? "nil")", "json=\(options.json)"] }
        func schedule(_ options: ScheduleOptions) -> [String] {
            [
                "id=\(options.id ?? "nil")", "noReplace=\(options.noReplace)", "quiet=\(options.quiet)",
                "urgency=\(options.urgency ?? "nil")", "sticky=\(options.sticky)", "icon=\(options.icon ?? "nil")",
                "sound=\(options.sound ?? "nil")", "exec=\(options.exec)", "execShell=\(options.execShell ?? "nil")",
                "execTimeout=\(options.execTimeout ?? "nil")",
            ]
        }
        switch command {
        case let command as In: return ["in", "\(command.given)"] + schedule(command.schedule) + global(command.global)
        case let command as At:
            return ["at", "\(command.given)", "zone=\(command.zone ?? "nil")"] + schedule(command.schedule) + global(command.global)
        case let command as List: return ["list"] + global(command.global)
        case let command as Cancel: return ["cancel", "\(command.ids)"] + global(command.global)
        default: return nil
        }
    }

    /// The command lines in Tests/ChimeCLITests: every `chime(...)` call and every array
    /// literal of strings that starts with one of chime's command names or an option, read from
    /// the sources (so a test added there is covered here). An interpolation becomes a path.
    static func suiteLines() throws -> [[String]] {
        let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("ChimeCLITests")
        let names = Set(Chime.configuration.subcommands.map { $0._commandName })
        var lines: [[String]] = []
        for file in try FileManager.default.contentsOfDirectory(atPath: directory.path) where file.hasSuffix(".swift") {
            let text = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
            var rest = Substring(text)
            while let open = rest.firstIndex(where: { $0 == "(" || $0 == "[" }) {
                let isCall = rest[open] == "(" && rest[..<open].hasSuffix("chime")
                rest = rest[rest.index(after: open)...]
                guard let words = literals(&rest), !words.isEmpty else { continue }
                if isCall || names.contains(words[0]) || words[0].hasPrefix("-") { lines.append(words) }
            }
        }
        return lines
    }

    /// String literals separated by commas at the start of `text` (advanced past them), or nil.
    static func literals(_ text: inout Substring) -> [String]? {
        var words: [String] = []
        var scan = text
        while true {
            scan = scan.drop { $0 == " " || $0 == "\n" }
            guard scan.first == "\"", !scan.hasPrefix("\"\"\"") else { break }
            scan = scan.dropFirst()
            var word = ""
            while let character = scan.first, character != "\"" {
                scan = scan.dropFirst()
                guard character == "\\", let escaped = scan.first else {
                    word.append(character)
                    continue
                }
                scan = scan.dropFirst()
                switch escaped {
                case "n": word.append("\n")
                case "t": word.append("\t")
                case "(":
                    var depth = 1
                    while depth > 0, let next = scan.first {
                        depth += next == "(" ? 1 : next == ")" ? -1 : 0
                        scan = scan.dropFirst()
                    }
                    word += "/tmp/interpolated"
                default: word.append(escaped)
                }
            }
            guard scan.first == "\"" else { return nil }
            scan = scan.dropFirst()
            words.append(word)
            scan = scan.drop { $0 == " " || $0 == "\n" }
            guard scan.first == "," else { break }
            scan = scan.dropFirst()
        }
        text = scan
        return words
    }
}

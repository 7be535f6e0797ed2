import Foundation
import Testing

/// The docs issue: a subcommand's `--help` says what it does and its options in one screen and
/// points at the man page for the rest; the man page is the reference, naming every command and
/// every option, with its EXIT STATUS, FILES, ENVIRONMENT and EXAMPLES for each group.
@Suite("--help fits a screen; the man page is the reference", .serialized)
struct HelpTests {
    /// The most lines a subcommand's help may take at 80 columns (a terminal's screen).
    static let screen = 40

    @Test("Each subcommand's --help fits 40 lines at 80 columns")
    func helpFitsOneScreen() throws {
        var checked = 0
        for path in try ExamplesTests.commandPaths() where !path.isEmpty {
            let help = try ExamplesTests.help(path, columns: 80)
            let rows = Self.rows(help)
            #expect(rows <= Self.screen, "chime \(path.joined(separator: " ")) --help: \(rows) lines\n\(help)")
            checked += 1
        }
        #expect(checked >= 60, "only \(checked) subcommands")
    }

    @Test("The top-level --help is shorter than it was (75 lines)")
    func topLevelHelpIsShorter() throws {
        let rows = Self.rows(try ExamplesTests.help([], columns: 80))
        #expect(rows < 75, "chime --help: \(rows) lines")
    }

    @Test("No --help explains the PostgreSQL store: one line names it, the man page has the rest")
    func helpHasNoPostgresParagraph() throws {
        for path in try ExamplesTests.commandPaths() where !path.isEmpty {
            let help = try ExamplesTests.help(path, columns: 80)
            let name = "chime \(path.joined(separator: " "))"
            // The shared --store option: one line, no defaults spelled out (the man page has them).
            let lines = Self.lines(help)
            if let start = lines.firstIndex(where: { $0.trimmingCharacters(in: .whitespaces).hasPrefix("--store ") }) {
                let entry = lines[start...].prefix { !$0.isEmpty }.prefix(while: { line in
                    line == lines[start] || !line.trimmingCharacters(in: .whitespaces).hasPrefix("-")
                })
                #expect(entry.count <= 2, "\(name) --help: --store takes \(entry.count) lines: \(entry.joined(separator: "\n"))")
                #expect(!entry.joined().contains("XDG_DATA_HOME"), "\(name) --help: --store spells out its defaults")
            }
            // PostgreSQL named at most on the --store line and on the options only a PostgreSQL
            // store has (chime run's --channel and --lease, in/at/every's --channel).
            // (The pointer at the man page's POSTGRESQL STORE section aside,
            let pointer = Self.lines(help.components(separatedBy: "\nUSAGE:").first ?? "").last
            // (and the examples, which may name a postgresql:// URL).
            let mentions = lines.filter { line in
                line.lowercased().contains("postgresql") && line != pointer
                    && !line.trimmingCharacters(in: .whitespaces).hasPrefix("chime ")
            }
            let optionsOnly = ["--channel", "--lease"].filter { help.contains($0) }.count
            #expect(
                mentions.count <= 1 + optionsOnly,
                "\(name) --help names PostgreSQL on \(mentions.count) lines:\n\(mentions.joined(separator: "\n"))"
            )
        }
    }

    @Test("Each subcommand's --help ends its discussion pointing at the man page")
    func helpPointsAtTheManPage() throws {
        for path in try ExamplesTests.commandPaths() where !path.isEmpty {
            let help = try ExamplesTests.help(path, columns: 80)
            let discussion = help.components(separatedBy: "\nUSAGE:").first ?? ""
            let last = Self.lines(discussion).last ?? ""
            #expect(
                last.contains("man chime") || last.contains("chime(1)"),
                "chime \(path.joined(separator: " ")) --help: the discussion ends with '\(last)'"
            )
        }
    }

    // MARK: - The man page

    @Test("The man page names every command and every option")
    func manPageNamesEverything() throws {
        let source = try String(contentsOf: ExamplesTests.manPage, encoding: .utf8)
        var options = 0
        var missing: [String] = []
        for (path, names) in try Self.commandOptions() where !path.isEmpty {
            let command = "chime " + path.map(Self.roff).joined(separator: " ")
            // Its own section (.SS "chime med add …") or a mention in another's text.
            let words = path.map(Self.roff).joined(separator: " ")
            if !source.contains(command) && !source.contains(".B \(words)") && !source.contains(".BR \(words)") {
                missing.append("chime \(path.joined(separator: " "))")
            }
            for name in names {
                let spelled = name.hasPrefix("--") ? "\\-\\-" + Self.roff(String(name.dropFirst(2))) : "\\-" + name.dropFirst()
                if !source.contains(spelled) { missing.append("\(name) (of chime \(path.joined(separator: " ")))") }
                options += 1
            }
        }
        #expect(missing.isEmpty, "packaging/chime.1 does not name: \(missing.joined(separator: ", "))")
        #expect(options >= 100, "only \(options) options")
    }

    @Test("The man page's SYNOPSIS names every top-level command")
    func synopsisNamesEveryCommand() throws {
        let source = try String(contentsOf: ExamplesTests.manPage, encoding: .utf8)
        let synopsis = try #require(Self.section("SYNOPSIS", of: source))
        // The word after each `.SY chime`: `.B med add` names med.
        let lines = synopsis.split(separator: "\n").map(String.init)
        var named: Set<String> = []
        for (index, line) in lines.enumerated() where line == ".SY chime" && index + 1 < lines.count {
            let next = lines[index + 1]
            guard next.hasPrefix(".B ") else { continue }
            let first = next.dropFirst(3).split(separator: " ").first.map(String.init) ?? ""
            named.insert(ExamplesTests.unescaped(first))
        }
        let top = Set(try ExamplesTests.commandPaths().compactMap { $0.count == 1 ? $0[0] : nil })
        #expect(top.count >= 25, "\(top)")
        let missing = top.subtracting(named).sorted()
        #expect(missing.isEmpty, "SYNOPSIS does not name: \(missing.joined(separator: ", "))")
    }

    @Test("The man page has the reference sections, and examples for every group")
    func manPageSections() throws {
        let source = try String(contentsOf: ExamplesTests.manPage, encoding: .utf8)
        for name in ["SYNOPSIS", "COMMANDS", "OPTIONS", "EXIT STATUS", "FILES", "ENVIRONMENT", "POSTGRESQL STORE", "EXAMPLES"] {
            #expect(Self.section(name, of: source) != nil, "packaging/chime.1 has no \(name) section")
        }
        let examples = ExamplesTests.manExamples(try #require(Self.section("EXAMPLES", of: source)))
        // Each group: plain reminders, the runner, focus, doses, the gateway, quiet hours,
        // configuration, the service, the PostgreSQL store.
        let missing = [
            "chime in ", "chime every ", "chime run", "chime focus ", "chime forest", "chime med add ", "chime dose ", "chime doses",
            "chime gate ", "chime quiet ", "chime config ", "chime service ", "chime doctor", "chime history",
        ].filter { start in !examples.contains { $0.hasPrefix(start) } }
        #expect(missing.isEmpty, "EXAMPLES has none that starts with: \(missing)")
        let postgres = examples.contains { $0.contains("postgresql://") }
        #expect(postgres, "EXAMPLES has no PostgreSQL store")
    }

    @Test("The section extraction reads .SH headings, quoted or not")
    func sectionExtraction() {
        let source = ".SH NAME\nchime\n.SH \"EXIT STATUS\"\n0 success\n.SH FILES\n.I x"
        #expect(Self.section("EXIT STATUS", of: source) == "0 success\n")
        #expect(Self.section("FILES", of: source) == ".I x\n")
        #expect(Self.section("ENVIRONMENT", of: source) == nil)
    }

    // MARK: - Helpers

    /// The lines of a text without the blank ones at its end.
    static func lines(_ text: String) -> [String] {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        while lines.last?.trimmingCharacters(in: .whitespaces).isEmpty == true { lines.removeLast() }
        return lines
    }

    /// The lines a text takes on an 80-column terminal: a longer line (USAGE, which
    /// argument-parser does not wrap) takes as many as it fills.
    static func rows(_ text: String) -> Int {
        lines(text).reduce(0) { $0 + max(1, ($1.count + 79) / 80) }
    }

    /// A word as groff source spells it: each '-' as `\-`.
    static func roff(_ word: String) -> String { word.replacingOccurrences(of: "-", with: "\\-") }

    /// The text of the man page's `.SH NAME` section (to the next `.SH`), or nil.
    static func section(_ name: String, of source: String) -> String? {
        var text: String?
        for line in source.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix(".SH ") {
                if text != nil { return text }
                let heading = line.dropFirst(4).trimmingCharacters(in: CharacterSet(charactersIn: "\" "))
                if heading == name { text = "" }
                continue
            }
            if text != nil { text! += line + "\n" }
        }
        return text
    }

    /// Every command's path with the names of its shown options (`--store`, `-q` …), from
    /// `--experimental-dump-help` (the help flags aside).
    static func commandOptions() throws -> [(path: [String], names: [String])] {
        let sandbox = try Sandbox()
        let dump = try sandbox.chime("--experimental-dump-help")
        #expect(dump.status == 0, "\(dump.stderr)")
        let root = try #require(try jsonObject(dump.stdout)["command"] as? [String: Any])
        func walk(_ command: [String: Any], _ path: [String]) -> [(path: [String], names: [String])] {
            let arguments = command["arguments"] as? [[String: Any]] ?? []
            let names = arguments.flatMap { argument -> [String] in
                guard argument["kind"] as? String != "positional", argument["shouldDisplay"] as? Bool != false else { return [] }
                return (argument["names"] as? [[String: Any]] ?? []).compactMap { name in
                    guard let text = name["name"] as? String else { return nil }
                    switch name["kind"] as? String {
                    case "long": return "--" + text
                    case "short": return "-" + text
                    default: return nil
                    }
                }
            }
            .filter { !["--help", "-h", "--version"].contains($0) }
            let subcommands = command["subcommands"] as? [[String: Any]] ?? []
            return [(path, names)]
                + subcommands.flatMap { sub in
                    (sub["commandName"] as? String).map { walk(sub, path + [$0]) } ?? []
                }
        }
        return walk(root, []).filter { $0.path != ["help"] }
    }
}

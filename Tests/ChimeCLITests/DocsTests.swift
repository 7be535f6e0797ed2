import Foundation
import Testing

/// The guides in docs/ and README.md stay honest: every relative link leads to a file that
/// exists (and an anchor to a heading in it), and every command in a ```sh block runs as
/// written, in order, against a new store for each page, as ``ExamplesTests`` runs the examples
/// of `--help` and the man page.
///
/// An example is a line of a ```sh block (a line ending in `\` goes on on the next): what a
/// person using Chime types. Every one starts with `chime `, or names one of Chime's scripts (a
/// line starting with `scripts/`, not run here: `scripts/test` and CI run them). A trailing shell
/// comment (`  # …`, outside quotes) is not part of it. Commands that cannot run to exit 0 in a
/// test are in ``allowList``, with the reason. The contributor guides' developer sessions
/// (`swift test`, `valgrind`, `chime-bench`: long, or needing a release build) are in ```console
/// blocks, which are not examples; every user guide has at least one ```sh block.
@Suite("The guides' links resolve and their examples run as written", .serialized)
struct DocsTests {
    typealias Expectation = ExamplesTests.Expectation

    /// The only examples that do not run to exit 0 here, each with the reason. Every entry must
    /// still be an example in a guide or README.md (``allowListHasNoStaleEntries()``).
    static let allowList: [String: (expect: Expectation, reason: String)] = [
        "chime run": (
            .replacedBy("timeout --preserve-status 8 chime run"),
            "the runner runs until stopped: here for 8 s, so that what is due fires (SIGTERM stops it with 0)"
        ),
        "chime run --notifier console": (.notRun, "the runner runs until stopped"),
        "chime run --notifier json": (.notRun, "the runner runs until stopped"),
        "chime run --notifier webhook --webhook-url-file ~/.config/chime/webhook-url": (
            .notRun, "the runner runs until stopped, and needs the URL file and a receiver"
        ),
        "chime run --notifier webhook --channel ops --webhook-url-file ~/.config/chime/webhook-url": (
            .notRun, "the runner runs until stopped, and needs a PostgreSQL store (channels)"
        ),
        "chime run --notifier ntfy": (.notRun, "the runner runs until stopped, and needs an ntfy server"),
        "chime focus start --watch": (.replacedBy("chime focus start"), "then watches the countdown until the session ends (25 minutes)"),
        "chime focus status --watch": (.notRun, "watches the countdown until the session ends"),
        "chime forest show 1": (.exits(3), "a new store has no tree yet: a session takes at least 10 minutes to complete"),
        "chime focus skip": (.exits(3), "a new store has no break running: a break follows a completed session (10 minutes at least)"),
        "chime store init --store 'postgresql:///chime?host=/run/postgresql'": (
            .exits(5), "needs a PostgreSQL server on /run/postgresql (PostgresCLITests runs store init on the test server)"
        ),
        "chime import reminders.json": (.exits(64), "imports the file the guide shows, which the test's directory does not have"),
        "chime --generate-completion-script bash > ~/.local/share/bash-completion/completions/chime": (
            .notRun,
            "writes into the home's bash-completion directory, which the guide says to make first (CompletionTests load the scripts)"
        ),
        "chime config edit": (.notRun, "opens an editor"),
        "chime status --format waybar": (
            .exits(7), "reads the runner over D-Bus; the test's store has no session bus (StatusTests run it on one)"
        ),
        "chime gate -- code .": (.notRun, "starts the program 'code'"),
        "chime app focus": (.notRun, "opens Chime's window until it is closed (AppWindowTests run it under Xvfb)"),
    ]

    // MARK: - The tests

    @Test("Every relative link in README.md and docs/ leads to a file, and its anchor to a heading there")
    func linksResolve() throws {
        var checked = 0
        for page in try [Self.readme] + Self.guides() {
            let text = try String(contentsOf: page, encoding: .utf8)
            for link in Self.links(text) {
                checked += 1
                if let problem = Self.problem(with: link, from: page) {
                    Issue.record("\(page.lastPathComponent): [\(link)]: \(problem)")
                }
            }
        }
        // The extraction found the links (it cannot silently find none).
        #expect(checked >= 20, "only \(checked) relative links found")
    }

    @Test("Each guide's examples run in order against a new store", arguments: try DocsTests.guides().map(\.lastPathComponent))
    func guideExamplesRun(_ guide: String) async throws {
        let text = try String(contentsOf: Self.docs.appendingPathComponent(guide), encoding: .utf8)
        let lines = Self.shellLines(text)
        #expect(!lines.isEmpty || Self.contributorGuides.contains(guide), "\(guide) has no ```sh example")
        let sandbox = try Sandbox()
        for line in lines where !line.hasPrefix("scripts/") {
            guard line.hasPrefix("chime ") else {
                Issue.record("\(guide): a line of a ```sh block that is neither a chime command nor a script: \(line)")
                continue
            }
            try await Self.check(Self.withoutComment(line), page: guide, in: sandbox)
        }
    }

    @Test("README.md's examples run in order against a new store (its scripts/ lines aside)")
    func readmeExamplesRun() async throws {
        let lines = Self.shellLines(try String(contentsOf: Self.readme, encoding: .utf8))
        let sandbox = try Sandbox()
        for line in lines where !line.hasPrefix("scripts/") {
            guard line.hasPrefix("chime ") else {
                Issue.record("README.md: a line of a ```sh block that is neither a chime command nor a script: \(line)")
                continue
            }
            try await Self.check(Self.withoutComment(line), page: "README.md", in: sandbox)
        }
    }

    @Test("The configuration guide names every key of 'chime config example'")
    func configurationGuideNamesEveryKey() throws {
        let sandbox = try Sandbox()
        let example = try sandbox.chime("config", "example")
        #expect(example.status == 0, "\(example.stderr)")
        let keys = Self.configKeys(example.stdout)
        #expect(keys.count >= 10, "\(keys)")
        let guide = try String(contentsOf: Self.docs.appendingPathComponent("configuration.md"), encoding: .utf8)
        for key in keys {
            #expect(guide.contains("`\(key)`"), "docs/configuration.md does not name the key `\(key)`")
        }
    }

    @Test("Every allow-list entry is an example today")
    func allowListHasNoStaleEntries() throws {
        var all = Set(Self.shellLines(try String(contentsOf: Self.readme, encoding: .utf8)).map(Self.withoutComment))
        for guide in try Self.guides() {
            all.formUnion(Self.shellLines(try String(contentsOf: guide, encoding: .utf8)).map(Self.withoutComment))
        }
        for example in Self.allowList.keys.sorted() {
            #expect(all.contains(example), "allow-listed but no longer an example: \(example)")
        }
    }

    @Test("The extraction reads examples, links and headings as a person would")
    func extraction() {
        let page = """
            # Reminders

            Prose with `chime in 5m x` and a [link](runner.md#start-it-at-login) and
            [another](https://example.org) and [a heading here](#the-grammar-of-times-and-rules).

            ```sh
            chime in 25m "Tea"                # a comment
            chime at 09:00 "A # in quotes" --id a

            chime in 1m \\
                "Long"
            ```

            ```
            chime not-an-example
            [not a link](nowhere.md)
            ```

            ## The grammar of times and rules
            ## `chime run`: the runner!
            ## The grammar of times and rules
            """
        #expect(
            Self.shellLines(page) == [
                "chime in 25m \"Tea\"                # a comment", "chime at 09:00 \"A # in quotes\" --id a", "chime in 1m \"Long\"",
            ]
        )
        #expect(Self.withoutComment("chime in 25m \"Tea\"                # a comment") == "chime in 25m \"Tea\"")
        #expect(Self.withoutComment("chime at 09:00 \"A # in quotes\" --id a") == "chime at 09:00 \"A # in quotes\" --id a")
        #expect(Self.links(page) == ["runner.md#start-it-at-login", "#the-grammar-of-times-and-rules"])
        #expect(
            Self.anchors(page) == [
                "reminders", "the-grammar-of-times-and-rules", "chime-run-the-runner", "the-grammar-of-times-and-rules-1",
            ]
        )
        #expect(Self.runsUntilStopped("chime run --notifier json") && Self.runsUntilStopped("chime focus start --watch"))
        #expect(!Self.runsUntilStopped("chime in 1s Tea && timeout 3 chime run; chime done tea") && !Self.runsUntilStopped("chime runs"))
        #expect(
            Self.configKeys("notifier = 1\n# store = \"x\"\n[quiet]\n# hours = \"off\"\n# A comment: not = a key\n") == [
                "store", "quiet.hours",
            ]
        )
    }

    // MARK: - Running one example

    /// Runs `example` as ``ExamplesTests`` does (through `sh -c`, in the sandbox, `chime` being
    /// this build's) and checks its exit status: 0, or this allow-list's.
    static func check(_ example: String, page: String, in sandbox: borrowing Sandbox) async throws {
        try await ExamplesTests.check(example, page: page, in: sandbox, allowList: allowList, runsUntilStopped: runsUntilStopped)
    }

    /// Whether `example` starts a runner or watches a countdown: it runs until stopped.
    static func runsUntilStopped(_ example: String) -> Bool {
        example == "chime run" || example.hasPrefix("chime run ") || example.contains(" --watch") || example.contains(" --follow")
    }

    // MARK: - Finding the pages, the examples and the links

    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let docs = root.appendingPathComponent("docs")
    static let readme = root.appendingPathComponent("README.md")

    /// The guides for those who change Chime rather than use it: they may have no ```sh example.
    static let contributorGuides: Set<String> = ["architecture.md", "performance.md", "reliability.md", "testing.md"]

    /// docs/*.md, by name.
    static func guides() throws -> [URL] {
        try FileManager.default.contentsOfDirectory(at: docs, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "md" }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
    }

    /// A page's lines outside its fenced code blocks (those lines are code, not links or headings).
    static func prose(_ text: String) -> [String] {
        var lines: [String] = []
        var fenced = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.trimmingCharacters(in: .whitespaces).hasPrefix("```") {
                fenced.toggle()
                continue
            }
            if !fenced { lines.append(String(line)) }
        }
        return lines
    }

    /// The lines of a page's ```sh blocks, trimmed, without blank lines and whole-line comments;
    /// a line that ends with `\` goes on on the next.
    static func shellLines(_ text: String) -> [String] {
        var lines: [String] = []
        var inShell = false
        var inOther = false
        var pending: String?
        for raw in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("```") {
                if inShell || inOther {
                    inShell = false
                    inOther = false
                } else if line == "```sh" || line == "```shell" || line == "```bash" {
                    inShell = true
                } else {
                    inOther = true
                }
                continue
            }
            guard inShell else { continue }
            let joined = pending.map { $0 + " " + line } ?? line
            pending = nil
            if joined.hasSuffix("\\") {
                pending = String(joined.dropLast()).trimmingCharacters(in: .whitespaces)
                continue
            }
            guard !joined.isEmpty, !joined.hasPrefix("#") else { continue }
            lines.append(joined)
        }
        return lines
    }

    /// An example without its trailing shell comment: a `#` that starts a word outside quotes.
    static func withoutComment(_ line: String) -> String {
        var quote: Character?
        var previous: Character = " "
        for index in line.indices {
            let character = line[index]
            if let open = quote {
                if character == open { quote = nil }
            } else if character == "\"" || character == "'" {
                quote = character
            } else if character == "#", previous == " " || previous == "\t" {
                return String(line[..<index]).trimmingCharacters(in: .whitespaces)
            }
            previous = character
        }
        return line
    }

    /// The relative links of a page's prose (`[text](target)`, `![alt](target)`, and
    /// `[label]: target`), inline code left out; a link with a scheme (https:, mailto:) is not
    /// relative.
    static func links(_ text: String) -> [String] {
        var targets: [String] = []
        let inline = /\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/
        let reference = /^\s{0,3}\[[^\]]+\]:\s*<?([^\s>]+)>?/
        for line in prose(text) {
            let code = line.split(separator: "`", omittingEmptySubsequences: false)
            // The parts between backticks are code spans: only the others are prose.
            let outside = code.enumerated().filter { $0.offset % 2 == 0 }.map(\.element).joined(separator: " ")
            for match in outside.matches(of: inline) { targets.append(String(match.output.1)) }
            if let match = outside.firstMatch(of: reference) { targets.append(String(match.output.1)) }
        }
        return targets.filter { $0.firstMatch(of: /^[A-Za-z][A-Za-z0-9+.-]*:/) == nil }
    }

    /// What is wrong with a relative link of `page`, or nil when it leads to a file (and its
    /// anchor, if any, to a heading of that file).
    static func problem(with link: String, from page: URL) -> String? {
        let parts = link.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
        let path = String(parts[0]).removingPercentEncoding ?? String(parts[0])
        let anchor = parts.count > 1 ? String(parts[1]) : nil
        let target = path.isEmpty ? page : page.deletingLastPathComponent().appendingPathComponent(path).standardizedFileURL
        guard FileManager.default.fileExists(atPath: target.path) else { return "no file \(target.path)" }
        guard let anchor, !anchor.isEmpty else { return nil }
        guard target.pathExtension == "md", let text = try? String(contentsOf: target, encoding: .utf8) else {
            return "an anchor into \(target.lastPathComponent), which is not a Markdown page"
        }
        let anchors = anchors(text)
        return anchors.contains(anchor)
            ? nil : "no heading '#\(anchor)' in \(target.lastPathComponent) (it has: \(anchors.joined(separator: ", ")))"
    }

    /// The anchors GitHub makes for a page's headings: the heading's text (a link's text, not
    /// its target) in lower case, without punctuation but `-` and `_`, spaces made `-`; a
    /// heading seen before gets `-1`, `-2` … after it.
    static func anchors(_ text: String) -> [String] {
        var seen: [String: Int] = [:]
        var anchors: [String] = []
        for line in prose(text) {
            guard let match = line.firstMatch(of: /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/) else { continue }
            let heading = String(match.output.1).replacing(/\[([^\]]*)\]\([^)]*\)/) { String($0.output.1) }
            var slug = ""
            for character in heading.lowercased() {
                if character == " " {
                    slug.append("-")
                } else if character.isLetter || character.isNumber || character == "-" || character == "_" {
                    slug.append(character)
                }
            }
            let count = seen[slug, default: 0]
            seen[slug] = count + 1
            anchors.append(count == 0 ? slug : "\(slug)-\(count)")
        }
        return anchors
    }

    /// The keys of `chime config example`: each commented-out `key = value`, named with its
    /// section as `section.key` (a key before any section by itself).
    static func configKeys(_ example: String) -> [String] {
        var section: String?
        var keys: [String] = []
        for line in example.split(separator: "\n") {
            if let match = line.firstMatch(of: /^\[([a-z_]+)\]\s*$/) {
                section = String(match.output.1)
            } else if let match = line.firstMatch(of: /^#\s*([a-z_]+)\s*=\s/) {
                keys.append(section.map { "\($0).\(match.output.1)" } ?? String(match.output.1))
            }
        }
        return keys
    }
}

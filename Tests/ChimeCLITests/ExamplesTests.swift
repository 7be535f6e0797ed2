import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Every example in a command's `--help` and in the man page runs as written,
/// through a shell (pipes, `||`, `>` as a person types them), against a temporary store, and no
/// example wraps in the middle of the command in 80 columns.
///
/// An example is a line of a `--help` text before its USAGE (the command's discussion) that is
/// indented and starts with `chime `, or a line that starts with `chime ` inside the man page's
/// `.EX`/`.EE` blocks. A comment after it, `# …` or two spaces and `(…)` at the end of the line,
/// is not part of it. Each help page's examples run in order in one new store, and the man
/// page's likewise, so an example may use what an earlier one on its page made.
@Suite("Examples in --help and the man page run as written", .serialized)
struct ExamplesTests {
    /// What an example that cannot succeed here does instead.
    enum Expectation: Sendable {
        /// It runs and exits with this status (the store a test starts from lacks what it names).
        case exits(Int32)
        /// It is not run (it runs until stopped, or starts a program), for the reason given.
        case notRun
        /// It runs until stopped: this command, which does what it starts with, runs in its place
        /// (so that the examples after it find what it made).
        case replacedBy(String)
    }

    /// The only examples that do not run to exit 0 here, each with the reason. Every entry must
    /// still be an example (``allowListHasNoStaleEntries()``).
    static let allowList: [String: (expect: Expectation, reason: String)] = [
        "chime store init --store postgresql:///chime?host=/run/postgresql": (
            .exits(5), "needs a PostgreSQL server on /run/postgresql (PostgresCLITests runs store init on the test server)"
        ),
        "chime run": (.notRun, "the runner runs until stopped (EndToEndTests start and stop it by pid)"),
        "chime run --notifier json | jq -r .title": (.notRun, "the runner runs until stopped"),
        "chime run --channel kitchen": (
            .notRun, "a runner on the PostgreSQL store that CHIME_STORE names, until stopped (PostgresRunnerCLITests runs them)"
        ),
        "chime status": (.exits(7), "reads the runner over D-Bus; the test's store has no session bus (StatusTests run it on one)"),
        "chime status --follow --format waybar": (.notRun, "follows the runner until stopped (StatusTests run --follow)"),
        "chime focus start --watch": (.replacedBy("chime focus start"), "then watches the countdown until the session ends (25 minutes)"),
        "chime focus status --watch": (.notRun, "watches the countdown until the session ends"),
        "chime dose take": (.exits(3), "needs a dose due now; a store made now has none, and the test cannot wait for one"),
        "chime dose take 12 --notes \"with breakfast\"": (.exits(3), "needs dose 12, due now"),
        "chime dose skip med-3-20261122-0800": (.exits(3), "needs schedule 3's dose of 2026-11-22"),
        "chime dose snooze --minutes 15": (.exits(3), "needs a dose due now"),
        "chime med edit Aspirin --at 09:00,21:00": (.exits(3), "needs the medication Aspirin ('chime med add' makes it on its own page)"),
        "chime app": (.notRun, "opens Chime's window until it is closed (AppWindowTests run it under Xvfb)"),
        "chime app focus": (.notRun, "opens Chime's window until it is closed (AppWindowTests run it under Xvfb)"),
        "chime gate": (.notRun, "on a terminal, asks which program to open, then opens it"),
        "chime gate -- code .": (.notRun, "starts the program 'code'"),
        "chime gate add --pick": (.notRun, "asks on a terminal which program to gate"),
        "chime gate open firefox-esr.desktop -- firefox-esr https://example.org": (.notRun, "starts Firefox"),
    ]

    // MARK: - The tests

    @Test("Each help page's examples run in order against a new store")
    func helpExamplesRun() async throws {
        var ran = 0
        for path in try Self.commandPaths() {
            let examples = Self.helpExamples(try Self.help(path, columns: 1_000))
            guard !examples.isEmpty else { continue }
            let sandbox = try Sandbox()
            for example in examples {
                try await Self.check(example, page: "chime \(path.joined(separator: " ")) --help", in: sandbox)
                ran += 1
            }
        }
        // The extraction found the examples (it cannot silently find none).
        #expect(ran >= 40, "only \(ran) examples found in --help")
    }

    @Test("The man page's examples run in order against a new store")
    func manExamplesRun() async throws {
        let examples = Self.manExamples(try String(contentsOf: Self.manPage, encoding: .utf8))
        #expect(examples.contains("chime in 25m \"Tea is ready\""), "\(examples)")
        #expect(examples.count >= 15, "\(examples)")
        let sandbox = try Sandbox()
        for example in examples {
            try await Self.check(example, page: "chime.1", in: sandbox)
        }
    }

    @Test("No example in --help wraps in 80 columns")
    func helpExamplesDoNotWrap() throws {
        for path in try Self.commandPaths() {
            let wide = Self.helpExamples(try Self.help(path, columns: 1_000))
            let narrow = Self.helpExamples(try Self.help(path, columns: 80))
            // A wrapped example loses its end to the next line, which is no longer an example.
            #expect(narrow == wide, "chime \(path.joined(separator: " ")) --help wraps an example in 80 columns")
        }
    }

    @Test("No example in the man page is wider than 80 columns as man shows it")
    func manExamplesFit() throws {
        // groff -man indents an example in .RS by 14 columns (7 for the section, 7 for .RS) and
        // does not wrap .EX lines: a longer one runs past the edge.
        // Each line as man shows it: an example continued with a backslash takes two.
        let source = try String(contentsOf: Self.manPage, encoding: .utf8)
        var inExample = false
        var lines = 0
        for line in source.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix(".EX") || line.hasPrefix(".EE") {
                inExample = line.hasPrefix(".EX")
                continue
            }
            guard inExample, Self.unescaped(String(line)).hasPrefix("chime ") || line.hasPrefix("    ") else { continue }
            let text = Self.unescaped(String(line))
            #expect(14 + text.count <= 80, "\(text.count) characters: \(text)")
            lines += 1
        }
        #expect(lines >= 15)
    }

    @Test("Every allow-list entry is an example today")
    func allowListHasNoStaleEntries() throws {
        var all = Set(Self.manExamples(try String(contentsOf: Self.manPage, encoding: .utf8)))
        for path in try Self.commandPaths() { all.formUnion(Self.helpExamples(try Self.help(path, columns: 1_000))) }
        for example in Self.allowList.keys.sorted() {
            #expect(all.contains(example), "allow-listed but no longer an example: \(example)")
        }
    }

    @Test("The extraction reads examples, comments and man escapes as a person would")
    func extraction() {
        let help = """
            OVERVIEW: Remind once.

            Prose that mentions chime in passing
            chime at the start of a prose line
            Examples:
              chime in 25m "Tea"
              chime in 5m -- "-h"      (a title that starts with '-', after --)
              chime at 2026-12-24T17:00Z "Presents (UTC)"   # a shell comment

            USAGE: chime in <duration title [body]>
              chime not-an-example
            """
        #expect(
            Self.helpExamples(help) == [
                "chime in 25m \"Tea\"", "chime in 5m -- \"-h\"", "chime at 2026-12-24T17:00Z \"Presents (UTC)\"   # a shell comment",
            ]
        )
        let man = """
            .SH EXAMPLES
            .EX
            chime at 09:00 "Stand\\-up" \\-\\-id standup \\-\\-no\\-replace || echo taken
            rvk8n  Sun 2026\\-11\\-22 04:37
            chime in 1m \\e
                "Tea"
            .EE
            chime list
            """
        #expect(Self.manExamples(man) == ["chime at 09:00 \"Stand-up\" --id standup --no-replace || echo taken", "chime in 1m \"Tea\""])
    }

    // MARK: - Running one example

    /// Runs `example` with `sh -c` in the sandbox's directory and environment (its store, no
    /// desktop), `chime` being this build's, and checks its exit status: 0, or the allow-list's.
    /// `allowList` is the page's (DocsTests has its own); an example that `runsUntilStopped` and
    /// has no entry there is reported, not run: it would outlive the 60 s watchdog, which stops
    /// only its shell (and Process waits for every holder of its pipe, a runner too).
    static func check(
        _ example: String,
        page: String,
        in sandbox: borrowing Sandbox,
        allowList: [String: (expect: Expectation, reason: String)] = ExamplesTests.allowList,
        runsUntilStopped: (String) -> Bool = { _ in false }
    ) async throws {
        let allowed = allowList[example]
        var command = example
        var expected: Int32 = 0
        switch allowed?.expect {
        case .notRun: return
        case .exits(let status): expected = status
        case .replacedBy(let instead): command = instead
        case nil:
            if runsUntilStopped(example) {
                Issue.record("\(page): '\(example)' runs until stopped: give it an allow-list entry")
                return
            }
        }
        let (status, output) = try await run(command, in: sandbox)
        #expect(
            status == expected,
            "\(page): '\(command)' exited \(status), expected \(expected)\(allowed.map { " (\($0.reason))" } ?? ""): \(output)"
        )
    }

    /// The programs the gateway's examples name, installed in the sandbox's data directory.
    static let desktopEntries = [
        "firefox-esr": "[Desktop Entry]\nType=Application\nName=Firefox ESR\nExec=/usr/lib/firefox-esr/firefox-esr %u\n"
    ]

    /// The exit status and output (both streams) of `sh -c example`; killed by its pid after 60 s.
    static func run(_ example: String, in sandbox: borrowing Sandbox) async throws -> (Int32, String) {
        let applications = URL(fileURLWithPath: sandbox.environment["XDG_DATA_HOME"] ?? sandbox.directory.path)
            .appendingPathComponent("applications")
        try FileManager.default.createDirectory(at: applications, withIntermediateDirectories: true)
        for (id, entry) in desktopEntries {
            let file = applications.appendingPathComponent("\(id).desktop")
            // Once: `chime gate add` may put its own launcher in its place.
            if !FileManager.default.fileExists(atPath: file.path) { try entry.write(to: file, atomically: true, encoding: .utf8) }
        }
        var environment = sandbox.environment
        environment["PATH"] = ChimeExecutable.url.deletingLastPathComponent().path + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
        let output = sandbox.directory.appendingPathComponent("example-output")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", example]
        process.environment = environment
        process.currentDirectoryURL = sandbox.directory
        process.standardInput = FileHandle.nullDevice
        let handle = try FileHandle(forWritingTo: output)
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        // A watchdog, not a sleep: an example that hangs is stopped by its pid and fails.
        let pid = process.processIdentifier
        let watchdog = DispatchWorkItem { _ = kill(pid, SIGKILL) }
        DispatchQueue.global().asyncAfter(deadline: .now() + 60, execute: watchdog)
        // Polled, not waitUntilExit(): an example may run for seconds (a runner under timeout),
        // and a blocked thread of Swift's small pool starves the tests running beside this one.
        while process.isRunning { try await Task.sleep(for: .milliseconds(20)) }
        process.waitUntilExit()
        watchdog.cancel()
        try handle.close()
        let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
        return (process.terminationStatus, text)
    }

    // MARK: - Finding the examples

    static let manPage = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("packaging/chime.1")

    /// Every command's path (`[]`, `["in"]`, `["med", "add"]` …), from argument-parser's own
    /// description of the command tree (`--experimental-dump-help`).
    static func commandPaths() throws -> [[String]] {
        let sandbox = try Sandbox()
        let dump = try sandbox.chime("--experimental-dump-help")
        #expect(dump.status == 0, "\(dump.stderr)")
        let root = try #require(try jsonObject(dump.stdout)["command"] as? [String: Any])
        func walk(_ command: [String: Any], _ path: [String]) -> [[String]] {
            let subcommands = command["subcommands"] as? [[String: Any]] ?? []
            return [path]
                + subcommands.flatMap { sub in
                    (sub["commandName"] as? String).map { walk(sub, path + [$0]) } ?? []
                }
        }
        // argument-parser's own `chime help` has no examples and takes no --help.
        return walk(root, []).filter { $0 != ["help"] }
    }

    /// `chime PATH --help` as printed in `columns` columns.
    static func help(_ path: [String], columns: Int) throws -> String {
        let sandbox = try Sandbox(extra: ["COLUMNS": String(columns)])
        let result = try sandbox.chime(path + ["--help"])
        #expect(result.status == 0, "chime \(path.joined(separator: " ")) --help: \(result.stderr)")
        return result.stdout
    }

    /// The examples of a help text: its indented lines that start with `chime ` before USAGE.
    static func helpExamples(_ help: String) -> [String] {
        let discussion = help.components(separatedBy: "\nUSAGE:").first ?? ""
        return discussion.split(separator: "\n", omittingEmptySubsequences: false).compactMap { line in
            guard line.first == " " else { return nil }
            let text = line.trimmingCharacters(in: .whitespaces)
            return text.hasPrefix("chime ") ? withoutNote(text) : nil
        }
    }

    /// The examples of the man page: the lines of its `.EX` blocks that start with `chime `
    /// (a line that ends with `\e` goes on on the next), with roff's escapes read.
    static func manExamples(_ source: String) -> [String] {
        var examples: [String] = []
        var inExample = false
        var pending: String?
        for raw in source.split(separator: "\n", omittingEmptySubsequences: false) {
            let line = String(raw)
            if line.hasPrefix(".EX") {
                inExample = true
                continue
            }
            if line.hasPrefix(".EE") {
                inExample = false
                continue
            }
            guard inExample else { continue }
            let text = unescaped(line)
            if let start = pending {
                pending = nil
                let joined = start + " " + text.trimmingCharacters(in: .whitespaces)
                if joined.hasSuffix("\\") {
                    pending = String(joined.dropLast()).trimmingCharacters(in: .whitespaces)
                } else {
                    examples.append(withoutNote(joined))
                }
                continue
            }
            guard text.hasPrefix("chime ") else { continue }
            if text.hasSuffix("\\") {
                pending = String(text.dropLast()).trimmingCharacters(in: .whitespaces)
            } else {
                examples.append(withoutNote(text))
            }
        }
        return examples
    }

    /// The man page's text as shown: `\-` a dash, `\e` a backslash, `\(ti` a tilde, fonts and
    /// zero-width escapes removed.
    static func unescaped(_ line: String) -> String {
        var text = line
        for (escape, shown) in [
            ("\\-", "-"), ("\\(ti", "~"), ("\\(em", "—"), ("\\(aq", "'"), ("\\(dq", "\""), ("\\&", ""), ("\\|", ""),
            ("\\fI", ""), ("\\fB", ""), ("\\fR", ""), ("\\fP", ""), ("\\e", "\\"),
        ] {
            text = text.replacingOccurrences(of: escape, with: shown)
        }
        return text
    }

    /// An example without the note after it: two or more spaces and `(…)` at the end of the line.
    /// (A shell comment, `# …`, stays: the shell reads it as one.)
    static func withoutNote(_ text: String) -> String {
        guard text.hasSuffix(")"), let open = text.range(of: "  (", options: .backwards) else { return text }
        return String(text[..<open.lowerBound]).trimmingCharacters(in: .whitespaces)
    }
}

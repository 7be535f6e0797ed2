import Foundation
import Testing

/// The input checks, through the real executable: what a script could mistake for
/// success is a usage error (exit 64) in one line naming the value, and the store is left as it was.
@Suite("Input checks: options that look like titles, values that would be misread", .serialized)
struct InputChecksTests {
    /// Runs `arguments` in a sandbox holding one pending reminder, and checks: exit `status`, one
    /// line on standard error containing `named`, nothing on standard output, the store unchanged.
    func expectRefused(
        _ arguments: [String],
        status: Int32 = 64,
        named: String,
        sourceLocation: SourceLocation = #_sourceLocation
    )
        throws
    {
        let sandbox = try Sandbox()
        #expect(try sandbox.chime("in", "10m", "Keep me", "--id", "keep").status == 0)
        let before = try sandbox.chime("list", "--json").stdout

        let result = try sandbox.chime(arguments)

        #expect(result.status == status, "\(arguments): \(result.stderr)", sourceLocation: sourceLocation)
        #expect(result.stdout.isEmpty, "\(arguments): \(result.stdout)", sourceLocation: sourceLocation)
        #expect(result.stderr.split(separator: "\n").count == 1, "\(arguments): \(result.stderr)", sourceLocation: sourceLocation)
        #expect(result.stderr.contains(named), "\(arguments): \(result.stderr)", sourceLocation: sourceLocation)
        #expect(try sandbox.chime("list", "--json").stdout == before, "\(arguments)", sourceLocation: sourceLocation)
    }

    @Test(
        "A word that asks for help, or looks like an option, among a command's words is a usage error naming it",
        arguments: [
            (["every", "-1h", "T"], "'-1h'"), (["in", "5m", "-h"], "'-h'"), (["at", "10:00", "-h"], "'-h'"),
            (["in", "5m", "--help", "T"], "'--help'"), (["in", "5m", "T", "-help"], "'-help'"), (["in", "5m", "-x"], "'-x'"),
            (["at", "10:00", "-x"], "'-x'"), (["every", "2h", "-x"], "'-x'"), (["in", "5m", "T", "-b"], "'-b'"),
            (["cancel", "keep", "-h"], "'-h'"), (["in", "5m", "T", "--version"], "'--version'"),
            (["notify", "--notifier", "console", "-h"], "'-h'"), (["notify", "--notifier", "console", "-x"], "'-x'"),
        ]
    )
    func optionLikeWords(arguments: [String], named: String) throws {
        try expectRefused(arguments, named: named)
    }

    @Test("After --, a title or body that starts with '-' is taken as it is")
    func titlesAfterTheTerminator() throws {
        let sandbox = try Sandbox()
        for (arguments, title, body) in [
            (["in", "5m", "--json", "--", "-h"], "-h", ""), (["at", "23:59", "--json", "--", "-x", "--help"], "-x", "--help"),
            (["every", "2h", "--json", "--", "-1h"], "-1h", ""), (["in", "5m", "T", "--json", "--", "-b"], "T", "-b"),
            (["in", "5m", "--id", "dash", "--json", "--", "--", "--id"], "--", "--id"),
        ] {
            let result = try sandbox.chime(arguments)
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
            let reminder = try #require(try jsonObject(result.stdout)["reminder"] as? [String: Any], "\(arguments)")
            #expect(reminder["title"] as? String == title, "\(arguments)")
            #expect(reminder["body"] as? String == body, "\(arguments)")
        }
        let shown = try sandbox.chime("notify", "--notifier", "json", "--", "-h")
        #expect(shown.status == 0, "\(shown.stderr)")
        #expect(try jsonObject(shown.stdout)["title"] as? String == "-h")
    }

    @Test(
        "--help alone still shows help",
        arguments: [["in", "--help"], ["at", "-h"], ["every", "--help"], ["cancel", "--help"], ["--help"]]
    )
    func helpAlone(arguments: [String]) throws {
        let sandbox = try Sandbox()
        let result = try sandbox.chime(arguments)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("USAGE:"), "\(result.stdout)")
        #expect(result.stdout.contains("--"), "\(result.stdout)")
    }

    @Test("cancel with the same id twice is refused naming it, and nothing is cancelled")
    func cancelTheSameIdTwice() throws {
        try expectRefused(["cancel", "keep", "keep"], named: "'keep'")
    }

    @Test(
        "A negative number for a numeric option is named, with what is accepted",
        arguments: [
            ["next", "keep", "--count", "-5"], ["med", "next", "--count", "-5"], ["dose", "snooze", "--minutes", "-5"],
            ["focus", "start", "--minutes", "-5"], ["forest", "--limit", "-5"], ["doses", "--limit", "-5"],
            ["export", "doses", "--csv", "--limit", "-5"], ["med", "add", "A", "--amount", "-5", "--unit", "mg", "--at", "08:00"],
            ["med", "add", "A", "--amount", "5", "--unit", "mg", "--at", "08:00", "--stock", "-5"],
            ["med", "add", "A", "--amount", "5", "--unit", "mg", "--at", "08:00", "--refill-days", "-5"],
        ]
    )
    func negativeNumbers(arguments: [String]) throws {
        try expectRefused(arguments, named: "'-5'")
    }

    @Test(
        "A negative duration for a duration option is named",
        arguments: [
            ["med", "add", "A", "--amount", "5", "--unit", "mg", "--at", "08:00", "--grace", "-5m"],
            ["med", "add", "A", "--amount", "5", "--unit", "mg", "--at", "08:00", "--missed-after", "-5m"],
            ["med", "add", "A", "--amount", "5", "--unit", "mg", "--as-needed", "--min-interval", "-5m"], ["doses", "--last", "-5m"],
            ["adherence", "--last", "-5m"],
        ]
    )
    func negativeDurations(arguments: [String]) throws {
        try expectRefused(arguments, named: "'-5m'")
    }

    @Test(
        "Values that would be misread are refused naming them",
        arguments: [
            (["med", "add", "A", "--amount", "1e-320", "--unit", "mg", "--at", "08:00"], "'1e-320'"),
            (["med", "add", "A", "--amount", "0x10", "--unit", "mg", "--at", "08:00"], "'0x10'"),
            (["at", "10:00", "T", "--zone", "GMT+5"], "'GMT+5'"), (["every", "day", "08:00", "T", "--zone", "GMT+5"], "'GMT+5'"),
            (["in", "5M", "T"], "'5M'"), (["in", "1h1h", "T"], "'1h1h'"), (["in", "1m1h", "T"], "'1m1h'"),
            (["every", "1m1h", "T"], "'1m1h'"), (["in", "5m", "\u{202E}gnp.exe"], "U+202E"), (["in", "5m", "T", "a\u{200B}b"], "U+200B"),
            (["in", "5m", "T", String(repeating: "b", count: 4_001)], "4000"),
            (["notify", "--notifier", "console", "T", String(repeating: "b", count: 4_001)], "4000"),
            (["notify", "--notifier", "console", "\u{2067}T"], "U+2067"),
            (["med", "add", "A\u{202E}", "--amount", "5", "--unit", "mg", "--at", "08:00"], "U+202E"),
        ]
    )
    func misreadValues(arguments: [String], named: String) throws {
        try expectRefused(arguments, named: named)
    }

    @Test("at takes HH:MM:SS as a date-time with seconds is taken; an emoji with joiners is a title")
    func secondsAndEmoji() throws {
        let sandbox = try Sandbox()
        let bare = try sandbox.chime("at", "08:00:30", "T", "--json")
        #expect(bare.status == 0, "\(bare.stderr)")
        let due = try #require((try jsonObject(bare.stdout)["reminder"] as? [String: Any])?["next_due"] as? String)
        #expect(due.hasSuffix("T08:00:30.000Z"), "\(due)")
        let emoji = try sandbox.chime("in", "5m", "👩\u{200D}💻 stand-up", "--json")
        #expect(emoji.status == 0, "\(emoji.stderr)")
    }

    @Test("JSON output escapes DEL and the C1 controls")
    func jsonEscapesDELAndC1() throws {
        let sandbox = try Sandbox()
        let title = "a\u{7F}b\u{85}c\u{9B}31md"
        for arguments in [["in", "5m", title, "--json"], ["list", "--json"], ["notify", "--notifier", "json", title]] {
            let result = try sandbox.chime(arguments)
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
            #expect(result.stdout.contains(#"a\u007fb\u0085c\u009b31md"#), "\(arguments): \(result.stdout.debugDescription)")
            #expect(!result.stdout.unicodeScalars.contains { (0x7F...0x9F).contains($0.value) }, "\(arguments)")
        }
    }
}

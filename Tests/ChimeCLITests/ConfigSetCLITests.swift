import Foundation
import Testing

/// `chime config set KEY VALUE` through the real executable (the writer the app's Preferences
/// use too): the file made from the example, a key's line set with the rest kept, a bad value or
/// key refused with one line and exit 64, a bad file with its own line and exit 78, and nothing
/// written then.
@Suite("chime config set", .serialized)
struct ConfigSetCLITests {
    func configPath(_ sandbox: borrowing Sandbox) throws -> String {
        try sandbox.chime("config", "path").stdout.trimmingCharacters(in: .newlines)
    }

    @Test("Sets a key, keeping the file's comments; focus start then plants that length")
    func setsAKey() throws {
        let sandbox = try Sandbox()
        let path = try configPath(sandbox)
        let set = try sandbox.chime("config", "set", "focus.length", "30m")
        #expect(set.status == 0, "\(set.stderr)")
        #expect(set.stdout == "\(path): focus.length = 30m\n")
        let made = try String(contentsOfFile: path, encoding: .utf8)
        #expect(made.hasPrefix("# Chime's configuration"))
        #expect(made.contains("\nlength = \"30m\"\n"))

        try "# mine\n[focus]\nlength = \"30m\" # short\n".write(toFile: path, atomically: true, encoding: .utf8)
        #expect(try sandbox.chime("config", "set", "quiet.hours", "22:00-07:00").status == 0)
        #expect(try sandbox.chime("config", "set", "focus.length", "45m").status == 0)
        #expect(
            try String(contentsOfFile: path, encoding: .utf8)
                == "# mine\n[focus]\nlength = \"45m\" # short\n\n[quiet]\nhours = \"22:00-07:00\"\n"
        )
        let started = try sandbox.chime("focus", "start", "--json")
        #expect(started.status == 0, "\(started.stderr)")
        #expect(started.stdout.contains("\"length_s\" : 2700") || started.stdout.contains("\"length_s\":2700"), "\(started.stdout)")
    }

    @Test("A bad value or key: one line, exit 64; a bad file: its line, exit 78; the file as it was")
    func refusesAndWritesNothing() throws {
        let sandbox = try Sandbox()
        let path = try configPath(sandbox)
        let bad = try sandbox.chime("config", "set", "focus.length", "3m")
        #expect(bad.status == 64)
        #expect(bad.stderr.split(separator: "\n").count == 1, "\(bad.stderr)")
        #expect(
            bad.stderr.contains("invalid focus.length '3m': expected a duration from \"10m\" to \"2h\" in whole minutes"),
            "\(bad.stderr)"
        )
        let unknown = try sandbox.chime("config", "set", "focus.minutes", "30")
        #expect(unknown.status == 64)
        #expect(unknown.stderr.contains("invalid key 'focus.minutes': expected a key of 'chime config show': "), "\(unknown.stderr)")
        #expect(!FileManager.default.fileExists(atPath: path))

        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let broken = "[focus]\nlength = 25\n"
        try broken.write(toFile: path, atomically: true, encoding: .utf8)
        let refused = try sandbox.chime("config", "set", "focus.length", "30m")
        #expect(refused.status == 78)
        #expect(refused.stderr.contains("invalid focus.length 25"), "\(refused.stderr)")
        #expect(try String(contentsOfFile: path, encoding: .utf8) == broken)
    }
}

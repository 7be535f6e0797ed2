import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Issue 31: a secret (a PostgreSQL password, a webhook's token) never reaches standard error,
/// a `--json` error, a report or a log line, whichever way it was given: each is shown redacted
/// (`alice:***@`, `password=***`, `token=***`).
@Suite("Secrets: a password or token is never printed", .serialized)
struct SecretsTests {
    /// The secret every URL below carries; it must appear in no output.
    static let secret = "S3cr3tPw"

    /// Store locations with a password, each with what its redacted form shows instead.
    static let storeURLs: [(url: String, shown: String)] = [
        ("postgresql://alice:\(secret)@db.example:5432/chime", "postgresql://alice:***@db.example:5432/chime"),
        ("postgresql://db.example/chime?user=alice&password=\(secret)", "postgresql://db.example/chime?user=alice&password=***"),
        // Not a URL URLComponents takes (a '/' in the password): redacted by its text.
        ("postgresql://alice:\(secret)/x@db.example/chime", "postgresql://alice:***@db.example/chime"),
        // Not a PostgreSQL URL at all: refused, and redacted too.
        ("mysql://alice:\(secret)@db.example/chime", "mysql://alice:***@db.example/chime"),
    ]

    /// The commands that show the store or refuse it, in human and JSON form.
    static let commands: [[String]] = [
        ["list"], ["list", "--json"], ["in", "5m", "Tea"], ["store", "init"], ["store", "init", "--json"],
        ["focus", "status"], ["focus", "status", "--json"], ["history", "--json"], ["run", "--notifier", "console"],
        ["doctor"], ["doctor", "--json"], ["config", "show"], ["config", "show", "--json"],
        ["service", "status"], ["service", "status", "--json"],
    ]

    /// Runs `arguments` in `sandbox` and checks that the secret appears nowhere in its output.
    func runWithoutSecret(
        _ sandbox: borrowing Sandbox,
        _ arguments: [String],
        source: String
    ) throws -> (status: Int32, stdout: String, stderr: String) {
        let result = try sandbox.chime(arguments)
        #expect(!result.stdout.contains(Self.secret), "\(source) \(arguments): stdout \(result.stdout)")
        #expect(!result.stderr.contains(Self.secret), "\(source) \(arguments): stderr \(result.stderr)")
        return result
    }

    @Test("A store URL with a password, from --store, CHIME_STORE or the config file, is shown redacted everywhere")
    func storePasswordIsRedacted() throws {
        for (url, shown) in Self.storeURLs {
            for source in ["--store", "CHIME_STORE", "config file"] {
                let sandbox = try Sandbox(extra: source == "CHIME_STORE" ? ["CHIME_STORE": url] : ["CHIME_STORE": ""])
                if source == "config file" {
                    let config = sandbox.directory.appendingPathComponent("home/.config/chime")
                    try FileManager.default.createDirectory(at: config, withIntermediateDirectories: true)
                    try Data("store = \"\(url)\"\n".utf8).write(to: config.appendingPathComponent("config.toml"))
                }
                let flag = source == "--store" ? ["--store", url] : []
                var sawRedacted = false
                for command in Self.commands {
                    let result = try runWithoutSecret(sandbox, command + flag, source: source)
                    sawRedacted = sawRedacted || result.stdout.contains(shown) || result.stderr.contains(shown)
                    // (doctor's exit 5 comes with its whole report, not one line.)
                    if result.status != 0 && result.status != 5 {
                        #expect(result.stderr.split(separator: "\n").count == 1, "\(source) \(command): \(result.stderr)")
                    }
                    if command.last == "--json" && result.status != 0 && result.status != 5 {
                        let error = try #require(try jsonObject(result.stdout)["error"] as? [String: Any], "\(result.stdout)")
                        #expect((error["message"] as? String)?.contains("***") == true, "\(source) \(command): \(error)")
                    }
                }
                #expect(sawRedacted, "\(source) \(url): no output shows \(shown)")
            }
        }
    }

    @Test("The refusals name the store redacted: a password in the URL, a command that keeps to SQLite")
    func refusalsAreRedacted() throws {
        let sandbox = try Sandbox(extra: ["CHIME_STORE": "postgresql://alice:\(Self.secret)@db.example/chime"])
        let list = try runWithoutSecret(sandbox, ["list", "--json"], source: "CHIME_STORE")
        #expect(list.status == 64, "\(list)")
        #expect(
            list.stderr.contains("'postgresql://alice:***@db.example/chime'") && list.stderr.contains("has a password"),
            "\(list.stderr)"
        )
        let message = try #require((try jsonObject(list.stdout)["error"] as? [String: Any])?["message"] as? String)
        #expect(message.contains("alice:***@"), "\(message)")

        let focus = try runWithoutSecret(sandbox, ["focus", "status"], source: "CHIME_STORE")
        #expect(focus.status == 64 && focus.stderr.contains("SQLite store only"), "\(focus)")
        #expect(focus.stderr.contains("'postgresql://alice:***@db.example/chime'"), "\(focus.stderr)")

        let query = try runWithoutSecret(
            sandbox,
            ["list", "--store", "postgresql:///chime?host=/run/postgresql&password=\(Self.secret)&user=alice"],
            source: "--store"
        )
        #expect(query.status == 64 && query.stderr.contains("password=***&user=alice"), "\(query)")

        let doctor = try runWithoutSecret(sandbox, ["doctor", "--json"], source: "CHIME_STORE")
        let store = try #require(try jsonObject(doctor.stdout)["store"] as? [String: Any], "\(doctor)")
        #expect(store["path"] as? String == "postgresql://alice:***@db.example/chime", "\(store)")

        let show = try runWithoutSecret(sandbox, ["config", "show", "--json"], source: "CHIME_STORE")
        let settings = try #require(try jsonObject(show.stdout)["settings"] as? [[String: Any]], "\(show)")
        let setting = try #require(settings.first { $0["key"] as? String == "store" })
        #expect(setting["value"] as? String == "postgresql://alice:***@db.example/chime" && setting["source"] as? String == "env")
    }

    @Test("A store that is a URL of another kind is refused in one line, redacted, exit 64; nothing is made")
    func otherURLIsRefused() throws {
        let sandbox = try Sandbox(extra: ["CHIME_STORE": "mysql://alice:\(Self.secret)@db.example/chime"])
        let list = try runWithoutSecret(sandbox, ["in", "5m", "Tea"], source: "CHIME_STORE")
        #expect(list.status == 64, "\(list)")
        #expect(list.stderr.contains("'mysql://alice:***@db.example/chime'") && list.stderr.contains("postgresql://"), "\(list.stderr)")
        #expect(!FileManager.default.fileExists(atPath: "mysql:"), "a store was made")
    }
}

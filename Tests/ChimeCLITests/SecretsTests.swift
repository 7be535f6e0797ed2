import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A secret (a PostgreSQL password, a webhook's token) never reaches standard error,
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

        // doctor refuses a URL with a password, naming it redacted, as the others do.
        let doctor = try runWithoutSecret(sandbox, ["doctor", "--json"], source: "CHIME_STORE")
        #expect(doctor.status == 64 && doctor.stderr.contains("'postgresql://alice:***@db.example/chime'"), "\(doctor)")

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

/// The webhook's URL from the config file, `CHIME_WEBHOOK_URL` or
/// `--webhook-url-file`, so that its token is not in `ps`; `--webhook-url` still works and warns.
@Suite("Secrets: the webhook URL", .serialized)
struct WebhookSecretTests {
    static let token = "T0kenValue"

    func configure(_ sandbox: borrowing Sandbox, _ text: String) throws {
        let config = sandbox.directory.appendingPathComponent("home/.config/chime")
        try FileManager.default.createDirectory(at: config, withIntermediateDirectories: true)
        try Data(text.utf8).write(to: config.appendingPathComponent("config.toml"))
    }

    func notify(_ sandbox: borrowing Sandbox, _ extra: [String] = []) throws -> (status: Int32, stdout: String, stderr: String) {
        let result = try sandbox.chime(["notify", "Deploy", "--notifier", "webhook"] + extra)
        #expect(!result.stderr.contains(Self.token) && !result.stdout.contains(Self.token), "\(result)")
        return result
    }

    @Test("A bad webhook URL, a URL given for another notifier: one line, the URL redacted, exit 64")
    func badURLIsRedacted() throws {
        let sandbox = try Sandbox()
        let url = "http://bob:\(Self.token)@127.0.0.1:99999/hook?token=\(Self.token)"
        let port = try notify(sandbox, ["--webhook-url", url, "--json"])
        #expect(port.status == 64, "\(port)")
        #expect(port.stderr.contains("'http://bob:***@127.0.0.1:99999/hook?token=***'"), "\(port.stderr)")
        #expect(port.stderr.split(separator: "\n").count == 1, "\(port.stderr)")
        let message = try #require((try jsonObject(port.stdout)["error"] as? [String: Any])?["message"] as? String)
        #expect(message.contains("token=***"), "\(message)")

        let other = try sandbox.chime(
            "notify",
            "Deploy",
            "--notifier",
            "console",
            "--webhook-url",
            "http://127.0.0.1:1/h?token=\(Self.token)"
        )
        #expect(other.status == 64 && other.stderr.contains("token=***") && !other.stderr.contains(Self.token), "\(other)")

        let fromEnvironment = try Sandbox(extra: ["CHIME_WEBHOOK_URL": url])
        // A bad URL from the environment or the file is a bad config (exit 78), as for every key.
        let environment = try notify(fromEnvironment)
        #expect(environment.status == 78 && environment.stderr.contains("CHIME_WEBHOOK_URL"), "\(environment)")
        #expect(environment.stderr.contains("token=***"), "\(environment)")
        let fromFile = try Sandbox()
        try configure(fromFile, "webhook_url = \"\(url)\"\n")
        let file = try notify(fromFile)
        #expect(file.status == 78 && file.stderr.contains("webhook_url") && file.stderr.contains("token=***"), "\(file)")
    }

    @Test(
        "The URL comes from --webhook-url-file, CHIME_WEBHOOK_URL or the config file, in that order, silently; --webhook-url warns",
        .timeLimit(.minutes(1))
    )
    func urlSources() async throws {
        let receiver = try WebhookReceiver()
        defer { receiver.stop() }
        let base = "http://127.0.0.1:\(receiver.port)"
        let sandbox = try Sandbox(extra: ["CHIME_WEBHOOK_URL": "\(base)/env?token=\(Self.token)"])
        try configure(sandbox, "webhook_url = \"\(base)/file?token=\(Self.token)\"\n")
        let urlFile = sandbox.directory.appendingPathComponent("webhook-url")
        try Data("\(base)/flagfile?token=\(Self.token)\n".utf8).write(to: urlFile)

        let fromFile = try notify(sandbox, ["--webhook-url-file", urlFile.path])
        #expect(fromFile.status == 0 && fromFile.stderr.isEmpty, "\(fromFile)")
        let fromEnvironment = try notify(sandbox)
        #expect(fromEnvironment.status == 0 && fromEnvironment.stderr.isEmpty, "\(fromEnvironment)")
        let plain = try Sandbox()
        try configure(plain, "webhook_url = \"\(base)/file?token=\(Self.token)\"\n")
        let fromConfig = try notify(plain)
        #expect(fromConfig.status == 0 && fromConfig.stderr.isEmpty, "\(fromConfig)")
        let flagged = try notify(sandbox, ["--webhook-url", "\(base)/flag?token=\(Self.token)"])
        #expect(flagged.status == 0, "\(flagged)")
        #expect(flagged.stderr.split(separator: "\n").count == 1, "\(flagged.stderr)")
        #expect(flagged.stderr.contains("CHIME_WEBHOOK_URL") && flagged.stderr.contains("--webhook-url-file"), "\(flagged.stderr)")
        let noSecret = try notify(plain, ["--webhook-url", "\(base)/open"])
        #expect(noSecret.status == 0 && noSecret.stderr.isEmpty, "\(noSecret)")

        #expect(await receiver.wait { $0.count == 5 })
        let paths = receiver.requests.compactMap { $0["path"] as? String }
        #expect(
            paths == [
                "/flagfile?token=\(Self.token)", "/env?token=\(Self.token)", "/file?token=\(Self.token)", "/flag?token=\(Self.token)",
                "/open",
            ],
            "\(paths)"
        )

        // Credentials in the URL go as HTTP Basic authorization.
        let credentials = try Sandbox(extra: ["CHIME_WEBHOOK_URL": "http://bob:\(Self.token)@127.0.0.1:\(receiver.port)/auth"])
        #expect(try notify(credentials).status == 0)
        #expect(await receiver.wait { $0.count == 6 })
        let authorization = receiver.requests.last?["authorization"] as? String
        #expect(authorization == "Basic " + Data("bob:\(Self.token)".utf8).base64EncodedString(), "\(receiver.requests.last ?? [:])")

        // Both flags at once, or a file that is not there: one line naming it, exit 64.
        let both = try notify(sandbox, ["--webhook-url-file", urlFile.path, "--webhook-url", "\(base)/flag"])
        #expect(both.status == 64 && both.stderr.split(separator: "\n").count == 1, "\(both)")
        let missing = try notify(sandbox, ["--webhook-url-file", urlFile.path + ".missing"])
        #expect(missing.status == 64 && missing.stderr.contains(urlFile.path + ".missing"), "\(missing)")
        #expect(missing.stderr.split(separator: "\n").count == 1, "\(missing)")
    }

    @Test("config show: the webhook URL redacted, with its source, in human and JSON form")
    func configShowRedactsTheWebhook() throws {
        let sandbox = try Sandbox(extra: ["CHIME_WEBHOOK_URL": "http://bob:\(Self.token)@hooks.example/env?token=\(Self.token)"])
        let json = try sandbox.chime("config", "show", "--json")
        #expect(json.status == 0 && !json.stdout.contains(Self.token), "\(json)")
        let settings = try #require(try jsonObject(json.stdout)["settings"] as? [[String: Any]])
        let setting = try #require(settings.first { $0["key"] as? String == "webhook_url" }, "\(settings)")
        #expect(setting["value"] as? String == "http://bob:***@hooks.example/***?token=***", "\(setting)")
        #expect(setting["source"] as? String == "env" && setting["env"] as? String == "CHIME_WEBHOOK_URL")
        let human = try sandbox.chime("config", "show")
        #expect(human.status == 0 && !human.stdout.contains(Self.token) && human.stdout.contains("token=***"), "\(human)")

        let file = try Sandbox()
        try configure(file, "webhook_url = \"https://hooks.example/f?token=\(Self.token)\"\n")
        let shown = try file.chime("config", "show")
        #expect(shown.stdout.contains("https://hooks.example/***?token=***") && !shown.stdout.contains(Self.token), "\(shown)")
        // A bad value in the file: exit 78, the value redacted.
        try configure(file, "webhook_url = \"ftp://bob:\(Self.token)@hooks.example/f\"\n")
        let bad = try file.chime("list")
        #expect(bad.status == 78 && bad.stderr.contains("bob:***@") && !bad.stderr.contains(Self.token), "\(bad)")
    }

    @Test("config show: the ntfy topic and a webhook URL's path hidden as tokens are; --secrets prints them")
    func configShowHidesTheTopicAndTheWebhookPath() throws {
        let sandbox = try Sandbox(extra: ["CHIME_GOTIFY_TOKEN": "A\(Self.token)"])
        try configure(
            sandbox,
            """
            webhook_url = "https://hooks.slack.example/services/T000/B000/\(Self.token)"
            ntfy_url = "https://ntfy.sh"
            ntfy_topic = "chime-\(Self.token)"

            """
        )
        let human = try sandbox.chime("config", "show")
        #expect(human.status == 0 && !human.stdout.contains(Self.token) && !human.stderr.contains(Self.token), "\(human)")
        #expect(human.stdout.contains("https://hooks.slack.example/***"), "\(human.stdout)")
        #expect(human.stderr.contains("'chime config show --secrets' prints them"), "\(human.stderr)")
        let json = try sandbox.chime("config", "show", "--json")
        #expect(json.status == 0 && !json.stdout.contains(Self.token) && json.stderr.isEmpty, "\(json)")
        let settings = try #require(try jsonObject(json.stdout)["settings"] as? [[String: Any]])
        func value(_ key: String, in settings: [[String: Any]]) -> String? {
            settings.first { $0["key"] as? String == key }?["value"] as? String
        }
        #expect(value("ntfy_topic", in: settings) == "***")
        #expect(value("gotify_token", in: settings) == "***")
        #expect(value("webhook_url", in: settings) == "https://hooks.slack.example/***")
        #expect(value("ntfy_url", in: settings) == "https://ntfy.sh")

        // Asked for: each as it is, and no note.
        let secrets = try sandbox.chime("config", "show", "--secrets", "--json")
        let shown = try #require(try jsonObject(secrets.stdout)["settings"] as? [[String: Any]])
        #expect(value("ntfy_topic", in: shown) == "chime-\(Self.token)")
        #expect(value("webhook_url", in: shown) == "https://hooks.slack.example/services/T000/B000/\(Self.token)")
        let plain = try sandbox.chime("config", "show", "--secrets")
        #expect(plain.status == 0 && plain.stdout.contains("chime-\(Self.token)") && plain.stderr.isEmpty, "\(plain)")

        // Nothing to hide: no note.
        let empty = try Sandbox()
        let none = try empty.chime("config", "show")
        #expect(none.status == 0 && none.stderr.isEmpty, "\(none)")
    }
}

import Foundation
import Testing

/// The config file through the real executable, each test with its own HOME and
/// XDG_CONFIG_HOME (the sandbox's): a file changes a command's default, a variable beats the
/// file, a flag beats both, a bad file stops a command with one line and exit 78 and changes
/// nothing, `config show --json` says where each value came from, `config edit` runs $EDITOR.
@Suite("chime config", .serialized)
struct ConfigCLITests {
    /// The sandbox's config file, written with `text`.
    func writeConfig(_ text: String, in sandbox: borrowing Sandbox) throws -> String {
        let path = try configPath(sandbox)
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    func configPath(_ sandbox: borrowing Sandbox) throws -> String {
        let result = try sandbox.chime("config", "path")
        #expect(result.status == 0, "\(result.stderr)")
        return result.stdout.trimmingCharacters(in: .newlines)
    }

    func focusLength(_ sandbox: borrowing Sandbox, _ arguments: String...) throws -> Int? {
        let started = try sandbox.chime(["focus", "start", "--json"] + arguments)
        #expect(started.status == 0, "\(started.stderr)")
        let gaveUp = try sandbox.chime("focus", "give-up", "--yes", "--json")
        #expect(gaveUp.status == 0, "\(gaveUp.stderr)")
        return (try jsonObject(started.stdout)["session"] as? [String: Any])?["length_s"] as? Int
    }

    @Test("The file changes focus start's length; the variable beats the file; --minutes beats both")
    func layersThroughFocusStart() throws {
        let plain = try Sandbox()
        #expect(try focusLength(plain) == 1_500)
        let path = try writeConfig("[focus]\nlength = \"50m\"\n", in: plain)
        #expect(path.hasSuffix("/home/.config/chime/config.toml"))
        #expect(try focusLength(plain) == 3_000)
        #expect(try focusLength(plain, "--minutes", "15") == 900)

        let withVariable = try Sandbox(extra: ["CHIME_FOCUS_LENGTH": "40m"])
        _ = try writeConfig("[focus]\nlength = \"50m\"\n", in: withVariable)
        #expect(try focusLength(withVariable) == 2_400)
        #expect(try focusLength(withVariable, "--minutes", "15") == 900)
    }

    @Test("med add takes the file's grace and missed-after; --grace beats it")
    func medAddDefaults() throws {
        let sandbox = try Sandbox()
        _ = try writeConfig("[doses]\ngrace = \"45m\"\nmissed_after = \"6h\"\n", in: sandbox)
        let added = try sandbox.chime("med", "add", "Aspirin", "--amount", "100", "--unit", "mg", "--at", "08:00", "--json")
        #expect(added.status == 0, "\(added.stderr)")
        let medication = try #require(try jsonObject(added.stdout)["medication"] as? [String: Any])
        #expect(medication["grace_s"] as? Int == 2_700)
        #expect(medication["missed_after_s"] as? Int == 21_600)
        let flagged = try sandbox.chime(
            "med",
            "add",
            "Zinc",
            "--amount",
            "1",
            "--unit",
            "tablet",
            "--at",
            "09:00",
            "--grace",
            "10m",
            "--json"
        )
        #expect(flagged.status == 0, "\(flagged.stderr)")
        #expect((try jsonObject(flagged.stdout)["medication"] as? [String: Any])?["grace_s"] as? Int == 600)
    }

    @Test("chime run reads the file when it starts (its notifier); chime snooze takes the file's length", .timeLimit(.minutes(1)))
    func runnerReadsTheFile() async throws {
        let sandbox = try Sandbox()
        _ = try writeConfig("notifier = \"json\"\n[reminders]\nsnooze = \"7m\"\n", in: sandbox)
        let runner = try sandbox.startRunner()
        defer { if runner.process.isRunning { runner.process.terminate() } }
        #expect(await runner.waitUntilStarted(), "runner did not start: \(runner.stderr)")
        #expect(try sandbox.chime("in", "1s", "Tea", "--id", "tea").status == 0)
        // One JSON object a line (the file's notifier), whose answer names the file's snooze.
        let line = try #require(await runner.nextLine(timeout: 10), "\(runner.stderr)")
        let alert = try jsonObject(line)
        #expect(alert["id"] as? String == "tea")
        #expect(alert["actions"] as? [String] == ["done", "snooze"])
        // 'chime snooze ID' without a duration: the file's 7 minutes.
        let before = Date()
        let snoozed = try sandbox.chime("snooze", "tea", "--json")
        #expect(snoozed.status == 0, "\(snoozed.stderr)")
        let until = try #require(try jsonObject(snoozed.stdout)["snoozed_until"] as? String)
        let iso = ISO8601DateFormatter()
        iso.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let seconds = try #require(iso.date(from: until)).timeIntervalSince(before)
        #expect(seconds > 7 * 60 - 5 && seconds < 7 * 60 + 30, "\(seconds)")
        #expect(await runner.terminate() == 0)
    }

    @Test("A bad file: one line naming the file, line, key, value and what is accepted; exit 78; nothing changed")
    func badFileStopsCommands() throws {
        let sandbox = try Sandbox()
        let path = try writeConfig("[reminders]\nsnooze = \"25h\"\n", in: sandbox)
        let expected =
            "chime: config file \(path):2: invalid reminders.snooze \"25h\": expected a duration from \"1m\" to \"1d\" in whole minutes\n"
        for arguments in [["in", "5m", "Tea"], ["list"], ["focus", "start"], ["quiet", "hours", "22:00-07:00"], ["run"]] {
            let result = try sandbox.chime(arguments)
            #expect(result.status == 78, "\(arguments): \(result.stderr)")
            #expect(result.stderr == expected, "\(arguments)")
        }
        // Nothing ran: no store was made.
        #expect(!FileManager.default.fileExists(atPath: sandbox.store))
        // The JSON error names the code.
        let json = try sandbox.chime("list", "--json")
        #expect(json.status == 78)
        let error = try #require(try jsonObject(json.stdout)["error"] as? [String: Any])
        #expect(error["code"] as? String == "config")
        #expect(error["exit"] as? Int == 78)

        // config path, example, --help and --version still work; show says which file and fails.
        #expect(try sandbox.chime("config", "path").status == 0)
        #expect(try sandbox.chime("config", "example").status == 0)
        #expect(try sandbox.chime("--help").status == 0)
        #expect(try sandbox.chime("--version").status == 0)
        let show = try sandbox.chime("config", "show")
        #expect(show.status == 78)
        #expect(show.stdout == "Config file: \(path)\n")
        #expect(show.stderr == expected)
    }

    @Test("A bad file with a store already there changes nothing in it")
    func badFileLeavesTheStore() throws {
        let sandbox = try Sandbox()
        #expect(try sandbox.chime("in", "1h", "Tea", "--id", "tea").status == 0)
        _ = try writeConfig("notifier = \"dekstop\"\n", in: sandbox)
        for arguments in [["cancel", "tea"], ["in", "5m", "Coffee"], ["quiet", "1h"]] {
            #expect(try sandbox.chime(arguments).status == 78, "\(arguments)")
        }
        try FileManager.default.removeItem(atPath: try configPath(sandbox))
        let list = try sandbox.chime("list", "--json")
        #expect(list.status == 0)
        #expect(list.stdout.contains("\"tea\""))
        #expect(!list.stdout.contains("Coffee"))
        let quiet = try sandbox.chime("quiet", "status", "--json")
        #expect(try jsonObject(quiet.stdout)["quiet"] as? Bool == false)
    }

    @Test("config show --json: each key's value and source, flag > env > file > default")
    func showJSON() throws {
        let sandbox = try Sandbox(extra: ["CHIME_STORE": "", "CHIME_SNOOZE": "20m"])
        let path = try writeConfig(
            "# mine\nnotifier = \"console\"\nstore = \"~/my.sqlite\"\n\n[reminders]\nsnooze = \"15m\"\n\n[quiet]\nhours = \"22:00-07:00\"\n",
            in: sandbox
        )
        func settings(_ arguments: String...) throws -> [String: [String: Any]] {
            let result = try sandbox.chime(["config", "show", "--json"] + arguments)
            #expect(result.status == 0, "\(result.stderr)")
            let object = try jsonObject(result.stdout)
            #expect(object["path"] as? String == path)
            #expect(object["exists"] as? Bool == true)
            let list = try #require(object["settings"] as? [[String: Any]])
            return Dictionary(uniqueKeysWithValues: list.map { ($0["key"] as? String ?? "", $0) })
        }
        var shown = try settings()
        #expect(shown.count == 36)
        #expect(shown["webhook_url"]?["value"] as? String == "" && shown["webhook_url"]?["source"] as? String == "default")
        #expect(shown["notifier"]?["value"] as? String == "console")
        #expect(shown["notifier"]?["source"] as? String == "file")
        #expect(shown["notifier"]?["line"] as? Int == 2)
        #expect(shown["notifier"]?["from"] as? String == "file \(path):2")
        let home = sandbox.directory.appendingPathComponent("home").path
        #expect(shown["store"]?["value"] as? String == home + "/my.sqlite")
        #expect(shown["reminders.snooze"]?["value"] as? String == "20m")
        #expect(shown["reminders.snooze"]?["source"] as? String == "env")
        #expect(shown["reminders.snooze"]?["from"] as? String == "env CHIME_SNOOZE")
        #expect(shown["focus.length"]?["source"] as? String == "default")
        #expect(shown["focus.length"]?["line"] is NSNull)
        #expect(shown["quiet.hours"]?["value"] as? String == "22:00-07:00")
        #expect(shown["quiet.hours"]?["source"] as? String == "file")

        shown = try settings("--store", sandbox.store)
        #expect(shown["store"]?["value"] as? String == sandbox.store)
        #expect(shown["store"]?["from"] as? String == "flag --store")

        // The store's path from the file is used (its directory exists: the home).
        #expect(try sandbox.chime("in", "1h", "Tea").status == 0)
        #expect(FileManager.default.fileExists(atPath: home + "/my.sqlite"))
        // 'chime quiet hours' stores a window that beats the file's; 'hours off' gives it back.
        #expect(try sandbox.chime("quiet", "hours", "21:00-06:00").status == 0)
        shown = try settings()
        #expect(shown["quiet.hours"]?["value"] as? String == "21:00-06:00")
        #expect(shown["quiet.hours"]?["from"] as? String == "stored by 'chime quiet hours'")
        let off = try sandbox.chime("quiet", "hours", "off", "--json")
        #expect(off.status == 0)
        #expect(try jsonObject(off.stdout)["hours"] as? String == "22:00-07:00")
        #expect(try jsonObject(off.stdout)["hours_source"] as? String == "config")
    }

    @Test("config edit makes the file from the example, runs $EDITOR, then checks it; never overwrites")
    func edit() throws {
        // The editor: a script that records the file it was given and appends $APPEND to it. Two
        // sandboxes (two environments) share one config directory.
        let tools = FileManager.default.temporaryDirectory.appendingPathComponent("chime-editor-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: tools, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: tools) }
        let script = tools.appendingPathComponent("editor.sh").path
        let seen = tools.appendingPathComponent("seen").path
        let body = "#!/bin/sh\nprintf '%s\\n' \"$1\" >> '\(seen)'\nprintf '%s\\n' \"$APPEND\" >> \"$1\"\n"
        try Data(body.utf8).write(to: URL(fileURLWithPath: script))
        #expect(chmod(script, 0o755) == 0)
        let config = tools.appendingPathComponent("config").path

        let good = try Sandbox(extra: ["XDG_CONFIG_HOME": config, "EDITOR": script, "APPEND": "# fine"])
        let path = try configPath(good)
        #expect(path == config + "/chime/config.toml")
        #expect(!FileManager.default.fileExists(atPath: path))
        let edited = try good.chime("config", "edit", "--json")
        #expect(edited.status == 0, "\(edited.stderr)")
        let report = try jsonObject(edited.stdout)
        #expect(report["created"] as? Bool == true)
        #expect(report["valid"] as? Bool == true)
        let example = try good.chime("config", "example").stdout
        #expect(try String(contentsOfFile: path, encoding: .utf8) == example + "# fine\n")
        #expect(try String(contentsOfFile: seen, encoding: .utf8) == path + "\n")

        // A second edit keeps the file; $VISUAL comes before $EDITOR; a bad result is exit 78
        // and one line (the appended line is in [hooks], the example's last section).
        let bad = try Sandbox(extra: ["XDG_CONFIG_HOME": config, "VISUAL": script, "EDITOR": "false", "APPEND": "gate_exit = 11"])
        let broken = try bad.chime("config", "edit")
        #expect(broken.status == 78)
        let line = example.split(separator: "\n", omittingEmptySubsequences: false).count + 1
        #expect(
            broken.stderr.hasPrefix("chime: config file \(path):\(line): invalid hooks.gate_exit 11: expected an argv "),
            "\(broken.stderr)"
        )
        #expect(broken.stderr.split(separator: "\n").count == 1)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == example + "# fine\ngate_exit = 11\n")
        // With it bad, a command stops.
        #expect(try bad.chime("list").status == 78)
    }

    @Test("The gate's launch starts the program with a bad file, and the event says why")
    func gateLaunchNeverLocksOut() throws {
        let sandbox = try Sandbox()
        let path = try writeConfig("[gate]\ngrace = \"2d\"\n", in: sandbox)
        let line = "config file \(path):2: invalid gate.grace \"2d\": expected a duration from \"0s\" to \"1d\""
        for arguments in [["gate", "open", "example.desktop"], ["gate"]] {
            let launched = try sandbox.chime(arguments + ["--", "/bin/sh", "-c", "echo started"])
            #expect(launched.status == 0, "\(arguments): \(launched.stderr)")
            #expect(launched.stdout == "started\n")
            #expect(launched.stderr.contains("chime: \(line): starting "), "\(launched.stderr)")
        }
        // The hub itself is a command like the others.
        #expect(try sandbox.chime("gate").status == 78)
        try FileManager.default.removeItem(atPath: path)
        let stats = try jsonObject(try sandbox.chime("gate", "stats", "--json").stdout)
        let trend = try #require(stats["trend"] as? [[String: Any]])
        #expect(trend.compactMap { $0["not_gated"] as? Int }.reduce(0, +) == 2)
    }
}

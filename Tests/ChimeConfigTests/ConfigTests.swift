import ChimeApp
import ChimeConfig
import ChimeCore
import ChimeDoses
import ChimeFocus
import ChimeGateway
import ChimeStore
import Foundation
import Testing

/// The keys as the composition root lists them (ChimeConfig knows no family's).
extension ConfigKey {
    static var allCases: [ConfigKey] { ChimeApp.configKeys }
}

extension Config {
    /// A config of every key.
    init(path: String, contents: String?, environment: [String: String]) throws(ChimeError) {
        try self.init(path: path, contents: contents, environment: environment, keys: ChimeApp.configKeys)
    }

    /// The config file and environment read for every key.
    static func load(environment: [String: String]) throws(ChimeError) -> Config {
        try ChimeApp.loadConfig(environment: environment)
    }
}

/// The four layers, per key: flag > environment > file > built-in default (and a stored
/// choice, for quiet hours and the gate, between the flag and the environment).
struct ConfigPrecedenceTests {
    static let path = "/config/chime/config.toml"
    static let home = ["HOME": "/h"]

    /// For each key: a file value, an environment value and a flag value, all different from
    /// the default and from each other.
    static let layers: [(ConfigKey, file: String, env: String, flag: ConfigValue, fileValue: ConfigValue, envValue: ConfigValue)] = [
        (.notifier, "\"console\"", "json", .text("desktop"), .text("console"), .text("json")),
        (
            .webhookURL, "\"http://f.example/h\"", "https://e.example/h?token=t", .text("http://x.example/h"), .text("http://f.example/h"),
            .text("https://e.example/h?token=t")
        ),
        (.store, "\"~/s.sqlite\"", "/e.sqlite", .text("/f.sqlite"), .text("/h/s.sqlite"), .text("/e.sqlite")),
        (.snooze, "\"15m\"", "20m", .seconds(1500), .seconds(900), .seconds(1200)),
        (.focusLength, "\"50m\"", "1h", .seconds(1800), .seconds(3000), .seconds(3600)),
        (.focusShortBreak, "\"10m\"", "3m", .seconds(120), .seconds(600), .seconds(180)),
        (.focusLongBreak, "\"30m\"", "20m", .seconds(1500), .seconds(1800), .seconds(1200)),
        (.focusLongBreakEvery, "2", "3", .number(6), .number(2), .number(3)),
        (.focusAutoStartSessions, "true", "true", .flag(false), .flag(true), .flag(true)),
        (.doseGrace, "\"45m\"", "1h", .seconds(600), .seconds(2700), .seconds(3600)),
        (.doseMissedAfter, "\"6h\"", "8h", .seconds(7200), .seconds(21600), .seconds(28800)),
        (.doseRepeatEvery, "\"5m\"", "10m", .seconds(1200), .seconds(300), .seconds(600)),
        (.doseRepeatCount, "1", "0", .number(5), .number(1), .number(0)),
        (
            .quietHours, "\"22:00-07:00\"", "23:00-06:00", .window(nil),
            .window(.init(start: .init(hour: 22, minute: 0)!, end: .init(hour: 7, minute: 0)!)),
            .window(.init(start: .init(hour: 23, minute: 0)!, end: .init(hour: 6, minute: 0)!))
        ),
        (.gateDetermination, "7", "9", .number(2), .number(7), .number(9)),
        (.gateGrace, "\"0s\"", "5m", .seconds(60), .seconds(0), .seconds(300)),
        (.gateSession, "\"30m\"", "45m", .seconds(600), .seconds(1800), .seconds(2700)),
        (.gateFocusOnExit, "true", "true", .flag(false), .flag(true), .flag(true)),
    ]

    static func file(_ key: ConfigKey, _ value: String) -> String {
        if let section = key.section { return "# a comment\n[\(section)]\n\(key.name) = \(value)\n" }
        return "# a comment\n\n\(key.name) = \(value)\n"
    }

    @Test(arguments: 0..<layers.count)
    func eachLayerBeatsTheOneBelow(index: Int) throws {
        let (key, fileText, envText, flag, fileValue, envValue) = Self.layers[index]
        let defaults = try Config(path: Self.path, contents: nil, environment: Self.home)
        #expect(defaults.setting(key).source == .builtIn)
        #expect(defaults.setting(key).value == key.builtInDefault(environment: Self.home))
        #expect(key.builtInDefault(environment: Self.home) != fileValue)

        let withFile = try Config(path: Self.path, contents: Self.file(key, fileText), environment: Self.home)
        #expect(withFile.setting(key).value == fileValue)
        #expect(withFile.setting(key).source == .file(path: Self.path, line: 3))

        var environment = Self.home
        environment[key.environmentVariable] = envText
        let withEnv = try Config(path: Self.path, contents: Self.file(key, fileText), environment: environment)
        #expect(withEnv.setting(key).value == envValue)
        #expect(withEnv.setting(key).source == .environment(key.environmentVariable))

        let withFlag = withEnv.setting(key, flag: ("--x", flag))
        #expect(withFlag.value == flag)
        #expect(withFlag.source == .flag("--x"))
        // A choice a command stored beats the environment and the file, not a flag.
        let stored = withEnv.setting(key, stored: ("chime quiet hours", flag))
        #expect(stored.source == .stored("chime quiet hours"))
        #expect(withEnv.setting(key, flag: ("--x", flag), stored: ("c", envValue)).value == flag)
    }

    @Test func theStoreDefaultFollowsXDGDataHomeAndChimeStoreIsTakenAsItIs() throws {
        let config = try Config(path: Self.path, contents: nil, environment: ["HOME": "/h", "XDG_DATA_HOME": "/d"])
        #expect(config.text(.store) == "/d/chime/chime.sqlite")
        let relative = try Config(path: Self.path, contents: nil, environment: ["HOME": "/h", "CHIME_STORE": "rel.sqlite"])
        #expect(relative.text(.store) == "rel.sqlite")
        #expect(relative.storeIsNamed)
    }

    @Test func thePathFollowsXDGConfigHome() {
        #expect(Config.path(environment: ["HOME": "/h"]) == "/h/.config/chime/config.toml")
        #expect(Config.path(environment: ["HOME": "/h", "XDG_CONFIG_HOME": "/c"]) == "/c/chime/config.toml")
        // A relative XDG_CONFIG_HOME is ignored, as the XDG spec says.
        #expect(Config.path(environment: ["HOME": "/h", "XDG_CONFIG_HOME": "c"]) == "/h/.config/chime/config.toml")
    }

    @Test func dottedKeysAtTheTopLevelCount() throws {
        let config = try Config(path: Self.path, contents: "reminders.snooze = \"5m\"\n", environment: Self.home)
        #expect(config.setting(.snooze).value == .seconds(300))
        #expect(config.setting(.snooze).source == .file(path: Self.path, line: 1))
    }
}

/// Every bad file or variable: the exact one line, code `config` (exit 78).
struct BadConfigTests {
    static let path = "/c/config.toml"

    @Test(arguments: [
        (
            "notifier = \"dekstop\"\n",
            "config file /c/config.toml:1: invalid notifier \"dekstop\": expected \"auto\", \"desktop\", \"console\", \"json\", \"webhook\", \"ntfy\" or \"gotify\""
        ),
        (
            "notifer = \"auto\"\n",
            "config file /c/config.toml:1: unknown key 'notifer': expected notifier, webhook_url, ntfy_url, ntfy_topic, ntfy_token, ntfy_token_file, gotify_url, gotify_token, gotify_token_file or store at the top level, or a section [reminders], [focus], [doses], [quiet], [gate] or [hooks]"
        ),
        (
            "[remiders]\nsnooze = \"5m\"\n",
            "config file /c/config.toml:1: unknown section [remiders]: expected [reminders], [focus], [doses], [quiet], [gate] or [hooks]"
        ),
        ("[reminders]\nsnoze = \"5m\"\n", "config file /c/config.toml:2: unknown key 'reminders.snoze': expected snooze in [reminders]"),
        (
            "[reminders]\nsnooze = 10\n",
            "config file /c/config.toml:2: invalid reminders.snooze 10: expected a duration from \"1m\" to \"1d\" in whole minutes"
        ),
        (
            "[reminders]\nsnooze = \"25h\"\n",
            "config file /c/config.toml:2: invalid reminders.snooze \"25h\": expected a duration from \"1m\" to \"1d\" in whole minutes"
        ),
        (
            "[focus]\nlength = \"5m\"\n",
            "config file /c/config.toml:2: invalid focus.length \"5m\": expected a duration from \"10m\" to \"2h\" in whole minutes"
        ),
        (
            "[doses]\n\ngrace = \"30x\"\n",
            "config file /c/config.toml:3: invalid doses.grace \"30x\": expected a duration from \"1m\" to \"1d\""
        ),
        (
            "[quiet]\nhours = \"22:00\"\n",
            "config file /c/config.toml:2: invalid quiet.hours \"22:00\": expected \"HH:MM-HH:MM\" such as \"22:00-07:00\", or \"off\""
        ),
        (
            "[doses]\nrepeat_count = 11\n",
            "config file /c/config.toml:2: invalid doses.repeat_count 11: expected a whole number from 0 to 10"
        ),
        (
            "[focus]\nlong_break_every = 0\n",
            "config file /c/config.toml:2: invalid focus.long_break_every 0: expected a whole number from 1 to 12"
        ),
        (
            "[focus]\nshort_break = \"30s\"\n",
            "config file /c/config.toml:2: invalid focus.short_break \"30s\": expected a duration from \"1m\" to \"1h\" in whole minutes"
        ),
        (
            "[focus]\nauto_start_sessions = \"yes\"\n",
            "config file /c/config.toml:2: invalid focus.auto_start_sessions \"yes\": expected true or false"
        ),
        (
            "[gate]\ndetermination = 11\n",
            "config file /c/config.toml:2: invalid gate.determination 11: expected a whole number from 1 to 10"
        ),
        (
            "[gate]\ndetermination = \"5\"\n",
            "config file /c/config.toml:2: invalid gate.determination \"5\": expected a whole number from 1 to 10"
        ),
        ("[gate]\nfocus_on_exit = \"yes\"\n", "config file /c/config.toml:2: invalid gate.focus_on_exit \"yes\": expected true or false"),
        (
            "store = \"relative.sqlite\"\n",
            "config file /c/config.toml:1: invalid store \"relative.sqlite\": expected an absolute path, one starting with ~/, or a postgresql:// URL"
        ),
        (
            "[focus]\nlength = [\"25m\"]\n",
            "config file /c/config.toml:2: invalid focus.length [\"25m\"]: expected a duration from \"10m\" to \"2h\" in whole minutes"
        ),
        (
            "notifier = \"auto\n",
            "config file /c/config.toml:1:17: Error while parsing string: unescaped control characters other than TAB (U+0009) are explicitly prohibited"
        ),
    ])
    func aBadFileIsOneLine(text: String, line: String) {
        #expect(throws: ChimeError(.config, line)) { try Config(path: Self.path, contents: text, environment: ["HOME": "/h"]) }
    }

    @Test func aBadVariableIsOneLine() {
        #expect(throws: ChimeError(.config, "invalid CHIME_SNOOZE '10x': expected a duration from \"1m\" to \"1d\" in whole minutes")) {
            try Config(path: Self.path, contents: nil, environment: ["CHIME_SNOOZE": "10x"])
        }
        #expect(ChimeError.Code.config.exitStatus == 78)
    }

    @Test func aBadWebhookURLIsOneLineWithItsSecretsRedacted() {
        let url = "http://bob:pw@hooks.example:99999/h?token=tk"
        let expected = "expected an http:// or https:// URL with a host, such as http://127.0.0.1:8080/hook, or \"\" for none"
        #expect(throws: ChimeError(.config, "invalid CHIME_WEBHOOK_URL 'http://bob:***@hooks.example:99999/***?token=***': \(expected)")) {
            try Config(path: Self.path, contents: nil, environment: ["CHIME_WEBHOOK_URL": url])
        }
        #expect(
            throws: ChimeError(
                .config,
                "config file /c/config.toml:1: invalid webhook_url \"http://bob:***@hooks.example:99999/***?token=***\": \(expected)"
            )
        ) {
            try Config(path: "/c/config.toml", contents: "webhook_url = \"\(url)\"\n", environment: ["HOME": "/h"])
        }
    }

    @Test func aBadStoreIsOneLineWithItsPasswordRedacted() {
        #expect(
            throws: ChimeError(
                .config,
                "config file /c/config.toml:1: invalid store \"mysql://bob:***@db/chime\": expected an absolute path, one starting with ~/, or a postgresql:// URL"
            )
        ) {
            try Config(path: "/c/config.toml", contents: "store = \"mysql://bob:pw@db/chime\"\n", environment: ["HOME": "/h"])
        }
    }

    @Test func aDirectoryAnUnreadableFileAndNotUTF8AreOneLineEach() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("chime-config-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory + "/chime/config.toml", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let asDirectory = directory + "/chime/config.toml"
        #expect(throws: ChimeError(.config, "config file \(asDirectory): is a directory, expected a TOML file (see 'chime config edit')")) {
            try Config.load(environment: ["XDG_CONFIG_HOME": directory, "HOME": "/h"])
        }
        let latin1 = directory + "/latin1"
        try FileManager.default.createDirectory(atPath: latin1 + "/chime", withIntermediateDirectories: true)
        try Data([0x6E, 0x3D, 0x22, 0xE9, 0x22, 0x0A]).write(to: URL(fileURLWithPath: latin1 + "/chime/config.toml"))
        #expect(throws: ChimeError(.config, "config file \(latin1)/chime/config.toml: is not UTF-8 text, expected a TOML file")) {
            try Config.load(environment: ["XDG_CONFIG_HOME": latin1, "HOME": "/h"])
        }
        if getuid() != 0 {
            let locked = directory + "/locked"
            try FileManager.default.createDirectory(atPath: locked + "/chime", withIntermediateDirectories: true)
            _ = FileManager.default.createFile(
                atPath: locked + "/chime/config.toml",
                contents: Data(),
                attributes: [.posixPermissions: 0o000]
            )
            #expect(throws: ChimeError(.config, "config file \(locked)/chime/config.toml: cannot be read (Permission denied)")) {
                try Config.load(environment: ["XDG_CONFIG_HOME": locked, "HOME": "/h"])
            }
        }
        // No file: the defaults, and nothing is created.
        let none = try Config.load(environment: ["XDG_CONFIG_HOME": directory + "/none", "HOME": "/h"])
        #expect(!none.fileExists)
        #expect(!FileManager.default.fileExists(atPath: directory + "/none"))
    }
}

/// The example `chime config edit` writes and `chime config example` prints.
struct ConfigExampleTests {
    @Test func theExampleIsAllCommentedAndParsesToTheDefaults() throws {
        let config = try Config(path: "/c", contents: Config.example, environment: ["HOME": "/h"])
        for key in ConfigKey.allCases { #expect(config.setting(key).source == .builtIn) }
    }

    @Test func everyKeyUncommentedParsesBackToItsDefault() throws {
        let uncommented = Config.example.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            line.hasPrefix("# ") && line.contains(" = ") ? String(line.dropFirst(2)) : String(line)
        }.joined(separator: "\n")
        let environment = ["HOME": "/h"]
        let config = try Config(path: "/c", contents: uncommented, environment: environment)
        for key in ConfigKey.allCases {
            #expect(config.setting(key).value == key.builtInDefault(environment: environment), "\(key)")
            guard case .file = config.setting(key).source else {
                Issue.record("\(key) not read from the file")
                continue
            }
        }
    }
}

/// A config file that is not one, or is hostile, is one clear line, never
/// "no config", a cut value, a raw parser message or a long wait.
struct ConfigFileBoundsTests {
    /// A fresh `$XDG_CONFIG_HOME` with its `chime/` directory; removed by `body`'s end.
    func withConfigHome<T>(_ body: (_ home: String, _ file: String) throws -> T) throws -> T {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("chime-config-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: home + "/chime", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: home) }
        return try body(home, home + "/chime/config.toml")
    }

    func load(_ home: String) throws(ChimeError) -> Config {
        try Config.load(environment: ["XDG_CONFIG_HOME": home, "HOME": "/h"])
    }

    @Test func aDanglingSymbolicLinkIsRefusedNotTakenAsNoConfig() throws {
        try withConfigHome { home, file in
            try FileManager.default.createSymbolicLink(atPath: file, withDestinationPath: home + "/dotfiles/chime.toml")
            let error = try #require(throws: ChimeError.self) { try load(home) }
            #expect(error.code == .config)
            #expect(
                error.message
                    == "config file \(file): is a symbolic link to '\(home)/dotfiles/chime.toml', which does not exist: restore the target, or remove the link"
            )
        }
    }

    @Test func aDeviceOrAFIFOIsNotARegularFile() throws {
        try withConfigHome { home, file in
            try FileManager.default.createSymbolicLink(atPath: file, withDestinationPath: "/dev/zero")
            #expect(
                throws: ChimeError(
                    .config,
                    "config file \(file): is a character device, not a regular file: expected a TOML file (see 'chime config edit')"
                )
            ) {
                try load(home)
            }
            try FileManager.default.removeItem(atPath: file)
            #expect(mkfifo(file, 0o600) == 0)
            #expect(
                throws: ChimeError(
                    .config,
                    "config file \(file): is a FIFO (named pipe), not a regular file: expected a TOML file (see 'chime config edit')"
                )
            ) {
                try load(home)
            }
        }
    }

    @Test func aFileOverOneMiBIsRefusedBeforeItIsParsed() throws {
        try withConfigHome { home, file in
            let comment = "# " + String(repeating: "x", count: 1_000) + "\n"
            try Data(String(repeating: comment, count: 1_100).utf8).write(to: URL(fileURLWithPath: file))
            let error = try #require(throws: ChimeError.self) { try load(home) }
            #expect(
                error.message
                    == "config file \(file): is 1103300 bytes, more than a config file may be (1 MiB): expected a short TOML file (see 'chime config edit')"
            )
        }
    }

    @Test(arguments: [
        "notifier = \"con\\u0000sole\"\n",
        "[reminders]\nsnooze = \"10m\"\nnotifier = \"a\u{0}b\"\n",
    ])
    func aNULIsRefusedNotCut(text: String) throws {
        let error = try #require(throws: ChimeError.self) { try Config(path: "/c", contents: text, environment: ["HOME": "/h"]) }
        let line = text.hasPrefix("[") ? 3 : 1
        #expect(
            error.message == "config file /c:\(line): holds a NUL character (a NUL byte or \\u0000), which no value may hold: remove it"
        )
    }

    @Test func aLongValueIsCutInTheMessage() throws {
        let error = try #require(throws: ChimeError.self) {
            try Config(
                path: "/c",
                contents: "notifier = \"" + String(repeating: "y", count: 5_000_000) + "\"\n",
                environment: ["HOME": "/h"]
            )
        }
        #expect(error.message.count < 300, "\(error.message.count) characters")
        #expect(error.message.hasPrefix("config file /c:1: invalid notifier \"yyyy"))
        #expect(error.message.contains("… (5000000 characters)\""))
    }

    @Test(arguments: [
        (
            "store = /tmp/x.sqlite\n",
            #"config file /c:1:9: the value of 'store', /tmp/x.sqlite, is not a TOML value: text goes in double quotes, as in store = "/tmp/x.sqlite" (numbers and true or false without)"#
        ),
        (
            "[reminders]\nsnooze = 10m # a comment\n",
            #"the value of 'snooze', 10m, is not a TOML value: text goes in double quotes, as in snooze = "10m""#
        ),
    ])
    func anUnquotedValueSaysWhatToWrite(text: String, message: String) throws {
        let error = try #require(throws: ChimeError.self) { try Config(path: "/c", contents: text, environment: ["HOME": "/h"]) }
        #expect(error.message.contains(message), "\(error.message)")
        #expect(!error.message.contains("could not determine"))
    }
}

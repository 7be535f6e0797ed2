import ChimeApp
import ChimeConfig
import ChimeCore
import ChimeDoses
import ChimeFocus
import Foundation
import Testing

/// The config file's one writer (`chime config set`, the app's Preferences): a key's line set in
/// the file's own text, comments and other keys kept, values checked as the file's, the whole
/// text read back before it is written, nothing half-written.
struct ConfigWriterTests {
    static let keys = ChimeApp.configKeys

    static func edit(_ text: String?, _ changes: [ConfigWriter.Change]) throws(ChimeError) -> String {
        try ConfigWriter.edit(text, changes, keys: keys, environment: ["HOME": "/h"])
    }

    @Test func aKeysLineIsReplacedAndItsCommentAndTheRestKept() throws {
        let text = """
            # mine
            notifier = "console"  # the terminal

            [focus]
            length = "25m" # a pomodoro
            [doses]
            grace = "30m"
            """
        let edited = try Self.edit(text, [.init(.focusLength, "30m"), .init(.notifier, "desktop")])
        #expect(
            edited == """
                # mine
                notifier = "desktop"  # the terminal

                [focus]
                length = "30m" # a pomodoro
                [doses]
                grace = "30m"

                """
        )
        let config = try Config(path: "/c", contents: edited, environment: [:], keys: Self.keys)
        #expect(config.seconds(.focusLength) == 1_800)
        #expect(config.text(.notifier) == "desktop")
    }

    @Test func theExamplesCommentedLineIsUsedAndAMissingTableMade() throws {
        // No file: the example, with the key's own commented line set.
        let made = try Self.edit(nil, [.init(.focusLength, "45m")])
        #expect(made.contains("[focus]\n# A focus session's length"))
        #expect(made.contains("\nlength = \"45m\"\n"))
        #expect(!made.contains("# length = "))
        #expect(made.split(separator: "\n").count == Config.example(keys: Self.keys).split(separator: "\n").count)

        // A file without the table: the table at the end; a top-level key before the first table.
        let added = try Self.edit("[doses]\ngrace = \"30m\"\n", [.init(.focusLength, "30m"), .init(.notifier, "console")])
        #expect(added == "notifier = \"console\"\n\n[doses]\ngrace = \"30m\"\n\n[focus]\nlength = \"30m\"\n")
        let inTable = try Self.edit("[doses]\ngrace = \"30m\"\n\n[focus]\n", [.init(.doseRepeatCount, "3")])
        #expect(inTable == "[doses]\ngrace = \"30m\"\nrepeat_count = 3\n\n[focus]\n")
    }

    @Test func numbersAndFlagsAreBareAndQuietHoursAWindow() throws {
        let edited = try Self.edit("", [.init(.doseRepeatCount, "4"), .init(.quietHours, "22:00-07:00")])
        #expect(edited.contains("repeat_count = 4\n"))
        #expect(edited.contains("[quiet]\nhours = \"22:00-07:00\"\n"))
        let config = try Config(path: "/c", contents: edited, environment: [:], keys: Self.keys)
        #expect(config.quietHours?.description == "22:00-07:00")
    }

    @Test func aBadValueIsNamedWithWhatIsAcceptedAsTheFilesAre() {
        #expect(throws: ChimeError.self) { try Self.edit("", [.init(.focusLength, "3m")]) }
        do {
            _ = try Self.edit("", [.init(.focusLength, "3m")])
        } catch {
            #expect(error.code == .usage)
            #expect(error.message == "invalid focus.length '3m': expected a duration from \"10m\" to \"2h\" in whole minutes")
        }
        do {
            _ = try Self.edit("", [.init(.notifier, "pigeon")])
        } catch {
            #expect(error.message.hasPrefix("invalid notifier 'pigeon': expected \"auto\", \"desktop\""))
        }
    }

    @Test func writingReplacesTheFileWholeAndRefusesABadOne() throws {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("chime-writer-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: home) }
        let environment = ["HOME": home.path, "XDG_CONFIG_HOME": home.appendingPathComponent("config").path]
        let path = Config.path(environment: environment)

        // No file: made from the example.
        let config = try ConfigWriter.write([.init(.focusLength, "30m")], keys: Self.keys, environment: environment)
        #expect(config.seconds(.focusLength) == 1_800)
        let written = try String(contentsOfFile: path, encoding: .utf8)
        #expect(written.hasPrefix("# Chime's configuration"))

        // A bad value: the file as it was, and no temporary file left.
        #expect(throws: ChimeError.self) {
            try ConfigWriter.write([.init(.focusLength, "30m"), .init(.doseRepeatCount, "99")], keys: Self.keys, environment: environment)
        }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == written)

        // A bad file: its own error, untouched.
        let bad = "[focus]\nlength = \"30m\"\nunknown = 1\n"
        try bad.write(toFile: path, atomically: true, encoding: .utf8)
        do {
            try ConfigWriter.write([.init(.focusLength, "40m")], keys: Self.keys, environment: environment)
            Issue.record("a bad file was written")
        } catch {
            #expect(error.code == .config)
            #expect(error.message.contains("unknown key 'focus.unknown'"), "\(error.message)")
        }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == bad)
        let left = try FileManager.default.contentsOfDirectory(atPath: (path as NSString).deletingLastPathComponent)
        #expect(left == ["config.toml"])
    }
}

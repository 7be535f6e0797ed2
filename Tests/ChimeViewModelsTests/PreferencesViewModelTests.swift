import ChimeApp
import ChimeConfig
import ChimeCore
import ChimeDoses
import ChimeFocus
import ChimeViewModels
import Foundation
import Synchronization
import Testing

/// The Preferences window's model over the config file (ConfigWriter, as `chime config set`).
struct PreferencesViewModelTests {
    /// A home of its own with its config directory.
    struct Home {
        let directory: URL
        var environment: [String: String]
        var path: String { Config.path(environment: environment) }

        init() throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("chime-prefs-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            environment = ["HOME": directory.path, "XDG_CONFIG_HOME": directory.appendingPathComponent("config").path]
        }

        func cleanUp() { try? FileManager.default.removeItem(at: directory) }
        func file() -> String? { try? String(contentsOfFile: path, encoding: .utf8) }
    }

    final class FakeLogin: LoginStart {
        let enabled = Mutex(false)
        let refuse = Mutex<ChimeError?>(nil)
        func status() -> (enabled: Bool, detail: String) {
            let on = enabled.withLock { $0 }
            return (on, on ? "Starts at login (autostart entry)." : "Does not start at login.")
        }
        func enable() throws(ChimeError) -> [String] {
            if let error = refuse.withLock({ $0 }) { throw error }
            enabled.withLock { $0 = true }
            return ["Wrote the entry."]
        }
        func disable() throws(ChimeError) -> [String] {
            enabled.withLock { $0 = false }
            return ["Removed the entry."]
        }
    }

    @Test func theFieldsShowTheDefaultsWithoutAFile() throws {
        let home = try Home()
        defer { home.cleanUp() }
        let model = PreferencesViewModel(keys: ChimeApp.configKeys, environment: home.environment)
        let state = model.state
        #expect(
            state.fields.map(\.title) == [
                "Quiet hours", "Overdue after", "Missed after", "Repeat alert every", "Repeat at most", "Focus length", "Notifier",
            ]
        )
        #expect(state.field(.focusLength)?.text == "25m")
        #expect(state.field(.quietHours)?.text == "off")
        #expect(state.field(.notifier)?.choices.first == "auto")
        #expect(
            state.field(.focusLength)?.subtitle
                == "A focus session's length ('chime focus start'): a duration from 10m to 2h in whole minutes"
        )
        #expect(state.focusMinutes == 25)
        #expect(state.fileError == nil)
        #expect(home.file() == nil)
    }

    @Test func applyingAFieldWritesTheFileAsConfigSetDoes() throws {
        let home = try Home()
        defer { home.cleanUp() }
        try FileManager.default.createDirectory(
            atPath: (home.path as NSString).deletingLastPathComponent,
            withIntermediateDirectories: true
        )
        try "# my notes\n[focus]\nlength = \"25m\" # short\n".write(toFile: home.path, atomically: true, encoding: .utf8)
        let model = PreferencesViewModel(keys: ChimeApp.configKeys, environment: home.environment)
        let state = model.set(.focusLength, to: "30m")
        #expect(state.field(.focusLength)?.text == "30m")
        #expect(state.field(.focusLength)?.error == nil)
        #expect(state.focusMinutes == 30)
        #expect(home.file() == "# my notes\n[focus]\nlength = \"30m\" # short\n")
        model.set(.notifier, to: "console")
        model.set(.quietHours, to: "22:00-07:00")
        let config = try Config.load(keys: ChimeApp.configKeys, environment: home.environment)
        #expect(config.text(.notifier) == "console")
        #expect(config.quietHours?.description == "22:00-07:00")
    }

    @Test func aBadValueKeepsTheFileAndShowsTheCLIsMessageUnderTheField() throws {
        let home = try Home()
        defer { home.cleanUp() }
        let model = PreferencesViewModel(keys: ChimeApp.configKeys, environment: home.environment)
        model.set(.focusLength, to: "30m")
        let before = home.file()
        let state = model.set(.focusLength, to: "3m")
        #expect(state.field(.focusLength)?.text == "3m")
        #expect(
            state.field(.focusLength)?.error == "invalid focus.length '3m': expected a duration from \"10m\" to \"2h\" in whole minutes"
        )
        #expect(state.focusMinutes == 30)
        #expect(home.file() == before)
        // Fixed: written, the error gone.
        let fixed = model.set(.focusLength, to: "40m")
        #expect(fixed.field(.focusLength)?.error == nil)
        #expect(fixed.focusMinutes == 40)

        let count = model.set(.doseRepeatCount, to: "11")
        #expect(count.field(.doseRepeatCount)?.error == "invalid doses.repeat_count '11': expected a whole number from 0 to 10")
    }

    @Test func aBadFileIsSaidAndNotWritten() throws {
        let home = try Home()
        defer { home.cleanUp() }
        try FileManager.default.createDirectory(
            atPath: (home.path as NSString).deletingLastPathComponent,
            withIntermediateDirectories: true
        )
        let bad = "[focus]\nlength = 25\n"
        try bad.write(toFile: home.path, atomically: true, encoding: .utf8)
        let model = PreferencesViewModel(keys: ChimeApp.configKeys, environment: home.environment)
        #expect(model.state.fileError?.contains("invalid focus.length 25") == true, "\(model.state.fileError ?? "")")
        let state = model.set(.focusLength, to: "30m")
        #expect(state.field(.focusLength)?.error?.contains("invalid focus.length 25") == true)
        #expect(home.file() == bad)
    }

    @Test func whatBeatsTheFileIsSaid() throws {
        var home = try Home()
        defer { home.cleanUp() }
        home.environment["CHIME_FOCUS_LENGTH"] = "45m"
        let model = PreferencesViewModel(
            keys: ChimeApp.configKeys,
            environment: home.environment,
            storedQuietHours: { .some(try? QuietSettings.Window.parse("23:00-06:00")) }
        )
        let state = model.set(.focusLength, to: "30m")
        #expect(state.field(.focusLength)?.text == "30m")
        #expect(state.field(.focusLength)?.overridden == "CHIME_FOCUS_LENGTH=45m beats the file")
        #expect(state.focusMinutes == 45)
        #expect(state.field(.quietHours)?.overridden?.hasPrefix("'chime quiet hours' stored 23:00-06:00") == true)
    }

    @Test func startAtLoginIsTurnedOnAndOffThroughTheService() throws {
        let home = try Home()
        defer { home.cleanUp() }
        let login = FakeLogin()
        let model = PreferencesViewModel(keys: ChimeApp.configKeys, environment: home.environment, loginStart: login)
        #expect(!model.state.startsAtLogin)
        #expect(model.setStartsAtLogin(true).startsAtLogin)
        #expect(model.state.startAtLoginDetail == "Starts at login (autostart entry).")
        #expect(!model.setStartsAtLogin(false).startsAtLogin)
        login.refuse.withLock { $0 = ChimeError(.conflict, "the entry is yours") }
        let refused = model.setStartsAtLogin(true)
        #expect(!refused.startsAtLogin)
        #expect(refused.startAtLoginError == "the entry is yours")
    }
}

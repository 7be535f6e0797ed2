import ChimeApp
import ChimeConfig
import ChimeCore
import ChimeDoses
import ChimeGateway
import ChimeViewModels
import Foundation
import Testing

/// The config's settings the app's pages use, read as the CLI reads them; a bad file gives its
/// message and the defaults.
struct AppSettingsTests {
    static let path = "/h/.config/chime/config.toml"

    static func config(_ text: String?, environment: [String: String] = ["HOME": "/h"]) throws -> Config {
        try Config(path: path, contents: text, environment: environment, keys: ChimeApp.configKeys)
    }

    @Test func theFilesValuesReachThePagesSettings() throws {
        let file = """
            [reminders]
            snooze = "25m"
            [doses]
            grace = "20m"
            missed_after = "3h"
            repeat_every = "5m"
            repeat_count = 4
            [gate]
            determination = 8
            session = "10m"
            [focus]
            length = "40m"
            """
        let settings = AppSettings(try Self.config(file))
        #expect(settings.snoozeLength == .seconds(25 * 60))
        #expect(settings.snoozeLabel == "Snooze 25 min")
        #expect(settings.doseGrace == 20 * 60)
        #expect(settings.doseMissedAfter == 3 * 3600)
        #expect(settings.doseRepeats.interval == 300)
        #expect(settings.doseRepeats.count == 4)
        #expect(settings.gateDefaults.determination == 8)
        #expect(settings.gateDefaults.sessionLength == 600)
        #expect(settings.focusMinutes == 40)
        #expect(settings.problem == nil)
        // The same as the CLI's (ChimeApp's Config extension, which `chime dose` and `chime gate` use).
        #expect(settings.doseRepeats == (try Self.config(file)).doseRepeats)
        #expect(settings.gateDefaults == (try Self.config(file)).gateDefaults)
    }

    @Test func theEnvironmentBeatsTheFileAsForTheCLI() throws {
        let settings = AppSettings(
            try Self.config("[reminders]\nsnooze = \"25m\"\n", environment: ["HOME": "/h", "CHIME_SNOOZE": "1h30m"])
        )
        #expect(settings.snoozeLabel == "Snooze 1 h 30 min")
    }

    @Test func aBadFileGivesItsMessageAndTheDefaults() throws {
        let settings = AppSettings.load(keys: ChimeApp.configKeys) { () throws(ChimeError) in
            try Config(
                path: Self.path,
                contents: "[reminders]\nsnooze = \"never\"\n",
                environment: ["HOME": "/h"],
                keys: ChimeApp.configKeys
            )
        }
        let message = try #require(settings.problem)
        #expect(message.contains("snooze") && message.contains("never"), "\(message)")
        var withoutProblem = settings
        withoutProblem.problem = nil
        #expect(withoutProblem == AppSettings(try Self.config(nil)))
        #expect(settings.snoozeLength == PlainReminders.defaultSnoozeLength)
        #expect(settings.snoozeLabel == "Snooze 10 min")
        #expect(settings.doseRepeats == DoseRepeats())
        #expect(settings.gateDefaults == GateProfile.defaults)
    }

    @Test func lengthsAreSaidInMinutesAndHours() {
        #expect(AppSettings.length(.seconds(60)) == "1 min")
        #expect(AppSettings.length(.seconds(3600)) == "1 h")
        #expect(AppSettings.length(.seconds(5400)) == "1 h 30 min")
        #expect(AppSettings.length(.seconds(90)) == "90 s")
    }
}

import ChimeConfig
import ChimeCore
import Foundation
import Testing

/// The `[hooks]` table: an argv, or a table with `argv` or `shell` and a `timeout`; checked
/// whole at load (the program found in PATH), a bad one one line naming the key and the value.
struct HookConfigTests {
    static let environment = ["HOME": "/h", "PATH": "/usr/bin:/bin"]

    func load(_ text: String, environment: [String: String] = Self.environment) throws(ChimeError) -> Config {
        try Config(path: "/c", contents: text, environment: environment)
    }

    @Test func anArgvATableWithAShellAndATableWithAnArgvAreRead() throws {
        let config = try load(
            """
            [hooks]
            focus_completed = ["sh", "-c", "echo hi"]
            dose_taken = { shell = "echo $CHIME_EVENT >> ~/log", timeout = "30s" }
            dose_missed = { argv = ["/bin/true"], timeout = "1m" }
            focus_started = []
            """
        )
        let hooks = config.hooks
        #expect(hooks["focus.completed"] == ReminderCommand(.argv(["sh", "-c", "echo hi"])))
        #expect(hooks["dose.taken"] == ReminderCommand(.shell("echo $CHIME_EVENT >> ~/log"), timeout: .seconds(30)))
        #expect(hooks["dose.missed"] == ReminderCommand(.argv(["/bin/true"]), timeout: .seconds(60)))
        #expect(hooks["focus.started"] == nil)
        #expect(hooks.count == 3)
        let shown = config.setting(try #require(ConfigKey.hooks.first { $0.rawValue == "hooks.dose_taken" })).value.toml
        #expect(shown == #"{ shell = "echo $CHIME_EVENT >> ~/log", timeout = "30s" }"#)
    }

    @Test(arguments: [
        (#"focus_completed = ["no-such-program-xyz"]"#, #"invalid hooks.focus_completed ["no-such-program-xyz"]"#),
        (#"focus_completed = "echo hi""#, #"invalid hooks.focus_completed "echo hi""#),
        (#"dose_taken = [1, 2]"#, "invalid hooks.dose_taken [1, 2]"),
        (#"dose_taken = { shell = "true", timeout = "2d" }"#, #"invalid hooks.dose_taken { shell = "true", timeout = "2d" }"#),
        (#"dose_taken = { argv = ["/bin/true"], shell = "true" }"#, "invalid hooks.dose_taken"),
        (#"dose_taken = { program = "true" }"#, "invalid hooks.dose_taken"),
        (#"coffee_brewed = ["/bin/true"]"#, "unknown key 'hooks.coffee_brewed'"),
    ])
    func aBadHookIsOneConfigLine(text: String, message: String) throws {
        let error = try #require(throws: ChimeError.self) { try load("[hooks]\n" + text + "\n") }
        #expect(error.code == .config)
        #expect(error.message.contains("/c:2: " + message), "\(error.message)")
        #expect(!error.message.contains("\n"))
    }

    @Test func theEnvironmentTakesJSONAndBeatsTheFile() throws {
        var environment = Self.environment
        environment["CHIME_HOOK_FOCUS_COMPLETED"] = #"{"shell": "echo env", "timeout": "5s"}"#
        environment["CHIME_HOOK_DOSE_TAKEN"] = #"["/bin/true", "x"]"#
        let config = try load("[hooks]\nfocus_completed = [\"/bin/true\"]\n", environment: environment)
        #expect(config.hooks["focus.completed"] == ReminderCommand(.shell("echo env"), timeout: .seconds(5)))
        #expect(config.hooks["dose.taken"] == ReminderCommand(.argv(["/bin/true", "x"])))
        environment["CHIME_HOOK_DOSE_TAKEN"] = "true"
        let error = try #require(throws: ChimeError.self) { try load("", environment: environment) }
        #expect(error.message.contains("invalid CHIME_HOOK_DOSE_TAKEN 'true'"), "\(error.message)")
    }
}

import ChimeCore
import Foundation

extension ConfigKey {
    /// The gate's pause, as a level of determination.
    public static let gateDetermination = ConfigKey(
        "gate.determination",
        environment: "CHIME_GATE_DETERMINATION",
        flag: "chime gate setup --determination (stored; beats the file)",
        summary: "The gate's pause until 'chime gate setup', 1 (15 s) to 10 (45 s)",
        rule: .number(1...10),
        builtInDefault: { _ in .number(GateProfile.defaults.determination) }
    )

    /// After Proceed, how long a program opens without a gate.
    public static let gateGrace = ConfigKey(
        "gate.grace",
        environment: "CHIME_GATE_GRACE",
        flag: "chime gate setup --grace (stored; beats the file)",
        summary: "After Proceed, the program opens without a gate this long",
        rule: .duration(OptionDuration(option: "gate.grace", unit: .second, bareNumbers: false, range: 0...86_400)),
        builtInDefault: { _ in .seconds(Int64(GateProfile.defaults.grace.length)) }
    )

    /// A gated program's typical session.
    public static let gateSession = ConfigKey(
        "gate.session",
        environment: "CHIME_GATE_SESSION",
        flag: "chime gate setup --session (stored; beats the file)",
        summary: "A gated program's typical session (for the hours reclaimed)",
        rule: .duration(OptionDuration(option: "gate.session", unit: .second, bareNumbers: false, range: 60...86_400)),
        builtInDefault: { _ in .seconds(Int64(GateProfile.defaults.sessionLength)) }
    )

    /// Whether the gate's Exit starts a focus session.
    public static let gateFocusOnExit = ConfigKey(
        "gate.focus_on_exit",
        environment: "CHIME_GATE_FOCUS_ON_EXIT",
        flag: "chime gate setup --focus-on-exit (stored; beats the file)",
        summary: "The gate's Exit starts a focus session when none runs",
        rule: .flag,
        builtInDefault: { _ in .flag(GateProfile.defaults.focusOnExit) }
    )
}

extension GateBook {
    /// The config file's keys of the gateway, in the file's order.
    public static let configKeys: [ConfigKey] = [.gateDetermination, .gateGrace, .gateSession, .gateFocusOnExit]

    /// The gate's profile before `chime gate setup`: ``GateProfile/defaults`` with the config's
    /// (the file's and the environment's) `[gate]` values, read through `setting`.
    public static func configuredDefaults(_ setting: (ConfigKey) -> ConfigValue) -> GateProfile {
        var profile = GateProfile.defaults
        if case .number(let level) = setting(.gateDetermination) { profile.determination = level }
        if case .seconds(let grace) = setting(.gateGrace) { profile.grace = GateGrace(length: TimeInterval(grace)) }
        if case .seconds(let session) = setting(.gateSession) { profile.sessionLength = TimeInterval(session) }
        if case .flag(let value) = setting(.gateFocusOnExit) { profile.focusOnExit = value }
        return profile
    }
}

import ChimeCore

extension ConfigKey {
    /// A focus session's length.
    public static let focusLength = ConfigKey(
        "focus.length",
        environment: "CHIME_FOCUS_LENGTH",
        flag: "chime focus start --minutes",
        summary: "A focus session's length ('chime focus start')",
        rule: .duration(OptionDuration(option: "focus.length", unit: .minute, bareNumbers: false, range: 600...7_200)),
        builtInDefault: { _ in .seconds(Int64(FocusTimer.defaultMinutes) * 60) }
    )
}

extension FocusFamily {
    /// The config file's keys of focus sessions, in the file's order.
    public static let configKeys: [ConfigKey] = [.focusLength]
}

extension FocusFamily {
    /// The commands that change a focus session's reminders (what `chime edit` points to).
    public static let commands = "'chime focus'"
}

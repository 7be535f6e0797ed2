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

    /// The break after a completed session.
    public static let focusShortBreak = ConfigKey(
        "focus.short_break",
        environment: "CHIME_FOCUS_SHORT_BREAK",
        summary: "The break after a completed focus session",
        rule: .duration(OptionDuration(option: "focus.short_break", unit: .minute, bareNumbers: false, range: 60...3_600)),
        builtInDefault: { _ in .seconds(Int64(FocusBreaks.defaultShortMinutes) * 60) }
    )

    /// The break after every `long_break_every`-th completed session.
    public static let focusLongBreak = ConfigKey(
        "focus.long_break",
        environment: "CHIME_FOCUS_LONG_BREAK",
        summary: "The break after every long_break_every-th completed session",
        rule: .duration(OptionDuration(option: "focus.long_break", unit: .minute, bareNumbers: false, range: 60...7_200)),
        builtInDefault: { _ in .seconds(Int64(FocusBreaks.defaultLongMinutes) * 60) }
    )

    /// The cycle's length: a long break after this many completed sessions.
    public static let focusLongBreakEvery = ConfigKey(
        "focus.long_break_every",
        environment: "CHIME_FOCUS_LONG_BREAK_EVERY",
        summary: "A long break after this many completed sessions (the cycle)",
        rule: .number(1...12),
        builtInDefault: { _ in .number(FocusBreaks.defaultLongEvery) }
    )

    /// Whether the next session starts by itself when a break ends.
    public static let focusAutoStartSessions = ConfigKey(
        "focus.auto_start_sessions",
        environment: "CHIME_FOCUS_AUTO_START_SESSIONS",
        summary: "The next session starts by itself when a break ends (else it waits for Start)",
        rule: .flag,
        builtInDefault: { _ in .flag(false) }
    )

    /// How long the person is idle during a session before it is paused ("off": never).
    public static let focusIdlePause = ConfigKey(
        "focus.idle_pause",
        environment: "CHIME_FOCUS_IDLE_PAUSE",
        summary: "Pause a session when you are idle this long (\"off\": never); paused back to when idleness began",
        rule: .durationOrOff(OptionDuration(option: "focus.idle_pause", unit: .second, bareNumbers: false, range: 60...14_400)),
        builtInDefault: { _ in .seconds(FocusIdle.defaultPauseSeconds) }
    )

    /// Whether what starts by itself (a break; with auto_start_sessions the next session) waits
    /// for the person to be back when they are away.
    public static let focusWaitForActivity = ConfigKey(
        "focus.wait_for_activity",
        environment: "CHIME_FOCUS_WAIT_FOR_ACTIVITY",
        summary: "Away when a session or break ends: the break (or, with auto_start_sessions, the session) starts when you are back",
        rule: .flag,
        builtInDefault: { _ in .flag(false) }
    )
}

extension FocusFamily {
    /// The config file's keys of focus sessions, in the file's order.
    public static let configKeys: [ConfigKey] = [
        .focusLength, .focusShortBreak, .focusLongBreak, .focusLongBreakEvery, .focusAutoStartSessions, .focusIdlePause,
        .focusWaitForActivity,
    ]
}

extension FocusFamily {
    /// The commands that change a focus session's reminders (what `chime edit` points to).
    public static let commands = "'chime focus'"
}

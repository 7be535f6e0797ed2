import ChimeCore

extension ConfigKey {
    /// How long after its time a dose is overdue.
    public static let doseGrace = ConfigKey(
        "doses.grace",
        environment: "CHIME_DOSE_GRACE",
        flag: "chime med add --grace",
        summary: "A dose is overdue this long after its time ('chime med add')",
        rule: .duration(OptionDuration(option: "doses.grace", unit: .second, bareNumbers: false, range: 60...86_400)),
        builtInDefault: { _ in .seconds(Int64(DoseRules.defaultGrace)) }
    )

    /// How long after its time an unanswered dose is missed.
    public static let doseMissedAfter = ConfigKey(
        "doses.missed_after",
        environment: "CHIME_DOSE_MISSED_AFTER",
        flag: "chime med add --missed-after",
        summary: "A dose unanswered this long after its time is missed ('chime med add')",
        rule: .duration(OptionDuration(option: "doses.missed_after", unit: .second, bareNumbers: false, range: 60...604_800)),
        builtInDefault: { _ in .seconds(Int64(DoseRules.defaultMissedAfter)) }
    )

    /// How often an unanswered dose alert comes again.
    public static let doseRepeatEvery = ConfigKey(
        "doses.repeat_every",
        environment: "CHIME_DOSE_REPEAT_EVERY",
        summary: "An unanswered dose alert comes again this often",
        rule: .duration(OptionDuration(option: "doses.repeat_every", unit: .minute, bareNumbers: false, range: 60...86_400)),
        builtInDefault: { _ in .seconds(Int64(DoseRules.repeatInterval)) }
    )

    /// At most how many times it comes again.
    public static let doseRepeatCount = ConfigKey(
        "doses.repeat_count",
        environment: "CHIME_DOSE_REPEAT_COUNT",
        summary: "At most this many times (0: never), until the dose is missed",
        rule: .number(0...10),
        builtInDefault: { _ in .number(DoseRules.maxRepeats) }
    )
}

extension ConfigKey {
    /// Who takes the medications, as the messages to someone else name them (`--tell`).
    public static let dosePerson = ConfigKey(
        "doses.person_name",
        environment: "CHIME_DOSE_PERSON_NAME",
        summary: "Your name in what 'chime med add --tell' sends: \"Alex has not taken Metformin 500 mg\" (\"\": your account's name)",
        rule: .name,
        builtInDefault: { _ in .text("") }
    )
}

extension DoseFamily {
    /// The config file's keys of doses, in the file's order.
    public static let configKeys: [ConfigKey] = [.doseGrace, .doseMissedAfter, .doseRepeatEvery, .doseRepeatCount, .dosePerson]

    /// The person the messages to someone else name: the config's `doses.person_name`, else
    /// ``defaultPerson``.
    public static func person(_ setting: (ConfigKey) -> ConfigValue) -> String {
        if case .text(let name) = setting(.dosePerson), !name.isEmpty { return name }
        return defaultPerson
    }
}

extension DoseRepeats {
    /// How an unanswered dose alert repeats, from the config's `doses.repeat_every` and
    /// `doses.repeat_count` (the file's or the environment's), read through `setting`.
    public static func configured(_ setting: (ConfigKey) -> ConfigValue) -> DoseRepeats {
        var repeats = DoseRepeats()
        if case .seconds(let every) = setting(.doseRepeatEvery) { repeats.interval = Int(every) }
        if case .number(let count) = setting(.doseRepeatCount) { repeats.count = count }
        return repeats
    }
}

extension DoseFamily {
    /// The commands that change a dose's reminders (what `chime edit` points to).
    public static let commands = "'chime dose' and 'chime med'"
}

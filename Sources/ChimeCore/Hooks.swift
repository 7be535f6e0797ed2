import Foundation

/// A family's event that can run a hook: a command from the config file's `[hooks]` table
/// (`focus_completed = ["notify-send", "Done"]`), run by the runner once per event.
///
/// The family records the event in the store in the same transaction as the change it tells of
/// (``HookEvent/record``, ChimeStore's `hook_run` table); the runner runs the hook the config
/// names for it at its next pass, under a ledger row (running, then how it ended), never twice.
public struct HookEvent: Sendable, Hashable {
    /// The event's name as the hook's `CHIME_EVENT` gives it: `focus.completed`, `dose.taken`.
    public var name: String
    /// What it is about, unique per event: a focus session's or a dose's id (`CHIME_ID`).
    public var subject: String
    /// The hook's environment beyond `CHIME_EVENT` and `CHIME_ID`: `CHIME_TITLE`,
    /// `CHIME_FOCUS_MINUTES`, `CHIME_DOSE_MEDICATION`…
    public var environment: [String: String]

    public init(_ name: String, subject: String, environment: [String: String] = [:]) {
        self.name = name
        self.subject = subject
        self.environment = environment
    }

    /// Every event a hook can follow, by its name (the config key is the name with `_` for `.`).
    public static let names = [
        "focus.started", "focus.completed", "focus.given_up",
        "dose.taken", "dose.missed", "dose.skipped",
        "gate.exit", "gate.proceed",
    ]

    /// The config key of the hook for event `name`: `hooks.focus_completed`.
    public static func keyName(_ name: String) -> String { "hooks." + name.replacingOccurrences(of: ".", with: "_") }

    /// The whole environment the hook gets (added to the runner's own).
    public var hookEnvironment: [String: String] {
        var all = environment
        all["CHIME_EVENT"] = name
        all["CHIME_ID"] = subject
        return all
    }
}

/// A hook waiting in the store, or running: its row, its event, and how it is going.
public struct HookRecord: Sendable, Hashable {
    public var id: Int64
    public var event: HookEvent
    public var recordedAt: Date

    public init(id: Int64, event: HookEvent, recordedAt: Date) {
        self.id = id
        self.event = event
        self.recordedAt = recordedAt
    }

    /// The ``CommandLauncher`` key of its run: hooks use negative reminder keys, which no
    /// reminder has.
    public var launchKey: OccurrenceKey { OccurrenceKey(reminderKey: -id, dueMicros: 0) }

    /// The hook row of a launch key (nil: a reminder's occurrence).
    public static func hookID(_ key: OccurrenceKey) -> Int64? { key.reminderKey < 0 ? -key.reminderKey : nil }
}

extension ConfigKey {
    /// The `[hooks]` keys, one per ``HookEvent/names``: each a command (an argv, or a table
    /// with `shell` or `argv` and a `timeout`), none by default.
    public static let hooks: [ConfigKey] = HookEvent.names.map { name in
        let key = HookEvent.keyName(name)
        let variable = "CHIME_HOOK_" + name.replacingOccurrences(of: ".", with: "_").uppercased()
        let words = name.split(separator: ".").map(String.init)
        let what = words[1].replacingOccurrences(of: "_", with: " ")
        return ConfigKey(
            key,
            environment: variable,
            summary:
                "The command run once when a \(words[0] == "focus" ? "focus session" : words[0]) is \(what == "exit" || what == "proceed" ? "answered '\(what)'" : what)",
            rule: .command,
            builtInDefault: { _ in .command(nil) }
        )
    }
}

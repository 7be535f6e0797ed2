import ChimeCore

extension ConfigKey {
    /// The store: a SQLite file (by default under `$XDG_DATA_HOME`) or a PostgreSQL URL.
    public static let store = ConfigKey(
        "store",
        environment: "CHIME_STORE",
        flag: "--store",
        summary: "The store",
        rule: .store,
        example: (.text("~/.local/share/chime/chime.sqlite"), "default: $XDG_DATA_HOME/chime/chime.sqlite, else this"),
        redact: { Redaction.redacted($0) },
        builtInDefault: { environment in
            var withoutOverride = environment
            withoutOverride["CHIME_STORE"] = nil
            return .text(ReminderStore.defaultPath(environment: withoutOverride))
        }
    )
}

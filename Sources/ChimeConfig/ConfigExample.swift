import ChimeCore

extension Config {
    /// The commented example: every key at its built-in default, commented out, with one line
    /// saying what it is and what it accepts. `chime config edit` writes it to a new file,
    /// `chime config example` prints it, and the README's "Configuration" section holds it (a
    /// test keeps them equal).
    public static func example(keys: [ConfigKey]) -> String {
        var lines = [
            "# Chime's configuration (chime config path; chime config edit). Every key is shown at",
            "# its default, commented out: remove the '#' to change it. Flags beat environment",
            "# variables, which beat this file. A running 'chime run' reads it when it starts.",
        ]
        var section: String?
        for key in keys {
            if key.section != section {
                section = key.section
                lines += ["", "[\(key.section ?? "")]"]
            } else {
                lines.append("")
            }
            let note = key.exampleNote.map { "; \($0)" } ?? ""
            lines.append("# \(key.summary): \(key.accepted)\(note) (\(key.environmentVariable))")
            lines.append("# \(key.name) = \(key.exampleDefault.toml)")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}

/// An error meant for a person: a stable ``Code`` that maps to an exit status, and one line
/// that names the bad value and says what would be accepted or what to try.
public struct ChimeError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure this is. Each code has its own exit status.
    public enum Code: String, Sendable, Hashable, Codable, CaseIterable {
        /// Bad input: a value that does not parse or is out of range.
        case usage
        /// No pending reminder (or other object) has the identifier given.
        case notFound = "not_found"
        /// The identifier is taken (with `--no-replace`), or the operation clashes with state.
        case conflict
        /// The store cannot be opened or written: missing directory, not SQLite, read-only, full.
        case store
        /// A runner already serves this store.
        case runnerRunning = "runner_running"
        /// The notifier could not deliver.
        case delivery
        /// A cancel came too late: the runner had already shown the alert.
        case tooLate = "too_late"
        /// The config file (or a variable that stands for one of its keys) is bad: not TOML, an
        /// unknown key, a value of the wrong type or out of range.
        case config
        /// Anything else.
        case failure

        /// The process exit status for this code (documented in the README and the man page).
        public var exitStatus: Int32 {
            switch self {
            case .usage: 64  // EX_USAGE, as swift-argument-parser uses for its own parse errors
            case .notFound: 3
            case .conflict: 4
            case .store: 5
            case .runnerRunning: 6
            case .delivery: 7
            case .tooLate: 8
            case .config: 78  // EX_CONFIG (sysexits.h)
            case .failure: 1
            }
        }
    }

    public var code: Code
    public var message: String

    /// - Parameter message: one line; control characters in it (from a value someone typed or a
    ///   reminder's title) are shown escaped, as `\n` or `\u{1B}`, so the message stays one line
    ///   and never reaches a terminal as a control sequence.
    /// The error underneath, as the library that failed threw it (GRDB's `DatabaseError`,
    /// ChimePostgres's `PostgresError` with its SQLSTATE, a Chime marker such as
    /// ``RemovedWriteAheadLog``): code that must decide by the failure asks it, never the
    /// message's text. Not part of equality: two errors that say the same are the same.
    public var cause: (any Error & Sendable)?

    public init(_ code: Code, _ message: String, cause: (any Error & Sendable)? = nil) {
        self.code = code
        self.message = Self.escapingControlCharacters(message)
        self.cause = cause
    }

    public static func == (lhs: ChimeError, rhs: ChimeError) -> Bool {
        lhs.code == rhs.code && lhs.message == rhs.message
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
        hasher.combine(message)
    }

    /// `text` with its control characters, line and paragraph separators, bidirectional
    /// controls and zero-width characters written as escapes (`\n`, `\t`, `\u{1B}`); unchanged when it has none.
    public static func escapingControlCharacters(_ text: String) -> String {
        func isControl(_ scalar: Unicode.Scalar) -> Bool {
            switch scalar.properties.generalCategory {
            case .control, .lineSeparator, .paragraphSeparator: return true
            default:
                return UserText.isBidiControl(scalar) || UserText.isInvisible(scalar) || UserText.isJoiner(scalar)
            }
        }
        // Printable ASCII, the usual case, needs no Unicode property lookups.
        if text.utf8.allSatisfy({ (0x20..<0x7F).contains($0) }) { return text }
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var escaped = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": escaped += "\\n"
            case "\r": escaped += "\\r"
            case "\t": escaped += "\\t"
            case let scalar where isControl(scalar): escaped += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }

    /// Bad input: `value` is named in the message, followed by what would be accepted.
    public static func invalid(_ what: String, _ value: String, expected: String) -> ChimeError {
        ChimeError(.usage, "invalid \(what) '\(value)': expected \(expected)")
    }

    /// No pending reminder has `id`: says what became of it when it existed, from the state of its
    /// latest row in a store (`done`, `cancelled`, `replaced`). One text for every store.
    public static func noPendingReminder(id: String, lastState: String?) -> ChimeError {
        let what =
            switch lastState {
            case "done": "it has already fired"
            case "cancelled": "it was cancelled"
            case "replaced": "it was replaced"
            default: "see 'chime list' for pending reminders"
            }
        return ChimeError(.notFound, "no pending reminder has the id '\(id)': \(what)")
    }

    public var description: String { message }
}

/// The cause of ``ChimeError/notEditable(id:kind:commands:)``: the family's reminder, so that a
/// layer that knows the families (the composition root) can name their commands.
public struct FamilyReminder: Error, Sendable, Hashable {
    public var id: String
    public var kind: String
    public init(id: String, kind: String) { (self.id, self.kind) = (id, kind) }
}

extension ChimeError {
    /// `chime edit` of a family's reminder (a dose, a focus session), on either store: its own
    /// commands change it. The stores know no family: they say "its family's own command", with
    /// the kind as the cause (``FamilyReminder``); the CLI names the family's commands.
    public static func notEditable(id: String, kind: String, commands: String? = nil) -> ChimeError {
        ChimeError(
            .conflict,
            "'\(id)' is a \(kind) reminder, not a plain one: 'chime edit' changes plain reminders only; use \(commands ?? "its family's own command")",
            cause: FamilyReminder(id: id, kind: kind)
        )
    }
}

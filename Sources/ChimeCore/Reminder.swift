import Foundation

/// A reminder as Chime stores it: who it is (``id``), what it says, and when it fires.
public struct Reminder: Sendable, Hashable, Identifiable {
    /// The identifier people type: `standup`, or a generated one such as `r7f3k`.
    public var id: String
    public var title: String
    public var body: String
    public var trigger: Trigger
    /// The family that made it: `plain` for `chime in|at|every`.
    public var kind: String
    public var createdAt: Date
    /// The next occurrence still to fire; `nil` once a one-shot reminder has fired.
    public var nextDue: Date?
    /// The last occurrence recorded in the ledger.
    public var lastDue: Date?
    /// How its alert looks (urgency, sticky, icon, sound).
    public var presentation: Presentation = Presentation()
    /// The command it runs when it fires, if any.
    public var command: ReminderCommand?
    /// The application that scheduled it over D-Bus (`org.example.App`), nil for Chime's own
    /// command line: its actions go back to that app, and it alone lists and cancels it there.
    public var appID: String?

    public init(
        id: String,
        title: String,
        body: String = "",
        trigger: Trigger,
        kind: String = "plain",
        createdAt: Date,
        nextDue: Date?,
        lastDue: Date? = nil,
        presentation: Presentation = Presentation(),
        command: ReminderCommand? = nil,
        appID: String? = nil
    ) {
        self.command = command
        self.appID = appID
        self.id = id
        self.title = title
        self.body = body
        self.trigger = trigger
        self.kind = kind
        self.createdAt = createdAt
        self.nextDue = nextDue
        self.lastDue = lastDue
        self.presentation = presentation
    }
}

/// What a caller asks to schedule; the store gives it an identifier when it has none.
public struct NewReminder: Sendable, Hashable {
    public var id: String?
    public var title: String
    public var body: String
    public var trigger: Trigger
    public var kind: String
    /// How its alert looks (urgency, sticky, icon, sound).
    public var presentation: Presentation
    /// The command it runs when it fires, if any (checked by ``ReminderCommand/validated(searchPath:)``).
    public var command: ReminderCommand?
    /// The application that schedules it (``Reminder/appID``), nil for the command line.
    public var appID: String?

    public init(
        id: String? = nil,
        title: String,
        body: String = "",
        trigger: Trigger,
        kind: String = "plain",
        presentation: Presentation = Presentation(),
        command: ReminderCommand? = nil,
        appID: String? = nil
    ) {
        self.command = command
        self.appID = appID
        self.id = id
        self.title = title
        self.body = body
        self.trigger = trigger
        self.kind = kind
        self.presentation = presentation
    }

    /// Checks what people type: a non-empty title of at most 500 characters, a body of at most
    /// 4,000, neither with bidirectional controls or hidden characters (``UserText``), a
    /// well-formed identifier.
    public func validated() throws(ChimeError) -> NewReminder {
        var copy = self
        // Trim only when needed: Foundation's trimming costs more than the insert in a large batch.
        if let first = title.unicodeScalars.first, let last = title.unicodeScalars.last,
            !first.properties.isWhitespace, !last.properties.isWhitespace
        {
        } else {
            copy.title = title.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        if copy.title.isEmpty {
            throw ChimeError.invalid("title", title, expected: "a non-empty title")
        }
        try UserText.check(copy.title, field: "title", limit: UserText.titleLimit)
        try UserText.check(body, field: "body", limit: UserText.bodyLimit)
        if let id { try ReminderIdentifier.validate(id) }
        if !presentation.isDefault { copy.presentation = try presentation.validated() }
        if let command { copy.command = try command.validated() }
        if let appID { try ApplicationID.validate(appID) }
        return copy
    }
}

/// Identifiers are typed by people: short, case-sensitive, no spaces.
public enum ReminderIdentifier {
    /// Letters people do not confuse (no 0/o, 1/l/i): generated ids read well aloud.
    static let alphabet = Array("23456789abcdefghjkmnpqrstuvwxyz")

    /// `standup`, `med-12-20261122-0800`, `tea.2`: a letter or digit, then letters, digits, `.`, `_`, `-`.
    public static func validate(_ id: String) throws(ChimeError) {
        let expected = "1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit"
        guard (1...64).contains(id.utf8.count) else { throw ChimeError.invalid("id", id, expected: expected) }
        for (index, byte) in id.utf8.enumerated() {
            let isAlnum = (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
            let isMark = byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
            if !(isAlnum || (isMark && index > 0)) { throw ChimeError.invalid("id", id, expected: expected) }
        }
    }

    /// Several identifiers, as `chime cancel` takes them: each well-formed, and none twice (the
    /// same id twice is a typing mistake; cancelling it once would not be what was asked).
    public static func validate(list ids: [String]) throws(ChimeError) {
        var seen = Set<String>()
        for id in ids {
            try validate(id)
            guard seen.insert(id).inserted else {
                throw ChimeError(.usage, "the id '\(id)' is given twice: give each id once")
            }
        }
    }

    /// A fresh identifier: `r` and `length` letters or digits (`r7f3k`).
    public static func generate<G: RandomNumberGenerator>(length: Int = 4, using rng: inout G) -> String {
        var id = "r"
        for _ in 0..<length { id.append(alphabet.randomElement(using: &rng)!) }
        return id
    }
}

/// The outcome of scheduling one reminder (on either store).
public struct ScheduleResult: Sendable, Hashable {
    public var reminder: Reminder
    /// True when a pending reminder with the same id was replaced.
    public var replaced: Bool

    public init(reminder: Reminder, replaced: Bool) {
        self.reminder = reminder
        self.replaced = replaced
    }
}

/// Another program's D-Bus application id, as desktop entries and GApplication name apps
/// (`org.example.App`): 2 or more elements of letters, digits, '_' and '-' (none starting with a
/// digit), joined by '.', at most 255 bytes.
extension ApplicationID {
    public static func validate(_ id: String) throws(ChimeError) {
        let elements = id.split(separator: ".", omittingEmptySubsequences: false)
        let valid =
            id.utf8.count <= 255 && elements.count >= 2
            && elements.allSatisfy { element in
                guard let first = element.unicodeScalars.first, !("0"..."9").contains(first) else { return false }
                return element.unicodeScalars.allSatisfy { scalar in
                    scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == "_" || scalar == "-")
                }
            }
        guard valid else {
            throw ChimeError.invalid(
                "app-id",
                id,
                expected: "a D-Bus application id such as org.example.App (letters, digits, '_' and '-' in 2 or more parts joined by '.')"
            )
        }
    }

    /// The object path GApplication serves an app's actions at: `/org/example/App`
    /// ('-' as '_', as GLib writes it).
    public static func objectPath(_ id: String) -> String {
        "/" + id.replacingOccurrences(of: ".", with: "/").replacingOccurrences(of: "-", with: "_")
    }
}

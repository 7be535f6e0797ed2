import Foundation

/// `chime import`: a JSON file of reminders read into ``NewReminder``s, all of them or none.
///
/// The file holds an array of reminders, or an object whose "reminders" is one (so the output
/// of `chime list --json` imports as it is). A key Chime does not know is refused, naming it and
/// its position, rather than ignored: a misspelled "zon" would otherwise schedule in the wrong zone.
public enum ReminderImport {
    /// The keys of a reminder: those one writes, and those `chime list --json` prints.
    static let itemKeys = [
        "title", "id", "body", "at", "in", "every", "zone", "trigger", "next_due", "kind", "recurring", "next_due_local", "created",
        "urgency", "sticky", "icon", "sound", "command", "app_id", "actions",
    ]
    /// The keys of a reminder, in an error message.
    static let expectedItemKeys =
        "\"title\", \"id\", \"body\", \"at\", \"in\", \"every\", \"zone\", \"urgency\", \"sticky\", \"icon\", \"sound\", \"command\", \"app_id\" or \"actions\" (or the keys 'chime list --json' prints)"
    /// The keys of the object form: `chime list --json` prints "reminders" and "runner".
    static let wrapperKeys = ["reminders", "runner"]
    /// The object form, to the splitter: the array is its "reminders"; "runner" is skipped.
    static let wrapper = JSONArraySplitter.Wrapper(key: "reminders", others: ["runner"])
    /// What a file holds, in an error message.
    static let expectedDocument = "an array of reminders, or an object whose \"reminders\" is one"

    /// What becomes of a one-shot reminder whose time has passed when the file is imported (a
    /// backup restored later): `chime import --past skip|fire`.
    public enum PastOneShots: String, Sendable, CaseIterable {
        /// Left out: it may have been shown already, from the store the backup was made of.
        case skip
        /// Scheduled at the time it had, so that the runner shows it at once, saying how late.
        case fire
    }

    /// A reminder of the file whose time had passed, and what the import did with it: each is
    /// told to the person in one line.
    public struct Adjustment: Sendable, Equatable {
        public enum Kind: String, Sendable, Equatable {
            /// A recurring reminder moved to its next occurrence from now.
            case moved
            /// A one-shot left out: `--past skip`, or no `--past` given (``Adjustment/chosen`` false).
            case skipped
            /// A one-shot scheduled at its time, to fire at once, late (`--past fire`).
            case fires
            /// A recurring reminder whose rule has ended: nothing is left to schedule.
            case ended
        }

        public var kind: Kind
        /// Its 0-based position in the file.
        public var index: Int
        public var id: String?
        public var title: String
        /// The time it was due, as the file gives it.
        public var due: Date
        /// Its next occurrence from now (``Kind/moved``).
        public var next: Date?
        /// Whether the person chose what becomes of a past one-shot (`--past`).
        public var chosen: Bool
    }

    /// A reminder of the file checked: to schedule (with what was changed about it, if
    /// anything), or left out, saying why.
    enum Checked {
        case schedule(NewReminder, Adjustment?)
        case leave(Adjustment)
    }

    /// `1 MiB`, `1 GiB`, or bytes.
    static func describeBytes(_ count: Int) -> String {
        if count >= 1 << 30 && count % (1 << 30) == 0 { return "\(count >> 30) GiB" }
        if count >= 1 << 20 && count % (1 << 20) == 0 { return "\(count >> 20) MiB" }
        if count >= 1 << 10 && count % (1 << 10) == 0 { return "\(count >> 10) KiB" }
        return "\(count) bytes"
    }

    /// One reminder of the file.
    struct Item: Decodable {
        var id: String?
        var title: String?
        var body: String?
        var at: String?
        var `in`: String?
        var every: String?
        var zone: String?
        var trigger: String?
        var nextDue: String?
        /// How the alert looks, as `chime in --urgency … --sticky --icon … --sound …` sets it.
        var urgency: String?
        var sticky: Bool?
        var icon: String?
        var sound: String?
        /// The command it runs when it fires, as `chime list --json` prints it.
        var command: CommandItem?
        /// The app it belongs to, and the app's own buttons, as `chime list --json` prints them
        /// (a reminder scheduled over D-Bus with `app-id` and `actions`).
        var appID: String?
        var actions: [ActionItem]?

        init() {}

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: AnyKey.self)
            try refuseUnknownKeys(container, known: itemKeys, in: decoder.codingPath)
            func string(_ key: String) throws -> String? { try container.decodeIfPresent(String.self, forKey: AnyKey(key)) }
            id = try string("id")
            title = try string("title")
            body = try string("body")
            at = try string("at")
            `in` = try string("in")
            every = try string("every")
            zone = try string("zone")
            trigger = try string("trigger")
            nextDue = try string("next_due")
            urgency = try string("urgency")
            sticky = try container.decodeIfPresent(Bool.self, forKey: AnyKey("sticky"))
            icon = try string("icon")
            sound = try string("sound")
            command = try container.decodeIfPresent(CommandItem.self, forKey: AnyKey("command"))
            appID = try string("app_id")
            actions = try container.decodeIfPresent([ActionItem].self, forKey: AnyKey("actions"))
        }
    }

    /// One of a reminder's own buttons in "actions": `{"key": "open", "label": "Open"}`.
    struct ActionItem: Decodable {
        static let keys = ["key", "label"]
        var action: Note.Action

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: AnyKey.self)
            try refuseUnknownKeys(container, known: Self.keys, in: decoder.codingPath)
            action = Note.Action(
                key: try container.decode(String.self, forKey: AnyKey("key")),
                label: try container.decode(String.self, forKey: AnyKey("label"))
            )
        }
    }

    /// A reminder's "command": `{"argv": ["rsync", "-a", "SRC", "DST"]}` or `{"shell": "CMD"}`,
    /// with an optional `"timeout_s"` (seconds).
    struct CommandItem: Decodable {
        static let keys = ["argv", "shell", "timeout_s"]
        var argv: [String]?
        var shell: String?
        var timeoutSeconds: Int64?

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: AnyKey.self)
            try refuseUnknownKeys(container, known: Self.keys, in: decoder.codingPath)
            argv = try container.decodeIfPresent([String].self, forKey: AnyKey("argv"))
            shell = try container.decodeIfPresent(String.self, forKey: AnyKey("shell"))
            timeoutSeconds = try container.decodeIfPresent(Int64.self, forKey: AnyKey("timeout_s"))
        }

        /// The command, its program found in `path`.
        func command(path: String) throws(ChimeError) -> ReminderCommand {
            let program: ReminderCommand.Program
            switch (argv, shell) {
            case (let argv?, nil): program = .argv(argv)
            case (nil, let shell?): program = .shell(shell)
            default:
                throw ChimeError(.usage, "invalid \"command\": expected {\"argv\": [PROGRAM, ARGS...]} or {\"shell\": \"CMD\"}")
            }
            let timeout = Duration.seconds(timeoutSeconds ?? ReminderCommand.defaultTimeout.components.seconds)
            return try ReminderCommand(program, timeout: timeout).validated(searchPath: path)
        }
    }

    private struct Wrapped: Decodable {
        var reminders: [Item]

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: AnyKey.self)
            try refuseUnknownKeys(container, known: wrapperKeys, in: decoder.codingPath)
            reminders = try container.decode([Item].self, forKey: AnyKey("reminders"))
        }
    }

    struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ string: String) { stringValue = string }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// Thrown while decoding: a key the format does not have, at `path`.
    struct UnknownKey: Error {
        var key: String
        var path: [any CodingKey]
        var known: [String]
    }

    private static func refuseUnknownKeys(
        _ container: KeyedDecodingContainer<AnyKey>,
        known: [String],
        in path: [any CodingKey]
    ) throws {
        // Sorted, so that the error names the same key each time.
        if let unknown = container.allKeys.map(\.stringValue).filter({ !known.contains($0) }).sorted().first {
            throw UnknownKey(key: unknown, path: path, known: known)
        }
    }

    /// Parses the whole file into reminders with Foundation's `JSONDecoder`, or throws one usage
    /// error naming the first bad reminder (by position and id) and value, or where the JSON
    /// stops being JSON. `chime import` streams through ``Reader``; this whole-document reading
    /// is the reference its tests compare the stream with. A one-shot whose time has passed is
    /// left out, as the reader leaves it out by default.
    /// - Parameter source: the file's name in messages ("standard input", "reminders.json").
    public static func reminders(from data: Data, source: String, now: Date) throws(ChimeError) -> [NewReminder] {
        if let repeated = JSONSyntax.repeatedKey(in: data) {
            throw ChimeError(.usage, "\(source): the key \"\(repeated.key)\" is given twice (\(repeated.place)): give each key once")
        }
        let items: [Item]
        do {
            let trimmed = data.first { !($0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09) }
            items =
                try trimmed == UInt8(ascii: "{")
                ? JSONDecoder().decode(Wrapped.self, from: data).reminders : JSONDecoder().decode([Item].self, from: data)
        } catch let error as UnknownKey {
            let position = describe(error.path)
            let expected = position.isEmpty ? "\"reminders\" (an array of reminders)" : expectedItemKeys
            throw ChimeError(.usage, "\(source): \(position)unknown key \"\(error.key)\": expected \(expected)")
        } catch let error as DecodingError {
            throw ChimeError(.usage, "\(source): \(describe(error, data: data))")
        } catch {
            throw ChimeError(
                .usage,
                "\(source) is not valid JSON\(JSONSyntax.errorPosition(in: data).map { " \($0)" } ?? ""): expected an array of reminders"
            )
        }
        var seen: [String: Int]? = [:]
        var batch: [NewReminder] = []
        batch.reserveCapacity(items.count)
        for (index, item) in items.enumerated() {
            if case .schedule(let reminder, _) = try check(item, index: index, seen: &seen, source: source, now: now, past: nil) {
                batch.append(reminder)
            }
        }
        return batch
    }

    /// The reminder of `item`, the `index`th of the file, or an error naming it; `seen`, when
    /// not nil, holds the index of each id read so far, to refuse an id given twice.
    static func check(
        _ item: Item,
        index: Int,
        seen: inout [String: Int]?,
        source: String,
        now: Date,
        past: PastOneShots?
    ) throws(ChimeError) -> Checked {
        let name = "reminder \(index + 1)" + (item.id.map { " ('\($0)')" } ?? "")
        do throws(ChimeError) {
            let (new, listedDue) = try reminder(item, now: now)
            if let id = new.id {
                if let first = seen?[id] {
                    throw ChimeError(.usage, "the id '\(id)' is also reminder \(first + 1)'s: give each reminder its own id")
                }
                seen?[id] = index
            }
            return passed(new, listedDue: listedDue, index: index, now: now, past: past)
        } catch {
            throw ChimeError(error.code, "\(source): \(name): \(error.message)")
        }
    }

    /// `new` as it is when its time is still to come; otherwise moved to its next occurrence
    /// (recurring: `listedDue` is the next due time the file gives), or left out or kept to
    /// fire at once (a one-shot, as `past` says).
    static func passed(_ new: NewReminder, listedDue: Date?, index: Int, now: Date, past: PastOneShots?) -> Checked {
        func adjustment(_ kind: Adjustment.Kind, due: Date, next: Date? = nil) -> Adjustment {
            Adjustment(kind: kind, index: index, id: new.id, title: new.title, due: due, next: next, chosen: past != nil)
        }
        switch new.trigger {
        case .once(let at):
            guard at <= now else { return .schedule(new, nil) }
            return past == .fire ? .schedule(new, adjustment(.fires, due: at)) : .leave(adjustment(.skipped, due: at))
        default:
            guard let due = listedDue, due <= now else { return .schedule(new, nil) }
            guard let next = new.trigger.nextOccurrence(after: now, systemZone: .current) else {
                return .leave(adjustment(.ended, due: due))
            }
            return .schedule(new, adjustment(.moved, due: due, next: next))
        }
    }

    /// The reminder of `item`, and the next due time the file gives for it when it is a
    /// reminder as `chime list --json` prints it (nil otherwise).
    static func reminder(_ item: Item, now: Date) throws(ChimeError) -> (NewReminder, listedDue: Date?) {
        guard let title = item.title else { throw ChimeError(.usage, "missing \"title\": every reminder needs one") }
        let given = [("at", item.at), ("in", item.in), ("every", item.every)].filter { $0.1 != nil }
        let trigger: Trigger
        var listedDue: Date?
        switch given.count {
        case 0:
            guard let summary = item.trigger, let nextDue = item.nextDue else {
                throw ChimeError(.usage, "no time: expected one of \"at\", \"in\" or \"every\"")
            }
            (trigger, listedDue) = try listed(summary: summary, nextDue: nextDue, now: now)
        case 1:
            trigger = try parse(key: given[0].0, value: given[0].1!, zone: item.zone, now: now)
        default:
            throw ChimeError(.usage, "both \(given.map { "\"\($0.0)\"" }.joined(separator: " and ")): give only one of them")
        }
        if let id = item.id { try ReminderIdentifier.validate(id) }
        var presentation = Presentation(
            sticky: item.sticky ?? false,
            icon: item.icon,
            sound: item.sound,
            actions: item.actions?.map(\.action) ?? []
        )
        if let urgency = item.urgency {
            guard let level = Note.Urgency(rawValue: urgency) else {
                throw ChimeError.invalid("urgency", urgency, expected: "low, normal or critical")
            }
            presentation.urgency = level == .normal ? nil : level
        }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        let new = NewReminder(
            id: item.id,
            title: title,
            body: item.body ?? "",
            trigger: trigger,
            presentation: presentation,
            command: try item.command?.command(path: path),
            appID: item.appID
        )
        // The app id and the actions are checked as the D-Bus Schedule checks them
        // (ApplicationID.validate, Presentation.checkActions).
        return (try new.validated(), listedDue)
    }

    private static func parse(key: String, value: String, zone: String?, now: Date) throws(ChimeError) -> Trigger {
        let rule = try zone.map { name throws(ChimeError) in try ZoneRule.parse(name) } ?? .floating
        switch key {
        case "in":
            return .once(now.addingTimeInterval(TimeInterval(try TimeParsing.duration(value))))
        case "at":
            // A date-time that has passed is the import's to tell (``passed(_:index:now:past:)``).
            return .once(try TimeParsing.instant(value, now: now, zone: rule.resolve(system: .current), allowPast: true))
        default:
            return try TimeParsing.recurrence([value], now: now, zone: rule)
        }
    }

    /// A reminder as `chime list --json` prints it: "once" at its next due time, or its rule
    /// ("every weekday 08:00 (Europe/Berlin)", "every 2h") keeping the phase of its next due time;
    /// and that next due time, which may have passed since the listing was made.
    private static func listed(summary: String, nextDue: String, now: Date) throws(ChimeError) -> (Trigger, Date) {
        let due = try TimeParsing.instant(nextDue, now: now, zone: TimeZone(identifier: "UTC")!, allowPast: true)
        if summary == "once" { return (.once(due), due) }
        guard summary.hasPrefix("every ") else {
            throw ChimeError.invalid("trigger", summary, expected: "\"once\" or \"every …\" as 'chime list --json' prints it")
        }
        var rule = String(summary.dropFirst("every ".count))
        var zone = ZoneRule.floating
        if rule.hasSuffix(")"), let open = rule.lastIndex(of: "(") {
            zone = try ZoneRule.parse(String(rule[rule.index(after: open)..<rule.index(before: rule.endIndex)]))
            rule = String(rule[..<open]).trimmingCharacters(in: .whitespaces)
        }
        let trigger = try TimeParsing.recurrence([rule], now: now, zone: zone)
        if case .interval(let seconds, _) = trigger {
            // The listed next due time is an occurrence: the phase is kept (the next after now
            // is that time, or one a whole number of intervals after it).
            return (.interval(seconds: seconds, anchor: due.addingTimeInterval(-TimeInterval(seconds))), due)
        }
        return (trigger, due)
    }

    /// "reminder 3: \"title\": " for a coding path, or "" at the top.
    static func describe(_ codingPath: [any CodingKey]) -> String {
        var position = ""
        for key in codingPath {
            if let index = key.intValue {
                // A reminder's place in the file, or an item's in one of its arrays ("actions").
                position += position.isEmpty ? "reminder \(index + 1)" : " item \(index + 1)"
            } else if key.stringValue != "reminders" {
                position += (position.isEmpty ? "" : ": ") + "\"\(key.stringValue)\""
            }
        }
        return position.isEmpty ? "" : position + ": "
    }

    /// A decoding error in JSON's terms: "expected an object", never a Swift type.
    static func describe(_ error: DecodingError, data: Data) -> String {
        func jsonType(_ type: Any.Type) -> String {
            switch type {
            case is String.Type: "a string"
            case is [Any].Type, is [Item].Type: "an array"
            case is [String: Any].Type, is Item.Type, is Wrapped.Type: "an object"
            case is Bool.Type: "true or false"
            case is Int.Type, is Double.Type: "a number"
            default: "a value of another type"
            }
        }
        switch error {
        case .typeMismatch(let type, let context):
            return "\(describe(context.codingPath))expected \(jsonType(type))"
        case .valueNotFound(let type, let context):
            return "\(describe(context.codingPath))is null: expected \(jsonType(type))"
        case .keyNotFound(let key, let context):
            return "\(describe(context.codingPath))missing \"\(key.stringValue)\""
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty {
                let position = JSONSyntax.errorPosition(in: data).map { " \($0)" } ?? ""
                return "not valid JSON\(position): expected an array of reminders"
            }
            return "\(describe(context.codingPath))not valid"
        @unknown default:
            return "not valid JSON: expected an array of reminders"
        }
    }
}

/// Where JSON text stops being JSON (RFC 8259), for error messages: Foundation's decoder on
/// Linux says only "not valid JSON".
enum JSONSyntax {
    /// "at line 2, column 8 (byte 23): unexpected 'x'" or "at line 1, column 27 (byte 26): the
    /// text ends before the JSON does"; nil when `data` is valid JSON.
    /// - Parameter start: where `data` starts in a longer text (an element of an array).
    static func errorPosition(in data: Data, start: JSONArraySplitter.Position = .init()) -> String? {
        let bytes = [UInt8](data)
        var scanner = Scanner(bytes: bytes)
        let failure: Int
        do throws(Failure) {
            scanner.skipSpace()
            try scanner.value(depth: 0)
            scanner.skipSpace()
            guard scanner.index == bytes.count else { throw scanner.fail() }
            return nil
        } catch {
            failure = error.offset
        }
        return describe(position(of: failure, in: bytes, start: start), found: failure < bytes.count ? bytes[failure] : nil)
    }

    /// Where the byte at `offset` of `bytes` is, when `bytes` start at `start` in a longer text.
    static func position(of offset: Int, in bytes: [UInt8], start: JSONArraySplitter.Position) -> JSONArraySplitter.Position {
        var line = start.line
        var lineStart = 0
        for index in 0..<min(offset, bytes.count) where bytes[index] == 0x0A {
            line += 1
            lineStart = index + 1
        }
        // Columns count characters, not bytes.
        var column = String(decoding: bytes[lineStart..<min(offset, bytes.count)], as: UTF8.self).count + 1
        if line == start.line { column += start.column - 1 }
        return JSONArraySplitter.Position(line: line, column: column, offset: start.offset + offset)
    }

    /// The first key given twice in one object of `data` (valid JSON or not: the scan stops
    /// where it goes wrong), and where its second one is; nil when there is none.
    static func repeatedKey(in data: Data, start: JSONArraySplitter.Position = .init()) -> (key: String, place: String)? {
        let bytes = [UInt8](data)
        var scanner = Scanner(bytes: bytes, findRepeatedKeys: true)
        scanner.skipSpace()
        try? scanner.value(depth: 0)
        guard let repeated = scanner.repeated else { return nil }
        return (repeated.key, describe(position(of: repeated.offset, in: bytes, start: start)))
    }

    /// "at line 2, column 8 (byte 23)".
    static func describe(_ position: JSONArraySplitter.Position) -> String {
        "at line \(position.line), column \(position.column) (byte \(position.offset))"
    }

    /// "at line 2, column 8 (byte 23): unexpected 'x'"; `found` nil: the text ended there.
    static func describe(_ position: JSONArraySplitter.Position, found: UInt8?) -> String {
        let place = describe(position)
        guard let byte = found else { return place + ": the text ends before the JSON does" }
        let shown = (0x21..<0x7F).contains(byte) ? "'\(Character(Unicode.Scalar(byte)))'" : String(format: "byte 0x%02X", byte)
        return place + ": unexpected \(shown)"
    }

    struct Failure: Error { var offset: Int }

    /// A recursive-descent reader that only finds where the text goes wrong (and, when asked,
    /// the first key given twice in an object).
    struct Scanner {
        let bytes: [UInt8]
        var index = 0
        let findRepeatedKeys: Bool
        /// The first key given twice, and the offset of its second opening quote.
        var repeated: (key: String, offset: Int)?

        init(bytes: [UInt8], findRepeatedKeys: Bool = false) {
            self.bytes = bytes
            self.findRepeatedKeys = findRepeatedKeys
        }

        /// The text of the key whose quotes are at `start` and `end - 1`, escapes read.
        func keyText(_ start: Int, _ end: Int) -> String {
            let raw = bytes[start..<end]
            guard raw.contains(UInt8(ascii: "\\")) else { return String(decoding: raw.dropFirst().dropLast(), as: UTF8.self) }
            return (try? JSONDecoder().decode(String.self, from: Data(raw))) ?? String(decoding: raw, as: UTF8.self)
        }

        func fail() -> Failure { Failure(offset: index) }

        var current: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func skipSpace() {
            while let byte = current, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { index += 1 }
        }

        mutating func expect(_ byte: UInt8) throws(Failure) {
            guard current == byte else { throw fail() }
            index += 1
        }

        mutating func value(depth: Int) throws(Failure) {
            guard depth < 512 else { throw fail() }
            switch current {
            case UInt8(ascii: "{"):
                index += 1
                skipSpace()
                if current == UInt8(ascii: "}") {
                    index += 1
                    return
                }
                var keys: Set<String> = []
                while true {
                    skipSpace()
                    let keyStart = index
                    try string()
                    if findRepeatedKeys, repeated == nil, !keys.insert(keyText(keyStart, index)).inserted {
                        repeated = (keyText(keyStart, index), keyStart)
                        throw fail()
                    }
                    skipSpace()
                    try expect(UInt8(ascii: ":"))
                    skipSpace()
                    try value(depth: depth + 1)
                    skipSpace()
                    if current == UInt8(ascii: ",") {
                        index += 1
                        continue
                    }
                    try expect(UInt8(ascii: "}"))
                    return
                }
            case UInt8(ascii: "["):
                index += 1
                skipSpace()
                if current == UInt8(ascii: "]") {
                    index += 1
                    return
                }
                while true {
                    skipSpace()
                    try value(depth: depth + 1)
                    skipSpace()
                    if current == UInt8(ascii: ",") {
                        index += 1
                        continue
                    }
                    try expect(UInt8(ascii: "]"))
                    return
                }
            case UInt8(ascii: "\""):
                try string()
            case UInt8(ascii: "t"): try literal("true")
            case UInt8(ascii: "f"): try literal("false")
            case UInt8(ascii: "n"): try literal("null")
            default: try number()
            }
        }

        mutating func literal(_ word: String) throws(Failure) {
            for byte in word.utf8 { try expect(byte) }
        }

        mutating func string() throws(Failure) {
            try expect(UInt8(ascii: "\""))
            while let byte = current {
                switch byte {
                case UInt8(ascii: "\""):
                    index += 1
                    return
                case UInt8(ascii: "\\"):
                    index += 1
                    guard let escaped = current else { throw fail() }
                    if escaped == UInt8(ascii: "u") {
                        index += 1
                        for _ in 0..<4 {
                            guard let hex = current,
                                (0x30...0x39).contains(hex) || (0x41...0x46).contains(hex) || (0x61...0x66).contains(hex)
                            else { throw fail() }
                            index += 1
                        }
                    } else {
                        guard "\"\\/bfnrt".utf8.contains(escaped) else { throw fail() }
                        index += 1
                    }
                case 0..<0x20:
                    throw fail()
                default:
                    index += 1
                }
            }
            throw fail()
        }

        mutating func number() throws(Failure) {
            func digits() throws(Failure) {
                guard let byte = current, (0x30...0x39).contains(byte) else { throw fail() }
                while let byte = current, (0x30...0x39).contains(byte) { index += 1 }
            }
            if current == UInt8(ascii: "-") { index += 1 }
            if current == UInt8(ascii: "0") { index += 1 } else { try digits() }
            if current == UInt8(ascii: ".") {
                index += 1
                try digits()
            }
            if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
                index += 1
                if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
                try digits()
            }
        }
    }
}

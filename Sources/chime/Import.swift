import ArgumentParser
import ChimeCore
import ChimeStore
import Foundation

struct Import: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Schedule many reminders from a JSON file, all of them or none.",
        discussion: """
            The file holds an array of reminders, or an object whose "reminders" is one (so the \
            output of 'chime list --json' imports as it is). Each reminder has a "title", optionally \
            an "id" and a "body", and one of:
              "at":    "14:30", "2026-12-24 18:00" or ISO 8601 ("2026-12-24T17:00:00Z")
              "in":    a duration such as "25m"
              "every": a rule such as "weekday 08:00" or "2h"
            and optionally "zone" (an IANA zone for "at" and "every" times of day). A reminder from \
            'chime list --json' ("trigger" and "next_due") keeps its rule and its next due time.
            Nothing is scheduled when one reminder is bad: the error names it (exit 64).
            Example:
              [{"id": "tea", "title": "Tea", "in": "25m"},
               {"title": "Stand-up", "every": "weekday 09:30", "zone": "Europe/Berlin"}]
            """
    )

    @Argument(help: ArgumentHelp("The JSON file, or - for standard input.", valueName: "file"))
    var file: String = "-"
    @Flag(name: .customLong("no-replace"), help: "Fail (exit 4) instead of replacing pending reminders with the same ids.")
    var noReplace = false
    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let data = try read()
        let now = Date()
        let batch = try Self.reminders(from: data, source: file == "-" ? "standard input" : file, now: now)
        // Only a file that parsed whole reaches the store.
        let store = try global.openStore(.create)
        let results = try store.scheduleBatch(batch, replace: !noReplace, now: now, systemZone: .current)
        let running = pokeRunner(store, json: global.json)
        let replaced = results.filter(\.replaced).count
        if global.json {
            struct Imported: Encodable {
                var imported: Int
                var replaced: Int
                var ids: [String]
                var runner: Bool
            }
            Output.json(Imported(imported: results.count, replaced: replaced, ids: results.map(\.reminder.id), runner: running))
        } else {
            let replacedText = replaced > 0 ? " (\(replaced) replaced pending reminders with the same id)" : ""
            Output.line("Imported \(results.count) reminder\(results.count == 1 ? "" : "s")\(replacedText).")
        }
    }

    private func read() throws(ChimeError) -> Data {
        if file == "-" { return FileHandle.standardInput.readDataToEndOfFile() }
        guard let data = FileManager.default.contents(atPath: file) else {
            let reason = FileManager.default.fileExists(atPath: file) ? "cannot be read" : "does not exist"
            throw ChimeError(.usage, "import file '\(file)' \(reason): name a JSON file, or - for standard input")
        }
        return data
    }

    /// One reminder of the file. Keys Chime does not know are ignored (so `list --json` output
    /// imports, with its "recurring", "created" and such).
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

        enum CodingKeys: String, CodingKey {
            case id, title, body, at, `in`, every, zone, trigger
            case nextDue = "next_due"
        }
    }

    private struct Wrapped: Decodable {
        var reminders: [Item]
    }

    /// Parses the whole file into reminders, or throws one usage error naming the first bad
    /// reminder (by position and id) and value.
    static func reminders(from data: Data, source: String, now: Date) throws(ChimeError) -> [NewReminder] {
        let items: [Item]
        do {
            let trimmed = data.first { !($0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09) }
            items =
                try trimmed == UInt8(ascii: "{")
                ? JSONDecoder().decode(Wrapped.self, from: data).reminders : JSONDecoder().decode([Item].self, from: data)
        } catch let error as DecodingError {
            throw ChimeError(.usage, "\(source): \(describe(error))")
        } catch {
            throw ChimeError(.usage, "\(source) is not valid JSON: expected an array of reminders")
        }
        var seen: [String: Int] = [:]
        var batch: [NewReminder] = []
        batch.reserveCapacity(items.count)
        for (index, item) in items.enumerated() {
            let name = "reminder \(index + 1)" + (item.id.map { " ('\($0)')" } ?? "")
            do throws(ChimeError) {
                let new = try reminder(item, now: now)
                if let id = new.id {
                    if let first = seen[id] {
                        throw ChimeError(.usage, "the id '\(id)' is also reminder \(first + 1)'s: give each reminder its own id")
                    }
                    seen[id] = index
                }
                batch.append(new)
            } catch {
                throw ChimeError(error.code, "\(source): \(name): \(error.message)")
            }
        }
        return batch
    }

    static func reminder(_ item: Item, now: Date) throws(ChimeError) -> NewReminder {
        guard let title = item.title else { throw ChimeError(.usage, "missing \"title\": every reminder needs one") }
        let given = [("at", item.at), ("in", item.in), ("every", item.every)].filter { $0.1 != nil }
        let trigger: Trigger
        switch given.count {
        case 0:
            guard let summary = item.trigger, let nextDue = item.nextDue else {
                throw ChimeError(.usage, "no time: expected one of \"at\", \"in\" or \"every\"")
            }
            trigger = try listed(summary: summary, nextDue: nextDue, now: now)
        case 1:
            trigger = try parse(key: given[0].0, value: given[0].1!, zone: item.zone, now: now)
        default:
            throw ChimeError(.usage, "both \(given.map { "\"\($0.0)\"" }.joined(separator: " and ")): give only one of them")
        }
        if let id = item.id { try ReminderIdentifier.validate(id) }
        return try NewReminder(id: item.id, title: title, body: item.body ?? "", trigger: trigger).validated()
    }

    private static func parse(key: String, value: String, zone: String?, now: Date) throws(ChimeError) -> Trigger {
        let rule = try zone.map { name throws(ChimeError) in try ZoneRule.parse(name) } ?? .floating
        switch key {
        case "in":
            return .once(now.addingTimeInterval(TimeInterval(try TimeParsing.duration(value))))
        case "at":
            return .once(try TimeParsing.instant(value, now: now, zone: rule.resolve(system: .current)))
        default:
            return try TimeParsing.recurrence([value], now: now, zone: rule)
        }
    }

    /// A reminder as `chime list --json` prints it: "once" at its next due time, or its rule
    /// ("every weekday 08:00 (Europe/Berlin)", "every 2h") keeping the phase of its next due time.
    private static func listed(summary: String, nextDue: String, now: Date) throws(ChimeError) -> Trigger {
        let due = try TimeParsing.instant(nextDue, now: now, zone: TimeZone(identifier: "UTC")!)
        if summary == "once" { return .once(due) }
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
            // The next occurrence after now is the listed next due time.
            return .interval(seconds: seconds, anchor: due.addingTimeInterval(-TimeInterval(seconds)))
        }
        return trigger
    }

    private static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            var position = ""
            for key in context.codingPath {
                if let index = key.intValue {
                    position += "reminder \(index + 1)"
                } else if key.stringValue != "reminders" {
                    position += (position.isEmpty ? "" : ": ") + "\"\(key.stringValue)\""
                }
            }
            return position.isEmpty ? "" : position + ": "
        }
        switch error {
        case .typeMismatch(let type, let context):
            let expected = type == String.self ? "a string" : type is [Any].Type ? "an array" : "\(type)"
            return "\(path(context))expected \(expected)"
        case .valueNotFound(_, let context):
            return "\(path(context))is null: expected a value"
        case .keyNotFound(let key, let context):
            return "\(path(context))missing \"\(key.stringValue)\""
        case .dataCorrupted(let context):
            return context.codingPath.isEmpty ? "not valid JSON: expected an array of reminders" : "\(path(context))not valid"
        @unknown default:
            return "not valid JSON: expected an array of reminders"
        }
    }
}

import ArgumentParser
import ChimeCore
import ChimeLibnotify
import ChimeRunner
import ChimeStore
import Foundation

struct In: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "in",
        abstract: "Remind once, after a duration.",
        discussion: "Examples:\n  chime in 25m \"Tea is ready\"\n  chime in 1h30m \"Stretch\" \"Stand up and walk\" --id stretch"
    )

    // One array rather than three arguments so that a mistyped "-5m" reaches the duration
    // parser (and its message) instead of being taken for an unknown option.
    @Argument(
        parsing: .allUnrecognized,
        help: ArgumentHelp(
            "How long from now (90s, 25m, 1h30m, 2d; units s, m, h, d, w), the title, and an optional body.",
            valueName: "duration title [body]"
        )
    )
    var words: [String] = []
    @OptionGroup var schedule: ScheduleOptions
    @OptionGroup var global: GlobalOptions

    func run() async throws {
        guard let duration = words.first else {
            throw ChimeError(.usage, "missing duration: expected one such as 25m, then a title: chime in 25m \"Tea is ready\"")
        }
        let seconds = try TimeParsing.duration(duration)
        guard words.count >= 2 else {
            throw ChimeError(.usage, "missing title after 'in \(duration)': expected a title such as \"Tea is ready\"")
        }
        guard words.count <= 3 else {
            throw ChimeError(
                .usage,
                "too many words: '\(words.joined(separator: " "))': expected DURATION TITLE [BODY]; quote a title with spaces"
            )
        }
        let title = words[1]
        let body: String? = words.count > 2 ? words[2] : nil
        let now = Date()
        let trigger = Trigger.once(now.addingTimeInterval(TimeInterval(seconds)))
        try schedule.schedule(title: title, body: body ?? "", trigger: trigger, now: now, global: global)
    }
}

struct At: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "at",
        abstract: "Remind once, at a time of day or a date and time.",
        discussion: """
            HH:MM is today, or tomorrow when it has passed. A local time that does not exist (a DST gap) \
            fires once, shifted by the gap; one that occurs twice fires at its first occurrence.
            Examples:
              chime at 14:30 "Stand-up" --id standup
              chime at "2026-12-24 18:00" "Presents"
              chime at 2026-12-24T17:00Z "Presents (UTC)"
            """
    )

    @Argument(help: ArgumentHelp("HH:MM, 'YYYY-MM-DD HH:MM', or ISO 8601 with Z or an offset.", valueName: "time"))
    var time: String
    @Argument(help: "The alert's title.") var title: String
    @Argument(help: "The alert's body.") var body: String?
    @Option(help: ArgumentHelp("Read the time in this IANA zone instead of the system's.", valueName: "zone"))
    var zone: String?
    @OptionGroup var schedule: ScheduleOptions
    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let now = Date()
        let timeZone = try zone.map { name throws(ChimeError) in try ZoneRule.parse(name).resolve(system: .current) } ?? .current
        let instant = try TimeParsing.instant(time, now: now, zone: timeZone)
        try schedule.schedule(title: title, body: body ?? "", trigger: .once(instant), now: now, global: global)
    }
}

struct Every: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "every",
        abstract: "Remind again and again: on chosen days at times of day, or every interval.",
        discussion: """
            RULE is DAYS TIMES or an INTERVAL:
              DAYS   day | weekday | weekend | mon,wed,fri | mon-fri
              TIMES  08:00 or 08:00,12:30,20:00
              INTERVAL  30m, 2h, 1h30m (from now on)
            Times of day follow the system's zone (08:00 stays 08:00 after travel) unless --zone names one.
            Examples:
              chime every weekday 08:00 "Stretch" --id stretch
              chime every mon,wed,fri 18:30 "Gym"
              chime every 2h "Drink water"
            """
    )

    @Argument(help: ArgumentHelp("The rule, then the title and an optional body.", valueName: "rule-and-title"))
    var words: [String]
    @Option(help: ArgumentHelp("Keep times of day in this IANA zone (absolute time), not the system's.", valueName: "zone"))
    var zone: String?
    @OptionGroup var schedule: ScheduleOptions
    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let now = Date()
        let zoneRule = try zone.map { name throws(ChimeError) in try ZoneRule.parse(name) } ?? .floating
        guard let first = words.first else {
            throw ChimeError(.usage, "missing rule: expected DAYS TIMES (weekday 08:00) or an interval (2h), then a title")
        }
        // The rule is the longest run of leading words that parses ("weekday 08:00",
        // "mon-fri at 08:00", "1h 30m"), leaving at least the title.
        var parsed: (length: Int, trigger: Trigger)?
        for length in stride(from: min(words.count - 1, 4), through: 1, by: -1) {
            if let trigger = try? TimeParsing.recurrence(Array(words[0..<length]), now: now, zone: zoneRule) {
                parsed = (length, trigger)
                break
            }
        }
        guard let (ruleLength, trigger) = parsed else {
            // Nothing parses with a title left: either the title is missing, or report the most
            // likely reading of the rule (an interval, else DAYS TIMES).
            if (try? TimeParsing.recurrence(words, now: now, zone: zoneRule)) == nil {
                let guess = (try? TimeParsing.duration(first)) != nil ? 1 : 2
                _ = try TimeParsing.recurrence(Array(words[0..<min(guess, words.count)]), now: now, zone: zoneRule)
            }
            throw ChimeError(.usage, "missing title after 'every \(words.joined(separator: " "))': expected a title such as \"Stretch\"")
        }
        guard words.count <= ruleLength + 2 else {
            throw ChimeError(
                .usage,
                "too many words after 'every': '\(words.joined(separator: " "))': expected RULE TITLE [BODY]; quote a title with spaces"
            )
        }
        let title = words[ruleLength]
        let body = words.count > ruleLength + 1 ? words[ruleLength + 1] : ""
        try schedule.schedule(title: title, body: body, trigger: trigger, now: now, global: global)
    }
}

struct Next: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Preview a reminder's next occurrences, in local time with the zone offset."
    )

    @Argument(help: "The reminder's identifier.") var id: String
    @Option(help: "How many occurrences (1 to 1000).") var count = 5
    @OptionGroup var global: GlobalOptions

    func validate() throws {
        guard (1...1000).contains(count) else {
            throw ValidationError(ChimeError.invalid("count", String(count), expected: "a number from 1 to 1000").message)
        }
    }

    func run() async throws {
        try ReminderIdentifier.validate(id)
        let store = try global.openStore(.read)
        let reminder = try store.reminder(id: id)
        let systemZone = TimeZone.current
        let zone = reminder.trigger.displayZone(system: systemZone)
        // Start just before the stored next due time, so the preview begins with it.
        let start = (reminder.nextDue ?? Date()).addingTimeInterval(-0.000_001)
        let occurrences = reminder.trigger.occurrences(after: start, count: count, systemZone: systemZone)
        if global.json {
            struct Item: Encodable {
                var due: String
                var local: String
                var note: String?
            }
            struct Preview: Encodable {
                var id: String
                var trigger: String
                var occurrences: [Item]
            }
            Output.json(
                Preview(
                    id: reminder.id,
                    trigger: reminder.trigger.summary,
                    occurrences: occurrences.map {
                        Item(due: TimeText.iso($0.instant), local: TimeText.local($0.instant, in: zone), note: Self.note($0.resolution))
                    }
                )
            )
            return
        }
        Output.line("\(reminder.id): \(reminder.trigger.summary)  \(oneLine(reminder.title))")
        for occurrence in occurrences {
            var line = "  " + TimeText.local(occurrence.instant, in: zone)
            if let note = Self.note(occurrence.resolution) { line += "  (\(note))" }
            Output.line(line)
        }
    }

    static func note(_ resolution: LocalResolution) -> String? {
        switch resolution {
        case .exact: nil
        case let .shiftedForward(seconds, requested):
            "\(requested) does not exist that day (clocks go forward): shifted by \(formatDuration(.seconds(seconds)))"
        case .firstOfRepeated: "this time occurs twice that day (clocks go back): fires at the first"
        }
    }
}

struct List: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List pending reminders, the next due first.")

    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let store = try global.openStore(.read)
        let reminders = try store.pending()
        let zone = TimeZone.current
        let running = RunnerControl.isRunning(storePath: store.path)
        if global.json {
            struct Listing: Encodable {
                var reminders: [ReminderJSON]
                var runner: Bool
            }
            Output.json(Listing(reminders: reminders.map { ReminderJSON($0, zone: zone) }, runner: running))
            return
        }
        if !store.isFile && !FileManager.default.fileExists(atPath: store.path) {
            // (A typo in --store reads as no store at all: say where none was found.)
            Output.note("No store at '\(store.path)' yet: the first reminder you schedule creates it.")
        }
        if reminders.isEmpty {
            Output.line("No pending reminders. Schedule one: chime in 25m \"Tea is ready\"")
        } else {
            let idWidth = max(2, reminders.map(\.id.count).max() ?? 2)
            let rows = reminders.map { reminder -> (String, String, String, String) in
                let next = reminder.nextDue.map { TimeText.local($0, in: reminder.trigger.displayZone(system: zone)) } ?? "-"
                return (reminder.id, next, reminder.trigger.summary, oneLine(reminder.title))
            }
            let ruleWidth = max(7, rows.map(\.2.count).max() ?? 7)
            func pad(_ text: String, _ width: Int) -> String { text + String(repeating: " ", count: max(0, width - text.count)) }
            Output.line("\(pad("ID", idWidth))  \(pad("NEXT", 26))  \(pad("TRIGGER", ruleWidth))  TITLE")
            for row in rows {
                Output.line("\(pad(row.0, idWidth))  \(pad(row.1, 26))  \(pad(row.2, ruleWidth))  \(row.3)")
            }
        }
        if !running { Output.note("No runner is running for this store: start one with 'chime run'.") }
    }
}

struct Cancel: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Cancel pending reminders by identifier.",
        discussion: "All of them or none: when one id is not pending, nothing is cancelled (exit 3)."
    )

    @Argument(help: "The identifiers.") var ids: [String]
    @OptionGroup var global: GlobalOptions

    func validate() throws {
        guard !ids.isEmpty else { throw ValidationError("missing identifier: expected one or more ids, see 'chime list'") }
        for id in ids { try asValidation { () throws(ChimeError) in try ReminderIdentifier.validate(id) } }
    }

    func run() async throws {
        let store = try global.openStore(.update)
        let cancelled = try store.cancel(ids: ids, now: Date())
        let running = pokeRunner(store, json: global.json)
        // Close what the runner showed on the desktop for them (bounded; nothing when no server).
        let shown = Array(Set(cancelled.flatMap { (try? store.shownDesktopIDs(id: $0.id)) ?? [] }))
        if !shown.isEmpty, case .success(let desktop) = await LibnotifyNotifier.connect() {
            await desktop.close(serverIDs: shown)
        }
        if global.json {
            struct Cancelled: Encodable {
                var cancelled: [String]
                var runner: Bool
            }
            Output.json(Cancelled(cancelled: cancelled.map(\.id), runner: running))
        } else {
            for reminder in cancelled { Output.line("Cancelled \(reminder.id)  \(oneLine(reminder.title))") }
        }
    }
}

struct Notify: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show an alert now, like notify-send, through Chime's notifier."
    )

    @Argument(help: "The alert's title.") var title: String
    @Argument(help: "The alert's body.") var body: String?
    @Option(help: "low, normal or critical.") var urgency: Note.Urgency = .normal
    @Flag(help: "Keep the alert up until it is answered.") var sticky = false
    @Option(help: ArgumentHelp("An icon name from the icon theme, or an absolute path.", valueName: "icon")) var icon: String?
    @Option(help: ArgumentHelp("The alert's category (default x-chime.reminder).", valueName: "category")) var category: String?
    @Option(
        help: ArgumentHelp(
            "Where the alert goes: auto (the desktop when a notification server runs, else the console), desktop, console or json.",
            valueName: "notifier"
        )
    )
    var notifier: NotifierChoice = .auto
    @Flag(name: .long, help: "Print the alert as one JSON document.") var json = false

    func run() async throws {
        let checked = title.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !checked.isEmpty else { throw ChimeError.invalid("title", title, expected: "a non-empty title") }
        let sink = try await notifier.make(json: json)
        var note = Note(id: "notify", title: checked, body: body ?? "", urgency: urgency, postedAt: Date())
        note.sticky = sticky
        note.icon = icon
        note.category = category
        let posted = try await sink.post(note)
        // The console's JSON line is this command's document; the desktop prints its own.
        if json && !(sink is ConsoleNotifier) {
            struct Shown: Encodable {
                var notifier = "desktop"
                var id: String
                var serverID: UInt32?
                var title: String
                var body: String
                var posted: String
                enum CodingKeys: String, CodingKey {
                    case notifier, id, title, body, posted
                    case serverID = "server_id"
                }
            }
            Output.json(
                Shown(id: posted.id, serverID: posted.serverID, title: note.title, body: note.body, posted: TimeText.iso(note.postedAt))
            )
        }
    }
}

extension Note.Urgency: ExpressibleByArgument {}

/// `--notifier`: where alerts go.
enum NotifierChoice: String, ExpressibleByArgument, CaseIterable {
    case auto, desktop, console, json

    /// The notifier. `auto` is the desktop when a notification server owns
    /// org.freedesktop.Notifications on the session bus (asked with a 1 s timeout), else the
    /// console; it says which on standard error.
    func make(json: Bool) async throws -> any Notifier {
        let console = ConsoleNotifier(format: json || self == .json ? .json : .human)
        switch self {
        case .json, .console:
            return console
        case .desktop:
            switch await LibnotifyNotifier.connect() {
            case .success(let desktop): return EchoOnFailureNotifier(primary: desktop, echo: console)
            case .failure(let status): throw ChimeError(.delivery, status.problem ?? "the desktop is not available")
            }
        case .auto:
            switch await LibnotifyNotifier.connect() {
            case .success(let desktop):
                let server = [desktop.status.serverName, desktop.status.serverVersion].compactMap { $0 }.joined(separator: " ")
                Output.note("Alerts go to the desktop (\(server.isEmpty ? "notification server" : server)).")
                return EchoOnFailureNotifier(primary: desktop, echo: console)
            case .failure(let status):
                Output.note("\(status.problem ?? "No desktop.") Alerts go to the console.")
                return console
            }
        }
    }
}

import ArgumentParser
import ChimeApp
import ChimeConfig
import ChimeCore
import ChimeFocus
import ChimeLibnotify
import ChimeRunner
import ChimeStore
import ChimeWebhook
import Foundation

#if canImport(Glibc)
import Glibc
#endif

struct In: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "in",
        abstract: "Remind once, after a duration.",
        discussion: """
            Examples:
              chime in 25m "Tea is ready"
              chime in 1h30m "Stretch" "Stand up and walk" --id stretch
              chime in 10m "Save notes" --exec cp notes.txt notes.bak
              chime in 5m -- "-h"      (a title that starts with '-', after --)
            More: man chime (chime in, TIME FORMATS)
            """
    )

    // One array rather than three arguments so that a mistyped "-5m" reaches the duration
    // parser (and its message) instead of being taken for an unknown option, and a title that
    // looks like an option is refused unless it comes after -- (CommandWords).
    @Argument(
        parsing: .allUnrecognized,
        help: ArgumentHelp(
            "How long from now (25m, 1h30m, 10min), the title, an optional body; "
                + "a title that starts with '-' goes after --.",
            valueName: "duration title [body]"
        )
    )
    var given: [String] = []
    @OptionGroup var schedule: ScheduleOptions
    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let words = try CommandWords.literal(given, parsedFirst: 1, path: ["in"])
        guard let duration = words.first else {
            throw ChimeError(.usage, "missing duration: expected one such as 25m, then a title: chime in 25m \"Tea is ready\"")
        }
        // "5 minutes" is refused with '5m' rather than read with "minutes" as the title.
        let seconds = try TimeParsing.leadingDuration(words)
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
        try await schedule.schedule(
            title: title,
            body: body ?? "",
            trigger: trigger,
            now: now,
            global: global,
            after: TimeInterval(seconds)
        )
    }
}

struct At: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "at",
        abstract: "Remind once, at a time of day or a date and time.",
        discussion: """
            A time of day is today, or tomorrow when it has passed; a day alone
            (tomorrow, mon, 2030-12-24) means 09:00, and Chime says so.
            Examples:
              chime at 14:30 "Stand-up" --id standup
              chime at tomorrow 09:00 "Call the bank"
              chime at 2030-12-24T17:00Z "Presents (UTC)"
            More: man chime (chime at, TIME FORMATS, DAYLIGHT SAVING TIME)
            """
    )

    @Argument(
        parsing: .allUnrecognized,
        help: ArgumentHelp(
            "The time (14:30, 9am, tomorrow 09:00, mon 9am, 2030-12-24 18:00, ISO 8601), "
                + "the title, an optional body; a title that starts with '-' goes after --.",
            valueName: "time title [body]"
        )
    )
    var given: [String] = []
    @Option(
        help: ArgumentHelp("Read the time in this IANA zone, not the system's.", valueName: "zone"),
        completion: Completion.zones
    )
    var zone: String?
    @OptionGroup var schedule: ScheduleOptions
    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let literal = try CommandWords.literal(given, parsedFirst: 1, path: ["at"])
        guard !literal.isEmpty else {
            throw ChimeError(.usage, "missing time: expected one such as 14:30, then a title: chime at 14:30 \"Stand-up\"")
        }
        // "tomorrow 09:00" may come as two words.
        let timeWords = TimeParsing.spokenWordCount(literal)
        let time = literal[0..<timeWords].joined(separator: " ")
        let words = [time] + literal.dropFirst(timeWords)
        guard words.count >= 2 else {
            throw ChimeError(.usage, "missing title after 'at \(time)': expected a title such as \"Stand-up\"")
        }
        guard words.count <= 3 else {
            throw ChimeError(
                .usage,
                "too many words: '\(words.joined(separator: " "))': expected TIME TITLE [BODY]; quote a title with spaces"
            )
        }
        let (title, body) = (words[1], words.count > 2 ? words[2] : nil)
        let now = Date()
        let timeZone = try zone.map { name throws(ChimeError) in try ZoneRule.parse(name).resolve(system: .current) } ?? .current
        let spoken = try TimeParsing.spoken(time, now: now, zone: timeZone)
        if !global.json { spoken.explain(time, zone: timeZone) }
        try await schedule.schedule(title: title, body: body ?? "", trigger: .once(spoken.instant), now: now, global: global)
    }
}

struct Every: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "every",
        abstract: "Remind again and again (weekdays, monthly, every 2h…).",
        discussion: """
            RULE: DAYS TIMES (weekday 08:00), month on DAY TIMES, year on MM-DD TIMES,
            or an interval (2h); then optionally until YYYY-MM-DD. Preview: chime next ID.
            Examples:
              chime every weekday 08:00 "Stretch" --id stretch
              chime every month on 1 09:00 "Pay the rent" --id rent
              chime every 2h "Drink water"
            More: man chime (chime every, TIME FORMATS)
            """
    )

    @Argument(
        parsing: .allUnrecognized,
        help: ArgumentHelp(
            "The rule, then the title and an optional body. A title that starts with '-' goes after --.",
            valueName: "rule-and-title"
        )
    )
    var given: [String] = []
    @Option(
        help: ArgumentHelp("Keep times of day in this IANA zone, not the system's.", valueName: "zone"),
        completion: Completion.zones
    )
    var zone: String?
    @Option(help: ArgumentHelp("Stop after this many occurrences (1 to 1000).", valueName: "n"))
    var count: Int?
    @OptionGroup var schedule: ScheduleOptions
    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let words = try CommandWords.literal(given, parsedFirst: 0, path: ["every"])
        let now = Date()
        let zoneRule = try zone.map { name throws(ChimeError) in try ZoneRule.parse(name) } ?? .floating
        guard !words.isEmpty else {
            throw ChimeError(.usage, "missing rule: expected DAYS TIMES (weekday 08:00) or an interval (2h), then a title")
        }
        // The rule is the longest run of leading words that parses ("weekday 08:00",
        // "mon-fri at 08:00", "1h 30m", "month on 1 09:00 until 2027-01-31"), leaving at least the title.
        var parsed: (length: Int, trigger: Trigger)?
        for length in stride(from: min(words.count - 1, 7), through: 1, by: -1) {
            if let trigger = try? TimeParsing.recurrence(Array(words[0..<length]), now: now, zone: zoneRule, count: count) {
                parsed = (length, trigger)
                break
            }
        }
        guard let (ruleLength, trigger) = parsed else {
            // Nothing parses with a title left: either the title is missing, or report the most
            // likely reading of the rule (an interval, else DAYS TIMES).
            if (try? TimeParsing.recurrence(words, now: now, zone: zoneRule, count: count)) == nil {
                // An interval is the leading words that start with a digit ("1h 30m").
                let digits = words.prefix { $0.first?.isNumber == true }.count
                // A monthly or yearly rule is four words ("month on 31 09:00").
                let calendar = ["month", "monthly", "year", "yearly"].contains(words[0].lowercased())
                let guess = digits > 0 ? digits : calendar ? 4 : 2
                _ = try TimeParsing.recurrence(Array(words[0..<min(guess, words.count)]), now: now, zone: zoneRule, count: count)
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
        try await schedule.schedule(title: title, body: body, trigger: trigger, now: now, global: global)
    }
}

struct Next: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "next",
        abstract: "Preview a reminder's next occurrences.",
        discussion: """
            More: man chime (chime next)
            """
    )

    @Argument(help: "The reminder's identifier.", completion: Completion.anyPending) var id: String
    @Option(parsing: .unconditional, help: "How many occurrences (1 to 1000).") var count = 5
    @OptionGroup var global: GlobalOptions

    func validate() throws {
        guard (1...1000).contains(count) else {
            throw ValidationError(ChimeError.invalid("count", String(count), expected: "a number from 1 to 1000").message)
        }
    }

    func run() async throws {
        try ReminderIdentifier.validate(id)
        if let url = try global.postgresURL() { return try await runPostgres(url) }
        let store = try global.openStore(.read)
        emit(preview(try store.reminder(id: id)), json: global.json)
    }

    /// The preview of `reminder`'s next `count` occurrences (from its stored next due time).
    func preview(_ reminder: Reminder) -> Preview {
        let systemZone = TimeZone.current
        let zone = reminder.trigger.displayZone(system: systemZone)
        // From the stored next due time on, so the preview begins with it.
        let occurrences = reminder.trigger.occurrences(from: reminder.nextDue ?? Date(), count: count, systemZone: systemZone)
        return Preview(reminder, occurrences: occurrences, zone: zone)
    }

    /// A reminder's next occurrences: due (ISO) and local, with a DST note where one applies.
    struct Preview: Report {
        struct Item: Encodable {
            var due: String
            var local: String
            var note: String?
        }
        var id: String
        var trigger: String
        var occurrences: [Item]
        private var title: String

        enum CodingKeys: String, CodingKey { case id, trigger, occurrences }

        init(_ reminder: Reminder, occurrences: [Occurrence], zone: TimeZone) {
            id = reminder.id
            trigger = reminder.trigger.summary
            title = reminder.title
            self.occurrences = occurrences.map {
                Item(due: TimeText.iso($0.instant), local: TimeText.local($0.instant, in: zone), note: $0.resolution.note)
            }
        }

        var lines: [String] {
            ["\(id): \(trigger)  \(UserText.oneLine(title))"]
                + occurrences.map { item in "  " + item.local + (item.note.map { "  (\($0))" } ?? "") }
        }
    }
}

struct List: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List pending reminders, the next due first.",
        discussion: """
            Snoozed and held alerts come first; the families' reminders are counted
            under the table. --limit N shows a page; the note under it names the next.
            Examples:
              chime list
              chime list --limit 20 --json
            More: man chime (chime list)
            """
    )

    @Option(help: ArgumentHelp("Show at most this many reminders (1 to 1000000).", valueName: "n")) var limit: Int?
    @Option(
        help: ArgumentHelp("Show the reminders that come after the pending reminder ID (the next page).", valueName: "id"),
        completion: Completion.known
    )
    var after: String?
    @OptionGroup var global: GlobalOptions

    func validate() throws {
        if let limit, !(1...1_000_000).contains(limit) {
            throw ValidationError("invalid --limit '\(limit)': expected a number of reminders from 1 to 1000000")
        }
        if let after { try asValidation { () throws(ChimeError) in try ReminderIdentifier.validate(after) } }
    }

    /// One more than the page: whether it is there says whether there are more.
    var fetchLimit: Int? { limit.map { $0 + 1 } }

    func run() async throws {
        if let url = try global.postgresURL() { return try await runPostgres(url) }
        let store = try global.openStore(.read)
        let running = RunnerControl.isRunning(storePath: store.path)
        if !global.json && !store.isFile && !FileManager.default.fileExists(atPath: store.path) {
            // (A typo in --store reads as no store at all: say where none was found.)
            Output.note("No store at '\(Redaction.redacted(store.path))' yet: the first reminder you schedule creates it.")
        }
        // The first page shows the snoozed and held alerts too, with what holds each.
        // (What holds each is asked only when some wait: the usual list has none, and the quiet
        // state and the families' holds were a fifth of `chime list`'s instructions.)
        var waiting: [HoldStatus.Entry] = []
        let zone = TimeZone.current
        if after == nil && store.isFile {
            do {
                let alerts = try store.waitingAlerts()
                if !alerts.isEmpty {
                    waiting = try HoldStatus(
                        quiet: store.quietState(),
                        waiting: alerts,
                        families: ChimeApp.holdingFamilies(store: store, focusBreaks: Settings.ifValid?.focusBreaks ?? FocusBreaks()),
                        desktopDoNotDisturb: nil,
                        now: Date(),
                        zone: zone
                    ).waiting
                }
            } catch {
                throw ChimeError(.store, String(describing: error))
            }
        }
        var page = ListPage(json: global.json, limit: limit, after: after, zone: zone, waiting: waiting)
        if !global.json {
            // The columns' widths first (a pass that keeps no reminder), then the rows.
            try store.eachPending(after: after, limit: fetchLimit) { page.measure($0) }
        }
        try store.eachPending(after: after, limit: fetchLimit) { page.add($0) }
        page.finish(runner: running)
    }

    /// The page of pending reminders being written: one JSON document (`{"reminders": [...],
    /// "runner": …}`, with `"waiting"` on the first page when alerts are snoozed or held, with `"more"` and `"next_after"` when a limit was given)
    /// or a table, each reminder written as it comes.
    ///
    /// The table fits 80 columns (titles, long ids and rules cut with "…", by display width).
    /// Without --limit and --after it lists the plain reminders, and after them one line per
    /// family (doses, focus) with how many it has scheduled and the command that shows them;
    /// with a page's options every kind is in the table, so that pages follow on. The JSON has
    /// every reminder with its kind.
    struct ListPage {
        /// The table's width.
        static let width = 80
        static let maxIDWidth = 20
        static let maxRuleWidth = 24
        let json: Bool
        let limit: Int?
        let after: String?
        let zone: TimeZone
        let waiting: [HoldStatus.Entry]
        /// Whether family reminders are counted under the table rather than listed in it.
        let groupFamilies: Bool
        private var output = StreamedOutput()
        private var measured = 0
        private var idWidth = 2
        private var nextWidth = 20
        private var ruleWidth = 7
        private var written = 0
        private var lastID: String?
        private var more = false
        private var familyCounts: [String: Int] = [:]

        init(json: Bool, limit: Int?, after: String?, zone: TimeZone, waiting: [HoldStatus.Entry] = []) {
            (self.json, self.limit, self.after, self.zone, self.waiting) = (json, limit, after, zone, waiting)
            groupFamilies = !json && limit == nil && after == nil
            for entry in waiting {
                fit(id: entry.alert.occurrence.reminderID, next: Self.next(of: entry, zone: zone), rule: Self.rule(of: entry))
            }
        }

        /// Whether `reminder` is counted under the table rather than shown in it.
        private func isGrouped(_ reminder: Reminder) -> Bool {
            groupFamilies && reminder.kind != PlainReminders.plainKind
        }

        private mutating func fit(id: String, next: String, rule: String) {
            idWidth = min(Self.maxIDWidth, max(idWidth, DisplayWidth.of(id)))
            nextWidth = max(nextWidth, DisplayWidth.of(next))
            ruleWidth = min(Self.maxRuleWidth, max(ruleWidth, DisplayWidth.of(rule)))
        }

        /// The human table's columns fit `reminder` (the first pass).
        mutating func measure(_ reminder: Reminder) {
            measured += 1
            if let limit, measured > limit { return }
            guard !isGrouped(reminder) else { return }
            fit(id: reminder.id, next: next(of: reminder), rule: reminder.trigger.summary)
        }

        /// "Tue 2026-05-12 14:30", with the UTC offset when the reminder keeps another zone than
        /// the system's.
        private func next(of reminder: Reminder) -> String { ReportText.next(of: reminder, zone: zone) }

        /// When a waiting alert comes: a snooze's end, or its hold's end ("when it ends" when
        /// the hold cannot say).
        private static func next(of entry: HoldStatus.Entry, zone: TimeZone) -> String {
            let when: Date? = entry.alert.isHeld ? entry.hold?.until : entry.alert.due
            guard let when else { return "when it ends" }
            let text = TimeText.local(max(when, entry.alert.due), in: zone)
            return text.lastIndex(of: " ").map { String(text[..<$0]) } ?? text
        }

        /// "snoozed", "held (focus)", "snoozed, held (quiet hours)".
        private static func rule(of entry: HoldStatus.Entry) -> String {
            var parts: [String] = []
            if entry.alert.isSnoozed { parts.append("snoozed") }
            if entry.alert.isHeld { parts.append("held (\(entry.hold?.short ?? "quiet"))") }
            return parts.joined(separator: ", ")
        }

        private var titleWidth: Int { max(8, Self.width - idWidth - nextWidth - ruleWidth - 6) }

        private mutating func row(id: String, next: String, rule: String, title: String) {
            let cells = [
                DisplayWidth.padded(DisplayWidth.truncated(id, to: idWidth), to: idWidth),
                DisplayWidth.padded(next, to: nextWidth),
                DisplayWidth.padded(DisplayWidth.truncated(rule, to: ruleWidth), to: ruleWidth),
                DisplayWidth.truncated(UserText.oneLine(title), to: titleWidth),
            ]
            output.line(cells.joined(separator: "  "))
        }

        private var headerWritten = false
        private mutating func writeHeader() {
            headerWritten = true
            let header = [
                DisplayWidth.padded("ID", to: idWidth), DisplayWidth.padded("NEXT", to: nextWidth),
                DisplayWidth.padded("TRIGGER", to: ruleWidth), "TITLE",
            ]
            output.line(header.joined(separator: "  "))
            for entry in waiting {
                let occurrence = entry.alert.occurrence
                row(id: occurrence.reminderID, next: Self.next(of: entry, zone: zone), rule: Self.rule(of: entry), title: occurrence.title)
            }
        }

        /// Writes `reminder` (or notes that there are more than the limit).
        mutating func add(_ reminder: Reminder) {
            if let limit, written == limit {
                more = true
                return
            }
            if json {
                output.raw(written == 0 ? #"{"reminders":["# : ",")
                output.json(ReminderJSON(reminder, zone: zone))
            } else if isGrouped(reminder) {
                familyCounts[reminder.kind, default: 0] += 1
                return
            } else {
                if !headerWritten { writeHeader() }
                // "[exec] ": it runs a command when it fires (--exec, --exec-shell).
                let title = ReportText.listTitle(reminder, title: ChimeApp.listTitle(of: reminder))
                row(id: reminder.id, next: next(of: reminder), rule: reminder.trigger.summary, title: title)
            }
            written += 1
            lastID = reminder.id
        }

        /// One JSON object per waiting alert.
        struct WaitingJSON: Encodable {
            var id: String
            var kind: String
            var title: String
            var due: String
            var snoozed: Bool
            var held: Bool
            @Nullable var reason: String?
            @Nullable var until: String?
        }

        /// The line under the table for a family's reminders: "Doses: 3 scheduled (chime doses)".
        static func familyLine(kind: String, count: Int) -> String { ChimeApp.familyLine(kind: kind, count: count) }

        /// Ends the page: the JSON document's other keys, or the notes under the table.
        mutating func finish(runner: Bool) {
            if json {
                output.raw(written == 0 ? #"{"reminders":[]"# : "]")
                if limit != nil {
                    output.raw(#","more":\#(more)"#)
                    output.raw(#","next_after":"# + (more ? JSONText.quote(lastID ?? "") : "null"))
                }
                // Only when there are some: the document without them is as it always was.
                if after == nil && !waiting.isEmpty {
                    output.raw(#","waiting":["#)
                    for (index, entry) in waiting.enumerated() {
                        if index > 0 { output.raw(",") }
                        let occurrence = entry.alert.occurrence
                        output.json(
                            WaitingJSON(
                                id: occurrence.reminderID,
                                kind: occurrence.kind,
                                title: occurrence.title,
                                due: TimeText.iso(entry.alert.due),
                                snoozed: entry.alert.isSnoozed,
                                held: entry.alert.isHeld,
                                reason: entry.alert.isHeld ? entry.hold?.reason : nil,
                                until: entry.alert.isHeld ? entry.hold?.until.map(TimeText.iso) : nil
                            )
                        )
                    }
                    output.raw("]")
                }
                output.raw(#","runner":\#(runner)}"# + "\n")
                output.flush()
                return
            }
            if !headerWritten && !waiting.isEmpty { writeHeader() }
            if written == 0 && waiting.isEmpty && familyCounts.isEmpty {
                output.line(
                    after.map { "No pending reminders after '\($0)'." }
                        ?? "No pending reminders. Schedule one: chime in 25m \"Tea is ready\""
                )
            }
            if !familyCounts.isEmpty {
                if headerWritten { output.line("") }
                for kind in familyCounts.keys.sorted() { output.line(Self.familyLine(kind: kind, count: familyCounts[kind] ?? 0)) }
            }
            output.flush()
            if more, let lastID, let limit { Output.note("More after '\(lastID)': chime list --after \(lastID) --limit \(limit)") }
            if !runner { Output.note("No runner is running for this store: start one with 'chime run'.") }
        }
    }
}

struct Cancel: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cancel",
        abstract: "Cancel pending reminders by identifier.",
        discussion: """
            All of them or none: an id that is not pending cancels nothing (exit 3).
            Exit 8 (too late): the runner had already shown the alert.
            More: man chime (chime cancel)
            """
    )

    @Argument(help: "The identifiers.", completion: Completion.cancellable) var ids: [String]
    @OptionGroup var global: GlobalOptions

    func validate() throws {
        guard !ids.isEmpty else { throw ValidationError("missing identifier: expected one or more ids, see 'chime list'") }
        try asValidation { () throws(ChimeError) in try ReminderIdentifier.validate(list: ids) }
    }

    func run() async throws {
        if let url = try global.postgresURL() { return try await runPostgres(url) }
        let store = try global.openStore(.update)
        // A dose's alert is answered (chime dose skip), not cancelled: exit 4, nothing cancelled.
        try ChimeApp.refuseCancel(ids, store: store)
        let outcome = try RunnerControl.cancel(ids: ids, store: store, now: Date())
        if !outcome.runner && !global.json { Output.note(RunnerNote.saved) }
        // Close what the runner showed on the desktop for them (bounded; nothing when no server).
        await RunnerControl.withdrawAlerts(ids: outcome.cancelled.map(\.id), store: store, closeWithoutRunner: LibnotifyNotifier.close)
        // The cancel came too late for an alert the runner was showing as it committed: say so,
        // with a status of its own, rather than "cancelled" for an alert the person saw.
        if let problem = outcome.problem(zone: .current) { throw problem }
        emit(Cancelled(outcome.cancelled, runner: outcome.runner), json: global.json)
    }

    /// The reminders a cancel removed, and whether a runner answered.
    struct Cancelled: Report {
        var cancelled: [String]
        var runner: Bool
        private var titles: [String]

        enum CodingKeys: String, CodingKey { case cancelled, runner }

        init(_ reminders: [Reminder], runner: Bool) {
            cancelled = reminders.map(\.id)
            titles = reminders.map(\.title)
            self.runner = runner
        }

        var lines: [String] {
            zip(cancelled, titles).map { id, title in "Cancelled \(id)  \(UserText.oneLine(title))" }
        }
    }
}

struct Notify: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "notify",
        abstract: "Show an alert now, like notify-send.",
        discussion: """
            Examples:
              chime notify "Backup done" "42 files" --urgency low --notifier console
            More: man chime (chime notify, OPTIONS)
            """
    )

    @Argument(
        parsing: .allUnrecognized,
        help: ArgumentHelp(
            "The title and an optional body; a title that starts with '-' goes after --.",
            valueName: "title [body]"
        )
    )
    var given: [String] = []
    @Option(help: "low, normal or critical.") var urgency: Note.Urgency = .normal
    @Flag(help: "Keep the alert up until it is answered.") var sticky = false
    @Option(help: ArgumentHelp("An icon name from the icon theme, or an absolute path.", valueName: "icon")) var icon: String?
    @Option(help: ArgumentHelp("The alert's category (default x-chime.reminder).", valueName: "category")) var category: String?
    @Option(
        help: ArgumentHelp(
            "A sound name from the sound theme (bell).",
            valueName: "sound"
        )
    )
    var sound: String?
    @Option(
        help: ArgumentHelp(
            "Where the alert goes: auto, desktop, console, json, webhook, ntfy or gotify.",
            valueName: "notifier"
        )
    )
    var notifier: NotifierChoice = .auto
    @OptionGroup var webhook: WebhookOptions
    @Flag(name: .long, help: "Print the alert as one JSON document.") var json = false
    @Flag(name: .shortAndLong, help: "Say on standard error where the alert went.")
    var verbose = false

    func run() async throws {
        let words = try CommandWords.literal(given, parsedFirst: 0, path: ["notify"])
        guard let title = words.first else { throw ChimeError(.usage, "missing title: expected one such as chime notify \"Now\"") }
        guard words.count <= 2 else {
            throw ChimeError(
                .usage,
                "too many words: '\(words.joined(separator: " "))': expected TITLE [BODY]; quote a title with spaces"
            )
        }
        // The same rules as a reminder's title and body (length, no bidirectional controls).
        let checked = try NewReminder(title: title, body: words.count > 1 ? words[1] : "", trigger: .once(Date())).validated()
        if let sound { try Presentation.checkSound(sound) }
        let sink = try await notifier.make(json: json, verbose: verbose, webhook: webhook)
        var note = Note(id: "notify", title: checked.title, body: checked.body, urgency: urgency, postedAt: Date())
        note.sticky = sticky
        note.icon = icon
        note.category = category
        note.sound = sound
        let posted: PostedNote
        do {
            posted = try await sink.post(note)
        } catch {
            await NotifierChoice.shutDown(sink)
            throw error
        }
        await NotifierChoice.shutDown(sink)
        // The console's JSON line is this command's document; the desktop prints its own.
        if json && !(sink is ConsoleNotifier) {
            struct Shown: Encodable {
                var notifier: String
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
                Shown(
                    notifier: sink is WebhookNotifier ? "webhook" : (sink as? PushNotifier)?.configuration.service.name ?? "desktop",
                    id: posted.id,
                    serverID: posted.serverID,
                    title: note.title,
                    body: note.body,
                    posted: TimeText.iso(note.postedAt)
                )
            )
        }
    }
}

extension Note.Urgency: ExpressibleByArgument {}

/// `--notifier`: where alerts go.
enum NotifierChoice: String, ExpressibleByArgument, CaseIterable {
    case auto, desktop, console, json, webhook, ntfy, gotify

    /// The notifier. `auto` is the desktop when a notification server owns
    /// org.freedesktop.Notifications on the session bus (asked with a 1 s timeout), else the
    /// console; the console case says why on standard error, the desktop case only when
    /// `verbose`.
    ///
    /// - Parameter follow: the runner's: with a session bus, `auto` and `desktop` follow the
    ///   server from then on (``LibnotifyNotifier/connect(appName:timeout:follow:)``): the
    ///   console while there is none (each alert echoed there and kept due in the ledger),
    ///   the desktop once one appears, where what was only echoed is shown then, once.
    /// - Parameter webhook: `--webhook-url-file` or `--webhook-url`, which only `webhook` takes
    ///   (it needs them, `$CHIME_WEBHOOK_URL` or the config file's `webhook_url`). A webhook
    ///   notifier must be shut down (``shutDown(_:)``) after its last post.
    ///
    /// `ntfy` and `gotify` take their server and token from the config file and the environment
    /// only (``Config/ntfyTarget()``, ``Config/gotifyTarget()``; a token file is read here, once),
    /// never from the command line, where `ps` would show the token.
    func make(
        json: Bool,
        verbose: Bool = true,
        follow: Bool = false,
        webhook: WebhookOptions = WebhookOptions()
    ) async throws
        -> any Notifier
    {
        let console = ConsoleNotifier(format: json || self == .json ? .json : .human)
        if self != .webhook, let given = webhook.given {
            throw ChimeError(.usage, "\(given.flag) '\(given.value)' is for --notifier webhook, not \(rawValue)")
        }
        switch self {
        case .webhook:
            guard let url = try webhook.resolved(config: try Settings.current()) else {
                throw ChimeError(
                    .usage,
                    "--notifier webhook needs a URL: give it with --webhook-url-file PATH, $CHIME_WEBHOOK_URL or the config file's webhook_url; expected \(WebhookURL.expected)"
                )
            }
            let notifier = WebhookNotifier(.init(url: url))
            if verbose { Output.note("Alerts go to the \(notifier.destination ?? "webhook").") }
            return notifier
        case .ntfy, .gotify:
            let config = try Settings.current()
            let target = self == .ntfy ? try config.ntfyTarget() : try config.gotifyTarget()
            let service: PushNotifier.Service = self == .ntfy ? .ntfy(topic: target.topic ?? "") : .gotify
            let notifier = PushNotifier(.init(service, server: target.server, token: target.token))
            if verbose { Output.note("Alerts go to \(notifier.destination ?? rawValue).") }
            return notifier
        case .json, .console:
            return console
        case .desktop:
            switch await LibnotifyNotifier.connect(follow: follow) {
            case .success(let desktop) where desktop.status.isAvailable:
                return EchoOnFailureNotifier(primary: desktop, echo: console)
            case .success(let desktop):
                throw ChimeError(.delivery, (desktop.status.problem ?? "No desktop.") + " Start one, or use --notifier auto or console.")
            case .failure(let status):
                let remedy = status.remedy ?? "Start one"
                throw ChimeError(.delivery, (status.problem ?? "No desktop.") + " \(remedy), or use --notifier auto or console.")
            }
        case .auto:
            switch await LibnotifyNotifier.connect(follow: follow) {
            case .success(let desktop):
                if let destination = desktop.destination {
                    if verbose { Output.note("Alerts go to the \(destination).") }
                } else {
                    Output.note(
                        "\(desktop.status.problem ?? "No notification server.") Alerts go to the console until a notification server starts, then to the desktop."
                    )
                }
                return EchoOnFailureNotifier(primary: desktop, echo: console)
            case .failure(let status):
                Output.note("\(status.problem ?? "No desktop.") Alerts go to the console.")
                return console
            }
        }
    }
}

/// `--webhook-url-file` and `--webhook-url`: where `--notifier webhook` posts, else
/// `$CHIME_WEBHOOK_URL`, else the config file's `webhook_url`. A URL on the command line is in
/// `ps` for every local user: one that carries a secret is taken with a warning.
struct WebhookOptions: ParsableArguments {
    @Option(
        name: .customLong("webhook-url-file"),
        help: ArgumentHelp(
            "With --notifier webhook: a file holding the URL to POST to.",
            valueName: "path"
        ),
        completion: .file()
    )
    var urlFile: String?

    @Option(
        name: .customLong("webhook-url"),
        help: ArgumentHelp(
            "With --notifier webhook: the URL (ps shows it to all).",
            valueName: "url"
        )
    )
    var url: String?

    /// The flag that names a URL and its value as it may be shown, when one does.
    var given: (flag: String, value: String)? {
        if let urlFile { return ("--webhook-url-file", urlFile) }
        return url.map { ("--webhook-url", WebhookURL.redacted($0)) }
    }

    /// The URL: `--webhook-url-file`'s, else `--webhook-url`'s (with a one-line warning on
    /// standard error when it carries a secret), else `$CHIME_WEBHOOK_URL`, else the config
    /// file's `webhook_url` (both checked when the config was loaded); nil when none gives one.
    /// - Throws: `.usage` for both flags at once, a file that cannot be read, or a bad URL, in
    ///   one line naming it (redacted).
    func resolved(config: Config) throws(ChimeError) -> WebhookURL? {
        if let urlFile {
            guard url == nil else {
                throw ChimeError(.usage, "--webhook-url-file and --webhook-url both give the webhook's URL: give one, the file")
            }
            let text = try Self.read(urlFile)
            do {
                return try WebhookURL(text)
            } catch {
                throw ChimeError(error.code, error.message + " (in --webhook-url-file '\(urlFile)')")
            }
        }
        if let url {
            let checked = try WebhookURL(url)
            if checked.carriesSecret {
                Output.note(
                    "Warning: --webhook-url has a secret (user info or a query) that every local user can read in ps: put the URL in a file given with --webhook-url-file, in $CHIME_WEBHOOK_URL or in the config file's webhook_url instead."
                )
            }
            return checked
        }
        let text = config.text(.webhookURL)
        return text.isEmpty ? nil : try WebhookURL(text)
    }

    /// The file's text without its final newline.
    static func read(_ path: String) throws(ChimeError) -> String {
        let expected = "expected a file holding the webhook's URL on one line"
        guard let data = FileManager.default.contents(atPath: path) else {
            let reason = access(path, R_OK) == 0 ? "not a regular file" : String(cString: strerror(errno))
            throw ChimeError(.usage, "cannot read --webhook-url-file '\(path)' (\(reason)): \(expected)")
        }
        guard var text = String(validating: data, as: UTF8.self) else {
            throw ChimeError(.usage, "--webhook-url-file '\(path)' is not UTF-8 text: \(expected)")
        }
        if text.last?.isNewline == true { text.removeLast() }
        return text
    }
}

extension NotifierChoice {
    /// Closes what a notifier holds open that would otherwise outlive it (a webhook's or a push
    /// server's HTTP client); nothing for the others.
    static func shutDown(_ notifier: any Notifier) async {
        if let webhook = notifier as? WebhookNotifier { try? await webhook.shutdown() }
        if let push = notifier as? PushNotifier { await push.shutdown() }
    }

    /// Whether a focus session's live alert (replaced in place at each stage) goes to
    /// `notifier`: the desktop's and a webhook's yes; the console's and a phone's no (one line,
    /// one push, per alert).
    static func showsLiveAlerts(_ notifier: any Notifier) -> Bool {
        !(notifier is ConsoleNotifier || notifier is PushNotifier)
    }
}

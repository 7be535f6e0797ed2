import ArgumentParser
import ChimeApp
import ChimeCore
import ChimePostgres
import ChimeRunner
import ChimeStore
import Foundation

struct History: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "What fired: when, how late, where, and what was done.",
        discussion: """
            One line per alert, oldest first: when it was due, how late it was shown,
            where, and RESULT (taken, snoozed, done, skipped, dismissed, expired…).
            Under an alert whose reminder ran a command: how it ended and the first
            lines of its output. The [hooks] runs are among the alerts (VIA hook), by
            their event's time, unless an id is given.
            Examples:
              chime history --last 7d
              chime in 25m "Tea" --id tea
              chime history tea --json
            More: man chime (chime history)
            """
    )

    @Argument(help: "Only the alerts of this reminder id.", completion: Completion.known) var id: String?
    @Option(
        help: ArgumentHelp("Only alerts due within this long before now (such as 7d or 7, 12h; at most 366d).", valueName: "duration")
    )
    var last: String?
    @Option(
        help: ArgumentHelp("Only the latest this many alerts and hook runs (1 to 1000000), still oldest first.", valueName: "n")
    )
    var limit: Int?
    @OptionGroup var global: GlobalOptions

    func validate() throws {
        if let id { try asValidation { () throws(ChimeError) in try ReminderIdentifier.validate(id) } }
        if let limit, !(1...1_000_000).contains(limit) {
            throw ValidationError("invalid --limit '\(limit)': expected a number of alerts from 1 to 1000000")
        }
    }

    func run() async throws {
        if let url = try global.postgresURL() { return try await runPostgres(url) }
        let since = try Self.since(last, now: Date())
        let store = try global.openStore(.read)
        if let id, !(try store.hasEverHad(id: id)) { throw Self.neverHad(id) }
        try Self.render(json: global.json, zone: .current) { body in
            try store.eachHistory(id: id, since: since, limit: limit, body)
        }
    }

    /// The start of `--last`, counted back from `now`.
    static func since(_ last: String?, now: Date) throws(ChimeError) -> Date? {
        try last.map { text throws(ChimeError) in
            // A bare number is days, as the other --last options read it ("--last 7").
            let duration = !text.isEmpty && text.allSatisfy(\.isNumber) ? text + "d" : text
            return now.addingTimeInterval(-TimeInterval(try TimeParsing.duration(duration)))
        }
    }

    static func neverHad(_ id: String) -> ChimeError {
        ChimeError(.notFound, "no reminder has ever had the id '\(id)': see 'chime list'")
    }

    /// Writes the ledger as it is read, an alert at a time (the table's widths from a first
    /// pass): `each` calls its argument with each entry, and may be called more than once.
    static func render(json: Bool, zone: TimeZone, each: ((HistoryEntry) throws -> Void) throws -> Void) throws {
        var output = StreamedOutput()
        if json {
            var count = 0
            try each { entry in
                output.raw(count == 0 ? #"{"alerts":["# : ",")
                output.json(Ledger.item(entry, zone: zone))
                count += 1
            }
            output.raw((count == 0 ? #"{"alerts":[]"# : "]") + "}\n")
        } else {
            var widths = Ledger.header.map(\.count)
            try each { entry in
                for (column, cell) in Ledger.cells(entry, zone: zone).prefix(5).enumerated() {
                    widths[column] = max(widths[column], cell.count)
                }
            }
            var count = 0
            try each { entry in
                if count == 0 { output.line(Ledger.line(Ledger.header, widths: widths)) }
                output.line(Ledger.line(Ledger.cells(entry, zone: zone), widths: widths))
                for line in Ledger.commandLines(entry) { output.line(line) }
                count += 1
            }
            if count == 0 { output.line("Nothing has fired yet.") }
        }
        output.flush()
    }

    /// How an alert of the ledger is shown: a JSON object (`--json`), or a row of the table.
    enum Ledger {
        struct Item: Encodable {
            var id: String
            var kind: String
            var title: String
            @Nullable var detail: String?
            var due: String
            var dueLocal: String
            var state: String
            @Nullable var posted: String?
            @Nullable var lateSeconds: Double?
            @Nullable var via: String?
            var missed: Int
            var attempts: Int
            @Nullable var error: String?
            @Nullable var response: String?
            @Nullable var answered: String?
            var result: String
            /// Its reminder's command's run for this alert, or a hook's run; absent when it has none.
            var command: CommandRunJSON?
            /// A hook's run (kind `hook`): its event and the command the config named for it.
            var hook: HookJSON?

            enum CodingKeys: String, CodingKey {
                case id, kind, title, detail, due, state, posted, via, missed, attempts, error, response, answered, result, command
                case hook
                case dueLocal = "due_local"
                case lateSeconds = "late_seconds"
            }
        }

        static func item(_ entry: HistoryEntry, zone: TimeZone) -> Item {
            Item(
                id: entry.reminderID,
                kind: entry.kind,
                title: entry.title,
                detail: entry.detail,
                due: TimeText.iso(entry.due),
                dueLocal: TimeText.local(entry.due, in: zone),
                state: entry.state,
                posted: entry.postedAt.map(TimeText.iso),
                lateSeconds: entry.lateness.map { ($0 * 1000).rounded() / 1000 },
                via: entry.via,
                missed: entry.missedCount,
                attempts: entry.attempts,
                error: entry.lastError,
                response: entry.response,
                answered: entry.answeredAt.map(TimeText.iso),
                result: entry.outcome,
                command: entry.command.map(CommandRunJSON.init),
                hook: entry.hookCommand.map { HookJSON(event: entry.title, command: CommandJSON($0)) }
            )
        }

        /// A hook's run in --json: its event (`gate.exit`) and its command (argv or shell, time limit).
        struct HookJSON: Encodable {
            var event: String
            var command: CommandJSON
        }

        /// A command's run in --json: its state (running, exited, timed_out, interrupted,
        /// failed), exit status, times, the first lines of its output, and why it failed.
        struct CommandRunJSON: Encodable {
            var state: String
            @Nullable var exitStatus: Int32?
            var started: String
            @Nullable var finished: String?
            @Nullable var pid: Int32?
            var output: String
            @Nullable var error: String?
            var summary: String

            enum CodingKeys: String, CodingKey {
                case state, started, finished, pid, output, error, summary
                case exitStatus = "exit_status"
            }

            init(_ run: CommandRun) {
                state = run.state.rawValue
                exitStatus = run.exitStatus
                started = TimeText.iso(run.startedAt)
                finished = run.finishedAt.map(TimeText.iso)
                pid = run.pid
                output = run.output
                error = run.error
                summary = run.summary
            }
        }

        /// Under an alert whose reminder runs a command: how its run went, then the first lines
        /// of its output. Under a hook's run, its command first ("command: notify-send Done: exit 0").
        static func commandLines(_ entry: HistoryEntry) -> [String] {
            guard let run = entry.command else { return [] }
            let output = run.output.split(separator: "\n", omittingEmptySubsequences: false).map { "    | " + UserText.oneLine(String($0)) }
            let hook = entry.hookCommand.map { UserText.oneLine($0.display) + ($0.isShell ? " (sh)" : "") + ": " } ?? ""
            return ["  command: " + hook + UserText.oneLine(run.summary)] + (run.output.isEmpty ? [] : output)
        }

        /// "on time" within a second, else "+2m 5s".
        static func late(_ seconds: TimeInterval?) -> String { ReportText.late(seconds) }

        static let header = ["DUE", "LATE", "VIA", "RESULT", "ID", "TITLE"]

        /// The table's cells for `entry`, in ``header``'s order.
        static func cells(_ entry: HistoryEntry, zone: TimeZone) -> [String] { ReportText.historyCells(entry, zone: zone) }

        /// A row: the first five columns padded to `widths`, then the title.
        static func line(_ cells: [String], widths: [Int]) -> String {
            (0..<5).map { cells[$0] + String(repeating: " ", count: widths[$0] - cells[$0].count) }.joined(separator: "  ")
                + "  " + cells[5]
        }
    }
}

struct Show: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "One reminder in full, and its next occurrences.",
        discussion: """
            The latest reminder with the id, pending or not.
            Examples:
              chime every month on 1 09:00 "Pay the rent" --id rent
              chime show rent
            More: man chime (chime show)
            """
    )

    @Argument(help: "The reminder's identifier.", completion: Completion.known) var id: String
    @OptionGroup var global: GlobalOptions

    func validate() throws {
        try asValidation { () throws(ChimeError) in try ReminderIdentifier.validate(id) }
    }

    func run() async throws {
        if let url = try global.postgresURL() { return try await runPostgres(url) }
        let store = try global.openStore(.read)
        emit(Self.shown(try store.detail(id: id)), json: global.json)
    }

    /// What `show` says of `detail`, with its next five occurrences when it is pending.
    static func shown(_ detail: ReminderDetail) -> Shown {
        let systemZone = TimeZone.current
        var occurrences: [Occurrence] = []
        if detail.state == "pending", let due = detail.reminder.nextDue {
            occurrences = detail.reminder.trigger.occurrences(from: due, count: 5, systemZone: systemZone)
        }
        return Shown(detail, occurrences: occurrences, system: systemZone)
    }

    struct Shown: Report {
        var reminder: ReminderJSON
        var state: String
        @Nullable var ended: String?
        @Nullable var lastDue: String?
        var shown: Int
        var next: [Next.Preview.Item]
        private var detail: ReminderDetail
        private var zone: TimeZone

        enum CodingKeys: String, CodingKey {
            case reminder, state, ended, shown, next
            case lastDue = "last_due"
        }

        init(_ detail: ReminderDetail, occurrences: [Occurrence], system: TimeZone) {
            self.detail = detail
            zone = detail.reminder.trigger.displayZone(system: system)
            reminder = ReminderJSON(detail.reminder, zone: system)
            state = detail.state
            ended = detail.endedAt.map(TimeText.iso)
            lastDue = detail.reminder.lastDue.map(TimeText.iso)
            shown = detail.shownCount
            next = occurrences.map { [zone] in
                Next.Preview.Item(due: TimeText.iso($0.instant), local: TimeText.local($0.instant, in: zone), note: $0.resolution.note)
            }
        }

        var lines: [String] {
            let r = detail.reminder
            var out = [
                "id:       \(r.id)",
                "title:    \(UserText.oneLine(r.title))",
            ]
            if !r.body.isEmpty {
                let body = r.body.split(separator: "\n", omittingEmptySubsequences: false).map { UserText.oneLine(String($0)) }
                out.append("body:     " + body.joined(separator: "\n          "))
            }
            if r.kind != "plain" { out.append("kind:     \(r.kind)") }
            out.append("trigger:  \(r.trigger.summary)")
            if let command = r.command {
                let limit = formatDuration(command.timeout)
                out.append("command:  \(UserText.oneLine(command.display))\(command.isShell ? " (sh)" : "") (time limit \(limit))")
            }
            if let app = r.appID { out.append("app:      \(app)") }
            if !r.presentation.actions.isEmpty {
                let actions = r.presentation.actions.map { "\($0.key) (\(UserText.oneLine($0.label)))" }
                out.append("actions:  " + actions.joined(separator: ", "))
            }
            if let rule = r.trigger.zoneRule {
                out.append("zone:     " + (rule == .floating ? "the system's (\(zone.identifier))" : zone.identifier))
            }
            out.append("state:    \(detail.state)" + (detail.endedAt.map { " since \(TimeText.local($0, in: zone))" } ?? ""))
            out.append("created:  \(TimeText.local(r.createdAt, in: zone))")
            if let last = r.lastDue { out.append("last due: \(TimeText.local(last, in: zone))") }
            out.append("shown:    \(detail.shownCount) time\(detail.shownCount == 1 ? "" : "s")")
            if !next.isEmpty {
                out.append("next:")
                out += next.map { "  " + $0.local + ($0.note.map { "  (\($0))" } ?? "") }
            }
            return out
        }
    }
}

struct Edit: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "edit",
        abstract: "Change a pending reminder's time, title, body or command.",
        discussion: """
            Plain reminders only, pending ones; a rule is changed by scheduling it again
            with the same --id. Nothing changes unless all of it can. --exec or
            --exec-shell gives it a command to run when it fires (instead of the one it
            had), --no-exec takes its command away.
            Examples:
              chime in 25m "Tea" --id tea
              chime edit tea --at 16:30
              chime edit tea --title "Green tea" --body "Three minutes"
              chime edit tea --exec-shell 'echo tea >> ~/tea.log'
              chime edit tea --no-exec
            More: man chime (chime edit)
            """
    )

    @Argument(help: "The reminder's identifier.", completion: Completion.editable) var id: String
    @Option(help: ArgumentHelp("The new time, as 'chime at' reads it.", valueName: "time")) var at: String?
    @Option(help: ArgumentHelp("The new title.", valueName: "title")) var title: String?
    @Option(help: ArgumentHelp("The new body (\"\" for none).", valueName: "body")) var body: String?
    @Option(
        help: ArgumentHelp("Read --at in this IANA zone (from tzdata) instead of the system's.", valueName: "zone"),
        completion: Completion.zones
    )
    var zone: String?
    @Flag(name: .customLong("no-exec"), help: "Run no command when it fires (take its command away).")
    var noExec = false
    @Option(
        name: .customLong("exec-shell"),
        help: ArgumentHelp("Run this command line with /bin/sh when it fires, instead.", valueName: "cmd")
    )
    var execShell: String?
    @Option(
        name: .customLong("exec-timeout"),
        help: ArgumentHelp("The new command's time limit (default 10m; 1s to 1d).", valueName: "duration")
    )
    var execTimeout: String?
    @OptionGroup var global: GlobalOptions
    // Last: everything after --exec is the command's argv, options included.
    @Option(
        parsing: .remaining,
        help: ArgumentHelp("Run PROGRAM ARGS... when it fires, instead, no shell; the last option.", valueName: "program")
    )
    var exec: [String] = []

    func validate() throws {
        try asValidation { () throws(ChimeError) in try ReminderIdentifier.validate(id) }
        try asValidation { () throws(ChimeError) in _ = try commandEdit() }
        guard at != nil || title != nil || body != nil || noExec || execShell != nil || execGiven || execTimeout != nil else {
            throw ValidationError("nothing to change: give --at, --title, --body, --exec, --exec-shell or --no-exec")
        }
    }

    /// Whether --exec was given (argument-parser leaves `exec` empty for a bare `--exec`).
    var execGiven: Bool { !exec.isEmpty || ScheduleOptions.execOnCommandLine() }

    /// What becomes of its command: --exec, --exec-shell (with --exec-timeout) or --no-exec.
    func commandEdit() throws(ChimeError) -> CommandEdit? {
        let command = try ScheduleOptions.command(
            exec: exec,
            given: execGiven,
            shell: execShell,
            timeout: execTimeout,
            path: ProcessInfo.processInfo.environment["PATH"]
        )
        if noExec {
            guard command == nil else {
                throw ChimeError(.usage, "both --no-exec and a command: give --no-exec alone, or --exec or --exec-shell")
            }
            return .remove
        }
        return command.map(CommandEdit.set)
    }

    func run() async throws {
        let now = Date()
        let timeZone = try zone.map { name throws(ChimeError) in try ZoneRule.parse(name).resolve(system: .current) } ?? .current
        let spoken = try at.map { text throws(ChimeError) in try TimeParsing.spoken(text, now: now, zone: timeZone) }
        if let url = try global.postgresURL() {
            // The new time is judged by the database's clock; a runner posting the reminder now keeps it.
            let command = try commandEdit()
            let (reminder, runners) = try await global.withPostgres(url) { [id, title, body, instant = spoken?.instant] store in
                do {
                    return (try store.edit(id: id, title: title, body: body, at: instant, command: command), try store.runnerCount())
                } catch let error as ChimeError {
                    throw ChimeApp.namingFamily(error)
                }
            }
            if let spoken, let at, !global.json { spoken.explain(at, zone: timeZone) }
            if runners == 0 && !global.json { Output.note(RunnerNote.fires) }
            emit(
                Edited(reminder: ReminderJSON(reminder, zone: .current), runner: runners > 0, edited: reminder, now: now),
                json: global.json
            )
            return
        }
        let store = try global.openStore(.update)
        let reminder: Reminder
        do {
            reminder = try store.edit(id: id, title: title, body: body, at: spoken?.instant, command: try commandEdit(), now: now)
        } catch {
            throw ChimeApp.namingFamily(error)
        }
        if let spoken, let at, !global.json { spoken.explain(at, zone: timeZone) }
        // The runner may be waiting for the old time: wake it to read the new one.
        let running = pokeRunner(store, json: global.json)
        emit(Edited(reminder: ReminderJSON(reminder, zone: .current), runner: running, edited: reminder, now: now), json: global.json)
    }

    struct Edited: Report {
        var reminder: ReminderJSON
        var runner: Bool
        fileprivate var edited: Reminder
        fileprivate var now: Date

        enum CodingKeys: String, CodingKey { case reminder, runner }

        var lines: [String] {
            var text = "Changed \(edited.id)"
            if let due = edited.nextDue {
                text += "  \(TimeText.local(due, in: edited.trigger.displayZone(system: .current))) (\(TimeText.relative(due, from: now)))"
            }
            return [text + "  \(UserText.oneLine(edited.title))"]
        }
    }
}

extension SpokenInstant {
    /// Says on standard error what was assumed: 09:00 for a date alone, a DST shift.
    func explain(_ text: String, zone: TimeZone) {
        if dateOnly {
            Output.note("A date alone means \(TimeParsing.dateOnlyTime): '\(text)' is \(TimeText.local(instant, in: zone)).")
        }
        if let note = resolution.note { Output.note("'\(text)': \(note).") }
    }
}

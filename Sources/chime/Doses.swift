import ArgumentParser
import ChimeCore
import ChimeDoses
import ChimeLibnotify
import ChimeRunner
import ChimeStore
import Foundation

#if canImport(Glibc)
import Glibc
#endif

struct DoseCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dose",
        abstract: "Answer a dose: take, skip, miss, reset, snooze or postpone it.",
        discussion: """
            DOSE is a dose's number ('chime doses'), its alert id ('chime med next'),
            or a medication's name. Without DOSE: the dose due now (several: a terminal
            asks which; without one, exit 4).
            Examples:
              chime dose take
              chime dose take 12 --notes "with breakfast"
              chime dose skip med-3-20261122-0800
            More: man chime (chime dose)
            """,
        subcommands: [DoseTake.self, DoseSkip.self, DoseMiss.self, DoseReset.self, DoseSnooze.self, DosePostpone.self]
    )
}

struct DosePostpone: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "postpone",
        abstract: "Move one coming dose later (2h, or --to 14:00); its schedule stays.",
        discussion: """
            The new time is after the dose's and before the medication's next dose; the
            alert comes then, and the grace and missed windows start from it.
            Examples:
              chime med add Zinc --amount 25 --unit mg --at 08:00
              chime dose postpone Zinc 2h
              chime dose postpone Zinc --to 11:00
            More: man chime (chime dose postpone)
            """
    )
    @Argument(
        help: ArgumentHelp("A dose number, an alert id, or a medication name (its next dose).", valueName: "dose"),
        completion: Completion.doses
    )
    var dose: String
    @Argument(help: ArgumentHelp("How much later than its time: 30m, 2h (1m to 24h).", valueName: "duration"))
    var duration: String?
    @Option(name: .customLong("to"), help: ArgumentHelp("The new time on the dose's day: 14:00, 2pm.", valueName: "time"))
    var time: String?
    @OptionGroup var global: GlobalOptions

    // Parsed once, by validate().
    private var target: PostponeTarget?

    enum CodingKeys: CodingKey { case dose, duration, time, global }

    mutating func validate() throws {
        try asValidation { () throws(ChimeError) in
            switch (duration, time) {
            case (let duration?, nil):
                let rule = OptionDuration(option: "duration", unit: .second, bareNumbers: false, range: 60...86_400)
                target = .by(Int(try rule.seconds(duration)))
            case (nil, let time?):
                target = .to(try LocalTime.spoken(time))
            case (.some, .some):
                throw ChimeError(.usage, "a duration and --to contradict each other: give one ('2h' or '--to 14:00')")
            case (nil, nil):
                throw ChimeError(.usage, "missing the new time: give a duration such as 2h, or --to 14:00")
            }
        }
    }

    func run() async throws {
        guard let target else { throw ChimeError(.failure, "dose postpone ran without its checks") }
        let context = try DoseContext(global, .update)
        let postponed = try context.book.postpone(DoseReference.parse(dose), target)
        let running = pokeRunner(context.store, json: global.json)
        emit(Postponed(postponed, runner: running, now: Date()), json: global.json)
    }

    /// A dose postponed: the dose at its new time, its time before, whether a runner was woken.
    struct Postponed: Report {
        var dose: DoseJSON
        var previous: String
        var runner: Bool
        private var postponed: PostponedDose

        enum CodingKeys: String, CodingKey { case dose, previous, runner }

        init(_ postponed: PostponedDose, runner: Bool, now: Date) {
            dose = DoseJSON(entry: postponed.entry, now: now)
            previous = TimeText.iso(postponed.previous)
            self.runner = runner
            self.postponed = postponed
        }

        var lines: [String] {
            let dose = postponed.entry.dose
            return [
                "Postponed dose \(dose.id): \(UserText.oneLine(postponed.entry.label)) from \(TimeText.clock(postponed.previous, in: dose.timeZone)) "
                    + "to \(TimeText.local(dose.scheduled, in: dose.timeZone)); its schedule is unchanged."
            ]
        }
    }
}

/// Which dose a `chime dose` command means: the one named, else the one due (asking on a
/// terminal when several are due). nil: the person chose none.
func chooseDose(_ text: String?, book: DoseBook, verb: String) throws(ChimeError) -> DoseReference {
    if let text {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty else { throw ChimeError.invalid("dose", text, expected: "a dose number, an alert id or a medication name") }
        return DoseReference.parse(trimmed)
    }
    let due = try book.dueDoses()
    guard let first = due.first else {
        throw ChimeError(.notFound, "no dose is due now: name one ('chime dose \(verb) 12'); see 'chime doses'")
    }
    if due.count == 1 { return .id(first.dose.id) }
    // Several: a person chooses; a script gets the library's conflict naming them.
    guard isatty(STDIN_FILENO) == 1 else { return .due }
    FileHandle.standardError.write(Data("\(due.count) doses are due:\n".utf8))
    for (index, entry) in due.enumerated() {
        let dose = entry.dose
        let line =
            "  \(index + 1)) dose \(dose.id)  \(UserText.oneLine(entry.label))  \(TimeText.local(dose.scheduled, in: dose.timeZone))\n"
        FileHandle.standardError.write(Data(line.utf8))
    }
    FileHandle.standardError.write(Data("Which one to \(verb)? [1-\(due.count)] ".utf8))
    let answer = readLine()?.trimmingCharacters(in: .whitespaces) ?? ""
    guard let choice = Int(answer), (1...due.count).contains(choice) else {
        throw ChimeError(.failure, "no dose chosen: nothing changed")
    }
    return .id(due[choice - 1].dose.id)
}

/// Take, skip, miss or reset a dose, then print it.
func answerDose(_ answer: DoseAnswer, _ options: DoseAnswerOptions, global: GlobalOptions) async throws {
    let context = try DoseContext(global, .update)
    let reference = try chooseDose(options.dose, book: context.book, verb: answer.rawValue)
    let answered = try context.book.answer(answer, reference, notes: options.notes)
    // Skipped or missed: nothing is to fire for it (taken may bring a refill alert; reset, the dose's alert).
    let running = pokeRunner(context.store, json: global.json, note: [.skip, .miss].contains(answer) ? RunnerNote.saved : RunnerNote.fires)
    // Answered here: its alert on the desktop is replaced by what was recorded ("✓ Zinc 25 mg
    // taken at 16:19"), as its button would, so that nobody takes the dose twice (the runner
    // replaces it; with none, the desktop helper; nothing when no server runs).
    if answer != .reset, let occurrence = answered.entry.dose.occurrence {
        let confirmation = DoseFamily.confirmation(answer.rawValue, entry: answered.entry, refill: answered.refill, at: Date())
        await confirmAnswered(occurrence, confirmation, store: context.store)
    }
    emit(DoseAnswered(answered, runner: running, now: Date()), json: global.json)
}

/// A dose just answered: the dose, its status before, the library's warning and refill notes,
/// whether a runner was woken.
struct DoseAnswered: Report {
    var dose: DoseJSON
    @Nullable var previous: String?
    @Nullable var warning: String?
    @Nullable var refill: String?
    var runner: Bool
    private var entry: DoseEntry

    enum CodingKeys: String, CodingKey { case dose, previous, warning, refill, runner }

    init(_ answered: AnsweredDose, runner: Bool, now: Date) {
        dose = DoseJSON(entry: answered.entry, now: now)
        previous = answered.previous?.rawValue
        warning = answered.warning
        refill = answered.refill
        self.runner = runner
        entry = answered.entry
    }

    var lines: [String] {
        let dose = entry.dose
        let when = TimeText.local(dose.scheduled, in: dose.timeZone)
        let label = UserText.oneLine(entry.label)
        var lines: [String]
        switch dose.status {
        case .taken:
            let at = dose.takenAt.map { TimeText.clock($0, in: dose.timeZone) } ?? "now"
            if previous == nil {
                lines = ["Logged dose \(dose.id): \(label), taken at \(at)."]
            } else {
                lines = ["Dose \(dose.id) taken: \(label), due \(when), taken at \(at)."]
            }
        case .skipped: lines = ["Dose \(dose.id) skipped: \(label), due \(when)."]
        case .missed: lines = ["Dose \(dose.id) marked missed: \(label), due \(when)."]
        case .pending: lines = ["Dose \(dose.id) is pending again: \(label), due \(when)."]
        }
        if !dose.notes.isEmpty { lines.append("  Notes: \(UserText.oneLine(dose.notes))") }
        return lines
    }

    var notes: [String] {
        (warning.map { ["Warning: \(UserText.oneLine($0))"] } ?? []) + (refill.map { ["Refill: \(UserText.oneLine($0))"] } ?? [])
    }
}

/// What `take`, `skip`, `miss` and `reset` share: which dose, and notes to keep with it.
struct DoseAnswerOptions: ParsableArguments {
    @Argument(
        help: ArgumentHelp("A dose number, an alert id, or a medication name (default: the dose due now).", valueName: "dose"),
        completion: Completion.doses
    )
    var dose: String?
    @Option(help: ArgumentHelp("Notes to keep with the dose, such as why (at most 500 characters).", valueName: "text"))
    var notes: String?
}

struct DoseTake: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "take",
        abstract: "Mark a dose taken (now); an as-needed medication's name logs a new dose.",
        discussion: """
            More: man chime (chime dose)
            """
    )
    @OptionGroup var answer: DoseAnswerOptions
    @OptionGroup var global: GlobalOptions

    func run() async throws { try await answerDose(.take, answer, global: global) }
}

struct DoseSkip: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "skip",
        abstract: "Skip a dose on purpose (it counts against adherence).",
        discussion: """
            More: man chime (chime dose)
            """
    )
    @OptionGroup var answer: DoseAnswerOptions
    @OptionGroup var global: GlobalOptions

    func run() async throws { try await answerDose(.skip, answer, global: global) }
}

struct DoseMiss: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "miss",
        abstract: "Mark a dose missed.",
        discussion: """
            More: man chime (chime dose)
            """
    )
    @OptionGroup var answer: DoseAnswerOptions
    @OptionGroup var global: GlobalOptions

    func run() async throws { try await answerDose(.miss, answer, global: global) }
}

struct DoseReset: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reset",
        abstract: "Set an answered dose back to pending (a taken one goes back into the stock).",
        discussion: """
            More: man chime (chime dose)
            """
    )
    @OptionGroup var answer: DoseAnswerOptions
    @OptionGroup var global: GlobalOptions

    func run() async throws { try await answerDose(.reset, answer, global: global) }
}

struct DoseSnooze: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "snooze",
        abstract: "Snooze a due dose: its alert comes again in 10 minutes (or --minutes).",
        discussion: """
            Examples:
              chime dose snooze --minutes 15
            More: man chime (chime dose snooze)
            """
    )
    @Argument(
        help: ArgumentHelp("A dose number, an alert id, or a medication name (default: the dose due now).", valueName: "dose"),
        completion: Completion.doses
    )
    var dose: String?
    @Option(
        name: .customLong("minutes"),
        parsing: .unconditional,
        help: ArgumentHelp("How long until the alert comes again, 1 to 240 minutes: 15, 15m or 1h (default 10).", valueName: "minutes")
    )
    var length = DurationOption<SnoozeMinutes>(seconds: Int64(DoseRules.snoozeMinutes) * 60)
    var minutes: Int { length.count }
    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let context = try DoseContext(global, .update)
        let reference = try chooseDose(dose, book: context.book, verb: "snooze")
        let entry = try context.book.snooze(reference, minutes: minutes)
        let running = pokeRunner(context.store, json: global.json)
        // The alert the snooze replaces says until when (it comes again then).
        if let occurrence = entry.dose.occurrence {
            await confirmAnswered(
                occurrence,
                DoseFamily.confirmation(DoseFamily.snooze, entry: entry, refill: nil, at: Date()),
                store: context.store
            )
        }
        emit(Snoozed(entry, minutes: minutes, runner: running, now: Date()), json: global.json)
    }

    /// A dose snoozed: the dose, for how many minutes, whether a runner was woken.
    struct Snoozed: Report {
        var dose: DoseJSON
        var minutes: Int
        var runner: Bool
        private var entry: DoseEntry

        enum CodingKeys: String, CodingKey { case dose, minutes, runner }

        init(_ entry: DoseEntry, minutes: Int, runner: Bool, now: Date) {
            dose = DoseJSON(entry: entry, now: now)
            self.minutes = minutes
            self.runner = runner
            self.entry = entry
        }

        var lines: [String] {
            let again = entry.dose.snoozeUntil.map { TimeText.clock($0, in: entry.dose.timeZone) } ?? "later"
            return ["Snoozed dose \(entry.dose.id): \(UserText.oneLine(entry.label)); the alert comes again at \(again)."]
        }
    }
}

struct DosesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "doses",
        abstract: "The dose history by day: status, taken time, notes.",
        discussion: """
            Default: the last 7 days (today included). Ranges are local days.
            Examples:
              chime doses
              chime doses --last-month --status missed
              chime doses --from 2026-11-01 --to 2026-11-15 --json
            More: man chime (chime doses)
            """
    )
    @OptionGroup var range: DoseRangeOptions
    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let context = try DoseContext(global, .read)
        let now = Date()
        let (filter, title) = range.filter(now: now, zone: .current)
        let entries = try context.book.doses(filter, limit: range.limit)
        emit(Listing(entries, filter: filter, title: title, now: now), json: global.json)
    }

    /// The dose history by day, with the counts per status and the range.
    struct Listing: Report {
        var doses: [DoseJSON]
        var counts: DoseCounts
        @Nullable var from: String?
        @Nullable var to: String?
        private var entries: [DoseEntry]
        private var title: String
        private var now: Date

        enum CodingKeys: String, CodingKey { case doses, counts, from, to }

        init(_ entries: [DoseEntry], filter: DoseFilter, title: String, now: Date) {
            doses = entries.map { DoseJSON(entry: $0, now: now) }
            counts = DoseCounts(entries, now: now)
            from = filter.from.map(TimeText.iso)
            to = filter.to.map(TimeText.iso)
            self.entries = entries
            self.title = title
            self.now = now
        }

        var lines: [String] {
            guard !entries.isEmpty else { return ["No doses in \(title)."] }
            var lines = ["Doses, \(title)"]
            var day: Int?
            let numberWidth = String(entries.map(\.dose.id).max() ?? 0).count
            // The columns line up by display width (a label in CJK or with emoji takes two a character).
            let labelWidth = entries.map { DisplayWidth.of(UserText.oneLine($0.label)) }.max() ?? 0
            for entry in entries {
                let dose = entry.dose
                let zone = dose.timeZone
                let local = CivilDay.of(dose.scheduled, in: zone)
                if local != day {
                    day = local
                    lines.append("")
                    lines.append(String(TimeText.local(dose.scheduled, in: zone).prefix(14)))
                }
                let number = String(dose.id)
                var line = "  " + String(repeating: " ", count: max(0, numberWidth - number.count)) + number
                line +=
                    "  \(TimeText.clock(dose.scheduled, in: zone))  \(DisplayWidth.padded(UserText.oneLine(entry.label), to: labelWidth))"
                line += "  \(dose.statusText(at: now))"
                if zone.identifier != TimeZone.current.identifier { line += "  [\(zone.identifier)]" }
                if !dose.notes.isEmpty { line += "  — \(UserText.oneLine(dose.notes))" }
                lines.append(line)
            }
            lines.append("")
            lines.append(counts.summary)
            return lines
        }
    }
}

struct AdherenceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "adherence",
        abstract: "Adherence: taken ÷ (taken + missed + skipped) doses.",
        discussion: """
            Pending, future and as-needed doses are not counted. Default: the last 30
            days (today included).
            Examples:
              chime adherence
              chime adherence --all --json
            More: man chime (chime adherence)
            """
    )
    @Option(
        name: .customLong("med"),
        help: ArgumentHelp("Only this medication (its number or name).", valueName: "med"),
        completion: Completion.medications(.all)
    )
    var medication: String?
    @Option(parsing: .unconditional, help: ArgumentHelp("The last N days: 7, 7d, 2w, 30d … (default 30d).", valueName: "days"))
    var last: DurationOption<LastDays>?
    @Flag(help: "The whole history.")
    var all = false
    @OptionGroup var global: GlobalOptions

    /// `--last` in days.
    private var lastDays: Int? { last?.count }

    func validate() throws {
        if all && last != nil { throw ValidationError("choose one range: --last or --all") }
    }

    func run() async throws {
        let context = try DoseContext(global, .read)
        let now = Date()
        let zone = TimeZone.current
        let days = lastDays ?? 30
        let range = DoseRange.last(days: days, now: now, zone: zone)
        let report = try context.book.adherence(from: all ? nil : range.from, to: range.to, medication: medication)
        let span = all ? "all history" : (days == 1 ? "today" : "last \(days) days")
        emit(Summary(report, span: span, medication: medication), json: global.json)
    }

    /// Adherence over a range: overall, per medication, per day.
    struct Summary: Report {
        struct PerMedication: Encodable {
            var id: Int64
            var name: String
            var adherence: AdherenceJSON
        }
        struct Day: Encodable {
            var date: String
            var adherence: AdherenceJSON
        }
        @Nullable var from: String?
        var to: String
        var overall: AdherenceJSON
        var medications: [PerMedication]
        var days: [Day]
        private var report: AdherenceReport
        private var span: String
        private var medication: String?

        enum CodingKeys: String, CodingKey { case from, to, overall, medications, days }

        init(_ report: AdherenceReport, span: String, medication: String?) {
            from = report.from.map(TimeText.iso)
            to = TimeText.iso(report.to)
            overall = AdherenceJSON(adherence: report.overall)
            medications = report.medications.map {
                PerMedication(id: $0.medicationID, name: $0.name, adherence: AdherenceJSON(adherence: $0.adherence))
            }
            days = report.days.map { Day(date: CivilDay.format($0.day), adherence: AdherenceJSON(adherence: $0.adherence)) }
            self.report = report
            self.span = span
            self.medication = medication
        }

        var lines: [String] {
            let overall = report.overall
            let subject = medication.map { " of \(UserText.oneLine($0))" } ?? ""
            guard overall.counted > 0 else {
                return [
                    "Adherence\(subject), \(span): —",
                    "No doses due yet in this range" + (overall.pending > 0 ? " (\(overall.pending) pending, not counted)." : "."),
                ]
            }
            var lines = ["Adherence\(subject), \(span): \(overall.percentText)"]
            var counts = "  \(overall.taken) taken, \(overall.missed) missed, \(overall.skipped) skipped"
            if overall.pending > 0 { counts += "; \(overall.pending) pending (not counted)" }
            lines.append(counts)
            lines.append("  = taken ÷ (taken + missed + skipped), over doses already due")
            if medication == nil && !report.medications.isEmpty {
                lines.append("")
                lines.append("By medication")
                let width = min(30, report.medications.map { UserText.oneLine($0.name).count }.max() ?? 0)
                for item in report.medications {
                    let name = String(UserText.oneLine(item.name).prefix(width))
                    let padded = name + String(repeating: " ", count: max(0, width - name.count))
                    let rate = item.adherence.percentText
                    let a = item.adherence
                    var line = "  \(padded)  " + String(repeating: " ", count: max(0, 4 - rate.count)) + rate
                    line += "  \(a.taken) taken, \(a.missed) missed, \(a.skipped) skipped"
                    if a.pending > 0 { line += ", \(a.pending) pending" }
                    lines.append(line)
                }
            }
            lines.append("")
            return lines + AdherenceChart.lines(report.days, columns: TerminalSize.current().columns)
        }
    }
}

struct ExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Export the dose history as CSV on standard output.",
        discussion: """
            Columns: date,time,zone,medication,amount,unit,status,taken_at,notes,dose_id.
            The same range and filters as 'chime doses' (default the last 7 days).
            Examples:
              chime export doses --last 30d > doses.csv
            More: man chime (chime export doses)
            """
    )
    @Argument(help: ArgumentHelp("What to export: doses (the default).", valueName: "what"), completion: .list(["doses"]))
    var what = "doses"
    @Flag(help: "Write CSV: the only format and the default (accepted for older scripts).")
    var csv = false
    @OptionGroup var range: DoseRangeOptions
    @OptionGroup var global: GlobalOptions

    func validate() throws {
        guard what == "doses" else {
            throw ValidationError(ChimeError.invalid("export", what, expected: "doses ('chime export doses')").message)
        }
        if global.json { throw ValidationError("the export is CSV: leave out --json (for JSON, 'chime doses --json')") }
    }

    func run() async throws {
        let context = try DoseContext(global, .read)
        let (filter, _) = range.filter(now: Date(), zone: .current)
        let entries = try context.book.doses(filter, limit: range.limit)
        let medications = Dictionary(
            try context.book.medications(includeInactive: true).map { ($0.medication.id, $0.medication) },
            uniquingKeysWith: { first, _ in first }
        )
        let text = DoseExport.csv(entries, medications: medications)
        FileHandle.standardOutput.write(Data(text.utf8))
    }
}

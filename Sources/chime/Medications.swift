import ArgumentParser
import ChimeConfig
import ChimeCore
import ChimeDoses
import ChimeStore
import Foundation

struct Med: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "med",
        abstract: "Medications: add, list, show, edit, refill, delete.",
        discussion: """
            Each dose falls due at its times; the runner shows "Medication Reminder"
            (Mark as Taken, Snooze 10 min, Skip) and repeats it while unanswered. Answer
            with 'chime dose'. A medication is named by its number or its name.
            Examples:
              chime med add Aspirin --amount 100 --unit mg --at 08:00,20:00
              chime med list
              chime med next --count 5
            More: man chime (chime med add)
            """,
        subcommands: [
            MedAdd.self, MedList.self, MedShow.self, MedEdit.self, MedRefill.self, MedDeactivate.self, MedReactivate.self, MedDelete.self,
            MedNext.self, MedTell.self,
        ]
    )
}

/// The options `med add` and `med edit` share; each is optional (`med add` requires some).
struct MedicationOptions: ParsableArguments {
    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("The amount of one dose: a plain decimal (100, 2.5).", valueName: "amount")
    )
    var amount: String?
    @Option(help: ArgumentHelp("The amount's unit: mg, ml, tablet.", valueName: "unit"))
    var unit: String?
    @Option(
        name: .customLong("at"),
        help: ArgumentHelp("The times of day: 08:00,20:00 or 8am,8pm.", valueName: "times")
    )
    var times: String?
    @Option(
        help: ArgumentHelp(
            "day (default), weekdays, weekends, mon-fri, mon,wed.",
            valueName: "days"
        )
    )
    var days: String?
    @Option(
        help: ArgumentHelp(
            "Every N days from --start: 3d, 2w (not with --days).",
            valueName: "days"
        )
    )
    var every: String?
    @Option(
        help: ArgumentHelp(
            "On/off days from --start (21/7: 21 on, 7 off).",
            valueName: "on/off"
        )
    )
    var cycle: String?
    @Option(
        help: ArgumentHelp(
            "Read the times in this IANA zone, not the system's.",
            valueName: "zone"
        ),
        completion: Completion.zones
    )
    var zone: String?
    @Flag(name: .customLong("as-needed"), help: "No reminders: log doses with 'chime dose take NAME'.")
    var asNeeded = false
    @Option(
        name: .customLong("min-interval"),
        parsing: .unconditional,
        help: ArgumentHelp("As needed: the shortest time between doses (6h).", valueName: "time")
    )
    var minInterval: DurationOption<MinInterval>?
    @Option(
        name: .customLong("after-last"),
        parsing: .unconditional,
        help: ArgumentHelp("Each alert this long after the last Take (6h).", valueName: "time")
    )
    var afterLast: DurationOption<AfterLast>?
    @Option(help: ArgumentHelp("As needed/after-last: at most N in 24 hours (4/day).", valueName: "N/day"))
    var max: String?
    @Option(help: ArgumentHelp("Amounts by date: \"10mg until 12-10, then stop\".", valueName: "steps"))
    var taper: String?
    @Option(help: ArgumentHelp("How to take it (\"with food\"), shown in the alert.", valueName: "text"))
    var instructions: String?
    @Option(name: .customLong("prescribed-by"), help: ArgumentHelp("Who prescribed it.", valueName: "name"))
    var prescribedBy: String?
    @Option(help: ArgumentHelp("The first day, YYYY-MM-DD (default today).", valueName: "date"))
    var start: String?
    @Option(help: ArgumentHelp("The last day, YYYY-MM-DD (default none).", valueName: "date"))
    var end: String?
    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "A dose is overdue this long after its time (30m).",
            valueName: "duration"
        )
    )
    var grace: DurationOption<GraceWindow>?
    @Option(
        name: .customLong("missed-after"),
        parsing: .unconditional,
        help: ArgumentHelp(
            "An unanswered dose is missed this long after (4h).",
            valueName: "time"
        )
    )
    var missedAfter: DurationOption<MissedAfter>?
    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "Doses in stock, the count ('med refill' adds a box).",
            valueName: "count"
        )
    )
    var stock: Int?
    @Option(
        name: .customLong("refill-days"),
        parsing: .unconditional,
        help: ArgumentHelp("Remind this many days before the stock runs out (7).", valueName: "days")
    )
    var refillDays: DurationOption<RefillDays>?

    /// The values given that parse on their own, typed: filled once by ``parseFormats()``.
    struct Parsed {
        var times: [LocalTime]?
        var days: WeekdaySet?
        var every: Int?
        var cycle: (on: Int, off: Int)?
        var zone: ZoneRule?
        var minInterval: Int?
        var startDay: Int?
        var endDay: Int?
        var grace: Int?
        var missedAfter: Int?
        var maxPerDay: Int?
        var taper: DoseTaper?
    }
    private(set) var parsed = Parsed()

    enum CodingKeys: CodingKey {
        case amount, unit, times, days, every, cycle, zone, asNeeded, minInterval, afterLast, max, taper, instructions, prescribedBy,
            start, end, grace, missedAfter
        case stock, refillDays
    }

    var touchesSchedule: Bool {
        times != nil || days != nil || every != nil || cycle != nil || zone != nil || asNeeded || minInterval != nil
            || afterLast != nil || max != nil
    }

    /// Parses every value that parses on its own, once, before the store is opened
    /// (`validate()` of `med add` and `med edit`), and keeps them in ``parsed``.
    mutating func parseFormats() throws(ChimeError) {
        parsed.times = try times.map { text throws(ChimeError) in try DoseInput.times(text) }
        if [days, every, cycle].compactMap({ $0 }).count > 1 { throw ScheduleDraft.exclusiveDays }
        parsed.days = try days.map { text throws(ChimeError) in try DoseInput.days(text) }
        parsed.every = try every.map { text throws(ChimeError) in try DoseDayRule.every(text) }
        parsed.cycle = try cycle.map { text throws(ChimeError) in try DoseDayRule.cycle(text) }
        parsed.zone = try zone.map { text throws(ChimeError) in try ZoneRule.parse(text) }
        parsed.minInterval = minInterval.map { Int($0.seconds) }
        parsed.startDay = try start.map { text throws(ChimeError) in try CivilDay.parse(text, field: "start date") }
        parsed.endDay = try end.map { text throws(ChimeError) in try CivilDay.parse(text, field: "end date") }
        parsed.grace = grace.map { Int($0.seconds) }
        parsed.missedAfter = missedAfter.map { Int($0.seconds) }
        parsed.maxPerDay = try max.map { text throws(ChimeError) in try DoseMaximum.parse(text) }
        if amount != nil && taper != nil {
            throw ChimeError(.usage, "--amount and --taper contradict each other: the taper gives the amount of each day")
        }
        // MM-DD dates: the first on or after the start date (else today).
        let first = parsed.startDay ?? CivilDay.of(Date(), in: .current)
        parsed.taper = try taper.map { text throws(ChimeError) in try DoseTaper.parse(text, from: first) }
    }

    /// The medication `med add` adds.
    func draft(name: String, today: Int) throws(ChimeError) -> MedicationDraft {
        var draft = MedicationDraft(
            name: name,
            amount: amount ?? "",
            unit: unit ?? "",
            startDay: parsed.startDay ?? today
        )
        if amount == nil && taper == nil {
            throw ChimeError(.usage, "missing --amount: the amount of one dose, such as --amount 100")
        }
        draft.taper = parsed.taper
        draft.instructions = instructions ?? ""
        draft.prescribedBy = prescribedBy ?? ""
        draft.endDay = parsed.endDay
        // Not given: `$CHIME_DOSE_GRACE` / `$CHIME_DOSE_MISSED_AFTER`, the config file's, else the defaults.
        let config = try Settings.current()
        draft.grace = parsed.grace ?? Int(config.seconds(.doseGrace))
        draft.missedAfter = parsed.missedAfter ?? Int(config.seconds(.doseMissedAfter))
        draft.stock = stock
        if let refillDays { draft.refillDays = refillDays.count }
        return draft
    }

    /// The schedule these options give: `med add` merges it over nothing, `med edit` hands it
    /// to the library, which merges it over the current schedule in its transaction. `--every`
    /// and `--cycle` count from `--start`, else from `today`.
    func scheduleChange(today: Int) -> ScheduleChange {
        let first = parsed.startDay ?? today
        var rule: DoseDayRule?
        if let every = parsed.every { rule = .every(days: every, from: first) }
        if let cycle = parsed.cycle { rule = .cycle(on: cycle.on, off: cycle.off, from: first) }
        var change = ScheduleChange(
            times: parsed.times,
            days: parsed.days,
            zone: parsed.zone,
            asNeeded: asNeeded,
            minInterval: parsed.minInterval,
            dayRule: rule,
            anchorDay: parsed.startDay
        )
        change.afterLast = afterLast.map { Int($0.seconds) }
        change.maxPerDay = parsed.maxPerDay
        return change
    }
}

/// Who else is told when a dose is not taken (`med add --tell`, once it is missed): kept apart
/// from the medication's own options, and set after it in its own transaction (`med tell`
/// changes it, and when).
struct TellOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp("Tell someone of doses not taken: ntfy:TOPIC or a URL.", valueName: "channel")
    )
    var tell: String?

    /// `med tell --after`: seconds, or nil for `missed`.
    static let afterRule = OptionDuration(option: "--after", unit: .minute, bareNumbers: false, range: DoseTellRule.afterRange)

    /// The channel and the time, checked before the store is opened.
    /// A channel and a time (`--after` of `med tell`, named `option` in the error).
    static func parse(channel: String?, after: String?, option: String) throws(ChimeError) -> (channel: DoseTellChannel?, after: Int??) {
        let parsedChannel = try channel.map { text throws(ChimeError) in try DoseTellChannel.parse(text) }
        guard let after else { return (parsedChannel, nil) }
        if after.lowercased() == "missed" { return (parsedChannel, .some(nil)) }
        do {
            return (parsedChannel, .some(Int(try afterRule.seconds(after))))
        } catch {
            throw ChimeError.invalid(option, after, expected: "a duration from 1m to 7d such as 30m, or missed")
        }
    }
}

/// A medication for a person (``MedicationText/lines(_:full:nextBySchedule:now:zone:)``), now,
/// in the system's zone.
func describe(_ detail: MedicationDetail, full: Bool, nextBySchedule: [Int64: Date] = [:]) -> [String] {
    MedicationText.lines(detail, full: full, nextBySchedule: nextBySchedule, now: Date(), zone: .current)
}

/// A medication after a change (`med add`, `edit`, `deactivate`, `reactivate`): the headline
/// and the medication for a person, a low stock's warning on standard error; the medication,
/// whether a runner was woken and the warnings in JSON.
struct MedicationChanged: Report {
    var medication: MedicationJSON
    var runner: Bool
    var warnings: [String]
    var headline: [String]
    var detail: MedicationDetail

    enum CodingKeys: String, CodingKey { case medication, runner, warnings }

    /// - Parameter checkStock: warn when the stock is at or below its refill threshold (`add`, `edit`).
    init(_ detail: MedicationDetail, runner: Bool, headline: String, checkStock: Bool = false) {
        medication = MedicationJSON(detail: detail)
        self.runner = runner
        warnings = checkStock ? detail.lowStockWarning.map { [$0] } ?? [] : []
        self.headline = [headline]
        self.detail = detail
    }

    var lines: [String] { headline + describe(detail, full: false) }
    var notes: [String] { warnings.map { "Warning: \(UserText.oneLine($0))" } }
}

struct MedAdd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add",
        abstract: "Add a medication with its schedule (--at times, or --as-needed).",
        discussion: """
            Examples:
              chime med add Aspirin --amount 100 --unit mg --at 08:00,20:00
              chime med add Ibuprofen --amount 400 --unit mg --as-needed --min-interval 6h
              chime med add Pain --amount 500 --unit mg --after-last 6h --max 4/day
            More: man chime (chime med add)
            """
    )
    @Argument(help: ArgumentHelp("The medication's name, at most 100 characters.", valueName: "name"))
    var name: String
    @OptionGroup var options: MedicationOptions
    @OptionGroup var tellOptions: TellOptions
    @OptionGroup var global: GlobalOptions

    // Parsed once, by validate(): the medication and its schedule, checked.
    private var draft: MedicationDraft?
    private var schedule: ScheduleDraft?
    private var tell: DoseTellRule?

    enum CodingKeys: CodingKey { case name, options, tellOptions, global }

    mutating func validate() throws {
        try asValidation { () throws(ChimeError) in
            try options.parseFormats()
            let today = CivilDay.of(Date(), in: .current)
            let draft = try options.draft(name: name, today: today)
            _ = try draft.validated()
            let schedule = try options.scheduleChange(today: today).merged()
            _ = try schedule.validated()
            (self.draft, self.schedule) = (draft, schedule)
            let (channel, _) = try TellOptions.parse(channel: tellOptions.tell, after: nil, option: "--tell")
            tell = channel.map { DoseTellRule(channel: $0) }
        }
    }

    func run() async throws {
        guard let draft, let schedule else { throw ChimeError(.failure, "med add ran without its checks") }
        let context = try DoseContext(global, .create)
        var detail = try context.book.addMedication(draft, schedule: schedule)
        if let tell { detail = try context.book.setTell(String(detail.medication.id), tell) }
        let running = pokeRunner(context.store, json: global.json)
        let headline = "Added medication \(detail.medication.id): \(UserText.oneLine(detail.medication.label))"
        emit(MedicationChanged(detail, runner: running, headline: headline, checkStock: true), json: global.json)
    }
}

struct MedList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the active medications (--all: the inactive ones too), by name.",
        discussion: """
            More: man chime (chime med list)
            """
    )
    @Option(help: ArgumentHelp("Only names containing this text.", valueName: "text"))
    var search: String?
    @Flag(help: "Include inactive medications.")
    var all = false
    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let context = try DoseContext(global, .read)
        let list = try context.book.medications(search: search, includeInactive: all)
        emit(Listing(list, search: search), json: global.json)
    }

    /// The medications found, each described in a few lines.
    struct Listing: Report {
        var medications: [MedicationJSON]
        var count: Int
        private var details: [MedicationDetail]
        private var search: String?

        enum CodingKeys: String, CodingKey { case medications, count }

        init(_ details: [MedicationDetail], search: String?) {
            medications = details.map { MedicationJSON(detail: $0) }
            count = details.count
            self.details = details
            self.search = search
        }

        var lines: [String] {
            guard !details.isEmpty else {
                if let search { return [MedicationText.noMatch(search)] }
                return [MedicationText.noMedications + " Add one: chime med add Aspirin --amount 100 --unit mg --at 08:00"]
            }
            return details.flatMap { describe($0, full: false) }
        }
    }
}

struct MedShow: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Show a medication: every field, its schedules with their next dose, stock, and adherence over 30 days.",
        discussion: """
            More: man chime (chime med show)
            """
    )
    @Argument(help: ArgumentHelp("The medication's number or name.", valueName: "med"), completion: Completion.medications(.all))
    var medication: String
    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let context = try DoseContext(global, .read)
        let detail = try context.book.medication(medication)
        let id = String(detail.medication.id)
        let nextBySchedule = try context.book.nextDoseBySchedule(id)
        let range = DoseRange.last(days: 30, now: Date(), zone: .current)
        let adherence = try context.book.adherence(from: range.from, to: range.to, medication: id).overall
        emit(Shown(detail, nextBySchedule: nextBySchedule, adherence: adherence), json: global.json)
    }

    /// A medication in full, with its adherence over the last 30 days.
    struct Shown: Report {
        var medication: MedicationJSON
        var adherence30Days: AdherenceJSON
        private var detail: MedicationDetail
        private var nextBySchedule: [Int64: Date]
        private var adherence: Adherence

        enum CodingKeys: String, CodingKey {
            case medication
            case adherence30Days = "adherence_30d"
        }

        init(_ detail: MedicationDetail, nextBySchedule: [Int64: Date], adherence: Adherence) {
            medication = MedicationJSON(detail: detail, nextBySchedule: nextBySchedule)
            adherence30Days = AdherenceJSON(adherence: adherence)
            self.detail = detail
            self.nextBySchedule = nextBySchedule
            self.adherence = adherence
        }

        var lines: [String] {
            describe(detail, full: true, nextBySchedule: nextBySchedule) + ["    " + MedicationText.adherence30Days(adherence)]
        }
    }
}

struct MedEdit: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "edit",
        abstract: "Change a medication (the options of 'med add'; --no-end, --no-stock).",
        discussion: """
            Examples:
              chime med edit Aspirin --at 09:00,21:00
            More: man chime (chime med edit)
            """
    )
    @Argument(help: ArgumentHelp("The medication's number or name.", valueName: "med"), completion: Completion.medications(.all))
    var medication: String
    @Option(help: ArgumentHelp("A new name.", valueName: "name"))
    var name: String?
    @OptionGroup var options: MedicationOptions
    @Flag(name: .customLong("no-end"), help: "Remove the end date.")
    var noEnd = false
    @Flag(name: .customLong("no-stock"), help: "Stop counting the stock.")
    var noStock = false
    @OptionGroup var global: GlobalOptions

    mutating func validate() throws {
        try asValidation { () throws(ChimeError) in
            try options.parseFormats()
            if noEnd && options.end != nil { throw ChimeError(.usage, "--end and --no-end contradict each other: give one") }
            if noStock && options.stock != nil { throw ChimeError(.usage, "--stock and --no-stock contradict each other: give one") }
        }
    }

    func run() async throws {
        let context = try DoseContext(global, .update)
        var changes = MedicationChanges()
        changes.name = name
        changes.amount = options.amount
        if let taper = options.parsed.taper { changes.taper = .some(taper) }
        changes.unit = options.unit
        changes.instructions = options.instructions
        changes.prescribedBy = options.prescribedBy
        changes.startDay = options.parsed.startDay
        if noEnd {
            changes.endDay = .some(nil)
        } else if let end = options.parsed.endDay {
            changes.endDay = .some(end)
        }
        changes.grace = options.parsed.grace
        changes.missedAfter = options.parsed.missedAfter
        if noStock {
            changes.stock = .some(nil)
        } else if let stock = options.stock {
            changes.stock = .some(stock)
        }
        changes.refillDays = options.refillDays?.count
        // Merged over the current schedule inside the library's transaction (no read here).
        if options.touchesSchedule { changes.scheduleChange = options.scheduleChange(today: CivilDay.of(Date(), in: .current)) }
        let detail = try context.book.editMedication(medication, changes)
        let running = pokeRunner(context.store, json: global.json)
        let headline = "Changed medication \(detail.medication.id): \(UserText.oneLine(detail.medication.label))"
        emit(MedicationChanged(detail, runner: running, headline: headline, checkStock: true), json: global.json)
    }
}

struct MedTell: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tell",
        abstract: "Tell someone else when a dose is not taken (as Medisafe's Medfriend), or stop.",
        discussion: """
            CHANNEL is ntfy:TOPIC (on the config's ntfy_url, else ntfy.sh, with its
            ntfy_token) or a webhook URL without user info or query. The runner sends
            "Alex has not taken Metformin 500 mg (due 08:00)" once per dose, and
            "Alex took … at 09:12" when it is taken afterwards; doses.person_name in the
            config file names you.
            Examples:
              chime med add Iron --amount 14 --unit mg --at 08:00
              chime med tell Iron ntfy:carers-alex --after 1h
              chime med tell Iron --off
            More: man chime (chime med tell)
            """
    )
    @Argument(help: ArgumentHelp("The medication's number or name.", valueName: "med"), completion: Completion.medications(.all))
    var medication: String
    @Argument(help: ArgumentHelp("ntfy:TOPIC or a webhook URL (default: the one set).", valueName: "channel"))
    var channel: String?
    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("When a dose is unanswered this long (30m), or missed (the default).", valueName: "duration")
    )
    var after: String?
    @Flag(help: "Tell no one any more.")
    var off = false
    @OptionGroup var global: GlobalOptions

    mutating func validate() throws {
        try asValidation { () throws(ChimeError) in
            if off && (channel != nil || after != nil) {
                throw ChimeError(.usage, "--off and \(channel == nil ? "--after" : "a channel") contradict each other: give one")
            }
            if !off && channel == nil && after == nil {
                throw ChimeError(
                    .usage,
                    "missing a channel: who is told, such as 'chime med tell \(medication) ntfy:carers-alex' (or --off)"
                )
            }
            _ = try TellOptions.parse(channel: channel, after: after, option: "--after")
        }
    }

    func run() async throws {
        let context = try DoseContext(global, .update)
        let (parsedChannel, after) = try TellOptions.parse(channel: channel, after: after, option: "--after")
        let detail: MedicationDetail
        if off {
            detail = try context.book.setTell(medication, nil)
        } else if let parsedChannel {
            // A new channel keeps the time set before unless --after says another.
            let current = try context.book.medication(medication)
            detail = try context.book.setTell(medication, DoseTellRule(channel: parsedChannel, after: after ?? current.tell?.after))
        } else {
            detail = try context.book.setTellAfter(medication, after ?? nil)
        }
        let running = pokeRunner(context.store, json: global.json)
        let headline =
            detail.tell == nil
            ? "Medication \(detail.medication.id) tells no one: \(UserText.oneLine(detail.medication.label))"
            : "Medication \(detail.medication.id) tells someone else: \(UserText.oneLine(detail.medication.label))"
        emit(MedicationChanged(detail, runner: running, headline: headline), json: global.json)
    }
}

struct MedRefill: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "refill",
        abstract: "Add a new box to a medication's stock: N doses more; prints the new count and the days it lasts.",
        discussion: """
            N is a whole number from 1 to 100000. To set the count instead, 'chime med
            edit NAME --stock N'.
            Examples:
              chime med add Metformin --amount 500 --unit mg --at 8am,8pm --stock 60
              chime med refill Metformin 30
            More: man chime (chime med refill)
            """
    )
    @Argument(help: ArgumentHelp("The medication's number or name.", valueName: "med"), completion: Completion.medications(.all))
    var medication: String
    // Words rather than an Int so that "-5", "0" and "30x" reach Refill.count (and its message).
    @Argument(parsing: .allUnrecognized, help: ArgumentHelp("How many doses the new box holds.", valueName: "N"))
    var given: [String] = []
    @OptionGroup var global: GlobalOptions

    private var count: Int?

    enum CodingKeys: CodingKey { case medication, given, global }

    mutating func validate() throws {
        try asValidation { () throws(ChimeError) in
            if let option = given.first(where: CommandWords.isOptionName) {
                throw ChimeError(.usage, "unknown option '\(option)' for 'chime med refill': see 'chime med refill --help'")
            }
            guard let text = given.first else { throw Refill.missingCount(medication) }
            guard given.count == 1 else {
                throw ChimeError(.usage, "too many words: '\(given.joined(separator: " "))': expected one count N, such as 30")
            }
            count = try Refill.count(text)
        }
    }

    func run() async throws {
        guard let count else { throw ChimeError(.failure, "med refill ran without its checks") }
        let context = try DoseContext(global, .update)
        let refill = try context.book.refill(medication, adding: count)
        emit(Refilled(refill), json: global.json)
    }

    /// The stock after a refill: the new count and how long it lasts.
    struct Refilled: Report {
        var medication: MedicationJSON
        var added: Int
        var previous: Int
        var stock: Int
        @Nullable var daysLeft: Int?
        var warnings: [String]
        private var detail: MedicationDetail

        enum CodingKeys: String, CodingKey {
            case medication, added, previous, stock, warnings
            case daysLeft = "days_left"
        }

        init(_ refill: Refill) {
            medication = MedicationJSON(detail: refill.detail)
            added = refill.added
            previous = refill.previous
            stock = refill.detail.medication.stock ?? 0
            daysLeft = refill.detail.stockDaysLeft
            warnings = refill.detail.lowStockWarning.map { [$0] } ?? []
            detail = refill.detail
        }

        var lines: [String] {
            let name = UserText.oneLine(detail.medication.name)
            var line = "Refilled \(name): \(plural(previous, "dose")) + \(added) = \(plural(stock, "dose"))"
            line += daysLeft.map { ", about \(plural($0, "day")) left" } ?? " (as needed: no daily pace to count days by)"
            return [line + "."]
        }
        var notes: [String] { warnings.map { "Warning: \(UserText.oneLine($0))" } }
    }
}

/// `med deactivate` and `med reactivate`.
func setActive(_ reference: String, _ active: Bool, global: GlobalOptions) throws {
    let context = try DoseContext(global, .update)
    let detail = try context.book.setActive(reference, active)
    let running = pokeRunner(context.store, json: global.json, note: active ? RunnerNote.fires : RunnerNote.saved)
    let label = UserText.oneLine(detail.medication.label)
    let headline =
        active
        ? "Reactivated \(label): its doses start again from now."
        : "Deactivated \(label): no more doses or alerts; its history stays."
    emit(MedicationChanged(detail, runner: running, headline: headline), json: global.json)
}

struct MedDeactivate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "deactivate",
        abstract: "Stop a medication's doses and alerts; its history stays ('med reactivate' starts them again).",
        discussion: """
            More: man chime (chime med deactivate)
            """
    )
    @Argument(help: ArgumentHelp("The medication's number or name.", valueName: "med"), completion: Completion.medications(.active))
    var medication: String
    @OptionGroup var global: GlobalOptions

    func run() async throws { try setActive(medication, false, global: global) }
}

struct MedReactivate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reactivate",
        abstract: "Start an inactive medication's doses again from now (nothing is counted missed for the pause).",
        discussion: """
            More: man chime (chime med reactivate)
            """
    )
    @Argument(help: ArgumentHelp("The medication's number or name.", valueName: "med"), completion: Completion.medications(.inactive))
    var medication: String
    @OptionGroup var global: GlobalOptions

    func run() async throws { try setActive(medication, true, global: global) }
}

struct MedDelete: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete",
        abstract: "Delete a medication with its schedules and its whole dose history.",
        discussion: """
            Asks first unless --yes (required without a terminal: exit 64); answering
            no changes nothing (exit 1). To keep the history, 'chime med deactivate'.
            More: man chime (chime med delete)
            """
    )
    @Argument(help: ArgumentHelp("The medication's number or name.", valueName: "med"), completion: Completion.medications(.all))
    var medication: String
    @Flag(name: [.short, .long], help: "Do not ask.")
    var yes = false
    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let context = try DoseContext(global, .update)
        let impact = try context.book.deletionImpact(medication)
        let name = UserText.oneLine(impact.medication.name)
        let question =
            "Delete \(name) with its \(plural(impact.schedules, "schedule")) and \(plural(impact.doses, "dose record"))?"
        guard try confirm(question, what: "delete", yes: yes) else {
            throw ChimeError(.failure, "not deleted: \(impact.medication.name) stays as it is")
        }
        let deleted = try context.book.deleteMedication(String(impact.medication.id))
        let running = pokeRunner(context.store, json: global.json, note: RunnerNote.saved)
        emit(Deleted(deleted, runner: running), json: global.json)
    }

    /// A medication deleted, with how many schedules and dose records went with it.
    struct Deleted: Report {
        var id: Int64
        var name: String
        var schedules: Int
        var doses: Int
        var runner: Bool

        init(_ deleted: DeletionImpact, runner: Bool) {
            id = deleted.medication.id
            name = deleted.medication.name
            schedules = deleted.schedules
            doses = deleted.doses
            self.runner = runner
        }

        var lines: [String] {
            ["Deleted \(UserText.oneLine(name)) with its \(plural(schedules, "schedule")) and \(plural(doses, "dose record"))."]
        }
    }
}

struct MedNext: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "next",
        abstract: "Preview the next doses (of one medication, or all): when, medication and amount, alert id.",
        discussion: """
            Examples:
              chime med next --count 5
            More: man chime (chime med next, DAYLIGHT SAVING TIME)
            """
    )
    @Argument(
        help: ArgumentHelp("The medication's number or name (default: every active one).", valueName: "med"),
        completion: Completion.medications(.active)
    )
    var medication: String?
    @Option(parsing: .unconditional, help: ArgumentHelp("How many doses, 1 to 500 (default 5).", valueName: "count"))
    var count = 5
    @OptionGroup var global: GlobalOptions

    func validate() throws {
        guard (1...500).contains(count) else {
            throw ValidationError(ChimeError.invalid("count", String(count), expected: "a number from 1 to 500").message)
        }
    }

    func run() async throws {
        let context = try DoseContext(global, .read)
        let planned = try context.book.nextDoses(count: count, medication: medication)
        emit(Preview(planned, medication: medication, now: Date()), json: global.json)
    }

    /// The next doses: due (ISO and local), zone, alert id, with a DST note where one applies.
    struct Preview: Report {
        struct Planned: Encodable {
            var medicationID: Int64
            var medication: String
            var amount: Double
            var unit: String
            var label: String
            var scheduleID: Int64
            var due: String
            var dueLocal: String
            var zone: String
            var alert: String
            @Nullable var note: String?
            enum CodingKeys: String, CodingKey {
                case medication, amount, unit, label, due, zone, alert, note
                case medicationID = "medication_id"
                case scheduleID = "schedule_id"
                case dueLocal = "due_local"
            }
        }
        var doses: [Planned]
        private var planned: [PlannedDose]
        private var medication: String?
        private var now: Date

        enum CodingKeys: String, CodingKey { case doses }

        init(_ planned: [PlannedDose], medication: String?, now: Date) {
            doses = planned.map {
                Planned(
                    medicationID: $0.medicationID,
                    medication: $0.medicationName,
                    amount: $0.amount,
                    unit: $0.unit,
                    label: $0.label,
                    scheduleID: $0.scheduleID,
                    due: TimeText.iso($0.due),
                    dueLocal: TimeText.local($0.due, in: $0.zone),
                    zone: $0.zone.identifier,
                    alert: $0.occurrence,
                    note: $0.resolution.note
                )
            }
            self.planned = planned
            self.medication = medication
            self.now = now
        }

        var lines: [String] {
            guard !planned.isEmpty else {
                return [
                    medication == nil
                        ? "No doses coming: no active scheduled medication ('chime med list --all')."
                        : "No doses coming for \(UserText.oneLine(medication ?? "")): inactive, as needed, or past its end date."
                ]
            }
            return planned.map { dose in
                var line =
                    "\(TimeText.local(dose.due, in: dose.zone))  \(dose.zone.identifier)  \(UserText.oneLine(dose.label))  \(dose.occurrence)"
                line += "  (\(TimeText.relative(dose.due, from: now)))"
                if let note = dose.resolution.note { line += "  [\(note)]" }
                return line
            }
        }
    }
}

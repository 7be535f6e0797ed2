import ArgumentParser
import ChimeCore
import ChimeDoses
import ChimeStore
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// What the medication and dose commands share: the dose book on the store.
struct DoseContext {
    let store: ReminderStore
    let book: DoseBook

    /// - Parameter access: ``ReminderStore/Access/create`` for `med add` only.
    init(_ global: GlobalOptions, _ access: ReminderStore.Access) throws(ChimeError) {
        store = try global.openStore(access)
        book = DoseBook(store: store, clock: SystemWallClock(), systemZone: { TimeZone.current })
    }
}

/// Parsers for the medication options, each naming its option in the error.
enum DoseInput {
    /// "30m", "4h", "1h30m" → seconds; the error names `field`.
    static func duration(_ text: String, field: String) throws(ChimeError) -> Int {
        do {
            return Int(try TimeParsing.duration(text))
        } catch {
            throw ChimeError.invalid(field, text, expected: "a duration such as 30m, 4h or 1h30m")
        }
    }

    /// "every day", "weekdays", "mon-fri", "mon,wed,fri" (a leading "every" is allowed).
    static func days(_ text: String) throws(ChimeError) -> WeekdaySet {
        var words = text.trimmingCharacters(in: .whitespaces)
        if words.lowercased().hasPrefix("every ") { words = String(words.dropFirst(6)).trimmingCharacters(in: .whitespaces) }
        do {
            return try WeekdaySet.parse(words)
        } catch {
            throw ChimeError.invalid(
                "days",
                text,
                expected: "every day, weekdays, weekends, a range such as mon-fri, or a list such as mon,wed,fri"
            )
        }
    }

    /// "08:00,20:00".
    static func times(_ text: String) throws(ChimeError) -> [LocalTime] {
        do {
            return try LocalTime.parseList(text)
        } catch {
            throw ChimeError.invalid("time", text, expected: "24-hour times HH:MM, separated by commas, such as 08:00,20:00")
        }
    }

    /// "7d", "30d", "7": a number of days from 1 to 3660.
    static func lastDays(_ text: String) throws(ChimeError) -> Int {
        let trimmed = text.trimmingCharacters(in: .whitespaces).lowercased()
        let digits = trimmed.hasSuffix("d") ? String(trimmed.dropLast()) : trimmed
        guard let days = Int(digits), (1...3_660).contains(days) else {
            throw ChimeError.invalid("--last", text, expected: "a number of days such as 7d or 30d")
        }
        return days
    }
}

/// How a dose appears in `--json` output (absent values as null).
struct DoseJSON: Encodable {
    var entry: DoseEntry
    var now: Date

    enum CodingKeys: String, CodingKey {
        case id, occurrence, medication, label, scheduled, zone, status, overdue, taken, notes
        case medicationID = "medication_id"
        case scheduledLocal = "scheduled_local"
        case autoMissed = "auto_missed"
        case snoozedUntil = "snoozed_until"
    }

    func encode(to encoder: any Encoder) throws {
        let dose = entry.dose
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(dose.id, forKey: .id)
        try container.encode(dose.occurrence, forKey: .occurrence)
        try container.encode(dose.medicationID, forKey: .medicationID)
        try container.encode(entry.medicationName, forKey: .medication)
        try container.encode(entry.label, forKey: .label)
        try container.encode(TimeText.iso(dose.scheduled), forKey: .scheduled)
        try container.encode(TimeText.local(dose.scheduled, in: dose.timeZone), forKey: .scheduledLocal)
        try container.encode(dose.zone, forKey: .zone)
        try container.encode(dose.status.rawValue, forKey: .status)
        try container.encode(dose.isOverdue(at: now), forKey: .overdue)
        try container.encode(dose.takenAt.map(TimeText.iso), forKey: .taken)
        try container.encode(dose.notes, forKey: .notes)
        try container.encode(dose.autoMissed, forKey: .autoMissed)
        try container.encode(dose.snoozeUntil.flatMap { $0 > now ? TimeText.iso($0) : nil }, forKey: .snoozedUntil)
    }
}

/// Adherence counts in `--json` output; `rate` is null when nothing counts.
struct AdherenceJSON: Encodable {
    var adherence: Adherence

    enum CodingKeys: String, CodingKey {
        case taken, missed, skipped, pending, counted, rate, percent
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(adherence.taken, forKey: .taken)
        try container.encode(adherence.missed, forKey: .missed)
        try container.encode(adherence.skipped, forKey: .skipped)
        try container.encode(adherence.pending, forKey: .pending)
        try container.encode(adherence.counted, forKey: .counted)
        try container.encode(adherence.rate.map { ($0 * 1000).rounded() / 1000 }, forKey: .rate)
        try container.encode(adherence.rate.map { _ in adherence.percentText }, forKey: .percent)
    }
}

/// How a medication appears in `--json` output.
struct MedicationJSON: Encodable {
    var detail: MedicationDetail
    /// The next dose of each schedule, by schedule id (`med show`).
    var nextBySchedule: [Int64: Date] = [:]

    enum CodingKeys: String, CodingKey {
        case id, name, amount, unit, label, instructions, start, end, active, stock, created, schedules
        case prescribedBy = "prescribed_by"
        case graceSeconds = "grace_s"
        case missedAfterSeconds = "missed_after_s"
        case refillDays = "refill_days"
        case nextDose = "next_dose"
        case nextDoseLocal = "next_dose_local"
    }

    enum ScheduleKeys: String, CodingKey {
        case id, frequency, times, days, zone, enabled, summary, created, next
        case minIntervalSeconds = "min_interval_s"
    }

    func encode(to encoder: any Encoder) throws {
        let medication = detail.medication
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(medication.id, forKey: .id)
        try container.encode(medication.name, forKey: .name)
        try container.encode(medication.amount, forKey: .amount)
        try container.encode(medication.unit, forKey: .unit)
        try container.encode(medication.label, forKey: .label)
        try container.encode(medication.instructions, forKey: .instructions)
        try container.encode(medication.prescribedBy, forKey: .prescribedBy)
        try container.encode(CivilDay.format(medication.startDay), forKey: .start)
        try container.encode(medication.endDay.map(CivilDay.format), forKey: .end)
        try container.encode(medication.isActive, forKey: .active)
        try container.encode(medication.grace, forKey: .graceSeconds)
        try container.encode(medication.missedAfter, forKey: .missedAfterSeconds)
        try container.encode(medication.stock, forKey: .stock)
        try container.encode(medication.refillDays, forKey: .refillDays)
        try container.encode(TimeText.iso(medication.createdAt), forKey: .created)
        try container.encode(detail.nextDose.map(TimeText.iso), forKey: .nextDose)
        try container.encode(detail.nextDose.map { TimeText.local($0, in: .current) }, forKey: .nextDoseLocal)
        var schedules = container.nestedUnkeyedContainer(forKey: .schedules)
        for schedule in detail.schedules {
            var item = schedules.nestedContainer(keyedBy: ScheduleKeys.self)
            try item.encode(schedule.id, forKey: .id)
            try item.encode(schedule.frequency.rawValue, forKey: .frequency)
            try item.encode(schedule.times.map(\.description), forKey: .times)
            try item.encode(schedule.frequency == .asNeeded ? nil : schedule.days.description, forKey: .days)
            let zone: String? =
                switch schedule.zone {
                case .floating: schedule.frequency == .asNeeded ? nil : "floating"
                case .fixed(let name): name
                }
            try item.encode(zone, forKey: .zone)
            try item.encode(schedule.minInterval, forKey: .minIntervalSeconds)
            try item.encode(schedule.isEnabled, forKey: .enabled)
            try item.encode(schedule.summary, forKey: .summary)
            try item.encode(TimeText.iso(schedule.createdAt), forKey: .created)
            try item.encode(nextBySchedule[schedule.id].map(TimeText.iso), forKey: .next)
        }
    }
}

/// The range and filters `chime doses` and `chime export doses` share.
struct DoseRangeOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The last N days, today included: 7d, 30d … (default 7d).", valueName: "days"))
    var last: String?
    @Flag(help: "This calendar month.")
    var month = false
    @Flag(name: .customLong("last-month"), help: "The previous calendar month.")
    var lastMonth = false
    @Option(help: ArgumentHelp("From this local date on (YYYY-MM-DD).", valueName: "date"))
    var from: String?
    @Option(help: ArgumentHelp("Up to and including this local date (YYYY-MM-DD).", valueName: "date"))
    var to: String?
    @Option(help: ArgumentHelp("Only doses with this status: pending, taken, missed, skipped.", valueName: "status"))
    var status: String?
    @Option(name: .customLong("med"), help: ArgumentHelp("Only this medication (its number or name).", valueName: "med"))
    var medication: String?
    @Flag(help: "Only overdue doses: pending past their grace window.")
    var overdue = false
    @Option(help: ArgumentHelp("At most this many doses (the oldest first).", valueName: "count"))
    var limit: Int?

    func validate() throws {
        let ranges = [last != nil, month, lastMonth, from != nil || to != nil].filter { $0 }.count
        if ranges > 1 {
            throw ValidationError("choose one range: --last, --month, --last-month, or --from/--to")
        }
        try asValidation { () throws(ChimeError) in
            if let last { _ = try DoseInput.lastDays(last) }
            if let status { _ = try DoseStatus.parse(status) }
            let start = try from.map { text throws(ChimeError) in try CivilDay.parse(text, field: "--from date") }
            let end = try to.map { text throws(ChimeError) in try CivilDay.parse(text, field: "--to date") }
            if let start, let end, end < start, let to {
                throw ChimeError.invalid("--to date", to, expected: "a date on or after --from \(CivilDay.format(start))")
            }
            if let limit, limit < 1 { throw ChimeError.invalid("limit", String(limit), expected: "a number from 1 up") }
        }
    }

    /// The filter for the library, and the range's words for a heading.
    func filter(now: Date, zone: TimeZone) throws(ChimeError) -> (filter: DoseFilter, title: String) {
        var range: (from: Date?, to: Date?)
        var title: String
        if month {
            let month = DoseRange.month(monthsBack: 0, now: now, zone: zone)
            range = (month.from, month.to)
            title = "this month"
        } else if lastMonth {
            let month = DoseRange.month(monthsBack: 1, now: now, zone: zone)
            range = (month.from, month.to)
            title = "last month"
        } else if from != nil || to != nil {
            let start = try from.map { text throws(ChimeError) in try CivilDay.parse(text, field: "--from date") }
            let end = try to.map { text throws(ChimeError) in try CivilDay.parse(text, field: "--to date") }
            range = (start.map { DoseRange.start(of: $0, zone) }, end.map { DoseRange.start(of: $0 + 1, zone) })
            title = "\(from ?? "the start") to \(to ?? "now and after")"
        } else {
            let days = try last.map { text throws(ChimeError) in try DoseInput.lastDays(text) } ?? 7
            let span = DoseRange.last(days: days, now: now, zone: zone)
            range = (span.from, span.to)
            title = days == 1 ? "today" : "last \(days) days"
        }
        var filter = DoseFilter(
            from: range.from,
            to: range.to,
            status: try status.map { text throws(ChimeError) in try DoseStatus.parse(text) },
            medication: medication
        )
        filter.overdueOnly = overdue
        return (filter, title)
    }
}

/// Singular or plural: "1 dose", "2 doses".
func plural(_ count: Int, _ singular: String, _ plural: String? = nil) -> String {
    "\(count) \(count == 1 ? singular : plural ?? singular + "s")"
}

/// Asks a yes/no question on the terminal; without one, `--yes` is required (exit 64).
func confirm(_ question: String, what: String, yes: Bool) throws(ChimeError) -> Bool {
    if yes { return true }
    guard isatty(STDIN_FILENO) == 1 else {
        throw ChimeError(.usage, "\(what) needs a confirmation: run it in a terminal to answer, or pass --yes")
    }
    FileHandle.standardError.write(Data("\(question) [y/N] ".utf8))
    let answer = readLine()?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
    return answer == "y" || answer == "yes"
}

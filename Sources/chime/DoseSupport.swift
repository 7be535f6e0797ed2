import ArgumentParser
import ChimeApp
import ChimeConfig
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
        book = DoseBook(
            store: store,
            clock: SystemWallClock(),
            systemZone: { TimeZone.current },
            repeats: Settings.ifValid?.doseRepeats ?? DoseRepeats()
        )
    }
}

/// How a dose appears in `--json` output (absent values as null).
struct DoseJSON: Encodable {
    var id: Int64
    @Nullable var occurrence: String?
    var medicationID: Int64
    var medication: String
    var label: String
    var scheduled: String
    var scheduledLocal: String
    var zone: String
    var status: String
    var overdue: Bool
    @Nullable var taken: String?
    var notes: String
    var autoMissed: Bool
    @Nullable var snoozedUntil: String?

    enum CodingKeys: String, CodingKey {
        case id, occurrence, medication, label, scheduled, zone, status, overdue, taken, notes
        case medicationID = "medication_id"
        case scheduledLocal = "scheduled_local"
        case autoMissed = "auto_missed"
        case snoozedUntil = "snoozed_until"
    }

    init(entry: DoseEntry, now: Date) {
        let dose = entry.dose
        id = dose.id
        occurrence = dose.occurrence
        medicationID = dose.medicationID
        medication = entry.medicationName
        label = entry.label
        scheduled = TimeText.iso(dose.scheduled)
        scheduledLocal = TimeText.local(dose.scheduled, in: dose.timeZone)
        zone = dose.zone
        status = dose.status.rawValue
        overdue = dose.isOverdue(at: now)
        taken = dose.takenAt.map(TimeText.iso)
        notes = dose.notes
        autoMissed = dose.autoMissed
        snoozedUntil = dose.snoozeUntil.flatMap { $0 > now ? TimeText.iso($0) : nil }
    }
}

/// Adherence counts in `--json` output; `rate` and `percent` are null when nothing counts.
struct AdherenceJSON: Encodable {
    var taken: Int
    var missed: Int
    var skipped: Int
    var pending: Int
    var counted: Int
    @Nullable var rate: Double?
    @Nullable var percent: String?

    init(adherence: Adherence) {
        (taken, missed, skipped, pending, counted) = (
            adherence.taken, adherence.missed, adherence.skipped, adherence.pending, adherence.counted
        )
        rate = adherence.rate.map { ($0 * 1000).rounded() / 1000 }
        percent = adherence.rate.map { _ in adherence.percentText }
    }
}

/// How a medication appears in `--json` output.
struct MedicationJSON: Encodable {
    struct Schedule: Encodable {
        var id: Int64
        var frequency: String
        var times: [String]
        @Nullable var days: String?
        @Nullable var zone: String?
        @Nullable var minIntervalSeconds: Int?
        /// Every N days, or an on/off cycle ("21/7"), counted from the day `from`.
        @Nullable var everyDays: Int?
        @Nullable var cycle: String?
        @Nullable var from: String?
        /// After-last: each dose this many seconds after the last one taken; the daily maximum.
        @Nullable var afterLastSeconds: Int?
        @Nullable var maxPerDay: Int?
        var enabled: Bool
        var summary: String
        var created: String
        @Nullable var next: String?

        enum CodingKeys: String, CodingKey {
            case id, frequency, times, days, zone, enabled, summary, created, next, cycle, from
            case minIntervalSeconds = "min_interval_s"
            case everyDays = "every_days"
            case afterLastSeconds = "after_last_s"
            case maxPerDay = "max_per_day"
        }
    }

    var id: Int64
    var name: String
    var amount: Double
    var unit: String
    var label: String
    var instructions: String
    var prescribedBy: String
    var start: String
    @Nullable var end: String?
    var active: Bool
    var graceSeconds: Int
    var missedAfterSeconds: Int
    @Nullable var stock: Int?
    var refillDays: Int
    var created: String
    @Nullable var nextDose: String?
    @Nullable var nextDoseLocal: String?
    var schedules: [Schedule]
    /// A taper ("10 mg until 2026-12-10, 5 mg until 2026-12-20, then stop") and the amount of
    /// today (the taper's; else the amount).
    @Nullable var taper: String?
    @Nullable var amountToday: Double?
    /// Who else is told when a dose is not taken: the channel as shown (no token), and after how
    /// long (null: when the dose is missed).
    @Nullable var tell: Tell?

    struct Tell: Encodable {
        var channel: String
        @Nullable var afterSeconds: Int?

        enum CodingKeys: String, CodingKey {
            case channel
            case afterSeconds = "after_s"
        }
    }

    enum CodingKeys: String, CodingKey {
        case id, name, amount, unit, label, instructions, start, end, active, stock, created, schedules
        case prescribedBy = "prescribed_by"
        case graceSeconds = "grace_s"
        case missedAfterSeconds = "missed_after_s"
        case refillDays = "refill_days"
        case nextDose = "next_dose"
        case nextDoseLocal = "next_dose_local"
        case taper
        case amountToday = "amount_today"
        case tell
    }

    /// - Parameter nextBySchedule: the next dose of each schedule, by schedule id (`med show`).
    init(detail: MedicationDetail, nextBySchedule: [Int64: Date] = [:]) {
        let medication = detail.medication
        id = medication.id
        name = medication.name
        amount = medication.amount
        unit = medication.unit
        label = medication.label
        instructions = medication.instructions
        prescribedBy = medication.prescribedBy
        start = CivilDay.format(medication.startDay)
        end = medication.endDay.map(CivilDay.format)
        active = medication.isActive
        graceSeconds = medication.grace
        missedAfterSeconds = medication.missedAfter
        stock = medication.stock
        refillDays = medication.refillDays
        created = TimeText.iso(medication.createdAt)
        nextDose = detail.nextDose.map(TimeText.iso)
        nextDoseLocal = detail.nextDose.map { TimeText.local($0, in: .current) }
        taper = medication.taper?.summary(unit: medication.unit)
        amountToday = medication.amount(on: CivilDay.of(Date(), in: .current))
        tell = detail.tell.map { Tell(channel: $0.channel.shown, afterSeconds: $0.after) }
        schedules = detail.schedules.map { schedule in
            let asNeeded = schedule.frequency == .asNeeded
            let zone: String? =
                switch schedule.zone {
                case .floating: asNeeded ? nil : "floating"
                case .fixed(let name): name
                }
            var (every, cycle): (Int?, String?)
            switch schedule.dayRule {
            case .every(let days, _): every = days
            case .cycle(let on, let off, _): cycle = "\(on)/\(off)"
            case nil: break
            }
            return Schedule(
                id: schedule.id,
                frequency: schedule.frequency.rawValue,
                times: schedule.times.map(\.description),
                days: asNeeded ? nil : schedule.days.description,
                zone: zone,
                minIntervalSeconds: schedule.minInterval,
                everyDays: every,
                cycle: cycle,
                from: schedule.dayRule.map { CivilDay.format($0.anchor) },
                afterLastSeconds: schedule.afterLast,
                maxPerDay: schedule.maxPerDay,
                enabled: schedule.isEnabled,
                summary: schedule.summary,
                created: TimeText.iso(schedule.createdAt),
                next: nextBySchedule[schedule.id].map(TimeText.iso)
            )
        }
    }
}

/// The range and filters `chime doses` and `chime export doses` share.
struct DoseRangeOptions: ParsableArguments {
    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("The last N days, today included: 7, 7d, 2w, 30d … (default 7d).", valueName: "days")
    )
    var last: DurationOption<LastDays>?
    @Flag(help: "This calendar month.")
    var month = false
    @Flag(name: .customLong("last-month"), help: "The previous calendar month.")
    var lastMonth = false
    @Option(help: ArgumentHelp("From this local date on (YYYY-MM-DD).", valueName: "date"))
    var from: String?
    @Option(help: ArgumentHelp("Up to and including this local date (YYYY-MM-DD).", valueName: "date"))
    var to: String?
    @Option(
        help: ArgumentHelp("Only doses with this status: pending, taken, missed, skipped.", valueName: "status"),
        completion: .list(["pending", "taken", "missed", "skipped"])
    )
    var status: String?
    @Option(
        name: .customLong("med"),
        help: ArgumentHelp("Only this medication (its number or name).", valueName: "med"),
        completion: Completion.medications(.all)
    )
    var medication: String?
    @Flag(help: "Only overdue doses: pending past their grace window.")
    var overdue = false
    @Option(parsing: .unconditional, help: ArgumentHelp("At most this many doses (the oldest first).", valueName: "count"))
    var limit: Int?

    // Parsed once, by validate(): what the options above say, typed.
    private var lastDays: Int? { last?.count }
    private var statusFilter: DoseStatus?
    private var fromDay: Int?
    private var toDay: Int?

    mutating func validate() throws {
        let ranges = [last != nil, month, lastMonth, from != nil || to != nil].filter { $0 }.count
        if ranges > 1 {
            throw ValidationError("choose one range: --last, --month, --last-month, or --from/--to")
        }
        try asValidation { () throws(ChimeError) in
            statusFilter = try status.map { text throws(ChimeError) in try DoseStatus.parse(text) }
            fromDay = try from.map { text throws(ChimeError) in try CivilDay.parse(text, field: "--from date") }
            toDay = try to.map { text throws(ChimeError) in try CivilDay.parse(text, field: "--to date") }
            if let fromDay, let toDay, toDay < fromDay, let to {
                throw ChimeError.invalid("--to date", to, expected: "a date on or after --from \(CivilDay.format(fromDay))")
            }
            if let limit, limit < 1 { throw ChimeError.invalid("limit", String(limit), expected: "a number from 1 up") }
        }
    }

    /// The filter for the library, and the range's words for a heading.
    func filter(now: Date, zone: TimeZone) -> (filter: DoseFilter, title: String) {
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
            range = (fromDay.map { DoseRange.start(of: $0, zone) }, toDay.map { DoseRange.start(of: $0 + 1, zone) })
            title = "\(from ?? "the start") to \(to ?? "now and after")"
        } else {
            let days = lastDays ?? 7
            let span = DoseRange.last(days: days, now: now, zone: zone)
            range = (span.from, span.to)
            title = days == 1 ? "today" : "last \(days) days"
        }
        var filter = DoseFilter(from: range.from, to: range.to, status: statusFilter, medication: medication)
        filter.overdueOnly = overdue
        return (filter, title)
    }
}

/// Singular or plural: "1 dose", "2 doses".
func plural(_ count: Int, _ singular: String, _ plural: String? = nil) -> String {
    "\(count) \(count == 1 ? singular : plural ?? singular + "s")"
}

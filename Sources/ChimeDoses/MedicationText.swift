import ChimeCore
import Foundation

/// Medications as text for a person, shared by the CLI and the app.
public enum MedicationText {
    /// The empty list.
    public static let noMedications = "No medications yet."

    /// `Adherence, last 30 days: 92% (11 taken, 1 missed, 0 skipped)` (`chime med show`, the
    /// app's detail), or `…: no doses due yet`.
    public static func adherence30Days(_ adherence: Adherence) -> String {
        adherence.counted == 0
            ? "Adherence, last 30 days: no doses due yet"
            : "Adherence, last 30 days: \(adherence.percentText) (\(adherence.taken) taken, \(adherence.missed) missed, "
                + "\(adherence.skipped) skipped)"
    }

    /// A search that found nothing: `No medication matches 'asp'.`
    public static func noMatch(_ search: String) -> String { "No medication matches '\(UserText.oneLine(search))'." }

    /// A medication for a person (`chime med list`, `med show` with `full`, the app's list and
    /// detail): its label, schedules, next dose (relative to `now`, in `zone` or the dose's
    /// schedule's zone), and with `full` its instructions, dates, windows and stock.
    public static func lines(
        _ detail: MedicationDetail,
        full: Bool,
        nextBySchedule: [Int64: Date] = [:],
        now: Date,
        zone: TimeZone
    ) -> [String] {
        var lines: [String] = []
        let medication = detail.medication
        // A taper's amount of today.
        var heading = "\(medication.id)  \(UserText.oneLine(medication.on(day: CivilDay.of(now, in: zone)).label))"
        if !medication.isActive { heading += "  (inactive)" }
        lines.append(heading)
        // Each dose once, with one offset: the next dose in its schedule's zone, and beside another
        // schedule only that schedule's own next dose.
        var nextZone = zone
        for schedule in detail.schedules where schedule.isEnabled || full {
            var line = "    \(schedule.summary)"
            if !schedule.isEnabled { line += "  (replaced)" }
            let scheduleZone = schedule.zone.resolve(system: zone)
            if let next = nextBySchedule[schedule.id] {
                if let first = detail.nextDose, abs(next.timeIntervalSince(first)) < 0.001 {
                    nextZone = scheduleZone
                } else if full {
                    line += "  next \(TimeText.local(next, in: scheduleZone))"
                }
            }
            lines.append(line)
        }
        if let taper = medication.taper { lines.append("    Taper: \(UserText.oneLine(taper.summary(unit: medication.unit)))") }
        if let next = detail.nextDose {
            lines.append("    Next dose: \(TimeText.local(next, in: nextZone)) (\(TimeText.relative(next, from: now)))")
        } else if !medication.isActive {
            lines.append("    No doses while inactive: 'chime med reactivate \(medication.id)'")
        } else if detail.schedules.contains(where: { $0.isEnabled && $0.afterLast != nil }) {
            lines.append("    No alert until a dose is taken: 'chime dose take \(UserText.oneLine(medication.name))' starts the interval")
        }
        if let tell = detail.tell { lines.append("    Tells \(tell.summary)") }
        guard full else { return lines }
        if !medication.instructions.isEmpty { lines.append("    Instructions: \(UserText.oneLine(medication.instructions))") }
        if !medication.prescribedBy.isEmpty { lines.append("    Prescribed by: \(UserText.oneLine(medication.prescribedBy))") }
        var dates = "    From \(CivilDay.format(medication.startDay))"
        dates += medication.endDay.map { " to \(CivilDay.format($0))" } ?? ", no end date"
        lines.append(dates)
        lines.append(
            "    Overdue after \(Trigger.formatInterval(Int64(medication.grace))), missed after "
                + "\(Trigger.formatInterval(Int64(medication.missedAfter))) or at the next dose"
        )
        if let stock = medication.stock {
            var line = "    Stock: \(plural(stock, "dose"))"
            if let days = detail.stockDaysLeft { line += ", about \(plural(days, "day")) left" }
            line += "; refill reminder \(plural(medication.refillDays, "day")) before it runs out"
            lines.append(line)
        }
        return lines
    }
}

/// Parsers for the medication options, each naming its option in the error.
public enum DoseInput {
    /// "every day", "weekdays", "mon-fri", "mon,wed,fri" (a leading "every" is allowed).
    public static func days(_ text: String) throws(ChimeError) -> WeekdaySet {
        try WeekdaySet.spoken(text)
    }

    /// "08:00,20:00", "8am,8pm", "noon": the times of day `chime at` reads, separated by commas.
    public static func times(_ text: String) throws(ChimeError) -> [LocalTime] {
        try LocalTime.spokenList(text)
    }
}

/// Singular or plural: "1 dose", "2 doses".
func plural(_ count: Int, _ singular: String, _ plural: String? = nil) -> String {
    "\(count) \(count == 1 ? singular : plural ?? singular + "s")"
}

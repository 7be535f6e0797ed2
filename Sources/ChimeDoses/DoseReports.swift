import ChimeCore
import Foundation

/// How many doses of a list have each status, and how many are overdue (`chime doses`).
public struct DoseCounts: Sendable, Hashable, Encodable {
    public var pending = 0
    public var taken = 0
    public var missed = 0
    public var skipped = 0
    /// Pending doses past their grace window at `now` (also counted as pending).
    public var overdue = 0
    public var total = 0

    public init(pending: Int = 0, taken: Int = 0, missed: Int = 0, skipped: Int = 0, overdue: Int = 0, total: Int = 0) {
        (self.pending, self.taken, self.missed, self.skipped, self.overdue, self.total) = (pending, taken, missed, skipped, overdue, total)
    }

    /// The counts of `entries` at `now`.
    public init(_ entries: [DoseEntry], now: Date) {
        for entry in entries {
            switch entry.dose.status {
            case .pending: pending += 1
            case .taken: taken += 1
            case .missed: missed += 1
            case .skipped: skipped += 1
            }
            if entry.dose.isOverdue(at: now) { overdue += 1 }
        }
        total = entries.count
    }

    /// `5 doses: 1 pending, 3 taken, 1 missed (1 overdue)`: the statuses with a dose, in
    /// order (`chime doses`, the app's history).
    public var summary: String {
        var parts: [String] = []
        for status in DoseStatus.allCases where self[status] > 0 { parts.append("\(self[status]) \(status.rawValue)") }
        var summary = "\(plural(total, "dose")): " + parts.joined(separator: ", ")
        if overdue > 0 { summary += " (\(overdue) overdue)" }
        return summary
    }

    /// The count of one status.
    public subscript(status: DoseStatus) -> Int {
        switch status {
        case .pending: pending
        case .taken: taken
        case .missed: missed
        case .skipped: skipped
        }
    }
}

extension Dose {
    /// Its status for a person at `now`: `overdue`, `taken at 08:05`, `missed (no answer)`,
    /// times in the dose's zone (`chime doses`, the app's history).
    public func statusText(at now: Date) -> String {
        var text = isOverdue(at: now) ? "overdue" : status.rawValue
        if let takenAt { text += " at \(TimeText.clock(takenAt, in: timeZone))" }
        if autoMissed { text += " (no answer)" }
        return text
    }
}

/// The dose history as CSV (RFC 4180), for a doctor or a spreadsheet (`chime export doses`).
public enum DoseExport {
    /// The columns, in order.
    public static let columns = ["date", "time", "zone", "medication", "amount", "unit", "status", "taken_at", "notes", "dose_id"]

    /// The header and one record per dose: date and time local in the dose's zone, taken_at ISO
    /// 8601 UTC; the amount the dose's own (a taper's amount of its day), else from `medications`
    /// (by id; empty for one not there), and the unit from `medications`.
    public static func csv(_ entries: [DoseEntry], medications: [Int64: Medication]) -> String {
        var text = CSV.row(columns)
        for entry in entries {
            let dose = entry.dose
            let zone = dose.timeZone
            let medication = medications[dose.medicationID]
            text += CSV.row([
                CivilDay.format(CivilDay.of(dose.scheduled, in: zone)),
                TimeText.clock(dose.scheduled, in: zone),
                dose.zone,
                entry.medicationName,
                (entry.amount ?? medication?.amount).map { Medication.format(amount: $0) } ?? "",
                medication?.unit ?? "",
                dose.status.rawValue,
                dose.takenAt.map(TimeText.iso) ?? "",
                dose.notes,
                String(dose.id),
            ])
        }
        return text
    }
}

/// RFC 4180: fields with a comma, a double quote or a line break are quoted, quotes doubled;
/// records end with CRLF.
public enum CSV {
    public static func field(_ text: String) -> String {
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" || $0 == "\r\n" }) else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    public static func row(_ fields: [String]) -> String {
        fields.map(field).joined(separator: ",") + "\r\n"
    }
}

/// Adherence per day as text bars (`chime adherence`).
public enum AdherenceChart {
    /// One row per day, newest first (the newest 31 when there are more): the date, a bar of
    /// the day's rate fitted to `columns`, the rate and taken/counted; "—" for a day with
    /// nothing counted.
    public static func lines(_ days: [(day: Int, adherence: Adherence)], columns: Int) -> [String] {
        let shown = days.suffix(31)
        var lines = [shown.count < days.count ? "Per day, the last \(shown.count) of \(days.count) days" : "Per day"]
        // "  Sun 11-22  " + bar + "  100%  12/12"
        let barWidth = max(5, min(40, columns - 30))
        let weekdays = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
        for (day, adherence) in shown.reversed() {
            let civil = ZoneMath.civilFromDays(day)
            let label = "\(weekdays[ZoneMath.isoWeekday(dayNumber: day) - 1]) " + String(format: "%02d-%02d", civil.month, civil.day)
            guard let rate = adherence.rate else {
                lines.append("  \(label)  —" + (adherence.pending > 0 ? "  (\(adherence.pending) pending)" : ""))
                continue
            }
            let filled = Int((rate * Double(barWidth)).rounded())
            let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: barWidth - filled)
            let percent = adherence.percentText
            lines.append(
                "  \(label)  \(bar)  " + String(repeating: " ", count: max(0, 4 - percent.count)) + percent
                    + "  \(adherence.taken)/\(adherence.counted)"
            )
        }
        return lines
    }
}

extension MedicationDetail {
    /// How many whole days the stock lasts at its enabled schedules' pace; nil without a
    /// stock, or with nothing scheduled (as needed only).
    public var stockDaysLeft: Int? {
        guard let stock = medication.stock else { return nil }
        let perDay = schedules.filter(\.isEnabled).map(\.dosesPerDay).reduce(0, +)
        guard perDay > 0 else { return nil }
        return Int((Double(stock) / perDay).rounded(.down))
    }
}

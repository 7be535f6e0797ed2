import ChimeCore
import Foundation
import GRDB

/// A dose's status (the seed's `DoseHistory.Status`).
public enum DoseStatus: String, Sendable, Hashable, Codable, CaseIterable {
    case pending, taken, missed, skipped

    /// "Pending", "Taken"…
    public var displayName: String { rawValue.prefix(1).uppercased() + rawValue.dropFirst() }

    /// `taken`, `skip`/`skipped`, `miss`/`missed`, `pending`. - Throws: `.usage` naming the value.
    public static func parse(_ text: String) throws(ChimeError) -> DoseStatus {
        switch text.lowercased() {
        case "pending": .pending
        case "taken", "take": .taken
        case "missed", "miss": .missed
        case "skipped", "skip": .skipped
        default: throw ChimeError.invalid("status", text, expected: "pending, taken, missed or skipped")
        }
    }
}

/// One dose (the seed's `DoseHistory`): a scheduled occurrence, or an as-needed dose logged
/// when taken.
public struct Dose: Sendable, Hashable, Identifiable {
    public var id: Int64
    public var medicationID: Int64
    public var scheduleID: Int64?
    /// The alert's identifier, `med-{scheduleID}-{yyyyMMdd-HHmm}`; nil for an as-needed dose.
    public var occurrence: String?
    public var scheduled: Date
    /// The zone it was scheduled in (its local time is read there).
    public var zone: String
    public var status: DoseStatus
    public var takenAt: Date?
    public var notes: String
    /// Overdue from here (its time plus the grace window) while pending.
    public var overdueAt: Date
    /// Missed by itself from here while pending and never answered.
    public var missedAt: Date
    /// Marked missed by Chime, not by a person.
    public var autoMissed: Bool
    public var snoozeUntil: Date?
    public var updatedAt: Date

    /// Pending past its grace window.
    public func isOverdue(at now: Date) -> Bool { status == .pending && now >= overdueAt }

    /// The zone its local time is shown in.
    public var timeZone: TimeZone { TimeZone(identifier: zone) ?? .current }

    static let columns =
        "d.id, d.medication_id, d.schedule_id, d.occurrence, d.scheduled_us, d.zone, d.status, d.taken_us, d.notes, d.overdue_us, d.missed_us, d.auto_missed, d.snooze_until_us, d.updated_us"

    /// Reads ``columns`` from position `base` on.
    init(row: Row, from base: Int = 0) {
        id = row[base]
        medicationID = row[base + 1]
        scheduleID = row[base + 2]
        occurrence = row[base + 3]
        scheduled = Date(micros: row[base + 4])
        zone = row[base + 5]
        status = DoseStatus(rawValue: row[base + 6]) ?? .pending
        takenAt = (row[base + 7] as Int64?).map(Date.init(micros:))
        notes = row[base + 8]
        overdueAt = Date(micros: row[base + 9])
        missedAt = Date(micros: row[base + 10])
        autoMissed = row[base + 11]
        snoozeUntil = (row[base + 12] as Int64?).map(Date.init(micros:))
        updatedAt = Date(micros: row[base + 13])
    }
}

/// A dose with what is shown beside it: its medication's name and label.
public struct DoseEntry: Sendable, Hashable {
    public var dose: Dose
    public var medicationName: String
    /// "Aspirin (100 mg)".
    public var label: String
    /// "Aspirin 100 mg": what its alert's title says.
    public var title: String = ""
    /// The amount of this dose (a taper's amount of its day), when read from the store.
    public var amount: Double? = nil
}

/// The identifier of a dose occurrence: `med-{scheduleID}-{yyyyMMdd-HHmm}`, its local date and
/// time as scheduled (on a spring-forward day, the time asked for: 02:30, fired at 03:30).
public enum DoseOccurrenceID {
    public static func make(scheduleID: Int64, local: CivilDateTime) -> String {
        let date = zeroPadded(local.year, 4) + zeroPadded(local.month, 2) + zeroPadded(local.day, 2)
        return "med-\(scheduleID)-\(date)-\(zeroPadded(local.hour, 2))\(zeroPadded(local.minute, 2))"
    }

    /// Whether `text` has the form of an occurrence identifier.
    public static func matches(_ text: String) -> Bool {
        let parts = text.split(separator: "-")
        return parts.count == 4 && parts[0] == "med" && Int64(parts[1]) != nil && parts[2].count == 8 && Int(parts[2]) != nil
            && parts[3].count == 4 && Int(parts[3]) != nil
    }

    /// The local date and time an occurrence was scheduled for, as the rule asked for it.
    static func nominal(_ occurrence: Occurrence, in zone: TimeZone) -> CivilDateTime {
        let local = ZoneMath.civil(occurrence.instant, in: zone).local
        guard case .shiftedForward(let seconds, _) = occurrence.resolution else { return local }
        let naive = local.naiveSeconds - seconds
        let days = naive >= 0 ? naive / 86_400 : (naive - 86_399) / 86_400
        let rest = naive - days * 86_400
        let time = LocalTime(hour: rest / 3_600, minute: rest % 3_600 / 60) ?? .midnight
        return CivilDateTime(dayNumber: days, time: time)
    }
}

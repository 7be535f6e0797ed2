import ChimeCore
import ChimeStore
import Foundation
import GRDB

/// Which doses to show (the seed's filters).
public struct DoseFilter: Sendable, Hashable {
    /// Scheduled at or after `from` and before `to` (nil: open).
    public var from: Date?
    public var to: Date?
    public var status: DoseStatus?
    /// A medication's number or name.
    public var medication: String?
    /// Only pending doses past their grace window.
    public var overdueOnly = false
    /// Only doses already due (no future ones).
    public var dueOnly = false

    public init(from: Date? = nil, to: Date? = nil, status: DoseStatus? = nil, medication: String? = nil) {
        self.from = from
        self.to = to
        self.status = status
        self.medication = medication
    }
}

/// Local-day date ranges: the seed's "Last 7 Days", "Last 30 Days", "This Month", "Last Month".
public enum DoseRange {
    /// From the start of the day `days - 1` days ago to the end of today.
    public static func last(days: Int, now: Date, zone: TimeZone) -> (from: Date, to: Date) {
        let today = CivilDay.of(now, in: zone)
        return (start(of: today - max(days, 1) + 1, zone), start(of: today + 1, zone))
    }

    /// This calendar month (`monthsBack` 0), or an earlier one.
    public static func month(monthsBack: Int, now: Date, zone: TimeZone) -> (from: Date, to: Date) {
        let local = ZoneMath.civil(now, in: zone).local
        var year = local.year
        var month = local.month - monthsBack
        while month < 1 {
            month += 12
            year -= 1
        }
        let first = ZoneMath.daysFromCivil(year: year, month: month, day: 1)
        return (start(of: first, zone), start(of: first + ZoneMath.daysInMonth(year: year, month: month), zone))
    }

    /// Local midnight of day number `day` (the first instant of the day, also on a DST day).
    public static func start(of day: Int, _ zone: TimeZone) -> Date {
        ZoneMath.resolve(CivilDateTime(dayNumber: day, time: .midnight), in: zone).instant
    }
}

/// Adherence counts: taken ÷ (taken + missed + skipped) over doses already due. Pending and
/// future doses are not in the denominator (the seed's gap), skipped ones are shown on their own.
public struct Adherence: Sendable, Hashable, Codable {
    public var taken = 0
    public var missed = 0
    public var skipped = 0
    /// Due and not answered yet: shown, not counted.
    public var pending = 0

    public init(taken: Int = 0, missed: Int = 0, skipped: Int = 0, pending: Int = 0) {
        self.taken = taken
        self.missed = missed
        self.skipped = skipped
        self.pending = pending
    }

    /// The doses that count: answered or missed.
    public var counted: Int { taken + missed + skipped }
    /// Taken ÷ counted, 0…1; nil when nothing counts yet (no dose due, or all pending).
    public var rate: Double? { counted == 0 ? nil : Double(taken) / Double(counted) }

    mutating func add(_ status: DoseStatus, _ count: Int = 1) {
        switch status {
        case .taken: taken += count
        case .missed: missed += count
        case .skipped: skipped += count
        case .pending: pending += count
        }
    }

    /// "92%" or "—" when nothing counts.
    public var percentText: String { rate.map { String(Int(($0 * 100).rounded())) + "%" } ?? "—" }
}

/// Adherence over a range: overall, per medication, per local day.
public struct AdherenceReport: Sendable, Hashable {
    public struct PerMedication: Sendable, Hashable {
        public var medicationID: Int64
        public var name: String
        public var adherence: Adherence
    }
    public var from: Date?
    public var to: Date
    public var overall: Adherence
    public var medications: [PerMedication]
    /// Day numbers (local) from the range's first day to its last, each with its adherence.
    public var days: [(day: Int, adherence: Adherence)]

    public static func == (a: AdherenceReport, b: AdherenceReport) -> Bool {
        a.from == b.from && a.to == b.to && a.overall == b.overall && a.medications == b.medications
            && a.days.map(\.day) == b.days.map(\.day) && a.days.map(\.adherence) == b.days.map(\.adherence)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(overall)
        hasher.combine(medications)
    }
}

extension DoseBook {
    /// Settles, then reads: what every history command does first. A store that takes no
    /// writes (read-only, full) is still read, as last settled.
    func settledRead<T>(_ body: (Database, Date, TimeZone) throws -> T) throws(ChimeError) -> T {
        let now = clock.now()
        let zone = systemZone()
        do {
            try store.write { db in _ = try Self.settle(now: now, zone: zone, repeats: repeats, in: db) }
        } catch  where error.code == .store {
            // Read what is there; the statuses are as the last settle left them.
        }
        return try store.read { db in try body(db, now, zone) }
    }

    /// Doses matching `filter`, in time order (scheduled time, then medication).
    public func doses(_ filter: DoseFilter, limit: Int? = nil) throws(ChimeError) -> [DoseEntry] {
        try settledRead { db, now, _ in
            var conditions: [String] = []
            var arguments: [(any DatabaseValueConvertible)?] = []
            if let from = filter.from {
                conditions.append("d.scheduled_us >= ?")
                arguments.append(from.micros)
            }
            if let to = filter.to {
                conditions.append("d.scheduled_us < ?")
                arguments.append(to.micros)
            }
            if filter.dueOnly {
                conditions.append("d.scheduled_us <= ?")
                arguments.append(now.micros)
            }
            if let status = filter.status {
                conditions.append("d.status = ?")
                arguments.append(status.rawValue)
            }
            if filter.overdueOnly {
                conditions.append("d.status = 'pending' AND d.overdue_us <= ?")
                arguments.append(now.micros)
            }
            if let reference = filter.medication {
                guard let medication = try Self.findMedication(reference, in: db) else {
                    throw try Self.medicationNotFound(reference, in: db)
                }
                conditions.append("d.medication_id = ?")
                arguments.append(medication.id)
            }
            return try Self.entries(
                where: conditions.isEmpty ? "1" : conditions.joined(separator: " AND "),
                StatementArguments(arguments),
                order: "d.scheduled_us, m.name COLLATE NOCASE",
                limit: limit,
                in: db
            )
        }
    }

    /// Pending doses past their grace window, oldest first (the seed's overdue doses, with the
    /// grace window it lacked).
    public func overdueDoses() throws(ChimeError) -> [DoseEntry] {
        var filter = DoseFilter()
        filter.overdueOnly = true
        return try doses(filter)
    }

    /// Adherence over `[from, to)` (from nil: all history), of one medication or all, counting
    /// only doses already due, and never as-needed ones (they are logged when taken).
    public func adherence(from: Date?, to: Date? = nil, medication reference: String? = nil) throws(ChimeError) -> AdherenceReport {
        try settledRead { db, now, zone in
            var medicationID: Int64?
            if let reference {
                guard let medication = try Self.findMedication(reference, in: db) else {
                    throw try Self.medicationNotFound(reference, in: db)
                }
                medicationID = medication.id
            }
            let end = min(to ?? now, now)
            let names = Dictionary(
                try Row.fetchAll(db, sql: "SELECT id, name FROM medication").map { ($0[0] as Int64, $0[1] as String) },
                uniquingKeysWith: { first, _ in first }
            )
            // The history index alone (scheduled time, as-needed, medication, status): one pass.
            let rows = try Row.fetchCursor(
                db,
                sql: """
                    SELECT scheduled_us, medication_id, status FROM dose INDEXED BY dose_by_time
                    WHERE scheduled_us >= ?1 AND scheduled_us <= ?2 AND as_needed = 0 AND (?3 IS NULL OR medication_id = ?3)
                    """,
                arguments: [from?.micros ?? Int64.min, end.micros, medicationID]
            )
            var overall = Adherence()
            var perMedication: [Int64: Adherence] = [:]
            var perDay: [Int: Adherence] = [:]
            var days = LocalDays(zone: zone)
            var firstDay: Int?
            while let row = try rows.next() {
                let micros: Int64 = row[0]
                guard let status = DoseStatus(rawValue: row[2]) else { continue }
                overall.add(status)
                perMedication[row[1], default: Adherence()].add(status)
                let day = days.number(of: Date(micros: micros))
                if firstDay == nil { firstDay = day }
                perDay[day, default: Adherence()].add(status)
            }
            let lastDay = CivilDay.of(end, in: zone)
            // No day before the first medication (of the one asked for) is drawn: nothing could be due then.
            let firstAdded = try Int64.fetchOne(
                db,
                sql: "SELECT min(created_us) FROM medication WHERE ?1 IS NULL OR id = ?1",
                arguments: [medicationID]
            ).map { CivilDay.of(Date(micros: $0), in: zone) }
            let dayList: [(day: Int, adherence: Adherence)]
            if let earliest = [firstDay, firstAdded].compactMap({ $0 }).min() {
                let startDay = max(from.map { CivilDay.of($0, in: zone) } ?? earliest, earliest)
                dayList = startDay <= lastDay ? (startDay...lastDay).map { ($0, perDay[$0] ?? Adherence()) } : []
            } else {
                dayList = []
            }
            let medications = perMedication.map { id, adherence in
                AdherenceReport.PerMedication(medicationID: id, name: names[id] ?? "#\(id)", adherence: adherence)
            }.sorted { $0.name.localizedCaseInsensitiveCompare($1.name) == .orderedAscending }
            return AdherenceReport(from: from, to: end, overall: overall, medications: medications, days: dayList)
        }
    }
}

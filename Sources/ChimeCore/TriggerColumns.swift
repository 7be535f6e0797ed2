import Foundation

/// A ``Trigger`` spread over plain columns, so that a batch insert needs no encoder and the
/// store can be read with the sqlite3 shell (or psql). A monthly or yearly rule is a `weekly`
/// row narrowed by `by_month_day` (and `by_month`); a rule's end is `until_day` or `rule_count`.
/// The one encoding of a trigger in a store: ChimeStore's SQLite tables and ChimePostgres's
/// tables both have these columns (`trigger_kind`, `at_us`, `times`, `days`, `zone`,
/// `interval_s`, `anchor_us`, `by_month`, `by_month_day`, `until_day`, `rule_count`,
/// `count_start_us`).
package struct TriggerColumns: Sendable, Hashable {
    package var kind: String
    package var atMicros: Int64?
    package var times: String?
    package var days: Int?
    package var zone: String?
    package var intervalSeconds: Int64?
    package var anchorMicros: Int64?
    package var byMonth: Int?
    package var byMonthDay: Int?
    package var untilDay: Int?
    package var ruleCount: Int?
    package var countStartMicros: Int64?

    /// The columns as read back from a store.
    package init(
        kind: String,
        atMicros: Int64?,
        times: String?,
        days: Int?,
        zone: String?,
        intervalSeconds: Int64?,
        anchorMicros: Int64?,
        byMonth: Int?,
        byMonthDay: Int?,
        untilDay: Int?,
        ruleCount: Int?,
        countStartMicros: Int64?
    ) {
        self.kind = kind
        self.atMicros = atMicros
        self.times = times
        self.days = days
        self.zone = zone
        self.intervalSeconds = intervalSeconds
        self.anchorMicros = anchorMicros
        self.byMonth = byMonth
        self.byMonthDay = byMonthDay
        self.untilDay = untilDay
        self.ruleCount = ruleCount
        self.countStartMicros = countStartMicros
    }

    package init(_ trigger: Trigger) {
        var rule = trigger
        if case .bounded(let base, let end) = trigger {
            rule = base
            switch end {
            case .until(let day): untilDay = day
            case .count(let count, let start): (ruleCount, countStartMicros) = (count, start.micros)
            }
        }
        switch rule {
        case .once(let date):
            kind = "once"
            atMicros = date.micros
        case .weekly(let times, let days, let zone):
            kind = "weekly"
            self.times = times.map(\.description).joined(separator: ",")
            self.days = Int(days.rawValue)
            if case .fixed(let identifier) = zone { self.zone = identifier }
        case .interval(let seconds, let anchor):
            kind = "interval"
            intervalSeconds = seconds
            anchorMicros = anchor.micros
        case .calendar(let rule):
            kind = "weekly"
            times = rule.times.map(\.description).joined(separator: ",")
            days = Int(WeekdaySet.everyDay.rawValue)
            if case .fixed(let identifier) = rule.zone { zone = identifier }
            byMonth = rule.month
            byMonthDay = rule.day
        case .bounded:
            // A rule bounded twice is never made (TimeParsing makes one end at most).
            preconditionFailure("a bounded rule inside a bounded rule")
        }
    }

    /// The trigger these columns encode.
    /// - Throws: `.store` for an unknown kind or a column the kind needs left empty.
    package func trigger() throws(ChimeError) -> Trigger {
        func need<T>(_ value: T?, _ column: String) throws(ChimeError) -> T {
            guard let value else { throw ChimeError(.store, "a '\(kind)' reminder without \(column) in the store") }
            return value
        }
        let base: Trigger
        switch kind {
        case "once":
            return .once(Date(micros: try need(atMicros, "at_us")))
        case "weekly":
            let times = try LocalTime.parseList(try need(self.times, "times"))
            let zone: ZoneRule = self.zone.map { .fixed($0) } ?? .floating
            if let day = byMonthDay {
                base = .calendar(CalendarRule(month: byMonth, day: day, times: times, zone: zone))
            } else {
                base = .weekly(times: times, days: WeekdaySet(rawValue: UInt8(try need(days, "days"))), zone: zone)
            }
        case "interval":
            base = .interval(seconds: try need(intervalSeconds, "interval_s"), anchor: Date(micros: try need(anchorMicros, "anchor_us")))
        case let other:
            throw ChimeError(.store, "unknown trigger kind '\(other)' in the store")
        }
        if let untilDay { return .bounded(base, .until(day: untilDay)) }
        if let ruleCount, let countStartMicros {
            return .bounded(base, .count(ruleCount, start: Date(micros: countStartMicros)))
        }
        return base
    }
}

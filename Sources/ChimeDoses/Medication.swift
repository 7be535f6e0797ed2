import ChimeCore
import Foundation

/// A medication (the seed's `Medication`): what is taken, how much, and from when to when.
public struct Medication: Sendable, Hashable, Identifiable {
    public var id: Int64
    public var name: String
    /// The dosage amount, above 0 (`100` of `mg`).
    public var amount: Double
    public var unit: String
    public var instructions: String
    public var prescribedBy: String
    /// The first and last local days it is taken (civil day numbers, see ``CivilDay``).
    public var startDay: Int
    public var endDay: Int?
    public var isActive: Bool
    /// A dose is overdue this long after its time, and missed by itself ``missedAfter`` after
    /// it (or when the next dose of this medication falls due, whichever comes first).
    public var grace: Int
    public var missedAfter: Int
    /// Doses left, when counted: each dose taken takes one.
    public var stock: Int?
    /// A refill reminder comes this many days before the stock runs out.
    public var refillDays: Int
    public var createdAt: Date
    /// The amount changes on dates (``amount`` is the first step's); nil: ``amount`` every day.
    public var taper: DoseTaper? = nil

    /// "Aspirin (100 mg)": the alert's body, as the seed wrote it.
    public var label: String { "\(name) (\(Medication.format(amount: amount)) \(unit))" }
    /// "Aspirin 100 mg": the title of its dose alerts, so that two alerts (and a server's menu of
    /// their buttons) say which medication each is for.
    public var alertTitle: String { "\(name) \(Medication.format(amount: amount)) \(unit)" }

    /// `100`, `2.5`, `0.125`: no trailing zeros.
    public static func format(amount: Double) -> String {
        if amount == amount.rounded(), abs(amount) < 1e15 { return String(Int64(amount)) }
        var text = String(format: "%.6f", amount)
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text
    }
}

/// How often a schedule's doses fall due (the seed's frequencies).
public enum DoseFrequency: String, Sendable, Hashable, Codable, CaseIterable {
    /// Every day, at each of its times.
    case daily
    /// On some days of the week.
    case weekly
    /// No reminders: doses are logged when taken.
    case asNeeded = "as-needed"
}

/// When a medication is taken (the seed's `Schedule`, with several times of day).
public struct DoseSchedule: Sendable, Hashable, Identifiable {
    public var id: Int64
    public var medicationID: Int64
    public var frequency: DoseFrequency
    /// Sorted; empty for as-needed.
    public var times: [LocalTime]
    public var days: WeekdaySet
    /// Floating (the system zone: 08:00 stays 08:00 after travel) or a fixed zone.
    public var zone: ZoneRule
    /// As-needed: the shortest safe time between two doses, in seconds.
    public var minInterval: Int?
    public var isEnabled: Bool
    public var createdAt: Date
    /// Every N days or an on/off cycle (its times on the days the rule includes, ``days`` is
    /// every day); nil: the days of the week in ``days``.
    public var dayRule: DoseDayRule? = nil
    /// Each dose falls due this long (seconds) after the last dose taken, not at clock times
    /// (``times`` is empty): `--after-last 6h`.
    public var afterLast: Int? = nil
    /// At most this many doses taken in any 24 hours (as needed or after-last): `--max 4/day`.
    public var maxPerDay: Int? = nil

    /// The rule its doses follow on the days they fall on (every day for a ``dayRule``, which
    /// ``DoseBook`` applies on top); nil for as-needed.
    public var trigger: Trigger? {
        frequency == .asNeeded || times.isEmpty ? nil : .weekly(times: times, days: days, zone: zone)
    }

    /// "every day 08:00,20:00", "every mon-fri 08:00 (Europe/Berlin)", "as needed (at least 6h apart)".
    public var summary: String {
        let maximum = maxPerDay.map { ", at most \($0) in 24h" } ?? ""
        if let afterLast { return "\(Trigger.formatInterval(Int64(afterLast))) after each dose taken" + maximum }
        guard let trigger else {
            return (minInterval.map { "as needed (at least \(Trigger.formatInterval(Int64($0))) apart)" } ?? "as needed") + maximum
        }
        guard let dayRule else { return trigger.summary }
        var text = dayRule.summary + " " + times.map(\.description).joined(separator: ",")
        if case .fixed(let id) = zone { text += " (\(id))" }
        return text
    }

    /// Doses a day on average (for how long the stock lasts).
    public var dosesPerDay: Double {
        if let afterLast { return Double(min(maxPerDay ?? Int.max, 86_400 / max(afterLast, 1))) }
        guard trigger != nil else { return 0 }
        if let dayRule { return Double(times.count) * dayRule.shareOfDays }
        return Double(times.count * days.count) / 7
    }
}

/// The days a schedule's times fall on when not days of the week: every N days, or cycles of
/// days on and days off, counted in calendar days (local) from an anchor day.
public enum DoseDayRule: Sendable, Hashable {
    /// Every `days` days from the day `from` (a civil day number, see ``CivilDay``): `--every 3d`.
    case every(days: Int, from: Int)
    /// `on` days on, then `off` days off, repeating from the day `from`: `--cycle 21/7`.
    case cycle(on: Int, off: Int, from: Int)

    /// What `--every` accepts.
    public static let everyDays = 2...365
    /// What each half of `--cycle` accepts.
    public static let cycleDays = 1...365
    static let everyExpected = "a number of days from 2 to 365, such as 3d (every third day), or weeks such as 2w"
    static let cycleExpected = "ON/OFF days, each from 1 to 365, e.g. 21/7 (21 days on, 7 off)"

    /// The first day the rule counts from.
    public var anchor: Int {
        switch self {
        case .every(_, let from), .cycle(_, _, let from): from
        }
    }

    /// The same rule counted from `day`.
    public func anchored(at day: Int) -> DoseDayRule {
        switch self {
        case .every(let days, _): .every(days: days, from: day)
        case .cycle(let on, let off, _): .cycle(on: on, off: off, from: day)
        }
    }

    /// Whether its doses fall on `day` (never before the anchor).
    public func includes(_ day: Int) -> Bool {
        let offset = day - anchor
        guard offset >= 0 else { return false }
        switch self {
        case .every(let days, _): return offset % days == 0
        case .cycle(let on, let off, _): return offset % (on + off) < on
        }
    }

    /// The first day after `day` that the rule includes.
    public func nextDay(after day: Int) -> Int {
        guard day >= anchor else { return anchor }
        let offset = day + 1 - anchor
        switch self {
        case .every(let days, _):
            return anchor + (offset + days - 1) / days * days
        case .cycle(let on, let off, _):
            let rest = offset % (on + off)
            return rest < on ? day + 1 : day + 1 + (on + off - rest)
        }
    }

    /// The share of days with doses (for how long the stock lasts).
    public var shareOfDays: Double {
        switch self {
        case .every(let days, _): 1 / Double(days)
        case .cycle(let on, let off, _): Double(on) / Double(on + off)
        }
    }

    /// "every 3 days from 2026-12-01", "21 days on, 7 off from 2026-12-01".
    public var summary: String {
        switch self {
        case .every(let days, let from): "every \(days) days from \(CivilDay.format(from))"
        case .cycle(let on, let off, let from): "\(on) days on, \(off) off from \(CivilDay.format(from))"
        }
    }

    /// `--every`: "3d", "3", "3 days", "2w" (14 days), from 2 to 365 days.
    /// - Throws: `.usage` naming the value.
    public static func every(_ text: String) throws(ChimeError) -> Int {
        var rest = text.trimmingCharacters(in: .whitespaces).lowercased()
        var factor = 1
        for (suffix, days) in [("days", 1), ("day", 1), ("d", 1), ("weeks", 7), ("week", 7), ("w", 7)] where rest.hasSuffix(suffix) {
            rest = String(rest.dropLast(suffix.count)).trimmingCharacters(in: .whitespaces)
            factor = days
            break
        }
        guard !rest.isEmpty, rest.count <= 3, rest.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let count = Int(rest),
            everyDays.contains(count * factor)
        else { throw ChimeError.invalid("every", text, expected: everyExpected) }
        return count * factor
    }

    /// `--cycle`: "21/7" (days on / days off), each from 1 to 365. - Throws: `.usage` naming the value.
    public static func cycle(_ text: String) throws(ChimeError) -> (on: Int, off: Int) {
        let parts = text.trimmingCharacters(in: .whitespaces).split(separator: "/", omittingEmptySubsequences: false)
        func days(_ part: Substring) -> Int? {
            let trimmed = part.trimmingCharacters(in: .whitespaces)
            guard !trimmed.isEmpty, trimmed.count <= 3, trimmed.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let value = Int(trimmed),
                cycleDays.contains(value)
            else { return nil }
            return value
        }
        guard parts.count == 2, let on = days(parts[0]), let off = days(parts[1]) else {
            throw ChimeError.invalid("cycle", text, expected: cycleExpected)
        }
        return (on, off)
    }
}

extension WeekdaySet {
    /// How many days are in the set.
    public var count: Int { rawValue.nonzeroBitCount }
}

/// A medication as typed: checked by ``validated()`` before anything is stored.
public struct MedicationDraft: Sendable, Hashable {
    public var name: String
    /// The amount as typed, so that "abc" can be named in the error.
    public var amount: String
    public var unit: String
    public var instructions: String = ""
    public var prescribedBy: String = ""
    public var startDay: Int
    public var endDay: Int?
    public var grace: Int = DoseRules.defaultGrace
    public var missedAfter: Int = DoseRules.defaultMissedAfter
    public var stock: Int?
    public var refillDays: Int = DoseRules.defaultRefillDays
    /// The amount changes on dates; its first step's amount is the medication's (``amount``
    /// may then be empty). A taper that stops sets the end date to its last day.
    public var taper: DoseTaper? = nil

    public init(name: String, amount: String, unit: String, startDay: Int) {
        self.name = name
        self.amount = amount
        self.unit = unit
        self.startDay = startDay
    }

    /// What an amount may be.
    static let amountExpected = "a plain decimal number from 0.000001 to 1000000 with at most 6 decimal places, such as 100 or 2.5"

    /// A dose's amount: plain decimal digits with an optional fraction of at most 6 digits
    /// (what ``Medication/format(amount:)`` shows), from 0.000001 to 1,000,000. Not `1e-320`
    /// (shown as "0"), `0x10` (read as 16 by `Double`), `inf`, `-5` or `.5`.
    /// - Throws: `.usage` naming the amount.
    public static func amount(_ text: String) throws(ChimeError) -> Double {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let parts = trimmed.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        func isDigits(_ part: Substring) -> Bool { !part.isEmpty && part.utf8.allSatisfy { (0x30...0x39).contains($0) } }
        guard isDigits(parts[0]), parts.count == 1 || (isDigits(parts[1]) && parts[1].count <= 6),
            parts[0].drop(while: { $0 == "0" }).count <= 7, let value = Double(trimmed)
        else { throw ChimeError.invalid("amount", text, expected: amountExpected) }
        guard value > 0, value <= 1_000_000 else { throw ChimeError.invalid("amount", text, expected: amountExpected) }
        return value
    }

    /// The seed's rules, one by one; the error names the field and the rule.
    /// - Returns: the draft trimmed, and its amount read.
    public func validated() throws(ChimeError) -> (draft: MedicationDraft, amount: Double) {
        var copy = self
        copy.name = name.trimmingCharacters(in: .whitespacesAndNewlines)
        copy.unit = unit.trimmingCharacters(in: .whitespacesAndNewlines)
        copy.instructions = instructions.trimmingCharacters(in: .whitespacesAndNewlines)
        copy.prescribedBy = prescribedBy.trimmingCharacters(in: .whitespacesAndNewlines)
        if copy.name.isEmpty { throw ChimeError.invalid("name", name, expected: "a name (required)") }
        if copy.name.count > 100 {
            throw ChimeError(.usage, "invalid name '\(copy.name.prefix(40))…': expected at most 100 characters (it has \(copy.name.count))")
        }
        if let taper, !amount.trimmingCharacters(in: .whitespaces).isEmpty, let first = taper.steps.first,
            (try? Self.amount(amount)) != first.amount
        {
            throw ChimeError(.usage, "--amount and --taper contradict each other: the taper gives the amount of each day")
        }
        let value: Double
        if let first = taper?.steps.first { value = first.amount } else { value = try Self.amount(amount) }
        if copy.unit.isEmpty { throw ChimeError.invalid("unit", unit, expected: "a unit such as mg, ml or tablet (required)") }
        if copy.unit.count > 20 { throw ChimeError.invalid("unit", unit, expected: "at most 20 characters") }
        if copy.instructions.count > 500 {
            throw ChimeError(.usage, "invalid instructions '\(copy.instructions.prefix(40))…': expected at most 500 characters")
        }
        if copy.prescribedBy.count > 100 { throw ChimeError.invalid("prescribed by", prescribedBy, expected: "at most 100 characters") }
        try UserText.check(copy.name, field: "name", limit: 100)
        try UserText.check(copy.unit, field: "unit", limit: 20)
        try UserText.check(copy.instructions, field: "instructions", limit: 500)
        try UserText.check(copy.prescribedBy, field: "prescribed by", limit: 100)
        if let taper {
            for step in taper.steps {
                if let typed = step.unit, typed.lowercased() != copy.unit.lowercased() {
                    let piece = Medication.format(amount: step.amount) + typed
                    throw ChimeError.invalid("taper piece", piece, expected: "amounts in the medication's unit, \(copy.unit)")
                }
            }
            copy.taper?.steps = taper.steps.map { DoseTaper.Step(amount: $0.amount, until: $0.until) }
            if let last = taper.lastDay {
                if let end = endDay, end != last {
                    throw ChimeError(
                        .usage,
                        "--end and the taper's 'then stop' both end it: give one (the taper ends \(CivilDay.format(last)))"
                    )
                }
                if last <= startDay {
                    throw ChimeError.invalid(
                        "taper",
                        taper.summary(unit: copy.unit),
                        expected: "a last date after the start date \(CivilDay.format(startDay))"
                    )
                }
                copy.endDay = last
            }
        }
        if let end = copy.endDay, end <= startDay {
            throw ChimeError.invalid(
                "end date",
                CivilDay.format(end),
                expected: "a date after the start date \(CivilDay.format(startDay))"
            )
        }
        if !(60...86_400).contains(grace) {
            throw ChimeError.invalid("grace", Trigger.formatInterval(Int64(grace)), expected: "from 1m to 24h (default 30m)")
        }
        if !(grace...(7 * 86_400)).contains(missedAfter) {
            throw ChimeError.invalid(
                "missed after",
                Trigger.formatInterval(Int64(missedAfter)),
                expected: "at least the grace window (\(Trigger.formatInterval(Int64(grace)))) and at most 7d (default 4h)"
            )
        }
        if let stock, stock < 0 { throw ChimeError.invalid("stock", String(stock), expected: "a count of doses, 0 or more") }
        if !(0...365).contains(refillDays) {
            throw ChimeError.invalid("refill days", String(refillDays), expected: "a number of days from 0 to 365 (default 7)")
        }
        return (copy, value)
    }
}

/// A schedule as typed.
public struct ScheduleDraft: Sendable, Hashable {
    public var times: [LocalTime]
    public var days: WeekdaySet
    public var zone: ZoneRule
    public var asNeeded: Bool
    public var minInterval: Int?
    /// Every N days or an on/off cycle instead of days of the week.
    public var dayRule: DoseDayRule?
    /// Each dose this long (seconds) after the last one taken, not at times (`--after-last`).
    public var afterLast: Int? = nil
    /// At most this many doses taken in any 24 hours (`--max`): as needed or after-last.
    public var maxPerDay: Int? = nil

    public init(
        times: [LocalTime],
        days: WeekdaySet = .everyDay,
        zone: ZoneRule = .floating,
        asNeeded: Bool = false,
        minInterval: Int? = nil,
        dayRule: DoseDayRule? = nil,
        afterLast: Int? = nil,
        maxPerDay: Int? = nil
    ) {
        self.times = times
        self.days = days
        self.zone = zone
        self.asNeeded = asNeeded
        self.minInterval = minInterval
        self.dayRule = dayRule
        self.afterLast = afterLast
        self.maxPerDay = maxPerDay
    }

    /// The refusal of two ways of choosing days at once.
    public static let exclusiveDays = ChimeError(
        .usage,
        "--every, --cycle and --days are mutually exclusive: choose the days one way (every N days, an on/off cycle, or days of the week)"
    )

    /// What `--after-last` accepts, in seconds.
    public static let afterLastSeconds = 60...(7 * 86_400)

    /// At least one day (the seed's rule) and, unless as needed, at least one time.
    public func validated() throws(ChimeError) -> ScheduleDraft {
        var copy = self
        copy.times = Array(Set(times)).sorted()
        if let maxPerDay {
            if asNeeded == false && afterLast == nil {
                throw ChimeError(
                    .usage,
                    "invalid schedule: --max is for --as-needed and --after-last medications, not doses at clock times"
                )
            }
            if !DoseMaximum.counts.contains(maxPerDay) {
                throw ChimeError.invalid("max", "\(maxPerDay)/day", expected: DoseMaximum.expected)
            }
        }
        if let afterLast {
            if asNeeded {
                throw ChimeError(
                    .usage,
                    "--after-last and --as-needed contradict each other: after-last doses come as alerts, as-needed ones are only logged"
                )
            }
            if !times.isEmpty {
                throw ChimeError(
                    .usage,
                    "--after-last and --at contradict each other: each dose comes \(Trigger.formatInterval(Int64(afterLast))) after the last one taken, not at clock times"
                )
            }
            if dayRule != nil || days != .everyDay || zone != .floating || minInterval != nil {
                throw ChimeError(.usage, "invalid schedule: --days, --every, --cycle, --zone and --min-interval are not for --after-last")
            }
            if !Self.afterLastSeconds.contains(afterLast) {
                throw ChimeError.invalid("after-last", Trigger.formatInterval(Int64(afterLast)), expected: "from 1m to 7d, such as 6h")
            }
            return copy
        }
        if asNeeded {
            if dayRule != nil {
                throw ChimeError(.usage, "invalid schedule: --every and --cycle are for scheduled medications, not --as-needed")
            }
            guard times.isEmpty else {
                throw ChimeError(.usage, "invalid schedule: an as-needed medication has no times (leave out --at, or --as-needed)")
            }
            if let minInterval, !(60...(7 * 86_400)).contains(minInterval) {
                throw ChimeError.invalid("min interval", Trigger.formatInterval(Int64(minInterval)), expected: "from 1m to 7d")
            }
            return copy
        }
        if copy.times.isEmpty {
            throw ChimeError(.usage, "missing times: give --at 08:00[,20:00…] (24-hour HH:MM), or --as-needed")
        }
        if days.isEmpty {
            throw ChimeError.invalid("days", "", expected: "at least one day: every day, weekdays, weekends, or days such as mon,wed,fri")
        }
        if minInterval != nil {
            throw ChimeError(.usage, "invalid schedule: --min-interval is for as-needed medications")
        }
        switch dayRule {
        case nil: break
        case .every(let interval, _):
            if days != .everyDay { throw Self.exclusiveDays }
            if !DoseDayRule.everyDays.contains(interval) {
                throw ChimeError.invalid("every", "\(interval)d", expected: DoseDayRule.everyExpected)
            }
        case .cycle(let on, let off, _):
            if days != .everyDay { throw Self.exclusiveDays }
            if !DoseDayRule.cycleDays.contains(on) || !DoseDayRule.cycleDays.contains(off) {
                throw ChimeError.invalid("cycle", "\(on)/\(off)", expected: DoseDayRule.cycleExpected)
            }
        }
        return copy
    }

    var frequency: DoseFrequency { asNeeded ? .asNeeded : (days == .everyDay || afterLast != nil ? .daily : .weekly) }
}

/// The defaults the issue and DESIGN.md set.
public enum DoseRules {
    /// Overdue 30 minutes after its time.
    public static let defaultGrace = 30 * 60
    /// Missed by itself 4 hours after its time (or at the next dose).
    public static let defaultMissedAfter = 4 * 3_600
    /// An unanswered alert is repeated every 15 minutes, at most 3 times.
    public static let repeatInterval = 15 * 60
    public static let maxRepeats = 3
    /// "Snooze 10 min".
    public static let snoozeMinutes = 10
    public static let defaultRefillDays = 7
}

/// How an unanswered dose alert repeats: every ``interval`` seconds, at most ``count`` times
/// (until the dose is missed). ``DoseRules`` by default; the config file may say otherwise.
public struct DoseRepeats: Sendable, Hashable {
    public var interval: Int
    public var count: Int

    public init(interval: Int = DoseRules.repeatInterval, count: Int = DoseRules.maxRepeats) {
        (self.interval, self.count) = (interval, count)
    }
}

/// A change to a medication's schedule as typed (`chime med add` and `med edit`): each field
/// given replaces the current schedule's, the others keep their values.
public struct ScheduleChange: Sendable, Hashable {
    public var times: [LocalTime]?
    public var days: WeekdaySet?
    public var zone: ZoneRule?
    /// Doses are logged when taken, with no reminders.
    public var asNeeded: Bool
    public var minInterval: Int?
    /// Every N days or an on/off cycle, replacing the days (of the week or the current rule's).
    public var dayRule: DoseDayRule?
    /// A new first day for the rule given, or for the current schedule's rule (`--start`).
    public var anchorDay: Int?
    /// Each dose this long after the last one taken (`--after-last`); kept from an after-last
    /// schedule unless times, days or as needed are given.
    public var afterLast: Int? = nil
    /// At most this many doses in 24 hours (`--max`); kept from the current schedule when not given.
    public var maxPerDay: Int? = nil

    public init(
        times: [LocalTime]? = nil,
        days: WeekdaySet? = nil,
        zone: ZoneRule? = nil,
        asNeeded: Bool = false,
        minInterval: Int? = nil,
        dayRule: DoseDayRule? = nil,
        anchorDay: Int? = nil
    ) {
        self.times = times
        self.days = days
        self.zone = zone
        self.asNeeded = asNeeded
        self.minInterval = minInterval
        self.dayRule = dayRule
        self.anchorDay = anchorDay
    }

    /// The schedule this change makes over `current` (nil: a new medication's schedule). An
    /// as-needed schedule stays as needed unless times are given; days and a zone are refused
    /// for an as-needed one.
    public func merged(over current: DoseSchedule? = nil) throws(ChimeError) -> ScheduleDraft {
        if days != nil && dayRule != nil { throw ScheduleDraft.exclusiveDays }
        let asNeeded = self.asNeeded || (current?.frequency == .asNeeded && times == nil && dayRule == nil && afterLast == nil)
        let maxPerDay = self.maxPerDay ?? current?.maxPerDay
        let keepsAfterLast = times == nil && days == nil && dayRule == nil && !self.asNeeded
        if let afterLast = self.afterLast ?? (keepsAfterLast ? current?.afterLast : nil) {
            var draft = ScheduleDraft(
                times: times ?? [],
                days: days ?? .everyDay,
                zone: zone ?? .floating,
                asNeeded: self.asNeeded,
                minInterval: minInterval,
                dayRule: dayRule
            )
            draft.afterLast = afterLast
            draft.maxPerDay = maxPerDay
            return draft
        }
        if asNeeded {
            if days != nil || zone != nil || dayRule != nil {
                throw ChimeError(
                    .usage,
                    "invalid schedule: --days, --every, --cycle and --zone are for scheduled medications, not --as-needed"
                )
            }
            var draft = ScheduleDraft(
                times: times ?? [],
                asNeeded: true,
                minInterval: minInterval ?? (current?.frequency == .asNeeded ? current?.minInterval : nil)
            )
            draft.maxPerDay = maxPerDay
            return draft
        }
        let scheduled = current?.frequency == .asNeeded ? nil : current
        // Days of the week given: no rule; a rule given: every day under it; neither: as now.
        var rule = days == nil ? dayRule ?? scheduled?.dayRule : nil
        if let anchorDay { rule = rule?.anchored(at: anchorDay) }
        var draft = ScheduleDraft(
            times: times ?? (scheduled?.afterLast == nil ? scheduled?.times : nil) ?? [],
            days: rule != nil ? .everyDay : days ?? scheduled?.days ?? .everyDay,
            zone: zone ?? scheduled?.zone ?? .floating,
            minInterval: minInterval,
            dayRule: rule
        )
        // Only a --max given here is refused (clock times have no maximum); a kept one is dropped.
        draft.maxPerDay = self.maxPerDay
        return draft
    }
}

import ChimeCore
import Foundation

/// The hours a gate applies in, every day it applies: `start` to `end`, local time. A window
/// whose end comes before its start crosses midnight (22:00-06:00).
public struct GateHours: Sendable, Hashable, Codable, CustomStringConvertible {
    public var start: LocalTime
    public var end: LocalTime

    /// Nil when `start` and `end` are the same time (a window of nothing, or of everything).
    public init?(start: LocalTime, end: LocalTime) {
        guard start != end else { return nil }
        (self.start, self.end) = (start, end)
    }

    public static let expected = "HH:MM-HH:MM, e.g. 09:00-17:00 (22:00-06:00 crosses midnight; start and end differ)"

    /// "09:00-17:00", "9am-5pm", "22:00-06:00": two times of day as ``LocalTime/spoken(_:)``
    /// reads them (the grammar of `chime at` and `chime med add --at`), joined by "-".
    public static func parse(_ text: String) throws(ChimeError) -> GateHours {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 2, let start = try? LocalTime.spoken(parts[0]), let end = try? LocalTime.spoken(parts[1]),
            let hours = GateHours(start: start, end: end)
        else { throw ChimeError.invalid("hours", text, expected: expected) }
        return hours
    }

    /// "09:00-17:00".
    public var description: String { "\(start)-\(end)" }

    /// Whether the window crosses midnight.
    public var crossesMidnight: Bool { end < start }
}

/// How many times a day a program opens before its pause grows.
public struct GateBudget: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Opens per local day within the budget, 1 to 1000.
    public var opensPerDay: Int

    public init?(opensPerDay: Int) {
        guard (1...1_000).contains(opensPerDay) else { return nil }
        self.opensPerDay = opensPerDay
    }

    public static let expected = "N/day, opens per day from 1 to 1000, e.g. 3/day"

    /// "3/day" (or "3/d", "3"): opens per day.
    public static func parse(_ text: String) throws(ChimeError) -> GateBudget {
        let trimmed = text.trimmingCharacters(in: .whitespaces).lowercased()
        var number = Substring(trimmed)
        for suffix in ["/day", "/d"] where trimmed.hasSuffix(suffix) {
            number = trimmed.dropLast(suffix.count)
            break
        }
        guard !number.isEmpty, number.allSatisfy(\.isASCII), number.allSatisfy(\.isNumber), let count = Int(number),
            let budget = GateBudget(opensPerDay: count)
        else { throw ChimeError.invalid("budget", text, expected: expected) }
        return budget
    }

    /// "3/day".
    public var description: String { "\(opensPerDay)/day" }

    /// Each open past the budget adds this much of the usual pause.
    public static let growthPerOpen = 0.5
    /// The pause never grows past this many times the usual one.
    public static let maximumFactor = 3.0

    /// The factor on the usual pause of a day's `open`th open (1 for the first): 1 within the
    /// budget; past it, 1 + 0.5 for each open over the budget, at most 3. With 3/day: the 4th
    /// open pauses 1.5×, the 5th 2×, the 6th 2.5×, the 7th and later 3×.
    public func pauseFactor(open: Int) -> Double {
        let over = open - opensPerDay
        guard over > 0 else { return 1 }
        return min(1 + Self.growthPerOpen * Double(over), Self.maximumFactor)
    }

    /// What the gate says of the day's `open`th open: "4th open today, budget 3".
    public func line(open: Int) -> String {
        "\(Self.ordinal(open)) open today, budget \(opensPerDay)"
    }

    public static func ordinal(_ n: Int) -> String {
        let suffix =
            switch (n % 10, n % 100) {
            case (_, 11...13): "th"
            case (1, _): "st"
            case (2, _): "nd"
            case (3, _): "rd"
            default: "th"
            }
        return "\(n)\(suffix)"
    }
}

/// How many minutes a day a program runs before its pause grows: the running time the watching
/// parent of `chime gate open` measures (``GateRun``).
public struct GateMinutesBudget: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Minutes per local day within the budget, 1 to 1440.
    public var minutesPerDay: Int

    public init?(minutesPerDay: Int) {
        guard (1...1_440).contains(minutesPerDay) else { return nil }
        self.minutesPerDay = minutesPerDay
    }

    public static let expected = "Nm/day or Nh/day, minutes per day from 1m to 24h, e.g. 60m/day"

    /// "60m/day", "90min/day", "1h/day", "1h30m/d": a duration and "/day" (or "/d").
    public static func parse(_ text: String) throws(ChimeError) -> GateMinutesBudget {
        let trimmed = text.trimmingCharacters(in: .whitespaces).lowercased()
        var duration = Substring(trimmed)
        for suffix in ["/day", "/d"] where trimmed.hasSuffix(suffix) {
            duration = trimmed.dropLast(suffix.count)
            break
        }
        guard let seconds = try? TimeParsing.duration(String(duration)), seconds % 60 == 0,
            let budget = GateMinutesBudget(minutesPerDay: Int(seconds / 60))
        else { throw ChimeError.invalid("budget", text, expected: expected) }
        return budget
    }

    /// "60m/day".
    public var description: String { "\(minutesPerDay)m/day" }

    /// Each started ``stepMinutes`` over the budget adds half the usual pause.
    public static let stepMinutes = 10

    /// The factor on the usual pause after `used` seconds of running time today: 1 within the
    /// budget; past it, 1 + 0.5 for each started 10 minutes over, at most 3 (as opens past
    /// ``GateBudget``): with 60m/day, 62 min pauses 1.5×, 75 min 2×, 100 min and more 3×.
    public func pauseFactor(used: TimeInterval) -> Double {
        let over = used - Double(minutesPerDay * 60)
        guard over > 0 else { return 1 }
        let steps = (over / Double(Self.stepMinutes * 60)).rounded(.up)
        return min(1 + GateBudget.growthPerOpen * steps, GateBudget.maximumFactor)
    }

    /// What the gate says: "62 of 60 min today" (whole minutes, rounded down).
    public func line(used: TimeInterval) -> String {
        "\(Int(max(used, 0) / 60)) of \(minutesPerDay) min today"
    }
}

/// When and how much a program is gated: its schedule (hours and days; always when neither is
/// set) and its budget of opens per day (none: every open gets the usual pause).
///
/// The schedule, in local time:
/// - Hours only: the gate applies in those hours every day.
/// - Days only: the gate applies all day on those days.
/// - Both: in those hours on those days. Hours that cross midnight belong to the day they start
///   on: `--hours 22:00-06:00 --days fri` is Friday 22:00 to Saturday 06:00.
/// Outside its schedule, a program opens at once; the launch is recorded as not gated, with the
/// reason ("outside its hours (09:00-17:00 mon-fri)").
public struct GateRule: Sendable, Hashable, Codable {
    /// The gated program's desktop entry id ("firefox-esr.desktop").
    public var programID: String
    public var hours: GateHours?
    public var days: WeekdaySet?
    public var budget: GateBudget?
    /// Minutes a day before the pause grows; nil for none.
    public var minutesBudget: GateMinutesBudget?
    /// After this many minutes in the program, an alert says so ("20 min in Firefox"), again
    /// every as many minutes after Keep going; nil for none. 1 to 1440.
    public var remindAfter: Int?

    public init(
        programID: String,
        hours: GateHours? = nil,
        days: WeekdaySet? = nil,
        budget: GateBudget? = nil,
        minutesBudget: GateMinutesBudget? = nil,
        remindAfter: Int? = nil
    ) {
        (self.programID, self.hours, self.days, self.budget) = (programID, hours, days, budget)
        (self.minutesBudget, self.remindAfter) = (minutesBudget, remindAfter)
    }

    public static let remindRange = 1...1_440
    public static let remindExpected = "a duration in whole minutes from 1m to 24h, e.g. 20m"

    /// `--remind-after 20m`: whole minutes, 1m to 24h.
    public static func parseRemindAfter(_ text: String) throws(ChimeError) -> Int {
        guard let seconds = try? TimeParsing.duration(text), seconds % 60 == 0, remindRange.contains(Int(seconds / 60)) else {
            throw ChimeError.invalid("remind-after", text, expected: remindExpected)
        }
        return Int(seconds / 60)
    }

    /// Whether the gate applies at all times (no hours, no days).
    public var isAlways: Bool { hours == nil && (days == nil || days == .everyDay) }

    /// Whether the rule says nothing (always gated, no budget): it need not be stored.
    public var isDefault: Bool { isAlways && budget == nil && minutesBudget == nil && remindAfter == nil }

    /// "budget 3/day and 60m/day", "budget 60m/day"; nil with no budget.
    public var budgetText: String? {
        let parts = [budget?.description, minutesBudget?.description].compactMap { $0 }
        return parts.isEmpty ? nil : "budget " + parts.joined(separator: " and ")
    }

    /// "09:00-17:00 mon-fri", "09:00-17:00", "mon-fri", "always".
    public var schedule: String {
        guard !isAlways else { return "always" }
        return [hours?.description, days.map(Self.daysText)].compactMap { $0 }.joined(separator: " ")
    }

    /// "mon-fri", "sat,sun", "mon,wed,fri", "every day": days as `--days` takes them back.
    public static func daysText(_ days: WeekdaySet) -> String {
        switch days {
        case .everyDay: return "every day"
        case .weekdays: return "mon-fri"
        case .weekend: return "sat,sun"
        default: return days.description
        }
    }

    /// "09:00-17:00 mon-fri, budget 3/day", "budget 3/day and 60m/day, reminder after 20 min";
    /// nil for a rule that says nothing (`chime gate list`, the app's Gateway page).
    public var label: String? {
        let parts = [isAlways ? nil : schedule, budgetText, remindAfter.map { "reminder after \($0) min" }].compactMap { $0 }
        return parts.isEmpty ? nil : parts.joined(separator: ", ")
    }

    /// Whether the gate applies at `now`, in `zone`.
    public func applies(at now: Date, zone: TimeZone) -> Bool {
        let local = ZoneMath.civil(now, in: zone).local
        let today = ZoneMath.daysFromCivil(year: local.year, month: local.month, day: local.day)
        let weekday = ZoneMath.isoWeekday(dayNumber: today)
        let days = self.days ?? .everyDay
        guard let hours else { return days.contains(isoWeekday: weekday) }
        let time = LocalTime(hour: local.hour, minute: local.minute) ?? .midnight
        if hours.crossesMidnight {
            // The evening part belongs to today, the morning part to yesterday's window.
            if time >= hours.start { return days.contains(isoWeekday: weekday) }
            if time < hours.end { return days.contains(isoWeekday: ZoneMath.isoWeekday(dayNumber: today - 1)) }
            return false
        }
        return hours.start <= time && time < hours.end && days.contains(isoWeekday: weekday)
    }

    /// The reason recorded for a launch outside the schedule: "outside its hours (09:00-17:00 mon-fri)".
    public var outsideReason: String {
        "outside its \(hours == nil ? "days" : "hours") (\(schedule))"
    }
}

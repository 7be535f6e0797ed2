import ChimeCore
import Foundation

/// A change to a gated program's rule, as `chime gate edit` and the app's Gateway form give it:
/// each part nil to keep it, `.some(nil)` to clear it, a value to set it. Made from text by
/// the family's parsers (``parse(hours:days:budgets:remindAfter:)``); applied by
/// ``GateBook/edit(_:_:overrides:)``.
public struct GateRuleChange: Sendable, Hashable {
    public var hours: GateHours??
    /// `.some(nil)` (or every day): every day.
    public var days: WeekdaySet??
    public var budget: GateBudget??
    public var minutesBudget: GateMinutesBudget??
    public var remindAfter: Int??

    public init(
        hours: GateHours?? = nil,
        days: WeekdaySet?? = nil,
        budget: GateBudget?? = nil,
        minutesBudget: GateMinutesBudget?? = nil,
        remindAfter: Int?? = nil
    ) {
        (self.hours, self.days, self.budget, self.minutesBudget, self.remindAfter) = (hours, days, budget, minutesBudget, remindAfter)
    }

    /// The change that makes a rule exactly `rule` (the app's form sets every part).
    public init(setting rule: GateRule) {
        self.init(
            hours: .some(rule.hours),
            days: .some(rule.days),
            budget: .some(rule.budget),
            minutesBudget: .some(rule.minutesBudget),
            remindAfter: .some(rule.remindAfter)
        )
    }

    /// Whether it changes nothing.
    public var isEmpty: Bool { self == GateRuleChange() }

    /// `rule` with this change.
    public func applied(to rule: GateRule) -> GateRule {
        var rule = rule
        if let hours { rule.hours = hours }
        // Every day is no limit on the days (as none given).
        if let days { rule.days = days == .everyDay ? nil : days }
        if let budget { rule.budget = budget }
        if let minutesBudget { rule.minutesBudget = minutesBudget }
        if let remindAfter { rule.remindAfter = remindAfter }
        return rule
    }

    /// `--hours`, `--days`, `--budget` (given once or twice), `--remind-after` as typed; throws,
    /// naming the bad value and what is accepted, on the first bad one. A budget with a unit
    /// (m, min, h) is of minutes (``GateMinutesBudget``); a bare number or N/day, of opens.
    public static func parse(
        hours: String? = nil,
        days: String? = nil,
        budgets: [String] = [],
        remindAfter: String? = nil
    ) throws(ChimeError) -> GateRuleChange {
        var change = GateRuleChange()
        if let hours { change.hours = .some(try GateHours.parse(hours)) }
        if let days { change.days = .some(try WeekdaySet.spoken(days)) }
        for text in budgets {
            if text.lowercased().contains(where: { "mh".contains($0) }) {
                guard change.minutesBudget == nil else { throw ChimeError(.usage, "--budget \(text): a minutes budget is given twice") }
                change.minutesBudget = .some(try GateMinutesBudget.parse(text))
            } else {
                guard change.budget == nil else { throw ChimeError(.usage, "--budget \(text): an opens budget is given twice") }
                change.budget = .some(try GateBudget.parse(text))
            }
        }
        if let remindAfter { change.remindAfter = .some(try GateRule.parseRemindAfter(remindAfter)) }
        return change
    }
}

extension GateBook {
    /// `chime gate edit ID …` and the app's Gateway form: applies `change` to the rule of the
    /// gated program `id` and saves it. Refused (not found) when `id` is not gated; nothing is
    /// written then.
    @discardableResult
    public func edit(
        _ id: DesktopFileID,
        _ change: GateRuleChange,
        overrides: LauncherOverrides
    ) throws(ChimeError) -> (gated: LauncherOverride, rule: GateRule) {
        let gated: LauncherOverride
        do {
            guard let found = try overrides.list().first(where: { $0.id == id }) else {
                throw ChimeError(.notFound, "'\(id)' is not gated: 'chime gate add \(id)' gates it")
            }
            gated = found
        } catch {
            throw error as? ChimeError ?? ChimeError(.failure, "\(error)")
        }
        let rule = change.applied(to: try rule(programID: id.rawValue))
        try save(rule)
        return (gated, rule)
    }
}

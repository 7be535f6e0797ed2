import ChimeCore
import ChimeGateway
import Foundation

/// A field of the Gateway page's rule form (``GateRuleForm``).
public enum GateRuleField: String, Sendable, Hashable, CaseIterable {
    case hours, days, opens, minutes, remind
}

/// The Gateway page's form for a gated program's rule (what `chime gate edit ID --hours …
/// --days … --budget 3/day --budget 60m/day --remind-after 20m` sets), as typed: every value is
/// read by the family's parsers (``GateHours/parse(_:)``, ``WeekdaySet/spoken(_:)``,
/// ``GateBudget/parse(_:)``, ``GateMinutesBudget/parse(_:)``, ``GateRule/parseRemindAfter(_:)``),
/// each problem in their words under its field.
public struct GateRuleForm: Sendable, Hashable {
    /// The desktop entry id: `firefox.desktop`.
    public var programID: String
    /// Gated at all hours (`from` and `to` are not read).
    public var allDay: Bool
    /// "09:00", "9am": the hours' start and end, local time.
    public var from: String
    public var to: String
    /// The days the gate applies on (the weekday toggles); every day for no limit.
    public var days: WeekdaySet
    /// Opens per day within the budget: "3" (or "3/day"); empty for none.
    public var opensPerDay: String
    /// Minutes per day within the budget: "60" (minutes), "90m", "1h30m"; empty for none.
    public var minutesPerDay: String
    /// The reminder in use after this long in the program: "20" (minutes), "20m", "1h"; empty for none.
    public var remindAfter: String

    public init(
        programID: String,
        allDay: Bool = true,
        from: String = "",
        to: String = "",
        days: WeekdaySet = .everyDay,
        opensPerDay: String = "",
        minutesPerDay: String = "",
        remindAfter: String = ""
    ) {
        (self.programID, self.allDay, self.from, self.to, self.days) = (programID, allDay, from, to, days)
        (self.opensPerDay, self.minutesPerDay, self.remindAfter) = (opensPerDay, minutesPerDay, remindAfter)
    }

    /// The form showing `rule` as it is.
    public init(rule: GateRule) {
        self.init(
            programID: rule.programID,
            allDay: rule.hours == nil,
            from: rule.hours?.start.description ?? "",
            to: rule.hours?.end.description ?? "",
            days: rule.days ?? .everyDay,
            opensPerDay: rule.budget.map { String($0.opensPerDay) } ?? "",
            minutesPerDay: rule.minutesBudget.map { String($0.minutesPerDay) } ?? "",
            remindAfter: rule.remindAfter.map(String.init) ?? ""
        )
    }

    /// What the days field says with no day chosen.
    public static let noDays = "choose at least one day (every day: the gate applies all week)"

    /// The rule the form sets, or each bad field's problem (the family's message: "invalid
    /// hours '09:00-25:00': expected HH:MM-HH:MM, …").
    public func checked() -> Result<GateRule, GateRuleFormErrors> {
        var errors: [GateRuleField: String] = [:]
        var rule = GateRule(programID: programID)
        func check(_ field: GateRuleField, _ body: () throws(ChimeError) -> Void) {
            do { try body() } catch { errors[field] = error.message }
        }
        if !allDay {
            check(.hours) { () throws(ChimeError) in rule.hours = try GateHours.parse("\(from.trimmed)-\(to.trimmed)") }
        }
        check(.days) { () throws(ChimeError) in
            guard !days.isEmpty else { throw ChimeError(.usage, Self.noDays) }
            let set = try WeekdaySet.spoken(days.description)
            rule.days = set == .everyDay ? nil : set
        }
        if !opensPerDay.trimmed.isEmpty {
            check(.opens) { () throws(ChimeError) in rule.budget = try GateBudget.parse(opensPerDay) }
        }
        if !minutesPerDay.trimmed.isEmpty {
            check(.minutes) { () throws(ChimeError) in
                rule.minutesBudget = try Self.minutes(minutesPerDay) { text throws(ChimeError) in try GateMinutesBudget.parse(text) }
            }
        }
        if !remindAfter.trimmed.isEmpty {
            check(.remind) { () throws(ChimeError) in
                rule.remindAfter = try Self.minutes(remindAfter) { text throws(ChimeError) in try GateRule.parseRemindAfter(text) }
            }
        }
        return errors.isEmpty ? .success(rule) : .failure(GateRuleFormErrors(fields: errors))
    }

    /// `parse(text)`, a bare number read as minutes ("60" as "60m"); a problem names the text as typed.
    static func minutes<T>(_ text: String, _ parse: (String) throws(ChimeError) -> T) throws(ChimeError) -> T {
        let trimmed = text.trimmed
        guard !trimmed.isEmpty, trimmed.allSatisfy({ $0.isASCII && $0.isNumber }) else { return try parse(trimmed) }
        do {
            return try parse(trimmed + "m")
        } catch {
            // "invalid budget '2000m': …" said of what was typed: "invalid budget '2000': …".
            throw ChimeError(error.code, error.message.replacingOccurrences(of: "'\(trimmed)m'", with: "'\(trimmed)'"))
        }
    }
}

/// The rule form's problems by field.
public struct GateRuleFormErrors: Error, Sendable, Hashable {
    public var fields: [GateRuleField: String]
}

extension GateHubViewModel {
    /// The rule form of gated program `id` as its rule stands (`chime gate list` shows the same).
    public func ruleForm(_ id: String) -> GateRuleForm {
        let programID = (try? DesktopFileID(id))?.rawValue ?? id
        guard let rule = try? book.rule(programID: programID) else { return GateRuleForm(programID: programID) }
        return GateRuleForm(rule: rule)
    }

    /// Saves `form` through `chime gate edit`'s use case (``GateBook/edit(_:_:overrides:)``).
    /// A bad field: its problem, and nothing written. Saved: the hub read again, with a notice
    /// saying the rule ("Firefox is gated 09:00-17:00 mon-fri, budget 60m/day.").
    public func save(_ form: GateRuleForm, name: String) -> Result<GateHubState, GateRuleFormErrors> {
        let rule: GateRule
        switch form.checked() {
        case .failure(let errors): return .failure(errors)
        case .success(let checked): rule = checked
        }
        return .success(
            act { () throws(ChimeError) in
                let id: DesktopFileID
                do {
                    id = try DesktopFileID(form.programID)
                } catch {
                    throw error as? ChimeError ?? ChimeError(.failure, "\(error)")
                }
                let saved = try self.book.edit(id, GateRuleChange(setting: rule), overrides: self.overrides).rule
                return Self.savedNotice(saved, name: name)
            }
        )
    }

    /// "Firefox is gated 09:00-17:00 mon-fri, budget 60m/day." or "Firefox is gated at all times, no budget."
    public static func savedNotice(_ rule: GateRule, name: String) -> String {
        guard let label = rule.label else { return "\(name) is gated at all times, with no budget." }
        return "\(name) is gated " + (rule.isAlways ? "at all times, " : "") + label + "."
    }
}

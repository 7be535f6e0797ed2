import Foundation

/// How `chime list` and `chime history` word a reminder and an alert, shared with the app's
/// Reminders and Today pages (one wording for both).
public enum ReportText {
    /// `chime list`'s NEXT: "Tue 2026-05-12 14:30", with the UTC offset when the reminder keeps
    /// another zone than `zone` (the system's); "-" when it has no next time.
    public static func next(of reminder: Reminder, zone: TimeZone) -> String {
        guard let due = reminder.nextDue else { return "-" }
        let shown = reminder.trigger.displayZone(system: zone)
        let text = TimeText.local(due, in: shown)
        guard shown.identifier == zone.identifier, let space = text.lastIndex(of: " ") else { return text }
        return String(text[..<space])
    }

    /// `chime list`'s title: "[exec] " first when it runs a command when it fires (--exec,
    /// --exec-shell), then `title` (the family's words for it, or its own title).
    public static func listTitle(_ reminder: Reminder, title: String) -> String {
        (reminder.command == nil ? "" : "[exec] ") + title
    }

    /// `chime history`'s LATE: "on time" within a second, else "+2m 5s"; "-" when not shown.
    public static func late(_ seconds: TimeInterval?) -> String {
        guard let seconds else { return "-" }
        guard seconds >= 1 else { return "on time" }
        return "+" + formatDuration(.seconds(Int64(seconds.rounded(.down))))
    }

    /// `chime history`'s cells for `entry`: DUE, LATE, VIA, RESULT, ID, TITLE.
    public static func historyCells(_ entry: HistoryEntry, zone: TimeZone) -> [String] {
        var result = entry.outcome
        if entry.missedCount > 0 { result += " (\(entry.missedCount) missed)" }
        var title = UserText.oneLine(entry.title)
        if entry.kind != "plain" { title = "[\(entry.kind)] " + title }
        if let detail = entry.detail { title += ": " + UserText.oneLine(detail) }
        return [
            TimeText.local(entry.due, in: zone, seconds: true), late(entry.lateness), entry.via ?? "-", result, entry.reminderID, title,
        ]
    }
}

extension Trigger {
    /// The zone to show a reminder's times in: its fixed zone, else the system's.
    public func displayZone(system: TimeZone) -> TimeZone {
        if case .fixed(let name) = zoneRule, let zone = TimeZone(identifier: name) { return zone }
        return system
    }
}

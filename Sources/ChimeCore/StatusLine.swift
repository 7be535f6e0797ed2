import Foundation

/// What a status bar shows of Chime: the runner's D-Bus properties (`Next`, `NextDose`,
/// `Focus`, `Quiet`), or that no runner is there. A value; the lines are pure functions of it
/// and a clock (``StatusLine``).
public struct StatusSnapshot: Sendable, Hashable {
    /// A pending reminder or dose: its id, title and next due time.
    public struct Item: Sendable, Hashable {
        public var id: String
        public var title: String
        public var due: Date

        public init(id: String, title: String, due: Date) {
            self.id = id
            self.title = title
            self.due = due
        }
    }

    /// The focus session: none, active (counting down to `end`), or paused (`remaining` left).
    public enum Focus: Sendable, Hashable {
        case none
        case active(end: Date)
        case paused(remaining: Int)
    }

    /// Quiet hours in effect until `until`, for `reasons` (`manual`, `hours`).
    public struct Quiet: Sendable, Hashable {
        public var until: Date
        public var reasons: [String]

        public init(until: Date, reasons: [String]) {
            self.until = until
            self.reasons = reasons
        }
    }

    /// Whether a runner owns Chime's bus name (false: the rest is empty).
    public var runner: Bool
    public var next: Item?
    public var dose: Item?
    public var focus: Focus
    public var quiet: Quiet?

    public init(runner: Bool = true, next: Item? = nil, dose: Item? = nil, focus: Focus = .none, quiet: Quiet? = nil) {
        self.runner = runner
        self.next = next
        self.dose = dose
        self.focus = focus
        self.quiet = quiet
    }

    /// No runner owns the name.
    public static let noRunner = StatusSnapshot(runner: false)
}

/// The formats of `chime status`.
public enum StatusFormat: String, Sendable, CaseIterable {
    /// One line of text: `Tea in 25m · focus 12m left · quiet until 18:00`.
    case text
    /// One JSON object: `runner`, `next`, `dose`, `focus`, `quiet`.
    case json
    /// Waybar's custom module JSON: `text`, `tooltip`, `class`, `alt`.
    case waybar
    /// An i3bar protocol block (`full_text`, `short_text`, `name`), as i3blocks' `format=json` reads it.
    case i3bar
}

/// The lines of `chime status`: pure functions of a ``StatusSnapshot``, the time and the zone.
///
/// Relative times count in whole minutes, rounded up (`in 25m` from 24m01s to 25m00s); a
/// reminder an hour or more away is shown by its time (`at 18:00`). ``nextBoundary(_:now:)`` is
/// when a line would next change by the clock alone: the only timer of `chime status --follow`.
public enum StatusLine {
    /// The line for `snapshot` at `now` in `format` (no newline).
    public static func render(_ snapshot: StatusSnapshot, format: StatusFormat, now: Date, zone: TimeZone) -> String {
        switch format {
        case .text: return text(snapshot, now: now, zone: zone)
        case .json: return json(snapshot, now: now, zone: zone)
        case .waybar:
            return encode(
                Waybar(
                    text: text(snapshot, now: now, zone: zone),
                    tooltip: tooltip(snapshot, now: now, zone: zone),
                    class: state(snapshot),
                    alt: state(snapshot)
                )
            )
        case .i3bar:
            return encode(
                I3Block(
                    fullText: text(snapshot, now: now, zone: zone),
                    shortText: shortText(snapshot, now: now, zone: zone),
                    urgent: false
                )
            )
        }
    }

    /// The one-line text: what is next, the focus countdown, the next dose (when it is not the
    /// next reminder itself), quiet hours; `no reminders` when none of them; `no runner`.
    public static func text(_ snapshot: StatusSnapshot, now: Date, zone: TimeZone) -> String {
        guard snapshot.runner else { return "no runner" }
        var parts: [String] = []
        if let next = snapshot.next { parts.append("\(next.title) \(when(next.due, now: now, zone: zone))") }
        switch snapshot.focus {
        case .none: break
        case .active(let end): parts.append("focus \(minutes(until: end, now: now)) left")
        case .paused(let remaining): parts.append("focus paused, \(minutes(Self.roundedUpMinutes(Double(remaining)))) left")
        }
        if let dose = snapshot.dose, dose.id != snapshot.next?.id {
            parts.append("dose \(dose.title) \(when(dose.due, now: now, zone: zone))")
        }
        if let quiet = snapshot.quiet { parts.append("quiet until \(clock(quiet.until, now: now, zone: zone))") }
        return parts.isEmpty ? "no reminders" : parts.joined(separator: " · ")
    }

    /// The shortest useful text: the focus countdown while one runs, else what is next.
    static func shortText(_ snapshot: StatusSnapshot, now: Date, zone: TimeZone) -> String {
        guard snapshot.runner else { return "no runner" }
        if case .active(let end) = snapshot.focus { return "focus \(minutes(until: end, now: now))" }
        if let next = snapshot.next { return "\(next.title) \(when(next.due, now: now, zone: zone))" }
        return snapshot.quiet != nil ? "quiet" : "—"
    }

    /// The state a bar styles by: `no-runner`, `focus`, `paused`, `quiet`, `next`, `idle`.
    public static func state(_ snapshot: StatusSnapshot) -> String {
        guard snapshot.runner else { return "no-runner" }
        switch snapshot.focus {
        case .active: return "focus"
        case .paused: return "paused"
        case .none: break
        }
        if snapshot.quiet != nil { return "quiet" }
        return snapshot.next != nil ? "next" : "idle"
    }

    /// One line per part, with absolute times: a bar's tooltip.
    static func tooltip(_ snapshot: StatusSnapshot, now: Date, zone: TimeZone) -> String {
        guard snapshot.runner else { return "No Chime runner on the session bus (chime run)" }
        var lines: [String] = []
        if let next = snapshot.next {
            lines.append("Next: \(next.title) \(at(next.due, now: now, zone: zone)) (\(relative(next.due, now: now)))")
        }
        switch snapshot.focus {
        case .none: break
        case .active(let end):
            lines.append("Focus: \(minutes(until: end, now: now)) left, ends \(clock(end, now: now, zone: zone))")
        case .paused(let remaining): lines.append("Focus: paused, \(minutes(roundedUpMinutes(Double(remaining)))) left")
        }
        if let dose = snapshot.dose {
            lines.append("Dose: \(dose.title) \(at(dose.due, now: now, zone: zone)) (\(relative(dose.due, now: now)))")
        }
        if let quiet = snapshot.quiet {
            lines.append("Quiet until \(clock(quiet.until, now: now, zone: zone)) (\(quiet.reasons.joined(separator: ", ")))")
        }
        return lines.isEmpty ? "No reminders" : lines.joined(separator: "\n")
    }

    /// When the line would next change by the clock alone, or nil when nothing counts down: a
    /// minute boundary of the focus countdown, of a reminder or dose under an hour away, or the
    /// moment one comes under an hour away.
    public static func nextBoundary(_ snapshot: StatusSnapshot, now: Date) -> Date? {
        guard snapshot.runner else { return nil }
        var times: [Date] = []
        if case .active(let end) = snapshot.focus, end > now { times.append(boundary(before: end, now: now)) }
        for item in [snapshot.next, snapshot.dose].compactMap({ $0 }) where item.due > now {
            let left = item.due.timeIntervalSince(now)
            times.append(left > countedAhead ? item.due.addingTimeInterval(-countedAhead) : boundary(before: item.due, now: now))
        }
        return times.min()
    }

    /// The next instant after `now` at which the whole minutes left until `end` (rounded up) drop.
    static func boundary(before end: Date, now: Date) -> Date {
        let left = end.timeIntervalSince(now)
        let minutes = roundedUpMinutes(left)
        return end.addingTimeInterval(-Double(minutes - 1) * 60)
    }

    // MARK: JSON

    static func json(_ snapshot: StatusSnapshot, now: Date, zone: TimeZone) -> String {
        guard snapshot.runner else { return encode(Document(runner: false)) }
        func item(_ item: StatusSnapshot.Item?) -> Document.Item? {
            item.map { Document.Item(id: $0.id, title: $0.title, due: rfc3339($0.due, zone: zone)) }
        }
        let focus: Document.Focus =
            switch snapshot.focus {
            case .none: Document.Focus(state: "none")
            case .active(let end):
                Document.Focus(
                    state: "active",
                    remainingSeconds: max(0, Int(end.timeIntervalSince(now).rounded(.up))),
                    end: rfc3339(end, zone: zone)
                )
            case .paused(let remaining): Document.Focus(state: "paused", remainingSeconds: remaining)
            }
        let quiet = Document.Quiet(
            active: snapshot.quiet != nil,
            until: snapshot.quiet.map { rfc3339($0.until, zone: zone) },
            reasons: snapshot.quiet?.reasons
        )
        return encode(Document(runner: true, next: item(snapshot.next), focus: focus, dose: item(snapshot.dose), quiet: quiet))
    }

    struct Document: Encodable {
        struct Item: Encodable {
            var id: String
            var title: String
            var due: String
        }
        struct Focus: Encodable {
            var state: String
            var remainingSeconds: Int?
            var end: String?
            enum CodingKeys: String, CodingKey {
                case state, end
                case remainingSeconds = "remaining_s"
            }
        }
        struct Quiet: Encodable {
            var active: Bool
            var until: String?
            var reasons: [String]?
        }
        var runner: Bool
        var next: Item?
        var focus: Focus?
        var dose: Item?
        var quiet: Quiet?

        func encode(to encoder: any Encoder) throws {
            enum Keys: String, CodingKey { case runner, next, focus, dose, quiet }
            var container = encoder.container(keyedBy: Keys.self)
            try container.encode(runner, forKey: .runner)
            guard runner else { return }
            // Present as null when there is none: a bar's script reads the same keys every time.
            try container.encode(next, forKey: .next)
            try container.encode(focus, forKey: .focus)
            try container.encode(dose, forKey: .dose)
            try container.encode(quiet, forKey: .quiet)
        }
    }

    struct Waybar: Encodable {
        var text: String
        var tooltip: String
        var `class`: String
        var alt: String
    }

    struct I3Block: Encodable {
        var fullText: String
        var shortText: String
        var name = "chime"
        var urgent: Bool
        enum CodingKeys: String, CodingKey {
            case name, urgent
            case fullText = "full_text"
            case shortText = "short_text"
        }
    }

    static func encode(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // (Encoding these plain structs cannot fail.)
        return (try? String(decoding: encoder.encode(value), as: UTF8.self)) ?? "{}"
    }

    // MARK: Times

    static func roundedUpMinutes(_ seconds: Double) -> Int { max(0, Int((seconds / 60).rounded(.up))) }

    /// `25m`, `1h05m`.
    static func minutes(_ count: Int) -> String {
        count < 60 ? "\(count)m" : "\(count / 60)h" + String(format: "%02dm", count % 60)
    }

    static func minutes(until end: Date, now: Date) -> String { minutes(roundedUpMinutes(end.timeIntervalSince(now))) }

    /// How far ahead a time is counted in minutes (`in 59m`); further, it is shown by its clock.
    static let countedAhead: TimeInterval = 59 * 60

    /// `in 25m` under an hour away, `now` once due, else the time (`at 18:00`).
    static func when(_ due: Date, now: Date, zone: TimeZone) -> String {
        let left = due.timeIntervalSince(now)
        if left <= 0 { return "now" }
        if left <= countedAhead { return "in " + minutes(until: due, now: now) }
        return at(due, now: now, zone: zone)
    }

    /// `at 18:00` today, else as ``clock(_:now:zone:)``.
    static func at(_ date: Date, now: Date, zone: TimeZone) -> String {
        let time = clock(date, now: now, zone: zone)
        return time.count == 5 ? "at " + time : time
    }

    /// `in 25m`, `in 3h10m`, `now`.
    static func relative(_ due: Date, now: Date) -> String {
        due > now ? "in " + minutes(until: due, now: now) : "now"
    }

    /// `18:00` today, `tomorrow 08:00`, else `2026-12-03 08:00`.
    static func clock(_ date: Date, now: Date, zone: TimeZone) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute], from: date)
        let time = String(format: "%02d:%02d", parts.hour ?? 0, parts.minute ?? 0)
        if calendar.isDate(date, inSameDayAs: now) { return time }
        if let tomorrow = calendar.date(byAdding: .day, value: 1, to: now), calendar.isDate(date, inSameDayAs: tomorrow) {
            return "tomorrow " + time
        }
        return String(format: "%04d-%02d-%02d ", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0) + time
    }

    static func rfc3339(_ date: Date, zone: TimeZone) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = zone
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: date)
    }
}

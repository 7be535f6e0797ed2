import Foundation

/// What a person chose about quiet hours: the values `chime quiet hours|doses|focus-hold` set
/// (kept in the store); the config file's `quiet.hours` is the window while none is stored.
public struct QuietSettings: Sendable, Hashable, Codable {
    /// A daily quiet window in the system zone, `start` to `end` (22:00–07:00 spans midnight).
    public struct Window: Sendable, Hashable, Codable, CustomStringConvertible {
        public var start: LocalTime
        public var end: LocalTime

        /// Nil when `start` and `end` are the same time (a window of nothing, or of everything).
        public init?(start: LocalTime, end: LocalTime) {
            guard start != end else { return nil }
            (self.start, self.end) = (start, end)
        }

        static let expected = "a window HH:MM-HH:MM such as 22:00-07:00 or 10pm-7am (start and end differ), or 'off'"

        /// "22:00-07:00", "10pm-7am", "22:00-noon": times of day as ``LocalTime/spoken(_:)`` reads them.
        public static func parse(_ text: String) throws(ChimeError) -> Window {
            let parts = text.split(separator: "-", omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 2, let start = try? LocalTime.spoken(parts[0]), let end = try? LocalTime.spoken(parts[1]),
                let window = Window(start: start, end: end)
            else { throw ChimeError.invalid("quiet hours", text, expected: expected) }
            return window
        }

        public var description: String { "\(start)-\(end)" }

        /// Whether the wall-clock time `local` lies in the window (its start included, its end not).
        public func contains(_ local: LocalTime) -> Bool {
            start < end ? (start <= local && local < end) : (start <= local || local < end)
        }
    }

    /// What quiet does to the alerts a family marks essential (medication doses).
    public enum Essential: String, Sendable, Hashable, Codable, CaseIterable {
        /// They come through quiet as at any time (the default).
        case come
        /// They wait until quiet ends (each alert and its repeats), then come one by one.
        case wait
    }

    /// The daily window, or nil for none.
    public var hours: Window?
    public var essential: Essential
    /// Whether a family may hold ordinary alerts while something of its own runs (a focus session).
    public var familyHold: Bool

    public init(hours: Window? = nil, essential: Essential = .come, familyHold: Bool = true) {
        (self.hours, self.essential, self.familyHold) = (hours, essential, familyHold)
    }
}

/// The quiet settings with the quiet a person asked for by hand (`chime quiet 1h`, `off`).
public struct QuietState: Sendable, Hashable {
    public var settings: QuietSettings
    /// `chime quiet 1h` / `until 09:00`: quiet until this instant.
    public var until: Date?
    /// `chime quiet off` while the daily window was in effect: the window is not quiet before this
    /// instant (its end that day).
    public var windowOffUntil: Date?

    public init(settings: QuietSettings = QuietSettings(), until: Date? = nil, windowOffUntil: Date? = nil) {
        (self.settings, self.until, self.windowOffUntil) = (settings, until, windowOffUntil)
    }

    /// Why it is quiet and until when.
    public struct Period: Sendable, Hashable {
        public enum Reason: String, Sendable, Hashable, Codable {
            /// `chime quiet 1h` or `until`.
            case manual
            /// The daily window.
            case hours
        }
        public var reasons: [Reason]
        public var end: Date
    }

    /// The quiet in effect at `now`, or nil. Its end is the later of the manual quiet's and the
    /// window's when both are in effect; a window that begins later is not counted (the scheduler
    /// looks again when the quiet ends).
    public func period(at now: Date, zone: TimeZone) -> Period? {
        var reasons: [Period.Reason] = []
        var end = now
        if let until, until > now {
            reasons.append(.manual)
            end = until
        }
        if let window = settings.hours, windowOffUntil.map({ $0 <= now }) ?? true {
            let local = ZoneMath.civil(now, in: zone).local
            if let time = LocalTime(hour: local.hour, minute: local.minute), window.contains(time) {
                reasons.append(.hours)
                end = max(end, Self.next(window.end, after: now, zone: zone))
            }
        }
        return reasons.isEmpty ? nil : Period(reasons: reasons, end: end)
    }

    /// The first instant after `now` at which the wall clock in `zone` reads `time` (a time in a
    /// DST gap moves forward by the gap, as reminders do).
    public static func next(_ time: LocalTime, after now: Date, zone: TimeZone) -> Date {
        let today = ZoneMath.civil(now, in: zone).local.dayNumber
        for day in today...(today + 2) {
            let instant = ZoneMath.resolve(CivilDateTime(dayNumber: day, time: time), in: zone).instant
            if instant > now { return instant }
        }
        return now.addingTimeInterval(86_400)
    }
}

/// A family's request to hold ordinary alerts while something of its own runs (a focus session),
/// until it says otherwise: see ``ReminderFamily/hold()``.
public struct FamilyHold: Sendable, Hashable {
    /// For `chime quiet status` and the summary's title ("focus session").
    public var reason: String
    /// Which one, for a person: "focus session #3". Nil: ``reason`` says it all.
    public var detail: String?
    /// When the family expects to let go (a focus session's end), or nil when it cannot say.
    public var until: Date?
    public init(reason: String, detail: String? = nil, until: Date? = nil) {
        (self.reason, self.detail, self.until) = (reason, detail, until)
    }
}

/// One thing that holds ordinary alerts back now, and until when: what `chime quiet status`
/// and `chime list` say, so that a late alert is never late with no word.
public struct AlertHold: Sendable, Hashable {
    public enum Source: String, Sendable, Hashable, Codable {
        /// `chime quiet 1h` or `until`.
        case quiet
        /// The daily quiet window.
        case quietHours = "quiet_hours"
        /// A family holds while something of its own runs (a focus session).
        case family
        /// The desktop's own do-not-disturb: the notification server keeps the banners (Chime
        /// posts as usual and does not hold them itself).
        case desktop
    }
    public var source: Source
    /// What holds, for a person: "focus session #3", "quiet hours 22:00-07:00".
    public var reason: String
    /// When it ends; nil when nobody can say (the desktop's do-not-disturb, a family's hold
    /// without an end).
    public var until: Date?
    /// False for the desktop's do-not-disturb: the server holds the banners, Chime's ledger
    /// counts the alerts as shown.
    public var heldByChime: Bool { source != .desktop }

    public init(source: Source, reason: String, until: Date?) {
        (self.source, self.reason, self.until) = (source, reason, until)
    }

    /// A few words for a table's column: "focus", "quiet hours", "quiet", "desktop DND".
    public var short: String {
        switch source {
        case .quiet: "quiet"
        case .quietHours: "quiet hours"
        case .family: reason.split(separator: " ").first.map(String.init) ?? reason
        case .desktop: "desktop DND"
        }
    }
}

extension QuietState {
    /// What holds ordinary alerts at `now`, in the order a person reads them: hand-made quiet,
    /// the quiet window, the families' holds (only when ``QuietSettings/familyHold`` is on, as
    /// the scheduler decides), the desktop's do-not-disturb (`desktopDoNotDisturb` true; the
    /// server, not Chime, holds then).
    public func holds(
        at now: Date,
        zone: TimeZone,
        families: [FamilyHold] = [],
        desktopDoNotDisturb: Bool? = nil
    ) -> [AlertHold] {
        var holds: [AlertHold] = []
        if let period = period(at: now, zone: zone) {
            if period.reasons.contains(.manual), let until {
                holds.append(AlertHold(source: .quiet, reason: "quiet (asked)", until: until))
            }
            if period.reasons.contains(.hours), let window = settings.hours {
                holds.append(
                    AlertHold(source: .quietHours, reason: "quiet hours \(window)", until: Self.next(window.end, after: now, zone: zone))
                )
            }
        }
        if settings.familyHold {
            for hold in families {
                holds.append(AlertHold(source: .family, reason: hold.detail ?? hold.reason, until: hold.until))
            }
        }
        if desktopDoNotDisturb == true {
            holds.append(AlertHold(source: .desktop, reason: "desktop do-not-disturb", until: nil))
        }
        return holds
    }

    /// What holds `occurrence`, held by the scheduler (``PendingOccurrence/heldSince``), and
    /// until when: a family's hold when it waits with no ready time (the scheduler holds it
    /// until the family lets go), else the quiet in effect, until its ready time. `holds` is
    /// what ``holds(at:zone:families:desktopDoNotDisturb:)`` gave; nil for one not held.
    public static func reason(for occurrence: PendingOccurrence, among holds: [AlertHold]) -> AlertHold? {
        guard occurrence.heldSince != nil else { return nil }
        if occurrence.readyAt == .distantFuture {
            // A family held it; the runner lets it go at its next pass when none holds now.
            return holds.first { $0.source == .family } ?? AlertHold(source: .family, reason: "a family's hold", until: nil)
        }
        let quiet = holds.filter { $0.source == .quiet || $0.source == .quietHours }
        let until = occurrence.readyAt
        let chosen = quiet.first { $0.until.map { abs($0.timeIntervalSince(until)) < 1 } ?? false } ?? quiet.last
        var hold = chosen ?? AlertHold(source: .quiet, reason: "quiet", until: until)
        hold.until = until
        return hold
    }
}

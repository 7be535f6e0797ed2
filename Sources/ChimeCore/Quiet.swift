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
    public init(reason: String) { self.reason = reason }
}

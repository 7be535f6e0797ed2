import Foundation

/// Local day numbers of instants in a zone: midnight to midnight, DST days 23 or 25 hours long.
/// The zone's offset is looked up once per stretch between two of its transitions (not once
/// per instant: Foundation's lookup would dominate a 100,000-session forest).
public struct LocalDays {
    let zone: TimeZone
    private var offset = 0
    private var validFrom = Date.distantFuture
    private var validUntil = Date.distantPast

    public init(zone: TimeZone) { self.zone = zone }

    public mutating func number(of instant: Date) -> Int {
        if instant < validFrom || instant >= validUntil {
            offset = zone.secondsFromGMT(for: instant)
            // The stretch runs from the previous transition (unknown: from here) to the next one.
            validFrom = instant
            validUntil = zone.nextDaylightSavingTimeTransition(after: instant) ?? .distantFuture
        }
        let seconds = Int(instant.timeIntervalSince1970.rounded(.down)) + offset
        return seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
    }
}

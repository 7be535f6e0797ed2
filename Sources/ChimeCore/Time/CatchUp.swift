import Foundation

extension Trigger {
    /// Most occurrences one recurring reminder folds together when catching up: past it the
    /// count stops (a `every 1m` reminder after a month of downtime says "10000 missed").
    public static let missedCountCap = 10_000

    /// Catch-up, the same on every store: the occurrences of this trigger after `due` that are
    /// already at or before `now` (missed while no runner ran, the machine slept, or a runner
    /// was behind) fold into the latest of them, which fires once, late, saying how many it
    /// stands for. Returns that latest occurrence (`due` itself when none is past) and how many
    /// occurrences it folded (at most ``missedCountCap``; past the cap it skips to the last
    /// weeks before `now` rather than walk every occurrence).
    public func caughtUp(from due: Date, through now: Date, systemZone: TimeZone) -> (latest: Date, missed: Int) {
        var latest = due
        var missed = 0
        var jumped = false
        let nowMicros = now.micros
        while let next = nextOccurrence(after: latest, systemZone: systemZone), next.micros <= nowMicros {
            latest = next
            if missed < Self.missedCountCap {
                missed += 1
            } else if !jumped {
                jumped = true
                if let jump = nextOccurrence(after: now.addingTimeInterval(-20 * 86_400), systemZone: systemZone),
                    jump > latest, jump.micros <= nowMicros
                {
                    latest = jump
                }
            }
        }
        return (latest, missed)
    }
}

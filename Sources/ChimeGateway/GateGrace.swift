import Foundation

/// The grace after Proceed: for ``length`` seconds (10 minutes by default) the same program
/// opens without a gate, so a browser that relaunches itself, or a link opened from another
/// program, is not gated again.
///
/// Grace holds while `now` is less than ``length`` from the last Proceed, on either side: from
/// the Proceed up to (not including) Proceed + length, and also when the clock was set back to
/// before the Proceed by less than the length (an NTP step or a small correction does not end
/// the grace; a clock set back further does). At exactly Proceed + length the gate shows again.
public struct GateGrace: Sendable, Equatable, Codable {
    /// The default grace: 10 minutes.
    public static let defaultLength: TimeInterval = 10 * 60

    /// Seconds; 0 turns the grace off.
    public var length: TimeInterval

    public init(length: TimeInterval = GateGrace.defaultLength) {
        self.length = max(length.isFinite ? length : GateGrace.defaultLength, 0)
    }

    /// Whether a launch at `now` opens without a gate, given the program's last Proceed (nil
    /// when it never had one).
    public func applies(lastProceed: Date?, now: Date) -> Bool {
        remaining(lastProceed: lastProceed, now: now) != nil
    }

    /// The seconds of grace left at `now`, or nil when there is none.
    public func remaining(lastProceed: Date?, now: Date) -> TimeInterval? {
        guard let lastProceed, length > 0 else { return nil }
        let since = now.timeIntervalSince(lastProceed)
        guard since < length, since > -length else { return nil }
        return length - max(since, 0)
    }
}

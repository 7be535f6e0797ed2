import Foundation

/// One usage event: a choice made at a gate, or a launch that could not be gated.
///
/// A gate records one event per choice (see ``Gate/events``): a ``Outcome/deepen`` for each
/// pause cut short by Deepen the Pause, then the gate's end (exit, proceed or closed). A launch
/// that opened without a gate records ``Outcome/notGated(_:)`` with the reason.
public struct GateEvent: Sendable, Equatable, Codable {
    /// What happened.
    public enum Outcome: Sendable, Equatable, Hashable, Codable {
        /// Exit to Focus: a conscious exit; the program did not start.
        case exit
        /// Deepen the Pause: this pause ended and a new one began.
        case deepen
        /// Proceed after the countdown: the program started.
        case proceed
        /// The gate was closed without an answer: the program did not start.
        case closed
        /// The program started without a gate: during the grace after a Proceed, or because no
        /// gate could be shown (no display and no terminal, a broken setup). `reason` says which.
        case notGated(reason: String)

        /// The event that ends a gate with `outcome`.
        public init(_ outcome: GateOutcome) {
            switch outcome {
            case .exit: self = .exit
            case .proceed: self = .proceed
            case .closed: self = .closed
            }
        }

        /// Whether this outcome ends a gate that was shown (exit, proceed, closed).
        public var endsGate: Bool {
            switch self {
            case .exit, .proceed, .closed: true
            case .deepen, .notGated: false
            }
        }
    }

    /// The gated program's desktop entry id ("firefox"), or the command's name.
    public var programID: String
    /// When the choice was made (for ``Outcome/notGated(_:)``: when the program started).
    public var at: Date
    /// Seconds spent in this event's pause; 0 when not gated.
    public var pauseSeconds: TimeInterval
    public var outcome: Outcome
    /// The quote this pause showed, if any.
    public var quote: Quote?

    public init(programID: String, at: Date, pauseSeconds: TimeInterval, outcome: Outcome, quote: Quote? = nil) {
        self.programID = programID
        self.at = at
        self.pauseSeconds = pauseSeconds
        self.outcome = outcome
        self.quote = quote
    }
}

import Foundation

/// A quote shown on a gate, with where it comes from.
public struct Quote: Sendable, Equatable, Hashable, Codable {
    /// The quote's words, as printed in the public-domain work or translation.
    public var text: String
    /// Who said or wrote it ("Seneca").
    public var author: String
    /// The work it comes from, with the translation's translator and year when there is one
    /// ("Letters to Lucilius, 1, tr. Richard M. Gummere, 1917").
    public var source: String
    /// The interest it is chosen by (see ``Interest``).
    public var interest: Interest

    public init(text: String, author: String, source: String, interest: Interest) {
        (self.text, self.author, self.source, self.interest) = (text, author, source, interest)
    }
}

/// What a person chose at onboarding as their interests: quotes are chosen by them.
public enum Interest: String, Sendable, CaseIterable, Codable, Hashable {
    case stoicism, productivity, mindfulness, psychology

    /// The name shown to people ("Stoicism").
    public var title: String { rawValue.prefix(1).uppercased() + rawValue.dropFirst() }
}

/// What a gate shows at one instant. The GTK window and the terminal gate draw it alike; the
/// gate's state machine makes it (on an injected clock), so both surfaces behave the same.
public struct GateScreen: Sendable, Equatable, Codable {
    /// The gated program's name, as its desktop entry names it ("Firefox Web Browser").
    public var program: String
    /// The quote of this pause; nil when no quote could be loaded (the gate still shows).
    public var quote: Quote?
    /// Time left in the countdown, in seconds (0 once it has run out).
    public var remaining: TimeInterval
    /// The countdown's progress, from 1 (just started) down to 0 (run out).
    public var progress: Double
    /// Whether Proceed may be chosen: only once the countdown has run out.
    public var proceedEnabled: Bool
    /// The breathing pace to follow, after Deepen ("Breathe in…", "Breathe out…"); nil before.
    public var breathing: String?
    /// The focus session's state, when one is running ("18 min of your focus session left").
    public var focus: String?
    /// The program's budget of opens, when it has one ("4th open today, budget 3").
    public var budget: String?

    public init(
        program: String,
        quote: Quote?,
        remaining: TimeInterval,
        progress: Double,
        proceedEnabled: Bool,
        breathing: String? = nil,
        focus: String? = nil,
        budget: String? = nil
    ) {
        self.program = program
        self.quote = quote
        self.remaining = remaining
        self.progress = progress
        self.proceedEnabled = proceedEnabled
        self.breathing = breathing
        self.focus = focus
        self.budget = budget
    }
}

/// What a person does at a gate.
public enum GateChoice: String, Sendable, Equatable, Codable {
    /// Exit to Focus: the gate closes and the program never starts.
    case exit
    /// Deepen the Pause: a new pause with a new quote and a breathing pace.
    case deepen
    /// Proceed: the program starts (only once the countdown has run out).
    case proceed
    /// The gate was closed without an answer (the window closed, Ctrl-C, Escape): the program
    /// does not start.
    case closed
}

/// A surface that draws a gate: the GTK window, the full-screen terminal gate, or a test's
/// recorder. The gate's driver calls ``draw(_:)`` at every tick and change and reads the
/// person's choices from ``choices``.
public protocol GateSurface: Sendable {
    /// Draws `screen`; called from any thread, about ten times a second while counting down.
    func draw(_ screen: GateScreen)
    /// The person's choices, in the order they were made. A surface that cannot be used any
    /// more (the window was closed) yields ``GateChoice/closed`` and finishes.
    var choices: AsyncStream<GateChoice> { get }
    /// Removes the gate from the screen.
    func close()
    /// Brings the gate to the front: a second launch of the same program while it is shown.
    func raise()
    /// Why the surface went away by itself (its window crashed), rather than closed by the
    /// person: the program then starts (a broken gate never locks a person out). Nil otherwise.
    var failure: String? { get }
}

extension GateSurface {
    /// A surface that cannot be raised (a terminal) does nothing.
    public func raise() {}
    /// A surface that cannot fail by itself.
    public var failure: String? { nil }
}

import Foundation

/// How a gate ended.
public enum GateOutcome: String, Sendable, Equatable, Codable {
    /// Exit to Focus: the program never starts.
    case exit
    /// Proceed, once the countdown had run out: the program starts.
    case proceed
    /// Closed without an answer (the window closed, Escape, Ctrl-C): the program does not start.
    case closed
}

/// What a choice did to a gate (see ``Gate/choose(_:at:quote:)``).
public enum GateStep: Sendable, Equatable {
    /// Deepen the Pause: a new pause of the full length started, with a new quote and a
    /// breathing pace.
    case deepened
    /// The gate ended with `outcome`. Also the answer to any choice after the gate has ended,
    /// which changes nothing.
    case finished(GateOutcome)
    /// Proceed before the countdown has run out: nothing changed; `remaining` seconds are left.
    case refused(remaining: TimeInterval)
}

/// The breathing pace shown after Deepen the Pause: breathe in for ``inhale`` seconds, out for
/// ``exhale`` seconds, over and over, from the instant the deeper pause started.
///
/// The default, 4 s in and 6 s out, is six breaths a minute, a longer out-breath than in-breath:
/// the slow, exhale-weighted pace that paced-breathing guides teach for calming down.
public struct BreathingPace: Sendable, Equatable {
    public var inhale: TimeInterval
    public var exhale: TimeInterval

    public static let inText = "Breathe in…"
    public static let outText = "Breathe out…"

    public init(inhale: TimeInterval = 4, exhale: TimeInterval = 6) {
        (self.inhale, self.exhale) = (max(inhale, 0.1), max(exhale, 0.1))
    }

    /// "Breathe in…" or "Breathe out…", `elapsed` seconds after the pace started (before it, as
    /// after a clock set back: "Breathe in…").
    public func text(elapsed: TimeInterval) -> String {
        guard elapsed > 0 else { return Self.inText }
        let phase = elapsed.truncatingRemainder(dividingBy: inhale + exhale)
        return phase < inhale ? Self.inText : Self.outText
    }
}

/// The gate's state machine: one pause (or several, after Deepen) before a gated program opens.
///
/// A value driven by the instants it is given, never by a clock of its own: the GTK window, the
/// terminal gate and the tests all draw ``screen(at:)`` and apply ``choose(_:at:quote:)`` with
/// the time they read from their clock. The countdown starts at ``startedAt``; Exit to Focus and
/// Deepen the Pause may be chosen at once, Proceed only once the countdown has run out.
public struct Gate: Sendable, Equatable {
    /// The seed's pause: 30 seconds.
    public static let defaultPauseLength: TimeInterval = 30

    /// The gated program's desktop entry id ("firefox"), or the command's name.
    public let programID: String
    /// The program's name as people see it ("Firefox Web Browser").
    public let program: String
    /// The length of each pause, in seconds.
    public let pauseLength: TimeInterval
    /// The breathing pace shown after Deepen.
    public let breathingPace: BreathingPace
    /// When the gate appeared.
    public let startedAt: Date
    /// When the current pause started: ``startedAt``, or the last Deepen.
    public private(set) var pauseStartedAt: Date
    /// The quote of the current pause; nil when none could be loaded (the gate still shows).
    public private(set) var quote: Quote?
    /// The quotes shown, in order: one per pause that had one.
    public private(set) var quotesShown: [Quote]
    /// How many times Deepen the Pause was chosen.
    public private(set) var deepenCount = 0
    /// The pauses that Deepen cut short, in order (for usage events).
    public private(set) var deepenedPauses: [DeepenedPause] = []
    /// How the gate ended; nil while it is shown.
    public private(set) var outcome: GateOutcome?
    /// When the gate ended; nil while it is shown.
    public private(set) var endedAt: Date?
    /// When the running focus session ends, if one runs: the gate says how much of it is left.
    public var focusEndsAt: Date?
    /// What the program's budget says of this open ("4th open today, budget 3"), if it has one.
    public var budget: String?

    /// A gate shown at `start`.
    /// - Parameters:
    ///   - programID: the desktop entry id or command name, as usage events record it.
    ///   - program: the name shown ("Firefox Web Browser"); `programID` when empty.
    ///   - pauseLength: seconds per pause (see ``pauseLength(determination:)``); at least 1.
    ///   - quote: the first pause's quote, or nil.
    ///   - focusEndsAt: the end of the focus session running now, if any.
    public init(
        programID: String,
        program: String = "",
        pauseLength: TimeInterval = Gate.defaultPauseLength,
        quote: Quote?,
        breathingPace: BreathingPace = BreathingPace(),
        at start: Date,
        focusEndsAt: Date? = nil
    ) {
        self.programID = programID
        self.program = program.isEmpty ? programID : program
        self.pauseLength = max(pauseLength.isFinite ? pauseLength : Gate.defaultPauseLength, 1)
        self.breathingPace = breathingPace
        self.startedAt = start
        self.pauseStartedAt = start
        self.quote = quote
        self.quotesShown = quote.map { [$0] } ?? []
        self.focusEndsAt = focusEndsAt
    }

    /// The pause set by the determination level chosen at onboarding (1 to 10; out of range
    /// levels are clamped), in whole seconds from 15 to 45, with the seed's default level 5 giving
    /// the seed's default 30 s: straight lines through (1, 15 s), (5, 30 s) and (10, 45 s),
    /// rounded:
    ///
    /// | level | 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 | 9 | 10 |
    /// |---|---|---|---|---|---|---|---|---|---|---|
    /// | seconds | 15 | 19 | 23 | 26 | 30 | 33 | 36 | 39 | 42 | 45 |
    public static func pauseLength(determination level: Int) -> TimeInterval {
        let level = min(max(level, 1), 10)
        let seconds = level <= 5 ? 15 + Double(level - 1) * 3.75 : 30 + Double(level - 5) * 3
        return seconds.rounded()
    }

    /// Whether the gate has ended (Exit, Proceed or closed).
    public var isFinished: Bool { outcome != nil }

    /// Seconds left in the current pause at `now`, from ``pauseLength`` down to 0. A clock set
    /// back before the pause started shows the full pause, never more.
    public func remaining(at now: Date) -> TimeInterval {
        let elapsed = now.timeIntervalSince(pauseStartedAt)
        return min(max(pauseLength - elapsed, 0), pauseLength)
    }

    /// What the gate shows at `now`.
    public func screen(at now: Date) -> GateScreen {
        let left = remaining(at: now)
        return GateScreen(
            program: program,
            quote: quote,
            remaining: left,
            progress: left / pauseLength,
            proceedEnabled: left <= 0,
            breathing: deepenCount > 0 ? breathingPace.text(elapsed: now.timeIntervalSince(pauseStartedAt)) : nil,
            focus: focusEndsAt.flatMap { Self.focusLine(endsAt: $0, now: now) },
            budget: budget
        )
    }

    /// "18 min of your focus session left": minutes rounded up, so the line never says 0 while
    /// the session runs; nil once it has ended.
    public static func focusLine(endsAt end: Date, now: Date) -> String? {
        let left = end.timeIntervalSince(now)
        guard left > 0 else { return nil }
        return "\(Int((left / 60).rounded(.up))) min of your focus session left"
    }

    /// Applies a person's choice at `now`.
    ///
    /// - Exit ends the gate (``GateOutcome/exit``): the program never starts.
    /// - Deepen starts a new pause of the full length at `now`, showing `quote` (the caller picks
    ///   it, different from the last one) and the breathing pace.
    /// - Proceed before the countdown has run out is refused and changes nothing; at or after
    ///   its end it ends the gate (``GateOutcome/proceed``).
    /// - Closed ends the gate (``GateOutcome/closed``).
    ///
    /// Once the gate has ended, every choice answers ``GateStep/finished(_:)`` and changes nothing.
    @discardableResult
    public mutating func choose(_ choice: GateChoice, at now: Date, quote newQuote: Quote? = nil) -> GateStep {
        if let outcome { return .finished(outcome) }
        switch choice {
        case .exit:
            return finish(.exit, at: now)
        case .closed:
            return finish(.closed, at: now)
        case .proceed:
            let left = remaining(at: now)
            guard left <= 0 else { return .refused(remaining: left) }
            return finish(.proceed, at: now)
        case .deepen:
            deepenedPauses.append(DeepenedPause(endedAt: now, quote: quote))
            deepenCount += 1
            pauseStartedAt = now
            quote = newQuote
            if let newQuote { quotesShown.append(newQuote) }
            return .deepened
        }
    }

    private mutating func finish(_ outcome: GateOutcome, at now: Date) -> GateStep {
        self.outcome = outcome
        endedAt = now
        return .finished(outcome)
    }

    /// Seconds the person actually spent at the gate, from ``startedAt`` to its end (or to `now`
    /// while it is shown); never negative, even across a clock set back.
    public func waited(until now: Date? = nil) -> TimeInterval {
        max((endedAt ?? now ?? startedAt).timeIntervalSince(startedAt), 0)
    }

    /// The usage events of this gate once it has ended, one per choice: a ``GateEvent/Outcome/deepen``
    /// for each pause Deepen cut short, then the final one. Each event's pause seconds are the
    /// time spent in its pause (never negative), so they add up to ``waited(until:)`` unless
    /// the clock was set back. Empty while the gate is shown.
    public var events: [GateEvent] {
        guard let outcome, let endedAt else { return [] }
        var result: [GateEvent] = []
        var pauseStart = startedAt
        for pause in deepenedPauses {
            result.append(
                GateEvent(
                    programID: programID,
                    at: pause.endedAt,
                    pauseSeconds: max(pause.endedAt.timeIntervalSince(pauseStart), 0),
                    outcome: .deepen,
                    quote: pause.quote
                )
            )
            pauseStart = pause.endedAt
        }
        result.append(
            GateEvent(
                programID: programID,
                at: endedAt,
                pauseSeconds: max(endedAt.timeIntervalSince(pauseStart), 0),
                outcome: GateEvent.Outcome(outcome),
                quote: quote
            )
        )
        return result
    }
}

/// A pause that Deepen the Pause cut short: when, and the quote it showed.
public struct DeepenedPause: Sendable, Equatable {
    public var endedAt: Date
    public var quote: Quote?
}

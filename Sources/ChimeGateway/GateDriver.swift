import ChimeCore
import Foundation

/// What makes a shown gate redraw: the real one ticks every 0.1 s (the seed's tick) while the
/// gate is shown; tests tick by hand.
public protocol GateTicker: Sendable {
    /// A new stream of ticks for one gate; it ends when the gate ends (the driver stops
    /// iterating) or when the ticker has no more.
    func ticks() -> AsyncStream<Void>
}

/// Ticks every ``interval`` seconds on the continuous clock, only while a gate iterates its
/// ticks: nothing runs once the gate has ended.
public struct IntervalTicker: GateTicker {
    /// The seed's tick: 0.1 s.
    public static let defaultInterval: TimeInterval = 0.1

    public var interval: TimeInterval

    public init(interval: TimeInterval = IntervalTicker.defaultInterval) {
        self.interval = max(interval, 0.01)
    }

    public func ticks() -> AsyncStream<Void> {
        let interval = self.interval
        return AsyncStream(bufferingPolicy: .bufferingNewest(1)) { continuation in
            let task = Task {
                while !Task.isCancelled {
                    do {
                        try await Task.sleep(for: .seconds(interval))
                    } catch {
                        break
                    }
                    continuation.yield()
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}

/// How a driven gate ended.
public struct GateResult: Sendable, Equatable {
    /// The gate in its final state (see ``Gate/waited(until:)``, ``Gate/quotesShown``,
    /// ``Gate/deepenCount``).
    public var gate: Gate
    /// How it ended: the program starts only on ``GateOutcome/proceed``.
    public var outcome: GateOutcome
    /// The usage events to record (``Gate/events``).
    public var events: [GateEvent] { gate.events }
    /// What each refused Proceed was told: the seconds that were left.
    public var refusals: [TimeInterval]
}

/// Shows `gate` on `surface` until it ends: draws it at once and at every tick with the time
/// `clock` reads, applies the person's choices as they come (each followed by a draw), and
/// returns on Exit, Proceed (once the countdown has run out) or closed; a Proceed before then
/// is refused and the gate goes on. A surface whose choices end without one counts as closed.
/// The surface is closed before this returns.
///
/// - Parameters:
///   - nextQuote: the quote of a new pause after Deepen, given the one shown; nil for none.
public func runGate(
    _ gate: Gate,
    on surface: any GateSurface,
    ticker: any GateTicker,
    clock: any WallClock,
    nextQuote: @escaping @Sendable (Quote?) -> Quote? = { _ in nil }
) async -> GateResult {
    enum Input: Sendable {
        case tick
        case choice(GateChoice)
        case choicesEnded
    }
    var gate = gate
    var refusals: [TimeInterval] = []
    let (inputs, feed) = AsyncStream.makeStream(of: Input.self)
    let ticks = ticker.ticks()
    let choices = surface.choices
    let readers = [
        Task {
            for await _ in ticks { feed.yield(.tick) }
        },
        Task {
            for await choice in choices { feed.yield(.choice(choice)) }
            feed.yield(.choicesEnded)
        },
    ]
    defer {
        for reader in readers { reader.cancel() }
    }

    surface.draw(gate.screen(at: clock.now()))
    for await input in inputs {
        let now = clock.now()
        switch input {
        case .tick:
            break
        case .choice(let choice):
            let step = gate.choose(choice, at: now, quote: choice == .deepen ? nextQuote(gate.quote) : nil)
            if case .refused(let remaining) = step { refusals.append(remaining) }
        case .choicesEnded:
            gate.choose(.closed, at: now)
        }
        if gate.isFinished { break }
        surface.draw(gate.screen(at: now))
    }
    feed.finish()
    if !gate.isFinished { gate.choose(.closed, at: clock.now()) }
    surface.close()
    return GateResult(gate: gate, outcome: gate.outcome ?? .closed, refusals: refusals)
}

import ChimeCore
import Foundation
import Synchronization
import UnixSignals

#if canImport(Glibc)
import Glibc
#endif

/// What a gated launch ends in: start the program, or not.
public enum GateDecision: Sendable, Equatable {
    /// Start the program: after Proceed, or without a gate (`reason`: the grace after a
    /// Proceed, no way to show a gate…). A wellbeing tool never locks a person out.
    case start(notGated: String?)
    /// Do not start it: Exit (`exit`) or the gate closed without an answer (`closed`).
    case stay(GateOutcome)
    /// A gate for the same program is already open (process `pid`): it was raised; this launch
    /// starts nothing (the open gate's Proceed will).
    case alreadyOpen(pid: Int32)
}

/// One launch of a gated program (`chime gate open ID -- …`, `chime gate -- …`), from the grace
/// check to the decision, with every usage event recorded. The caller opens the surface (a
/// window, a terminal) and starts the program when told to.
public struct GateLaunch: Sendable {
    /// The program's id in usage events: its desktop entry id, or the command's name.
    public var programID: String
    /// Its name on the gate.
    public var name: String
    public var book: GateBook
    public var quotes: QuoteLibrary
    public var clock: any WallClock
    public var ticker: any GateTicker
    /// The end of the focus session running now, if any.
    public var focusEndsAt: Date?
    /// Where the per-program locks are (``GateLock/directory(environment:)``); nil: no lock.
    public var lockDirectory: String?
    /// The zone of the program's schedule and of the days its budget counts.
    public var zone: TimeZone

    public init(
        programID: String,
        name: String,
        book: GateBook,
        quotes: QuoteLibrary,
        clock: any WallClock = SystemWallClock(),
        ticker: any GateTicker = IntervalTicker(),
        focusEndsAt: Date? = nil,
        lockDirectory: String? = nil,
        zone: TimeZone = .current
    ) {
        self.programID = programID
        self.name = name
        self.book = book
        self.quotes = quotes
        self.clock = clock
        self.ticker = ticker
        self.focusEndsAt = focusEndsAt
        self.lockDirectory = lockDirectory
        self.zone = zone
    }

    /// Runs the launch: outside the program's schedule (``GateRule``), or inside the grace after
    /// a Proceed, starts without a gate; else shows a gate (its pause grown past the program's
    /// budget, ``GateBudget/pauseFactor(open:)``) on the first surface `surfaces` can open (each returns nil with the reason it
    /// cannot), and when none can, starts without one. Records what happened.
    ///
    /// - Parameter surfaces: the surfaces to try, in order, given the gate's first screen: each
    ///   returns a surface, or throws an error saying why it cannot show one.
    public func run(
        surfaces: [(GateScreen) throws -> any GateSurface],
        random: @escaping @Sendable () -> UInt64 = { UInt64.random(in: .min ... .max) }
    ) async throws(ChimeError) -> GateDecision {
        let profile = try book.profile()
        let now = clock.now()
        let rule = try book.rule(programID: programID)
        if !rule.applies(at: now, zone: zone) {
            let reason = rule.outsideReason
            try book.record([GateEvent(programID: programID, at: now, pauseSeconds: 0, outcome: .notGated(reason: reason))])
            return .start(notGated: reason)
        }
        if let left = profile.grace.remaining(lastProceed: try book.lastProceed(programID: programID), now: now) {
            let reason = "grace after Proceed (\(Trigger.formatInterval(Int64(left.rounded(.up)))) left)"
            try book.record([GateEvent(programID: programID, at: now, pauseSeconds: 0, outcome: .notGated(reason: reason))])
            return .start(notGated: reason)
        }
        // One gate per program: a second launch raises the open one (SIGUSR1, trapped before the
        // lock is taken, so it never meets the default action) and starts nothing.
        var lock: GateLock?
        let shown = Mutex<(any GateSurface)?>(nil)
        var raiser: Task<Void, Never>?
        defer { raiser?.cancel() }
        if let lockDirectory {
            let raises = await UnixSignalsSequence(trapping: .sigusr1)
            raiser = Task {
                for await _ in raises { shown.withLock { $0 }?.raise() }
            }
            switch try? GateLock.take(programID: programID, directory: lockDirectory) {
            case .held(let pid):
                if let pid, pid > 0 { kill(pid, SIGUSR1) }
                return .alreadyOpen(pid: pid ?? 0)
            case .taken(let taken): lock = taken
            case nil: break  // no lock file: show the gate anyway
            }
        }
        defer { withExtendedLifetime(lock) {} }
        var generator = SeededGenerator(seed: random())
        let interests = profile.interests
        let first = quotes.pick(for: interests, after: try book.lastQuote(), using: &generator)
        var pauseLength = profile.pauseLength
        var factor = 1.0
        var budgetLines: [String] = []
        if let budget = rule.budget {
            // This launch is the day's next open if it proceeds.
            let open = try book.opensToday(programID: programID, zone: zone) + 1
            factor = budget.pauseFactor(open: open)
            budgetLines.append(budget.line(open: open))
        }
        if let minutes = rule.minutesBudget {
            // The running time so far today (a run still going counts until now).
            let used = try book.usedToday(programID: programID, zone: zone)
            factor = max(factor, minutes.pauseFactor(used: used))
            budgetLines.append(minutes.line(used: used))
        }
        // Past both budgets, the larger growth: never more than 3× (``GateBudget/maximumFactor``).
        pauseLength = (pauseLength * factor).rounded()
        let budgetLine = budgetLines.isEmpty ? nil : budgetLines.joined(separator: " · ")
        var gate = Gate(
            programID: programID,
            program: name,
            pauseLength: pauseLength,
            quote: first,
            at: now,
            focusEndsAt: focusEndsAt
        )
        gate.budget = budgetLine
        var reasons: [String] = []
        var surface: (any GateSurface)?
        for open in surfaces {
            do {
                surface = try open(gate.screen(at: now))
                break
            } catch {
                reasons.append((error as? ChimeError)?.message ?? "\(error)")
            }
        }
        guard let surface else {
            let reason = reasons.isEmpty ? "no way to show a gate" : reasons.joined(separator: "; ")
            try book.record([GateEvent(programID: programID, at: now, pauseSeconds: 0, outcome: .notGated(reason: reason))])
            return .start(notGated: reason)
        }
        shown.withLock { $0 = surface }
        let library = quotes
        let seed = random()
        let picker = QuotePicker(library: library, interests: interests, seed: seed)
        let result = await runGate(gate, on: surface, ticker: ticker, clock: clock) { previous in picker.next(after: previous) }
        if result.outcome == .closed, let failure = surface.failure {
            // The gate broke (its window crashed): the program starts, and the event says why.
            var events = result.events
            if let last = events.popLast() {
                events.append(
                    GateEvent(
                        programID: programID,
                        at: last.at,
                        pauseSeconds: last.pauseSeconds,
                        outcome: .notGated(reason: failure),
                        quote: last.quote
                    )
                )
            }
            try book.record(events)
            return .start(notGated: failure)
        }
        try book.record(result.events)
        switch result.outcome {
        case .proceed: return .start(notGated: nil)
        case .exit: return .stay(.exit)
        case .closed: return .stay(.closed)
        }
    }
}

/// The quotes of new pauses after Deepen, drawn from one seeded generator.
final class QuotePicker: Sendable {
    let library: QuoteLibrary
    let interests: Set<Interest>
    let generator: Mutex<SeededGenerator>

    init(library: QuoteLibrary, interests: Set<Interest>, seed: UInt64) {
        self.library = library
        self.interests = interests
        generator = Mutex(SeededGenerator(seed: seed))
    }

    func next(after previous: Quote?) -> Quote? {
        generator.withLock { generator in library.pick(for: interests, after: previous, using: &generator) }
    }
}

import ChimeCore
import ChimeGateway
import ChimeTesting
import Foundation
import Synchronization
import Testing

/// A surface that keeps what it was asked to draw; a test sends the person's choices and awaits
/// draws rather than sleeping.
final class RecordingSurface: GateSurface {
    private struct State {
        var screens: [GateScreen] = []
        var waiters: [(count: Int, continuation: CheckedContinuation<GateScreen, Never>)] = []
        var closed = false
        var raised = 0
    }
    private let state = Mutex(State())
    let choices: AsyncStream<GateChoice>
    private let feed: AsyncStream<GateChoice>.Continuation

    init() {
        (choices, feed) = AsyncStream.makeStream(of: GateChoice.self)
    }

    func draw(_ screen: GateScreen) {
        let ready = state.withLock { state in
            state.screens.append(screen)
            let count = state.screens.count
            let ready = state.waiters.filter { $0.count <= count }.map(\.continuation)
            state.waiters.removeAll { $0.count <= count }
            return ready
        }
        for continuation in ready { continuation.resume(returning: screen) }
    }

    func close() { state.withLock { $0.closed = true } }
    func raise() { state.withLock { $0.raised += 1 } }
    /// Set, the surface went away by itself (as a crashed window does).
    let failing = Mutex<String?>(nil)
    var failure: String? { failing.withLock { $0 } }
    var raised: Int { state.withLock { $0.raised } }

    var screens: [GateScreen] { state.withLock { $0.screens } }
    var isClosed: Bool { state.withLock { $0.closed } }

    /// The person chooses.
    func send(_ choice: GateChoice) { feed.yield(choice) }
    /// The surface goes away (the window was destroyed) without a choice.
    func finish() { feed.finish() }

    /// Returns the `count`th screen drawn, once it has been.
    func drawn(_ count: Int) async -> GateScreen {
        await withCheckedContinuation { continuation in
            let screen: GateScreen? = state.withLock { state in
                if state.screens.count >= count { return state.screens[count - 1] }
                state.waiters.append((count, continuation))
                return nil
            }
            if let screen { continuation.resume(returning: screen) }
        }
    }
}

/// Ticks when the test says so.
final class ManualTicker: GateTicker {
    private let feed = Mutex<AsyncStream<Void>.Continuation?>(nil)

    func ticks() -> AsyncStream<Void> {
        let (stream, continuation) = AsyncStream.makeStream(of: Void.self)
        feed.withLock { $0 = continuation }
        return stream
    }

    func tick() { _ = feed.withLock { $0 }?.yield() }
}

@Suite struct GateDriverTests {
    let clock = ManualWallClock(now: start)
    let surface = RecordingSurface()
    let ticker = ManualTicker()

    func run(_ gate: Gate, nextQuote: @escaping @Sendable (Quote?) -> Quote? = { _ in nil }) -> Task<GateResult, Never> {
        let (surface, ticker, clock) = (surface, ticker, clock)
        return Task { await runGate(gate, on: surface, ticker: ticker, clock: clock, nextQuote: nextQuote) }
    }

    @Test func drawsAtEveryTickAndProceedsOnlyAtTheEnd() async {
        let result = run(Gate(programID: "firefox", program: "Firefox", quote: seneca, at: start))
        let first = await surface.drawn(1)
        #expect(first.remaining == 30)
        #expect(!first.proceedEnabled)

        clock.advance(by: 10)
        ticker.tick()
        #expect(await surface.drawn(2).remaining == 20)

        // Proceed 0.1 s before the end: refused, the gate stays and draws again.
        clock.advance(to: start + 29.9)
        surface.send(.proceed)
        let refused = await surface.drawn(3)
        #expect(!refused.proceedEnabled)
        #expect(!surface.isClosed)

        clock.advance(to: start + 30)
        ticker.tick()
        let ended = await surface.drawn(4)
        #expect(ended.proceedEnabled)
        #expect(ended.progress == 0)

        surface.send(.proceed)
        let value = await result.value
        #expect(value.outcome == .proceed)
        #expect(value.refusals.count == 1)
        #expect(abs(value.refusals[0] - 0.1) < 1e-6)
        #expect(value.events.map(\.outcome) == [.proceed])
        #expect(value.gate.waited() == 30)
        #expect(surface.isClosed)
        #expect(surface.screens.count == 4)
    }

    @Test func exitEndsAtOnceAndTheProgramNeverStarts() async {
        let result = run(Gate(programID: "steam", quote: nil, at: start))
        _ = await surface.drawn(1)
        clock.advance(by: 3)
        surface.send(.exit)
        let value = await result.value
        #expect(value.outcome == .exit)
        #expect(value.events == [GateEvent(programID: "steam", at: start + 3, pauseSeconds: 3, outcome: .exit)])
        #expect(surface.isClosed)
    }

    @Test func deepenShowsANewQuoteAndAFullPause() async {
        let result = run(Gate(programID: "firefox", quote: seneca, at: start)) { previous in
            previous == seneca ? thoreau : seneca
        }
        _ = await surface.drawn(1)
        clock.advance(by: 25)
        surface.send(.deepen)
        let deepened = await surface.drawn(2)
        #expect(deepened.quote == thoreau)
        #expect(deepened.remaining == 30)
        #expect(deepened.breathing == "Breathe in…")
        clock.advance(by: 5)
        ticker.tick()
        let later = await surface.drawn(3)
        #expect(later.breathing == "Breathe out…")
        #expect(!later.proceedEnabled)
        surface.send(.closed)
        let value = await result.value
        #expect(value.outcome == .closed)
        #expect(value.gate.deepenCount == 1)
        #expect(value.gate.quotesShown == [seneca, thoreau])
        #expect(value.events.map(\.outcome) == [.deepen, .closed])
        #expect(value.events.map(\.pauseSeconds) == [25, 5])
    }

    @Test func aSurfaceThatGoesAwayClosesTheGate() async {
        let result = run(Gate(programID: "firefox", quote: nil, at: start))
        _ = await surface.drawn(1)
        clock.advance(by: 40)
        surface.finish()
        let value = await result.value
        #expect(value.outcome == .closed)
        #expect(value.gate.endedAt == start + 40)
    }

    @Test func theRealTickerTicksTenTimesASecond() {
        #expect(IntervalTicker().interval == 0.1)
        #expect(IntervalTicker(interval: 0).interval == 0.01)
    }
}

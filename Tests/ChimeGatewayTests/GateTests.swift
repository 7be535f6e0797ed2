import ChimeGateway
import Foundation
import Testing

let start = Date(timeIntervalSince1970: 1_800_000_000)
let seneca = Quote(text: "While we are postponing, life speeds by.", author: "Seneca", source: "Letters, 1", interest: .stoicism)
let thoreau = Quote(text: "Our life is frittered away by detail.", author: "Thoreau", source: "Walden", interest: .productivity)

@Suite struct GateTests {
    func gate(pause: TimeInterval = 30, quote: Quote? = seneca) -> Gate {
        Gate(programID: "firefox", program: "Firefox Web Browser", pauseLength: pause, quote: quote, at: start)
    }

    @Test(arguments: [
        (1, 15.0), (2, 19), (3, 23), (4, 26), (5, 30), (6, 33), (7, 36), (8, 39), (9, 42), (10, 45), (0, 15), (-3, 15), (11, 45),
    ])
    func pauseFromDetermination(level: Int, seconds: TimeInterval) {
        #expect(Gate.pauseLength(determination: level) == seconds)
    }

    @Test func defaultPauseIsTheSeeds30Seconds() {
        #expect(Gate(programID: "x", quote: nil, at: start).pauseLength == 30)
        #expect(Gate.pauseLength(determination: 5) == Gate.defaultPauseLength)
    }

    @Test func screenCountsDownSmoothly() {
        let gate = gate()
        let first = gate.screen(at: start)
        #expect(first == GateScreen(program: "Firefox Web Browser", quote: seneca, remaining: 30, progress: 1, proceedEnabled: false))
        let later = gate.screen(at: start + 7.5)
        #expect(later.remaining == 22.5)
        #expect(later.progress == 0.75)
        #expect(!later.proceedEnabled)
        #expect(later.breathing == nil)
        let end = gate.screen(at: start + 30)
        #expect(end.remaining == 0)
        #expect(end.progress == 0)
        #expect(end.proceedEnabled)
        #expect(gate.screen(at: start + 3_600).remaining == 0)
    }

    @Test func proceedIsRefusedUntilTheCountdownHasRunOut() {
        var gate = gate()
        // Given 0.1 s left, Proceed changes nothing.
        let before = gate
        let step = gate.choose(.proceed, at: start + 29.9)
        guard case .refused(let remaining) = step else {
            Issue.record("expected a refusal, got \(step)")
            return
        }
        #expect(abs(remaining - 0.1) < 1e-6)
        #expect(gate == before)
        #expect(!gate.screen(at: start + 29.9).proceedEnabled)
        // At the end it is accepted.
        #expect(gate.choose(.proceed, at: start + 30) == .finished(.proceed))
        #expect(gate.outcome == .proceed)
        #expect(gate.waited() == 30)
    }

    @Test func exitAndDeepenAreAvailableAtOnce() {
        var exited = gate()
        #expect(exited.choose(.exit, at: start) == .finished(.exit))
        #expect(exited.outcome == .exit)
        var deepened = gate()
        #expect(deepened.choose(.deepen, at: start, quote: thoreau) == .deepened)
        #expect(deepened.outcome == nil)
    }

    @Test func exitEndsTheGateAndLaterChoicesChangeNothing() {
        var gate = gate()
        gate.choose(.exit, at: start + 4)
        let ended = gate
        #expect(gate.choose(.proceed, at: start + 60) == .finished(.exit))
        #expect(gate.choose(.deepen, at: start + 60, quote: thoreau) == .finished(.exit))
        #expect(gate == ended)
        #expect(gate.isFinished)
        #expect(gate.events == [GateEvent(programID: "firefox", at: start + 4, pauseSeconds: 4, outcome: .exit, quote: seneca)])
    }

    @Test func closedEndsTheGateWithoutTheProgram() {
        var gate = gate()
        #expect(gate.choose(.closed, at: start + 2) == .finished(.closed))
        #expect(gate.events.map(\.outcome) == [.closed])
    }

    @Test func deepenStartsAFullPauseWithANewQuoteAndBreathing() {
        var gate = gate()
        gate.choose(.deepen, at: start + 20, quote: thoreau)
        // A full pause again, from the Deepen.
        let screen = gate.screen(at: start + 20)
        #expect(screen.remaining == 30)
        #expect(screen.progress == 1)
        #expect(!screen.proceedEnabled)
        #expect(screen.quote == thoreau)
        #expect(gate.quotesShown == [seneca, thoreau])
        #expect(gate.deepenCount == 1)
        // Proceed at the first pause's end is refused now.
        #expect(gate.choose(.proceed, at: start + 30) == .refused(remaining: 20))
        // The breathing pace: 4 s in, 6 s out, from the Deepen.
        #expect(gate.screen(at: start + 20).breathing == "Breathe in…")
        #expect(gate.screen(at: start + 23.9).breathing == "Breathe in…")
        #expect(gate.screen(at: start + 24).breathing == "Breathe out…")
        #expect(gate.screen(at: start + 29.9).breathing == "Breathe out…")
        #expect(gate.screen(at: start + 30).breathing == "Breathe in…")
        #expect(gate.choose(.proceed, at: start + 50) == .finished(.proceed))
    }

    @Test func eventsRecordEachPauseAndAddUpToTheWait() {
        var gate = gate()
        gate.choose(.deepen, at: start + 12, quote: thoreau)
        gate.choose(.deepen, at: start + 20, quote: nil)
        #expect(gate.events.isEmpty)
        gate.choose(.proceed, at: start + 51)
        #expect(
            gate.events == [
                GateEvent(programID: "firefox", at: start + 12, pauseSeconds: 12, outcome: .deepen, quote: seneca),
                GateEvent(programID: "firefox", at: start + 20, pauseSeconds: 8, outcome: .deepen, quote: thoreau),
                GateEvent(programID: "firefox", at: start + 51, pauseSeconds: 31, outcome: .proceed, quote: nil),
            ]
        )
        #expect(gate.waited() == 51)
        #expect(gate.deepenCount == 2)
        #expect(gate.quotesShown == [seneca, thoreau])
    }

    @Test func theGateShowsWithoutAQuote() {
        var gate = gate(quote: nil)
        #expect(gate.screen(at: start).quote == nil)
        #expect(gate.quotesShown.isEmpty)
        gate.choose(.deepen, at: start + 1)
        #expect(gate.screen(at: start + 1).quote == nil)
        #expect(gate.choose(.proceed, at: start + 31) == .finished(.proceed))
    }

    @Test func aClockSetBackShowsTheFullPauseNeverMore() {
        var gate = gate()
        let screen = gate.screen(at: start - 600)
        #expect(screen.remaining == 30)
        #expect(screen.progress == 1)
        #expect(gate.choose(.proceed, at: start - 600) == .refused(remaining: 30))
        gate.choose(.exit, at: start - 600)
        #expect(gate.waited() == 0)
        #expect(gate.events.first?.pauseSeconds == 0)
    }

    @Test func focusLineSaysHowMuchOfTheSessionIsLeft() {
        var gate = gate()
        gate.focusEndsAt = start + 18 * 60
        #expect(gate.screen(at: start).focus == "18 min of your focus session left")
        #expect(gate.screen(at: start + 30).focus == "18 min of your focus session left")
        #expect(gate.screen(at: start + 60).focus == "17 min of your focus session left")
        #expect(gate.screen(at: start + 18 * 60 - 1).focus == "1 min of your focus session left")
        #expect(gate.screen(at: start + 18 * 60).focus == nil)
        #expect(self.gate().screen(at: start).focus == nil)
    }

    @Test func programNameFallsBackToTheID() {
        #expect(Gate(programID: "code", quote: nil, at: start).screen(at: start).program == "code")
    }
}

import ChimeGateway
import Foundation
import Testing

@Suite struct GateGraceTests {
    let proceed = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func tenMinutesByDefault() {
        #expect(GateGrace().length == 600)
    }

    @Test(arguments: [
        (0.0, true),  // at the Proceed
        (1, true),
        (599.9, true),
        (600, false),  // exactly 10 minutes: the gate shows again
        (601, false),
        (86_400, false),
        (-1, true),  // clock set back a little (an NTP step): still in grace
        (-599, true),
        (-600, false),  // set back by the grace's length or more: gated
        (-7_200, false),
    ])
    func graceAroundTheLastProceed(offset: TimeInterval, applies: Bool) {
        #expect(GateGrace().applies(lastProceed: proceed, now: proceed + offset) == applies)
    }

    @Test func remainingGrace() {
        let grace = GateGrace()
        #expect(grace.remaining(lastProceed: proceed, now: proceed + 60) == 540)
        #expect(grace.remaining(lastProceed: proceed, now: proceed - 30) == 600)
        #expect(grace.remaining(lastProceed: proceed, now: proceed + 600) == nil)
    }

    @Test func noProceedNoGrace() {
        #expect(!GateGrace().applies(lastProceed: nil, now: proceed))
    }

    @Test func configurableAndOff() {
        #expect(GateGrace(length: 120).applies(lastProceed: proceed, now: proceed + 119))
        #expect(!GateGrace(length: 120).applies(lastProceed: proceed, now: proceed + 120))
        #expect(!GateGrace(length: 0).applies(lastProceed: proceed, now: proceed))
        #expect(GateGrace(length: -5).length == 0)
    }
}

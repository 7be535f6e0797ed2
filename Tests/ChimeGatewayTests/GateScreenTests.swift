import ChimeGateway
import Testing

@Suite struct GateScreenTests {
    @Test func interestTitles() {
        #expect(Interest.allCases.map(\.title) == ["Stoicism", "Productivity", "Mindfulness", "Psychology"])
    }
}

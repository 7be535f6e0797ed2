import ChimeCore
import Testing

@testable import ChimeDBus

/// Who is told about which reminders: the ids split by the app they are under.
struct SignalRecipientsTests {
    static let apps: [String: String?] = ["a1": "org.example.A", "a2": "org.example.A", "b1": "org.example.B", "plain": nil]

    static func appID(_ id: String) throws(ChimeError) -> String? {
        guard let app = apps[id] else { throw ChimeError(.store, "the store cannot be read") }
        return app
    }

    @Test func idsAreSplitByAppInTheOrderEachAppFirstComes() {
        let groups = ChimeBusServer.recipients(of: ["a1", "plain", "b1", "a2"], appID: Self.appID)
        #expect(groups.map(\.appID) == ["org.example.A", nil, "org.example.B"])
        #expect(groups.map(\.ids) == [["a1", "a2"], ["plain"], ["b1"]])
    }

    @Test func noIdsIsOneBroadcastWithNoIds() {
        let groups = ChimeBusServer.recipients(of: [], appID: Self.appID)
        #expect(groups.count == 1 && groups[0].appID == nil && groups[0].ids.isEmpty)
    }

    @Test func anIdWhoseAppCannotBeReadIsToldToNoOne() {
        let groups = ChimeBusServer.recipients(of: ["unreadable", "plain"], appID: Self.appID)
        #expect(groups.map(\.appID) == [nil])
        #expect(groups.map(\.ids) == [["plain"]])
    }
}

import ChimeCore
import ChimeDBus
import Foundation
import Testing

/// The runner's properties, as `GetAll` and `PropertiesChanged` give them, read as a status.
struct StatusFeedTests {
    static let due: Int64 = 1_795_791_600_000_000

    @Test func everyPropertyIsRead() {
        let status = StatusFeed.snapshot([
            "NextDue": .int64(Self.due),
            "Next": .dictionary(["id": .string("tea"), "title": .string("Tea"), "kind": .string("plain"), "due_us": .int64(Self.due)]),
            "NextDose": .dictionary([
                "id": .string("med-1"), "title": .string("Aspirin"), "kind": .string("dose"), "due_us": .int64(Self.due + 60_000_000),
            ]),
            "Focus": .dictionary(["state": .string("active"), "end_us": .int64(Self.due + 1_500_000_000), "remaining_s": .int64(1500)]),
            "Quiet": .dictionary([
                "active": .bool(true), "until_us": .int64(Self.due + 3_600_000_000), "reasons": .strings(["manual", "hours"]),
            ]),
        ])
        let at = { (micros: Int64) in Date(timeIntervalSince1970: TimeInterval(micros) / 1e6) }
        #expect(status.runner)
        #expect(status.next == StatusSnapshot.Item(id: "tea", title: "Tea", due: at(Self.due)))
        #expect(status.dose == StatusSnapshot.Item(id: "med-1", title: "Aspirin", due: at(Self.due + 60_000_000)))
        #expect(status.focus == .active(end: at(Self.due + 1_500_000_000)))
        #expect(status.quiet == StatusSnapshot.Quiet(until: at(Self.due + 3_600_000_000), reasons: ["manual", "hours"]))
    }

    @Test func emptyPropertiesAreNothing() {
        let status = StatusFeed.snapshot([
            "NextDue": .int64(0), "Next": .dictionary([:]), "NextDose": .dictionary([:]),
            "Focus": .dictionary(["state": .string("none")]), "Quiet": .dictionary(["active": .bool(false)]),
        ])
        #expect(status == StatusSnapshot())
        #expect(StatusFeed.snapshot([:]) == StatusSnapshot())
    }

    @Test func aPausedSessionKeepsItsMinutesAndItsOwnReminderIsNotNext() {
        let status = StatusFeed.snapshot([
            "Next": .dictionary([
                "id": .string("focus-1"), "title": .string("Tree planted!"), "kind": .string("focus"), "due_us": .int64(Self.due),
            ]),
            "Focus": .dictionary(["state": .string("paused"), "remaining_s": .int64(600)]),
        ])
        #expect(status.focus == .paused(remaining: 600))
        #expect(status.next == nil)
    }
}

import ChimeCore
import ChimeStore
import Foundation
import GRDB
import Testing

/// A shown alert's server id (the desktop's) is a column of its own, so that it can be closed
/// later from any process without parsing ids.
struct ShownAlertsTests {
    @Test("markPosted keeps the server's id; shownAlerts lists what may be on a desktop, for every reminder with the id")
    func serverIDsAreKept() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try ReminderStore(path: directory.file("chime.sqlite"), schemas: [])
        try store.schedule(Fixture.once("tea", at: 60, title: "Tea"), now: Fixture.t0, systemZone: Fixture.utc)
        try store.schedule(Fixture.once("cake", at: 60, title: "Cake"), now: Fixture.t0, systemZone: Fixture.utc)
        let claimed = try store.claimDue(now: Fixture.at(60), systemZone: Fixture.utc)
        let tea = try #require(claimed.first { $0.reminderID == "tea" })
        let cake = try #require(claimed.first { $0.reminderID == "cake" })

        try store.markPosted([tea.key], at: Fixture.at(60), noteID: "tea", serverID: 7)
        try store.markPosted([cake.key], at: Fixture.at(60), noteID: "cake")

        #expect(try store.shownAlerts(id: "tea") == [PostedNote(id: "tea", serverID: 7)])
        // Shown where there is no server id (the console): nothing to close
        #expect(try store.shownAlerts(id: "cake").isEmpty)
        #expect(try store.shownAlerts(id: "nothing").isEmpty)

        // The same id again (a dose's repeat is a new reminder under its id): both are listed
        try store.schedule(Fixture.once("tea", at: 120, title: "Tea again"), now: Fixture.at(61), systemZone: Fixture.utc)
        let again = try #require(try store.claimDue(now: Fixture.at(120), systemZone: Fixture.utc).first)
        try store.markPosted([again.key], at: Fixture.at(120), noteID: "tea", serverID: 9)
        #expect(Set(try store.shownAlerts(id: "tea").compactMap(\.serverID)) == [7, 9])
    }

    @Test("showing(now:) lists what done and snooze can answer: each id's last alert, shown within a day, without an answer")
    func showingListsTheAnswerableAlerts() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try ReminderStore(path: directory.file("chime.sqlite"), schemas: [])
        for id in ["tea", "cake", "bread", "old"] {
            try store.schedule(Fixture.once(id, at: 60, title: id.capitalized), now: Fixture.t0, systemZone: Fixture.utc)
        }
        let claimed = try store.claimDue(now: Fixture.at(60), systemZone: Fixture.utc)
        for occurrence in claimed where occurrence.reminderID != "old" {
            try store.markPosted([occurrence.key], at: Fixture.at(60), noteID: occurrence.reminderID)
        }
        let old = try #require(claimed.first { $0.reminderID == "old" })
        // Shown over a day before now
        try store.markPosted([old.key], at: Fixture.at(60 - 2 * 86_400), noteID: "old")
        let now = Fixture.at(120)
        // Answered (done): no longer answerable; closed without an answer: still is
        _ = try store.answerShown(id: "cake", action: "done", snoozeUntil: nil, now: now)
        _ = try store.recordResponse(NoteResponse(noteID: "bread", kind: .closed(.dismissed)), at: now)

        let showing = try store.showing(now: now)

        #expect(Set(showing.map(\.reminderID)) == ["tea", "bread"])
        #expect(showing.first { $0.reminderID == "tea" }?.title == "Tea")
    }

    @Test("A store from before the column: the 'desktop:N' ids it wrote become server ids")
    func olderStoresKeepTheirIDs() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("chime.sqlite")
        do {
            let store = try ReminderStore(path: path, schemas: [])
            try store.schedule(Fixture.once("tea", at: 60, title: "Tea"), now: Fixture.t0, systemZone: Fixture.utc)
            let claimed = try store.claimDue(now: Fixture.at(60), systemZone: Fixture.utc)
            try store.markPosted(claimed.map(\.key), at: Fixture.at(60), noteID: "tea")
        }
        // Made into what an older chime left: the id in note_id, no server_id column, no v5
        do {
            let queue = try DatabaseQueue(path: path)
            try queue.write { db in
                try db.execute(sql: "UPDATE occurrence SET note_id = 'desktop:42'")
                try db.execute(sql: "ALTER TABLE occurrence DROP COLUMN server_id")
                try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier LIKE 'v5:%'")
            }
        }

        let reopened = try ReminderStore(path: path, schemas: [])

        #expect(try reopened.shownAlerts(id: "tea") == [PostedNote(id: "tea", serverID: 42)])
    }
}

import ChimeCore
import ChimeStore
import Foundation
import Testing

/// The quiet settings (v9) and held occurrences in a real SQLite store.
@Suite struct QuietStoreTests {
    @Test func settingsStartEmptyAreWrittenInOneTransactionAndReadBackByAnotherOpener() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("chime.sqlite")
        let store = try ReminderStore(path: path, schemas: [])
        #expect(try store.quietState() == QuietState())

        let window = try QuietSettings.Window.parse("22:00-07:00")
        try store.updateQuiet {
            $0.settings = QuietSettings(hours: window, essential: .wait, familyHold: false)
            $0.until = Fixture.at(3_600)
        }
        let again = try ReminderStore(path: path, schemas: [])
        let state = try again.quietState()
        #expect(state.settings.hours?.description == "22:00-07:00")
        #expect(state.settings.essential == .wait)
        #expect(state.settings.familyHold == false)
        #expect(state.until == Fixture.at(3_600))
        #expect(state.windowOffUntil == nil)

        // A change that fails writes nothing
        let error = #expect(throws: ChimeError.self) {
            try again.updateQuiet { state throws(ChimeError) in
                state.settings.hours = nil
                throw ChimeError(.usage, "refused")
            }
        }
        #expect(error?.message == "refused")
        #expect(try again.quietState().settings.hours == window)
    }

    @Test func theConfigFilesWindowAppliesWhileNoneIsStoredAndIsNeverWrittenAsAChoice() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try ReminderStore(path: directory.file("chime.sqlite"), schemas: [])
        let file = try QuietSettings.Window.parse("22:00-07:00")
        store.setQuietHoursDefault(file)
        #expect(try store.quietState().settings.hours == file)
        #expect(try store.storedQuietHours() == nil)

        // A change to something else sees the file's window and does not store it.
        try store.updateQuiet { $0.until = Fixture.at(60) }
        #expect(try store.storedQuietHours() == nil)
        // A stored window beats the file's; removing it gives the file's back.
        let chosen = try QuietSettings.Window.parse("21:00-06:00")
        try store.updateQuiet { $0.settings.hours = chosen }
        #expect(try store.storedQuietHours() == chosen)
        #expect(try store.quietState().settings.hours == chosen)
        try store.updateQuiet { $0.settings.hours = nil }
        #expect(try store.storedQuietHours() == nil)
        #expect(try store.quietState().settings.hours == file)
    }

    @Test func heldOccurrencesStayDueUntilReleasedAndThenCarryWhenTheyWereHeld() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try ReminderStore(path: directory.file("chime.sqlite"), schemas: [])
        try store.schedule(Fixture.once("tea", at: 60), now: Fixture.t0, systemZone: Fixture.utc)
        try store.schedule(Fixture.once("cake", at: 61), now: Fixture.t0, systemZone: Fixture.utc)
        let claimed = try store.claimDue(now: Fixture.at(61), systemZone: Fixture.utc)
        #expect(claimed.map(\.heldSince) == [nil, nil])

        try store.hold(claimed.map(\.key), since: Fixture.at(60), until: Fixture.at(600))
        try store.hold([claimed[1].key], since: Fixture.at(90), until: nil)
        // Not ready before the end of the hold; the earliest end is the next deadline
        #expect(try store.claimDue(now: Fixture.at(120), systemZone: Fixture.utc).isEmpty)
        #expect(try store.nextDeadlines().ready == Fixture.at(600))
        let held = try store.heldOccurrences()
        #expect(held.map(\.reminderID) == ["tea", "cake"])
        // The first hold's instant stays; one held with no end is never ready by itself
        #expect(held.map(\.heldSince) == [Fixture.at(60), Fixture.at(60)])
        #expect(held.map(\.readyAt) == [Fixture.at(600), .distantFuture])
        #expect(try store.ledger().map(\.state) == ["due", "due"])

        try store.release([claimed[1].key], at: Fixture.at(130))
        let ready = try store.claimDue(now: Fixture.at(130), systemZone: Fixture.utc)
        #expect(ready.map(\.reminderID) == ["cake"])
        #expect(ready.map(\.heldSince) == [Fixture.at(60)])
        try store.markPosted(ready.map(\.key), at: Fixture.at(130), noteID: "summary")
        #expect(try store.heldOccurrences().map(\.reminderID) == ["tea"])
        // A cancel takes a held one out for good
        _ = try store.cancel(id: "tea", now: Fixture.at(140))
        #expect(try store.heldOccurrences().isEmpty)
        #expect(try store.nextDeadlines().ready == nil)
    }
}

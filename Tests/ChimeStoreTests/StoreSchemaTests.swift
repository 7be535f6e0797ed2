import ChimeCore
import Foundation
import GRDB
import Testing

@testable import ChimeStore

/// A family of the tests' own: one table, and the reminders of its kind indexed by id.
enum Notes {
    static let schema = StoreSchema(
        owner: "notes",
        migrations: [
            .init("v3: notes", indexingRemindersOfKind: "note") { db in
                try db.execute(sql: "CREATE TABLE note (id INTEGER PRIMARY KEY, text TEXT NOT NULL)")
            },
            .init("v7: note colours") { db in
                try db.execute(sql: "ALTER TABLE note ADD COLUMN colour TEXT")
            },
        ]
    )
}

/// The store's migrator is made of the store's own schema and its families': one order, the
/// shipped one, whoever registers what.
@Suite struct StoreSchemaTests {
    @Test func familiesMigrationsAreAppliedInTheOrderOfTheirNumbers() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("chime.sqlite")
        _ = try ReminderStore(path: path, schemas: [Notes.schema])
        let applied = try DatabaseQueue(path: path).read { db in
            try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations ORDER BY rowid")
        }
        #expect(
            applied == [
                "v1: reminders and delivery ledger", "v2: what people did with alerts", "v3: notes",
                "v5: the server's alert id", "v7: note colours", "v9: quiet hours",
            ]
        )
    }

    @Test func aFamilyAsksForItsRemindersToBeIndexedById() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("chime.sqlite")
        _ = try ReminderStore(path: path, schemas: [Notes.schema])
        let sql = try DatabaseQueue(path: path).read { db in
            try String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE name = 'reminder_note'")
        }
        #expect(sql == "CREATE INDEX reminder_note ON reminder(id) WHERE kind = 'note'")
    }

    @Test func aStoreWithAFamilyTheOpenerLacksIsRefusedAndLeftAsItIs() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("chime.sqlite")
        do { _ = try ReminderStore(path: path, schemas: [Notes.schema]) }
        let before = try #require(FileManager.default.contents(atPath: path))
        for access in [ReminderStore.Access.create, .update, .read] {
            let error = #expect(throws: ChimeError.self) { try ReminderStore(path: path, schemas: [], access: access) }
            #expect(error?.code == .store)
            #expect(error?.message.contains("was made by a newer Chime (it has migration 'v3: notes'") == true)
        }
        #expect(FileManager.default.contents(atPath: path) == before)
    }

    @Test func aFamilyAddedLaterUpgradesAStoreWithTheRestUntouched() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("chime.sqlite")
        do {
            let store = try ReminderStore(path: path, schemas: [])
            try store.schedule(Fixture.once("tea", at: 60), now: Fixture.t0, systemZone: Fixture.utc)
        }
        let store = try ReminderStore(path: path, schemas: [Notes.schema])
        #expect(try store.pending().map(\.id) == ["tea"])
        try store.write { db in try db.execute(sql: "INSERT INTO note (text, colour) VALUES ('hello', 'blue')") }
        #expect(try store.read { db in try String.fetchOne(db, sql: "SELECT colour FROM note") } == "blue")
    }
}

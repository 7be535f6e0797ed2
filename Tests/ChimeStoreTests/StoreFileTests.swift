import ChimeCore
import ChimeStore
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Opening the store: the file on disk, its journal, migrations, and refusing what is not a store.
struct StoreFileTests {
    @Test func newStoreFileHasMode0600AndWALFilesToo() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("chime.sqlite")

        // Given a path where nothing exists yet
        #expect(permissions(of: path) == nil)

        // When the store is opened and written to
        let store = try ReminderStore(path: path)
        try store.schedule(Fixture.once("tea", at: 60), now: Fixture.t0, systemZone: Fixture.utc)

        // Then the database and its write-ahead log are the user's alone
        #expect(permissions(of: path) == 0o600)
        #expect(permissions(of: path + "-wal") == 0o600)
        withExtendedLifetime(store) {}
    }

    @Test func storeIsInWALJournalMode() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("chime.sqlite")

        let store = try ReminderStore(path: path)
        try store.schedule(Fixture.once("tea", at: 60), now: Fixture.t0, systemZone: Fixture.utc)

        // A database in WAL mode has file format write and read versions 2 (header bytes 18 and 19),
        // and a -wal file beside it while a connection is open.
        let header = try #require(FileManager.default.contents(atPath: path))
        #expect(header.count >= 100)
        #expect(Array(header.prefix(16)) == Array("SQLite format 3\0".utf8))
        #expect(header[18] == 2)
        #expect(header[19] == 2)
        #expect(FileManager.default.fileExists(atPath: path + "-wal"))
        withExtendedLifetime(store) {}
    }

    @Test func migrationsAreIdempotent() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("chime.sqlite")

        // Given a store with one reminder
        do {
            let first = try ReminderStore(path: path)
            try first.schedule(Fixture.once("tea", at: 60), now: Fixture.t0, systemZone: Fixture.utc)
        }

        // When it is opened again, twice, once while the other is still open
        let second = try ReminderStore(path: path)
        let third = try ReminderStore(path: path)

        // Then the migrations do not run again (no "table exists" failure) and nothing is lost
        #expect(try second.pending().map(\.id) == ["tea"])
        #expect(try third.pendingCount() == 1)
        try third.schedule(Fixture.once("cake", at: 120), now: Fixture.t0, systemZone: Fixture.utc)
        #expect(try second.pending().map(\.id) == ["tea", "cake"])
    }

    @Test(arguments: [
        "This is a shopping list, not a database.\nmilk\neggs\n",
        "short",
        "SQLite format 2\0 but not quite the real header",
    ])
    func fileThatIsNotSQLiteIsRefusedAndLeftAlone(contents: String) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("notes.txt")
        let original = Data(contents.utf8)
        #expect(FileManager.default.createFile(atPath: path, contents: original))

        let error = #expect(throws: ChimeError.self) { try ReminderStore(path: path) }

        #expect(error?.code == .store)
        #expect(error?.message.contains("'\(path)' is not a Chime store") == true)
        #expect(FileManager.default.contents(atPath: path) == original)
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
        #expect(!FileManager.default.fileExists(atPath: path + "-journal"))
    }

    @Test func emptyFileBecomesANewStore() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("chime.sqlite")
        #expect(FileManager.default.createFile(atPath: path, contents: Data()))

        let store = try ReminderStore(path: path)

        #expect(try store.pendingCount() == 0)
    }

    @Test func storeInAMissingDirectoryIsRefusedWithoutCreatingIt() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let missing = directory.file("typo")
        let path = missing + "/chime.sqlite"

        let error = #expect(throws: ChimeError.self) { try ReminderStore(path: path) }

        #expect(error?.code == .store)
        #expect(error?.message.contains("'\(missing)' does not exist") == true)
        #expect(!FileManager.default.fileExists(atPath: missing))
    }

    @Test func createDirectoryCreatesMissingDirectoriesWithMode0700() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let parent = directory.file("share")
        let missing = parent + "/chime"
        let path = missing + "/chime.sqlite"

        let store = try ReminderStore(path: path, createDirectory: true)
        try store.schedule(Fixture.once("tea", at: 60), now: Fixture.t0, systemZone: Fixture.utc)

        var isDirectory: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: missing, isDirectory: &isDirectory))
        #expect(isDirectory.boolValue)
        #expect(permissions(of: missing) == 0o700)
        #expect(permissions(of: path) == 0o600)
        #expect(try store.pendingCount() == 1)
    }

    @Test func storeWhoseDirectoryIsAFileIsRefused() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let file = directory.file("plain-file")
        #expect(FileManager.default.createFile(atPath: file, contents: Data("x".utf8)))

        let error = #expect(throws: ChimeError.self) { try ReminderStore(path: file + "/chime.sqlite", createDirectory: true) }

        #expect(error?.code == .store)
        #expect(error?.message.contains("is not a directory") == true)
        #expect(FileManager.default.contents(atPath: file) == Data("x".utf8))
    }
}

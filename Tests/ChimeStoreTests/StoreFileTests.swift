import ChimeCore
import ChimeStore
import Foundation
import GRDB
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
        let store = try ReminderStore(path: path, schemas: [])
        try store.schedule(Fixture.once("tea", at: 60), now: Fixture.t0, systemZone: Fixture.utc)

        // Then the database and its write-ahead log are the user's alone
        #expect(permissions(of: path) == 0o600)
        #expect(permissions(of: path + "-wal") == 0o600)
        withExtendedLifetime(store) {}
    }

    /// The store is first looked at through an SQLite URI (read-only), whose path is
    /// percent-encoded by hand: a name with the URI's own characters, a space and non-ASCII
    /// letters must reach the same file.
    @Test func storeAtPathWithURICharactersOpensTheSameFileTwice() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let folder = directory.file("a b?c#d%41e&f=g;ü😀")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        let path = folder + "/chime.sqlite"

        do {
            let store = try ReminderStore(path: path, schemas: [])
            try store.schedule(Fixture.once("tea", at: 60), now: Fixture.t0, systemZone: Fixture.utc)
        }

        // Opened again (inspected through the URI first): the reminder is there, and no
        // file was made at a decoded or half-decoded name.
        let again = try ReminderStore(path: path, schemas: [])
        #expect(try again.pending().map(\.id) == ["tea"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["a b?c#d%41e&f=g;ü😀"])
    }

    @Test func storeIsInWALJournalMode() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("chime.sqlite")

        let store = try ReminderStore(path: path, schemas: [])
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
            let first = try ReminderStore(path: path, schemas: [])
            try first.schedule(Fixture.once("tea", at: 60), now: Fixture.t0, systemZone: Fixture.utc)
        }

        // When it is opened again, twice, once while the other is still open
        let second = try ReminderStore(path: path, schemas: [])
        let third = try ReminderStore(path: path, schemas: [])

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

        let error = #expect(throws: ChimeError.self) { try ReminderStore(path: path, schemas: []) }

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

        let store = try ReminderStore(path: path, schemas: [])

        #expect(try store.pendingCount() == 0)
    }

    @Test func storeInAMissingDirectoryIsRefusedWithoutCreatingIt() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let missing = directory.file("typo")
        let path = missing + "/chime.sqlite"

        let error = #expect(throws: ChimeError.self) { try ReminderStore(path: path, schemas: []) }

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

        let store = try ReminderStore(path: path, schemas: [], createDirectory: true)
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

        let error = #expect(throws: ChimeError.self) { try ReminderStore(path: file + "/chime.sqlite", schemas: [], createDirectory: true) }

        #expect(error?.code == .store)
        #expect(error?.message.contains("is not a directory") == true)
        #expect(FileManager.default.contents(atPath: file) == Data("x".utf8))
    }
}

/// Opening what is not (yet) a Chime store: another program's database, a newer or older
/// Chime's, none at all, something that is not a file; and a damaged store.
struct StoreIdentityTests {
    /// Another program's SQLite database, in rollback-journal or WAL mode.
    static func makeForeignDatabase(_ path: String, wal: Bool) throws {
        let queue = try DatabaseQueue(path: path)
        try queue.writeWithoutTransaction { db in
            if wal { try db.execute(sql: "PRAGMA journal_mode = WAL") }
            try db.execute(sql: "CREATE TABLE note (id INTEGER PRIMARY KEY, text TEXT); INSERT INTO note (text) VALUES ('milk')")
        }
        try queue.close()
    }

    @Test(arguments: [ReminderStore.Access.create, .update, .read], [false, true])
    func anotherProgramsDatabaseIsRefusedAndLeftByteForByte(access: ReminderStore.Access, wal: Bool) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("other-app.db")
        try Self.makeForeignDatabase(path, wal: wal)
        let before = try #require(FileManager.default.contents(atPath: path))

        let error = #expect(throws: ChimeError.self) { try ReminderStore(path: path, schemas: [], access: access) }

        #expect(error?.code == .store)
        #expect(
            error?.message.contains("'\(path)' is not a Chime store (an SQLite database of another program)") == true,
            "\(String(describing: error))"
        )
        #expect(FileManager.default.contents(atPath: path) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["other-app.db"])
    }

    @Test(arguments: [ReminderStore.Access.create, .update, .read])
    func storeOfANewerChimeIsRefusedAndLeftByteForByte(access: ReminderStore.Access) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("chime.sqlite")
        // Given a store on which a newer Chime ran a migration this build does not know
        do {
            let store = try ReminderStore(path: path, schemas: [])
            try store.schedule(Fixture.once("tea", at: 60), now: Fixture.t0, systemZone: Fixture.utc)
        }
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE future (x); INSERT INTO grdb_migrations VALUES ('v9: the future')")
        }
        try queue.close()
        let before = try #require(FileManager.default.contents(atPath: path))
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)

        let error = #expect(throws: ChimeError.self) { try ReminderStore(path: path, schemas: [], access: access) }

        #expect(error?.code == .store)
        #expect(
            error?.message.contains("'\(path)' was made by a newer Chime (it has migration 'v9: the future'") == true,
            "\(String(describing: error))"
        )
        #expect(FileManager.default.contents(atPath: path) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == files)
    }

    @Test(arguments: [ReminderStore.Access.update, .read])
    func withoutAStoreNothingIsCreated(access: ReminderStore.Access) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("chime.sqlite")
        let missingDirectory = directory.file("typo") + "/chime.sqlite"

        for candidate in [path, missingDirectory] {
            let store = try ReminderStore(path: candidate, schemas: [], access: access, createDirectory: true)
            #expect(!store.isFile)
            #expect(try store.pending().isEmpty)
        }

        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
    }

    @Test func anOlderStoreIsReadAsItIsAndUpgradedByAWrite() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("chime.sqlite")
        // Given a store of a Chime before the notes family, with one reminder
        do {
            let store = try ReminderStore(path: path, schemas: [])
            try store.schedule(Fixture.once("tea", at: 60), now: Fixture.t0, systemZone: Fixture.utc)
        }
        let before = try #require(FileManager.default.contents(atPath: path))

        // When it is read by a Chime that has the family: it is read as it is, the file left alone
        let read = try ReminderStore(path: path, schemas: [Notes.schema], access: .read)
        #expect(try read.pending().map(\.id) == ["tea"])
        #expect(!read.isFile)
        #expect(FileManager.default.contents(atPath: path) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["chime.sqlite"])

        // Then a command that changes it upgrades it
        let changed = try ReminderStore(path: path, schemas: [Notes.schema], access: .update)
        #expect(changed.isFile)
        #expect(try changed.pending().map(\.id) == ["tea"])
        #expect(try DatabaseQueue(path: path).read { try $0.tableExists("note") })
    }

    @Test func anEmptySQLiteDatabaseBecomesANewStore() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("chime.sqlite")
        let queue = try DatabaseQueue(path: path)
        try queue.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA user_version = 0; VACUUM") }
        try queue.close()

        let store = try ReminderStore(path: path, schemas: [])

        #expect(store.isFile)
        #expect(try store.pendingCount() == 0)
    }

    @Test func notARegularFileIsRefusedNamingWhatItIs() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let fifo = directory.file("fifo")
        #expect(mkfifo(fifo, 0o600) == 0)
        let link = directory.file("link")
        #expect(symlink(fifo, link) == 0)
        let folder = directory.file("folder")
        #expect(mkdir(folder, 0o700) == 0)

        for (path, what) in [(fifo, "is a FIFO"), (link, "is a symbolic link to a FIFO"), (folder, "is a directory")] {
            for access in [ReminderStore.Access.create, .read] {
                let error = #expect(throws: ChimeError.self) { try ReminderStore(path: path, schemas: [], access: access) }
                #expect(error?.message.contains("store '\(path)' \(what)") == true, "\(String(describing: error))")
            }
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == ["fifo", "folder", "link"])
    }

    @Test func aDamagedStoreFailsTheQuickCheck() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("chime.sqlite")
        try Damage.makeDamagedStore(path)

        let store = try ReminderStore(path: path, schemas: [], access: .read)
        let findings = try #require(try store.quickCheck())

        #expect(!findings.isEmpty)
        let healthy = directory.file("healthy.sqlite")
        _ = try ReminderStore(path: healthy, schemas: []).schedule(Fixture.once("tea", at: 60), now: Fixture.t0, systemZone: Fixture.utc)
        #expect(try ReminderStore(path: healthy, schemas: [], access: .read).quickCheck() == nil)
    }
}

/// A store whose index of pending due times has a page of garbage.
enum Damage {
    static func makeDamagedStore(_ path: String) throws {
        do {
            let store = try ReminderStore(path: path, schemas: [])
            let reminders = (0..<2000).map { Fixture.once("r\($0)", at: TimeInterval(60 + $0)) }
            _ = try store.scheduleBatch(reminders, now: Fixture.t0, systemZone: Fixture.utc)
        }
        // (The last connection closed: every commit is in the file.)
        let queue = try DatabaseQueue(path: path)
        let (page, size) = try queue.read { db in
            (
                try Int.fetchOne(db, sql: "SELECT rootpage FROM sqlite_master WHERE name = 'reminder_pending_due'")!,
                try Int.fetchOne(db, sql: "PRAGMA page_size")!
            )
        }
        try queue.close()
        let handle = try #require(FileHandle(forUpdatingAtPath: path))
        try handle.seek(toOffset: UInt64((page - 1) * size))
        try handle.write(contentsOf: Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }))
        try handle.close()
    }
}

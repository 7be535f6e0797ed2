import ChimeCore
import Foundation
import GRDB
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Chime's store: one SQLite file (WAL mode, mode 0600) holding reminders and the delivery
/// ledger. Every write that belongs together is one transaction.
///
/// The CLI and the runner open the same file; SQLite's locking serialises their writes (busy
/// timeout 5 s), and the runner learns of the CLI's changes through the wake-up socket.
public final class ReminderStore: Sendable {
    /// What a command may do to the file at the store's path.
    public enum Access: Sendable {
        /// Create the store when nothing is there (or an empty file), and upgrade a store made
        /// by an older Chime: the commands that schedule (`in`, `at`, `every`, `import`,
        /// a family's own) and the runner.
        case create
        /// Change an existing store (upgrading an older one); where there is none, an empty
        /// store in memory stands in and no file is made (`cancel`, a family's answers…:
        /// there is nothing to change).
        case update
        /// Read: never create a file nor upgrade a store. Where there is none, an empty store in
        /// memory stands in; a store made by an older Chime is read through an upgraded copy in
        /// memory, the file left as it is.
        case read
    }

    /// The store file's path, as given.
    public let path: String
    /// Whether the store is the file at ``path``: false when an empty store in memory (or an
    /// upgraded copy of an older one) stands in for it (see ``Access``).
    public let isFile: Bool
    /// The files this process made for the store (the store, and its write-ahead log and
    /// shared-memory file where none was there), and the directory it made for it: see
    /// ``discardIfUnused()``.
    private let madeFiles: [String]
    private let madeDirectory: String?
    private let connection: Mutex<DatabaseQueue>
    var dbQueue: DatabaseQueue { connection.withLock { $0 } }
    /// Why this store takes no writes, when it was opened for reading only (its file system
    /// read-only or full): every write throws it, without touching the file.
    let unwritable: ChimeError?
    /// The write-ahead log this process's connection writes, watched for its removal.
    private let log: LogWatch?
    /// Held while the store recovers from a removed log: one thread recovers, the others then
    /// find the new log and go on.
    private let recovery = Mutex(())
    /// Told when a write committed into a removed write-ahead log and what the log held was then
    /// saved and the store reopened: that write succeeded, so no error says so (see ``onLogRecovered(_:)``).
    private let recoveredHook = Mutex<(@Sendable (String) -> Void)?>(nil)
    /// The daily quiet window that applies while none is stored (`quiet.hours` in the config
    /// file): see ``quietState()``.
    let quietHoursDefault = Mutex<QuietSettings.Window?>(nil)

    /// Sets what is told, with a sentence saying what happened, when this process saved what a
    /// removed write-ahead log held after a write that succeeded (the runner logs it: a person
    /// looking at a recovered store finds why it recovered).
    public func onLogRecovered(_ hook: @escaping @Sendable (String) -> Void) {
        recoveredHook.withLock { $0 = hook }
    }
    private let deferCheckpoints: Bool
    /// The store's own migrations and its families', in the order they shipped.
    private let migrator: DatabaseMigrator
    /// The families' schemas this store was opened with.
    public let schemas: [StoreSchema]

    /// The default store: `$CHIME_STORE`, else `$XDG_DATA_HOME/chime/chime.sqlite`, else
    /// `~/.local/share/chime/chime.sqlite`.
    public static func defaultPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let store = environment["CHIME_STORE"], !store.isEmpty { return store }
        if let data = environment["XDG_DATA_HOME"], data.hasPrefix("/") { return data + "/chime/chime.sqlite" }
        let home = environment["HOME"] ?? NSHomeDirectory()
        return home + "/.local/share/chime/chime.sqlite"
    }

    /// Opens the store at `path`: creates it only with `access` ``Access/create``, and only
    /// where nothing is or in an empty file; refuses anything but a regular file, another
    /// program's database and a store made by a newer Chime, each left as it was.
    ///
    /// - Parameter schemas: the reminder families' tables (each family library defines its
    ///   own ``StoreSchema``): every process
    ///   opening a store names the same ones, the families it was built with; a store with a
    ///   migration none of them has is refused as made by a newer Chime.
    /// - Parameter access: what the command may do to the file (see ``Access``).
    /// - Parameter createDirectory: create the parent directory (mode 0700) when missing; true
    ///   for the default location, false for a path a person named (a typo should not create
    ///   directories). Only with ``Access/create``.
    /// - Throws: ``ChimeError`` with code `.store`, naming the path and what to do.
    /// - Parameter deferCheckpoints: for the runner: checkpoint the write-ahead log in
    ///   ``idle()`` rather than in the middle of firing (SQLite's automatic checkpoint syncs
    ///   the disk, which can delay an alert by milliseconds); a safety cap still applies.
    /// - Parameter readOnlyFallback: for short-lived commands: when the store's file system is
    ///   read-only or full and the store has nothing in its write-ahead log, open it for reading
    ///   only (so `chime list` still works) and refuse every write with the reason. The runner
    ///   does not: it would never see the store recover.
    /// - Parameter busyTimeout: how long, in seconds, to wait for a lock another process holds
    ///   (5 s; shell completion, which a person waits for at a prompt, waits much less).
    public init(
        path: String,
        schemas: [StoreSchema],
        access: Access = .create,
        createDirectory: Bool = false,
        deferCheckpoints: Bool = false,
        readOnlyFallback: Bool = false,
        busyTimeout: TimeInterval = 5
    ) throws(ChimeError) {
        self.path = path
        self.deferCheckpoints = deferCheckpoints
        self.schemas = schemas
        let migrator = StoreSchema.migrator(schemas)
        self.migrator = migrator
        let directory = (path as NSString).deletingLastPathComponent
        let fileManager = FileManager.default
        var isDirectory: ObjCBool = false
        var madeDirectory: String?
        if !directory.isEmpty, !fileManager.fileExists(atPath: directory, isDirectory: &isDirectory) {
            if access != .create {
                // Nothing to read or change: an empty store stands in, and no directory is made.
                (isFile, log, unwritable, self.madeFiles, self.madeDirectory) = (false, nil, nil, [], nil)
                connection = Mutex(try Self.emptyStore(path, migrator))
                return
            }
            guard createDirectory else {
                throw ChimeError(.store, "store directory '\(directory)' does not exist: create it, or name another --store")
            }
            do {
                try fileManager.createDirectory(
                    atPath: directory,
                    withIntermediateDirectories: true,
                    attributes: [.posixPermissions: 0o700]
                )
                madeDirectory = directory
            } catch {
                throw ChimeError(.store, "cannot create store directory '\(directory)': \(Self.reason(error))")
            }
        } else if !directory.isEmpty, !isDirectory.boolValue {
            throw ChimeError(.store, "store directory '\(directory)' is not a directory: name another --store")
        }
        let known = migrator.migrations
        let found = try StoreFile.inspect(path, known: known)
        if let pid = StoreFile.processWithRemovedLog(path) { throw Self.logRemoved(path, holder: pid) }
        var upToDate = false
        var madeFiles: [String] = []
        switch (found, access) {
        case (.absent, .create):
            if try Self.createFile(path, migrator) {
                madeFiles = [path] + ["-wal", "-shm"].map { path + $0 }.filter { !fileManager.fileExists(atPath: $0) }
            }
        case (.absent, _), (.empty, .read), (.empty, .update):
            (isFile, log, unwritable, self.madeFiles, self.madeDirectory) = (false, nil, nil, [], nil)
            connection = Mutex(try Self.emptyStore(path, migrator))
            return
        case (.chime(let applied), .read) where applied != Set(known):
            // An older store: read through an upgraded copy, never upgrade the file on a read.
            (isFile, log, unwritable, self.madeFiles, self.madeDirectory) = (false, nil, nil, [], nil)
            connection = Mutex(try Self.upgradedCopy(path, migrator))
            return
        case (.chime(let applied), _):
            upToDate = applied == Set(known)
        case (.empty, .create):
            break
        }
        let (queue, fault) = try Self.connect(
            path,
            migrator: migrator,
            migrate: !upToDate,
            deferCheckpoints: deferCheckpoints,
            readOnlyFallback: readOnlyFallback,
            busyTimeout: busyTimeout
        )
        isFile = true
        self.madeFiles = madeFiles
        self.madeDirectory = madeFiles.isEmpty ? nil : madeDirectory
        connection = Mutex(queue)
        unwritable = fault
        log = fault == nil ? LogWatch(storePath: path) : nil
    }

    /// An empty store in memory, for a command that reads or changes a store that does not exist.
    private static func emptyStore(_ path: String, _ migrator: DatabaseMigrator) throws(ChimeError) -> DatabaseQueue {
        do {
            let queue = try DatabaseQueue(configuration: memoryConfiguration())
            try migrator.migrate(queue)
            return queue
        } catch {
            throw storeError(error, path: path)
        }
    }

    /// A copy in memory of the store made by an older Chime at `path`, upgraded; the file is
    /// read without a change (see ``StoreFile``).
    private static func upgradedCopy(_ path: String, _ migrator: DatabaseMigrator) throws(ChimeError) -> DatabaseQueue {
        do {
            var info = stat()
            let source = try StoreFile.openReadOnly(path, immutable: stat(path + "-wal", &info) != 0)
            defer { try? source.close() }
            let copy = try DatabaseQueue(configuration: memoryConfiguration())
            try source.backup(to: copy)
            try migrator.migrate(copy)
            return copy
        } catch {
            throw storeError(error, path: path)
        }
    }

    private static func memoryConfiguration() -> Configuration {
        var configuration = Configuration()
        configuration.label = "chime"
        return configuration
    }

    /// Opens the store for reading and writing; or, with `readOnlyFallback`, for reading only
    /// when its file system refuses writes (see ``init(path:schemas:access:createDirectory:deferCheckpoints:readOnlyFallback:busyTimeout:)``).
    private static func connect(
        _ path: String,
        migrator: DatabaseMigrator,
        migrate: Bool,
        deferCheckpoints: Bool,
        readOnlyFallback: Bool,
        busyTimeout: TimeInterval = 5
    ) throws(ChimeError) -> (DatabaseQueue, ChimeError?) {
        var configuration = Configuration()
        configuration.busyMode = .timeout(busyTimeout)
        configuration.label = "chime"
        configuration.prepareDatabase { db in
            // WAL mode is recorded in the file: set it once, on a new store. (Not through GRDB's
            // `journalMode = .wal`, which writes a transaction at every open when the -wal file
            // is missing: a read would then wait for another process's lock, and fail on a
            // full disk.)
            if try String.fetchOne(db, sql: "PRAGMA journal_mode") != "wal" {
                guard try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL") == "wal" else {
                    throw DatabaseError(resultCode: .SQLITE_CANTOPEN, message: "cannot put the store in WAL mode")
                }
            }
            // WAL + NORMAL: a commit is durable once the WAL is synced at checkpoint; a power
            // cut can lose the last transactions but never corrupts the store.
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
            if deferCheckpoints {
                try db.execute(sql: "PRAGMA wal_autocheckpoint = 16384")
            } else {
                // The CLI: up to 16 MiB of page cache, so a 100,000-reminder batch keeps its
                // indexes in memory. The runner keeps SQLite's 2 MiB: it reads the head of the
                // queue, and its memory must not grow with the number of reminders.
                try db.execute(sql: "PRAGMA cache_size = -16384")
            }
        }
        let failure: ChimeError
        do {
            let queue = try DatabaseQueue(path: path, configuration: configuration)
            // Checked again on the connection: a newer Chime may have written since the file
            // was looked at.
            if try queue.read({ try migrator.hasBeenSuperseded($0) }) {
                try? queue.close()
                _ = try StoreFile.inspect(path, known: migrator.migrations)
            }
            if migrate { try migrator.migrate(queue) }
            return (queue, nil)
        } catch {
            failure = Self.storeError(error, path: path)
        }
        guard readOnlyFallback, let fault = fileSystemFault(path: path), let queue = openForReading(path, migrator) else { throw failure }
        return (queue, fault)
    }

    /// The store opened read-only as an immutable file, for a store on a file system that
    /// takes no writes (read-only, or full: SQLite cannot even create the shared-memory file a
    /// WAL reader needs). Only when the write-ahead log is absent or empty, so the database
    /// file holds every commit; and only when the schema is current. Nil otherwise.
    private static func openForReading(_ path: String, _ migrator: DatabaseMigrator) -> DatabaseQueue? {
        var info = stat()
        if stat(path + "-wal", &info) == 0 {
            guard info.st_size == 0 else { return nil }
        } else if errno != ENOENT {
            return nil
        }
        guard let uri = StoreFile.uri(path, query: "immutable=1") else { return nil }
        var configuration = Configuration()
        configuration.readonly = true
        configuration.label = "chime"
        guard let queue = try? DatabaseQueue(path: uri, configuration: configuration),
            (try? queue.read({ try migrator.hasCompletedMigrations($0) })) == true
        else { return nil }
        return queue
    }

    /// Why the file system refuses to write the store at `path`, when it does: mounted
    /// read-only, no write permission, or (almost) no space left. Nil when none of these holds.
    static func fileSystemFault(path: String) -> ChimeError? {
        let parent = (path as NSString).deletingLastPathComponent
        let directory = parent.isEmpty ? "." : parent
        var fileSystem = statvfs()
        let known = statvfs(directory, &fileSystem) == 0
        if known && fileSystem.f_flag & UInt(ST_RDONLY) != 0 {
            return ChimeError(
                .store,
                "store '\(path)' is read-only: its file system is mounted read-only; remount it read-write, or name another --store"
            )
        }
        if access(directory, W_OK) != 0 || (access(path, F_OK) == 0 && access(path, W_OK) != 0) {
            return ChimeError(
                .store,
                "store '\(path)' is read-only: no write permission on it or on '\(directory)'; fix the permissions, or name another --store"
            )
        }
        // Less than 64 KiB left: SQLite cannot grow its 32 KiB shared-memory file or its log.
        if known && UInt64(fileSystem.f_bavail) * UInt64(fileSystem.f_frsize) < 64 << 10 {
            return diskFull(path: path, directory: directory)
        }
        return nil
    }

    private static func diskFull(path: String, directory: String) -> ChimeError {
        ChimeError(
            .store,
            "store '\(path)' cannot be written: the disk is full (no space left in '\(directory)'); free some space, then try again"
        )
    }

    /// Creates the missing store file with mode 0600 (SQLite gives its -wal and -shm files the
    /// same mode); one made meanwhile by another process is looked at as any existing file.
    /// Makes the store file at `path`; false when another process made it first.
    private static func createFile(_ path: String, _ migrator: DatabaseMigrator) throws(ChimeError) -> Bool {
        let created = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if created < 0 && errno != EEXIST {
            let reason = String(cString: strerror(errno))
            if let fault = fileSystemFault(path: path) { throw fault }
            throw ChimeError(.store, "cannot create store '\(path)': \(reason)")
        }
        if created >= 0 {
            close(created)
            return true
        }
        _ = try StoreFile.inspect(path, known: migrator.migrations)
        return false
    }

    /// Removes the store this process made (the file, its write-ahead log and shared-memory
    /// file, and the directory made for it) when it holds nothing but its empty tables: for a
    /// command whose one write failed and was rolled back (`chime import` of a file found bad
    /// after its first chunk), so that it leaves no store where there was none. Closes the
    /// store: it cannot be used afterwards. Does nothing to a store that was there before this
    /// process opened it, nor to one that holds a row (another process wrote to it meanwhile).
    public func discardIfUnused() {
        guard !madeFiles.isEmpty else { return }
        let queue = dbQueue
        let unused =
            (try? queue.read { db in
                let tables = try String.fetchAll(
                    db,
                    sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name != 'grdb_migrations'"
                )
                for table in tables
                where try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM \(table.quotedDatabaseIdentifier))") == true {
                    return false
                }
                return true
            }) ?? false
        guard unused, (try? queue.close()) != nil else { return }
        for file in madeFiles { unlink(file) }
        if let madeDirectory { rmdir(madeDirectory) }
    }

    /// A store failure for a person, keeping SQLite's own result code and message as its
    /// ``ChimeError/cause`` (``SQLiteFailure``).
    static func storeError(_ error: any Error, path: String) -> ChimeError {
        if let error = error as? ChimeError { return error }
        var described = describe(error, path: path)
        if let error = error as? DatabaseError {
            described.cause = SQLiteFailure(code: error.extendedResultCode.rawValue, message: error.message)
        }
        return described
    }

    private static func describe(_ error: any Error, path: String) -> ChimeError {
        if let error = error as? DatabaseError {
            switch error.resultCode {
            case .SQLITE_CORRUPT:
                return ChimeError(
                    .store,
                    "store '\(path)' is damaged (\(error.message ?? "database disk image is malformed")): nothing was changed; run 'chime doctor' for what to do"
                )
            case .SQLITE_NOTADB:
                return ChimeError(
                    .store,
                    "'\(path)' is not a Chime store (not an SQLite database): name another --store, or move that file away"
                )
            case .SQLITE_READONLY, .SQLITE_CANTOPEN, .SQLITE_PERM, .SQLITE_IOERR, .SQLITE_FULL:
                // SQLite says "unable to open database file" or "disk I/O error" for a read-only
                // file system or a full disk: ask the file system which.
                if let fault = fileSystemFault(path: path) { return fault }
                if error.resultCode == .SQLITE_FULL {
                    let parent = (path as NSString).deletingLastPathComponent
                    return diskFull(path: path, directory: parent.isEmpty ? "." : parent)
                }
                if error.resultCode == .SQLITE_IOERR {
                    return ChimeError(
                        .store,
                        "store '\(path)' failed: \(error.message ?? "disk I/O error"): check the disk, then try again"
                    )
                }
                return ChimeError(
                    .store,
                    "cannot write store '\(path)': \(error.message ?? "read-only"): check its permissions, or name another --store"
                )
            case .SQLITE_BUSY, .SQLITE_LOCKED:
                return ChimeError(
                    .store,
                    "store '\(path)' is locked by another process (waited 5 s): try again when that process is done with it"
                )
            default:
                return ChimeError(.store, "store '\(path)' failed: \(error.message ?? String(describing: error))")
            }
        }
        return ChimeError(.store, "store '\(path)' failed: \(reason(error))")
    }

    private static func reason(_ error: any Error) -> String {
        (error as NSError).localizedDescription
    }

    /// Runs `body` in one IMMEDIATE transaction (it takes the write lock at once, so the busy
    /// timeout applies instead of a failed upgrade), mapping failures to ``ChimeError``.
    /// (`package`: the families' modules in this package write their own tables
    /// and the reminders they own in the same transaction.)
    ///
    /// A write whose write-ahead log was removed under this process is not reported as done:
    /// what the log held is saved into the database file first (see ``recoverRemovedLog()``).
    package func write<T>(_ body: (Database) throws -> T) throws(ChimeError) -> T {
        if let unwritable { throw unwritable }
        try checkLog()
        let result: T
        do {
            result = try dbQueue.writeWithoutTransaction { db in
                var result: T?
                try db.inTransaction(.immediate) {
                    result = try body(db)
                    return .commit
                }
                return result!
            }
        } catch {
            throw Self.storeError(error, path: path)
        }
        // Removed while this transaction was written: committed to a file nobody will read
        // unless it is saved now; done only once it is.
        if let log, log.isRemoved {
            try recovery.withLock { _ throws(ChimeError) in
                if log.isRemoved { try recoverRemovedLog(committed: true) }
            }
        }
        return result
    }

    /// Stops the program when the store was not opened with `schema`: a family's use cases need
    /// its tables, and every process must open a store with the same families (a programming
    /// error, caught at the family's first use rather than as "no such table" later).
    public func require(_ schema: StoreSchema) {
        precondition(
            schemas.contains { $0.owner == schema.owner },
            "the store was opened without the tables of \(schema.owner): add the family's schema to ReminderStore(path:schemas:)"
        )
    }

    /// Folds the write-ahead log into the database without waiting for readers or writers.
    public func idle() {
        guard unwritable == nil, log?.isRemoved != true else { return }
        _ = try? dbQueue.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(PASSIVE)") }
    }

    package func read<T>(_ body: (Database) throws -> T) throws(ChimeError) -> T {
        try checkLog()
        do {
            return try dbQueue.read(body)
        } catch {
            throw Self.storeError(error, path: path)
        }
    }

    /// Before reading or writing: when the write-ahead log this process opened was removed,
    /// save what it holds and reopen the store, then say so (once; the caller tries again).
    private func checkLog() throws(ChimeError) {
        guard let log, log.isRemoved else { return }
        try recovery.withLock { _ throws(ChimeError) in
            if log.isRemoved { try recoverRemovedLog(committed: false) }
        }
    }

    /// The write-ahead log was removed (unlinked) while this process had it open: its commits
    /// are in a file only this connection still reads. Copies every one of them into the
    /// database file through that connection (a checkpoint), then closes it and opens the
    /// store again, with a new log. Commits only in the removed log would be lost at exit
    /// otherwise; the runner gets on with a store that other processes see as it does.
    ///
    /// - Parameter committed: a transaction was just committed to the removed log: once it is
    ///   saved, return (the write is done); otherwise throw, saying what happened.
    /// - Throws: when the log could not be saved (another connection reads it: tried again at
    ///   the next read or write), or, with `committed` false, once it was.
    private func recoverRemovedLog(committed: Bool) throws(ChimeError) {
        let old = dbQueue
        do {
            let (busy, frames, copied) = try old.writeWithoutTransaction { db in
                let row = try Row.fetchOne(db, sql: "PRAGMA wal_checkpoint(TRUNCATE)")
                return (row?[0] as Int? ?? 1, row?[1] as Int? ?? -1, row?[2] as Int? ?? -2)
            }
            guard busy == 0, frames == copied else {
                throw DatabaseError(resultCode: .SQLITE_BUSY, message: "another connection is reading it")
            }
            let (queue, _) = try Self.connect(
                path,
                migrator: migrator,
                migrate: false,
                deferCheckpoints: deferCheckpoints,
                readOnlyFallback: false
            )
            connection.withLock { $0 = queue }
            try? old.close()
            log?.refresh()
        } catch {
            throw ChimeError(
                .store,
                "store '\(path)' failed: its write-ahead log '\(path)-wal' was removed while Chime had it open, and what it held could not be saved yet (\(Self.storeError(error, path: path).message)); "
                    + "stop every chime process on this store (the runner too), keep the store file as it is, then start again",
                cause: RemovedWriteAheadLog()
            )
        }
        if committed {
            let hook = recoveredHook.withLock { $0 }
            hook?(
                "store '\(path)': its write-ahead log '\(path)-wal' was removed while Chime had it open; what it held (a change just made too) is saved in the store, which is open again"
            )
            return
        }
        throw ChimeError(
            .store,
            "store '\(path)': its write-ahead log '\(path)-wal' was removed while Chime had it open; what it held is saved in the store, which is open again (nothing changed by this command): try again",
            cause: RemovedWriteAheadLog()
        )
    }

    /// The error for a store whose write-ahead log was removed while process `holder` has it open.
    static func logRemoved(_ path: String, holder: pid_t) -> ChimeError {
        ChimeError(
            .store,
            "store '\(path)': its write-ahead log '\(path)-wal' was removed while process \(holder) has the store open, so a change now would be lost; nothing was read or written. "
                + "A Chime runner saves what the log held and reopens the store at its next wake-up (restart it if it does not); do not remove -wal or -shm files of a store in use",
            cause: RemovedWriteAheadLog()
        )
    }

    /// Whether `error` says the store's write-ahead log was removed under a process that has it
    /// open (the CLI then wakes the runner, which recovers from it).
    public static func isRemovedLog(_ error: ChimeError) -> Bool {
        error.cause is RemovedWriteAheadLog
    }

    /// `PRAGMA quick_check` on the store file: nil when it passes, else SQLite's first findings
    /// (at most 5). It reads every page of the file: for `chime doctor`, not for every command.
    public func quickCheck() throws(ChimeError) -> [String]? {
        let findings: [String]
        do {
            findings = try dbQueue.read { db in try String.fetchAll(db, sql: "PRAGMA quick_check(5)") }
        } catch let error as DatabaseError where error.resultCode == .SQLITE_CORRUPT || error.resultCode == .SQLITE_NOTADB {
            return [error.message ?? "database disk image is malformed"]
        } catch {
            throw Self.storeError(error, path: path)
        }
        return findings == ["ok"] ? nil : findings
    }
}

/// The cause of a ``ChimeError`` for a store whose write-ahead log was removed while a process
/// had it open (``ReminderStore/isRemovedLog(_:)`` asks for it).
public struct RemovedWriteAheadLog: Error, Sendable, Hashable {
    public init() {}
}

/// SQLite's own account of a failure (GRDB's `DatabaseError`, which is not `Sendable`, read
/// into one that is): the cause of a store's ``ChimeError``.
public struct SQLiteFailure: Error, Sendable, Hashable {
    /// The extended result code (sqlite3.h: `SQLITE_FULL` is 13, `SQLITE_IOERR_WRITE` 778, ...).
    public var code: Int32
    public var message: String?
}

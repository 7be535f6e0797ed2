import ChimeCore
import Foundation
import GRDB
import GRDBSQLite
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// What is at a store's path, found before SQLite opens it: SQLite blocks for ever opening a
/// FIFO, leaves a `-journal` beside a device, and adds its tables to (and switches the journal
/// of) any database it is pointed at. Nothing here writes, creates or locks a file.
enum StoreFile {
    /// What a path holds.
    enum Found: Equatable {
        /// Nothing: a new store may be made there.
        case absent
        /// An empty file, or an SQLite database without a single table: a new store.
        case empty
        /// A Chime store, with the names of the migrations applied to it.
        case chime(applied: Set<String>)
    }

    /// Looks at `path` without changing anything, and refuses what cannot be a Chime store:
    /// anything but a regular file (a symbolic link to one is fine), a file that is not SQLite,
    /// another program's database, a store made by a newer Chime.
    ///
    /// - Parameter known: the migrations this build knows, in order.
    static func inspect(_ path: String, known: [String]) throws(ChimeError) -> Found {
        var info = stat()
        guard stat(path, &info) == 0 else {
            let error = errno
            var link = stat()
            if error == ENOENT, lstat(path, &link) == 0 {
                let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: path)) ?? "?"
                throw ChimeError(
                    .store,
                    "store '\(path)' is a symbolic link to '\(target)', which does not exist: name the store file itself with --store, or remove the link"
                )
            }
            if error == ENOENT { return .absent }
            throw ChimeError(.store, "cannot open store '\(path)': \(String(cString: strerror(error)))")
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            var link = stat()
            let isLink = lstat(path, &link) == 0 && link.st_mode & S_IFMT == S_IFLNK
            let what = FileKind.describe(info.st_mode)
            throw ChimeError(
                .store,
                "store '\(path)' is \(isLink ? "a symbolic link to " : "")\(what), not a regular file: name a store file with --store"
            )
        }
        guard try hasContent(path) else { return .empty }
        guard let applied = try appliedMigrations(path) else { return .empty }
        let unknown = applied.subtracting(known)
        if !unknown.isEmpty {
            throw ChimeError(
                .store,
                "store '\(path)' was made by a newer Chime (it has migration '\(unknown.sorted()[0])', which this chime does not know): use that Chime, or name another --store; it was left as it is"
            )
        }
        return .chime(applied: applied)
    }

    /// Whether the regular file at `path` has content; throws when that content is not SQLite.
    /// (Opened without blocking, and checked again once open: a FIFO put there meanwhile is
    /// refused, not waited on.)
    private static func hasContent(_ path: String) throws(ChimeError) -> Bool {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        guard fd >= 0 else { throw ChimeError(.store, "cannot open store '\(path)': \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            throw ChimeError(
                .store,
                "store '\(path)' is \(FileKind.describe(info.st_mode)), not a regular file: name a store file with --store"
            )
        }
        var header = [UInt8](repeating: 0, count: 16)
        let count = read(fd, &header, 16)
        if count == 0 { return false }
        if count < 16 || header != Array("SQLite format 3\0".utf8) {
            throw ChimeError(
                .store,
                "'\(path)' is not a Chime store (not an SQLite database): name another --store, or move that file away"
            )
        }
        return true
    }

    /// The migrations applied to the SQLite database at `path`, read without changing it or
    /// leaving a file beside it; nil for a database without a single table (a new store).
    /// Throws for a database with tables but without Chime's schema.
    private static func appliedMigrations(_ path: String) throws(ChimeError) -> Set<String>? {
        // Without a write-ahead log beside it (or an empty one), the database file holds every
        // commit: read it as an immutable file (no lock, no -shm or -wal made). With one, read
        // through it: it may hold commits the file does not have yet (its -shm is there too).
        // (Where the log cannot be read, on a full or read-only file system, the file alone
        // says whose database it is.)
        var info = stat()
        let hasLog = stat(path + "-wal", &info) == 0 && info.st_size > 0
        let (tables, applied): ([String], Set<String>?)
        do {
            if hasLog, let read = try? readSchema(path, immutable: false) {
                (tables, applied) = read
            } else {
                (tables, applied) = try readSchema(path, immutable: true)
            }
        } catch {
            throw ReminderStore.storeError(error, path: path)
        }
        if let applied, !applied.isEmpty { return applied }
        if tables.isEmpty { return nil }
        throw ChimeError(
            .store,
            "'\(path)' is not a Chime store (an SQLite database of another program): name another --store, or move that file away; it was left as it is"
        )
    }

    /// The tables and applied migrations of the database at `path`, read through SQLite's C API
    /// on a connection of its own. (Not through a GRDB `DatabaseQueue`: releasing one disposes
    /// of its dispatch queue, which starts a worker of libdispatch's global pool, and from then
    /// on libdispatch's monitor wakes the process once a second: the idle runner, which must
    /// not wake at all, did, 30 times in 30 s.)
    private static func readSchema(_ path: String, immutable: Bool) throws -> ([String], Set<String>?) {
        guard let uri = uri(path, query: immutable ? "immutable=1" : "mode=ro") else {
            throw DatabaseError(resultCode: .SQLITE_CANTOPEN, message: "unusable path")
        }
        var connection: OpaquePointer?
        defer { sqlite3_close_v2(connection) }
        func failure(_ code: Int32) -> DatabaseError {
            DatabaseError(resultCode: ResultCode(rawValue: code), message: connection.map { String(cString: sqlite3_errmsg($0)) })
        }
        let opened = sqlite3_open_v2(uri, &connection, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nil)
        guard opened == SQLITE_OK, let connection else { throw failure(opened) }
        func strings(_ sql: String) throws -> [String] {
            var statement: OpaquePointer?
            defer { sqlite3_finalize(statement) }
            let prepared = sqlite3_prepare_v2(connection, sql, -1, &statement, nil)
            guard prepared == SQLITE_OK else { throw failure(prepared) }
            var result: [String] = []
            while true {
                let step = sqlite3_step(statement)
                if step == SQLITE_DONE { return result }
                guard step == SQLITE_ROW else { throw failure(step) }
                result.append(sqlite3_column_text(statement, 0).map { String(cString: $0) } ?? "")
            }
        }
        let tables = try strings("SELECT name FROM sqlite_master WHERE type = 'table'")
        guard tables.contains("grdb_migrations") else { return (tables, nil) }
        return (tables, Set(try strings("SELECT identifier FROM grdb_migrations")))
    }

    /// A read-only connection to `path` (a URI filename: `mode=ro`, or `immutable=1`).
    static func openReadOnly(_ path: String, immutable: Bool) throws -> DatabaseQueue {
        guard let uri = uri(path, query: immutable ? "immutable=1" : "mode=ro") else {
            throw DatabaseError(resultCode: .SQLITE_CANTOPEN, message: "unusable path")
        }
        var configuration = Configuration()
        configuration.readonly = true
        configuration.label = "chime"
        return try DatabaseQueue(path: uri, configuration: configuration)
    }

    /// `path` as an SQLite URI filename with `query`: absolute, with an empty authority
    /// (`file:///…`), so that a path spelled with a leading `//` is not read as a host name, and
    /// with everything but unreserved characters percent-encoded (`?`, `#`, `%` in a name).
    ///
    /// Encoded here byte by byte (ASCII letters, digits and `/-._~` kept, every other UTF-8 byte
    /// as `%XX`, which SQLite decodes back to the same bytes) rather than with Foundation's
    /// `addingPercentEncoding(withAllowedCharacters: .alphanumerics…)`: building that Unicode
    /// character set cost 1.24 M of the 18.3 M instructions of a whole `chime list`
    /// (valgrind --tool=callgrind: docs/performance.md), for every command that opens a store.
    static func uri(_ path: String, query: String) -> String? {
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        let hex = Array("0123456789ABCDEF".utf8)
        var encoded: [UInt8] = []
        encoded.reserveCapacity(absolute.utf8.count + 16)
        for byte in absolute.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "/"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                encoded.append(byte)
            default:
                encoded += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
            }
        }
        return "file://" + String(decoding: encoded, as: UTF8.self) + "?" + query
    }
}

extension StoreFile {
    /// The process that has the store at `path` open although its write-ahead log is gone
    /// (someone removed `-wal` under it), or nil. Every SQLite connection to a WAL database
    /// holds a read lock on byte 128 of its `-shm` file for as long as it is open, and has its
    /// `-wal` open: a held `-shm` without a `-wal` means the log was removed. A write now would
    /// go to a new log that process never reads. (Read from /proc/locks: opening and closing
    /// the `-shm` here would drop locks this process's own connections hold on it.)
    static func processWithRemovedLog(_ path: String) -> pid_t? {
        var info = stat()
        guard stat(path + "-wal", &info) != 0, errno == ENOENT, stat(path + "-shm", &info) == 0 else { return nil }
        let device = UInt64(info.st_dev)
        let major = ((device >> 8) & 0xfff) | ((device >> 32) & ~UInt64(0xfff))
        let minor = (device & 0xff) | ((device >> 12) & ~UInt64(0xff))
        let file = String(format: "%02x:%02x:%lu", major, minor, UInt(info.st_ino))
        guard let locks = try? String(contentsOfFile: "/proc/locks", encoding: .utf8) else { return nil }
        for line in locks.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count >= 8, fields[1] == "POSIX", fields[5] == file,
                let start = UInt64(fields[6]), fields[7] == "EOF" || (UInt64(fields[7]) ?? 0) >= 128, start <= 128
            else { continue }
            return pid_t(fields[4]) ?? 0
        }
        return nil
    }
}

/// The store's write-ahead log as this process's connection opened it: a descriptor of our
/// own on the same file, so that its removal (its link count drops to 0) is seen at once.
/// (`@unchecked Sendable`: the descriptor is only read and replaced under its mutex.)
final class LogWatch: @unchecked Sendable {
    let path: String
    private let fd = Mutex<Int32>(-1)

    init(storePath: String) {
        path = storePath + "-wal"
        refresh()
    }

    deinit { fd.withLock { if $0 >= 0 { close($0) } } }

    /// Opens the log file (when it exists) in place of the one watched before.
    func refresh() {
        let opened = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        fd.withLock {
            if $0 >= 0 { close($0) }
            $0 = opened
        }
    }

    /// Whether the log this process writes was removed (unlinked) under it.
    var isRemoved: Bool {
        fd.withLock { fd in
            if fd < 0 {
                // The connection had not opened its log yet when this was made: watch it now.
                fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
                return false
            }
            var info = stat()
            return fstat(fd, &info) == 0 && info.st_nlink == 0
        }
    }
}

import ChimeCore
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Where the runner of one store keeps its lock and its wake-up socket.
///
/// The lock lives with the store file itself: `STORE.lock` beside the store, in the directory
/// the store really is in (links resolved). So one runner per store holds however the store is
/// spelled (a link to the file or to its directory, a relative path, `//`) and whatever the
/// environment (`XDG_RUNTIME_DIR` set by a systemd user unit, unset under su, cron or ssh): every
/// spelling reaches the same lock file. The runner writes its pid and its socket's path into
/// the lock, and the CLI finds the runner there.
///
/// The socket is bound in `$XDG_RUNTIME_DIR/chime/` (mode 0700) when that is set, else beside
/// the store (a Unix socket's path is limited to 107 bytes; the runtime directory keeps it short).
public struct RunnerPaths: Sendable, Hashable {
    /// Where this process would bind a runner's socket.
    public var socket: String
    /// The runner lock, beside the store: the same file for every spelling of the store.
    public var lock: String
    /// The directory that holds the socket; the runner insists it is the user's alone.
    public var directory: String
    public var usesRuntimeDirectory: Bool

    public init(storePath: String, environment: [String: String] = ProcessInfo.processInfo.environment) {
        let canonical = Self.canonical(storePath)
        lock = canonical + ".lock"
        if let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") {
            directory = runtime + "/chime"
            socket = directory + "/store-" + Self.fnv1a(canonical) + ".sock"
            usesRuntimeDirectory = true
        } else {
            directory = (canonical as NSString).deletingLastPathComponent
            socket = canonical + ".sock"
            usesRuntimeDirectory = false
        }
    }

    /// The store's absolute path with every link resolved (the file's own too, when it is one),
    /// so that two spellings of one store name the same lock.
    static func canonical(_ path: String) -> String {
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        if let resolved = realpath(absolute, nil) {
            defer { free(resolved) }
            return String(cString: resolved)
        }
        // Not there yet (the runner creates it): its directory resolved, and its name.
        let directory = (absolute as NSString).deletingLastPathComponent
        let name = (absolute as NSString).lastPathComponent
        guard let resolved = realpath(directory, nil) else { return absolute }
        defer { free(resolved) }
        let parent = String(cString: resolved)
        return (parent == "/" ? "" : parent) + "/" + name
    }

    /// FNV-1a, 64 bits, as hex: a short stable name for a store path (not a secret).
    static func fnv1a(_ text: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return String(hash, radix: 16)
    }

    /// Creates the runtime directory (0700) and checks it is the user's alone.
    func prepareDirectory() throws(ChimeError) {
        if usesRuntimeDirectory {
            if mkdir(directory, 0o700) != 0 && errno != EEXIST {
                throw ChimeError(
                    .failure,
                    "cannot create the runner's directory '\(directory)': \(String(cString: strerror(errno))); check XDG_RUNTIME_DIR"
                )
            }
            var info = stat()
            guard lstat(directory, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else {
                throw ChimeError(.failure, "'\(directory)' is not a directory: remove it and start the runner again")
            }
            guard info.st_uid == geteuid() else {
                throw ChimeError(
                    .failure,
                    "'\(directory)' belongs to another user: refusing to put the runner's socket there; set XDG_RUNTIME_DIR to a directory of your own"
                )
            }
            if info.st_mode & 0o077 != 0 { chmod(directory, 0o700) }
        }
    }
}

/// The runner's lock: one runner per store, held with `flock` for the runner's lifetime and
/// released by the kernel when it dies (no stale lock after `kill -9`). It holds the runner's
/// pid, its socket path and where its alerts go now, one a line, for the CLI
/// (``RunnerLock/holder(at:)``, ``RunnerLock/destination(at:)``).
public final class RunnerLock: Sendable {
    let fd: Int32
    public let path: String
    private let published = Mutex<(socket: String?, destination: String?)>((nil, nil))

    /// Takes the lock, or throws `.runnerRunning` naming the pid of the runner that holds it.
    public init(path: String, storePath: String) throws(ChimeError) {
        self.path = path
        // Never through a symbolic link, and only a regular file of this user's: the lock is
        // truncated and written, and whatever a link pointed at would be overwritten.
        let fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            if errno == ELOOP {
                throw ChimeError(
                    .failure,
                    "the runner lock '\(path)' is a symbolic link: refusing to follow it; remove it and start the runner again"
                )
            }
            if errno == EACCES, let holder = Self.holder(at: path, anyOwner: true) {
                throw ChimeError(
                    .runnerRunning,
                    "a runner of another user is already running for store '\(storePath)' (pid \(holder.pid.map(String.init) ?? "?")): this store is not yours to run"
                )
            }
            throw ChimeError(.failure, "cannot open the runner lock '\(path)': \(String(cString: strerror(errno)))")
        }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_uid == geteuid() else {
            close(fd)
            if let holder = Self.holder(at: path, anyOwner: true) {
                throw ChimeError(
                    .runnerRunning,
                    "a runner of another user is already running for store '\(storePath)' (pid \(holder.pid.map(String.init) ?? "?")): this store is not yours to run"
                )
            }
            throw ChimeError(
                .failure,
                "the runner lock '\(path)' is not this user's regular file: refusing to use it; remove it and start the runner again"
            )
        }
        if flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let pid = Self.read(fd).pid.map(String.init) ?? "?"
            close(fd)
            throw ChimeError(
                .runnerRunning,
                "a runner is already running for store '\(storePath)' (pid \(pid)): stop it first, or name another --store"
            )
        }
        self.fd = fd
        publish(socket: nil)
    }

    /// Writes this runner's pid and, once bound, its socket's path into the lock.
    public func publish(socket: String?) {
        published.withLock { published in
            published.socket = socket
            write(published)
        }
    }

    /// Writes where the runner's alerts go now (``Notifier/destination``) into the lock, after
    /// its pid and socket: what `chime doctor` reports.
    public func publish(destination: String) {
        published.withLock { published in
            published.destination = UserText.oneLine(destination)
            write(published)
        }
    }

    /// Overwrites the lock's text in place, then cuts what is left of a longer one: a reader
    /// in between sees the new lines first (the pid never changes), never an empty file.
    private func write(_ published: (socket: String?, destination: String?)) {
        var text = "\(getpid())\n"
        if published.socket != nil || published.destination != nil { text += (published.socket ?? "") + "\n" }
        if let destination = published.destination { text += destination + "\n" }
        let length = text.utf8.count
        _ = text.withCString { pwrite(fd, $0, strlen($0), 0) }
        _ = ftruncate(fd, off_t(length))
    }

    /// Where the alerts of the runner holding the lock at `path` go now, as it published it;
    /// nil when no runner holds it (or one that does not publish it).
    public static func destination(at path: String) -> String? {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_uid == geteuid() else { return nil }
        if flock(fd, LOCK_SH | LOCK_NB) == 0 {
            flock(fd, LOCK_UN)
            return nil
        }
        let lines = text(fd).split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.count > 2, !lines[2].isEmpty else { return nil }
        return String(lines[2])
    }

    private static func text(_ fd: Int32) -> String {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = pread(fd, &buffer, buffer.count - 1, 0)
        guard count > 0 else { return "" }
        return String(decoding: buffer[0..<count], as: UTF8.self)
    }

    /// The runner holding the lock at `path`: its pid and socket as it wrote them, or nil when
    /// no runner holds it (no file, or a file no process has locked).
    ///
    /// - Parameter anyOwner: also a lock file of another user's (only to name its pid in a
    ///   refusal); otherwise only this user's lock is trusted, since the CLI sends to its socket.
    public static func holder(at path: String, anyOwner: Bool = false) -> (pid: Int32?, socket: String?)? {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, anyOwner || info.st_uid == geteuid() else { return nil }
        if flock(fd, LOCK_SH | LOCK_NB) == 0 {
            flock(fd, LOCK_UN)
            return nil
        }
        return read(fd)
    }

    /// Whether a runner holds the lock at `path` right now (without taking it).
    public static func isHeld(at path: String) -> Bool {
        holder(at: path, anyOwner: true) != nil
    }

    /// The pid and socket path written in the lock file `fd`.
    private static func read(_ fd: Int32) -> (pid: Int32?, socket: String?) {
        let lines = text(fd).split(separator: "\n", omittingEmptySubsequences: false)
        guard !lines.isEmpty else { return (nil, nil) }
        // ChimeCore's trim, not `trimmingCharacters(in: .whitespaces)`: building Foundation's
        // Unicode character set cost 1.05 M of the 20.5 M instructions of a whole
        // `chime in 5m x` (valgrind --tool=callgrind: docs/performance.md, "Counting instructions").
        let pid = lines.first.flatMap { Int32($0.trimmingWhitespace()) }
        let socket = lines.dropFirst().first.map(String.init).flatMap { $0.hasPrefix("/") ? $0 : nil }
        return (pid, socket)
    }

    deinit {
        close(fd)
    }
}

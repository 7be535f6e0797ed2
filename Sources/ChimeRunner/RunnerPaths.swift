import ChimeCore
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Where the runner of one store keeps its wake-up socket and its lock: in
/// `$XDG_RUNTIME_DIR/chime/` (mode 0700) when set, else beside the store.
public struct RunnerPaths: Sendable, Hashable {
    public var socket: String
    public var lock: String
    /// The directory that holds both; the runner insists it is the user's alone.
    public var directory: String
    public var usesRuntimeDirectory: Bool

    public init(storePath: String, environment: [String: String] = ProcessInfo.processInfo.environment) {
        let canonical = Self.canonical(storePath)
        if let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") {
            directory = runtime + "/chime"
            let name = "store-" + Self.fnv1a(canonical)
            socket = directory + "/" + name + ".sock"
            lock = directory + "/" + name + ".lock"
            usesRuntimeDirectory = true
        } else {
            directory = (canonical as NSString).deletingLastPathComponent
            socket = canonical + ".sock"
            lock = canonical + ".lock"
            usesRuntimeDirectory = false
        }
    }

    /// The store's absolute path with links resolved, so two spellings of one store share a runner.
    static func canonical(_ path: String) -> String {
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        let directory = (absolute as NSString).deletingLastPathComponent
        let name = (absolute as NSString).lastPathComponent
        guard let resolved = realpath(directory, nil) else { return absolute }
        defer { free(resolved) }
        return String(cString: resolved) + "/" + name
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
/// released by the kernel when it dies (no stale lock after `kill -9`).
public final class RunnerLock: Sendable {
    let fd: Int32
    public let path: String

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
            throw ChimeError(.failure, "cannot open the runner lock '\(path)': \(String(cString: strerror(errno)))")
        }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_uid == geteuid() else {
            close(fd)
            throw ChimeError(
                .failure,
                "the runner lock '\(path)' is not this user's regular file: refusing to use it; remove it and start the runner again"
            )
        }
        if flock(fd, LOCK_EX | LOCK_NB) != 0 {
            var buffer = [UInt8](repeating: 0, count: 32)
            let count = pread(fd, &buffer, 31, 0)
            close(fd)
            let pid = count > 0 ? String(decoding: buffer[0..<count], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) : "?"
            throw ChimeError(
                .runnerRunning,
                "a runner is already running for store '\(storePath)' (pid \(pid)): stop it first, or name another --store"
            )
        }
        let pid = "\(getpid())\n"
        _ = ftruncate(fd, 0)
        _ = pid.withCString { pwrite(fd, $0, strlen($0), 0) }
        self.fd = fd
    }

    /// Whether a runner holds the lock at `path` right now (without taking it).
    public static func isHeld(at path: String) -> Bool {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        if flock(fd, LOCK_SH | LOCK_NB) == 0 {
            flock(fd, LOCK_UN)
            return false
        }
        return true
    }

    deinit {
        close(fd)
    }
}

import ChimeCore
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The runner's wake-up socket: a Unix datagram socket. The CLI sends one byte after it
/// changes the store; the runner drains them and runs a pass. Datagrams carry no data the
/// runner trusts: a poke only says "look at the store again".
public enum WakeSocket {
    /// Binds the runner's socket at `path` (mode 0600), replacing a stale one.
    static func bind(path: String) throws(ChimeError) -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw ChimeError(.failure, "cannot create the wake-up socket: \(String(cString: strerror(errno)))") }
        // Only a runner holding the store's lock gets here, so a socket file left at `path` is stale.
        var info = stat()
        if lstat(path, &info) == 0 {
            guard (info.st_mode & S_IFMT) == S_IFSOCK, info.st_uid == geteuid() else {
                close(fd)
                throw ChimeError(
                    .failure,
                    "'\(path)' exists and is not this user's socket: refusing to replace it; remove it and start the runner again"
                )
            }
            unlink(path)
        }
        let result = withAddress(path) { address, length in
            let oldMask = umask(0o177)
            defer { umask(oldMask) }
            return Glibc.bind(fd, address, length)
        }
        guard let result, result == 0 else {
            let reason = result == nil ? "the path is too long for a Unix socket" : String(cString: strerror(errno))
            close(fd)
            throw ChimeError(.failure, "cannot bind the wake-up socket '\(path)': \(reason)")
        }
        return fd
    }

    /// Pokes the runner listening at `path`. Returns false when none is listening.
    public static func poke(path: String) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var byte: UInt8 = 0x70
        let sent = withAddress(path) { address, length in sendto(fd, &byte, 1, 0, address, length) }
        guard let sent else { return false }
        // A full queue (EAGAIN) means a runner is there with pokes still to read: enough.
        return sent == 1 || errno == EAGAIN
    }

    /// Drains every pending datagram; returns how many there were.
    static func drain(_ fd: Int32) -> Int {
        var buffer = [UInt8](repeating: 0, count: 64)
        var count = 0
        while recv(fd, &buffer, buffer.count, 0) >= 0 { count += 1 }
        return count
    }

    private static func withAddress<T>(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> T) -> T? {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count < capacity else { return nil }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                body($0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
    }
}

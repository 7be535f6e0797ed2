import ChimeCore
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Tells the service manager that started the runner (systemd, for a `Type=notify` unit) how it
/// is doing: `READY=1` once it serves, `STOPPING=1` when it starts to stop, over the datagram
/// socket named in `$NOTIFY_SOCKET`.
///
/// Written by hand rather than by linking libsystemd: sd_notify(3), NOTES, describes the whole
/// protocol (one datagram of newline-separated `VARIABLE=value` assignments sent to the
/// `AF_UNIX` socket named in `$NOTIFY_SOCKET`, an initial `@` meaning the abstract namespace),
/// and since systemd 256 its "Standalone Implementations" part gives a self-contained version
/// for programs that do not want to depend on libsystemd, the protocol being stable: systemd's
/// Interface Portability and Stability chart lists `$NOTIFY_SOCKET` as reimplementable
/// independently (https://www.freedesktop.org/software/systemd/man/latest/sd_notify.html).
/// Nothing else of libsystemd is needed here.
///
/// `$NOTIFY_SOCKET` is read and left set (sd_notify's `unset_environment` = 0): the runner
/// starts no child process that could inherit it, and `unsetenv` in a process whose other
/// threads (GLib's, the waker's) may read the environment is not thread-safe (setenv(3): MT-Unsafe env).
public struct ServiceManagerNotify: Sendable, Hashable {
    /// The socket's address as `$NOTIFY_SOCKET` gives it: an absolute path, or `@name` for the abstract namespace.
    public let address: String

    /// The notifier for `$NOTIFY_SOCKET` in `environment`; nil when it is unset or empty (not
    /// started by a service manager that listens), or names a kind of socket this does not speak
    /// (systemd 256's `vsock:`), which ``unsupported(environment:)`` describes.
    public init?(environment: [String: String] = ProcessInfo.processInfo.environment) {
        guard let address = environment["NOTIFY_SOCKET"], address.hasPrefix("/") || address.hasPrefix("@"), address.count > 1
        else { return nil }
        self.address = address
    }

    /// A `$NOTIFY_SOCKET` that is set but is neither a path nor an abstract name, for the log; nil otherwise.
    public static func unsupported(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        guard let address = environment["NOTIFY_SOCKET"], !address.isEmpty, ServiceManagerNotify(environment: environment) == nil
        else { return nil }
        return address
    }

    /// Sends `assignments` (`READY=1`, `STATUS=…`) as one datagram.
    ///
    /// Never blocks: a manager whose queue is full makes it fail (EAGAIN) rather than stall the
    /// runner. The caller logs a failure and goes on: the runner serves its reminders whether
    /// or not the manager heard it.
    public func send(_ assignments: [String]) throws(ChimeError) {
        // A value with a newline would read as a second assignment: one line each.
        let payload = Array(assignments.map { $0.replacingOccurrences(of: "\n", with: " ") }.joined(separator: "\n").utf8)
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else {
            throw ChimeError(.failure, "cannot create a socket to notify the service manager: \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        var name = Array(address.utf8)
        // Abstract namespace: a leading NUL instead of '@', and the length says where the name ends (no trailing NUL).
        let abstract = name.first == UInt8(ascii: "@")
        if abstract { name[0] = 0 }
        var socketAddress = sockaddr_un()
        socketAddress.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: socketAddress.sun_path)
        guard name.count < capacity else {
            throw ChimeError(.failure, "NOTIFY_SOCKET '\(address)' is too long for a Unix socket address (at most \(capacity - 1) bytes)")
        }
        withUnsafeMutableBytes(of: &socketAddress.sun_path) { raw in
            raw.copyBytes(from: name)
            raw[name.count] = 0
        }
        let pathOffset = MemoryLayout<sockaddr_un>.offset(of: \.sun_path) ?? MemoryLayout<sa_family_t>.size
        let length = socklen_t(pathOffset + name.count + (abstract ? 0 : 1))
        let sent = withUnsafePointer(to: &socketAddress) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                sendto(fd, payload, payload.count, Int32(MSG_DONTWAIT) | Int32(MSG_NOSIGNAL), $0, length)
            }
        }
        guard sent == payload.count else {
            let reason = sent < 0 ? String(cString: strerror(errno)) : "only \(sent) of \(payload.count) bytes sent"
            throw ChimeError(.failure, "cannot notify the service manager at NOTIFY_SOCKET '\(address)': \(reason)")
        }
    }
}

import ChimeCore
import Foundation
import Testing

@testable import ChimeRunner

#if canImport(Glibc)
import Glibc
#endif

/// A datagram socket a test binds, as a service manager binds `$NOTIFY_SOCKET`.
final class ListeningSocket {
    let fd: Int32
    /// What `$NOTIFY_SOCKET` names it: the path, or `@name` in the abstract namespace.
    let address: String
    private let path: String?

    /// Binds a socket at `path`, or at `@abstract` in the abstract namespace.
    init(path: String? = nil, abstract: String? = nil) throws {
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let name: [UInt8] = path.map { Array($0.utf8) } ?? ([0] + Array((abstract ?? "").utf8))
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: name) }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + name.count + (path == nil ? 0 : 1))
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0 else {
            close(fd)
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
        self.fd = fd
        self.path = path
        self.address = path ?? "@" + (abstract ?? "")
    }

    /// The datagram waiting now, if any (a local datagram arrives before `sendto` returns).
    func receive() -> String? {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = recv(fd, &buffer, buffer.count, 0)
        return count >= 0 ? String(decoding: buffer[0..<count], as: UTF8.self) : nil
    }

    deinit {
        close(fd)
        if let path { unlink(path) }
    }
}

@Suite("Start at login: sd_notify and the autostart entry, piece by piece")
struct StartAtLoginPiecesTests {
    @Test("READY and STATUS reach a socket bound at a path, as one datagram")
    func notifiesAPathSocket() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let manager = try ListeningSocket(path: directory.file("notify"))
        let notify = try #require(ServiceManagerNotify(environment: ["NOTIFY_SOCKET": manager.address]))

        try notify.send(["READY=1", "STATUS=Serving /x; next due at start: none"])

        #expect(manager.receive() == "READY=1\nSTATUS=Serving /x; next due at start: none")
        #expect(manager.receive() == nil)
    }

    @Test("An @name reaches a socket in the abstract namespace (no file)")
    func notifiesAnAbstractSocket() throws {
        let name = "chime-notify-test-\(UUID().uuidString)"
        let manager = try ListeningSocket(abstract: name)
        let notify = try #require(ServiceManagerNotify(environment: ["NOTIFY_SOCKET": "@" + name]))

        try notify.send(["STOPPING=1"])

        #expect(manager.receive() == "STOPPING=1")
        // Not the path "@name", nor a name with a trailing NUL: another name would get nothing.
        #expect(!FileManager.default.fileExists(atPath: "@" + name))
    }

    @Test("A newline in a value cannot make a second assignment")
    func oneLinePerAssignment() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let manager = try ListeningSocket(path: directory.file("notify"))
        try #require(ServiceManagerNotify(environment: ["NOTIFY_SOCKET": manager.address])).send(["STATUS=a\nREADY=1"])
        #expect(manager.receive() == "STATUS=a READY=1")
    }

    @Test(
        "No NOTIFY_SOCKET, an empty one or one of another kind: nothing to tell",
        arguments: [nil, "", "relative/path", "vsock:2:1234", "@"]
    )
    func nothingToTell(_ value: String?) {
        let environment = value.map { ["NOTIFY_SOCKET": $0] } ?? [:]
        #expect(ServiceManagerNotify(environment: environment) == nil)
        #expect(ServiceManagerNotify.unsupported(environment: environment) == ((value ?? "").isEmpty ? nil : value))
    }

    @Test("A socket nobody listens on fails with a message naming it, and never blocks")
    func nobodyListening() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let missing = directory.file("gone")
        let error = #expect(throws: ChimeError.self) {
            try ServiceManagerNotify(environment: ["NOTIFY_SOCKET": missing])?.send(["READY=1"])
        }
        #expect(error?.message.contains("'\(missing)'") == true, "\(String(describing: error))")
    }

    @Test("is-system-running: any state but offline means a user manager answers")
    func managerDetection() {
        for state in ["running\n", "degraded\n", "starting\n", "initializing\n", "maintenance\n", "stopping\n"] {
            #expect(StartAtLogin.managerRunning(isSystemRunning: state), "\(state)")
        }
        for state in ["offline\n", "", "\n", "unknown\n"] {
            #expect(!StartAtLogin.managerRunning(isSystemRunning: state), "\(state)")
        }
    }

    @Test(
        "The Exec key quotes a path as the Desktop Entry Specification says",
        arguments: [
            ("/usr/bin/chime", "/usr/bin/chime"),
            ("/home/a b/.local/bin/chime", #""/home/a b/.local/bin/chime""#),
            ("/opt/100%/chime", #"/opt/100%%/chime"#),
            (#"/opt/$x"y/chime"#, #""/opt/\\$x\\"y/chime""#),
        ]
    )
    func execQuoting(_ path: String, _ expected: String) {
        #expect(StartAtLogin.execArgument(path) == expected)
    }

    @Test("An entry is read for its marker, whether it is on, and its Exec")
    func readsEntries() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let chimes = directory.file("chimes.desktop")
        try StartAtLogin.entryText(executable: "/usr/bin/chime").write(toFile: chimes, atomically: true, encoding: .utf8)
        let entry = try #require(StartAtLogin.readEntry(at: chimes))
        #expect(entry.chimes && entry.enabled && entry.exec == "/usr/bin/chime run")

        let own = directory.file("own.desktop")
        let text = "[Desktop Entry]\nType=Application\nName=Mine\nExec=chime run\nHidden=true\n[Desktop Action x]\nX-Chime-Service=true\n"
        try text.write(toFile: own, atomically: true, encoding: .utf8)
        let person = try #require(StartAtLogin.readEntry(at: own))
        // The marker counts only in the main group; Hidden=true turns it off.
        #expect(!person.chimes && !person.enabled)
        #expect(StartAtLogin.readEntry(at: directory.file("none.desktop")) == nil)
    }
}

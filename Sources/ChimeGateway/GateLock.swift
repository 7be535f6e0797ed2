import ChimeCore
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// One gate per program at a time: a second launch while a gate for the same program is open
/// raises that gate instead of opening another (and starts nothing: the open gate's Proceed
/// does). An advisory lock (`flock`) on a file per program, released by the kernel when the
/// process ends however it ends, so a crashed gate never blocks the next launch.
public final class GateLock: Sendable {
    private let descriptor: Int32

    /// What trying to take the lock found.
    public enum Attempt: Sendable {
        case taken(GateLock)
        /// Another process (`pid`, when it could be read) shows a gate for the program.
        case held(pid: Int32?)
    }

    /// The directory of the lock files: `$XDG_RUNTIME_DIR/chime`, else
    /// `$XDG_STATE_HOME/chime` (default `~/.local/state/chime`).
    public static func directory(environment: [String: String]) -> String {
        if let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") { return runtime + "/chime" }
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") { return state + "/chime" }
        return (environment["HOME"] ?? NSHomeDirectory()) + "/.local/state/chime"
    }

    /// Takes the lock of `programID` in `directory` (created, mode 0700), without waiting.
    /// - Throws: when the lock file cannot be made (the caller then shows the gate anyway).
    public static func take(programID: String, directory: String) throws(ChimeError) -> Attempt {
        do {
            try FileManager.default.createDirectory(
                atPath: directory,
                withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700]
            )
        } catch {
            throw ChimeError(.failure, "cannot create '\(directory)': \(error.localizedDescription)")
        }
        // The id may hold any character a file name may not: its UTF-8 bytes in hex name it.
        let name = programID.utf8.map { String($0, radix: 16) }.joined()
        let path = directory + "/gate-" + name + ".lock"
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw ChimeError(.failure, "cannot open '\(path)': \(String(cString: strerror(errno)))")
        }
        if flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            var buffer = [UInt8](repeating: 0, count: 32)
            let count = pread(descriptor, &buffer, buffer.count, 0)
            close(descriptor)
            let text = count > 0 ? String(decoding: buffer[0..<count], as: UTF8.self) : ""
            return .held(pid: Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)))
        }
        let pid = Data("\(getpid())\n".utf8)
        _ = ftruncate(descriptor, 0)
        _ = pid.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
        return .taken(GateLock(descriptor: descriptor))
    }

    private init(descriptor: Int32) { self.descriptor = descriptor }

    deinit { close(descriptor) }
}

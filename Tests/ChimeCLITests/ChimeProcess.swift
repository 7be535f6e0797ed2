import ChimeApp
import ChimeDoses
import ChimeFocus
import ChimeGateway
import ChimeStore
import ChimeTesting
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The real `chime` executable, built beside this test bundle by `swift test`.
enum ChimeExecutable {
    static var url: URL {
        if let path = ProcessInfo.processInfo.environment["CHIME_EXECUTABLE"] { return URL(fileURLWithPath: path) }
        let bundleDirectory = Bundle.main.bundleURL.deletingLastPathComponent()
        let candidates = [
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("chime"),
            bundleDirectory.appendingPathComponent("chime"),
            Bundle.main.bundleURL.appendingPathComponent("chime"),
        ]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) } ?? candidates[0]
    }

    /// A `chime` process with `arguments` and `environment`, its output and errors on pipes, not started.
    /// - Parameter throughShell: started by `/bin/sh -c 'exec chime …'` (the same process, so its
    ///   pid is chime's): with libfaketime preloaded, a Swift program spawned directly reads no
    ///   arguments (it printed its help), exec'd by a shell it reads them.
    static func process(_ arguments: [String], environment: [String: String], throughShell: Bool = false) -> (Process, out: Pipe, err: Pipe)
    {
        let process = Process()
        if throughShell {
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", #"exec "$0" "$@""#, url.path] + arguments
        } else {
            process.executableURL = url
            process.arguments = arguments
        }
        process.environment = environment
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        return (process, out, err)
    }
}

/// A temporary home for one test: its own store and runtime directory, removed afterwards.
struct Sandbox: ~Copyable {
    let directory: URL
    var store: String { directory.appendingPathComponent("chime.sqlite").path }
    var runtime: String { directory.appendingPathComponent("run").path }

    /// Variables added to (or, when empty, removed from) the environment of every `chime` run.
    let extra: [String: String]

    /// The sandbox's own home and XDG directories (see ``IsolatedEnvironment``).
    private let isolated: [String: String]

    init(extra: [String: String] = [:]) throws {
        self.extra = extra
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("chime-e2e-\(UUID().uuidString)")
        isolated = try IsolatedEnvironment.variables(root: directory)
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

    /// The sandbox's isolated environment with its store as `CHIME_STORE`; no desktop (session
    /// bus, display) unless a test brings its own notification server through `extra`.
    var environment: [String: String] {
        var environment = isolated
        environment["CHIME_STORE"] = store
        for (key, value) in extra { environment[key] = value.isEmpty ? nil : value }
        return environment
    }

    /// Runs `chime` to completion.
    func chime(_ arguments: String...) throws -> (status: Int32, stdout: String, stderr: String) {
        try chime(arguments)
    }

    func chime(_ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        let (process, out, err) = ChimeExecutable.process(arguments, environment: environment)
        try process.run()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: stdout, as: UTF8.self), String(decoding: stderr, as: UTF8.self))
    }

    /// Starts `chime run` with `arguments`; stop it with ``RunningChime/terminate()``.
    func startRunner(_ arguments: String...) throws -> RunningChime {
        try RunningChime(arguments: ["run"] + arguments, environment: environment)
    }
}

/// A `chime run` process whose standard output is read line by line.
final class RunningChime: Sendable {
    let process: Process
    /// Lines read so far and not yet taken, and whether standard output has ended. (A buffer
    /// rather than an AsyncStream raced against a timeout: a line arriving as the timeout wins
    /// would be taken by the cancelled reader and lost.)
    private final class Lines: Sendable {
        let state = Mutex<(lines: [String], pending: Data, ended: Bool)>(([], Data(), false))
    }
    private let lines = Lines()
    private final class Text: Sendable { let value = Mutex("") }
    private let errors = Text()

    init(arguments: [String], environment: [String: String], throughShell: Bool = false) throws {
        let (process, out, err) = ChimeExecutable.process(arguments, environment: environment, throughShell: throughShell)
        let lines = self.lines
        let errors = self.errors
        self.process = process
        try process.run()
        // Each pipe is read by a thread of its own, blocking in read(2) until the runner's end
        // closes, rather than by a FileHandle readability source: libdispatch's epoll loop has
        // crashed the test process (a bad pointer in _dispatch_event_loop_drain) when both
        // sources were cancelled at end of stream while its manager thread still held their
        // events.
        Self.read(out, name: "chime-test-stdout") { data in
            guard let data else {
                lines.state.withLock { $0.ended = true }
                return
            }
            lines.state.withLock { state in
                state.pending.append(data)
                while let newline = state.pending.firstIndex(of: UInt8(ascii: "\n")) {
                    state.lines.append(String(decoding: state.pending[state.pending.startIndex..<newline], as: UTF8.self))
                    state.pending.removeSubrange(state.pending.startIndex...newline)
                }
            }
        }
        Self.read(err, name: "chime-test-stderr") { data in
            if let data { errors.value.withLock { $0 += String(decoding: data, as: UTF8.self) } }
        }
    }

    /// Reads `pipe` on a thread of its own until end of stream, handing each chunk to `body`,
    /// then nil.
    private static func read(_ pipe: Pipe, name: String, _ body: @escaping @Sendable (Data?) -> Void) {
        let thread = Thread {
            let fd = pipe.fileHandleForReading.fileDescriptor
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = Glibc.read(fd, &buffer, buffer.count)
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { break }
                body(Data(buffer[0..<count]))
            }
            body(nil)
        }
        thread.name = name
        thread.start()
    }

    var stderr: String { errors.value.withLock { $0 } }

    /// The next line on standard output, or nil after `timeout` seconds or at end of stream.
    func nextLine(timeout: Double) async -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let (line, ended): (String?, Bool) = lines.state.withLock { state in
                state.lines.isEmpty ? (nil, state.ended) : (state.lines.removeFirst(), false)
            }
            if let line { return line }
            if ended || Date() >= deadline { return nil }
            try? await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Every line read so far and not yet taken (without waiting).
    func drain() -> [String] {
        lines.state.withLock { state in
            defer { state.lines.removeAll() }
            return state.lines
        }
    }

    /// The lines printed in the next `seconds`, or until standard output ends.
    func lines(for seconds: Double) async -> [String] {
        let end = Date().addingTimeInterval(seconds)
        var collected: [String] = []
        while end.timeIntervalSinceNow > 0, let line = await nextLine(timeout: end.timeIntervalSinceNow) {
            collected.append(line)
        }
        return collected
    }

    /// Kills the runner with SIGKILL, as a crash would, and waits for it to be gone.
    func crash() {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Waits until the runner logged that it started (its socket is bound), up to `timeout`.
    func waitUntilStarted(timeout: Double = 10) async -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if stderr.contains("Runner started") { return true }
            if !process.isRunning { return false }
            try? await Task.sleep(for: .milliseconds(20))
        }
        // Once more: this task may have come back long after the deadline (other tests holding
        // the few threads of Swift's pool), while the runner started in time.
        return stderr.contains("Runner started")
    }

    /// Sends SIGTERM to the runner's pid and waits for it to exit; returns its status.
    func terminate(timeout: Double = 10) async -> Int32? {
        kill(process.processIdentifier, SIGTERM)
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            return nil
        }
        return process.terminationStatus
    }
}

/// Decodes one JSON object line.
func jsonObject(_ line: String) throws -> [String: Any] {
    try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
}

/// Programs started with posix_spawn rather than Foundation's Process: Process learns that a
/// child ended when a descriptor the child inherited closes (daemons a script leaves running,
/// or a `chime` started while another thread holds a runner's pipe, would keep it open), and a
/// child of a test thread would inherit that thread's blocked signals (daemons would ignore
/// SIGTERM). Here the signal mask is reset and every descriptor from 3 on is closed.
enum Spawn {
    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 on), which the Glibc module
    /// does not import.
    private static let closeFrom: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? = {
        dlsym(nil, "posix_spawn_file_actions_addclosefrom_np").map {
            unsafeBitCast($0, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
        }
    }()

    /// Starts `path` with standard input from /dev/null, standard output to the file `output`
    /// and standard error to `errors` (nil: the same file). Returns its pid, or the errno.
    static func start(
        _ path: String,
        _ arguments: [String],
        environment: [String: String],
        output: String,
        errors: String? = nil
    ) -> Result<pid_t, POSIXError> {
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        if let errors {
            posix_spawn_file_actions_addopen(&actions, 2, errors, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        } else {
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        }
        _ = closeFrom?(&actions, 3)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))
        var pid = pid_t()
        let spawned = posix_spawn(&pid, path, &actions, &attributes, argv, envp)
        guard spawned == 0 else { return .failure(POSIXError(POSIXErrorCode(rawValue: spawned) ?? .EINVAL)) }
        return .success(pid)
    }

    /// Waits for `pid` and returns its exit status (128 + the signal when a signal ended it).
    static func wait(_ pid: pid_t) -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    }
}

/// The families' tables, as `chime` opens every store (the composition root's list): a store
/// chime made is opened by the tests with the same ones.
let chimeSchemas: [StoreSchema] = ChimeApp.schemas

import ChimeTesting
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// An Xvfb of the test's own, on a free display number it picks itself (`-displayfd`), with a
/// home and XDG directories of its own for every program started on it: GTK reads its settings
/// from `XDG_CONFIG_HOME` and GSettings, so nothing of the person running the tests (their
/// theme, fonts, scale, dconf) reaches the window. Stopped by its pid.
final class VirtualDisplay {
    let directory: URL
    let pid: pid_t
    /// ":N".
    let name: String
    let width: Int
    let height: Int

    init(width: Int = 1280, height: Int = 800) throws {
        (self.width, self.height) = (width, height)
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("chime-gtk-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let number = directory.appendingPathComponent("display")
        pid = try Spawn.start(
            "/usr/bin/Xvfb",
            ["-displayfd", "1", "-nolisten", "tcp", "-screen", "0", "\(width)x\(height)x24"],
            environment: try Self.isolated(root: directory),
            output: number.path,
            errors: directory.appendingPathComponent("xvfb.log").path
        )
        var found: String?
        for _ in 0..<500 {
            let text = (try? String(contentsOf: number, encoding: .utf8)) ?? ""
            if text.hasSuffix("\n"), let value = Int(text.trimmingCharacters(in: .whitespacesAndNewlines)) {
                found = ":\(value)"
                break
            }
            if Spawn.exited(pid) != nil { break }
            usleep(20_000)
        }
        guard let found else {
            Spawn.stop(pid)
            let log = (try? String(contentsOf: directory.appendingPathComponent("xvfb.log"), encoding: .utf8)) ?? ""
            throw SpawnError(message: "Xvfb printed no display number: \(log)")
        }
        name = found
    }

    deinit { stop() }

    /// Stops Xvfb (by its pid) and removes its directory.
    func stop() {
        Spawn.stop(pid)
        try? FileManager.default.removeItem(at: directory)
    }

    /// The environment of programs shown on this display.
    var environment: [String: String] {
        var environment = (try? Self.isolated(root: directory)) ?? [:]
        environment["DISPLAY"] = name
        return environment
    }

    /// A home and XDG directories under `root`, the system's PATH and data directories, no session
    /// bus: GTK's accessibility bridge (which needs one) is off, and GSettings keeps its values in
    /// memory rather than in the dconf of whoever runs the tests.
    static func isolated(root: URL) throws -> [String: String] {
        var environment = try IsolatedEnvironment.variables(root: root)
        // GTK's themes, icons and schemas are the system's.
        environment["XDG_DATA_DIRS"] = "/usr/share"
        environment["XDG_CONFIG_DIRS"] = "/etc/xdg"
        environment["GTK_A11Y"] = "none"
        environment["GSETTINGS_BACKEND"] = "memory"
        return environment
    }

    /// Runs a program on this display to completion: its status and standard output. Its errors
    /// (and those of what it leaves running) go to `errors`.
    @discardableResult
    func run(
        _ path: String,
        _ arguments: [String],
        environment: [String: String]? = nil,
        errors: String = "/dev/null"
    ) throws -> (status: Int32, output: String) {
        let output = directory.appendingPathComponent("run-\(UUID().uuidString).out")
        defer { try? FileManager.default.removeItem(at: output) }
        let pid = try Spawn.start(path, arguments, environment: environment ?? self.environment, output: output.path, errors: errors)
        let status = Spawn.wait(pid)
        return (status, (try? String(contentsOf: output, encoding: .utf8)) ?? "")
    }

    /// The visible windows whose title contains `title` (`xdotool search --onlyvisible --name`;
    /// GTK's hidden client-leader window carries the title too).
    func windows(named title: String) throws -> [String] {
        try run("/usr/bin/xdotool", ["search", "--onlyvisible", "--name", title]).output.split(separator: "\n").map(String.init)
    }

    /// The names of every window on the display, mapped or not (for a failure's message).
    func windowNames() -> [String] {
        guard let ids = try? run("/usr/bin/xdotool", ["search", "--name", ""]).output.split(separator: "\n") else { return [] }
        return ids.compactMap { id in
            let name = (try? run("/usr/bin/xdotool", ["getwindowname", String(id)]).output)?.trimmingCharacters(in: .whitespacesAndNewlines)
            return name.flatMap { $0.isEmpty ? nil : "\(id) '\($0)'" }
        }
    }

    /// A window's position and size (`xdotool getwindowgeometry --shell`): X, Y, WIDTH, HEIGHT.
    func geometry(of window: String) throws -> [String: Int] {
        var geometry: [String: Int] = [:]
        for line in try run("/usr/bin/xdotool", ["getwindowgeometry", "--shell", window]).output.split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1)
            if parts.count == 2, let value = Int(parts[1]) { geometry[String(parts[0])] = value }
        }
        return geometry
    }

    /// Moves the pointer to (`x`, `y`) in `window`'s coordinates and clicks the first button.
    func click(_ window: String, x: Int, y: Int) throws {
        try run("/usr/bin/xdotool", ["mousemove", "--window", window, "\(x)", "\(y)", "click", "1"])
    }

    /// Takes a screenshot of the whole screen into `path` (ImageMagick's `import -window root`).
    func screenshot(to path: String) throws -> Int32 {
        try run("/usr/bin/import", ["-window", "root", path]).status
    }
}

struct SpawnError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}

/// Programs started with posix_spawn, as ChimeCLITests' `Spawn` does and for its reasons: the
/// signal mask is reset (a child of a test thread would otherwise ignore SIGTERM) and every
/// descriptor from 3 on is closed.
enum Spawn {
    private static let closeFrom: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? = {
        dlsym(nil, "posix_spawn_file_actions_addclosefrom_np").map {
            unsafeBitCast($0, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
        }
    }()

    /// Starts `path` with standard input from /dev/null and its output and errors in files.
    static func start(_ path: String, _ arguments: [String], environment: [String: String], output: String, errors: String) throws -> pid_t
    {
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, errors, O_WRONLY | O_CREAT | O_APPEND, 0o600)
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
        guard spawned == 0 else { throw SpawnError(message: "cannot run \(path): \(String(cString: strerror(spawned)))") }
        return pid
    }

    /// Waits for `pid`; its exit status (128 + the signal when a signal ended it).
    static func wait(_ pid: pid_t) -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return decode(status)
    }

    /// `pid`'s exit status if it has ended (reaping it), else nil.
    static func exited(_ pid: pid_t) -> Int32? {
        var status: Int32 = 0
        let answer = waitpid(pid, &status, WNOHANG)
        if answer == pid { return decode(status) }
        return answer < 0 ? -1 : nil
    }

    /// Kills `pid` (SIGTERM, then SIGKILL after 2 s) and reaps it; nothing when it has ended.
    static func stop(_ pid: pid_t) {
        guard exited(pid) == nil else { return }
        kill(pid, SIGTERM)
        for _ in 0..<100 {
            if exited(pid) != nil { return }
            usleep(20_000)
        }
        kill(pid, SIGKILL)
        _ = wait(pid)
    }

    private static func decode(_ status: Int32) -> Int32 {
        (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    }
}

import ChimeGateway
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The `chime-gate-window` tool, built beside this test bundle, running on a ``VirtualDisplay``:
/// the window is shown by a process of its own rather than inside the test process, because GTK
/// can be initialized once per process, on one display, binds itself to the thread that did it,
/// reads its settings from the process's environment (`HOME`, `XDG_CONFIG_HOME`), and unsets
/// variables of it; a child gets an isolated environment and a fresh GTK per test.
final class GateWindowProcess {
    static var executable: String {
        if let path = ProcessInfo.processInfo.environment["CHIME_GATE_WINDOW"] { return path }
        let candidates = [
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("chime-gate-window"),
            Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent("chime-gate-window"),
            Bundle.main.bundleURL.appendingPathComponent("chime-gate-window"),
        ]
        return (candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) } ?? candidates[0]).path
    }

    let pid: pid_t
    let started: ContinuousClock.Instant
    private let output: URL
    private let errors: URL
    private var status: Int32?
    private var cursor = 0

    init(on display: VirtualDisplay, _ arguments: [String], environment extra: [String: String] = [:]) throws {
        let id = UUID().uuidString
        output = display.directory.appendingPathComponent("window-\(id).out")
        errors = display.directory.appendingPathComponent("window-\(id).err")
        var environment = display.environment
        environment.merge(extra) { $1 }
        started = .now
        pid = try Spawn.start(Self.executable, arguments, environment: environment, output: output.path, errors: errors.path)
    }

    deinit { stop() }

    /// Every line printed so far.
    var lines: [String] {
        ((try? String(contentsOf: output, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    var stderr: String { (try? String(contentsOf: errors, encoding: .utf8)) ?? "" }

    /// The next line starting with `prefix` after the last one taken, waiting up to `timeout`
    /// seconds; lines before it are passed over.
    func next(_ prefix: String, timeout: Double = 15) async -> String? {
        let deadline = ContinuousClock.now + .milliseconds(Int(timeout * 1000))
        while true {
            let lines = self.lines
            if let index = lines.indices.dropFirst(cursor).first(where: { lines[$0].hasPrefix(prefix) }) {
                cursor = index + 1
                return lines[index]
            }
            if ContinuousClock.now >= deadline || hasExited { return nil }
            try? await Task.sleep(for: .milliseconds(20))
        }
    }

    /// The choices printed so far ("choice proceed" → `.proceed`).
    var choices: [GateChoice] {
        lines.compactMap { $0.hasPrefix("choice ") ? GateChoice(rawValue: String($0.dropFirst("choice ".count))) : nil }
    }

    /// The buttons' frames from the `buttons exit=x,y,w,h …` line, in the window's coordinates.
    func buttons() async -> [GateChoice: (x: Int, y: Int, width: Int, height: Int)] {
        guard let line = await next("buttons ") else { return [:] }
        var frames: [GateChoice: (x: Int, y: Int, width: Int, height: Int)] = [:]
        for field in line.split(separator: " ").dropFirst() {
            let parts = field.split(separator: "=")
            guard parts.count == 2, let choice = GateChoice(rawValue: String(parts[0])) else { continue }
            let numbers = parts[1].split(separator: ",").compactMap { Int($0) }
            if numbers.count == 4 { frames[choice] = (numbers[0], numbers[1], numbers[2], numbers[3]) }
        }
        return frames
    }

    var hasExited: Bool {
        if status == nil { status = Spawn.exited(pid) }
        return status != nil
    }

    /// Waits up to `timeout` seconds for the process to end; its status, or nil.
    func exitStatus(timeout: Double = 10) async -> Int32? {
        let deadline = ContinuousClock.now + .milliseconds(Int(timeout * 1000))
        while !hasExited && ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(20)) }
        return status
    }

    /// Stops the process by its pid, when it still runs.
    func stop() {
        guard !hasExited else { return }
        Spawn.stop(pid)
        status = -1
    }
}

import ChimeCore
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The gate's window, drawn by a process of its own (`chime-gate-window`, which links GTK 4):
/// `chime` itself never loads GTK, so every other command starts as fast as before and keeps
/// its environment (GTK unsets the launcher's activation token when its library loads).
///
/// The protocol is lines on the child's standard input and output. To the window: a
/// ``GateScreen`` as one JSON object a line; `raise`; `close`. From it: `ready` once the window
/// is shown (or `error MESSAGE` when it cannot be, and it exits), `drawn MICROSECONDS` at the
/// first frame, then the person's choices by name (`exit`, `deepen`, `proceed`, `closed`).
public final class GateWindowProcess: GateSurface, @unchecked Sendable {
    public let choices: AsyncStream<GateChoice>
    /// Microseconds from the window's start to its first frame, once drawn.
    public var firstFrame: Int64? { state.withLock { $0.firstFrame } }

    private let process: Process
    private let input: FileHandle
    private let state = Mutex(State())
    private struct State {
        var firstFrame: Int64?
        var closed = false
        /// The window said a choice (closed included).
        var answered = false
        var failure: String?
    }

    /// Why the window went away by itself: it ended without a choice and without being closed
    /// (it crashed, or was killed).
    public var failure: String? { state.withLock { $0.failure } }

    /// The window helper of the chime executable at `executable`: `PREFIX/libexec/chime/` for
    /// `PREFIX/bin/chime` (installed), else beside it (a build directory).
    public static func helperPath(executable: String) -> String {
        let directory = (executable as NSString).deletingLastPathComponent
        let installed = (directory as NSString).deletingLastPathComponent + "/libexec/chime/chime-gate-window"
        return access(installed, X_OK) == 0 ? installed : directory + "/chime-gate-window"
    }

    /// Starts the window showing `screen`; returns once it is shown.
    /// - Throws: ``ChimeError`` with the reason when it cannot be shown (no helper, no display,
    ///   GTK failed), so the caller tries the next surface: a gate never locks a person out.
    /// - Parameter onFirstFrame: called once, on a thread of its own, when the window says its
    ///   first frame is drawn (for the figures: launch to gate drawn).
    public static func open(
        helper: String,
        screen: GateScreen,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        onFirstFrame: (@Sendable () -> Void)? = nil
    ) throws(ChimeError) -> GateWindowProcess {
        guard access(helper, X_OK) == 0 else {
            throw ChimeError(.failure, "no gate window: '\(helper)' is missing (install chime-gate-window beside chime)")
        }
        // A window closed by the person leaves a pipe with no reader: a write to it must fail,
        // not end chime (which then starts the program, or not). `GateOpen` sets SIGPIPE back
        // to its default before it starts the program, which must not inherit this.
        signal(SIGPIPE, SIG_IGN)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: helper)
        process.arguments = ["--protocol", "--program", screen.program]
        process.environment = environment
        let toChild = Pipe()
        let fromChild = Pipe()
        process.standardInput = toChild
        process.standardOutput = fromChild
        do {
            try process.run()
        } catch {
            throw ChimeError(.failure, "no gate window: cannot start '\(helper)': \(error.localizedDescription)")
        }
        let window = GateWindowProcess(
            process: process,
            input: toChild.fileHandleForWriting,
            output: fromChild.fileHandleForReading,
            onFirstFrame: onFirstFrame
        )
        window.draw(screen)
        switch window.waitUntilShown() {
        case .success: return window
        case .failure(let error):
            window.close()
            throw error
        }
    }

    private let feed: AsyncStream<GateChoice>.Continuation
    private let shown = Mutex<Result<Void, ChimeError>?>(nil)
    private let shownSignal = DispatchSemaphore(value: 0)

    private let onFirstFrame: (@Sendable () -> Void)?

    private init(process: Process, input: FileHandle, output: FileHandle, onFirstFrame: (@Sendable () -> Void)?) {
        self.process = process
        self.input = input
        self.onFirstFrame = onFirstFrame
        (choices, feed) = AsyncStream.makeStream(of: GateChoice.self)
        // One thread reads the window's lines (a blocking read, for the process's lifetime).
        let thread = Thread { [self] in self.read(output) }
        thread.name = "chime-gate-window reader"
        thread.start()
    }

    private func read(_ output: FileHandle) {
        var buffer = Data()
        while true {
            let chunk = output.availableData
            if chunk.isEmpty { break }
            buffer.append(chunk)
            while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                buffer.removeSubrange(buffer.startIndex...newline)
                handle(line)
            }
        }
        settleShown(.failure(ChimeError(.failure, "no gate window: chime-gate-window ended without showing one")))
        state.withLock { state in
            if !state.answered && !state.closed {
                state.failure = "the gate window ended unexpectedly (chime-gate-window crashed or was killed)"
            }
        }
        feed.yield(.closed)
        feed.finish()
    }

    private func handle(_ line: String) {
        if line == "ready" {
            settleShown(.success(()))
        } else if line.hasPrefix("error ") {
            settleShown(.failure(ChimeError(.failure, "no gate window: " + line.dropFirst(6))))
        } else if line.hasPrefix("drawn "), let micros = Int64(line.dropFirst(6)) {
            state.withLock { $0.firstFrame = micros }
            onFirstFrame?()
        } else if let choice = GateChoice(rawValue: line) {
            if choice == .closed || choice == .exit || choice == .proceed { state.withLock { $0.answered = true } }
            feed.yield(choice)
            if choice == .closed { feed.finish() }
        }
    }

    private func settleShown(_ result: Result<Void, ChimeError>) {
        let first: Bool = shown.withLock { shown in
            guard shown == nil else { return false }
            shown = result
            return true
        }
        if first { shownSignal.signal() }
    }

    private func waitUntilShown() -> Result<Void, ChimeError> {
        shownSignal.wait()
        return shown.withLock { $0 ?? .failure(ChimeError(.failure, "no gate window")) }
    }

    public func draw(_ screen: GateScreen) {
        guard let json = try? JSONEncoder().encode(screen) else { return }
        send(json + Data("\n".utf8))
    }

    /// Brings the window to the front (a second launch of the same program).
    public func raise() { send(Data("raise\n".utf8)) }

    public func close() {
        let first: Bool = state.withLock { state in
            defer { state.closed = true }
            return !state.closed
        }
        guard first else { return }
        send(Data("close\n".utf8), evenClosed: true)
        try? input.close()
        process.waitUntilExit()
    }

    private func send(_ data: Data, evenClosed: Bool = false) {
        guard evenClosed || !state.withLock({ $0.closed }) else { return }
        // The window may be gone (closed by the person): a write to its pipe then fails, and is
        // of no consequence (SIGPIPE is ignored while a window is open).
        try? input.write(contentsOf: data)
    }
}

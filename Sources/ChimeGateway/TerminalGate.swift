import ChimeCore
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The full-screen terminal gate: a ``GateSurface`` on a terminal without a display.
///
/// It takes the terminal over while the gate is shown: the alternate screen (what was on the
/// terminal comes back afterwards), raw input through termios (keys arrive one by one, unechoed,
/// Ctrl-C as a key rather than a signal), the cursor hidden; ``close()`` restores all of it.
/// Keys: `e` Exit to Focus, `d` Deepen the Pause, `p` or Enter Proceed (the gate refuses it until
/// the countdown has run out), Escape, Ctrl-C or `q` close the gate. It redraws on SIGWINCH, at
/// the terminal's new size.
///
/// Input is read on a thread of its own, which polls the terminal, a pipe that ``close()``
/// writes to (so it never outlives the gate) and the pipe SIGWINCH's handler writes to.
public final class TerminalGateSurface: GateSurface {
    private struct State {
        var last: GateScreen?
        var closed = false
        var original: termios?
    }
    private let input: Int32
    private let output: Int32
    private let state = Mutex(State())
    private let wake: (read: Int32, write: Int32)
    private let feed: AsyncStream<GateChoice>.Continuation
    public let choices: AsyncStream<GateChoice>

    /// Takes over the terminal on `input` and `output` (the same terminal, usually standard input
    /// and standard output).
    /// - Throws: ``ChimeError`` (`.failure`) when `input` is not a terminal.
    public init(input: Int32 = STDIN_FILENO, output: Int32 = STDOUT_FILENO) throws(ChimeError) {
        var original = termios()
        guard isatty(input) == 1, tcgetattr(input, &original) == 0 else {
            throw ChimeError(.failure, "no terminal to show the gate on (file descriptor \(input) is not a terminal)")
        }
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else {
            throw ChimeError(.failure, "cannot show the terminal gate: pipe failed (\(String(cString: strerror(errno))))")
        }
        self.input = input
        self.output = output
        wake = (fds[0], fds[1])
        (choices, feed) = AsyncStream.makeStream(of: GateChoice.self)

        var raw = original
        raw.c_iflag &= ~tcflag_t(IXON | ICRNL | BRKINT | INPCK | ISTRIP)
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO | ISIG | IEXTEN)
        withUnsafeMutableBytes(of: &raw.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        tcsetattr(input, TCSANOW, &raw)
        state.withLock { $0.original = original }
        write("\u{1B}[?1049h\u{1B}[?25l")

        // SIGWINCH's handler only writes a byte to a pipe the key thread polls (write is
        // async-signal-safe); the thread redraws. The handler is the process's from then on.
        _ = windowChanges.read
        signal(SIGWINCH) { _ in
            var byte: UInt8 = 1
            _ = Glibc.write(windowChanges.write, &byte, 1)
        }
        let thread = Thread { [self] in readKeys() }
        thread.name = "chime.gate.keys"
        thread.start()
    }

    /// Draws `screen` over the whole terminal.
    public func draw(_ screen: GateScreen) {
        state.withLock { state in
            guard !state.closed else { return }
            state.last = screen
            let (columns, rows) = size()
            writeLocked(Self.frame(screen, columns: columns, rows: rows))
        }
    }

    /// Draws the last screen again, at the terminal's size now (SIGWINCH does this).
    public func redraw() {
        guard let last = state.withLock({ $0.last }) else { return }
        draw(last)
    }

    /// Gives the terminal back as it was: the main screen, the cursor, the original termios.
    public func close() {
        let original: termios? = state.withLock { state in
            guard !state.closed else { return nil }
            state.closed = true
            writeLocked("\u{1B}[?25h\u{1B}[?1049l")
            return state.original
        }
        guard var original else { return }
        tcsetattr(input, TCSANOW, &original)
        var byte: UInt8 = 1
        _ = Glibc.write(wake.write, &byte, 1)
        feed.finish()
    }

    deinit {
        close()
        Glibc.close(wake.read)
        Glibc.close(wake.write)
    }

    /// The choices in what one read from the terminal returned (keys typed quickly arrive
    /// together): `e` Exit, `d` Deepen, `p` or Enter Proceed, `q`, Ctrl-C or Escape closed. Other
    /// keys, and escape sequences (an arrow key: ESC [ A), are no choice.
    public static func choices(in bytes: [UInt8]) -> [GateChoice] {
        var result: [GateChoice] = []
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "e"), UInt8(ascii: "E"): result.append(.exit)
            case UInt8(ascii: "d"), UInt8(ascii: "D"): result.append(.deepen)
            case UInt8(ascii: "p"), UInt8(ascii: "P"), 0x0D, 0x0A: result.append(.proceed)
            case UInt8(ascii: "q"), UInt8(ascii: "Q"), 0x03: result.append(.closed)
            case 0x1B:
                guard index < bytes.count, bytes[index] == UInt8(ascii: "[") || bytes[index] == UInt8(ascii: "O") else {
                    result.append(.closed)
                    continue
                }
                // A sequence: ESC, [ or O, parameters, then one final byte from @ to ~.
                index += 1
                while index < bytes.count, !(0x40...0x7E).contains(bytes[index]) { index += 1 }
                index += 1
            default: break
            }
        }
        return result
    }

    /// The lines of a gate, centred in `columns`: the program, the quote and its author, the
    /// countdown bar, the breathing pace, the focus line and the budget line when there are, and the keys.
    public static func lines(_ screen: GateScreen, columns: Int) -> [String] {
        let width = max(columns, 20)
        var lines: [String] = [clean(screen.program), ""]
        if let quote = screen.quote {
            lines += wrap("“" + clean(quote.text) + "”", width: min(width - 4, 72))
            lines.append("— " + clean(quote.author) + ", " + clean(quote.source))
        }
        lines.append("")
        let seconds = Int(screen.remaining.rounded(.up))
        let clock = "\(seconds / 60):" + (seconds % 60 < 10 ? "0" : "") + "\(seconds % 60)"
        let barWidth = max(min(width - 10, 40), 10)
        let filled = Int((min(max(screen.progress, 0), 1) * Double(barWidth)).rounded())
        lines.append("[" + String(repeating: "█", count: filled) + String(repeating: "░", count: barWidth - filled) + "] " + clock)
        if let breathing = screen.breathing { lines += ["", breathing] }
        if let focus = screen.focus { lines += ["", focus] }
        if let budget = screen.budget { lines += ["", clean(budget)] }
        lines.append("")
        let proceed = screen.proceedEnabled ? "[p] Proceed" : "Proceed in \(seconds) s"
        lines.append("[e] Exit to Focus   [d] Deepen the Pause   " + proceed)
        return lines
    }

    /// The bytes that draw `screen` on a terminal of `columns` × `rows`: the screen cleared, each
    /// line centred, the block centred vertically.
    static func frame(_ screen: GateScreen, columns: Int, rows: Int) -> String {
        let lines = lines(screen, columns: columns)
        let top = max((rows - lines.count) / 2, 0) + 1
        var frame = "\u{1B}[H\u{1B}[2J"
        for (index, line) in lines.enumerated() where top + index <= max(rows, lines.count) {
            let column = max((columns - line.count) / 2, 0) + 1
            let dim = line.hasPrefix("Proceed in ")
            frame += "\u{1B}[\(top + index);\(column)H" + (dim ? "\u{1B}[2m" + line + "\u{1B}[22m" : line)
        }
        return frame
    }

    private static func clean(_ text: String) -> String { ChimeError.escapingControlCharacters(text) }

    private static func wrap(_ text: String, width: Int) -> [String] {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ") {
            if !line.isEmpty, line.count + 1 + word.count > width {
                lines.append(line)
                line = ""
            }
            line += (line.isEmpty ? "" : " ") + word
        }
        if !line.isEmpty { lines.append(line) }
        return lines
    }

    private func size() -> (columns: Int, rows: Int) {
        var size = winsize()
        guard ioctl(output, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0, size.ws_row > 0 else { return (80, 24) }
        return (Int(size.ws_col), Int(size.ws_row))
    }

    private func write(_ text: String) {
        state.withLock { _ in writeLocked(text) }
    }

    /// Writes all of `text`; called with the state locked, so frames never interleave.
    private func writeLocked(_ text: String) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(output, $0.baseAddress, $0.count) }
            if written < 0, errno == EINTR { continue }
            guard written > 0 else { return }
            bytes = bytes.dropFirst(written)
        }
    }

    private func readKeys() {
        var buffer = [UInt8](repeating: 0, count: 64)
        while true {
            var fds = [input, wake.read, windowChanges.read].map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            let ready = poll(&fds, 3, -1)
            if ready < 0, errno == EINTR { continue }
            if ready < 0 || fds[1].revents != 0 || state.withLock({ $0.closed }) { return }
            if fds[2].revents != 0 {
                while read(windowChanges.read, &buffer, buffer.count) > 0 {}
                redraw()
            }
            guard fds[0].revents != 0 else { continue }
            let count = read(input, &buffer, buffer.count)
            if count < 0, errno == EINTR || errno == EAGAIN { continue }
            guard count > 0 else {
                // The terminal went away: the gate closes without an answer.
                feed.yield(.closed)
                feed.finish()
                return
            }
            for choice in Self.choices(in: Array(buffer[0..<count])) { feed.yield(choice) }
        }
    }
}

/// The pipe SIGWINCH's handler writes to (both ends non-blocking: a signal handler never waits,
/// and the key thread drains it); one per process, as the handler is.
private let windowChanges: (read: Int32, write: Int32) = {
    var fds: [Int32] = [-1, -1]
    guard pipe(&fds) == 0 else { return (-1, -1) }
    for fd in fds {
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
    }
    return (fds[0], fds[1])
}()

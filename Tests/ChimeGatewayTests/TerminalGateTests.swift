import ChimeCore
import ChimeGateway
import ChimeTesting
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A pseudo-terminal of the test's own: the gate draws on its slave side; the test types on the
/// master side and reads what the gate drew there.
final class Pty {
    let master: Int32
    let slave: Int32
    private var output = ""

    init(columns: Int, rows: Int) throws {
        // posix_openpt, unlockpt and ptsname are hidden from Swift behind glibc's feature macros:
        // do what they do on Linux. TIOCSPTLCK and TIOCGPTN are function-like macros Swift does not
        // import; these are their values in the asm-generic ioctl numbering (x86-64, arm64).
        master = open("/dev/ptmx", O_RDWR | O_NOCTTY)
        try #require(master >= 0)
        var unlock: Int32 = 0
        try #require(ioctl(master, UInt(0x4004_5431), &unlock) == 0)  // TIOCSPTLCK
        var number: UInt32 = 0
        try #require(ioctl(master, UInt(0x8004_5430), &number) == 0)  // TIOCGPTN
        let name = "/dev/pts/\(number)"
        slave = open(name, O_RDWR | O_NOCTTY)
        try #require(slave >= 0)
        resize(columns: columns, rows: rows)
    }

    deinit {
        close(slave)
        close(master)
    }

    func resize(columns: Int, rows: Int) {
        var size = winsize(ws_row: UInt16(rows), ws_col: UInt16(columns), ws_xpixel: 0, ws_ypixel: 0)
        _ = ioctl(master, UInt(TIOCSWINSZ), &size)
    }

    /// A person types `keys`.
    func type(_ keys: String) {
        let bytes = Array(keys.utf8)
        _ = bytes.withUnsafeBytes { write(master, $0.baseAddress, $0.count) }
    }

    /// Everything the gate wrote so far.
    var written: String { output }

    /// How many frames the gate has drawn (each starts by clearing the screen).
    var frames: Int { output.components(separatedBy: "\u{1B}[H\u{1B}[2J").count - 1 }

    /// The last frame's text, one line per cursor move, without escape sequences.
    var screen: String {
        let frame = output.components(separatedBy: "\u{1B}[H\u{1B}[2J").last ?? ""
        return frame.replacing(/\x1B\[[0-9;?]*[A-Za-z]/, with: "\n")
    }

    /// Reads what the gate writes until `done` holds; waits on the terminal for at most 20 s
    /// in all (a bound on a broken gate, not a pause: it returns as soon as `done` holds).
    /// (It polls without blocking and sleeps 5 ms between polls: a blocking poll would hold one
    /// of the few threads of Swift's cooperative pool, which the gate itself runs on.)
    @discardableResult
    func read(until done: (Pty) -> Bool) async -> Bool {
        let deadline = Date().addingTimeInterval(20)
        var buffer = [UInt8](repeating: 0, count: 4_096)
        while !done(self) {
            guard deadline.timeIntervalSinceNow > 0 else { return false }
            var fds = [pollfd(fd: master, events: Int16(POLLIN), revents: 0)]
            guard poll(&fds, 1, 0) > 0 else {
                try? await Task.sleep(for: .milliseconds(5))
                continue
            }
            let count = Glibc.read(master, &buffer, buffer.count)
            guard count > 0 else { return false }
            output += String(decoding: buffer[0..<count], as: UTF8.self)
        }
        return true
    }
}

/// One test at a time: SIGWINCH reaches every terminal gate of the process.
@Suite(.serialized) struct TerminalGateTests {
    @Test func theGateThroughARealPty() async throws {
        let pty = try Pty(columns: 80, rows: 24)
        let surface = try TerminalGateSurface(input: pty.slave, output: pty.slave)
        let clock = ManualWallClock(now: start)
        let ticker = ManualTicker()
        let finished = Mutex(false)
        let gate = Gate(programID: "firefox", program: "Firefox Web Browser", quote: seneca, at: start, focusEndsAt: start + 18 * 60)
        let run = Task {
            let result = await runGate(gate, on: surface, ticker: ticker, clock: clock)
            finished.withLock { $0 = true }
            return result
        }

        #expect(await pty.read { $0.screen.contains("Exit to Focus") })
        #expect(pty.written.hasPrefix("\u{1B}[?1049h\u{1B}[?25l"))
        let first = pty.screen
        for text in [
            "Firefox Web Browser", "“While we are postponing, life speeds by.”", "— Seneca, Letters, 1", "0:30",
            "18 min of your focus session left", "[e] Exit to Focus   [d] Deepen the Pause   Proceed in 30 s",
        ] {
            #expect(first.contains(text), "\(text) not in \(first)")
        }
        #expect(first.contains("[" + String(repeating: "█", count: 40) + "]"))

        // Proceed keys before the end: the gate refuses them and stays.
        pty.type("p")
        #expect(await pty.read { $0.frames >= 2 })
        pty.type("\r")
        #expect(await pty.read { $0.frames >= 3 })
        #expect(pty.screen.contains("Proceed in 30 s"))
        #expect(!finished.withLock { $0 })

        clock.advance(to: start + 12)
        ticker.tick()
        #expect(await pty.read { $0.frames >= 4 })
        #expect(pty.screen.contains("0:18"))
        #expect(pty.screen.contains("Proceed in 18 s"))

        clock.advance(to: start + 30)
        ticker.tick()
        #expect(await pty.read { $0.screen.contains("[p] Proceed") })
        #expect(pty.screen.contains("0:00"))
        pty.type("\r")
        let result = await run.value
        #expect(result.outcome == .proceed)
        #expect(result.refusals == [30, 30])

        // The terminal is given back: the main screen, the cursor, cooked input.
        #expect(await pty.read { $0.written.hasSuffix("\u{1B}[?25h\u{1B}[?1049l") })
        var modes = termios()
        #expect(tcgetattr(pty.slave, &modes) == 0)
        #expect(modes.c_lflag & tcflag_t(ICANON) != 0)
        #expect(modes.c_lflag & tcflag_t(ECHO) != 0)
        #expect(modes.c_lflag & tcflag_t(ISIG) != 0)
    }

    @Test(arguments: [
        ("e", GateChoice.exit), ("E", .exit), ("d", .deepen), ("p", .proceed), ("\r", .proceed), ("q", .closed),
        ("\u{1B}", .closed), ("\u{03}", .closed),
    ])
    func keys(key: String, choice: GateChoice) async throws {
        let pty = try Pty(columns: 80, rows: 24)
        let surface = try TerminalGateSurface(input: pty.slave, output: pty.slave)
        var choices = surface.choices.makeAsyncIterator()
        // Keys the gate does not use come first and are ignored.
        pty.type("x")
        pty.type("\u{1B}[A")
        pty.type(key)
        #expect(await choices.next() == choice)
        surface.close()
        #expect(await choices.next() == nil)
    }

    @Test func keysTypedTogether() {
        let bytes = { (text: String) in Array(text.utf8) }
        #expect(TerminalGateSurface.choices(in: bytes("\u{1B}[A")).isEmpty)
        #expect(TerminalGateSurface.choices(in: bytes("\u{1B}OP\u{1B}[1;5C")).isEmpty)
        #expect(TerminalGateSurface.choices(in: bytes("xyz")).isEmpty)
        #expect(TerminalGateSurface.choices(in: []).isEmpty)
        #expect(TerminalGateSurface.choices(in: bytes("pd\u{1B}[Be")) == [.proceed, .deepen, .exit])
        #expect(TerminalGateSurface.choices(in: bytes("\u{1B}\u{1B}")) == [.closed, .closed])
    }

    @Test func redrawsAtTheNewSizeOnSIGWINCH() async throws {
        let pty = try Pty(columns: 80, rows: 24)
        let surface = try TerminalGateSurface(input: pty.slave, output: pty.slave)
        defer { surface.close() }
        surface.draw(GateScreen(program: "Steam", quote: nil, remaining: 30, progress: 1, proceedEnabled: false))
        #expect(await pty.read { $0.frames >= 1 })
        #expect(pty.screen.contains("[" + String(repeating: "█", count: 40) + "]"))
        pty.resize(columns: 30, rows: 12)
        // To the process, as a terminal sends it (raise() would target this thread, a pool thread
        // that blocks signals).
        kill(getpid(), SIGWINCH)
        #expect(await pty.read { $0.frames >= 2 })
        #expect(pty.screen.contains("[" + String(repeating: "█", count: 20) + "]"))
        #expect(pty.screen.contains("Steam"))
    }

    @Test func notATerminal() {
        var fds: [Int32] = [-1, -1]
        #expect(pipe(&fds) == 0)
        defer {
            close(fds[0])
            close(fds[1])
        }
        #expect(throws: ChimeError.self) { try TerminalGateSurface(input: fds[0], output: fds[1]) }
    }

    @Test func linesWrapTheQuoteAndShowTheBreathing() {
        let long = Quote(
            text: String(repeating: "word ", count: 40).trimmingCharacters(in: .whitespaces),
            author: "A",
            source: "B",
            interest: .mindfulness
        )
        let lines = TerminalGateSurface.lines(
            GateScreen(
                program: "Prog\u{1B}[31m",
                quote: long,
                remaining: 4.2,
                progress: 0.5,
                proceedEnabled: false,
                breathing: "Breathe out…"
            ),
            columns: 40
        )
        #expect(lines[0] == "Prog\\u{1B}[31m")
        #expect(lines.filter { $0.contains("word") }.allSatisfy { $0.count <= 36 })
        #expect(lines.filter { $0.contains("word") }.count > 1)
        #expect(lines.contains("Breathe out…"))
        #expect(lines.contains("[" + String(repeating: "█", count: 15) + String(repeating: "░", count: 15) + "] 0:05"))
        #expect(lines.last == "[e] Exit to Focus   [d] Deepen the Pause   Proceed in 5 s")
    }
}

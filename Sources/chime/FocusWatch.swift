import ChimeCore
import ChimeFocus
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The write end of the pipe a stop signal writes to while `focus status --watch` runs.
/// (A signal handler may only make async-signal-safe calls: one write(2).)
private nonisolated(unsafe) var watchStopFD: Int32 = -1

private func stopWatching(_ signal: Int32) {
    var byte: UInt8 = 0
    _ = write(watchStopFD, &byte, 1)
}

/// `chime focus status --watch`: the countdown a person watches, redrawn when its second
/// changes (the runner itself never ticks). It reads the session from the store at each
/// redraw, so a pause, resume or give-up from another terminal shows at once; it ends when the
/// session ends, and Ctrl-C stops watching without touching the session.
struct FocusWatch {
    let context: FocusContext

    func run() throws {
        var pipeFDs: [Int32] = [-1, -1]
        guard pipe(&pipeFDs) == 0 else {
            throw ChimeError(.failure, "cannot watch: \(String(cString: strerror(errno)))")
        }
        defer {
            signal(SIGINT, SIG_DFL)
            signal(SIGTERM, SIG_DFL)
            close(pipeFDs[0])
            close(pipeFDs[1])
        }
        for fd in pipeFDs { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        _ = fcntl(pipeFDs[1], F_SETFL, O_NONBLOCK)
        watchStopFD = pipeFDs[1]
        signal(SIGINT, stopWatching)
        signal(SIGTERM, stopWatching)

        let terminal = isatty(STDOUT_FILENO) == 1
        var drawnLines = 0
        var lastLine = ""
        var watchedID: Int64?
        while true {
            let settled = try context.timer.current()
            let time = context.timer.clock.now()
            let waitMillis: Int32
            switch settled {
            case .open(let session):
                watchedID = session.id
                // At most 40 columns (FocusText.narrowest): a narrow terminal does not wrap it.
                let lines = FocusText.watch(session, at: time, zone: .current)
                if terminal {
                    var text = drawnLines > 0 ? "\u{1B}[\(drawnLines)A" : ""
                    for line in lines { text += "\u{1B}[2K" + line + "\n" }
                    FileHandle.standardOutput.write(Data(text.utf8))
                    drawnLines = lines.count
                } else {
                    // Not a terminal: one line per change, no escape sequences.
                    let line =
                        "\(FocusTimer.countdown(session.remainingSeconds(at: time))) stage \(session.stage(at: time)) \(session.state.rawValue)"
                    if line != lastLine { Output.line(line) }
                    lastLine = line
                }
                waitMillis = session.state == .active ? Self.untilNextSecond(session, at: time) : 1_000
            case .completed(let session):
                finish(completed: session)
                return
            case .abandoned(let session):
                Output.line(FocusStatus.outcome(session) ?? "Focus session #\(session.id) ended.")
                return
            case .none:
                guard watchedID != nil, let last = try context.timer.latest() else {
                    throw ChimeError(.notFound, "no focus session to watch: start one with 'chime focus start --watch'")
                }
                if last.state == .completed {
                    finish(completed: last)
                } else {
                    Output.line(FocusStatus.outcome(last) ?? "The session ended.")
                }
                return
            }
            var poller = pollfd(fd: pipeFDs[0], events: Int16(POLLIN), revents: 0)
            if poll(&poller, 1, waitMillis) > 0 {
                let id = watchedID.map { " #\($0)" } ?? ""
                Output.line("Stopped watching: focus session\(id) goes on ('chime focus status').")
                return
            }
        }
    }

    private func finish(completed session: FocusSession) {
        for line in TreeArt.lines(stage: TreeStage.grown) { Output.line("    " + line) }
        Output.line("\(FocusTimer.alertTitle) \(FocusTimer.alertBody) (session #\(session.id), \(FocusText.minutes(session.focusMicros)))")
    }

    /// Milliseconds until the countdown's displayed second changes (a few past it).
    static func untilNextSecond(_ session: FocusSession, at time: MachineTime) -> Int32 {
        let remaining = session.remainingMicros(at: time)
        let intoSecond = remaining - Int64(max(session.remainingSeconds(at: time) - 1, 0)) * 1_000_000
        return Int32(min(max(intoSecond / 1_000 + 5, 5), 1_005))
    }
}

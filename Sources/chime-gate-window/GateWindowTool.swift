import ArgumentParser
import ChimeCore
import ChimeGateway
import ChimeGtk
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The gate's GTK window. With `--protocol`, the window of `chime gate open` (see
/// ``ProtocolMode``). Otherwise on its own, counting down at ten draws a second, printing one
/// line per event on standard output (`first-frame …`, `buttons …`, `proceed-enabled`,
/// `choice …`, `cpu …`, `closed`): what the window's tests drive, and where its figures come from.
/// (`main.swift` runs it for every first argument but `app`.)
struct GateWindowTool: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "chime-gate-window",
        abstract:
            "The gate's window: with --protocol, the window of 'chime gate open'; alone, a countdown that prints what happens (for tests and figures).",
        version: ChimeVersion.string
    )

    @Option(help: "The gated program's name.") var program = "Firefox"
    @Option(help: "The countdown, in seconds.") var seconds: Double = 30
    @Option(help: "The quote.") var quote = "We suffer more often in imagination than in reality."
    @Option(help: "The quote's author.") var author = "Seneca"
    @Option(help: "The quote's source.") var source = "Letters to Lucilius, 13, tr. Richard M. Gummere, 1917"
    @Option(help: "The breathing line (shown from the start; Deepen shows one anyway).") var breathing: String?
    @Option(help: "The focus line.") var focus: String?
    @Flag(help: "Close the window once its first frame is drawn.") var exitAfterFirstFrame = false
    @Option(help: "Measure the process's CPU over this many seconds of countdown, then close.") var measureCPU: Double?
    @Flag(help: "First open a window and close it with close(), then open the one that counts down.") var openTwice = false
    @Flag(help: "Be the window of 'chime gate open': screens on standard input, choices on standard output.")
    var `protocol` = false

    mutating func run() async throws {
        if `protocol` {
            let status = await ProtocolMode.run(program: program)
            if status != 0 { throw ExitCode(status) }
            return
        }
        let countdown = Countdown(seconds: seconds, breathing: breathing)
        let screen: @Sendable (ContinuousClock.Instant) -> GateScreen = { [program, quote, author, source, focus] now in
            countdown.screen(
                program: program,
                quote: Quote(text: quote, author: author, source: source, interest: .stoicism),
                focus: focus,
                now: now
            )
        }
        if openTwice {
            // A window closed by close(): its stream ends without a choice, GTK's loop stops, and
            // the next window opens on the same GTK thread.
            let drawn = AsyncStream.makeStream(of: Void.self)
            do {
                let first = try await GtkGateWindow.open(program: program, showing: screen(.now)) { _ in
                    drawn.continuation.finish()
                }
                for await _ in drawn.stream {}
                await first.closeAndWait()
                var choices: [GateChoice] = []
                for await choice in first.choices { choices.append(choice) }
                emit("first-window closed choices=\(choices.count)")
            } catch {
                emit("unavailable \(error.code.rawValue) \(error.message)")
                throw ExitCode(3)
            }
        }
        let firstFrames = AsyncStream.makeStream(of: Duration.self)
        let window: GtkGateWindow
        do {
            window = try await GtkGateWindow.open(program: program, showing: screen(.now)) { delay in
                firstFrames.continuation.yield(delay)
                firstFrames.continuation.finish()
            }
        } catch {
            emit("unavailable \(error.code.rawValue) \(error.message)")
            throw ExitCode(3)
        }
        emit("opened title=\(window.title)")

        for await delay in firstFrames.stream {
            let sinceStart = ProcessFigures.sinceProcessStart().map { String(format: "%.0f", $0 * 1000) } ?? "unknown"
            emit("first-frame since-open-ms=\(String(format: "%.1f", delay.milliseconds)) since-process-start-ms=\(sinceStart)")
        }
        let frames = await window.buttonFrames()
        emit(
            "buttons "
                + [GateChoice.exit, .deepen, .proceed].map { "\($0.rawValue)=\(frames[$0]?.description ?? "none")" }.joined(separator: " ")
        )
        if exitAfterFirstFrame {
            await window.closeAndWait()
            emit("closed")
            return
        }

        let measure = measureCPU
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                var tick = ContinuousClock.now
                var announced = false
                var draws = 0
                var cpuStart: (cpu: Double, at: ContinuousClock.Instant, draws: Int)?
                while !Task.isCancelled {
                    let now = ContinuousClock.now
                    let shown = screen(now)
                    window.draw(shown)
                    draws += 1
                    if shown.proceedEnabled != announced {
                        announced = shown.proceedEnabled
                        if announced { emit("proceed-enabled") }
                    }
                    if let measure {
                        if cpuStart == nil, now - tick > .zero, let cpu = ProcessFigures.cpuSeconds() {
                            cpuStart = (cpu, now, draws)
                        } else if let start = cpuStart, now - start.at >= .seconds(measure), let cpu = ProcessFigures.cpuSeconds() {
                            let wall = (now - start.at).seconds
                            let used = cpu - start.cpu
                            emit(
                                String(
                                    format: "cpu seconds=%.2f draws=%d cpu-ms=%.0f percent=%.2f",
                                    wall,
                                    draws - start.draws,
                                    used * 1000,
                                    used / wall * 100
                                )
                            )
                            window.close()
                            return
                        }
                    }
                    tick = tick.advanced(by: .milliseconds(100))
                    try? await Task.sleep(until: tick, clock: .continuous)
                }
            }
            group.addTask {
                for await choice in window.choices {
                    emit("choice \(choice.rawValue)")
                    if choice == .deepen { countdown.deepen(at: .now) }
                }
                emit("closed")
            }
            await group.next()
            group.cancelAll()
            await window.closeAndWait()
            await group.waitForAll()
        }
    }
}

/// The tool's own countdown: a stand-in for the gateway's state machine, enough to draw.
final class Countdown: Sendable {
    private let state: Mutex<(start: ContinuousClock.Instant, breathing: String?)>
    let seconds: Double

    init(seconds: Double, breathing: String?) {
        self.seconds = seconds
        state = Mutex((.now, breathing))
    }

    func deepen(at now: ContinuousClock.Instant) {
        state.withLock { $0 = (now, "Breathe in for four… and out for six.") }
    }

    func screen(program: String, quote: Quote, focus: String?, now: ContinuousClock.Instant) -> GateScreen {
        let (start, breathing) = state.withLock { ($0.start, $0.breathing) }
        let remaining = max(0, seconds - (now - start).seconds)
        return GateScreen(
            program: program,
            quote: quote,
            remaining: remaining,
            progress: seconds > 0 ? remaining / seconds : 0,
            proceedEnabled: remaining <= 0,
            breathing: breathing,
            focus: focus
        )
    }
}

/// Figures read from /proc about this process.
enum ProcessFigures {
    static func cpuSeconds() -> Double? { ProcessStat.cpuSeconds() }
    static func sinceProcessStart() -> Double? { ProcessStat.age() }
}

/// Writes one line to standard output at once (one write(2): lines from threads never interleave).
func emit(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
    var milliseconds: Double { seconds * 1000 }
}

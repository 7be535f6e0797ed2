import ChimeGateway
import ChimeGtk
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// `chime-gate-window --protocol`: the window of `chime gate open`, which runs the gate's state
/// machine and sends what to draw (see `GateWindowProcess` in ChimeGateway for the protocol).
/// GTK lives in this process only, so `chime` never loads it.
enum ProtocolMode {
    static func run(program: String) async -> Int32 {
        let (lines, feed) = AsyncStream.makeStream(of: String.self)
        // One thread reads standard input (a blocking read, for the process's lifetime).
        let reader = Thread {
            var buffer = Data()
            while true {
                let chunk = FileHandle.standardInput.availableData
                if chunk.isEmpty { break }
                buffer.append(chunk)
                while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                    feed.yield(String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self))
                    buffer.removeSubrange(buffer.startIndex...newline)
                }
            }
            feed.finish()
        }
        reader.start()
        var iterator = lines.makeAsyncIterator()
        guard let first = await iterator.next(), let screen = decode(first) else {
            say("error chime sent no screen to draw")
            return 3
        }
        let window: GtkGateWindow
        do {
            window = try await GtkGateWindow.open(program: program, showing: screen) { delay in
                let micros = delay.components.seconds * 1_000_000 + delay.components.attoseconds / 1_000_000_000_000
                say("drawn \(micros)")
            }
        } catch {
            say("error \(error.message)")
            return 3
        }
        say("ready")
        let choices = Task {
            for await choice in window.choices { say(choice.rawValue) }
        }
        while let line = await iterator.next() {
            if line == "close" { break }
            if line == "raise" {
                window.raise()
            } else if let screen = decode(line) {
                window.draw(screen)
            }
        }
        // chime asked to close, or went away (its end of the pipe closed).
        await window.closeAndWait()
        choices.cancel()
        return 0
    }

    static func decode(_ line: String) -> GateScreen? {
        try? JSONDecoder().decode(GateScreen.self, from: Data(line.utf8))
    }

    /// One line to chime, at once (standard output is a pipe: no buffering left behind).
    static func say(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }
}

import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `chime gate --terminal -- COMMAND` on a real terminal (a pty of `script`'s), no display: the
/// full-screen gate, keys typed on it, and what starts.
@Suite struct GateTerminalTests {
    /// `chime gate --terminal -- /bin/sh -c 'record the arguments' sh ARGUMENTS…` in a pty.
    final class Terminal: @unchecked Sendable {
        let process = Process()
        let input = Pipe()
        let output = Pipe()
        let screen = Mutex("")

        /// - Parameter gate: the gate command before `--` (`chime gate open ID --terminal`).
        init(sandbox: borrowing Sandbox, record: String, arguments: [String], gate: [String] = ["gate", "--terminal"]) throws {
            let script = sandbox.directory.appendingPathComponent("gate.sh")
            let quoted =
                ([ChimeExecutable.url.path] + gate + ["--", "/bin/sh", "-c", "printf '%s\\n' \"$@\" > '\(record)'", "sh"]
                + arguments).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }
            try ("#!/bin/sh\nexec " + quoted.joined(separator: " ") + "\n").write(to: script, atomically: true, encoding: .utf8)
            chmod(script.path, 0o755)
            process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
            process.arguments = ["-qefc", script.path, "/dev/null"]
            var environment = sandbox.environment
            environment["TERM"] = "xterm-256color"
            process.environment = environment
            process.standardInput = input
            process.standardOutput = output
            process.standardError = output
            try process.run()
            output.fileHandleForReading.readabilityHandler = { [weak self] handle in
                let data = handle.availableData
                self?.screen.withLock { $0 += String(decoding: data, as: UTF8.self) }
            }
        }

        /// Waits (up to 20 s, checking every 20 ms) until the terminal shows `text`.
        func shows(_ text: String) async -> Bool {
            let deadline = Date().addingTimeInterval(20)
            while Date() < deadline {
                if screen.withLock({ $0.contains(text) }) { return true }
                try? await Task.sleep(for: .milliseconds(20))
            }
            return false
        }

        func type(_ key: String) { input.fileHandleForWriting.write(Data(key.utf8)) }

        func finish() async -> Int32 {
            let deadline = Date().addingTimeInterval(20)
            while process.isRunning, Date() < deadline { try? await Task.sleep(for: .milliseconds(20)) }
            if process.isRunning { process.terminate() }
            process.waitUntilExit()
            output.fileHandleForReading.readabilityHandler = nil
            return process.terminationStatus
        }
    }

    @Test func exitOnTheTerminalGateLeavesTheCommandUnstarted() async throws {
        let sandbox = try Sandbox()
        let record = sandbox.directory.appendingPathComponent("started.txt").path
        let terminal = try Terminal(sandbox: sandbox, record: record, arguments: ["a"])
        #expect(await terminal.shows("Exit to Focus"), "\(terminal.screen.withLock { $0 })")
        #expect(await terminal.shows("Proceed in"))
        terminal.type("p")  // refused: the countdown runs
        terminal.type("e")
        #expect(await terminal.finish() == 0)
        #expect(!FileManager.default.fileExists(atPath: record))
        let stats = try jsonObject(try sandbox.chime("gate", "stats", "--json").stdout)
        #expect(stats["conscious_exits"] as? Int == 1)
        #expect(stats["proceeds"] as? Int == 0)
    }

    @Test func exitStartsAFocusSessionWhenChosenAndNoneRuns() async throws {
        let sandbox = try Sandbox()
        #expect(try sandbox.chime("gate", "setup", "--focus-on-exit").status == 0)
        let record = sandbox.directory.appendingPathComponent("started.txt").path
        let terminal = try Terminal(sandbox: sandbox, record: record, arguments: [])
        #expect(await terminal.shows("Exit to Focus"))
        terminal.type("e")
        #expect(await terminal.finish() == 0)
        #expect(await terminal.shows("Focus session #1 started"))
        #expect(!FileManager.default.fileExists(atPath: record))
        let status = try jsonObject(try sandbox.chime("focus", "status", "--json").stdout)
        #expect((status["session"] as? [String: Any])?["state"] as? String == "active")

        // With that session running, the next gate says how much of it is left
        let again = try Terminal(sandbox: sandbox, record: record, arguments: [])
        #expect(await again.shows("of your focus session left"))
        again.type("e")
        #expect(await again.finish() == 0)
        #expect(try jsonObject(try sandbox.chime("gate", "stats", "--json").stdout)["conscious_exits"] as? Int == 2)
    }

    @Test func proceedOnTheTerminalGateStartsTheCommandWithItsArguments() async throws {
        let sandbox = try Sandbox()
        #expect(try sandbox.chime("gate", "setup", "--pause", "1s").status == 0)
        let record = sandbox.directory.appendingPathComponent("started.txt").path
        let terminal = try Terminal(sandbox: sandbox, record: record, arguments: ["one", "two words", "--flag"])
        #expect(await terminal.shows("Exit to Focus"))
        let deadline = Date().addingTimeInterval(20)
        while !FileManager.default.fileExists(atPath: record), Date() < deadline {
            terminal.type("p")
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(await terminal.finish() == 0)
        let started = try String(contentsOfFile: record, encoding: .utf8)
        #expect(started == "one\ntwo words\n--flag\n")
        let stats = try jsonObject(try sandbox.chime("gate", "stats", "--json").stdout)
        #expect(stats["proceeds"] as? Int == 1)
        #expect((stats["average_pause_s"] as? Double ?? 0) >= 1)
    }
}

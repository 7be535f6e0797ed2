import ChimeCore
import ChimeFocus
import ChimeStore
import Foundation
import Testing

/// The `[hooks]` of the config file with the real `chime run`: a family's event (a focus session
/// started, completed, given up; a dose taken) runs its hook once, with the event's variables,
/// and the ledger records how it ended. Events recorded while no runner runs wait for one.
@Suite("End to end: hooks on the families' events", .serialized)
struct HooksEndToEndTests {
    /// Writes the sandbox's config file.
    static func writeConfig(_ text: String, in sandbox: borrowing Sandbox) throws {
        let result = try sandbox.chime("config", "path")
        let path = result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    }

    /// The lines of `path` once there are `count` (waiting up to `timeout` seconds).
    static func lines(_ path: String, count: Int, timeout: Double = 10) async throws -> [String] {
        let deadline = Date().addingTimeInterval(timeout)
        var lines: [String] = []
        while Date() < deadline {
            lines = ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
            if lines.count >= count { return lines }
            try await Task.sleep(for: .milliseconds(100))
        }
        return lines
    }

    @Test("Focus started, completed and given up run their hooks once each, with CHIME_EVENT, CHIME_ID and the session's details")
    func focusHooks() async throws {
        let sandbox = try Sandbox()
        let out = sandbox.directory.appendingPathComponent("hooks.txt").path
        let script = #"printf '%s|%s|%s|%s\n' "$CHIME_EVENT" "$CHIME_ID" "$CHIME_FOCUS_MINUTES" "$CHIME_TITLE" >> "$1""#
        try Self.writeConfig(
            """
            [hooks]
            focus_started = ["/bin/sh", "-c", \(jsonString(script)), "sh", \(jsonString(out))]
            focus_completed = { argv = ["/bin/sh", "-c", \(jsonString(script)), "sh", \(jsonString(out))], timeout = "30s" }
            focus_given_up = { shell = \(jsonString("echo \"$CHIME_EVENT|$CHIME_ID|$CHIME_FOCUS_SECONDS\" >> '\(out)'")) }

            """,
            in: sandbox
        )
        // Given a session started and given up while no runner runs
        let started = try sandbox.chime("focus", "start", "--minutes", "10")
        #expect(started.status == 0, "\(started.stderr)")
        let gaveUp = try sandbox.chime("focus", "give-up", "--yes")
        #expect(gaveUp.status == 0, "\(gaveUp.stderr)")
        #expect(try await Self.lines(out, count: 1, timeout: 0.5).isEmpty)

        // When the runner starts, their hooks run, in order
        let runner = try sandbox.startRunner("--notifier", "json")
        #expect(await runner.waitUntilStarted(), "runner did not start: \(runner.stderr)")
        let first = try await Self.lines(out, count: 2)
        #expect(first.count == 2, "\(first) \(runner.stderr)")
        #expect(first.first == "focus.started|1|10|Focus session #1")
        #expect(first.last?.hasPrefix("focus.given_up|1|") == true, "\(first)")

        // And a session that ends while it runs (started by the library) runs focus_started, then focus_completed once
        let session = try startSession(in: sandbox, endingIn: 1.5)
        #expect(try sandbox.chime("focus", "pause").status == 0)
        #expect(try sandbox.chime("focus", "resume").status == 0)
        let all = try await Self.lines(out, count: 4)
        #expect(all.count == 4, "\(all) \(runner.stderr)")
        #expect(all[2] == "focus.started|\(session.id)|10|Focus session #\(session.id)")
        #expect(all.last == "focus.completed|\(session.id)|10|Focus session #\(session.id)")
        #expect(await runner.terminate() == 0)
        #expect(runner.stderr.contains("Hook ended"), "\(runner.stderr)")

        // Never again: not after a restart
        let again = try sandbox.startRunner("--notifier", "json")
        #expect(await again.waitUntilStarted(), "runner did not start: \(again.stderr)")
        try await Task.sleep(for: .seconds(1))
        #expect(await again.terminate() == 0)
        #expect(try await Self.lines(out, count: 5, timeout: 0.2).count == 4)
        let runs = try ReminderStore(path: sandbox.store, schemas: chimeSchemas).hookRuns()
        #expect(runs.map(\.run?.state) == [.exited, .exited, .exited, .exited], "\(runs)")
        #expect(runs.map(\.run?.exitStatus) == [0, 0, 0, 0])
    }

    @Test("A dose taken runs dose_taken once with CHIME_DOSE_MEDICATION; an event with no hook is dropped")
    func doseTakenHook() async throws {
        let sandbox = try Sandbox()
        let out = sandbox.directory.appendingPathComponent("doses.txt").path
        try Self.writeConfig(
            """
            [hooks]
            dose_taken = ["/bin/sh", "-c", "echo \\"$CHIME_EVENT|$CHIME_DOSE_MEDICATION|$CHIME_TITLE\\" >> \\"$1\\"", "sh", \(jsonString(out))]

            """,
            in: sandbox
        )
        let runner = try sandbox.startRunner("--notifier", "json")
        #expect(await runner.waitUntilStarted(), "runner did not start: \(runner.stderr)")
        #expect(try sandbox.chime("med", "add", "Ibuprofen", "--amount", "400", "--unit", "mg", "--as-needed").status == 0)
        let taken = try sandbox.chime("dose", "take", "Ibuprofen")
        #expect(taken.status == 0, "\(taken.stderr)")
        let lines = try await Self.lines(out, count: 1)
        #expect(lines == ["dose.taken|Ibuprofen|Ibuprofen 400 mg"], "\(runner.stderr)")
        // A focus session started (no focus hook) leaves no row behind
        #expect(try sandbox.chime("focus", "start").status == 0)
        try await Task.sleep(for: .seconds(1))
        #expect(await runner.terminate() == 0)
        let runs = try ReminderStore(path: sandbox.store, schemas: chimeSchemas).hookRuns()
        #expect(runs.map(\.event.name) == ["dose.taken"], "\(runs)")
        #expect(try await Self.lines(out, count: 2, timeout: 0.2).count == 1)
    }

    @Test("A bad hook stops every command with one line naming the key and the value, exit 78")
    func badHookRefused() throws {
        let sandbox = try Sandbox()
        for (text, shown) in [
            (#"focus_completed = ["no-such-program-xyz"]"#, #"["no-such-program-xyz"]"#),
            (#"dose_taken = "notify-send hi""#, #""notify-send hi""#),
            (#"dose_missed = { shell = "true", timeout = "5 years" }"#, "timeout"),
            (#"gate_exit = { argv = ["/bin/true"], shell = "true" }"#, "shell"),
        ] {
            try Self.writeConfig("[hooks]\n\(text)\n", in: sandbox)
            let result = try sandbox.chime("list")
            #expect(result.status == 78, "\(text): \(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
            #expect(result.stderr.contains("invalid hooks."), "\(result.stderr)")
            #expect(result.stderr.contains(shown), "\(result.stderr)")
        }
    }
}

/// `text` as a TOML (and JSON) basic string.
private func jsonString(_ text: String) -> String {
    let data = try! JSONSerialization.data(withJSONObject: [text], options: [.withoutEscapingSlashes])
    return String(String(decoding: data, as: UTF8.self).dropFirst().dropLast())
}

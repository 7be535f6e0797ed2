import ChimeFocus
import Foundation
import Testing

/// A paused session with the real `chime` and no runner: nothing says an alert will fire, and
/// starting another says to resume or give up the paused one (pausing does not free the slot).
@Suite("End to end: a paused focus session")
struct FocusPausedTests {
    @Test("A paused session has no alert to fire, and still holds the one slot")
    func pausedSessionMessages() throws {
        let sandbox = try Sandbox()
        let started = try sandbox.chime("focus", "start", "--minutes", "10")
        #expect(started.status == 0, "\(started.stderr)")
        // Active, no runner: its alert fires once a runner starts
        #expect(started.stderr.contains("fires once 'chime run' starts"), "\(started.stderr)")

        let paused = try sandbox.chime("focus", "pause")
        #expect(paused.status == 0, "\(paused.stderr)")
        #expect(paused.stderr.contains("a paused session has no alert to fire"), "\(paused.stderr)")
        #expect(!paused.stderr.contains("fires once"), "\(paused.stderr)")
        #expect(!paused.stdout.contains("\"Tree planted!\" at"), "\(paused.stdout)")

        let status = try sandbox.chime("focus", "status")
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.stdout.contains("stage 1 of 5, paused"), "\(status.stdout)")
        #expect(!(status.stdout + status.stderr).contains("fires"), "\(status.stdout) \(status.stderr)")
        let json = try jsonObject(try sandbox.chime("focus", "status", "--json").stdout)
        #expect((json["session"] as? [String: Any])?["alert_due"] == nil)

        let again = try sandbox.chime("focus", "start")
        #expect(again.status == 4)
        #expect(again.stdout.isEmpty)
        #expect(again.stderr.hasPrefix("chime: a focus session is paused: #1, paused, "), "\(again.stderr)")
        #expect(again.stderr.contains("resume it ('chime focus resume') or give it up ('chime focus give-up')"), "\(again.stderr)")
        #expect(again.stderr.split(separator: "\n").count == 1)

        // Resumed, it has an alert again; given up, none is left
        let resumed = try sandbox.chime("focus", "resume")
        #expect(resumed.stderr.contains("fires once 'chime run' starts"), "\(resumed.stderr)")
        let given = try sandbox.chime("focus", "give-up", "--yes")
        #expect(given.status == 0, "\(given.stderr)")
        #expect(given.stderr.contains("no alert is left to fire"), "\(given.stderr)")
    }

    @Test("The forest labels trees by their number in the forest, not their sessions' ids")
    func forestNumbers() async throws {
        let sandbox = try Sandbox()
        // Session 1 given up; session 2 completes (started in the past through the library)
        #expect(try sandbox.chime("focus", "start", "--minutes", "10").status == 0)
        #expect(try sandbox.chime("focus", "give-up", "--yes").status == 0)
        let tree = try startSession(in: sandbox, endingIn: 0.2)
        #expect(tree.id == 2)
        try await Task.sleep(for: .milliseconds(400))

        let shown = try sandbox.chime("forest", "show", "1", "--json")
        #expect(shown.status == 0, "\(shown.stderr)")
        let one = try jsonObject(shown.stdout)
        #expect(one["number"] as? Int == 1)
        #expect(one["id"] as? Int == 2)
        let listing = try jsonObject(try sandbox.chime("forest", "--json").stdout)
        let trees = try #require(listing["trees"] as? [[String: Any]])
        #expect(trees.map { $0["number"] as? Int } == [1])
        let grid = try sandbox.chime("forest")
        #expect(grid.stdout.contains("#1"), "\(grid.stdout)")
        #expect(!grid.stdout.contains("#2"), "\(grid.stdout)")
        let text = try sandbox.chime("forest", "show", "#1")
        #expect(text.stdout.contains("Tree #1 (focus session #2)"), "\(text.stdout)")
        let missing = try sandbox.chime("forest", "show", "2")
        #expect(missing.status == 3)
        #expect(missing.stderr == "chime: no tree #2: the forest has 1 tree, #1\n", "\(missing.stderr)")
    }
}

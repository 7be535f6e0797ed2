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
}

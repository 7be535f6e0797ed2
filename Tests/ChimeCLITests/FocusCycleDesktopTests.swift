import ChimeFocus
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension DesktopTests {
    /// A focus cycle on the real notification server. A session lasts 10 minutes at least, so it
    /// is started through the library with a clock shifted into the past
    /// (``startSession(in:endingIn:)``): it ended 50 s before the runner starts, and its 1-minute
    /// break ends about 10 s after. "Tree planted!" says the break; "Break over: plant the next
    /// tree" comes at the break's end with Start and Skip; Start, chosen in dunst's menu as a
    /// person would, plants the next tree. Each alert is shown once.
    @Test("A focus cycle on the real server: the session's end says the break, Break over comes at its end, Start plants the next")
    func focusCycleOnTheRealServer() async throws {
        let server = try NotificationServer()
        defer { server.stop() }
        let dunst = try server.restartDunst(choosingWith: "#!/bin/sh\nexec grep -m 1 -E '^#?Start( |$)'\n", name: "start")
        defer {
            kill(dunst, SIGKILL)
            _ = NotificationServer.wait(dunst)
        }
        let sandbox = try Sandbox(extra: server.environment)
        let set = try sandbox.chime("config", "set", "focus.short_break", "1m")
        #expect(set.status == 0, "\(set.stderr)")
        let started = try startSession(in: sandbox, endingIn: -50)
        let runner = try sandbox.startRunner("--notifier", "desktop")
        #expect(await runner.waitUntilStarted(), "\(runner.stderr)")

        // The session's end: "Tree planted!" says the break that follows
        #expect(await server.waitForLog { $0.contains(#"string "Tree planted!""#) }, "\(runner.stderr)")
        let planted = try #require(NotificationServer.notifyCalls(in: server.monitorLog).first { $0.summary == "Tree planted!" })
        #expect(planted.body == "Great focus session! Break: 1 min.", "\(planted)")

        // The break's end: "Break over" with Start and Skip
        let overTitle = "Break over: plant the next tree"
        #expect(await server.waitForLog(timeout: 45) { $0.contains(#"string "\#(overTitle)""#) }, "\(runner.stderr)")
        let over = try #require(NotificationServer.notifyCalls(in: server.monitorLog).first { $0.summary == overTitle })
        #expect(over.body == "Session 2 of 4: Start when you are ready.", "\(over)")
        #expect(Array(over.actions.prefix(4)) == ["start-session", "Start", "skip", "Skip"], "\(over)")

        // Start, chosen in dunst's menu: the next session runs
        try server.dunstctl("context")
        var session: [String: Any] = [:]
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            let status = try jsonObject(try sandbox.chime("focus", "status", "--json").stdout)
            session = status["session"] as? [String: Any] ?? [:]
            if session["state"] as? String == "active" { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(session["state"] as? String == "active", "\(session)\n\(runner.stderr)\n\(server.monitorLog)")
        #expect((session["id"] as? Int).map { $0 > Int(started.id) } == true, "\(session)")

        // Each alert of the cycle was shown once
        #expect(server.notifyCount(of: "Tree planted!") == 1, "\(server.monitorLog)")
        #expect(server.notifyCount(of: overTitle) == 1, "\(server.monitorLog)")
        #expect(await runner.terminate() == 0)
    }
}

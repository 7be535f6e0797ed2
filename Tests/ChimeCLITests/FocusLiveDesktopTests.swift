import ChimeFocus
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension DesktopTests {
    /// The live focus alert on the real server: shown with the tree's stage icon, the whole
    /// minutes left and the `value` hint, replaced in place at the minute's and the stage's
    /// change (the same server id), and its Pause / Resume / Give up, chosen in dunst's menu,
    /// run the session; Give up asks first (the alert replaced by the question, with Keep
    /// going), and the second Give up gives up; given up, it is closed.
    @Test("The live focus alert tells the minutes left, is replaced in place, and its actions run the session; Give up asks first")
    func liveFocusAlertOnTheServer() async throws {
        let server = try NotificationServer()
        defer { server.stop() }
        // dunst's menu chooses the action named in `choice` (see startDunstTakingDoses).
        let choice = server.directory.appendingPathComponent("choice")
        try "Pause\n".write(to: choice, atomically: true, encoding: .utf8)
        let dunst = try startDunstChoosing(server, from: choice)
        defer {
            kill(dunst, SIGKILL)
            _ = NotificationServer.wait(dunst)
        }
        let sandbox = try Sandbox(extra: server.environment)
        // A 10-minute session at 2:02.5 left: stage 4, 3 min left (rounded up), 79 % done;
        // stage 5 and 2 min left at 2:00 left (2.5 s from now).
        let session = try startSession(in: sandbox, endingIn: 122.5)
        let runner = try sandbox.startRunner("--notifier", "desktop")
        #expect(await runner.waitUntilStarted(), "\(runner.stderr)")
        let icons = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Resources/icons").path

        // The live alert at stage 4, transient, with Pause and Give up
        #expect(await server.waitForLog { $0.contains("tree-stage-4.svg") }, "\(runner.stderr)")
        let first = try #require(server.monitorLog.components(separatedBy: "member=Notify\n").last)
        for expected in [
            #"string "\#(icons)/tree-stage-4.svg""#, #"string "Focusing: 3 min left""#, #"string "pause""#, #"string "Pause""#,
            #"string "give-up""#, #"string "Give up""#, #"string "x-chime.focus.live""#, #"string "transient""#,
        ] {
            #expect(first.contains(expected), "\(expected) not in \(first)")
        }
        #expect(first.contains("   uint32 0\n"), "a new alert replaces nothing: \(first)")
        #expect(Self.progressHint(first) == 79, "\(first)")
        // The server's reply (its id) is logged after the call: wait for it too
        #expect(await server.waitForLog { !Self.notifyReplies($0).isEmpty }, "\(server.monitorLog)")
        let shownID = try #require(Self.notifyReplies(server.monitorLog).first, "\(server.monitorLog)")

        // At 2:00 left, stage 5: the same alert, replaced in place (replaces_id = its id), once
        #expect(await server.waitForLog { $0.contains("tree-stage-5.svg") }, "\(runner.stderr)")
        let second = try #require(server.monitorLog.components(separatedBy: "member=Notify\n").last)
        #expect(second.contains("   uint32 \(shownID)\n"), "\(second)")
        #expect(second.contains(#"string "Focusing: 2 min left""#), "\(second)")
        #expect(Self.progressHint(second) == 80, "\(second)")
        #expect(await server.waitForLog { Self.notifyReplies($0).count == 2 })
        #expect(Self.notifyReplies(server.monitorLog) == [shownID, shownID])
        // No ticking: no other Notify in the next 1.5 s
        try await Task.sleep(for: .seconds(1.5))
        #expect(server.monitorLog.components(separatedBy: "member=Notify\n").count == 3)

        // Pause, chosen in dunst's menu: the session pauses and the alert says so
        try server.dunstctl("context")
        #expect(await server.waitForLog { $0.contains(#"string "pause""#) && $0.contains("member=ActionInvoked") })
        #expect(await server.waitForLog { $0.contains(#"string "Paused: 01:"#) }, "\(runner.stderr)")
        #expect(try focusState(in: sandbox) == "paused")
        let paused = try #require(server.monitorLog.components(separatedBy: "member=Notify\n").last)
        #expect(paused.contains(#"string "resume""#) && paused.contains(#"string "Resume""#), "\(paused)")
        #expect(paused.contains(#"string "\#(icons)/tree-stage-5.svg""#))

        // Resume
        try "Resume\n".write(to: choice, atomically: true, encoding: .utf8)
        try server.dunstctl("context")
        #expect(await server.waitForLog { $0.components(separatedBy: #"string "Focusing: "#).count == 4 }, "\(runner.stderr)")
        #expect(try focusState(in: sandbox) == "active")
        // Paused and resumed in place too: every Notify got the same server id
        #expect(await server.waitForLog { Self.notifyReplies($0).count == 4 })
        #expect(Self.notifyReplies(server.monitorLog) == Array(repeating: shownID, count: 4))

        // Give up asks first: the alert is replaced in place by the question, with Keep going
        // and Give up, and the session goes on
        try "#Give up (\n".write(to: choice, atomically: true, encoding: .utf8)
        try server.dunstctl("context")
        #expect(await server.waitForLog { $0.contains(#"string "Give up? Press again to let the tree wither""#) }, "\(runner.stderr)")
        let asked = try #require(server.monitorLog.components(separatedBy: "member=Notify\n").last)
        for expected in [
            #"string "keep-going""#, #"string "Keep going""#, #"string "give-up""#, #"string "Give up""#, "   uint32 \(shownID)\n",
        ] {
            #expect(asked.contains(expected), "\(expected) not in \(asked)")
        }
        #expect(!asked.contains(#"string "pause""#), "\(asked)")
        #expect(await server.waitForLog { Self.notifyReplies($0).count == 5 })
        #expect(Self.notifyReplies(server.monitorLog).last == shownID)
        #expect(try focusState(in: sandbox) == "active")
        #expect(!server.monitorLog.contains("member=CloseNotification"))

        // The second Give up (within the window): the session is given up and its alert closed
        try server.dunstctl("context")
        var state: String?
        for _ in 0..<100 where state != "abandoned" {
            state = try focusState(in: sandbox)
            if state != "abandoned" { try await Task.sleep(for: .milliseconds(50)) }
        }
        #expect(state == "abandoned", "\(runner.stderr)")
        let status = try jsonObject(try sandbox.chime("focus", "status", "--json").stdout)
        #expect((status["session"] as? [String: Any])?["id"] as? Int == Int(session.id))
        #expect((status["session"] as? [String: Any])?["end_reason"] as? String == "gave-up")
        #expect(await waitUntilNothingDisplayed(server), "\(server.monitorLog)")
        #expect(server.monitorLog.contains("member=CloseNotification\n   uint32 \(shownID)\n"), "\(server.monitorLog)")
        #expect(await runner.terminate() == 0)
    }

    /// At the end "Tree planted!" replaces the live alert in place (one alert, not two), and
    /// its Plant another starts a session of the same length.
    @Test("Tree planted! replaces the live alert in place, and Plant another starts the next session")
    func treePlantedReplacesTheLiveAlert() async throws {
        let server = try NotificationServer()
        defer { server.stop() }
        let choice = server.directory.appendingPathComponent("choice")
        try "Plant another\n".write(to: choice, atomically: true, encoding: .utf8)
        let dunst = try startDunstChoosing(server, from: choice)
        defer {
            kill(dunst, SIGKILL)
            _ = NotificationServer.wait(dunst)
        }
        let sandbox = try Sandbox(extra: server.environment)
        let session = try startSession(in: sandbox, endingIn: 2)
        let runner = try sandbox.startRunner("--notifier", "desktop")
        #expect(await runner.waitUntilStarted(), "\(runner.stderr)")

        #expect(await server.waitForLog { $0.contains(#"string "Focusing: "#) }, "\(runner.stderr)")
        #expect(await server.waitForLog { $0.contains(#"string "Tree planted!""#) }, "\(runner.stderr)")
        let planted = try #require(server.monitorLog.components(separatedBy: "member=Notify\n").last)
        #expect(planted.contains(#"string "plant-another""#) && planted.contains(#"string "Plant another""#), "\(planted)")
        // Not transient (it stays in the server's history), and in place of the live alert
        #expect(!planted.contains(#"string "transient""#), "\(planted)")
        #expect(await server.waitForLog { Self.notifyReplies($0).count == 2 })
        let ids = Self.notifyReplies(server.monitorLog)
        #expect(ids.count == 2 && ids[0] == ids[1], "\(ids)")
        #expect(planted.contains("   uint32 \(ids[0])\n"), "\(planted)")

        // Plant another, chosen in dunst's menu: a new 10-minute session, and its live alert
        try server.dunstctl("context")
        var next: [String: Any]?
        for _ in 0..<100 where next?["state"] as? String != "active" {
            next = try jsonObject(try sandbox.chime("focus", "status", "--json").stdout)["session"] as? [String: Any]
            if next?["state"] as? String != "active" { try await Task.sleep(for: .milliseconds(50)) }
        }
        #expect(next?["state"] as? String == "active", "\(runner.stderr)")
        #expect(next?["id"] as? Int == Int(session.id) + 1)
        #expect(next?["length_s"] as? Int == 600)
        #expect(await server.waitForLog { $0.contains(#"string "Focusing: 10 min left""#) }, "\(runner.stderr)")
        // and Tree planted!, kept after the press, says so in its place (no button left on it)
        #expect(
            await server.waitForConfirmation { $0.summary == "✓ Another tree planted" && $0.replacesID == ids[0] },
            "\(server.monitorLog)"
        )
        #expect(await server.waitForLog { Set(Self.notifyReplies($0)).count == 2 })
        let liveID = try #require(Self.notifyReplies(server.monitorLog).first { $0 != ids[0] })
        #expect(!server.monitorLog.contains("member=CloseNotification"))

        // The runner stops: it closes the live alert (its buttons would reach no one), not Tree planted!
        #expect(await runner.terminate() == 0)
        #expect(await server.waitForLog { $0.contains("member=CloseNotification\n   uint32 \(liveID)\n") }, "\(server.monitorLog)")
        #expect(server.monitorLog.components(separatedBy: "member=CloseNotification").count == 2)
    }

    /// A runner killed mid-session cannot close its live alert; the next one shows it once, in
    /// its place (dunst stacks by tag): one live alert on the screen, not two.
    @Test("After a runner is killed, the next one's live alert takes the old one's place")
    func liveAlertAfterAKill() async throws {
        let server = try NotificationServer()
        defer { server.stop() }
        let sandbox = try Sandbox(extra: server.environment)
        _ = try startSession(in: sandbox, endingIn: 200)
        let first = try sandbox.startRunner("--notifier", "desktop")
        #expect(await first.waitUntilStarted(), "\(first.stderr)")
        #expect(await server.waitForLog { $0.contains(#"string "Focusing: "#) }, "\(first.stderr)")
        first.crash()
        let second = try sandbox.startRunner("--notifier", "desktop")
        #expect(await second.waitUntilStarted(), "\(second.stderr)")
        #expect(await server.waitForLog { $0.components(separatedBy: #"string "Focusing: "#).count == 3 }, "\(second.stderr)")
        let call = try #require(server.monitorLog.components(separatedBy: "member=Notify\n").last)
        #expect(call.contains(#"string "x-dunst-stack-tag""#), "\(call)")
        // Once the server has answered the second Notify, it shows one alert
        #expect(await server.waitForLog { Self.notifyReplies($0).count == 2 })
        #expect(await waitUntilDisplayed(server, count: 1), "\(server.monitorLog)")
        #expect(await second.terminate() == 0)
    }

    /// The `value` hint (an int32) of one Notify call in the monitor log, or nil.
    static func progressHint(_ call: String) -> Int? {
        call.firstMatch(of: #/string "value"\n\s*variant\s+int32 (-?\d+)\n/#).flatMap { Int($0.output.1) }
    }

    /// The ids the server returned for Notify calls, in order (each reply's one uint32).
    static func notifyReplies(_ log: String) -> [UInt32] {
        log.matches(of: #/method return[^\n]*\n   uint32 (\d+)\n/#).compactMap { UInt32($0.output.1) }
    }

    /// Waits (bounded) until dunst displays no notification.
    func waitUntilNothingDisplayed(_ server: NotificationServer) async -> Bool {
        await waitUntilDisplayed(server, count: 0)
    }

    /// Waits (bounded) until dunst displays `count` notifications.
    func waitUntilDisplayed(_ server: NotificationServer, count: Int) async -> Bool {
        let output = server.directory.appendingPathComponent("count.out")
        for _ in 0..<100 {
            if let probe = try? NotificationServer.spawn(
                "/usr/bin/dunstctl",
                ["count", "displayed"],
                environment: server.environment,
                output: output.path
            ), NotificationServer.wait(probe) == 0,
                (try? String(contentsOf: output, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) == String(count)
            {
                return true
            }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return false
    }

    /// Replaces the server's dunst with one whose context menu chooses the action whose label
    /// is in `choice` (read at each choice); returns its pid (stopped by pid by the caller).
    func startDunstChoosing(_ server: NotificationServer, from choice: URL) throws -> pid_t {
        try server.restartDunst(choosingWith: "#!/bin/sh\nexec grep -m 1 -F -- \"$(head -n 1 '\(choice.path)')\"\n", name: "choosing")
    }
}

/// The focus session's state, as `chime focus status --json` gives it.
private func focusState(in sandbox: borrowing Sandbox) throws -> String? {
    let status = try jsonObject(try sandbox.chime("focus", "status", "--json").stdout)
    return (status["session"] as? [String: Any])?["state"] as? String
}

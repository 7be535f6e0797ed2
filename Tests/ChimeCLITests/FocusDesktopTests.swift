import ChimeFocus
import Foundation
import Testing

extension DesktopTests {
    @Test("A focus session's alert reaches the real server with the grown tree's icon, once")
    func focusAlertCarriesTheTreeIcon() async throws {
        let server = try NotificationServer()
        defer { server.stop() }
        let sandbox = try Sandbox(extra: server.environment)
        // A session that ends 2 s from now, written before the runner starts (it reads the store then).
        let session = try startSession(in: sandbox, endingIn: 2)
        let runner = try sandbox.startRunner("--notifier", "desktop")
        #expect(await runner.waitUntilStarted(), "\(runner.stderr)")

        #expect(await server.waitForLog { $0.contains(#"string "Tree planted!""#) }, "\(runner.stderr)")
        let call = try #require(server.monitorLog.components(separatedBy: "member=Notify\n").last)
        // app_icon is the grown tree from the source tree's Resources/ (what quickstart installs).
        let icon = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Resources/icons/tree-stage-5.svg").path
        #expect(call.contains(#"string "\#(icon)""#), "\(call)")
        #expect(call.contains(#"string "Great focus session! Break: 5 min.""#))
        #expect(call.contains(#"string "x-chime.focus""#))

        // Completed, and shown once.
        let status = try jsonObject(try sandbox.chime("focus", "status", "--json").stdout)
        #expect((status["session"] as? [String: Any])?["state"] as? String == "completed")
        #expect((status["session"] as? [String: Any])?["id"] as? Int == Int(session.id))
        try await Task.sleep(for: .seconds(1))
        #expect(server.monitorLog.components(separatedBy: #"string "Tree planted!""#).count == 2)
        #expect(await runner.terminate() == 0)
    }
}

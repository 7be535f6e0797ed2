import ChimeCore
import ChimePostgres
import Foundation
import Testing

/// `chime run` on a PostgreSQL store is the SQLite runner's engine: it takes its
/// notifier as the SQLite runner does (flag, then CHIME_NOTIFIER or the config file), and what
/// fell due while no runner ran is one summary, not an alert each.
@Suite("PostgreSQL store: the runner is the SQLite runner's engine", .serialized)
struct PostgresRunnerCLITests {
    static func wait(seconds: Double, until condition: () -> Bool) async -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return condition()
    }

    @Test("The notifier comes from CHIME_NOTIFIER when no flag names one, as on SQLite")
    func theNotifierComesFromTheEnvironment() async throws {
        try await withFreshCLIDatabase { url in
            let sandbox = try Sandbox(extra: ["CHIME_STORE": url.description, "CHIME_NOTIFIER": "json"])
            let runner = try sandbox.startRunner()
            #expect(await runner.waitUntilStarted(), "\(runner.stderr)")
            #expect(try sandbox.chime("in", "1s", "Tea", "--id", "tea").status == 0)
            var lines: [String] = []
            #expect(
                await Self.wait(seconds: 20) {
                    lines += runner.drain()
                    return !PostgresFleetTests.delivered(lines).isEmpty
                },
                "\(lines) \(runner.stderr)"
            )
            #expect(PostgresFleetTests.delivered(lines).map { $0.split(separator: "@")[0] } == ["tea"])
            #expect(await runner.terminate() == 0, "\(runner.stderr)")
        }
    }

    @Test("Reminders that fell due while no runner ran come as one summary")
    func whatFellDueWhileDownIsOneSummary() async throws {
        try await withFreshCLIDatabase { url in
            let sandbox = try Sandbox(extra: ["CHIME_STORE": url.description])
            for index in 0..<5 {
                #expect(try sandbox.chime("in", "1s", "Missed \(index)", "--id", "missed-\(index)").status == 0)
            }
            // Due while nothing runs: moved into the past on the database's clock (no waiting).
            try await PostgresStore.withStore(url) { store in
                try store.client.run("UPDATE occurrence SET due_us = due_us - 60000000")
                try store.client.run("UPDATE reminder SET next_due_us = next_due_us - 60000000, at_us = at_us - 60000000")
            }
            let runner = try sandbox.startRunner("--notifier", "json")
            #expect(await runner.waitUntilStarted(), "\(runner.stderr)")
            var lines: [String] = []
            #expect(
                await Self.wait(seconds: 20) {
                    lines += runner.drain()
                    return PostgresFleetTests.delivered(lines).count == 5
                },
                "\(lines) \(runner.stderr)"
            )
            let events = lines.compactMap { try? jsonObject($0) }.compactMap { $0["event"] as? String }
            #expect(events == ["summary"], "one summary, not an alert each: \(lines)")
            #expect(await runner.terminate() == 0, "\(runner.stderr)")
        }
    }
}

import ChimeCore
import ChimePostgres
import ChimeTesting
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A PostgreSQL server of one test's own, started and stopped with the project's script
/// (`scripts/postgres-server`, by its recorded pid), so that the test can take it away from under
/// a runner without touching the server every other test shares.
final class OwnPostgresServer {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("scripts/postgres-server").path
    /// The home and XDG directories of the script and the server: never those of whoever runs the tests.
    static let home = FileManager.default.temporaryDirectory.appendingPathComponent("chime-pg-home-\(getpid())")

    let directory: URL
    /// The server's `chime` database.
    let url: PostgresURL

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("chime-pg-own-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Self.run("start", directory.path)
        let env = try String(contentsOf: directory.appendingPathComponent("env"), encoding: .utf8)
        guard let line = env.split(separator: "\n").first(where: { $0.hasPrefix("export CHIME_TEST_POSTGRES_URL=") }) else {
            throw ServerError(message: "no CHIME_TEST_POSTGRES_URL in \(directory.path)/env: \(env)")
        }
        let value = line.dropFirst("export CHIME_TEST_POSTGRES_URL=".count).trimmingCharacters(in: CharacterSet(charactersIn: "'"))
        url = try PostgresURL(value)
    }

    struct ServerError: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }

    /// Starts the server again on its data (the script keeps a stopped cluster's data).
    func start() throws { try Self.run("start", directory.path) }

    /// A fast shutdown, by the pid the script recorded: clients' connections are closed.
    func stop() throws { try Self.run("stop", directory.path) }

    /// Stops the server (if it runs) and removes its directory.
    func remove() {
        try? Self.run("stop", directory.path)
        try? FileManager.default.removeItem(at: directory)
    }

    private static func run(_ arguments: String...) throws {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("chime-pg-script-\(UUID().uuidString).log")
        defer { try? FileManager.default.removeItem(at: log) }
        var environment = try IsolatedEnvironment.variables(root: home)
        environment["PG_FAST"] = "1"
        guard case .success(let pid) = Spawn.start("/bin/bash", [script] + arguments, environment: environment, output: log.path) else {
            throw ServerError(message: "cannot run \(script)")
        }
        let status = Spawn.wait(pid)
        guard status == 0 else {
            let output = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            throw ServerError(message: "postgres-server \(arguments.joined(separator: " ")) exited \(status): \(output)")
        }
    }
}

/// The database goes away under a running `chime run` and comes back ("an outage of
/// the database is survived as the SQLite store survives a locked file: nothing lost, alerts once
/// when it is back"). Real seconds: the runner's clock is the database's, which stops with it.
@Suite("PostgreSQL store: an outage of the database", .serialized)
struct PostgresOutageTests {
    /// The ids a runner printed on its JSON stream so far.
    static func delivered(_ runner: RunningChime, into seen: inout [String]) {
        seen += PostgresFleetTests.delivered(runner.drain()).map { String($0.split(separator: "@")[0]) }
    }

    static func wait(seconds: Double, until condition: () -> Bool) async -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return condition()
    }

    @Test(
        "The server is stopped under two runners while reminders fall due: one stops on SIGTERM all the same; the other shows each once when the server is back"
    )
    func aRunnerSurvivesAnOutageOfTheDatabase() async throws {
        let server = try OwnPostgresServer()
        defer { server.remove() }
        let sandbox = try Sandbox(extra: ["CHIME_STORE": server.url.description])
        let initialised = try sandbox.chime("store", "init")
        #expect(initialised.status == 0, "\(initialised)")
        let runner = try sandbox.startRunner("--notifier", "json", "--lease", "5s")
        #expect(await runner.waitUntilStarted(), "\(runner.stderr)")

        // Due while the server is up, and due while it will be down.
        for index in 0..<3 {
            #expect(try sandbox.chime("in", "1s", "Before \(index)", "--id", "before-\(index)").status == 0)
        }
        for index in 0..<6 {
            #expect(try sandbox.chime("in", "4s", "During \(index)", "--id", "during-\(index)").status == 0)
        }
        let duringDue = Date().addingTimeInterval(4)
        var seen: [String] = []
        let before = Set((0..<3).map { "before-\($0)" })
        #expect(
            await Self.wait(seconds: 10) {
                Self.delivered(runner, into: &seen)
                return Set(seen) == before
            },
            "\(seen)"
        )
        // A second runner, to be stopped while the server is down.
        let other = try sandbox.startRunner("--notifier", "json", "--lease", "5s")
        #expect(await other.waitUntilStarted(), "\(other.stderr)")
        #expect(await Self.wait(seconds: 10) { other.stderr.contains("serving default") }, "\(other.stderr)")

        try server.stop()
        // While it is down: a command says so in one line and exit 5.
        let down = try sandbox.chime("list")
        #expect(down.status == 5 && down.stderr.contains("cannot reach"), "\(down)")
        #expect(down.stderr.split(separator: "\n").count == 1, "\(down.stderr)")
        // The runners' passes at the "during" reminders' due time wait for the database.
        while Date() < duringDue.addingTimeInterval(1.5) { try await Task.sleep(for: .milliseconds(100)) }
        #expect(runner.stderr.contains("the LISTEN connection is down"), "\(runner.stderr)")
        #expect(runner.process.isRunning && other.process.isRunning, "\(runner.stderr)\n\(other.stderr)")
        // SIGTERM does not wait for the database: the pass waiting on it is abandoned after the grace.
        let stopping = ContinuousClock.now
        #expect(await other.terminate(timeout: 20) == 0, "\(other.stderr)")
        #expect(ContinuousClock.now - stopping < .seconds(15))
        #expect(other.stderr.contains("stopping while the database does not answer"), "\(other.stderr)")
        #expect(PostgresFleetTests.delivered(other.drain()).isEmpty, "\(other.stderr)")
        Self.delivered(runner, into: &seen)
        #expect(seen.count == 3, "shown while the database was down: \(seen)")

        try server.start()
        let everything = before.union((0..<6).map { "during-\($0)" })
        #expect(
            await Self.wait(seconds: 45) {
                Self.delivered(runner, into: &seen)
                return Set(seen) == everything
            },
            "\(seen); \(runner.stderr)"
        )
        // A moment more for a duplicate to show itself.
        try await Task.sleep(for: .seconds(1))
        Self.delivered(runner, into: &seen)
        #expect(seen.count == 9, "each once: \(seen.sorted())")
        // The LISTEN connection, whose backoff grew during the outage, is re-made as soon as
        // the database answers a pass (not up to 30 s later).
        #expect(await Self.wait(seconds: 5) { runner.stderr.contains("listening again") }, "\(runner.stderr)")
        #expect(await runner.terminate() == 0, "\(runner.stderr)")

        try await PostgresStore.withStore(server.url) { store in
            let ledger = try PostgresFleetTests.ledger(store)
            #expect(ledger.count == 9 && ledger.allSatisfy { $0.state == "posted" }, "\(ledger)")
        }
    }
}

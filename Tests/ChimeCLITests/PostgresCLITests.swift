import ChimeCore
import ChimePostgres
import Foundation
import Testing

/// The `chime` executable on a PostgreSQL store: a real server started once per run by
/// scripts/test (`CHIME_TEST_POSTGRES_URL`), a database of its own per test.
@Suite("PostgreSQL store: the commands", .serialized)
struct PostgresCLITests {
    @Test("store init, then in, list, next and cancel work as on SQLite; the families say they are SQLite-only")
    func theReminderCommandsOnPostgres() async throws {
        try await withFreshCLIDatabase(migrated: false) { url in
            let sandbox = try Sandbox(extra: ["CHIME_STORE": url.description])
            // Before init: one line saying what to run, exit 5.
            let early = try sandbox.chime("list")
            #expect(early.status == 5 && early.stderr.contains("chime store init"), "\(early)")
            #expect(early.stderr.split(separator: "\n").count == 1, "\(early.stderr)")

            let first = try sandbox.chime("store", "init", "--json")
            #expect(first.status == 0, "\(first)")
            let applied = try jsonObject(first.stdout)
            #expect((applied["applied"] as? [String])?.first == PostgresSchema.migrations.first?.name)
            #expect(applied["engine"] as? String == "postgresql")
            let again = try sandbox.chime("store", "init")
            #expect(again.status == 0 && again.stdout.contains("is up to date"), "\(again)")

            // in, with an id; --quiet prints the id alone
            let tea = try sandbox.chime("in", "25m", "Tea", "--id", "tea", "--json")
            #expect(tea.status == 0, "\(tea)")
            let scheduled = try jsonObject(tea.stdout)
            #expect((scheduled["reminder"] as? [String: Any])?["id"] as? String == "tea")
            #expect(scheduled["runner"] as? Bool == false)
            // Two hours from now, so that it comes after "Tea again" (in 30m) whenever the test runs
            // (at 09:00 it failed between 08:30 and 09:00).
            let later = DateFormatter()
            later.dateFormat = "HH:mm"
            later.timeZone = TimeZone(identifier: "UTC")  // the sandbox's TZ
            let standupTime = later.string(from: Date().addingTimeInterval(2 * 3600))
            let quiet = try sandbox.chime("every", "day", "at", standupTime, "Stand-up", "-q")
            #expect(quiet.status == 0, "\(quiet)")
            let standup = quiet.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(!standup.isEmpty && !standup.contains(" "), "\(quiet)")
            // The same id without --no-replace replaces; with it, a conflict (exit 4)
            let replaced = try sandbox.chime("in", "30m", "Tea again", "--id", "tea", "--json")
            #expect(try jsonObject(replaced.stdout)["replaced"] as? Bool == true, "\(replaced)")
            let conflict = try sandbox.chime("in", "30m", "Tea", "--id", "tea", "--no-replace")
            #expect(conflict.status == 4, "\(conflict)")

            let list = try sandbox.chime("list", "--json")
            #expect(list.status == 0, "\(list)")
            let reminders = try #require(try jsonObject(list.stdout)["reminders"] as? [[String: Any]])
            #expect(reminders.compactMap { $0["id"] as? String } == ["tea", standup], "\(list.stdout)")
            #expect(reminders.first?["title"] as? String == "Tea again")
            let human = try sandbox.chime("list")
            #expect(human.stdout.contains("Tea again") && human.stderr.contains("No runner is running"), "\(human)")
            // Pages, as on SQLite.
            let onePage = try jsonObject(try sandbox.chime("list", "--json", "--limit", "1").stdout)
            #expect(onePage["more"] as? Bool == true && onePage["next_after"] as? String == "tea", "\(onePage)")
            let second = try sandbox.chime("list", "--json", "--limit", "1", "--after", "tea")
            #expect(try jsonObject(second.stdout)["next_after"] is NSNull, "\(second)")
            #expect(second.stdout.contains("\"\(standup)\""), "\(second)")
            #expect(try sandbox.chime("list", "--after", "nosuch").status == 3)

            let next = try sandbox.chime("next", standup, "--count", "3", "--json")
            #expect(next.status == 0, "\(next)")
            #expect((try jsonObject(next.stdout)["occurrences"] as? [Any])?.count == 3)

            // cancel: all or none (an unknown id cancels nothing, exit 3), then both
            let partly = try sandbox.chime("cancel", "tea", "nosuch")
            #expect(partly.status == 3 && partly.stderr.contains("'nosuch'"), "\(partly)")
            #expect(try sandbox.chime("list", "--json").stdout.contains("\"tea\""))
            let cancelled = try sandbox.chime("cancel", "tea", standup, "--json")
            #expect(cancelled.status == 0, "\(cancelled)")
            #expect(try jsonObject(cancelled.stdout)["cancelled"] as? [String] == ["tea", standup])
            let twice = try sandbox.chime("cancel", "tea")
            #expect(twice.status == 3 && twice.stderr.contains("it was cancelled"), "\(twice)")

            // What keeps to SQLite says so, in one line, exit 64, and touches nothing
            for arguments in [["focus", "status"], ["med", "list"]] {
                let refused = try sandbox.chime(arguments)
                #expect(refused.status == 64, "\(arguments): \(refused)")
                #expect(refused.stderr.contains("SQLite store only"), "\(arguments): \(refused.stderr)")
                #expect(refused.stderr.split(separator: "\n").count == 1, "\(refused.stderr)")
            }
            #expect(!FileManager.default.fileExists(atPath: sandbox.store), "a SQLite store was made beside the PostgreSQL one")
        }
    }

    @Test("A server that is not there: one line and exit 5, at once; a password in the URL is refused")
    func unreachableServer() throws {
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("chime-no-pg-\(UUID().uuidString)").path
        let sandbox = try Sandbox(extra: ["CHIME_STORE": "postgresql:///chime?host=\(missing)"])
        let started = ContinuousClock.now
        let down = try sandbox.chime("list")
        #expect(down.status == 5, "\(down)")
        #expect(down.stderr.hasPrefix("chime: cannot reach the PostgreSQL store") && down.stderr.contains(missing), "\(down.stderr)")
        #expect(down.stderr.split(separator: "\n").count == 1)
        #expect(ContinuousClock.now - started < .seconds(5))
        let password = try sandbox.chime("list", "--store", "postgresql://me:secret@db.example/chime")
        #expect(password.status == 64 && password.stderr.contains("has a password"), "\(password)")
    }
}

/// Runs `body` with a database of its own on the test server (`CHIME_TEST_POSTGRES_URL`, set by
/// scripts/test), dropped afterwards.
func withFreshCLIDatabase(migrated: Bool = true, _ body: (PostgresURL) async throws -> Void) async throws {
    guard let text = ProcessInfo.processInfo.environment["CHIME_TEST_POSTGRES_URL"], !text.isEmpty else {
        Issue.record("CHIME_TEST_POSTGRES_URL is not set: run scripts/test, which starts the test PostgreSQL server")
        return
    }
    let server = try PostgresURL(text)
    // [a-z0-9_] only: CREATE DATABASE takes no bound parameter.
    let name = "chime_cli_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
    try await PostgresStore.withStore(server) { admin in
        try admin.client.run(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"))
    }
    let url = server.with(database: name)
    @Sendable func drop() async {
        _ = try? await PostgresStore.withStore(server) { admin in
            // FORCE: a runner stopped a moment ago may still be disconnecting.
            try admin.client.run(PostgresQuery(unsafeSQL: "DROP DATABASE IF EXISTS \(name) WITH (FORCE)"))
        }
    }
    do {
        if migrated { _ = try await PostgresStore.withStore(url) { try $0.migrate() } }
        try await body(url)
    } catch {
        await drop()
        throw error
    }
    await drop()
}

/// Without a loadable libpq, a PostgreSQL store is one line naming why and what to install, exit
/// 5; the SQLite store never needs it.
@Test func withoutLibpqAPostgresStoreSaysSoInOneLine() throws {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("chime-nopq-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: root) }
    #expect(FileManager.default.createFile(atPath: root.appendingPathComponent("libpq.so.5").path, contents: Data()))
    let sandbox = try Sandbox(extra: ["LD_LIBRARY_PATH": root.path])
    let listed = try sandbox.chime("list", "--store", "postgresql:///chime?host=/nonexistent")
    #expect(listed.status == 5, "\(listed)")
    #expect(listed.stderr.contains("cannot load libpq") && listed.stderr.contains("libpq5"), "\(listed.stderr)")
    #expect(listed.stderr.split(separator: "\n").count == 1, "\(listed.stderr)")
    #expect(try sandbox.chime("in", "5m", "tea").status == 0)
}

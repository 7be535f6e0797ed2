import ChimePostgres
import Foundation
import Testing

/// A Chime upgraded on a database whose schema an older Chime made (`chime store init` not run
/// again): the runner refuses to start, in one line naming the missing migration (exit 5),
/// rather than failing every pass; a command that reads a column the old schema lacks says to
/// run `chime store init`, not the server's words.
@Suite("PostgreSQL store: a schema an older Chime made")
struct PostgresUpgradeTests {
    @Test("The runner and the commands say to run 'chime store init' (exit 5)")
    func anOlderSchemaIsNamed() async throws {
        try await withFreshCLIDatabase { url in
            // As 0005 left it: what 0006 added, and its record, gone.
            try await PostgresStore.withStore(url) { store in
                try store.client.run("DELETE FROM chime_migrations WHERE name = '0006-answers-and-quiet'")
                try store.client.run("DROP TABLE quiet")
                try store.client.run("DROP INDEX reminder_id")
                try store.client.run("DROP INDEX occurrence_posted")
                try store.client.run(
                    "ALTER TABLE occurrence DROP COLUMN server_id, DROP COLUMN via, DROP COLUMN snooze_of_us, DROP COLUMN held_us"
                )
            }
            let sandbox = try Sandbox(extra: ["CHIME_STORE": url.description])
            let run = try sandbox.chime("run", "--notifier", "json")
            #expect(run.status == 5, "\(run)")
            #expect(
                run.stderr.contains("has the schema of an older Chime (missing 0006-answers-and-quiet): run 'chime store init'"),
                "\(run.stderr)"
            )
            let list = try sandbox.chime("list")
            #expect(list.status == 5, "\(list)")
            #expect(
                list.stderr.contains("has the schema of an older Chime (missing 0006-answers-and-quiet): run 'chime store init'"),
                "\(list.stderr)"
            )
            // chime store init brings it up to date; then the runner starts.
            #expect(try sandbox.chime("store", "init").status == 0)
            let runner = try sandbox.startRunner("--notifier", "json")
            #expect(await runner.waitUntilStarted(), "\(runner.stderr)")
            #expect(await runner.terminate() == 0, "\(runner.stderr)")
        }
    }
}

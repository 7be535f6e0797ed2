import ChimeCore
import ChimePostgres
import Foundation
import Testing

/// `chime import`, `edit` and `doctor` on a PostgreSQL store as on SQLite, and the families'
/// commands refused before they write anything.
@Suite("PostgreSQL store: import, edit, doctor and the families, as on SQLite", .serialized)
struct PostgresCommandParityTests {
    /// Writes `text` to `name` in the sandbox; returns its path.
    func write(_ text: String, _ name: String, in sandbox: borrowing Sandbox) throws -> String {
        let path = sandbox.directory.appendingPathComponent(name).path
        try FileManager.default.createDirectory(at: sandbox.directory, withIntermediateDirectories: true)
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    func pending(_ sandbox: borrowing Sandbox) throws -> [[String: Any]] {
        let list = try sandbox.chime("list", "--json")
        return try #require(try jsonObject(list.stdout)["reminders"] as? [[String: Any]], "\(list)")
    }

    /// `chime ARGUMENTS` with standard input read from `path`.
    func chime(
        _ arguments: [String],
        stdin path: String,
        in sandbox: borrowing Sandbox
    ) throws -> (status: Int32, stdout: String, stderr: String) {
        let (process, out, err) = ChimeExecutable.process(arguments, environment: sandbox.environment)
        process.standardInput = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
        try process.run()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: stdout, as: UTF8.self), String(decoding: stderr, as: UTF8.self))
    }

    static let file = """
        [{"id": "tea", "title": "Tea", "in": "25m"},
         {"id": "standup", "title": "Stand-up", "every": "weekday 09:30", "zone": "Europe/Berlin"},
         {"id": "old", "title": "Old", "at": "2020-01-01T10:00:00Z"}]
        """

    @Test("import: the same output and --json as on SQLite, all or nothing, from a file and standard input, --past fire")
    func importOnPostgres() async throws {
        try await withFreshCLIDatabase { url in
            let sandbox = try Sandbox(extra: ["CHIME_STORE": url.description])
            let lite = try Sandbox()
            let path = try write(Self.file, "r.json", in: sandbox)
            let onPostgres = try sandbox.chime("import", path)
            let onSQLite = try lite.chime("import", path)
            #expect(onPostgres.status == 0, "\(onPostgres)")
            #expect(onPostgres.stdout == onSQLite.stdout, "\(onPostgres.stdout)\n---\n\(onSQLite.stdout)")
            #expect(onPostgres.stdout.contains("Imported 2 reminders."), "\(onPostgres.stdout)")
            #expect(onPostgres.stderr.contains("--past fire"), "\(onPostgres.stderr)")
            #expect(Set(try pending(sandbox).compactMap { $0["id"] as? String }) == ["tea", "standup"])

            // --json: the same document's keys; each id replaced the pending one.
            let json = try jsonObject(try sandbox.chime("import", path, "--json").stdout)
            let liteJSON = try jsonObject(try lite.chime("import", path, "--json").stdout)
            #expect(Set(json.keys) == Set(liteJSON.keys), "\(json)")
            #expect(json["imported"] as? Int == 2 && json["replaced"] as? Int == 2 && json["ids"] as? [String] == ["tea", "standup"])
            #expect(json["runner"] as? Bool == false)

            // A bad reminder late in the file: one line naming it, exit 64, nothing changed.
            let before = try sandbox.chime("list", "--json").stdout
            let bad = try write(
                #"[{"id": "new", "title": "New", "in": "5m"}, {"id": "x", "title": "X", "in": "5x"}]"#,
                "bad.json",
                in: sandbox
            )
            let refused = try sandbox.chime("import", bad)
            let liteRefused = try lite.chime("import", bad)
            #expect(refused.status == 64 && refused.stderr == liteRefused.stderr, "\(refused)\n\(liteRefused)")
            #expect(refused.stderr.split(separator: "\n").count == 1)
            #expect(try sandbox.chime("list", "--json").stdout == before)
            let twice = try write(
                #"[{"id": "a", "title": "A", "in": "5m"}, {"id": "a", "title": "A", "in": "6m"}]"#,
                "twice.json",
                in: sandbox
            )
            let doubled = try sandbox.chime("import", twice)
            let liteDoubled = try lite.chime("import", twice)
            #expect(doubled.status == 64 && doubled.stderr == liteDoubled.stderr, "\(doubled)\n\(liteDoubled)")
            let taken = try sandbox.chime("import", path, "--no-replace")
            #expect(taken.status == 4 && taken.stderr.contains("'tea'"), "\(taken)")
            #expect(try sandbox.chime("list", "--json").stdout == before)

            // From standard input, --past fire: the old one-shot fires now, late.
            let fired = try chime(["import", "-", "--past", "fire", "--json"], stdin: path, in: sandbox)
            #expect(fired.status == 0, "\(fired)")
            #expect(try jsonObject(fired.stdout)["imported"] as? Int == 3)
            #expect(try pending(sandbox).contains { $0["id"] as? String == "old" })
        }
    }

    @Test("edit: time, title and body of a pending one-shot, as on SQLite; its refusals and exit codes")
    func editOnPostgres() async throws {
        try await withFreshCLIDatabase { url in
            let sandbox = try Sandbox(extra: ["CHIME_STORE": url.description])
            #expect(try sandbox.chime("in", "25m", "Tea", "--id", "tea").status == 0)
            let edited = try sandbox.chime("edit", "tea", "--at", "2099-12-24 18:00", "--title", "Green tea", "--body", "Three minutes")
            #expect(edited.status == 0, "\(edited)")
            #expect(edited.stdout.hasPrefix("Changed tea  ") && edited.stdout.contains("Green tea"), "\(edited.stdout)")
            let json = try jsonObject(try sandbox.chime("edit", "tea", "--body", "", "--json").stdout)
            let reminder = try #require(json["reminder"] as? [String: Any], "\(json)")
            #expect(reminder["title"] as? String == "Green tea" && reminder["body"] as? String == "")
            #expect(json["runner"] as? Bool == false)
            let listed = try #require(try pending(sandbox).first)
            #expect(
                listed["title"] as? String == "Green tea" && (listed["next_due"] as? String)?.hasPrefix("2099-12-24") == true,
                "\(listed)"
            )

            #expect(try sandbox.chime("every", "1h", "Water", "--id", "water").status == 0)
            let rule = try sandbox.chime("edit", "water", "--at", "2099-01-01 10:00")
            #expect(rule.status == 64 && rule.stderr.contains("--at moves a one-shot only"), "\(rule)")
            #expect(try sandbox.chime("edit", "nosuch", "--title", "x").status == 3)
            let past = try sandbox.chime("edit", "tea", "--at", "2020-01-01 10:00")
            #expect(past.status == 64 && past.stderr.contains("in the past"), "\(past)")
        }
    }

    @Test("doctor: the store redacted, reachable, its migrations, the runners; exit 5 when something is wrong")
    func doctorOnPostgres() async throws {
        try await withFreshCLIDatabase(migrated: false) { url in
            let sandbox = try Sandbox(extra: ["CHIME_STORE": url.description])
            let bare = try sandbox.chime("doctor")
            #expect(bare.status == 5, "\(bare)")
            #expect(bare.stdout.contains("Schema:               0 migrations applied, missing 0001-"), "\(bare.stdout)")
            #expect(bare.stdout.contains("run 'chime store init'"), "\(bare.stdout)")

            #expect(try sandbox.chime("store", "init").status == 0)
            #expect(try sandbox.chime("in", "25m", "Tea").status == 0)
            let doctor = try sandbox.chime("doctor")
            #expect(doctor.status == 0, "\(doctor)")
            #expect(doctor.stdout.contains("Store:                \(url.description) (PostgreSQL), 1 pending"), "\(doctor.stdout)")
            #expect(doctor.stdout.contains("migrations applied, up to date"), "\(doctor.stdout)")
            #expect(doctor.stdout.contains("Runners:              none connected: start one with 'chime run'"), "\(doctor.stdout)")
            #expect(doctor.stdout.contains("Config file:"), "\(doctor.stdout)")
            let json = try jsonObject(try sandbox.chime("doctor", "--json").stdout)
            let store = try #require(json["store"] as? [String: Any], "\(json)")
            #expect(store["reachable"] as? Bool == true && store["usable"] as? Bool == true && store["kind"] as? String == "postgresql")
            #expect((json["runner"] as? [String: Any])?["connected"] as? Int == 0)
        }
        // A server that is not there: found, said in one line of the report, exit 5.
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("chime-no-pg-\(UUID().uuidString)").path
        let sandbox = try Sandbox(extra: ["CHIME_STORE": "postgresql:///chime?host=\(missing)"])
        let down = try sandbox.chime("doctor", "--json")
        #expect(down.status == 5, "\(down)")
        let store = try #require(try jsonObject(down.stdout)["store"] as? [String: Any], "\(down)")
        #expect(store["reachable"] as? Bool == false && (store["problem"] as? String)?.hasPrefix("cannot reach") == true, "\(store)")
    }

    @Test(
        "A family's command on a PostgreSQL store is refused in one line before it writes anything",
        arguments: [
            ["gate", "add", "app"],
            ["gate", "setup", "--determination", "3", "--gate", "app"],
            ["gate", "remove", "app"],
            ["focus", "start"],
            ["med", "add", "Aspirin", "--amount", "100", "--unit", "mg", "--at", "08:00"],
            ["dose", "take", "aspirin"],
        ]
    )
    func familiesAreRefusedBeforeWriting(_ arguments: [String]) throws {
        // Never reached: a refusal comes before any connection.
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("chime-no-pg-\(UUID().uuidString)").path
        let sandbox = try Sandbox(extra: ["CHIME_STORE": "postgresql:///chime?host=\(missing)"])
        let environment = sandbox.environment
        let dataHome = try #require(environment["XDG_DATA_HOME"])
        let system = try #require(environment["XDG_DATA_DIRS"]).split(separator: ":").first.map(String.init) ?? ""
        try FileManager.default.createDirectory(atPath: system + "/applications", withIntermediateDirectories: true)
        try Data("[Desktop Entry]\nType=Application\nName=App\nExec=app %f\n".utf8)
            .write(to: URL(fileURLWithPath: system + "/applications/app.desktop"))

        let refused = try sandbox.chime(arguments)
        #expect(refused.status == 64, "\(arguments): \(refused)")
        #expect(refused.stdout.isEmpty, "\(refused.stdout)")
        #expect(refused.stderr.split(separator: "\n").count == 1, "\(refused.stderr)")
        let words = arguments.prefix(2).joined(separator: " ")
        #expect(refused.stderr.hasPrefix("chime: 'chime \(words)' works on a SQLite store only"), "\(refused.stderr)")
        #expect(refused.stderr.contains("import") && refused.stderr.contains("doctor"), "\(refused.stderr)")
        // Nothing written: no launcher, no store, no data directory of Chime's.
        let launchers = (try? FileManager.default.contentsOfDirectory(atPath: dataHome + "/applications")) ?? []
        #expect(launchers.isEmpty, "\(launchers)")
        #expect(!FileManager.default.fileExists(atPath: dataHome + "/chime"))
        #expect(!FileManager.default.fileExists(atPath: sandbox.store))
    }
}

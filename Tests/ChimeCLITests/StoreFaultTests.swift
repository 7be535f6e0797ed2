import ChimeCore
import ChimeStore
import ChimeTesting
import Foundation
import GRDB
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Store faults with the real `chime` executable and runner: a read-only file system, a full
/// disk, a file that is not SQLite, a store another process has locked. Each gets one line
/// naming the store and saying what is wrong, exit status 5, nothing half-written, and the
/// store works again once the fault goes away.
///
/// The read-only and full-disk scenarios need a real file system that can be remounted and
/// filled: `scripts/faults/store-faults` runs them on a small tmpfs in a private mount
/// namespace (as root, or in an unprivileged user namespace) and leaves its results in files.
@Suite("Store faults: the chime executable on a store that cannot be written", .serialized)
struct StoreFaultTests {
    @Test(
        "Read-only file system: writes fail (exit 5) naming the store, list still works, nothing changes; read-write again: all there",
        .enabled(if: FaultScript.available, "needs a private mount namespace (unshare -m)"),
        .timeLimit(.minutes(1))
    )
    func readOnlyFileSystem() throws {
        let sandbox = try Sandbox()
        let results = try FaultScript.run("read-only", in: sandbox)

        // Given a store with two reminders
        #expect(results.status("before-one") == 0 && results.status("before-two") == 0, "\(results.stderr("before-one"))")
        #expect(try results.listedIDs("before-list") == ["one", "two"])

        // When its file system is read-only, every write fails with one line and exit 5
        for step in ["ro-in", "ro-in-json", "ro-cancel", "ro-run"] {
            let line = try results.oneErrorLine(step, status: 5)
            #expect(line.contains(results.storePath), "\(step): \(line)")
            #expect(line.contains("is read-only"), "\(step): \(line)")
        }
        let error = try #require(try jsonObject(results.stdout("ro-in-json"))["error"] as? [String: Any])
        #expect(error["code"] as? String == "store" && error["exit"] as? Int == 5)
        #expect((error["message"] as? String)?.contains("is read-only") == true)

        // And list still works, showing exactly what was there; nothing in the directory changed
        #expect(results.status("ro-list") == 0, "\(results.stderr("ro-list"))")
        #expect(results.stdout("ro-list") == results.stdout("before-list"))
        #expect(results.files("ro") == results.files("before"))

        // Then once it is read-write again, a write works and nothing was lost
        #expect(results.status("rw-in") == 0, "\(results.stderr("rw-in"))")
        #expect(try results.listedIDs("rw-list") == ["one", "three", "two"])
        #expect(try FaultScript.integrity(results.snapshot("rw")) == ["ok"])
    }

    @Test(
        "Read-only directory without a mount namespace (not root): chmod 0500, the same promises",
        .enabled(if: !FaultScript.available && geteuid() != 0, "root ignores file modes: the mount-namespace test covers this"),
        .timeLimit(.minutes(1))
    )
    func readOnlyDirectoryByPermissions() throws {
        let base = try Sandbox()
        let directory = base.directory.appendingPathComponent("store").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        let sandbox = try Sandbox(extra: ["CHIME_STORE": directory + "/chime.sqlite"])
        #expect(try sandbox.chime("in", "10m", "First", "--id", "one").status == 0)
        let before = try sandbox.chime("list", "--json")

        chmod(directory + "/chime.sqlite", 0o400)
        chmod(directory, 0o500)
        defer {
            chmod(directory, 0o700)
            chmod(directory + "/chime.sqlite", 0o600)
        }
        let refused = try sandbox.chime("in", "10m", "Refused", "--id", "two")
        #expect(refused.status == 5)
        #expect(refused.stderr.split(separator: "\n").count == 1, "\(refused.stderr)")
        #expect(refused.stderr.contains(directory + "/chime.sqlite") && refused.stderr.contains("is read-only"), "\(refused.stderr)")
        let listed = try sandbox.chime("list", "--json")
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(listed.stdout == before.stdout)

        chmod(directory, 0o700)
        chmod(directory + "/chime.sqlite", 0o600)
        #expect(try sandbox.chime("in", "10m", "Second", "--id", "two").status == 0)
        let after = try jsonObject(try sandbox.chime("list", "--json").stdout)["reminders"] as? [[String: Any]]
        #expect(after?.compactMap { $0["id"] as? String }.sorted() == ["one", "two"])
    }

    @Test(
        "Full disk: writes and batches fail (exit 5) saying the disk is full, nothing half-written, list works; space freed: works again",
        .enabled(if: FaultScript.available, "needs a private mount namespace (unshare -m)"),
        .timeLimit(.minutes(1))
    )
    func fullDisk() throws {
        let sandbox = try Sandbox()
        let results = try FaultScript.run("full-disk", in: sandbox)

        // Given a store with two reminders, on a file system then filled to the last block
        #expect(try results.listedIDs("before-list") == ["one", "two"])
        #expect(results.text("df-full").trimmingCharacters(in: .whitespacesAndNewlines) == "0")

        // Then each write fails with one line naming the store and the full disk, exit 5
        for step in ["full-in", "full-every", "full-cancel", "full-run"] {
            let line = try results.oneErrorLine(step, status: 5)
            #expect(line.contains(results.storePath), "\(step): \(line)")
            #expect(line.contains("the disk is full"), "\(step): \(line)")
        }
        // And list shows exactly what was accepted before; the database file did not change
        #expect(results.status("full-list") == 0, "\(results.stderr("full-list"))")
        #expect(results.stdout("full-list") == results.stdout("before-list"))
        #expect(
            FileManager.default.contents(atPath: results.snapshot("full"))
                == FileManager.default.contents(atPath: results.snapshot("before"))
        )
        #expect(try FaultScript.integrity(results.snapshot("full")) == ["ok"])
        // (Only SQLite's own empty side files may appear beside the store.)
        let database = try #require(results.files("before").first { $0.hasPrefix("chime.sqlite ") })
        #expect(results.files("full").contains(database), "\(results.files("full"))")
        for entry in results.files("full") where entry != database && !entry.hasPrefix("filler ") {
            #expect(entry.hasPrefix("chime.sqlite-shm ") || entry == "chime.sqlite-wal 600 0", "unexpected: \(entry)")
        }

        // When a batch of 3,000 reminders runs out of room part way through its transaction
        // (room enough to open the store for writing: more than 64 KiB free)
        #expect((Int(results.text("df-nearly").trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0) > 64)
        let line = try results.oneErrorLine("nearly-import", status: 5)
        #expect(line.contains("the disk is full"), "\(line)")
        // Then none of it stays, and the store is intact
        #expect(results.stdout("nearly-list") == results.stdout("before-list"))
        #expect(try FaultScript.integrity(results.snapshot("nearly")) == ["ok"])

        // And with the space freed, a write works and everything accepted before is there
        #expect(results.status("freed-in") == 0, "\(results.stderr("freed-in"))")
        #expect(try results.listedIDs("freed-list") == ["one", "three", "two"])
        #expect(try FaultScript.integrity(results.snapshot("freed")) == ["ok"])
    }

    /// Needs the scheduler to show what is due once when the store cannot record it, and to
    /// record it when the store recovers (the claim fails on the full disk; the post it makes
    /// from a read must not be taken as recorded).
    @Test(
        "Disk full while the runner runs: each due reminder is shown once, and recorded once when there is room again",
        .enabled(if: FaultScript.available, "needs a private mount namespace (unshare -m)"),
        .timeLimit(.minutes(1))
    )
    func fullDiskUnderTheRunner() throws {
        let sandbox = try Sandbox()
        let results = try FaultScript.run("runner-full-disk", in: sandbox)
        let log = results.text("runner.err")

        // Given two reminders due while the disk is full, and the runner running
        #expect(results.status("before-one") == 0 && results.status("before-two") == 0)
        #expect(results.text("df-full").trimmingCharacters(in: .whitespacesAndNewlines) == "0")
        // (The fault really reached the runner: it said so, once, and said when it recovered.)
        #expect(log.contains("Store failed") && log.contains("the disk is full"), "\(log)")
        #expect(log.contains("Store recovered"), "\(log)")
        #expect(results.status("full-list") == 0, "\(results.stderr("full-list"))")

        // Then each alert went out exactly once: not repeated while the disk was full, not withheld
        let shown = try shownCounts(results.text("runner.out"))
        #expect(shown["full1"] == 1, "\(results.text("runner.out"))")
        #expect(shown["full2"] == 1, "\(results.text("runner.out"))")
        // And the runner works as before afterwards, and stops cleanly
        #expect(shown["after"] == 1, "\(results.text("runner.out"))")
        #expect(results.status("runner") == 0, "\(log)")

        // And the ledger records each once, as posted
        let ledger = try ReminderStore(path: results.snapshot("final"), schemas: chimeSchemas).ledger()
        for id in ["full1", "full2", "after"] {
            let rows = ledger.filter { $0.reminderID == id }
            #expect(rows.count == 1 && rows.first?.state == "posted", "\(id): \(rows)")
        }
        #expect(try FaultScript.integrity(results.snapshot("final")) == ["ok"])
    }

    @Test("A file that is not SQLite: chime run refuses it (exit 5) and leaves it byte for byte", .timeLimit(.minutes(1)))
    func runnerOnAFileThatIsNotSQLite() throws {
        let sandbox = try Sandbox()
        let path = sandbox.directory.appendingPathComponent("notes.txt").path
        var bytes = Data("Shopping: milk, eggs\n".utf8)
        bytes.append(contentsOf: (0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        #expect(FileManager.default.createFile(atPath: path, contents: bytes))

        for arguments in [["run", "--store", path], ["run", "--json", "--store", path], ["list", "--store", path]] {
            let result = try sandbox.chime(arguments)
            #expect(result.status == 5, "\(arguments): \(result.stderr)")
            let lines = result.stderr.split(separator: "\n")
            #expect(lines.count == 1, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains("'\(path)' is not a Chime store"), "\(result.stderr)")
        }
        #expect(FileManager.default.contents(atPath: path) == bytes)
        // Nothing was made beside it, and no runner left a socket or lock
        let beside = try FileManager.default.contentsOfDirectory(atPath: sandbox.directory.path).sorted()
        #expect(beside == ["home", "notes.txt", "run"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: sandbox.runtime).isEmpty)
    }

    @Test(
        "Locked by another process: a write waits the busy timeout, fails (exit 5) saying so, writes nothing; works once released",
        .timeLimit(.minutes(1))
    )
    func lockedStore() throws {
        let sandbox = try Sandbox()
        #expect(try sandbox.chime("in", "10m", "Kept", "--id", "kept").status == 0)
        let before = try sandbox.chime("list", "--json").stdout

        // Given another process in an exclusive transaction on the store
        let lock = try StoreLock(path: sandbox.store)

        // When chime writes, it waits about 5 s, then fails with one line and exit 5
        let start = Date()
        let refused = try sandbox.chime("in", "10m", "Refused", "--id", "refused", "--json")
        let waited = Date().timeIntervalSince(start)
        #expect(refused.status == 5, "\(refused.stderr)")
        #expect(waited >= 4.5 && waited < 20, "waited \(waited) s")
        #expect(refused.stderr.split(separator: "\n").count == 1, "\(refused.stderr)")
        #expect(refused.stderr.contains(sandbox.store) && refused.stderr.contains("locked by another process"), "\(refused.stderr)")
        #expect((try jsonObject(refused.stdout)["error"] as? [String: Any])?["exit"] as? Int == 5)

        // And reading does not wait for the lock
        let readStart = Date()
        let listed = try sandbox.chime("list", "--json")
        #expect(listed.status == 0 && listed.stdout == before, "\(listed.stderr)")
        #expect(Date().timeIntervalSince(readStart) < 3, "list waited for the writer's lock")

        // Then once released, a write works, and the refused one was never written
        try lock.release()
        #expect(try sandbox.chime("in", "10m", "Accepted", "--id", "accepted").status == 0)
        let after = try jsonObject(try sandbox.chime("list", "--json").stdout)["reminders"] as? [[String: Any]]
        #expect(after?.compactMap { $0["id"] as? String }.sorted() == ["accepted", "kept"])
        #expect(try FaultScript.integrity(sandbox.store) == ["ok"])
    }

    @Test(
        "Locked while the runner runs: no crash, the reminder is shown once and recorded once after the lock is released",
        .timeLimit(.minutes(1))
    )
    func lockedStoreUnderTheRunner() async throws {
        let sandbox = try Sandbox()
        // Given the runner running, and a reminder due in 3 s
        let runner = try sandbox.startRunner("--json")
        #expect(await runner.waitUntilStarted(), "runner did not start: \(runner.stderr)")
        #expect(try sandbox.chime("in", "3s", "Due while locked", "--id", "locked").status == 0)

        // When another process holds the store's write lock from before it is due until 9 s after
        let lock = try StoreLock(path: sandbox.store)
        var lines = await runner.lines(for: 12)
        try lock.release()
        lines += await runner.lines(for: 7)
        #expect(runner.process.isRunning, "the runner died: \(runner.stderr)")
        #expect(runner.stderr.contains("locked by another process"), "the lock never reached the runner: \(runner.stderr)")

        // And the runner works as before once it is released
        #expect(try sandbox.chime("in", "1s", "After the lock", "--id", "after").status == 0)
        lines += await runner.lines(for: 3)
        #expect(await runner.terminate() == 0, "\(runner.stderr)")

        // Then each was shown once, and the ledger records each once, as posted
        let shown = try shownCounts(lines.joined(separator: "\n"))
        #expect(shown["locked"] == 1, "\(lines)")
        #expect(shown["after"] == 1, "\(lines)")
        let ledger = try ReminderStore(path: sandbox.store, schemas: chimeSchemas).ledger()
        for id in ["locked", "after"] {
            let rows = ledger.filter { $0.reminderID == id }
            #expect(rows.count == 1 && rows.first?.state == "posted", "\(id): \(rows)")
        }
    }

    @Test(
        "The write-ahead log removed under the runner: doctor says so (exit 5), a write is refused (exit 5) and wakes the runner, which saves what the log held and reopens the store; then everything fires once",
        .timeLimit(.minutes(1))
    )
    func writeAheadLogRemovedUnderTheRunner() async throws {
        let sandbox = try Sandbox()
        // Given a reminder due late enough that the runner stays asleep until the refused write
        // below wakes it, on a loaded machine too
        #expect(try sandbox.chime("in", "10s", "Before", "--id", "before").status == 0)
        let runner = try sandbox.startRunner("--json")
        #expect(await runner.waitUntilStarted(), "runner did not start: \(runner.stderr)")

        // When the store's write-ahead log is removed: the runner logs "Runner started" before
        // its first write and pass (and retries a second after a pass that recovered), so it may
        // still be using the store then, see the removal and recover from it before doctor looks
        // (a write that committed into the removed log is logged as "Store recovered").
        // Doctor then rightly finds a healthy store; that is allowed only with the runner's
        // recovery on record, and the log is removed again until doctor sees the runner asleep.
        var doctor = (status: Int32(-1), stdout: "", stderr: "")
        for attempt in 1...5 {
            let recoveredBefore = runner.stderr.components(separatedBy: "is saved in the store").count
            #expect(unlink(sandbox.store + "-wal") == 0)
            doctor = try sandbox.chime("doctor")
            if doctor.status == 5 { break }
            // Healthy only because a pass of the runner recovered first: it must say so.
            let deadline = Date().addingTimeInterval(15)
            while runner.stderr.components(separatedBy: "is saved in the store").count == recoveredBefore, Date() < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            let recovered = runner.stderr.components(separatedBy: "is saved in the store").count > recoveredBefore
            #expect(
                recovered,
                "attempt \(attempt): doctor found the store healthy (exit \(doctor.status)) while nobody recovered the log: \(doctor.stdout)\n\(runner.stderr)"
            )
            if !recovered {
                _ = await runner.terminate()
                return
            }
            // Past the runner's retry a second after that pass.
            try await Task.sleep(for: .milliseconds(1_500))
        }

        // Then doctor and list say so, with exit 5, and change nothing
        #expect(doctor.status == 5, "\(doctor.stdout)")
        #expect(doctor.stdout.contains("write-ahead log '\(sandbox.store)-wal' was removed"), "\(doctor.stdout)")
        let listed = try sandbox.chime("list")
        #expect(listed.status == 5, "\(listed.stderr)")
        // And a write is refused in one line, not reported as done
        let recoveriesBefore = runner.stderr.components(separatedBy: "is saved in the store, which is open again").count
        let refused = try sandbox.chime("in", "3s", "Refused", "--id", "refused")
        #expect(refused.status == 5, "\(refused.stderr)")
        #expect(refused.stderr.split(separator: "\n").count == 1, "\(refused.stderr)")
        #expect(refused.stderr.contains("write-ahead log '\(sandbox.store)-wal' was removed while process"), "\(refused.stderr)")

        // And the runner, woken by it, saves what the log held and reopens the store
        let deadline = Date().addingTimeInterval(15)
        func recoveries() -> Int { runner.stderr.components(separatedBy: "is saved in the store, which is open again").count }
        while recoveries() == recoveriesBefore && Date() < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(recoveries() > recoveriesBefore, "\(runner.stderr)")
        #expect(FileManager.default.fileExists(atPath: sandbox.store + "-wal"))

        // Then writes work again, and what was scheduled before and after fires once each
        #expect(try sandbox.chime("in", "2s", "After", "--id", "after").status == 0)
        var lines: [String] = []
        let end = Date().addingTimeInterval(15)
        while (try? shownCounts(lines.joined(separator: "\n")))?.count ?? 0 < 2, Date() < end,
            let line = await runner.nextLine(timeout: end.timeIntervalSinceNow)
        {
            lines.append(line)
        }
        lines += await runner.lines(for: 1)
        #expect(runner.process.isRunning, "the runner died: \(runner.stderr)")
        #expect(await runner.terminate() == 0, "\(runner.stderr)")
        let shown = try shownCounts(lines.joined(separator: "\n"))
        #expect(shown == ["before": 1, "after": 1], "\(lines)")
        let ledger = try ReminderStore(path: sandbox.store, schemas: chimeSchemas).ledger()
        for id in ["before", "after"] {
            let rows = ledger.filter { $0.reminderID == id }
            #expect(rows.count == 1 && rows.first?.state == "posted", "\(id): \(rows)")
        }
        #expect(try FaultScript.integrity(sandbox.store) == ["ok"])
    }

    /// Every command, read-only or not, with a value or two where it needs one.
    static let commands: [[String]] = [
        ["list"], ["next", "x"], ["doses"], ["adherence"], ["export", "doses", "--csv"], ["stats"], ["forest"],
        ["focus", "status"], ["med", "list"], ["med", "next"], ["cancel", "x"], ["dose", "take"], ["focus", "pause"],
        ["in", "5m", "Tea"], ["med", "add", "Aspirin", "--amount", "100", "--unit", "mg", "--at", "08:00"],
        ["focus", "start"], ["run", "--json"],
    ]

    @Test(
        "Another program's SQLite file as the store: every command refuses it (exit 5) in one line, and leaves it byte for byte with nothing beside it",
        .timeLimit(.minutes(2)),
        arguments: [false, true]
    )
    func anotherProgramsDatabase(wal: Bool) throws {
        let sandbox = try Sandbox()
        let path = sandbox.directory.appendingPathComponent("other-app.db").path
        let queue = try DatabaseQueue(path: path)
        try queue.writeWithoutTransaction { db in
            if wal { try db.execute(sql: "PRAGMA journal_mode = WAL") }
            try db.execute(sql: "CREATE TABLE note (id INTEGER PRIMARY KEY, text TEXT); INSERT INTO note (text) VALUES ('milk')")
        }
        try queue.close()
        let bytes = try #require(FileManager.default.contents(atPath: path))

        for command in Self.commands {
            let result = try sandbox.chime(command + ["--store", path])
            #expect(result.status == 5, "\(command): \(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(command): \(result.stderr)")
            #expect(
                result.stderr.contains("'\(path)' is not a Chime store (an SQLite database of another program)"),
                "\(command): \(result.stderr)"
            )
            #expect(FileManager.default.contents(atPath: path) == bytes, "\(command) changed the file")
        }
        let doctor = try sandbox.chime("doctor", "--store", path)
        #expect(doctor.status == 5 && doctor.stdout.contains("is not a Chime store"), "\(doctor.stdout)")

        #expect(FileManager.default.contents(atPath: path) == bytes)
        #expect(try FileManager.default.contentsOfDirectory(atPath: sandbox.directory.path).sorted() == ["home", "other-app.db", "run"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: sandbox.runtime).isEmpty)
    }

    @Test(
        "A store made by a newer Chime: refused (exit 5) naming the migration it does not know, left byte for byte",
        .timeLimit(.minutes(1))
    )
    func storeOfANewerChime() throws {
        let sandbox = try Sandbox()
        #expect(try sandbox.chime("in", "10m", "Kept", "--id", "kept").status == 0)
        let queue = try DatabaseQueue(path: sandbox.store)
        try queue.write { db in try db.execute(sql: "CREATE TABLE future (x); INSERT INTO grdb_migrations VALUES ('v9: the future')") }
        try queue.close()
        let bytes = try #require(FileManager.default.contents(atPath: sandbox.store))
        let files = try FileManager.default.contentsOfDirectory(atPath: sandbox.directory.path).sorted()

        for command in [["list"], ["doses"], ["in", "5m", "Tea"], ["cancel", "kept"], ["run", "--json"]] {
            let result = try sandbox.chime(command)
            #expect(result.status == 5, "\(command): \(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(command): \(result.stderr)")
            #expect(
                result.stderr.contains("'\(sandbox.store)' was made by a newer Chime (it has migration 'v9: the future'"),
                "\(result.stderr)"
            )
        }
        #expect(FileManager.default.contents(atPath: sandbox.store) == bytes)
        #expect(try FileManager.default.contentsOfDirectory(atPath: sandbox.directory.path).sorted() == files)
    }

    @Test(
        "Without a store, commands that read or change one work on nothing and create no file; scheduling creates it",
        .timeLimit(.minutes(2))
    )
    func onlySchedulingCreatesAStore() throws {
        let sandbox = try Sandbox()
        // (The first 13 read or change a store; the others create one.)
        for command in Self.commands.prefix(13) {
            let result = try sandbox.chime(command)
            #expect([0, 3].contains(result.status), "\(command): \(result.stderr)")
        }
        let doctor = try sandbox.chime("doctor", "--json")
        #expect(doctor.status == 0, "\(doctor.stdout)")
        #expect((try jsonObject(doctor.stdout)["store"] as? [String: Any])?["exists"] as? Bool == false, "\(doctor.stdout)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: sandbox.directory.path).sorted() == ["home", "run"])

        #expect(try sandbox.chime("in", "5m", "Tea", "--id", "tea").status == 0)
        #expect(FileManager.default.fileExists(atPath: sandbox.store))
    }

    @Test("A damaged store: chime doctor finds it (exit 5), says what to do; a healthy one passes", .timeLimit(.minutes(1)))
    func damagedStore() throws {
        let sandbox = try Sandbox()
        #expect(try sandbox.chime("in", "10m", "Kept", "--id", "kept").status == 0)
        let healthy = try sandbox.chime("doctor", "--json")
        #expect(healthy.status == 0, "\(healthy.stdout)")
        #expect((try jsonObject(healthy.stdout)["store"] as? [String: Any])?["healthy"] as? Bool == true)

        // Given a page of an index overwritten with garbage
        do {
            let store = try ReminderStore(path: sandbox.store, schemas: chimeSchemas)
            let reminders = (0..<2000).map {
                NewReminder(id: "r\($0)", title: "R\($0)", trigger: .once(Date().addingTimeInterval(Double(600 + $0))))
            }
            _ = try store.scheduleBatch(reminders, now: Date(), systemZone: .current)
        }
        let queue = try DatabaseQueue(path: sandbox.store)
        let (page, size) = try queue.read { db in
            (
                try Int.fetchOne(db, sql: "SELECT rootpage FROM sqlite_master WHERE name = 'reminder_pending_due'")!,
                try Int.fetchOne(db, sql: "PRAGMA page_size")!
            )
        }
        try queue.close()
        let handle = try #require(FileHandle(forUpdatingAtPath: sandbox.store))
        try handle.seek(toOffset: UInt64((page - 1) * size))
        try handle.write(contentsOf: Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }))
        try handle.close()

        // Then doctor says it is damaged and how to recover it, with exit status 5
        let human = try sandbox.chime("doctor")
        #expect(human.status == 5, "\(human.stdout)")
        #expect(human.stdout.contains("damaged (PRAGMA quick_check failed)") && human.stdout.contains(".recover"), "\(human.stdout)")
        let json = try sandbox.chime("doctor", "--json")
        #expect(json.status == 5)
        let store = try #require(try jsonObject(json.stdout)["store"] as? [String: Any])
        #expect(store["healthy"] as? Bool == false && (store["damage"] as? [String])?.isEmpty == false, "\(store)")
    }
}

/// How many times each reminder id was shown on a `chime run --json` stream (a summary counts
/// for each id it carries).
func shownCounts(_ stream: String) throws -> [String: Int] {
    var shown: [String: Int] = [:]
    for line in stream.split(separator: "\n") where !line.isEmpty {
        let object = try jsonObject(String(line))
        let ids = (object["ids"] as? [String]) ?? [(object["id"] as? String) ?? ""]
        for id in ids { shown[id, default: 0] += 1 }
    }
    return shown
}

/// Another process's lock on the store, as `sqlite3 STORE 'BEGIN EXCLUSIVE'` takes it: an
/// exclusive transaction on a connection of this test process (chime runs in processes of its
/// own). Readers of a WAL store go on; writers wait, then fail.
final class StoreLock: Sendable {
    private let queue: DatabaseQueue

    init(path: String) throws {
        var configuration = Configuration()
        configuration.allowsUnsafeTransactions = true
        configuration.busyMode = .timeout(5)
        queue = try DatabaseQueue(path: path, configuration: configuration)
        try queue.writeWithoutTransaction { db in try db.execute(sql: "BEGIN EXCLUSIVE") }
    }

    func release() throws {
        try queue.writeWithoutTransaction { db in try db.execute(sql: "ROLLBACK") }
    }
}

/// `scripts/faults/store-faults`: a scenario on a small tmpfs in a private mount namespace,
/// its results left in files.
enum FaultScript {
    static let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("scripts/faults/store-faults").path

    /// Whether this machine lets the script mount a tmpfs in a namespace of its own.
    static let available: Bool = {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("chime-faults-check-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        guard let environment = try? IsolatedEnvironment.variables(root: root) else { return false }
        return (try? runProcess(path, ["check"], environment: environment, timeout: 20).status) == 0
    }()

    /// Runs `scenario` with the sandbox's `chime`; returns its results.
    static func run(_ scenario: String, in sandbox: borrowing Sandbox) throws -> FaultResults {
        let out = sandbox.directory.appendingPathComponent("results")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: false)
        var environment = sandbox.environment
        environment["CHIME"] = ChimeExecutable.url.path
        let result = try runProcess(path, [scenario, out.path], environment: environment, timeout: 50)
        #expect(result.status == 0, "store-faults \(scenario) failed: \(result.stderr)")
        return FaultResults(directory: out.path)
    }

    /// `PRAGMA integrity_check` on the store file at `path`.
    static func integrity(_ path: String) throws -> [String] {
        var configuration = Configuration()
        configuration.readonly = true
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        return try queue.read { db in try String.fetchAll(db, sql: "PRAGMA integrity_check") }
    }
}

/// The files `store-faults` leaves: STEP.status, STEP.out, STEP.err, STEP.files, snap-STEP.sqlite.
struct FaultResults {
    let directory: String

    func text(_ name: String) -> String {
        (try? String(contentsOfFile: directory + "/" + name, encoding: .utf8)) ?? ""
    }

    func status(_ step: String) -> Int32? { Int32(text(step + ".status").trimmingCharacters(in: .whitespacesAndNewlines)) }
    func stdout(_ step: String) -> String { text(step + ".out") }
    func stderr(_ step: String) -> String { text(step + ".err") }
    func files(_ step: String) -> [String] { text(step + ".files").split(separator: "\n").map(String.init) }
    func snapshot(_ step: String) -> String { directory + "/snap-" + step + ".sqlite" }

    /// The store's path, on the tmpfs.
    var storePath: String { text("store-path").trimmingCharacters(in: .newlines) }

    /// The ids a `chime list --json` step printed, sorted.
    func listedIDs(_ step: String) throws -> [String] {
        let reminders = try #require(try jsonObject(stdout(step))["reminders"] as? [[String: Any]], "\(step): \(stderr(step))")
        return reminders.compactMap { $0["id"] as? String }.sorted()
    }

    /// The one line a failed step wrote on standard error, after checking its exit status.
    func oneErrorLine(_ step: String, status expected: Int32) throws -> String {
        #expect(status(step) == expected, "\(step): exit \(status(step).map(String.init) ?? "?"): \(stderr(step))")
        let lines = stderr(step).split(separator: "\n")
        #expect(lines.count == 1, "\(step): \(stderr(step))")
        return String(try #require(lines.first, "\(step): nothing on standard error"))
    }
}

/// Runs `executable` to completion, or until `timeout` seconds, when it is killed by its pid.
func runProcess(
    _ executable: String,
    _ arguments: [String],
    environment: [String: String],
    directory: String? = nil,
    timeout: Double
) throws -> (status: Int32, stdout: String, stderr: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.environment = environment
    if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
    // Output to files rather than pipes: nothing to drain while waiting.
    let outputs = FileManager.default.temporaryDirectory.appendingPathComponent("chime-process-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: outputs, withIntermediateDirectories: false)
    defer { try? FileManager.default.removeItem(at: outputs) }
    let outURL = outputs.appendingPathComponent("out")
    let errURL = outputs.appendingPathComponent("err")
    guard FileManager.default.createFile(atPath: outURL.path, contents: nil),
        FileManager.default.createFile(atPath: errURL.path, contents: nil)
    else { throw CocoaError(.fileWriteUnknown) }
    let out = try FileHandle(forWritingTo: outURL)
    let err = try FileHandle(forWritingTo: errURL)
    defer {
        try? out.close()
        try? err.close()
    }
    process.standardOutput = out
    process.standardError = err
    try process.run()
    let deadline = Date().addingTimeInterval(timeout)
    while process.isRunning && Date() < deadline { usleep(20_000) }
    if process.isRunning {
        // SIGTERM first: the fault script then stops what it started and unmounts its tmpfs.
        kill(process.processIdentifier, SIGTERM)
        let grace = Date().addingTimeInterval(10)
        while process.isRunning && Date() < grace { usleep(20_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }
    process.waitUntilExit()
    let stdout = (try? String(contentsOf: outURL, encoding: .utf8)) ?? ""
    let stderr = (try? String(contentsOf: errURL, encoding: .utf8)) ?? ""
    return (process.terminationStatus, stdout, stderr)
}

import Foundation
import Testing

/// `chime import` of files larger than one chunk (1,000 reminders): read as a stream, still
/// all or none.
@Suite("chime import, streamed", .serialized)
struct ImportStreamTests {
    /// A JSON array of `count` reminders "r0"…, each due in an hour; `edit` changes element i's text.
    func file(_ count: Int, in sandbox: borrowing Sandbox, edit: (Int, String) -> String = { $1 }) throws -> String {
        let elements = (0..<count).map { index in
            edit(index, #"{"id": "r\#(index)", "title": "Tea ] } \"\#(index)\" 🍵", "in": "1h"}"#)
        }
        let path = sandbox.directory.appendingPathComponent("many.json").path
        try Data(("[\n" + elements.joined(separator: ",\n") + "\n]\n").utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// `chime import -` with standard input read from `path`.
    func importStandardInput(_ path: String, in sandbox: borrowing Sandbox) throws -> (status: Int32, stdout: String, stderr: String) {
        let (process, out, err) = ChimeExecutable.process(["import", "-", "--json"], environment: sandbox.environment)
        process.standardInput = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
        try process.run()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: stdout, as: UTF8.self), String(decoding: stderr, as: UTF8.self))
    }

    func pendingIds(_ sandbox: borrowing Sandbox) throws -> [String] {
        let list = try sandbox.chime("list", "--json")
        let reminders = try #require(try jsonObject(list.stdout)["reminders"] as? [[String: Any]])
        return reminders.compactMap { $0["id"] as? String }
    }

    @Test("5,500 reminders, from a file and from standard input, are all scheduled in file order")
    func importsManyInChunks() throws {
        let sandbox = try Sandbox()
        let path = try file(5_500, in: sandbox)
        let result = try sandbox.chime("import", path, "--json")
        #expect(result.status == 0, "\(result.stderr)")
        let imported = try jsonObject(result.stdout)
        #expect(imported["imported"] as? Int == 5_500)
        #expect(imported["ids"] as? [String] == (0..<5_500).map { "r\($0)" })
        #expect(Set(try pendingIds(sandbox)) == Set((0..<5_500).map { "r\($0)" }))

        // Again through standard input: each replaces the pending reminder of its id.
        let again = try importStandardInput(path, in: sandbox)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try jsonObject(again.stdout)["replaced"] as? Int == 5_500)
        #expect(try pendingIds(sandbox).count == 5_500)
    }

    @Test(
        "A bad reminder late in a long file: one line naming it, its exit code, and nothing imported",
        arguments: [
            (4_321, #"{"id": "r4321", "title": "Late", "in": "5x"}"#, 64, "reminder 4322 ('r4321'): invalid duration '5x'"),
            (4_321, #"{"id": "r4321", "title": "Late", "in": "5m", "zon": "UTC"}"#, 64, #"reminder 4322: unknown key "zon""#),
            (4_321, #"{"id": "r12", "title": "Twice", "in": "5m"}"#, 64, "the id 'r12' is also reminder 13's"),
            (4_321, #"{"id": "r4321", "title": "Late", "in": x}"#, 64, "reminder 4322: not valid JSON at line 4323, column 40"),
            (4_321, #"{"id": "r4321", "title": "Late", "in": "5m"} x"#, 64, "not valid JSON at line 4323, column 46"),
            (4_321, #"{"id": "keep", "title": "Taken", "in": "5m"}"#, 4, "reminder 4322: a pending reminder already has the id 'keep'"),
        ]
    )
    func badReminderLateImportsNothing(index: Int, element: String, status: Int32, named: String) throws {
        let sandbox = try Sandbox()
        #expect(try sandbox.chime("in", "10m", "Keep me", "--id", "keep").status == 0)
        let before = try sandbox.chime("list", "--json").stdout
        let path = try file(5_000, in: sandbox) { $0 == index ? element : $1 }

        let result = try sandbox.chime("import", path, "--no-replace")
        #expect(result.status == status, "\(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
        #expect(result.stderr.contains("many.json: "), "\(result.stderr)")
        #expect(result.stderr.contains(named), "\(result.stderr)")
        #expect(try sandbox.chime("list", "--json").stdout == before)
    }

    @Test("A long file cut short imports nothing and says where it ends")
    func truncatedFileImportsNothing() throws {
        let sandbox = try Sandbox()
        let path = try file(3_000, in: sandbox)
        let text = try Data(contentsOf: URL(fileURLWithPath: path))
        try text.prefix(text.count - 10).write(to: URL(fileURLWithPath: path))
        let result = try sandbox.chime("import", path)
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.contains("the text ends before the JSON does"), "\(result.stderr)")
        #expect(try pendingIds(sandbox).isEmpty)
    }

    @Test("A bad reminder after the first 1,000 leaves no store where there was none: no file, log or directory")
    func badFileLeavesNoNewStore() throws {
        // Named by $CHIME_STORE: the file, its -wal and -shm.
        let sandbox = try Sandbox()
        let path = try file(3_000, in: sandbox) { $0 == 2_345 ? #"{"id": "r2345", "title": "Late", "in": "5x"}"# : $1 }
        let result = try sandbox.chime("import", path)
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.contains("reminder 2346 ('r2345'): invalid duration '5x'"), "\(result.stderr)")
        for suffix in ["", "-wal", "-shm", "-journal"] {
            #expect(!FileManager.default.fileExists(atPath: sandbox.store + suffix), "\(suffix)")
        }

        // The default store: the directory made for it goes too.
        let defaults = try Sandbox(extra: ["CHIME_STORE": ""])
        let data = try #require(defaults.environment["XDG_DATA_HOME"])
        let badFile = try file(3_000, in: defaults) { $0 == 2_345 ? #"{"id": "r2345", "title": "Late", "in": "5x"}"# : $1 }
        let again = try defaults.chime("import", badFile)
        #expect(again.status == 64, "\(again.stderr)")
        #expect(!FileManager.default.fileExists(atPath: data + "/chime"))

        // A store that was there is kept, as it was.
        #expect(try defaults.chime("in", "10m", "Keep me", "--id", "keep").status == 0)
        let before = try defaults.chime("list", "--json").stdout
        #expect(try defaults.chime("import", badFile).status == 64)
        #expect(FileManager.default.fileExists(atPath: data + "/chime/chime.sqlite"))
        #expect(try defaults.chime("list", "--json").stdout == before)
    }
}

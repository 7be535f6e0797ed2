import Foundation
import Testing

/// `chime import`: many reminders from JSON, all or none.
@Suite("chime import", .serialized)
struct ImportTests {
    func write(_ text: String, to name: String, in sandbox: borrowing Sandbox) throws -> String {
        let path = sandbox.directory.appendingPathComponent(name).path
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    func reminders(_ sandbox: borrowing Sandbox) throws -> [[String: Any]] {
        let list = try sandbox.chime("list", "--json")
        return try #require(try jsonObject(list.stdout)["reminders"] as? [[String: Any]])
    }

    @Test("A file of reminders is scheduled in one go, and `list --json` output imports as it is")
    func importsAFileAndRoundTripsTheListing() throws {
        let sandbox = try Sandbox()
        let file = try write(
            """
            [{"id": "tea", "title": "Tea", "in": "25m"},
             {"id": "standup", "title": "Stand-up", "every": "weekday 09:30", "zone": "Europe/Berlin"},
             {"id": "new-year", "title": "New year", "body": "Cheers", "at": "2099-01-01T00:00:00.250+01:00"},
             {"id": "water", "title": "Water", "every": "2h"},
             {"title": "No id given", "at": "23:59"}]
            """,
            to: "in.json",
            in: sandbox
        )
        let result = try sandbox.chime("import", file, "--json")
        #expect(result.status == 0, "\(result.stderr)")
        let imported = try jsonObject(result.stdout)
        #expect(imported["imported"] as? Int == 5)
        #expect((imported["ids"] as? [String])?.prefix(4) == ["tea", "standup", "new-year", "water"])
        let listed = try reminders(sandbox)
        #expect(listed.count == 5)
        let newYear = try #require(listed.first { $0["id"] as? String == "new-year" })
        #expect(newYear["next_due"] as? String == "2098-12-31T23:00:00.250Z")
        #expect(newYear["body"] as? String == "Cheers")
        let standup = try #require(listed.first { $0["id"] as? String == "standup" })
        #expect(standup["trigger"] as? String == "every weekday 09:30 (Europe/Berlin)")

        // The listing, imported into another store, gives the same reminders, due at the same instants
        let listing = try write(try sandbox.chime("list", "--json").stdout, to: "listing.json", in: sandbox)
        let other = try Sandbox()
        let again = try other.chime("import", listing)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stdout.contains("Imported 5 reminders."))
        let copied = try reminders(other)
        for key in ["id", "title", "body", "trigger", "next_due", "recurring"] {
            #expect(copied.map { "\($0[key] ?? "-")" } == listed.map { "\($0[key] ?? "-")" }, "\(key)")
        }
    }

    @Test(
        "One bad reminder: one line naming it and its value, exit 64, nothing imported",
        arguments: [
            (#"[{"id": "a", "title": "A", "in": "5m"}, {"id": "b", "title": "B", "in": "5x"}]"#, "reminder 2 ('b'): invalid duration '5x'"),
            (#"[{"title": "A", "in": "5m", "at": "10:00"}]"#, #"both "at" and "in""#),
            (#"[{"title": "A"}]"#, #"no time: expected one of "at", "in" or "every""#),
            (#"[{"in": "5m"}]"#, #"missing "title""#),
            (#"[{"title": 5, "in": "5m"}]"#, #""title": expected a string"#),
            (#"[{"title": "A", "in": "5m""#, "not valid JSON"),
            (#"[{"id": "a", "title": "A", "in": "5m"}, {"id": "a", "title": "B", "in": "6m"}]"#, "the id 'a' is also reminder 1's"),
            (#"[{"id": "a/b", "title": "A", "in": "5m"}]"#, "invalid id 'a/b'"),
            (#"[{"title": "A", "every": "fortnight"}]"#, "fortnight"),
            (#"[{"title": "A", "at": "10:00", "zone": "Mars/Base"}]"#, "Mars/Base"),
            (#"[{"title": "A", "in": "5m", "title": "B"}]"#, #"reminder 1: the key "title" is given twice (at line 1, column 29"#),
            (#"[5]"#, "reminder 1: expected an object"),
            (#"[{"title": "A", "in": "5m", "zon": "Europe/Berlin"}]"#, #"reminder 1: unknown key "zon""#),
            (#"{"reminders": [{"title": "A", "in": "5m"}], "remnders": []}"#, #"unknown key "remnders""#),
            (#"[{"title": "A", "in": "5m""#, "line 1, column 27"),
            ("[{\"title\": \"A\",\n \"in\": x}]", "line 2, column 8"),
            (#"[{"title": "A", "in": "5m", "body": "\#(String(repeating: "b", count: 4_001))"}]"#, "at most 4000 characters"),
            (#"[{"title": "\u202eA", "in": "5m"}]"#, "U+202E"),
            (#"[{"title": "A", "in": "5m", "app_id": "org.example.9Notes"}]"#, "reminder 1: invalid app-id 'org.example.9Notes'"),
            (#"[{"title": "A", "in": "5m", "actions": [{"key": "do it", "label": "Do"}]}]"#, "invalid action key 'do it'"),
        ]
    )
    func badReminderImportsNothing(json: String, named: String) throws {
        let sandbox = try Sandbox()
        #expect(try sandbox.chime("in", "10m", "Keep me", "--id", "keep").status == 0)
        let before = try sandbox.chime("list", "--json").stdout
        let file = try write(json, to: "bad.json", in: sandbox)

        let result = try sandbox.chime("import", file)
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
        #expect(result.stderr.contains(named), "\(result.stderr)")
        #expect(result.stderr.contains("bad.json"))
        #expect(try sandbox.chime("list", "--json").stdout == before)
    }

    @Test("A missing file is named; --no-replace refuses a taken id and imports nothing")
    func missingFileAndConflicts() throws {
        let sandbox = try Sandbox()
        let missing = try sandbox.chime("import", "/nonexistent/reminders.json")
        #expect(missing.status == 64)
        #expect(missing.stderr.contains("'/nonexistent/reminders.json' does not exist"))

        #expect(try sandbox.chime("in", "10m", "Taken", "--id", "taken").status == 0)
        let file = try write(
            #"[{"id": "fresh", "title": "Fresh", "in": "5m"}, {"id": "taken", "title": "Again", "in": "5m"}]"#,
            to: "conflict.json",
            in: sandbox
        )
        let refused = try sandbox.chime("import", file, "--no-replace")
        #expect(refused.status == 4, "\(refused.stderr)")
        #expect(refused.stderr.contains("taken"))
        #expect(try reminders(sandbox).map { $0["id"] as? String } == ["taken"])

        // Without --no-replace the taken one is replaced, and the count says so
        let replaced = try sandbox.chime("import", file, "--json")
        #expect(replaced.status == 0)
        #expect(try jsonObject(replaced.stdout)["replaced"] as? Int == 1)
        #expect(try reminders(sandbox).compactMap { $0["title"] as? String }.sorted() == ["Again", "Fresh"])
    }

    /// `list --json` of `sandbox` with every next due time moved `hours` back: a backup made
    /// that long ago (the runner's clock cannot be injected into a `chime` process; the file's
    /// times can).
    func backup(of sandbox: borrowing Sandbox, hoursAgo hours: Double) throws -> String {
        var listing = try jsonObject(try sandbox.chime("list", "--json").stdout)
        var reminders = try #require(listing["reminders"] as? [[String: Any]])
        let parse = ISO8601DateFormatter()
        parse.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        for index in reminders.indices {
            let text = try #require(reminders[index]["next_due"] as? String)
            let due = try #require(parse.date(from: text))
            reminders[index]["next_due"] = parse.string(from: due.addingTimeInterval(-hours * 3_600))
        }
        listing["reminders"] = reminders
        let data = try JSONSerialization.data(withJSONObject: listing)
        return try write(String(decoding: data, as: UTF8.self), to: "backup.json", in: sandbox)
    }

    @Test(
        "A backup restored after its times passed: recurring ones move on, a past one-shot is told and left out, or fires with --past fire"
    )
    func restoresABackupWhoseTimesHavePassed() throws {
        let sandbox = try Sandbox()
        #expect(try sandbox.chime("every", "1m", "Stretch", "--id", "stretch").status == 0)
        #expect(try sandbox.chime("in", "5m", "Call the pharmacy", "--id", "call").status == 0)
        let file = try backup(of: sandbox, hoursAgo: 3)
        #expect(try sandbox.chime("cancel", "stretch", "call").status == 0)

        let restored = try sandbox.chime("import", file)
        #expect(restored.status == 0, "\(restored.stderr)")
        let lines = restored.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 3, "\(restored.stdout)")
        #expect(lines.contains { $0.hasPrefix("Reminder 1 ('stretch', \"Stretch\") was due ") && $0.contains("moved to its next time") })
        #expect(lines.contains { $0.hasPrefix("Reminder 2 ('call', \"Call the pharmacy\") was due ") && $0.hasSuffix("left out.") })
        #expect(lines.last == "Imported 1 reminder.")
        #expect(restored.stderr.contains("import the file again with --past fire"), "\(restored.stderr)")
        let listed = try reminders(sandbox)
        #expect(listed.map { $0["id"] as? String } == ["stretch"])

        // Imported again with --past fire: the one-shot keeps its time, so the runner shows it at once, late.
        let fired = try sandbox.chime("import", file, "--past", "fire", "--json")
        #expect(fired.status == 0, "\(fired.stderr)")
        let report = try jsonObject(fired.stdout)
        let passed = try #require(report["passed"] as? [[String: Any]])
        #expect(passed.map { $0["what"] as? String } == ["moved", "fires"])
        #expect(passed.map { $0["chosen"] as? Bool } == [true, true])
        #expect(report["imported"] as? Int == 2)
        let call = try #require(try reminders(sandbox).first { $0["id"] as? String == "call" })
        #expect(call["next_due"] as? String == passed[1]["due"] as? String)

        // --past skip: the same lines, no hint.
        let skipped = try sandbox.chime("import", file, "--past", "skip")
        #expect(skipped.status == 0)
        #expect(skipped.stdout.contains("left out (--past skip)."), "\(skipped.stdout)")
        #expect(!skipped.stderr.contains("--past fire"), "\(skipped.stderr)")
        #expect(try sandbox.chime("import", file, "--past", "later").stderr.contains("'later'"))
    }

    @Test(
        "What is not a regular file is refused by name at once; standard input that is not JSON ends at its first byte",
        .timeLimit(.minutes(1))
    )
    func refusesWhatIsNotAFile() throws {
        let sandbox = try Sandbox()
        let zero = try sandbox.chime("import", "/dev/zero")
        #expect(zero.status == 64)
        #expect(zero.stderr.contains("import file '/dev/zero' is a character device, not a regular file"), "\(zero.stderr)")
        let fifo = sandbox.directory.appendingPathComponent("fifo").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let piped = try sandbox.chime("import", fifo)
        #expect(piped.status == 64)
        #expect(piped.stderr.contains("is a FIFO (named pipe), not a regular file"), "\(piped.stderr)")

        let (process, out, err) = ChimeExecutable.process(["import", "-"], environment: sandbox.environment)
        process.standardInput = FileHandle(forReadingAtPath: "/dev/zero")
        try process.run()
        _ = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 64)
        #expect(stderr.contains("standard input: not valid JSON at line 1, column 1 (byte 0): unexpected byte 0x00"), "\(stderr)")
        #expect(!FileManager.default.fileExists(atPath: sandbox.store))
    }
}

extension ImportTests {
    @Test("An app's reminders, as 'list --json' prints them, import into a fresh store and list the same")
    func appRemindersRoundTrip() throws {
        let sandbox = try Sandbox()
        let file = try write(
            """
            [{"id": "notes", "title": "Open the notes", "in": "2h", "app_id": "org.example.Notes",
              "actions": [{"key": "open", "label": "Open"}, {"key": "later.1", "label": "Later"}]},
             {"id": "app-only", "title": "No buttons", "every": "weekday 09:30", "app_id": "org.example.Notes"},
             {"id": "tea", "title": "Tea", "in": "25m"}]
            """,
            to: "apps.json",
            in: sandbox
        )
        let first = try sandbox.chime("import", file)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(try sandbox.chime("show", "notes").stdout.contains("org.example.Notes"))
        let listing = try sandbox.chime("list", "--json").stdout
        #expect(listing.contains("\"app_id\""), "\(listing)")

        let other = try Sandbox()
        let again = try other.chime("import", try write(listing, to: "listing.json", in: sandbox))
        #expect(again.status == 0, "\(again.stderr)")
        // Equal but for when each was created.
        func comparable(_ reminders: [[String: Any]]) throws -> [String] {
            try reminders.map { reminder in
                let data = try JSONSerialization.data(withJSONObject: reminder.filter { $0.key != "created" }, options: [.sortedKeys])
                return String(decoding: data, as: UTF8.self)
            }
        }
        let listed = try reminders(sandbox)
        #expect(try comparable(try reminders(other)) == comparable(listed))
        let notes = try #require(try reminders(other).first { $0["id"] as? String == "notes" })
        #expect(notes["app_id"] as? String == "org.example.Notes")
        #expect((notes["actions"] as? [[String: String]])?.map { $0["key"] ?? "" } == ["open", "later.1"])
    }
}

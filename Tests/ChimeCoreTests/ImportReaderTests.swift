import ChimeCore
import Foundation
import Testing

/// A file in a fresh temporary directory holding `data`, open for reading in `body`, removed by its end.
func withTemporaryFile<T>(_ data: Data, _ body: (FileHandle) throws -> T) throws -> T {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("chime-reader-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let url = directory.appendingPathComponent("r.json")
    try data.write(to: url)
    let handle = try FileHandle(forReadingFrom: url)
    defer { try? handle.close() }
    return try body(handle)
}

/// `chime import`'s reader: a file read as a stream, a chunk of reminders at a time, every
/// reminder checked as `ReminderImport.reminders(from:source:now:)` checks the whole file.
struct ImportReaderTests {
    let now = Date(timeIntervalSince1970: 1_790_000_000)

    func withFile<T>(_ data: Data, _ body: (FileHandle) throws -> T) throws -> T { try withTemporaryFile(data, body) }

    /// Every chunk the reader hands out for `text`, or its error.
    func chunks(_ text: String, chunkSize: Int = 1_000) throws -> [[NewReminder]] {
        try chunks(Data(text.utf8), chunkSize: chunkSize)
    }

    func chunks(_ data: Data, chunkSize: Int = 1_000) throws -> [[NewReminder]] {
        try withFile(data) { handle in
            let reader = ReminderImport.Reader(handle, source: "r.json", now: now, chunkSize: chunkSize)
            var result: [[NewReminder]] = []
            while let chunk = try reader.next() { result.append(chunk) }
            return result
        }
    }

    /// `count` reminders "r0"… as JSON elements, each with brackets, quotes and UTF-8 in its title.
    func elements(_ count: Int) -> [String] {
        (0..<count).map { #"{"id": "r\#($0)", "title": "Tea ] } [ { \"\#($0)\" 🍵, ok", "in": "\#($0 % 50 + 1)m"}"# }
    }

    @Test("A long array comes in chunks, in file order, each reminder as the whole-file decoder reads it")
    func streamsInChunks() throws {
        let text = "[\n" + elements(2_500).joined(separator: ",\n") + "\n]\n"
        let streamed = try chunks(text)
        // 64 KiB blocks: a chunk is at least 1,000 reminders, but for the last.
        #expect(streamed.count >= 2 && streamed.count <= 3)
        #expect(streamed.dropLast().allSatisfy { $0.count >= 1_000 })
        let whole = try ReminderImport.reminders(from: Data(text.utf8), source: "r.json", now: now)
        #expect(streamed.flatMap { $0 } == whole)
        #expect(whole.count == 2_500)
        #expect(whole[7].title == #"Tea ] } [ { "7" 🍵, ok"#)
    }

    @Test(
        "What the fast path reads, or leaves to JSONDecoder, reads as the whole-file decoder reads it",
        arguments: [
            #"{"title": "plain", "in": "5m"}"#,
            #"{ "title" : "spaced" , "in":"5m" , "body" : "" }"#,
            #"{"title": "escapes \" \\ \/ \b \f \n \r \t end", "in": "5m"}"#,
            #"{"title": "unicode \u00e9 \ud83c\udf75 escape", "in": "5m"}"#,
            #"{"title": "Grüße 🍵", "id": "tea-1", "body": "ünï", "at": "2026-12-24T17:00:00Z"}"#,
            #"{"title": "sticky", "in": "5m", "sticky": true, "urgency": "critical", "icon": null}"#,
            #"{"title": "not sticky", "in": "5m", "sticky": false, "sound": "bell"}"#,
            #"{"title": "null body", "in": "5m", "body": null, "zone": null}"#,
            #"{"title": "listed", "trigger": "every 2h", "next_due": "2026-12-24T17:00:00Z", "kind": "plain", "recurring": true, "created": 5, "next_due_local": {"a": [1]}}"#,
            #"{"title": "weekly", "every": "weekday 09:30", "zone": "Europe/Berlin"}"#,
            #"{"title": "an app's", "in": "5m", "app_id": "org.example.Notes"}"#,
            #"{"title": "buttons", "in": "5m", "app_id": "org.example.Notes", "actions": [{"key": "open", "label": "Open"}]}"#,
        ]
    )
    func agreesWithDecoder(element: String) throws {
        let text = "[" + element + "]"
        let whole = try ReminderImport.reminders(from: Data(text.utf8), source: "r.json", now: now)
        #expect(try chunks(text) == [whole])
    }

    @Test(
        "A bad reminder is refused by both readers, the stream naming it by its position",
        arguments: [
            (#"{"title": 5, "in": "5m"}"#, #"reminder 2: "title": expected a string"#),
            (#"{"title": "x", "in": "5m", "sticky": "yes"}"#, #"reminder 2: "sticky": expected true or false"#),
            (#"{"title": "x", "in": "5m", "zon": "UTC"}"#, #"reminder 2: unknown key "zon""#),
            (#"{"title": "x", "in": "5x"}"#, "reminder 2: invalid duration '5x'"),
            (#"{"in": "5m"}"#, #"reminder 2: missing "title""#),
            ("{\"title\": \"raw \t tab\", \"in\": \"5m\"}", "reminder 2: not valid JSON at line 1, column"),
            (#"{"title": "x" "in": "5m"}"#, "reminder 2: not valid JSON at line 1, column 47"),
            (#""just a string""#, "reminder 2: expected an object"),
            (#"{"title": "x", "in": "5m"} 7"#, "not valid JSON at line 1, column"),
            (#"{"title": "x", "in": "5m", "app_id": "notes"}"#, "reminder 2: invalid app-id 'notes': expected a D-Bus application id"),
            (#"{"title": "x", "in": "5m", "app_id": 7}"#, #"reminder 2: "app_id": expected a string"#),
            (
                #"{"title": "x", "in": "5m", "actions": [{"key": "-open", "label": "Open"}]}"#,
                "reminder 2: invalid action key '-open': expected 1 to 64 letters",
            ),
            (#"{"title": "x", "in": "5m", "actions": [{"key": "open"}]}"#, #"reminder 2: "actions" item 1: missing "label""#),
            (#"{"title": "x", "in": "5m", "actions": [{"key": "a", "label": "A", "icon": "x"}]}"#, #"unknown key "icon""#),
            (
                #"{"title": "x", "in": "5m", "actions": [{"key": "a", "label": "A"}, {"key": "b", "label": "B"}, {"key": "c", "label": "C"}, {"key": "d", "label": "D"}]}"#,
                "reminder 2: invalid actions: 4 given; expected 1 to 3",
            ),
        ]
    )
    func refusesBadReminder(element: String, message: String) throws {
        let text = #"[{"title": "fine", "in": "5m"}, "# + element + "]"
        #expect(throws: ChimeError.self) { try ReminderImport.reminders(from: Data(text.utf8), source: "r.json", now: now) }
        let error = try #require(throws: ChimeError.self) { try chunks(text) }
        #expect(error.code == .usage)
        #expect(error.message.hasPrefix("r.json: "), "\(error.message)")
        #expect(error.message.contains(message), "\(error.message)")
    }

    @Test("A bad reminder after the first chunk: the chunks before it come out, then the error naming it")
    func badReminderAfterFirstChunk() throws {
        var items = elements(3_000)
        items[2_345] = #"{"id": "bad", "title": "Late ] \"x\"", "in": "never"}"#
        let text = "[" + items.joined(separator: ",") + "]"
        try withFile(Data(text.utf8)) { handle in
            let reader = ReminderImport.Reader(handle, source: "r.json", now: now)
            var read = 0
            let error = try #require(throws: ChimeError.self) {
                while let chunk = try reader.next() { read += chunk.count }
            }
            #expect(read >= 1_000 && read <= 2_345)
            #expect(error.message.contains("r.json: reminder 2346 ('bad'): "), "\(error.message)")
        }
    }

    @Test("A JSON syntax error after the first chunk names its line and column")
    func syntaxErrorAfterFirstChunk() throws {
        var items = elements(2_000)
        items[1_500] = #"{"id": "bad", "title": "x" "in": "5m"}"#
        let text = "[\n" + items.joined(separator: ",\n") + "\n]"
        let error = try #require(throws: ChimeError.self) { try chunks(text) }
        #expect(error.message.contains("reminder 1501: not valid JSON at line 1502, column 28"), "\(error.message)")
    }

    @Test("A byte order mark and white space around the array are allowed", arguments: ["\u{FEFF}", "", " \n\t\r\n"])
    func byteOrderMarkAndSpace(prefix: String) throws {
        let text = prefix + " [ " + elements(3).joined(separator: " , ") + " ] \n "
        #expect(try chunks(text).flatMap { $0 }.map(\.id) == ["r0", "r1", "r2"])
    }

    @Test("An empty array has no reminders", arguments: ["[]", " [ \n ] ", "\u{FEFF}[]"])
    func emptyArray(text: String) throws {
        #expect(try chunks(text).isEmpty)
    }

    @Test("The object form of 'chime list --json' is read whole")
    func objectForm() throws {
        let text = #"{"reminders": ["# + elements(3).joined(separator: ",") + #"], "runner": null}"#
        #expect(try chunks(text).flatMap { $0 }.map(\.id) == ["r0", "r1", "r2"])
    }

    @Test(
        "A top level that is not an array of reminders is one usage error",
        arguments: ["", "   ", "5", "\"text\"", "null", "[1, 2", "{\"x\": 1}", "[{\"title\": \"a\", \"in\": \"5m\"}] ]"]
    )
    func notAnArray(text: String) throws {
        let error = try #require(throws: ChimeError.self) { try chunks(text) }
        #expect(error.code == .usage)
        #expect(error.message.hasPrefix("r.json"), "\(error.message)")
        #expect(!error.message.contains("\n"))
    }
}

extension ImportReaderTests {
    @Test("An app's reminder as 'chime list --json' prints it: its app id and its own buttons come back")
    func appIDAndActions() throws {
        let text = #"[{"title": "Notes", "in": "5m", "app_id": "org.example.Notes", "actions": [{"key": "open", "label": "Open"}]}]"#
        let read = try #require(try chunks(text).first?.first)
        #expect(read.appID == "org.example.Notes")
        #expect(read.presentation.actions == [Note.Action(key: "open", label: "Open")])
        let none = try #require(try chunks(#"[{"title": "Plain", "in": "5m", "actions": []}]"#).first?.first)
        #expect(none.appID == nil && none.presentation.actions.isEmpty)
    }
}

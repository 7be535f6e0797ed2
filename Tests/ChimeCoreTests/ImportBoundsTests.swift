import ChimeCore
import Foundation
import Testing

/// A backup restored after its times have passed, `chime import`'s
/// bounds (bytes looked at once, an element's and a document's size, what is not JSON refused
/// at its first byte), the object form streamed, and a key given twice refused.
struct ImportBoundsTests {
    /// When the backup was made; the tests restore it later on this injected clock.
    let made = Date(timeIntervalSince1970: 1_790_000_000)

    /// Every reminder the reader hands out for `data`, and its adjustments.
    func read(
        _ data: Data,
        now: Date,
        past: ReminderImport.PastOneShots? = nil,
        maxElementBytes: Int = JSONArraySplitter.defaultMaxElementBytes,
        maxDocumentBytes: Int = ReminderImport.Reader.maxDocumentBytes
    ) throws -> (reminders: [NewReminder], adjustments: [ReminderImport.Adjustment], chunks: Int) {
        try withTemporaryFile(data) { handle in
            let reader = ReminderImport.Reader(
                handle,
                source: "r.json",
                now: now,
                past: past,
                chunkSize: 100,
                maxElementBytes: maxElementBytes,
                maxDocumentBytes: maxDocumentBytes
            )
            var reminders: [NewReminder] = []
            var chunks = 0
            while let chunk = try reader.next() {
                reminders += chunk
                chunks += 1
            }
            return (reminders, reader.adjustments, chunks)
        }
    }

    /// A backup as `chime list --json` prints it, made at ``made`` (14:13:20 UTC): every minute
    /// (next in 20 s), every day at 15:00 UTC (next 47 minutes later), and a one-shot in 5 minutes.
    var backup: String {
        let minute = TimeText.iso(made.addingTimeInterval(20))
        let call = TimeText.iso(made.addingTimeInterval(300))
        let three = TimeParsing.recurrenceNext("day 15:00 (UTC)", after: made)
        return """
            {"reminders": [
              {"id": "stretch", "title": "Stretch", "trigger": "every 1m", "next_due": "\(minute)", "kind": "plain", "recurring": true},
              {"id": "call", "title": "Call", "trigger": "once", "next_due": "\(call)", "kind": "plain", "recurring": false},
              {"id": "standup", "title": "Stand-up", "trigger": "every day 15:00 (UTC)", "next_due": "\(TimeText.iso(three))", "kind": "plain", "recurring": true}
            ], "runner": false}
            """
    }

    @Test("A backup made three hours earlier restores: recurring ones move to their next time, a past one-shot is left out and told")
    func backupThreeHoursLater() throws {
        let now = made.addingTimeInterval(3 * 3_600)
        let (reminders, adjustments, _) = try read(Data(backup.utf8), now: now)
        #expect(reminders.map(\.id) == ["stretch", "standup"])
        let stretch = try #require(adjustments.first { $0.id == "stretch" })
        #expect(stretch.kind == .moved)
        #expect(stretch.index == 0)
        #expect(stretch.due == made.addingTimeInterval(20))
        // The phase is kept: the next minute after now at :20 past the backup's second.
        let next = try #require(stretch.next)
        #expect(next > now && next <= now.addingTimeInterval(60))
        #expect(Int(next.timeIntervalSince(made.addingTimeInterval(20)).rounded()) % 60 == 0)
        #expect(reminders[0].trigger.nextOccurrence(after: now, systemZone: .current) == next)
        let call = try #require(adjustments.first { $0.id == "call" })
        #expect(call.kind == .skipped)
        #expect(!call.chosen)
        #expect(call.due == made.addingTimeInterval(300))
        // The daily one was due at 15:00, 2 h 13 min ago: its next time is tomorrow's 15:00.
        let standup = try #require(adjustments.first { $0.id == "standup" })
        #expect(standup.kind == .moved)
        #expect(standup.due == made.addingTimeInterval(47 * 60 - 20))
        #expect(standup.next == made.addingTimeInterval(47 * 60 - 20 + 86_400))
        #expect(adjustments.map(\.id) == ["stretch", "call", "standup"])
    }

    @Test("--past fire keeps a past one-shot at its time (the runner shows it at once, late); --past skip leaves it out, chosen")
    func pastOneShotChoices() throws {
        let now = made.addingTimeInterval(3 * 3_600)
        let fired = try read(Data(backup.utf8), now: now, past: .fire)
        #expect(fired.reminders.map(\.id) == ["stretch", "call", "standup"])
        #expect(fired.reminders[1].trigger == .once(made.addingTimeInterval(300)))
        #expect(fired.adjustments.first { $0.id == "call" }?.kind == .fires)
        let skipped = try read(Data(backup.utf8), now: now, past: .skip)
        #expect(skipped.reminders.map(\.id) == ["stretch", "standup"])
        let call = try #require(skipped.adjustments.first { $0.id == "call" })
        #expect(call.kind == .skipped && call.chosen)
    }

    @Test("An \"at\" date-time that has passed is a past one-shot too, not a refusal of the whole file")
    func pastAtIsAPastOneShot() throws {
        let text = #"[{"id": "old", "title": "Old", "at": "2020-01-01T10:00:00Z"}, {"id": "new", "title": "New", "in": "5m"}]"#
        let (reminders, adjustments, _) = try read(Data(text.utf8), now: made)
        #expect(reminders.map(\.id) == ["new"])
        #expect(adjustments.map(\.kind) == [.skipped])
        #expect(adjustments.first?.index == 0)
    }

    @Test("The object form streams: a bad reminder late in it comes after the chunks before it")
    func objectFormStreams() throws {
        // Read in blocks of 64 KiB: 3,000 reminders take three.
        var items = (0..<3_000).map { #"{"id": "r\#($0)", "title": "T \#($0)", "in": "5m"}"# }
        items[2_420] = #"{"id": "bad", "title": "B", "in": "never"}"#
        let text = #"{"runner": {"nested": ["]", "}", {"a": 1}]}, "reminders": ["# + items.joined(separator: ",\n") + "]}"
        try withTemporaryFile(Data(text.utf8)) { handle in
            let reader = ReminderImport.Reader(handle, source: "r.json", now: made, chunkSize: 1_000)
            var read = 0
            let error = try #require(throws: ChimeError.self) {
                while let chunk = try reader.next() { read += chunk.count }
            }
            #expect(read >= 1_000 && read < 2_420)
            #expect(error.message.contains("reminder 2421 ('bad')"), "\(error.message)")
        }
    }

    @Test("The object form with \"runner\" after the array, and white space anywhere, reads as the bare array")
    func objectFormAsArray() throws {
        let items = (0..<3_000).map { #"{"id": "r\#($0)", "title": "T \#($0)", "in": "5m"}"# }.joined(separator: ",")
        let bare = try read(Data(("[" + items + "]").utf8), now: made)
        let wrapped = try read(Data(("\u{FEFF}\n { \"reminders\" :\n[" + items + "] , \"runner\" : true }\n").utf8), now: made)
        #expect(wrapped.reminders == bare.reminders)
        #expect(wrapped.reminders.count == 3_000)
        #expect(wrapped.chunks > 1)
    }

    @Test(
        "The object form's keys: unknown, given twice or missing, each refused in one line naming it and where",
        arguments: [
            (#"{"reminders": [], "reminders": []}"#, #"the key "reminders" is given twice (at line 1, column 19 (byte 18))"#),
            (#"{"runner": true, "runner": false, "reminders": []}"#, #"the key "runner" is given twice"#),
            (#"{"remindrs": []}"#, #"unknown key "remindrs" at line 1, column 2"#),
            (#"{"runner": true}"#, #"missing "reminders""#),
            (#"{}"#, #"missing "reminders""#),
            (#"{"reminders": {}}"#, "not valid JSON at line 1, column 15"),
            (#"{"reminders": [] "runner": true}"#, "not valid JSON at line 1, column 18"),
            (#"{"reminders": []} x"#, "not valid JSON at line 1, column 19"),
        ]
    )
    func objectFormKeys(text: String, message: String) throws {
        let error = try #require(throws: ChimeError.self) { try read(Data(text.utf8), now: made) }
        #expect(error.code == .usage)
        #expect(error.message.contains(message), "\(error.message)")
    }

    @Test(
        "A key given twice in a reminder is refused, naming the key and its line (Foundation would take the first silently)",
        arguments: [
            (
                "[{\"title\": \"a\", \"in\": \"5m\",\n  \"title\": \"b\"}]",
                #"reminder 1: the key "title" is given twice (at line 2, column 3"#
            ),
            (
                #"[{"title": "a", "in": "5m"}, {"in": "5m", "t\u0069tle": "x", "title": "y"}]"#,
                #"reminder 2: the key "title" is given twice"#
            ),
            (#"[{"title": "a", "in": "5m", "in": "10m"}]"#, #"reminder 1: the key "in" is given twice"#),
        ]
    )
    func repeatedKeyInAReminder(text: String, message: String) throws {
        let error = try #require(throws: ChimeError.self) { try read(Data(text.utf8), now: made) }
        #expect(error.message.contains(message), "\(error.message)")
        let whole = try #require(throws: ChimeError.self) {
            try ReminderImport.reminders(from: Data(text.utf8), source: "r.json", now: made)
        }
        #expect(whole.message.contains("is given twice"), "\(whole.message)")
    }

    @Test("A reminder padded past the element bound is refused as it grows, naming it and where it starts")
    func elementBound() throws {
        let text = #"[{"title": "ok", "in": "5m"}, {"title": "x","# + String(repeating: " ", count: 5_000) + #""in": "5m"}]"#
        let error = try #require(throws: ChimeError.self) { try read(Data(text.utf8), now: made, maxElementBytes: 4_096) }
        #expect(error.message.contains("r.json: reminder 2 (at line 1, column 31 (byte 30)) is longer than 4 KiB"), "\(error.message)")
        // The same padding between reminders is only white space, never held.
        let spaced = "[" + String(repeating: " ", count: 50_000) + #"{"title": "ok", "in": "5m"}]"#
        #expect(try read(Data(spaced.utf8), now: made, maxElementBytes: 4_096).reminders.count == 1)
    }

    @Test("A text longer than the document bound is refused, naming the bound")
    func documentBound() throws {
        let items = (0..<200).map { #"{"title": "T \#($0)", "in": "5m"}"# }.joined(separator: ",")
        let error = try #require(throws: ChimeError.self) {
            try read(Data(("[" + items + "]").utf8), now: made, maxDocumentBytes: 4_096)
        }
        #expect(error.message.contains("r.json is longer than 4 KiB"), "\(error.message)")
    }

    @Test("What starts with neither [ nor { is refused at its first byte: /dev/zero ends at once", .timeLimit(.minutes(1)))
    func endlessNonJSONEndsAtOnce() throws {
        let zero = try FileHandle(forReadingFrom: URL(fileURLWithPath: "/dev/zero"))
        defer { try? zero.close() }
        let reader = ReminderImport.Reader(zero, source: "standard input", now: made)
        let error = try #require(throws: ChimeError.self) { try reader.next() }
        #expect(error.message.contains("at line 1, column 1 (byte 0): unexpected byte 0x00"), "\(error.message)")
    }

    @Test("The splitter's object form, fed a byte at a time, hands over what one piece does")
    func splitterBytewise() throws {
        let text = #" {"runner": "a\"]}", "reminders": [ {"a": "}"}, 5, "x" , [1, [2]] ], "runner2": 1}"#
        func split(_ pieces: [[UInt8]]) throws -> [String] {
            var splitter = JSONArraySplitter(wrapper: .init(key: "reminders", others: ["runner", "runner2"]))
            var out: [String] = []
            for piece in pieces { try splitter.feed(piece) { out.append(String(decoding: $0.bytes, as: UTF8.self)) } }
            try splitter.finish()
            return out
        }
        let bytes = Array(text.utf8)
        let whole = try split([bytes])
        #expect(whole == [#"{"a": "}"}"#, "5", #""x""#, "[1, [2]]"])
        #expect(try split(bytes.map { [$0] }) == whole)
    }
}

extension TimeParsing {
    /// The next occurrence of `every RULE` after `date`, for building a listing by hand.
    fileprivate static func recurrenceNext(_ rule: String, after date: Date) -> Date {
        let words = rule.replacingOccurrences(of: " (UTC)", with: "")
        let trigger = try! TimeParsing.recurrence([words], now: date, zone: try! ZoneRule.parse("UTC"))
        return trigger.nextOccurrence(after: date, systemZone: .current)!
    }
}

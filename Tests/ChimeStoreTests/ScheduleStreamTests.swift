import ChimeCore
import ChimeStore
import Foundation
import Testing

/// `scheduleStream`: chunks in one transaction, all or none; and a store made for a write
/// that failed removed again (`discardIfUnused`).
struct ScheduleStreamTests {
    struct Bad: Error {}

    func chunk(_ range: Range<Int>) -> [NewReminder] { range.map { Fixture.once("s\($0)", at: 3_600) } }

    @Test("Chunks are scheduled in one transaction: a failure in a later chunk leaves nothing of the earlier ones")
    func allOrNone() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try ReminderStore(path: directory.file("chime.sqlite"), schemas: [])
        try store.schedule(Fixture.once("keep", at: 60), now: Fixture.t0, systemZone: Fixture.utc)

        let scheduled = try store.scheduleStream(
            now: Fixture.t0,
            systemZone: Fixture.utc,
            name: { "r\($0)" },
            produce: { deliver in
                try deliver(chunk(0..<1_000))
                try deliver(chunk(1_000..<1_500))
            }
        )
        #expect(scheduled.ids == (0..<1_500).map { "s\($0)" })
        #expect(try store.pendingCount() == 1_501)

        // A bad reminder in the second chunk: named by its place in the stream, nothing stored.
        let error = try #require(throws: ChimeError.self) {
            try store.scheduleStream(
                now: Fixture.t0,
                systemZone: Fixture.utc,
                name: { "r\($0)" },
                produce: { deliver in
                    try deliver(chunk(2_000..<3_000))
                    try deliver([Fixture.once("late", at: 1_000)] + [Fixture.once("past", at: -5)])
                }
            )
        }
        #expect(error.message.hasPrefix("r1001: "), "\(error.message)")
        #expect(try store.pendingCount() == 1_501)

        // A failure of the producer after a chunk (a store error, as every failure in the
        // store's write): nothing stored either.
        #expect(throws: ChimeError.self) {
            try store.scheduleStream(
                now: Fixture.t0,
                systemZone: Fixture.utc,
                name: { "r\($0)" },
                produce: { deliver in
                    try deliver(chunk(3_000..<4_000))
                    throw Bad()
                }
            )
        }
        #expect(try store.pendingCount() == 1_501)
    }

    @Test("An id an earlier reminder of the stream has is refused, replace or not, naming both")
    func repeatedIdInStream() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try ReminderStore(path: directory.file("chime.sqlite"), schemas: [])
        // A pending reminder from before: the stream may replace it once.
        try store.schedule(Fixture.once("s7", at: 60), now: Fixture.t0, systemZone: Fixture.utc)
        for replace in [true, false] {
            let error = try #require(throws: ChimeError.self) {
                try store.scheduleStream(
                    replace: replace,
                    now: Fixture.t0,
                    systemZone: Fixture.utc,
                    name: { "r\($0 + 1)" },
                    produce: { deliver in
                        try deliver(chunk(0..<1_000).filter { replace || $0.id != "s7" })
                        try deliver(chunk(1_000..<1_010) + [Fixture.once("s5", at: 7_200)])
                    }
                )
            }
            #expect(error.code == .usage)
            // s5 is the 6th either way; the repeat the 1,011th, or the 1,010th without s7.
            let at = replace ? 1_011 : 1_010
            #expect(error.message == "r\(at): the id 's5' is also reminder 6's: give each reminder its own id", "\(error.message)")
            #expect(try store.pendingCount() == 1)
        }
        let kept = try store.scheduleStream(
            now: Fixture.t0,
            systemZone: Fixture.utc,
            keepIds: false,
            name: { "r\($0)" },
            produce: { deliver in
                try deliver(chunk(0..<10))
            }
        )
        #expect(kept.count == 10 && kept.ids.isEmpty && kept.replaced == 1)
    }

    @Test("A store this process made is removed when it holds nothing, with the directory made for it")
    func discardsWhatItMade() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("new/chime.sqlite")
        let store = try ReminderStore(path: path, schemas: [], createDirectory: true)
        #expect(FileManager.default.fileExists(atPath: path))
        store.discardIfUnused()
        for file in [path, path + "-wal", path + "-shm", directory.file("new")] {
            #expect(!FileManager.default.fileExists(atPath: file), "\(file)")
        }
    }

    @Test("A store that was there, or that holds a row, is kept")
    func keepsWhatItDidNotMakeOrWhatHoldsRows() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        // Holds a row.
        let path = directory.file("chime.sqlite")
        let made = try ReminderStore(path: path, schemas: [])
        try made.schedule(Fixture.once("keep", at: 60), now: Fixture.t0, systemZone: Fixture.utc)
        made.discardIfUnused()
        #expect(FileManager.default.fileExists(atPath: path))

        // Was there (empty of rows) before this store opened it.
        let other = directory.file("other.sqlite")
        try ReminderStore(path: other, schemas: []).schedule(Fixture.once("x", at: 60), now: Fixture.t0, systemZone: Fixture.utc)
        let reopened = try ReminderStore(path: other, schemas: [])
        _ = try reopened.cancel(id: "x", now: Fixture.t0)
        reopened.discardIfUnused()
        #expect(FileManager.default.fileExists(atPath: other))
        #expect(try ReminderStore(path: other, schemas: []).pendingCount() == 0)
    }
}

extension ScheduleStreamTests {
    @Test("An imported app's reminder keeps its app id and its own buttons; a bad app id stores nothing")
    func appIDAndActionsAreStored() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try ReminderStore(path: directory.file("chime.sqlite"), schemas: [])
        var notes = Fixture.once("notes", at: 3_600)
        notes.appID = "org.example.Notes"
        notes.presentation.actions = [Note.Action(key: "open", label: "Open")]
        _ = try store.scheduleStream(now: Fixture.t0, systemZone: Fixture.utc, name: { "r\($0)" }, produce: { try $0([notes]) })
        let stored = try store.reminder(id: "notes")
        #expect(stored.appID == "org.example.Notes")
        #expect(stored.presentation.actions == [Note.Action(key: "open", label: "Open")])
        #expect(try store.pendingAppIDs() == ["org.example.Notes"])

        var bad = Fixture.once("bad", at: 3_600)
        bad.appID = "notes"
        let error = try #require(throws: ChimeError.self) {
            try store.scheduleStream(now: Fixture.t0, systemZone: Fixture.utc, name: { "r\($0)" }, produce: { try $0([bad]) })
        }
        #expect(error.message.contains("invalid app-id 'notes'"), "\(error.message)")
        #expect(try store.pendingCount() == 1)
    }
}

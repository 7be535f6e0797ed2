import ChimeCore
import ChimePostgres
import ChimeStore
import Foundation
import Testing

/// One suite, two stores: the reminder side of the store (``ReminderScheduling``)
/// behaves the same on the embedded SQLite store (a real file) and on PostgreSQL (a database of
/// its own on the test server). Times are relative to each store's own clock.
@Suite("The store's behaviour, on SQLite and on PostgreSQL")
struct StoreBehaviourTests {
    enum Engine: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case sqlite, postgresql
        var testDescription: String { rawValue }
    }

    static let utc = TimeZone(identifier: "UTC")!

    /// Runs `body` with a new, empty store of `engine`.
    func withStore(_ engine: Engine, _ body: @Sendable (any ReminderScheduling) async throws -> Void) async throws {
        switch engine {
        case .sqlite:
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("chime-behaviour-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            // A clock of the test's own: a fixed instant, whatever the host's says.
            let now = Date(timeIntervalSince1970: 1_795_400_000)
            let store = try ReminderStore(path: directory.appendingPathComponent("chime.sqlite").path, schemas: [])
            try await body(SQLiteReminders(store: store, clock: { now }))
        case .postgresql:
            try await withFreshDatabase { url in
                try await PostgresStore.withStore(url) { store in try await body(store) }
            }
        }
    }

    @Test("Scheduled reminders come back as they went in, soonest first", arguments: Engine.allCases)
    func scheduleAndList(_ engine: Engine) async throws {
        try await withStore(engine) { store in
            let now = try await store.now()
            let later = try await store.schedule(
                NewReminder(id: "later", title: "Later", body: "b", trigger: .once(now.addingTimeInterval(3_600))),
                replace: true,
                systemZone: Self.utc
            )
            #expect(!later.replaced)
            #expect(later.reminder.nextDue.map { abs($0.timeIntervalSince(now) - 3_600) < 0.001 } == true)
            let rule = Trigger.weekly(
                times: [LocalTime(hour: 8, minute: 0)!],
                days: .weekdays,
                zone: .fixed("Europe/Berlin")
            )
            _ = try await store.schedule(NewReminder(id: "standup", title: "Stand-up", trigger: rule), replace: true, systemZone: Self.utc)
            _ = try await store.schedule(
                NewReminder(id: "soon", title: "Soon", trigger: .once(now.addingTimeInterval(60))),
                replace: true,
                systemZone: Self.utc
            )
            let pending = try await store.pending(limit: nil)
            let dues = pending.compactMap(\.nextDue)
            #expect(dues == dues.sorted(), "soonest first")
            #expect(Set(pending.map(\.id)) == ["later", "standup", "soon"])
            #expect(pending.first?.id == "soon")
            let standup = try await store.reminder(id: "standup")
            #expect(standup.trigger == rule && standup.title == "Stand-up")
            #expect(try await store.pending(limit: 1).map(\.id) == ["soon"])
            // A generated id: pending under it, and different every time
            let a = try await store.schedule(
                NewReminder(title: "A", trigger: .once(now.addingTimeInterval(90))),
                replace: true,
                systemZone: Self.utc
            )
            let b = try await store.schedule(
                NewReminder(title: "B", trigger: .once(now.addingTimeInterval(90))),
                replace: true,
                systemZone: Self.utc
            )
            #expect(a.reminder.id != b.reminder.id)
            #expect(try await store.reminder(id: a.reminder.id).title == "A")
        }
    }

    @Test("The same id replaces, or with replace off is a conflict that changes nothing", arguments: Engine.allCases)
    func replaceAndConflict(_ engine: Engine) async throws {
        try await withStore(engine) { store in
            let now = try await store.now()
            _ = try await store.schedule(
                NewReminder(id: "tea", title: "Tea", trigger: .once(now.addingTimeInterval(600))),
                replace: true,
                systemZone: Self.utc
            )
            let again = try await store.schedule(
                NewReminder(id: "tea", title: "Green tea", trigger: .once(now.addingTimeInterval(900))),
                replace: true,
                systemZone: Self.utc
            )
            #expect(again.replaced)
            await #expect {
                _ = try await store.schedule(
                    NewReminder(id: "tea", title: "Black tea", trigger: .once(now.addingTimeInterval(60))),
                    replace: false,
                    systemZone: Self.utc
                )
            } throws: { ($0 as? ChimeError)?.code == .conflict }
            let pending = try await store.pending(limit: nil)
            #expect(pending.map(\.title) == ["Green tea"])
        }
    }

    @Test("A time already past would never fire: refused, nothing stored", arguments: Engine.allCases)
    func thePastIsRefused(_ engine: Engine) async throws {
        try await withStore(engine) { store in
            let now = try await store.now()
            await #expect {
                _ = try await store.schedule(
                    NewReminder(id: "late", title: "Late", trigger: .once(now.addingTimeInterval(-1))),
                    replace: true,
                    systemZone: Self.utc
                )
            } throws: { ($0 as? ChimeError)?.code == .usage }
            #expect(try await store.pending(limit: nil).isEmpty)
        }
    }

    @Test("Cancel is all or none, and a second cancel says what became of the id", arguments: Engine.allCases)
    func cancelAllOrNone(_ engine: Engine) async throws {
        try await withStore(engine) { store in
            let now = try await store.now()
            for id in ["a", "b"] {
                _ = try await store.schedule(
                    NewReminder(id: id, title: id.uppercased(), trigger: .once(now.addingTimeInterval(600))),
                    replace: true,
                    systemZone: Self.utc
                )
            }
            var refusal: ChimeError?
            do { _ = try await store.cancel(ids: ["a", "nosuch"]) } catch let error as ChimeError { refusal = error }
            #expect(refusal?.code == .notFound)
            #expect(
                refusal?.message == "no pending reminder has the id 'nosuch': see 'chime list' for pending reminders",
                "\(String(describing: refusal))"
            )
            #expect(try await store.pending(limit: nil).map(\.id) == ["a", "b"], "nothing was cancelled")

            let cancelled = try await store.cancel(ids: ["b", "a"])
            #expect(cancelled.map(\.id) == ["b", "a"])
            #expect(try await store.pending(limit: nil).isEmpty)
            var twice: ChimeError?
            do { _ = try await store.cancel(ids: ["a"]) } catch let error as ChimeError { twice = error }
            #expect(twice?.code == .notFound)
            #expect(twice?.message == "no pending reminder has the id 'a': it was cancelled", "\(String(describing: twice))")
            var lookup: ChimeError?
            do { _ = try await store.reminder(id: "b") } catch let error as ChimeError { lookup = error }
            #expect(lookup?.message == twice?.message.replacingOccurrences(of: "'a'", with: "'b'"))
        }
    }

    @Test("Bad ids are refused before the store is asked", arguments: Engine.allCases)
    func badIDs(_ engine: Engine) async throws {
        try await withStore(engine) { store in
            for bad in ["", "has space", "a/b"] {
                await #expect {
                    _ = try await store.cancel(ids: [bad])
                } throws: { ($0 as? ChimeError)?.code == .usage }
            }
            await #expect {
                _ = try await store.cancel(ids: ["x", "x"])
            } throws: { ($0 as? ChimeError)?.code == .usage }
        }
    }
}

import ChimeCore
import ChimeStore
import Foundation
import GRDB
import Testing

/// The typed API through which a family (ChimeDoses) reads its alerts' reminders and ledger
/// rows by kind and id, in its own transaction.
struct FamilyAlertTests {
    /// A dose alert (kind "dose") `id` due `seconds` after ``Fixture/t0``.
    static func dose(_ id: String, at seconds: TimeInterval) -> NewReminder {
        NewReminder(id: id, title: "Medication Reminder", trigger: .once(Fixture.at(seconds)), kind: "dose")
    }

    /// A family of kind "dose" that asks for its reminders to be indexed by id, as ChimeDoses does.
    static let doseAlerts = StoreSchema(
        owner: "dose alerts",
        migrations: [.init("v4: dose alerts", indexingRemindersOfKind: "dose") { _ in }]
    )

    /// A store in a fresh directory, removed when the test ends.
    struct Given {
        let directory: TemporaryDirectory
        let store: ReminderStore

        init() throws {
            directory = try TemporaryDirectory()
            store = try ReminderStore(path: directory.file("chime.sqlite"), schemas: [FamilyAlertTests.doseAlerts])
        }

        /// Schedules `new` at ``Fixture/t0``.
        func schedule(_ new: NewReminder, now seconds: TimeInterval = 0) throws {
            try store.schedule(new, now: Fixture.at(seconds), systemZone: Fixture.utc)
        }

        /// Claims what is due `seconds` after ``Fixture/t0`` and, with `post`, marks it posted then.
        @discardableResult
        func fire(at seconds: TimeInterval, post: Bool) throws -> [PendingOccurrence] {
            let claimed = try store.claimDue(now: Fixture.at(seconds), systemZone: Fixture.utc)
            if post { try store.markPosted(claimed.map(\.key), at: Fixture.at(seconds), noteID: "n") }
            return claimed
        }

        func read<T>(_ body: (Database) throws -> T) throws -> T { try store.read(body) }
    }

    @Test("pendingDue(id:kind:in:): the pending reminder of that kind only")
    func pendingDueByKind() throws {
        let given = try Given()
        defer { given.directory.remove() }
        try given.schedule(Self.dose("med-1-20260105-0910", at: 600))
        try given.schedule(Fixture.once("tea", at: 60))

        try given.read { db throws in
            #expect(try ReminderStore.pendingDue(id: "med-1-20260105-0910", kind: "dose", in: db) == Fixture.at(600))
            // Another kind under the id, an id no reminder has
            #expect(try ReminderStore.pendingDue(id: "med-1-20260105-0910", kind: "plain", in: db) == nil)
            #expect(try ReminderStore.pendingDue(id: "tea", kind: "dose", in: db) == nil)
            #expect(try ReminderStore.pendingDue(id: "tea", kind: "plain", in: db) == Fixture.at(60))
            #expect(try ReminderStore.pendingDue(id: "nothing", kind: "dose", in: db) == nil)
        }
        // Fired: no longer pending
        try given.fire(at: 600, post: false)
        #expect(try given.read { db in try ReminderStore.pendingDue(id: "med-1-20260105-0910", kind: "dose", in: db) } == nil)
    }

    @Test("wasEverShown(id:kind:in:): any reminder that had the id, once one of its alerts is posted")
    func wasEverShownByKind() throws {
        let given = try Given()
        defer { given.directory.remove() }
        let id = "med-1-20260105-0910"
        func shown() throws -> Bool { try given.read { db in try ReminderStore.wasEverShown(id: id, kind: "dose", in: db) } }
        #expect(try !shown())
        try given.schedule(Self.dose(id, at: 60))
        #expect(try !shown())
        // Recorded as due, not posted yet
        let claimed = try given.fire(at: 60, post: false)
        #expect(try !shown())
        try given.store.markPosted(claimed.map(\.key), at: Fixture.at(61), noteID: "n")
        #expect(try shown())
        // A repeat under the same id (a new pending reminder): the first one was shown
        try given.schedule(Self.dose(id, at: 960), now: 120)
        #expect(try shown())
        #expect(try !given.read { db in try ReminderStore.wasEverShown(id: id, kind: "plain", in: db) })
    }

    @Test("isDelivered(id:kind:in:): the latest reminder with the id is done and nothing of it waits to be posted")
    func isDeliveredByKind() throws {
        let given = try Given()
        defer { given.directory.remove() }
        let id = "med-1-20260105-0910"
        func delivered(_ kind: String = "dose") throws -> Bool {
            try given.read { db in try ReminderStore.isDelivered(id: id, kind: kind, in: db) }
        }
        #expect(try !delivered())
        try given.schedule(Self.dose(id, at: 60))
        #expect(try !delivered(), "pending")
        let claimed = try given.fire(at: 60, post: false)
        #expect(try !delivered(), "recorded as due, not posted")
        try given.store.markPosted(claimed.map(\.key), at: Fixture.at(61), noteID: "n")
        #expect(try delivered())
        #expect(try !delivered("plain"))
        // A repeat under the id is the latest: pending, then cancelled
        try given.schedule(Self.dose(id, at: 960), now: 120)
        #expect(try !delivered())
        try given.store.cancel(id: id, now: Fixture.at(130))
        #expect(try !delivered())
    }

    @Test("timesShown(id:kind:since:in:): how many alerts under the id were posted since an instant, and the last")
    func timesShownByKind() throws {
        let given = try Given()
        defer { given.directory.remove() }
        let id = "med-1-20260105-0910"
        func shown(since seconds: TimeInterval?, kind: String = "dose") throws -> (count: Int, last: Date?) {
            try given.read { db throws in
                try ReminderStore.timesShown(id: id, kind: kind, since: seconds.map(Fixture.at), in: db)
            }
        }
        #expect(try shown(since: nil) == (0, nil))
        // Shown at +60, and its repeat at +960
        try given.schedule(Self.dose(id, at: 60))
        try given.fire(at: 60, post: true)
        try given.schedule(Self.dose(id, at: 960), now: 120)
        try given.fire(at: 960, post: true)
        // Recorded as due and not posted: not counted
        try given.schedule(Self.dose(id, at: 1_860), now: 1_000)
        try given.fire(at: 1_860, post: false)

        #expect(try shown(since: nil) == (2, Fixture.at(960)))
        #expect(try shown(since: 60) == (2, Fixture.at(960)))
        #expect(try shown(since: 61) == (1, Fixture.at(960)))
        #expect(try shown(since: 961) == (0, nil))
        #expect(try shown(since: nil, kind: "plain") == (0, nil))
    }

    @Test("The lookups of dose alerts are index searches: reminder_dose, or reminder_pending_id for the pending one")
    func doseLookupsUseTheIndexes() throws {
        let given = try Given()
        defer { given.directory.remove() }
        let id = "med-1-20260105-0910"
        try given.schedule(Self.dose(id, at: 60))
        try given.fire(at: 60, post: true)

        let pending = try plans(given.store) { db in _ = try ReminderStore.pendingDue(id: id, kind: "dose", in: db) }
        let everShown = try plans(given.store) { db in _ = try ReminderStore.wasEverShown(id: id, kind: "dose", in: db) }
        let delivered = try plans(given.store) { db in _ = try ReminderStore.isDelivered(id: id, kind: "dose", in: db) }
        let times = try plans(given.store) { db in _ = try ReminderStore.timesShown(id: id, kind: "dose", since: nil, in: db) }

        #expect(pending.contains { $0.contains("USING INDEX reminder_pending_id") })
        for plan in [everShown, delivered, times] {
            #expect(plan.contains { $0.contains("USING INDEX reminder_dose") }, "\(plan)")
        }
        for plan in [pending, everShown, delivered, times] {
            #expect(!plan.contains { $0.hasPrefix("SCAN") && !$0.hasPrefix("SCAN CONSTANT ROW") }, "\(plan)")
        }
    }

    /// The query plan lines (EXPLAIN QUERY PLAN's details) of every statement `body` runs.
    func plans(_ store: ReminderStore, _ body: (Database) throws -> Void) throws -> [String] {
        final class Statements {
            var sql: [String] = []
        }
        let statements = Statements()
        return try store.read { db in
            db.trace { event in
                if case .statement(let statement) = event { statements.sql.append(statement.expandedSQL) }
            }
            defer { db.trace() }
            try body(db)
            db.trace()  // not the EXPLAINs below
            return try statements.sql.flatMap { sql in
                try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql).map { $0["detail"] as String }
            }
        }
    }
}

import ChimeCore
import ChimeFocus
import Foundation
import Synchronization
import Testing

@testable import ChimeDBus

/// The service on ``ServedStore`` alone, as on a store other than SQLite (PostgreSQL's): times
/// from the store's clock, the families' properties empty when the store has none, a cancel's and
/// an answer's outcome the store's.
struct ServedStoreTests {
    static let now = Date(timeIntervalSince1970: 1_893_492_000)  // 2030-01-01T10:00:00Z

    /// A store that records what it is asked, on a clock seven minutes ahead of the service's host.
    final class ScriptedStore: ServedStore {
        struct Asked: Sendable {
            var scheduled: [NewReminder] = []
            var answers: [(id: String, snoozeFor: TimeInterval?)] = []
        }
        let asked = Mutex(Asked())
        let clockNow = ServedStoreTests.now.addingTimeInterval(7 * 60)
        let cancelOutcome: String

        init(cancelOutcome: String = "cancelled") { self.cancelOutcome = cancelOutcome }

        func now() async throws -> Date { clockNow }
        func schedule(_ new: NewReminder, replace: Bool, systemZone: TimeZone) async throws -> ScheduleResult {
            try schedule(replacing: new, now: clockNow, systemZone: systemZone)
        }
        func cancel(ids: [String]) async throws -> [Reminder] { [] }
        func pending(limit: Int?) async throws -> [Reminder] { [] }
        func reminder(id: String) async throws -> Reminder { try pendingReminder(id: id) }

        func clock() throws(ChimeError) -> Date { clockNow }
        func schedule(replacing new: NewReminder, now: Date, systemZone: TimeZone) throws(ChimeError) -> ScheduleResult {
            asked.withLock { $0.scheduled.append(new) }
            let reminder = Reminder(
                id: new.id ?? "generated",
                title: new.title,
                trigger: new.trigger,
                createdAt: now,
                nextDue: new.trigger.nextOccurrence(after: now, systemZone: systemZone)
            )
            return ScheduleResult(reminder: reminder, replaced: false)
        }
        func cancelAsked(id: String) throws(ChimeError) -> ServedCancel { ServedCancel(cancelled: [id], outcome: cancelOutcome) }
        func eachPendingReminder(_ body: (Reminder) -> Void) throws(ChimeError) {}
        func pendingReminder(id: String) throws(ChimeError) -> Reminder { throw .noPendingReminder(id: id, lastState: nil) }
        func soonest() throws(ChimeError) -> (next: Reminder?, dose: Reminder?) { (nil, nil) }
        func appID(ofReminderWithID id: String) throws(ChimeError) -> String? { nil }
        func pendingAppIDList() throws(ChimeError) -> [String] { [] }
        func answer(id: String, snoozeFor: TimeInterval?, zone: TimeZone) throws(ChimeError) -> AnsweredAlert {
            asked.withLock { $0.answers.append((id, snoozeFor)) }
            let alert = ShownAlert(
                reminderID: id,
                kind: "plain",
                title: "Tea",
                due: clockNow,
                postedAt: clockNow,
                response: nil,
                recurring: false
            )
            return AnsweredAlert(alert: alert, response: snoozeFor == nil ? "done" : "snooze", snoozedUntil: nil)
        }
        func currentQuietState() throws(ChimeError) -> QuietState { QuietState() }
        func openFocusSession(clock: any MachineClock) throws(ChimeError) -> FocusSession? { nil }
    }

    final class Told: Sendable {
        let changed = Mutex<[[String]]>([])
        let answered = Mutex<[String]>([])
    }

    static func service(_ store: ScriptedStore, told: Told) -> RemindersService {
        RemindersService(
            served: store,
            systemZone: { TimeZone(identifier: "UTC")! },
            environment: ["PATH": "/usr/bin:/bin"],
            poke: {},
            changed: { ids in told.changed.withLock { $0.append(ids) } },
            answered: { id, answer in told.answered.withLock { $0.append("\(id) \(answer)") } }
        )
    }

    @Test func inCountsFromTheStoresClock() throws {
        let store = ScriptedStore()
        let told = Told()
        let id = try Self.service(store, told: told).schedule(["title": .string("Tea"), "in": .string("25m"), "id": .string("tea")])
        #expect(id == "tea")
        let scheduled = store.asked.withLock { $0.scheduled }
        #expect(scheduled.map(\.trigger) == [.once(Self.now.addingTimeInterval(32 * 60))])
        #expect(told.changed.withLock { $0 } == [["tea"]])
    }

    @Test func theOutcomeOfACancelIsTheStoresAndItsIdsAreChanged() throws {
        let told = Told()
        let service = Self.service(ScriptedStore(cancelOutcome: "unconfirmed"), told: told)
        #expect(try service.cancel("tea") == "unconfirmed")
        #expect(told.changed.withLock { $0 } == [["tea"]])
    }

    @Test func snoozeAndDoneAnswerThroughTheStoreAndAreSignalled() throws {
        let store = ScriptedStore()
        let told = Told()
        let service = Self.service(store, told: told)
        try service.snooze("tea", duration: "10m")
        try service.done("tea")
        #expect(store.asked.withLock { $0.answers.map(\.snoozeFor) } == [600, nil])
        #expect(told.answered.withLock { $0 } == ["tea snooze", "tea done"])
        // A bad duration is refused before the store is asked.
        #expect(throws: ChimeError.self) { try service.snooze("tea", duration: "soon") }
        #expect(store.asked.withLock { $0.answers.count } == 2)
    }

    @Test func aStoreWithoutFamiliesReadsFocusAsNone() throws {
        let properties = try Self.service(ScriptedStore(), told: Told()).properties()
        #expect(properties["Focus"] == .dictionary(["state": .string("none")]))
        #expect(properties["NextDose"] == .dictionary([:]) && properties["NextDue"] == .int64(0))
        #expect(properties["Quiet"] == .dictionary(["active": .bool(false)]))
    }
}

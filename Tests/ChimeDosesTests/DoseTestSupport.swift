import ChimeCore
import ChimeDoses
import ChimeStore
import ChimeTesting
import Foundation
import GRDB
import Synchronization

/// The system zone a test can change while the book and the scheduler run (travel).
final class ZoneBox: Sendable {
    private let zone: Mutex<TimeZone>

    init(_ zone: TimeZone) { self.zone = Mutex(zone) }

    var current: TimeZone { zone.withLock { $0 } }

    func set(_ zone: TimeZone) { self.zone.withLock { $0 = zone } }
}

/// A dose row as stored, read without settling first (as the runner or the last command left it).
struct StoredDose: Hashable {
    var id: Int64
    var occurrence: String?
    var scheduled: Date
    var zone: String
    var status: String
    var autoMissed: Bool
}

/// A dose book on a real SQLite store in a temporary directory, on a manual wall clock and a
/// system zone the test controls.
struct DoseHarness {
    static let utc = TimeZone(identifier: "UTC")!
    static let berlin = TimeZone(identifier: "Europe/Berlin")!
    static let newYork = TimeZone(identifier: "America/New_York")!

    let directory: URL
    let store: ReminderStore
    let clock: ManualWallClock
    let zone: ZoneBox
    let book: DoseBook

    init(now: Date, zone: TimeZone = DoseHarness.utc) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("chime-doses-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        store = try ReminderStore(path: directory.appendingPathComponent("chime.sqlite").path, schemas: [.doses])
        clock = ManualWallClock(now: now)
        self.zone = ZoneBox(zone)
        book = DoseBook(store: store, clock: clock, systemZone: { [box = self.zone] in box.current })
    }

    func cleanUp() { try? FileManager.default.removeItem(at: directory) }

    /// The system zone as the book and the scheduler read it.
    var systemZone: @Sendable () -> TimeZone { { [box = zone] in box.current } }

    /// A new process on the same store file: its own connection and book (a restart).
    func reopened() throws -> DoseBook {
        DoseBook(store: try ReminderStore(path: store.path, schemas: [.doses]), clock: clock, systemZone: systemZone)
    }

    /// The instant of a local date and time in `zone`.
    static func instant(_ year: Int, _ month: Int, _ day: Int, _ hour: Int, _ minute: Int, in zone: TimeZone = utc) -> Date {
        ZoneMath.resolve(CivilDateTime(year: year, month: month, day: day, hour: hour, minute: minute), in: zone).instant
    }

    /// A medication draft starting today (in the system zone).
    func draft(_ name: String, amount: String = "100", unit: String = "mg") -> MedicationDraft {
        MedicationDraft(name: name, amount: amount, unit: unit, startDay: CivilDay.of(clock.now(), in: zone.current))
    }

    /// Adds a medication taken at `times` ("08:00,20:00") on `days`.
    @discardableResult
    func add(
        _ name: String,
        at times: String,
        days: WeekdaySet = .everyDay,
        zone rule: ZoneRule = .floating,
        change: (inout MedicationDraft) -> Void = { _ in }
    ) throws -> MedicationDetail {
        var medication = draft(name)
        change(&medication)
        return try book.addMedication(medication, schedule: ScheduleDraft(times: try LocalTime.parseList(times), days: days, zone: rule))
    }

    /// Every dose, in time order, as stored.
    func storedDoses() throws -> [StoredDose] {
        try store.read { db in
            try Row.fetchAll(
                db,
                sql: "SELECT id, occurrence, scheduled_us, zone, status, auto_missed FROM dose ORDER BY scheduled_us, id"
            ).map { row in
                StoredDose(
                    id: row[0],
                    occurrence: row[1],
                    scheduled: Date(micros: row[2]),
                    zone: row[3],
                    status: row[4],
                    autoMissed: row[5]
                )
            }
        }
    }

    /// The stored dose whose alert id is `occurrence`.
    func stored(_ occurrence: String) throws -> StoredDose? {
        try storedDoses().first { $0.occurrence == occurrence }
    }

    /// How many reminders (pending or not) ever had the id `id`.
    func reminderRows(id: String) throws -> Int {
        try store.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM reminder WHERE id = ?", arguments: [id]) ?? 0 }
    }

    /// The pending reminders' ids and due times.
    func pendingAlerts() throws -> [(id: String, due: Date?)] {
        try store.pending().map { ($0.id, $0.nextDue) }
    }
}

/// Counts the responses the forwarding task has handled, so that a test can wait for one.
final class HandledResponses: Sendable {
    private struct State {
        var count = 0
        var expected = 0
        var waiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }
    private let state = Mutex(State())

    func signal() {
        let ready: [CheckedContinuation<Void, Never>] = state.withLock { state in
            state.count += 1
            let count = state.count
            let ready = state.waiters.filter { $0.count <= count }.map(\.continuation)
            state.waiters.removeAll { $0.count <= count }
            return ready
        }
        for continuation in ready { continuation.resume() }
    }

    /// One more response is on its way: returns how many there are in all.
    func expectOneMore() -> Int {
        state.withLock { state in
            state.expected += 1
            return state.expected
        }
    }

    /// Returns once `count` responses in all have been handled.
    func wait(for count: Int) async {
        await withCheckedContinuation { continuation in
            let done: Bool = state.withLock { state in
                if state.count >= count { return true }
                state.waiters.append((count, continuation))
                return false
            }
            if done { continuation.resume() }
        }
    }
}

/// The runner's loop for doses: the scheduler with the dose family on the harness's store,
/// clock and zone, posting to a recording notifier. Answers take the shipped path: the
/// scheduler reads the notifier's responses, records them and hands them to the family.
struct DoseLoop {
    let notifier = RecordingNotifier()
    let family: DoseFamily
    let scheduler: Scheduler
    let handled = HandledResponses()
    private let loop: Task<Void, Never>
    private let clock: ManualWallClock

    init(_ h: DoseHarness, book: DoseBook? = nil) {
        let family = DoseFamily(book: book ?? h.book)
        let handled = handled
        let scheduler = Scheduler(
            store: (book ?? h.book).store,
            notifier: notifier,
            clock: h.clock,
            systemZone: h.systemZone,
            log: { event in
                if case .answered = event { handled.signal() }
            },
            families: [family]
        )
        self.family = family
        self.scheduler = scheduler
        clock = h.clock
        loop = Task { [clock = h.clock] in await scheduler.run(waker: clock) }
    }

    /// Invokes an action on the alert `id` and waits until the scheduler has handled it.
    /// Call it while the scheduler is parked.
    func act(_ key: String, on id: String) async {
        let count = handled.expectOneMore()
        notifier.respond(NoteResponse(noteID: id, kind: .action(key)))
        await handled.wait(for: count)
    }

    /// Stops the loop.
    func stop() async {
        clock.shutdown()
        await loop.value
    }

    /// The wake for an alert due at `instant`: the scheduler's look-ahead before it.
    static func wake(_ instant: Date) -> Date { instant.addingTimeInterval(-0.025) }
}

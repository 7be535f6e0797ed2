import ChimeCore
import ChimeStore
import ChimeTesting
import Foundation
import Synchronization

/// A fresh directory under the system's temporary directory; every test removes its own.
struct TemporaryDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("chime-runner-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    var path: String { url.path }

    func file(_ name: String) -> String { url.appendingPathComponent(name).path }

    func remove() { try? FileManager.default.removeItem(at: url) }
}

/// What the scheduler logged.
final class EventLog: Sendable {
    private let events = Mutex<[SchedulerEvent]>([])

    func record(_ event: SchedulerEvent) { events.withLock { $0.append(event) } }

    var all: [SchedulerEvent] { events.withLock { $0 } }
}

/// A scheduler on a real SQLite store in a temporary directory, a recording notifier and a
/// manual clock at ``t0``.
struct Harness {
    static let utc = TimeZone(identifier: "UTC")!
    /// Monday 2026-01-05 09:00:00 UTC.
    static let t0 = Date(timeIntervalSince1970: 1_767_603_600)

    let directory: TemporaryDirectory
    let store: ReminderStore
    let notifier = RecordingNotifier()
    let clock = ManualWallClock(now: Harness.t0)
    let events = EventLog()
    let scheduler: Scheduler

    /// - Parameter schedulerStore: what the scheduler sees of the store (a wrapper that injects
    ///   faults, say); the store itself by default.
    init(
        configuration: Scheduler.Configuration = Scheduler.Configuration(),
        directory: TemporaryDirectory? = nil,
        commands: (any CommandLauncher)? = nil,
        hooks: [String: ReminderCommand] = [:],
        schedulerStore: (ReminderStore) -> any SchedulerStore = { $0 }
    ) throws {
        let directory = try directory ?? TemporaryDirectory()
        self.directory = directory
        store = try ReminderStore(path: directory.file("chime.sqlite"), schemas: [])
        let events = events
        scheduler = Scheduler(
            store: schedulerStore(store),
            notifier: notifier,
            clock: clock,
            configuration: configuration,
            systemZone: { Harness.utc },
            log: { events.record($0) },
            commands: commands,
            hooks: hooks
        )
    }

    func cleanUp() { directory.remove() }

    /// `seconds` after ``t0``.
    func at(_ seconds: TimeInterval) -> Date { Harness.t0.addingTimeInterval(seconds) }

    /// When the scheduler wakes for an occurrence due `seconds` after t0: its look-ahead
    /// earlier, to write the ledger row before the instant (retries wake at their own time).
    func wake(_ seconds: TimeInterval) -> Date {
        let lookahead = scheduler.configuration.lookahead.components
        return at(seconds).addingTimeInterval(-(Double(lookahead.seconds) + Double(lookahead.attoseconds) / 1e18))
    }

    /// Schedules a one-shot reminder `id` due `seconds` after t0, as of the clock's now.
    @discardableResult
    func once(_ id: String, at seconds: TimeInterval) throws -> Reminder {
        try store.schedule(
            NewReminder(id: id, title: "Title \(id)", trigger: .once(at(seconds))),
            replace: false,
            now: clock.now(),
            systemZone: Harness.utc
        ).reminder
    }

    /// Posts of reminder `id` (summary notes count for each id they deliver).
    func postCount(of id: String) -> Int {
        notifier.posts.reduce(0) { count, note in count + note.deliveries.filter { $0.reminderID == id }.count }
    }
}

import ChimeCore
import ChimeFocus
import ChimeStore
import ChimeTesting
import Foundation
import GRDB

/// A focus timer on a real SQLite store in a temporary directory, with the machine's clocks
/// injected (awake time, suspend, reboot) at ``t0``.
struct FocusHarness {
    /// Monday 2026-01-05 09:00:00 UTC.
    static let t0 = Date(timeIntervalSince1970: 1_767_603_600)

    let directory: URL
    let store: ReminderStore
    let wall = ManualWallClock(now: FocusHarness.t0)
    let machine: ManualMachineClock
    let timer: FocusTimer

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("chime-focus-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        store = try ReminderStore(path: directory.appendingPathComponent("chime.sqlite").path, schemas: [.focus])
        machine = ManualMachineClock(wall: wall)
        timer = FocusTimer(store: store, clock: machine)
    }

    func cleanUp() { try? FileManager.default.removeItem(at: directory) }

    /// `seconds` after ``t0``.
    func at(_ seconds: TimeInterval) -> Date { FocusHarness.t0.addingTimeInterval(seconds) }

    /// The state of session `id` as stored, read without settling it first (as the runner
    /// left it).
    func storedState(_ id: Int64) throws -> String? {
        try DatabaseQueue(path: store.path).read { db in
            try String.fetchOne(db, sql: "SELECT state FROM focus_session WHERE id = ?", arguments: [id])
        }
    }

    /// The pending completion alert of `session`, if any.
    func alert(of session: FocusSession) throws -> Reminder? {
        try store.pending().first { $0.id == session.reminderID }
    }
}

import ChimeCore
import ChimeDoses
import ChimeFocus
import ChimeGateway
import ChimeStore
import ChimeTesting
import Foundation

/// The families on one real SQLite store in a temporary directory, with the clocks injected at
/// ``t0``: what the app's view models read and act through.
struct ViewModelHarness {
    /// Monday 2026-01-05 09:00:00 UTC.
    static let t0 = Date(timeIntervalSince1970: 1_767_603_600)
    static let utc = TimeZone(identifier: "UTC")!

    let directory: URL
    let store: ReminderStore
    let wall: ManualWallClock
    let machine: ManualMachineClock
    let timer: FocusTimer
    /// The doses family, its system zone UTC.
    let book: DoseBook

    init(now: Date = ViewModelHarness.t0) throws {
        wall = ManualWallClock(now: now)
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("chime-viewmodel-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        store = try ReminderStore(
            path: directory.appendingPathComponent("chime.sqlite").path,
            schemas: [.focus, .doses, .gateway]
        )
        machine = ManualMachineClock(wall: wall)
        timer = FocusTimer(store: store, clock: machine)
        book = DoseBook(store: store, clock: wall, systemZone: { ViewModelHarness.utc })
    }

    func cleanUp() { try? FileManager.default.removeItem(at: directory) }

    /// `seconds` after ``t0``.
    func at(_ seconds: TimeInterval) -> Date { ViewModelHarness.t0.addingTimeInterval(seconds) }

    /// Completes a `minutes` session now (started, then the clock advanced past its end and settled).
    @discardableResult
    func plantTree(minutes: Int = 25) throws -> FocusSession {
        let session = try timer.start(minutes: minutes)
        wall.advance(by: TimeInterval(minutes * 60))
        guard case .completed(let done) = try timer.settle() else { throw HarnessError.notCompleted(session.id) }
        return done
    }

    /// 2026-01-05 (a Monday) plus `day` days, at `hour:minute` UTC.
    static func instant(day: Int = 0, _ hour: Int, _ minute: Int = 0) -> Date {
        ZoneMath.resolve(CivilDateTime(year: 2026, month: 1, day: 5 + day, hour: hour, minute: minute), in: utc).instant
    }

    /// Adds a medication taken at `times` ("08:00,20:00") every day from today.
    @discardableResult
    func addMedication(_ name: String, at times: String, change: (inout MedicationDraft) -> Void = { _ in }) throws -> MedicationDetail {
        var draft = MedicationDraft(name: name, amount: "100", unit: "mg", startDay: CivilDay.of(wall.now(), in: Self.utc))
        change(&draft)
        return try book.addMedication(draft, schedule: ScheduleDraft(times: try LocalTime.parseList(times)))
    }

    enum HarnessError: Error { case notCompleted(Int64) }
}

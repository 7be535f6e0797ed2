// W1: schedule 100,000 one-shot reminders in one batch: `chime import` of a file of them against
// the same batch through the library, in the same run, and raw INSERTs.
import ArgumentParser
import ChimeCore
import ChimeStore
import Foundation
import GRDB

#if canImport(Glibc)
import Glibc
#endif

struct Schedule: Workload {
    static let configuration = CommandConfiguration(
        abstract: "W1: schedule 100,000 one-shot reminders in one batch (chime import vs the library, raw INSERTs)."
    )

    @OptionGroup var options: BenchOptions

    static func measure(_ options: BenchOptions) async throws {
        try benchSchedule(runs: options.quick ? 1 : 5, count: 100_000)
    }
}

/// The targets for `chime import` of the batch: at most this many times the library's
/// time, and a peak RSS under this many kB.
private let importRatioTarget = 1.3
private let importRSSTargetkB = 40 * 1024

func benchSchedule(runs: Int, count: Int) throws {
    var chimeTimes: [Double] = []
    var wholeTimes: [Double] = []
    var rawTimes: [Double] = []
    var importTimes: [Double] = []
    var importRSS: [Double] = []
    var floors: [Double] = []
    // Rounds alternate the library, raw INSERTs and `chime import`, so that a slow moment of
    // the machine falls on each alike.
    for run in 0..<runs {
        let now = Date()
        let batch = oneShots(count, prefix: "b\(run)-", from: now, within: 60...(30 * 86_400))
        // Chime: validation, trigger expansion, id checks, one transaction.
        let directory = temporaryDirectory("schedule")
        let store = try ReminderStore(path: directory + "/chime.sqlite", schemas: chimeSchemas)
        let start = monotonicSeconds()
        _ = try store.scheduleBatch(batch, now: now, systemZone: .current)
        chimeTimes.append(monotonicSeconds() - start)
        // The same, with what the command also does around the batch: make the store file,
        // and close it (SQLite folds its write-ahead log into the file).
        let wholeDirectory = temporaryDirectory("whole")
        let wholeStart = monotonicSeconds()
        do {
            let store = try ReminderStore(path: wholeDirectory + "/chime.sqlite", schemas: chimeSchemas)
            _ = try store.scheduleBatch(batch, now: now, systemZone: .current)
        }
        wholeTimes.append(monotonicSeconds() - wholeStart)
        try? FileManager.default.removeItem(atPath: wholeDirectory)
        // Baseline: the same rows into the same schema (a fresh store file, migrated, same
        // pragmas), by one prepared INSERT in one transaction: no validation, no id checks.
        let rawDirectory = temporaryDirectory("raw")
        let rawStore = try ReminderStore(path: rawDirectory + "/raw.sqlite", schemas: chimeSchemas)
        let raw = try rawConnection(rawStore.path)
        let rows = batch.map { new -> (String, String, Int64) in
            guard case .once(let at) = new.trigger else { fatalError() }
            return (new.id!, new.title, at.micros)
        }
        let rawStart = monotonicSeconds()
        try raw.write { db in
            let insert = try db.makeStatement(
                sql: """
                    INSERT INTO reminder (id, title, body, kind, trigger_kind, at_us, state, created_us, next_due_us)
                    VALUES (?, ?, '', 'plain', 'once', ?, 'pending', ?, ?)
                    """
            )
            let created = now.micros
            for (id, title, at) in rows { try insert.execute(arguments: [id, title, at, created, at]) }
        }
        rawTimes.append(monotonicSeconds() - rawStart)
        // `chime import` of the same reminders as a JSON file, into a fresh store (made by the
        // command, as a first import does): the whole command (start-up, reading the file,
        // parsing each time, the batch), and its own peak RSS.
        let importDirectory = temporaryDirectory("import")
        let file = importDirectory + "/reminders.json"
        let items = batch.map { new -> [String: String] in
            guard case .once(let at) = new.trigger else { fatalError() }
            return ["id": new.id!, "title": new.title, "at": TimeText.iso(at)]
        }
        try JSONSerialization.data(withJSONObject: items).write(to: URL(fileURLWithPath: file))
        let imported = try runMeasuredAlone(chimeExecutable, ["import", file, "--store", importDirectory + "/chime.sqlite"])
        guard imported.status == 0 else { throw ChimeError(.failure, "chime import failed with status \(imported.status)") }
        importTimes.append(imported.seconds)
        importRSS.append(Double(imported.maxRSSkB))
        floors.append(Double(imported.floorkB))
        try? FileManager.default.removeItem(atPath: directory)
        try? FileManager.default.removeItem(atPath: rawDirectory)
        try? FileManager.default.removeItem(atPath: importDirectory)
    }
    print("\n## Schedule \(count) one-shot reminders in one batch (median of \(runs) alternating runs)")
    let widths = [44, 8, 12, 12, 40]
    print(row(["what", "wall s", "per second", "peak RSS kB", "target"], widths: widths))
    let library = median(chimeTimes)
    let importTime = median(importTimes)
    let rss = median(importRSS)
    func verdict(_ met: Bool, _ text: String, _ share: Double) -> String {
        text + (met ? ": met" : ": OVER (\(fmt(share * 100, 0))%)")
    }
    print(
        row(
            [
                "chime import FILE.json (whole command)", fmt(importTime), fmt(Double(count) / importTime, 0), fmt(rss, 0),
                verdict(
                    importTime <= importRatioTarget * library,
                    "<= \(importRatioTarget) × library",
                    importTime / (importRatioTarget * library)
                ),
            ],
            widths: widths
        )
    )
    print(
        row(
            [
                "", "", "", "",
                verdict(rss < Double(importRSSTargetkB), "peak RSS < \(importRSSTargetkB / 1024) MB", rss / Double(importRSSTargetkB)),
            ],
            widths: widths
        )
    )
    print(row(["chime ReminderStore.scheduleBatch (library)", fmt(library), fmt(Double(count) / library, 0), "-", ""], widths: widths))
    print(
        row(
            [
                "  the same with the store made and closed", fmt(median(wholeTimes)), fmt(Double(count) / median(wholeTimes), 0), "-",
                "(import / this: \(fmt(importTime / median(wholeTimes), 2))x)",
            ],
            widths: widths
        )
    )
    print(
        row(["baseline: raw prepared INSERTs", fmt(median(rawTimes)), fmt(Double(count) / median(rawTimes), 0), "-", ""], widths: widths)
    )
    print(
        "ratio import / library: \(fmt(importTime / library, 2))x; library / raw INSERTs: \(fmt(library / median(rawTimes), 2))x; "
            + "import / raw INSERTs: \(fmt(importTime / median(rawTimes), 2))x"
    )
    print(
        "(peak RSS: the child's own, wait4's ru_maxrss taken by a small helper process that started it; "
            + "a figure below the helper's own \(fmt(median(floors), 0)) kB would read as that)"
    )
}

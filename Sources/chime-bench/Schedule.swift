// W1: schedule 100,000 one-shot reminders in one batch: the library, `chime import`, and raw INSERTs.
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
        abstract: "W1: schedule 100,000 one-shot reminders in one batch (library, chime import, raw INSERTs)."
    )

    @OptionGroup var options: BenchOptions

    static func measure(_ options: BenchOptions) async throws {
        try benchSchedule(runs: options.runs, count: 100_000)
    }
}

func benchSchedule(runs: Int, count: Int) throws {
    print("\n## Schedule \(count) one-shot reminders in one batch (median of \(runs) runs)")
    var chimeTimes: [Double] = []
    var rawTimes: [Double] = []
    var importTimes: [Double] = []
    var importRSS: [Double] = []
    for run in 0..<runs {
        let now = Date()
        let batch = oneShots(count, prefix: "b\(run)-", from: now, within: 60...(30 * 86_400))
        // Chime: validation, trigger expansion, id checks, one transaction.
        let directory = temporaryDirectory("schedule")
        let store = try ReminderStore(path: directory + "/chime.sqlite", schemas: chimeSchemas)
        let start = monotonicSeconds()
        _ = try store.scheduleBatch(batch, now: now, systemZone: .current)
        chimeTimes.append(monotonicSeconds() - start)
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
        // `chime import` of the same reminders as a JSON file, into a fresh store: the whole
        // command (start-up, JSON decoding, parsing each time, the batch), and its peak RSS.
        let importDirectory = temporaryDirectory("import")
        let file = importDirectory + "/reminders.json"
        let items = batch.map { new -> [String: String] in
            guard case .once(let at) = new.trigger else { fatalError() }
            return ["id": new.id!, "title": new.title, "at": TimeText.iso(at)]
        }
        try JSONSerialization.data(withJSONObject: items).write(to: URL(fileURLWithPath: file))
        let imported = try runMeasured(chimeExecutable, ["import", file, "--store", importDirectory + "/chime.sqlite"])
        guard imported.status == 0 else { throw ChimeError(.failure, "chime import failed with status \(imported.status)") }
        importTimes.append(imported.seconds)
        importRSS.append(Double(imported.maxRSSkB))
        try? FileManager.default.removeItem(atPath: directory)
        try? FileManager.default.removeItem(atPath: rawDirectory)
        try? FileManager.default.removeItem(atPath: importDirectory)
    }
    let widths = [44, 10, 14, 14]
    print(row(["what", "wall s", "per second", "peak RSS kB"], widths: widths))
    print(
        row(
            ["chime ReminderStore.scheduleBatch (library)", fmt(median(chimeTimes)), fmt(Double(count) / median(chimeTimes), 0), "-"],
            widths: widths
        )
    )
    print(
        row(
            [
                "chime import FILE.json (whole command)", fmt(median(importTimes)), fmt(Double(count) / median(importTimes), 0),
                fmt(median(importRSS), 0),
            ],
            widths: widths
        )
    )
    print(row(["baseline: raw prepared INSERTs", fmt(median(rawTimes)), fmt(Double(count) / median(rawTimes), 0), "-"], widths: widths))
    print(
        "ratio library / baseline: \(fmt(median(chimeTimes) / median(rawTimes), 2))x; import / baseline: \(fmt(median(importTimes) / median(rawTimes), 2))x; peak RSS of this bench process: \(procStatus(getpid(), "VmHWM") ?? -1) kB"
    )
}

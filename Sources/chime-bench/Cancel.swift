// W2: cancel 50,000 of 100,000 pending reminders by id: in one call, one by one, and raw UPDATEs.
import ArgumentParser
import ChimeCore
import ChimeStore
import Foundation
import GRDB

struct Cancel: Workload {
    static let configuration = CommandConfiguration(
        abstract: "W2: cancel 50,000 of 100,000 by id, in one call and one by one (raw UPDATEs)."
    )

    @OptionGroup var options: BenchOptions

    static func measure(_ options: BenchOptions) async throws {
        try benchCancel(runs: options.runs, scheduled: 100_000, cancelled: 50_000)
    }
}

func benchCancel(runs: Int, scheduled: Int, cancelled: Int) throws {
    print("\n## Cancel \(cancelled) of \(scheduled) pending reminders by id (median of \(runs) runs)")
    var batchTimes: [Double] = []
    var singleTimes: [Double] = []
    var rawTimes: [Double] = []
    for run in 0..<runs {
        let now = Date()
        let reminders = oneShots(scheduled, prefix: "c\(run)-", from: now, within: 3_600...(30 * 86_400))
        let ids = reminders.prefix(cancelled).map { $0.id! }.shuffled()
        func freshStore(_ name: String) throws -> (ReminderStore, String) {
            let directory = temporaryDirectory(name)
            let store = try ReminderStore(path: directory + "/chime.sqlite", schemas: chimeSchemas)
            _ = try store.scheduleBatch(reminders, now: now, systemZone: .current)
            return (store, directory)
        }
        // One call, one transaction.
        let (batchStore, batchDirectory) = try freshStore("cancel-batch")
        var start = monotonicSeconds()
        let all = try batchStore.cancel(ids: ids, now: now)
        batchTimes.append(monotonicSeconds() - start)
        precondition(all.count == cancelled)
        // One call (and one transaction) per id, as `chime cancel ID` or a script would.
        let (singleStore, singleDirectory) = try freshStore("cancel-single")
        start = monotonicSeconds()
        for id in ids { _ = try singleStore.cancel(ids: [id], now: now) }
        singleTimes.append(monotonicSeconds() - start)
        let left = try singleStore.pendingCount()
        precondition(left == scheduled - cancelled)
        // Baseline: the same store, one autocommit UPDATE per id through a prepared statement.
        let (rawStore, rawDirectory) = try freshStore("cancel-raw")
        let raw = try rawConnection(rawStore.path)
        start = monotonicSeconds()
        try raw.writeWithoutTransaction { db in
            let update = try db.makeStatement(
                sql: "UPDATE reminder SET state = 'cancelled', ended_us = ? WHERE id = ? AND state = 'pending'"
            )
            for id in ids { try update.execute(arguments: [now.micros, id]) }
        }
        rawTimes.append(monotonicSeconds() - start)
        for directory in [batchDirectory, singleDirectory, rawDirectory] { try? FileManager.default.removeItem(atPath: directory) }
    }
    let widths = [52, 10, 14]
    print(row(["what", "wall s", "per second"], widths: widths))
    print(
        row(
            ["chime: cancel(ids:) all \(cancelled) in one call", fmt(median(batchTimes)), fmt(Double(cancelled) / median(batchTimes), 0)],
            widths: widths
        )
    )
    print(
        row(
            ["chime: cancel(ids: [id]) one by one", fmt(median(singleTimes)), fmt(Double(cancelled) / median(singleTimes), 0)],
            widths: widths
        )
    )
    print(
        row(
            ["baseline: one autocommit UPDATE per id", fmt(median(rawTimes)), fmt(Double(cancelled) / median(rawTimes), 0)],
            widths: widths
        )
    )
}

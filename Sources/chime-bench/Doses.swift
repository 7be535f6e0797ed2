// doses: `chime adherence` and `chime doses --last 30d` end to end with 20 medications × 4 doses
// a day × 5 years of history in the store (146,000 doses), next to the same process start
// (`chime --version`) and a raw SQLite read of the same rows.
import ArgumentParser
import ChimeCore
import ChimeDoses
import ChimeStore
import Foundation
import GRDB

struct Doses: Workload {
    static let configuration = CommandConfiguration(
        abstract: "`chime adherence` and `chime doses` over 20 medications × 4 doses a day × 5 years (process start, raw)."
    )

    @OptionGroup var options: BenchOptions

    static func measure(_ options: BenchOptions) async throws {
        try benchDoses(runs: options.quick ? 3 : 5, medications: 20, years: options.quick ? 1 : 5)
    }
}

/// Fills a fresh store at `path` with `medications` medications taken at 08:00, 12:00, 16:00 and
/// 20:00 (floating, the system zone) for `years` years up to `now`: one dose row per occurrence,
/// about 85% taken (a few minutes late), 8% missed, 5% skipped, the rest of the last day
/// pending. Returns the number of doses.
func populateDoses(path: String, medications: Int, years: Int, now: Date, zone: TimeZone) throws -> Int {
    _ = try ReminderStore(path: path, schemas: chimeSchemas)  // creates the schema (migration "v4")
    var rng = SeededGenerator(seed: 5)
    let times = [8, 12, 16, 20]
    let today = CivilDay.of(now, in: zone)
    let firstDay = today - years * 365
    var count = 0
    try rawConnection(path).write { db in
        let medication = try db.makeStatement(
            sql: """
                INSERT INTO medication (name, amount, unit, instructions, start_day, created_us) VALUES (?, ?, 'mg', '', ?, ?)
                """
        )
        let schedule = try db.makeStatement(
            sql: """
                INSERT INTO dose_schedule (medication_id, frequency, times, days, created_us, cursor_us)
                VALUES (?, 'daily', '08:00,12:00,16:00,20:00', 127, ?, ?)
                """
        )
        let dose = try db.makeStatement(
            sql: """
                INSERT INTO dose (medication_id, schedule_id, occurrence, scheduled_us, zone, status, taken_us, overdue_us, missed_us,
                                  auto_missed, answered, updated_us)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """
        )
        let created = DoseRange.start(of: firstDay, zone).micros
        var cursors: [Int64: Int64] = [:]
        for index in 1...medications {
            try medication.execute(arguments: ["Medication \(index)", 50 * index, firstDay, created])
            let medicationID = db.lastInsertedRowID
            try schedule.execute(arguments: [medicationID, created, created])
            cursors[db.lastInsertedRowID] = created
        }
        for day in firstDay...today {
            for hour in times {
                let local = CivilDateTime(dayNumber: day, time: LocalTime(hour: hour, minute: 0)!)
                let due = ZoneMath.resolve(local, in: zone).instant
                guard due < now else { continue }
                for scheduleID in Int64(1)...Int64(medications) {
                    let roll = Int.random(in: 0..<100, using: &rng)
                    let recent = now.timeIntervalSince(due) < 4 * 3_600
                    let status = recent ? "pending" : roll < 85 ? "taken" : roll < 93 ? "missed" : "skipped"
                    let taken: Int64? = status == "taken" ? due.micros + Int64.random(in: 0...1_800, using: &rng) * 1_000_000 : nil
                    try dose.execute(arguments: [
                        scheduleID, scheduleID, DoseOccurrenceID.make(scheduleID: scheduleID, local: local), due.micros, zone.identifier,
                        status, taken, due.micros + 1_800_000_000, due.micros + 14_400_000_000, status == "missed", status != "missed",
                        due.micros,
                    ])
                    cursors[scheduleID] = due.micros
                    count += 1
                }
            }
        }
        for (scheduleID, cursor) in cursors {
            try db.execute(sql: "UPDATE dose_schedule SET cursor_us = ? WHERE id = ?", arguments: [cursor, scheduleID])
        }
    }
    return count
}

func benchDoses(runs: Int, medications: Int, years: Int) throws {
    let target = 200.0
    print(
        "\n## Doses: `chime adherence` and `chime doses` with \(medications) medications × 4 doses a day × \(years) years "
            + "in the store, wall ms, median of \(runs) runs"
    )
    print("target: under \(Int(target)) ms each (a command a person waits for)")
    let commands: [(label: String, arguments: [String])] = [
        ("chime adherence (last 30 days)", ["adherence"]),
        ("chime adherence --all (5 years)", ["adherence", "--all"]),
        ("chime adherence --json", ["adherence", "--json"]),
        ("chime doses --last 30d", ["doses", "--last", "30d"]),
        ("chime doses --last 30d --json", ["doses", "--last", "30d", "--json"]),
    ]
    let labels =
        commands.map(\.label) + [
            "library: DoseBook.adherence all (in-process)",
            "baseline: chime --version (process start)",
            "baseline: raw SELECT status, count(*) GROUP BY (GRDB)",
        ]
    let directory = temporaryDirectory("doses")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let storePath = directory + "/chime.sqlite"
    let zone = TimeZone.current
    let doses = try populateDoses(path: storePath, medications: medications, years: years, now: Date(), zone: zone)
    let environment = commandEnvironment(store: storePath, runtime: directory)
    // Once, untimed: the first settle creates today's remaining doses; it warms the page cache.
    _ = try timeChime(["doses", "--last", "1d"], environment: environment)
    let book = DoseBook(store: try ReminderStore(path: storePath, schemas: chimeSchemas))
    let all = try book.adherence(from: nil)
    let counted = try rawConnection(storePath).read { db in
        try Int.fetchOne(db, sql: "SELECT count(*) FROM dose WHERE status != 'pending' AND scheduled_us <= ?", arguments: [Date().micros])
            ?? 0
    }
    guard all.overall.counted == counted else {
        throw ChimeError(.failure, "DoseBook.adherence counts \(all.overall.counted) answered doses; the store has \(counted)")
    }
    var times: [[Double]] = Array(repeating: [], count: labels.count)
    for _ in 0..<runs {
        for (index, command) in commands.enumerated() { times[index].append(try timeChime(command.arguments, environment: environment)) }
        var start = monotonicSeconds()
        let report = try book.adherence(from: nil)
        times[commands.count].append((monotonicSeconds() - start) * 1000)
        precondition(report.overall.counted == counted)
        times[commands.count + 1].append(try timeChime(["--version"], environment: environment))
        let raw = try rawConnection(storePath)
        start = monotonicSeconds()
        let total = try raw.read { db -> Int in
            try Row.fetchAll(db, sql: "SELECT status, count(*) FROM dose GROUP BY status").map { $0[1] as Int }.reduce(0, +)
        }
        times[commands.count + 2].append((monotonicSeconds() - start) * 1000)
        precondition(total >= doses)
    }
    let figures = times.map(median)
    let startup = figures[commands.count + 1]
    let widths = [52, 24]
    print(row(["what", "\(doses) doses"], widths: widths))
    for (index, label) in labels.enumerated() {
        let cell = index < commands.count ? beyondStartup(figures[index], startup: startup, target: target) : fmt(figures[index], 2)
        print(row([label, cell], widths: widths))
    }
    print(beyondStartupLegend(target: target))
}

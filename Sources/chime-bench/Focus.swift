// focus: `chime stats` and `chime forest` (and their --json) end to end with 5,000 and 100,000
// focus sessions in the store, next to the same process start (`chime --version`) and a raw
// SQLite read of the same rows.
import ArgumentParser
import ChimeCore
import ChimeFocus
import ChimeStore
import Foundation
import GRDB

#if canImport(Glibc)
import Glibc
#endif

struct Focus: Workload {
    static let configuration = CommandConfiguration(
        abstract: "`chime stats` and `chime forest` with 5,000 and 100,000 focus sessions (process start, raw read)."
    )

    @OptionGroup var options: BenchOptions

    static func measure(_ options: BenchOptions) async throws {
        try benchFocus(runs: options.quick ? 3 : 5, sizes: options.quick ? [5_000] : [5_000, 100_000])
    }
}

/// Fills a fresh store at `path` with `count` ended focus sessions, newest ending just before
/// `now`: days walked back from today, each with 1 to 6 sessions half an hour apart or (about one
/// day in seven) none, so about count / 3 days with streaks between the gaps; about 85% of the
/// sessions completed (25 minutes of focus), the rest given up part way. Returns how many are
/// completed.
func populateFocus(path: String, count: Int, now: Date) throws -> Int {
    _ = try ReminderStore(path: path, schemas: chimeSchemas)  // creates the schema (migration "v3: focus sessions")
    var rng = SeededGenerator(seed: UInt64(count))
    let length: Int64 = 1_500
    let full = length * 1_000_000
    var completed = 0
    try rawConnection(path).write { db in
        let insert = try db.makeStatement(
            sql: """
                INSERT INTO focus_session (state, length_s, started_us, ended_us, focus_us, paused_us, end_reason)
                VALUES (?, ?, ?, ?, ?, 0, ?)
                """
        )
        var remaining = count
        var day: Int64 = 0
        while remaining > 0 {
            let sessions = Int.random(in: 0..<7, using: &rng) == 0 ? 0 : min(remaining, Int.random(in: 1...6, using: &rng))
            for index in 0..<sessions {
                let ended = now.micros - day * 86_400_000_000 - Int64(index) * 1_800_000_000 - 60_000_000
                if Int.random(in: 0..<100, using: &rng) < 85 {
                    try insert.execute(arguments: ["completed", length, ended - full, ended, full, nil])
                    completed += 1
                } else {
                    let focus = Int64.random(in: 60...(length - 60), using: &rng) * 1_000_000
                    try insert.execute(arguments: ["abandoned", length, ended - focus, ended, focus, "gave-up"])
                }
            }
            remaining -= sessions
            day += 1
        }
    }
    return completed
}

/// Runs `chime ARGUMENTS` once and returns its standard output as JSON; throws when it fails.
func chimeJSON(_ arguments: [String], environment: [String: String], scratch: String) throws -> [String: Any] {
    let output = scratch + "/output-\(UUID().uuidString.prefix(8)).json"
    defer { try? FileManager.default.removeItem(atPath: output) }
    let pid = try spawn(chimeExecutable, arguments, environment: environment, output: output)
    var status: Int32 = 0
    waitpid(pid, &status, 0)
    guard (status >> 8) & 0xff == 0, status & 0x7f == 0 else {
        throw ChimeError(.failure, "chime \(arguments.joined(separator: " ")) failed (wait status \(status))")
    }
    guard let data = FileManager.default.contents(atPath: output),
        let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
    else { throw ChimeError(.failure, "chime \(arguments.joined(separator: " ")) printed no JSON object") }
    return object
}

func benchFocus(runs: Int, sizes: [Int]) throws {
    let target = 200.0
    print(
        "\n## Focus: `chime stats` and `chime forest` with \(sizes.map { "\($0)" }.joined(separator: " and ")) focus sessions in the store "
            + "(~85% completed), wall ms, median of \(runs) runs"
    )
    print("target: under \(Int(target)) ms with 5000 sessions (the seed's); aim: under \(Int(target)) ms with 100000")
    let commands: [(label: String, arguments: [String])] = [
        ("chime stats", ["stats"]),
        ("chime stats --json", ["stats", "--json"]),
        ("chime forest", ["forest"]),
        ("chime forest --json (every tree)", ["forest", "--json"]),
    ]
    let labels =
        commands.map(\.label) + [
            "library: Forest.stats (in-process)",
            "library: Forest.trees() all (in-process)",
            "baseline: chime --version (process start)",
            "baseline: raw SELECT ended_us, focus_us (GRDB)",
        ]
    var figures: [[Double]] = Array(repeating: [], count: labels.count)
    var treeCounts: [Int] = []
    for size in sizes {
        let directory = temporaryDirectory("focus")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let storePath = directory + "/chime.sqlite"
        let completed = try populateFocus(path: storePath, count: size, now: Date())
        treeCounts.append(completed)
        let environment = commandEnvironment(store: storePath, runtime: directory)
        // Once, untimed (it also warms the page cache): the CLI sees every completed row.
        let stats = try chimeJSON(["stats", "--json"], environment: environment, scratch: directory)
        guard let total = stats["total_trees"] as? Int, total == completed else {
            throw ChimeError(
                .failure,
                "chime stats --json reports total_trees \(stats["total_trees"] ?? "nil") with \(completed) completed sessions in the store"
            )
        }
        let forest = try chimeJSON(["forest", "--json"], environment: environment, scratch: directory)
        guard forest["count"] as? Int == completed, (forest["trees"] as? [Any])?.count == completed else {
            throw ChimeError(.failure, "chime forest --json lists \(forest["count"] ?? "nil") trees with \(completed) in the store")
        }
        var times: [[Double]] = Array(repeating: [], count: labels.count)
        let zone = TimeZone.current
        // Interleaved, so that a slow moment of the machine falls on every row alike.
        for _ in 0..<runs {
            for (index, command) in commands.enumerated() {
                times[index].append(try timeChime(command.arguments, environment: environment))
            }
            // The library, on a connection opened outside the timing (as the CLI opens it).
            let store = try ReminderStore(path: storePath, schemas: chimeSchemas)
            var start = monotonicSeconds()
            let (computed, _) = try Forest(store: store).stats(now: Date(), zone: zone)
            times[commands.count].append((monotonicSeconds() - start) * 1000)
            precondition(computed.totalTrees == completed)
            start = monotonicSeconds()
            let trees = try Forest(store: store).trees()
            times[commands.count + 1].append((monotonicSeconds() - start) * 1000)
            precondition(trees.count == completed)
            times[commands.count + 2].append(try timeChime(["--version"], environment: environment))
            // Baseline: the same rows through a plain GRDB connection, stepped to the end.
            let raw = try rawConnection(storePath)
            start = monotonicSeconds()
            let rows = try raw.read { db -> Int in
                let statement = try db.makeStatement(
                    sql: "SELECT ended_us, focus_us FROM focus_session WHERE state='completed' ORDER BY ended_us"
                )
                let cursor = try Row.fetchCursor(statement)
                var count = 0
                var sum: Int64 = 0
                while let row = try cursor.next() {
                    sum &+= row[0] as Int64
                    sum &+= row[1] as Int64
                    count += 1
                }
                precondition(sum != 0 || count == 0)
                return count
            }
            times[commands.count + 3].append((monotonicSeconds() - start) * 1000)
            precondition(rows == completed)
        }
        for index in labels.indices { figures[index].append(median(times[index])) }
    }
    let startup = commands.count + 2
    let widths = [46] + sizes.map { _ in 22 }
    print(row(["what"] + zip(sizes, treeCounts).map { "\($0) (\($1) trees)" }, widths: widths))
    for (index, label) in labels.enumerated() {
        let cells = figures[index].enumerated().map { column, value -> String in
            index < commands.count ? beyondStartup(value, startup: figures[startup][column], target: target) : fmt(value, 2)
        }
        print(row([label] + cells, widths: widths))
    }
    print(beyondStartupLegend(target: target))
}

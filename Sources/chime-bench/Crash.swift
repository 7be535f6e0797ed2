// W4: crash catch-up: `kill -9` of the runner while alerts are due, a restart, and what was shown.
import ArgumentParser
import ChimeCore
import ChimeRunner
import ChimeStore
import Foundation

#if canImport(Glibc)
import Glibc
#endif

struct Crash: Workload {
    static let configuration = CommandConfiguration(
        abstract: "W4: 1,000 due over 5 s, kill -9 of the runner at 1 s, restart at 8 s: nothing lost or doubled."
    )

    @OptionGroup var options: BenchOptions

    static func measure(_ options: BenchOptions) async throws {
        try await benchCrash(runs: options.runs, count: 1_000)
    }
}

/// Starts `chime run --notifier json` on `store` with its standard output appended to `output`
/// (a file, so nothing is lost when it is killed); returns its pid once its socket is bound.
func spawnRunner(store: String, runtime: String, output: String) throws -> pid_t {
    var environment = ProcessInfo.processInfo.environment
    environment["XDG_RUNTIME_DIR"] = runtime
    let pid = try spawn(
        chimeExecutable,
        ["run", "--store", store, "--notifier", "json", "--log-level", "warning"],
        environment: environment,
        output: output
    )
    let socket = RunnerPaths(storePath: store, environment: environment).socket
    let deadline = Date().addingTimeInterval(30)
    while !FileManager.default.fileExists(atPath: socket) && Date() < deadline { usleep(5_000) }
    return pid
}

/// Reminder ids in a runner's JSON stream, one entry per time shown (a summary counts for each).
func shownIDs(in path: String) -> [String] {
    guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [] }
    return text.split(separator: "\n").flatMap { line -> [String] in
        guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return [] }
        return (object["ids"] as? [String]) ?? [(object["id"] as? String)].compactMap { $0 }
    }
}

func sleepUntil(_ date: Date) {
    let wait = date.timeIntervalSinceNow
    if wait > 0 { usleep(useconds_t(wait * 1_000_000)) }
}

func benchCrash(runs: Int, count: Int) async throws {
    print(
        "\n## Crash catch-up: \(count) reminders due over 5 s; kill -9 of the runner at 1 s, restart at 8 s (each of \(runs) runs)"
    )
    let widths = [5, 14, 13, 13, 13, 16, 18]
    print(row(["run", "before crash", "after", "never fired", "fired twice", "ledger posted", "caught up in ms"], widths: widths))
    for run in 0..<runs {
        let directory = temporaryDirectory("crash")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let storePath = directory + "/chime.sqlite"
        let store = try ReminderStore(path: storePath, schemas: chimeSchemas)
        let first = try spawnRunner(store: storePath, runtime: directory, output: directory + "/before.jsonl")
        let now = Date()
        let start = now.addingTimeInterval(0.5)
        let batch = evenOneShots(count, prefix: "w", title: "Crash", from: start, over: 5)
        _ = try store.scheduleBatch(batch, now: now, systemZone: .current)
        RunnerControl.poke(storePath: storePath, environment: ["XDG_RUNTIME_DIR": directory])
        sleepUntil(start.addingTimeInterval(1))
        kill(first, SIGKILL)
        var status: Int32 = 0
        waitpid(first, &status, 0)
        sleepUntil(start.addingTimeInterval(8))
        let restarted = monotonicSeconds()
        let second = try spawnRunner(store: storePath, runtime: directory, output: directory + "/after.jsonl")
        var caughtUp = Double.nan
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            if try store.ledger().filter({ $0.state == "posted" }).count >= count {
                caughtUp = (monotonicSeconds() - restarted) * 1000
                break
            }
            usleep(5_000)
        }
        kill(second, SIGTERM)
        waitpid(second, &status, 0)
        let before = shownIDs(in: directory + "/before.jsonl")
        let after = shownIDs(in: directory + "/after.jsonl")
        var shown: [String: Int] = [:]
        for id in before + after { shown[id, default: 0] += 1 }
        let never = batch.filter { shown[$0.id!] == nil }.count
        let twice = shown.values.filter { $0 > 1 }.count
        let ledger = try store.ledger()
        let posted = ledger.filter { $0.state == "posted" }
        let postedOnce = Set(posted.map(\.reminderID)).count == posted.count
        print(
            row(
                [
                    "\(run + 1)", "\(Set(before).count)", "\(Set(after).count)", "\(never)", "\(twice)",
                    "\(posted.count)\(postedOnce ? "" : " (repeats!)")", fmt(caughtUp, 0),
                ],
                widths: widths
            )
        )
    }
}

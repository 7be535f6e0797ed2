// cli: `chime in 5m x` end to end with the runner up, next to spawning /bin/true and `at`.
import ArgumentParser
import ChimeStore
import Foundation

struct CLI: Workload {
    static let configuration = CommandConfiguration(abstract: "`chime in 5m x` end to end with the runner up (/bin/true, at).")

    @OptionGroup var options: BenchOptions

    static func measure(_ options: BenchOptions) async throws {
        try benchCLI(runs: options.quick ? 5 : 21)
    }
}

func benchCLI(runs: Int) throws {
    print("\n## `chime in 5m x` end to end with the runner up (wall ms, median of \(runs))")
    let directory = temporaryDirectory("cli")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let storePath = directory + "/chime.sqlite"
    _ = try ReminderStore(path: storePath, schemas: chimeSchemas)
    let runner = try startRunner(store: storePath, runtime: directory)
    defer { stop(runner) }
    var environment = ProcessInfo.processInfo.environment
    environment["XDG_RUNTIME_DIR"] = directory
    func time(_ executable: String, _ arguments: [String]) throws -> Double {
        try timeSpawn(executable, arguments, environment: environment)
    }
    let chime = try (0..<runs).map { _ in try time(chimeExecutable, ["in", "5m", "x", "--store", storePath]) }
    let baseline = try (0..<runs).map { _ in try time("/bin/true", []) }
    let widths = [40, 10]
    print(row(["what", "ms"], widths: widths))
    print(row(["chime in 5m x (store write + poke)", fmt(median(chime), 2)], widths: widths))
    print(row(["baseline: spawn /bin/true", fmt(median(baseline), 2)], widths: widths))
    if FileManager.default.isExecutableFile(atPath: "/usr/bin/at") {
        // In at's queue "z", emptied afterwards: the jobs are only for timing.
        let at = try (0..<runs).map { _ in try time("/bin/sh", ["-c", "echo true | at -q z now + 5 minutes"]) }
        _ = try time("/bin/sh", ["-c", "atq -q z | cut -f1 | xargs -r atrm"])
        print(row(["at now + 5 minutes (shell + at)", fmt(median(at), 2)], widths: widths))
        let shell = try (0..<runs).map { _ in try time("/bin/sh", ["-c", "echo true > /dev/null"]) }
        print(row(["baseline for it: the shell alone", fmt(median(shell), 2)], widths: widths))
    } else {
        print("(at is not installed: no `at now + 5 minutes` row)")
    }
}

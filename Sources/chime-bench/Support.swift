import ChimeApp
// What the workloads share: statistics, tables, temporary directories, /proc readers, stores filled
// for a run, and the processes they start (chime and its baselines).
import ChimeCore
import ChimeDoses
import ChimeFocus
import ChimeGateway
import ChimeRunner
import ChimeStore
import Foundation
import GRDB

#if canImport(Glibc)
import Glibc
#endif

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return .nan }
    return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

func percentile(_ values: [Double], _ p: Double) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return .nan }
    let rank = Int((p / 100 * Double(sorted.count - 1)).rounded())
    return sorted[min(max(rank, 0), sorted.count - 1)]
}

func monotonicSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

func temporaryDirectory(_ name: String) -> String {
    let path = NSTemporaryDirectory() + "chime-bench-\(name)-\(getpid())-\(UUID().uuidString.prefix(8))"
    try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

/// Reads `key:` (in kB) from /proc/PID/status.
func procStatus(_ pid: pid_t, _ key: String) -> Int? {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
    for line in text.split(separator: "\n") where line.hasPrefix(key + ":") {
        return Int(
            line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first?.trimmingCharacters(in: .whitespaces) ?? ""
        )
    }
    return nil
}

/// Voluntary + involuntary context switches of each thread of `pid`, by thread id.
func contextSwitches(_ pid: pid_t) -> [String: Int] {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
    var counts: [String: Int] = [:]
    for task in tasks {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/status", encoding: .utf8) else { continue }
        for line in text.split(separator: "\n")
        where line.hasPrefix("voluntary_ctxt_switches") || line.hasPrefix("nonvoluntary_ctxt_switches") {
            counts[task, default: 0] += Int(line.split(separator: "\t").last ?? "0") ?? 0
        }
    }
    return counts
}

/// Context switches between two samples: threads alive at the end, less what they had at the start.
func switchesBetween(_ before: [String: Int], _ after: [String: Int]) -> Int {
    after.reduce(0) { $0 + $1.value - (before[$1.key] ?? 0) }
}

/// CPU time (user + system) of `pid` in seconds, from /proc/PID/stat.
func cpuSeconds(_ pid: pid_t) -> Double {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
        let close = text.lastIndex(of: ")")
    else { return .nan }
    let fields = text[text.index(after: close)...].split(separator: " ")
    let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
    return ((Double(fields[11]) ?? 0) + (Double(fields[12]) ?? 0)) / ticks
}

func row(_ cells: [String], widths: [Int]) -> String {
    zip(cells, widths).map { cell, width in cell.padding(toLength: max(width, cell.count), withPad: " ", startingAt: 0) }.joined(
        separator: "  "
    )
}

func fmt(_ value: Double, _ digits: Int = 3) -> String { String(format: "%.\(digits)f", value) }

let chimeExecutable: String = {
    if let path = ProcessInfo.processInfo.environment["CHIME_EXECUTABLE"] { return path }
    return URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("chime").path
}()

/// `count` one-shot reminders with unique ids, due at random instants in `range` seconds from `now`.
func oneShots(_ count: Int, prefix: String, from now: Date, within range: ClosedRange<Double>) -> [NewReminder] {
    var rng = SystemRandomNumberGenerator()
    return (0..<count).map { index in
        NewReminder(
            id: "\(prefix)\(index)",
            title: "Reminder \(index)",
            trigger: .once(now.addingTimeInterval(Double.random(in: range, using: &rng)))
        )
    }
}

/// `count` instants from `first`, evenly spread over `spread` seconds.
func evenInstants(_ count: Int, from first: Date, over spread: Double) -> [Date] {
    (0..<count).map { first.addingTimeInterval(spread * Double($0) / Double(count)) }
}

/// `count` one-shot reminders `PREFIXn` titled `TITLE n`, due at `evenInstants(count, from: first, over: spread)`.
func evenOneShots(_ count: Int, prefix: String, title: String, from first: Date, over spread: Double) -> [NewReminder] {
    evenInstants(count, from: first, over: spread).enumerated().map { index, due in
        NewReminder(id: "\(prefix)\(index)", title: "\(title) \(index)", trigger: .once(due))
    }
}

/// Fills a store with `count` pending reminders due after an hour, in batches.
func populate(_ store: ReminderStore, count: Int, prefix: String = "p") throws {
    let now = Date()
    var done = 0
    while done < count {
        let size = min(100_000, count - done)
        let batch = (0..<size).map { index in
            NewReminder(
                id: "\(prefix)\(done + index)",
                title: "Pending \(done + index)",
                trigger: .once(now.addingTimeInterval(3_600 + Double(done + index) * 0.01))
            )
        }
        _ = try store.scheduleBatch(batch, now: now, systemZone: .current)
        done += size
    }
}

/// A plain GRDB connection to a store file, with the pragmas Chime's CLI uses: the baselines'
/// way in, with none of Chime's checks.
func rawConnection(_ path: String) throws -> DatabaseQueue {
    var configuration = Configuration()
    configuration.journalMode = .wal
    configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = NORMAL; PRAGMA cache_size = -16384") }
    return try DatabaseQueue(path: path, configuration: configuration)
}

/// Starts `executable` with posix_spawn, its standard output appended to `output` and its
/// errors to /dev/null; returns its pid. (Not Foundation's Process: its waitUntilExit polls
/// its run loop every 50 ms and would swamp what is measured.)
func spawn(_ executable: String, _ arguments: [String], environment: [String: String], output: String = "/dev/null") throws -> pid_t {
    let argv = ([executable] + arguments).map { strdup($0) } + [nil]
    let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer { for pointer in argv + envp { free(pointer) } }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_APPEND, 0o600)
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    var pid = pid_t()
    guard posix_spawn(&pid, executable, &actions, nil, argv, envp) == 0 else { throw ChimeError(.failure, "cannot spawn \(executable)") }
    return pid
}

/// Runs `executable` and waits: wall seconds, exit status and the child's peak RSS (wait4's
/// ru_maxrss, kB).
func runMeasured(
    _ executable: String,
    _ arguments: [String],
    environment: [String: String] = ProcessInfo.processInfo.environment
) throws -> (seconds: Double, status: Int32, maxRSSkB: Int) {
    let start = monotonicSeconds()
    let pid = try spawn(executable, arguments, environment: environment)
    var status: Int32 = 0
    var usage = rusage()
    wait4(pid, &status, 0, &usage)
    return (monotonicSeconds() - start, (status >> 8) & 0xff, usage.ru_maxrss)
}

/// The environment in which chime commands are timed on the store at `store`: no runner (the
/// runtime directory `runtime` has no socket), and a terminal of 120 × 40.
func commandEnvironment(store: String, runtime: String) -> [String: String] {
    var environment = ProcessInfo.processInfo.environment
    environment["CHIME_STORE"] = store
    environment["XDG_RUNTIME_DIR"] = runtime
    environment["COLUMNS"] = "120"
    environment["LINES"] = "40"
    return environment
}

/// Runs `chime ARGUMENTS` and waits; returns the wall time in ms.
/// - Throws: when chime exits with a status other than 0.
func timeChime(_ arguments: [String], environment: [String: String]) throws -> Double {
    let run = try runMeasured(chimeExecutable, arguments, environment: environment)
    guard run.status == 0 else {
        throw ChimeError(.failure, "chime \(arguments.joined(separator: " ")) exited with status \(run.status)")
    }
    return run.seconds * 1000
}

/// A command's wall ms, with what it took beyond the process start (the `chime --version`
/// baseline, `startup` ms) and whether it is over `target` ms: "61.20 (+41.3) OVER".
func beyondStartup(_ value: Double, startup: Double, target: Double) -> String {
    fmt(value, 2) + " (+" + fmt(value - startup, 1) + ")" + (value > target ? " OVER" : "")
}

/// The line under a table of `beyondStartup` cells.
func beyondStartupLegend(target: Double) -> String {
    "(+N: ms beyond the `chime --version` baseline; OVER: above the \(Int(target)) ms target)"
}

/// Runs `executable` and waits; returns the wall time in ms.
func timeSpawn(_ executable: String, _ arguments: [String], environment: [String: String]) throws -> Double {
    try runMeasured(executable, arguments, environment: environment).seconds * 1000
}

/// Starts `chime run --notifier NOTIFIER` on `store` in `environment`, its output discarded;
/// returns at once.
func launchRunner(store: String, notifier: String, environment: [String: String]) throws -> Process {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: chimeExecutable)
    process.arguments = ["run", "--store", store, "--notifier", notifier, "--log-level", "warning"]
    process.environment = environment
    process.standardOutput = FileHandle.nullDevice
    try process.run()
    return process
}

/// Starts `chime run` on `store` (in `base`, else this process's environment), waits until it
/// is up, and returns it.
func startRunner(store: String, runtime: String, base: [String: String]? = nil) throws -> Process {
    var environment = base ?? ProcessInfo.processInfo.environment
    environment["XDG_RUNTIME_DIR"] = runtime
    let process = try launchRunner(store: store, notifier: "json", environment: environment)
    let paths = RunnerPaths(storePath: store, environment: environment)
    let deadline = Date().addingTimeInterval(60)
    while !FileManager.default.fileExists(atPath: paths.socket) && Date() < deadline { usleep(10_000) }
    usleep(500_000)  // let it finish its first pass and park
    return process
}

func stop(_ process: Process) {
    kill(process.processIdentifier, SIGTERM)
    process.waitUntilExit()
}

/// The families' tables, as `chime` opens every store (the composition root's list).
let chimeSchemas: [StoreSchema] = ChimeApp.schemas

/// ``runMeasured(_:_:environment:)`` from a small process: `chime-bench child-peak` starts
/// `executable`, waits for it and prints its figures. Its peak RSS is then its own.
///
/// Why: a child started by this process reports, in wait4's ru_maxrss, at least this process's
/// own peak RSS (hundreds of MB after a 100,000-reminder batch): posix_spawn's child runs in
/// the parent's memory until it execs, and Linux keeps the larger of the memory it leaves
/// (`exec_mmap` records its high-water mark in the child's `signal->maxrss`) and its own. The
/// helper's child inherits the helper's small mark instead, reported as `floorkB`.
func runMeasuredAlone(
    _ executable: String,
    _ arguments: [String],
    environment: [String: String] = ProcessInfo.processInfo.environment
) throws -> (seconds: Double, status: Int32, maxRSSkB: Int, floorkB: Int) {
    let output = temporaryDirectory("child-peak") + "/figures"
    defer { try? FileManager.default.removeItem(atPath: (output as NSString).deletingLastPathComponent) }
    let bench = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    let helper = try spawn(bench, ["child-peak", executable] + arguments, environment: environment, output: output)
    var status: Int32 = 0
    waitpid(helper, &status, 0)
    let fields = ((try? String(contentsOfFile: output, encoding: .utf8)) ?? "").split(separator: " ")
    guard (status >> 8) & 0xff == 0, fields.count == 4, let seconds = Double(fields[0]), let code = Int32(fields[1]),
        let rss = Int(fields[2]), let floor = Int(fields[3].trimmingCharacters(in: .whitespacesAndNewlines))
    else { throw ChimeError(.failure, "chime-bench child-peak \(executable) failed") }
    return (seconds, code, rss, floor)
}

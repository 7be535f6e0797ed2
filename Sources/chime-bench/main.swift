// chime-bench: Chime's figures, printed as tables of medians over several runs, each with a baseline measured in the
// same run. Build in release: `swift run -c release chime-bench [all|schedule|cancel|lateness|crash|idle|cli|desktop|focus|doses] [--quick]`.
// W1 schedule, W2 cancel, W3 lateness, W4 crash catch-up, W5 idle; cli; desktop; focus (FocusBench.swift);
// doses (DoseBench.swift).
import ChimeCore
import ChimeLibnotify
import ChimeRunner
import ChimeStore
import Foundation
import GRDB
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

// MARK: - Helpers

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

// MARK: - W1: schedule 100,000 in one batch

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
        let store = try ReminderStore(path: directory + "/chime.sqlite")
        let start = monotonicSeconds()
        _ = try store.scheduleBatch(batch, now: now, systemZone: .current)
        chimeTimes.append(monotonicSeconds() - start)
        // Baseline: the same rows into the same schema (a fresh store file, migrated, same
        // pragmas), by one prepared INSERT in one transaction: no validation, no id checks.
        let rawDirectory = temporaryDirectory("raw")
        let rawStore = try ReminderStore(path: rawDirectory + "/raw.sqlite")
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

// MARK: - W2: cancel 50,000 by id

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
            let store = try ReminderStore(path: directory + "/chime.sqlite")
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

// MARK: - Firing lateness

/// A notifier that notes how late each call is: time of the call − the occurrence's due time.
struct LatenessNotifier: Notifier {
    final class Box: Sendable { let values = Mutex<[Double]>([]) }
    let box = Box()
    let expected: Int
    let done: AsyncStream<Void>.Continuation
    let stream: AsyncStream<NoteResponse> = AsyncStream { $0.finish() }

    func post(_ note: Note) async throws -> PostedNote {
        let called = Date()
        let count = box.values.withLock { values in
            for delivery in note.deliveries { values.append(called.timeIntervalSince(delivery.due) * 1000) }
            return values.count
        }
        if count >= expected { done.yield() }
        return PostedNote(id: note.id)
    }

    func withdraw(_ id: String) async throws {}
    var responses: AsyncStream<NoteResponse> { stream }
}

func measureLateness(count: Int, spread: Double, others: Int) async throws -> [Double] {
    let directory = temporaryDirectory("lateness")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    // The others are scheduled as the CLI would, through a connection of its own.
    if others > 0 { try populate(try ReminderStore(path: directory + "/chime.sqlite"), count: others) }
    let store = try ReminderStore(path: directory + "/chime.sqlite", deferCheckpoints: true)
    let now = Date()
    let firstDue = now.addingTimeInterval(1.0)
    let batch = (0..<count).map { index in
        NewReminder(
            id: "l\(index)",
            title: "Lateness \(index)",
            trigger: .once(firstDue.addingTimeInterval(spread * Double(index) / Double(count)))
        )
    }
    _ = try store.scheduleBatch(batch, now: now, systemZone: .current)
    let (doneStream, done) = AsyncStream.makeStream(of: Void.self)
    let notifier = LatenessNotifier(expected: count, done: done)
    let waker = try TimerWaker(socketFD: nil)
    let scheduler = Scheduler(store: store, notifier: notifier)
    // As in `chime run`: the scheduler on Chime's own thread.
    let task = Task(executorPreference: RunnerThread.shared) { await scheduler.run(waker: waker) }
    for await _ in doneStream { break }
    waker.shutdown()
    await task.value
    return notifier.box.values.withLock { $0 }
}

/// The same deadlines, slept to by one thread with clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME).
func baselineLateness(count: Int, spread: Double) -> [Double] {
    let firstDue = Date().addingTimeInterval(1.0)
    let deadlines = (0..<count).map { firstDue.addingTimeInterval(spread * Double($0) / Double(count)) }
    let result = Mutex<[Double]>([])
    let finished = DispatchSemaphore(value: 0)
    let thread = Thread {
        var values: [Double] = []
        for deadline in deadlines {
            let seconds = deadline.timeIntervalSince1970
            var ts = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - floor(seconds)) * 1e9))
            while clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &ts, nil) == EINTR {}
            values.append(Date().timeIntervalSince(deadline) * 1000)
        }
        result.withLock { $0 = values }
        finished.signal()
    }
    thread.start()
    finished.wait()
    return result.withLock { $0 }
}

func benchLateness(runs: Int, count: Int, spread: Double, others: Int) async throws {
    print(
        "\n## Firing lateness: \(count) reminders due over \(Int(spread)) s; notifier call − due, ms (median over \(runs) runs of each run's percentile)"
    )
    var rows: [(String, [Double], [Double], [Double])] = []
    for (label, pending) in [("chime, queue otherwise empty", 0), ("chime, \(others) others pending", others)] {
        var p50: [Double] = []
        var p99: [Double] = []
        var maxima: [Double] = []
        for _ in 0..<runs {
            let values = try await measureLateness(count: count, spread: spread, others: pending)
            p50.append(percentile(values, 50))
            p99.append(percentile(values, 99))
            maxima.append(values.max() ?? .nan)
        }
        rows.append((label, p50, p99, maxima))
    }
    var p50: [Double] = []
    var p99: [Double] = []
    var maxima: [Double] = []
    for _ in 0..<runs {
        let values = baselineLateness(count: count, spread: spread)
        p50.append(percentile(values, 50))
        p99.append(percentile(values, 99))
        maxima.append(values.max() ?? .nan)
    }
    rows.append(("baseline: clock_nanosleep thread", p50, p99, maxima))
    // What people use instead: Python's sched and APScheduler (when installed), same deadlines.
    var python: [String: (p50: [Double], p99: [Double], max: [Double])] = [:]
    for _ in 0..<runs {
        guard let results = pythonLateness(count: count, spread: spread) else { break }
        for (name, values) in results where !values.isEmpty {
            python[name, default: ([], [], [])].p50.append(percentile(values, 50))
            python[name, default: ([], [], [])].p99.append(percentile(values, 99))
            python[name, default: ([], [], [])].max.append(values.max() ?? .nan)
        }
    }
    for name in ["sched", "apscheduler"] {
        guard let figures = python[name] else {
            rows.append(("(python3 \(name): not available)", [.nan], [.nan], [.nan]))
            continue
        }
        rows.append(
            ("python3 \(name == "sched" ? "sched.scheduler" : "APScheduler 3 BackgroundScheduler")", figures.p50, figures.p99, figures.max)
        )
    }
    let widths = [36, 8, 8, 8]
    print(row(["what", "p50", "p99", "max"], widths: widths))
    for (label, p50, p99, maxima) in rows {
        print(row([label, fmt(median(p50)), fmt(median(p99)), fmt(median(maxima))], widths: widths))
    }
}

// MARK: - W4: crash catch-up

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
        let store = try ReminderStore(path: storePath)
        let first = try spawnRunner(store: storePath, runtime: directory, output: directory + "/before.jsonl")
        let now = Date()
        let start = now.addingTimeInterval(0.5)
        let batch = (0..<count).map { index in
            NewReminder(
                id: "w\(index)",
                title: "Crash \(index)",
                trigger: .once(start.addingTimeInterval(5 * Double(index) / Double(count)))
            )
        }
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

/// Runs scripts/bench/python-lateness.py: lateness in ms by library ("sched", "apscheduler").
func pythonLateness(count: Int, spread: Double) -> [String: [Double]]? {
    let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
        "../../scripts/bench/python-lateness.py"
    )
    .standardized.path
    guard FileManager.default.fileExists(atPath: script), FileManager.default.isExecutableFile(atPath: "/usr/bin/env") else { return nil }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["python3", script, "\(count)", "\(spread)"]
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    guard (try? process.run()) != nil else { return nil }
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0, let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return nil }
    return object.compactMapValues { $0 as? [Double] }
}

// MARK: - Idle runner: wake-ups and RSS

/// Starts `chime run` on `store`, waits until it is up, and returns it.
func startRunner(store: String, runtime: String) throws -> Process {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: chimeExecutable)
    process.arguments = ["run", "--store", store, "--notifier", "json", "--log-level", "warning"]
    var environment = ProcessInfo.processInfo.environment
    environment["XDG_RUNTIME_DIR"] = runtime
    process.environment = environment
    process.standardOutput = FileHandle.nullDevice
    try process.run()
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

func benchIdle(seconds: Double, sizes: [Int]) throws {
    print("\n## Idle runner: context switches (all threads, voluntary + involuntary) and CPU over \(Int(seconds)) s; RSS")
    let widths = [12, 18, 10, 10, 10]
    print(row(["pending", "ctx switches", "CPU s", "RSS kB", "HWM kB"], widths: widths))
    for (index, size) in sizes.enumerated() {
        let directory = temporaryDirectory("idle")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let storePath = directory + "/chime.sqlite"
        try populate(try ReminderStore(path: storePath), count: size)
        let runner = try startRunner(store: storePath, runtime: directory)
        let pid = runner.processIdentifier
        // Only the first size is watched for the whole span; the others are measured for RSS.
        let span = index == 0 ? seconds : 2
        let switchesBefore = contextSwitches(pid)
        let cpuBefore = cpuSeconds(pid)
        usleep(useconds_t(span * 1_000_000))
        let switches = switchesBetween(switchesBefore, contextSwitches(pid))
        let cpu = cpuSeconds(pid) - cpuBefore
        let rss = procStatus(pid, "VmRSS") ?? -1
        let hwm = procStatus(pid, "VmHWM") ?? -1
        stop(runner)
        print(
            row(
                ["\(size)", index == 0 ? "\(switches)" : "\(switches) (in \(Int(span)) s)", fmt(cpu, 2), "\(rss)", "\(hwm)"],
                widths: widths
            )
        )
    }
}

// MARK: - CLI end to end

func benchCLI(runs: Int) throws {
    print("\n## `chime in 5m x` end to end with the runner up (wall ms, median of \(runs))")
    let directory = temporaryDirectory("cli")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let storePath = directory + "/chime.sqlite"
    _ = try ReminderStore(path: storePath)
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

// MARK: - Desktop: post latency against a real notification server

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

/// Runs `executable` and waits; returns the wall time in ms.
func timeSpawn(_ executable: String, _ arguments: [String], environment: [String: String]) throws -> Double {
    try runMeasured(executable, arguments, environment: environment).seconds * 1000
}

func benchDesktop(posts: Int, spawns: Int) async throws {
    print("\n## Desktop: LibnotifyNotifier.post against the notification server on the session bus (ms)")
    var environment = ProcessInfo.processInfo.environment
    var serverDirectory: String?
    if (environment["DBUS_SESSION_BUS_ADDRESS"] ?? "").isEmpty {
        // No desktop here: start the project's private one (scripts/notification-server), stopped at the end.
        let directory = temporaryDirectory("desktop")
        guard try timeSpawn("/bin/bash", ["scripts/notification-server", "start", directory], environment: environment) > 0,
            let env = try? String(contentsOfFile: directory + "/env", encoding: .utf8)
        else {
            print("(no session bus, and scripts/notification-server could not start one: skipped)")
            return
        }
        for line in env.split(separator: "\n") {
            let assignment = line.replacingOccurrences(of: "export ", with: "")
            if let equals = assignment.firstIndex(of: "=") {
                environment[String(assignment[..<equals])] = String(assignment[assignment.index(after: equals)...])
                setenv(String(assignment[..<equals]), String(assignment[assignment.index(after: equals)...]), 1)
            }
        }
        serverDirectory = directory
    }
    defer {
        if let serverDirectory {
            _ = try? timeSpawn("/bin/bash", ["scripts/notification-server", "stop", serverDirectory], environment: environment)
        }
    }
    let notifier: LibnotifyNotifier
    switch await LibnotifyNotifier.connect() {
    case .success(let connected): notifier = connected
    case .failure(let status):
        print("(\(status.problem ?? "no desktop"): skipped)")
        return
    }
    print("server: \([notifier.status.serverName, notifier.status.serverVersion].compactMap { $0 }.joined(separator: " "))")
    var latencies: [Double] = []
    for index in 0..<posts {
        // 20 ids in turn: most posts update a shown alert in place, as a runner's would.
        let note = Note(id: "bench-\(index % 20)", title: "Bench \(index)", body: "Latency", postedAt: Date())
        let start = monotonicSeconds()
        _ = try await notifier.post(note)
        latencies.append((monotonicSeconds() - start) * 1000)
    }
    let notifySend = try (0..<spawns).map { index in
        try timeSpawn("/usr/bin/notify-send", ["Bench \(index)", "Latency"], environment: environment)
    }
    let widths = [44, 8, 8]
    print(row(["what", "p50", "p99"], widths: widths))
    print(
        row(
            ["chime: post (owner check + Notify), \(posts)×", fmt(percentile(latencies, 50)), fmt(percentile(latencies, 99))],
            widths: widths
        )
    )
    print(
        row(["baseline: spawn notify-send, \(spawns)×", fmt(percentile(notifySend, 50)), fmt(percentile(notifySend, 99))], widths: widths)
    )

    // The runner with the desktop backend: RSS and idle wake-ups.
    let directory = temporaryDirectory("desktop-runner")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: chimeExecutable)
    process.arguments = ["run", "--store", directory + "/chime.sqlite", "--notifier", "desktop", "--log-level", "warning"]
    var runnerEnvironment = environment
    runnerEnvironment["XDG_RUNTIME_DIR"] = directory
    process.environment = runnerEnvironment
    process.standardOutput = FileHandle.nullDevice
    try process.run()
    usleep(1_500_000)
    let pid = process.processIdentifier
    let before = contextSwitches(pid)
    usleep(10_000_000)
    let switches = switchesBetween(before, contextSwitches(pid))
    print("runner with the desktop backend: RSS \(procStatus(pid, "VmRSS") ?? -1) kB, context switches over 10 s idle: \(switches)")
    stop(process)
}

// MARK: - Main

let arguments = Array(CommandLine.arguments.dropFirst())
let what = arguments.first ?? "all"
let quick = arguments.contains("--quick")
let runs = quick ? 1 : 3
print("chime-bench (\(what)); runs per figure: \(runs); chime: \(chimeExecutable)")
do {
    if what == "all" || what == "schedule" { try benchSchedule(runs: runs, count: 100_000) }
    if what == "all" || what == "cancel" { try benchCancel(runs: runs, scheduled: 100_000, cancelled: 50_000) }
    if what == "all" || what == "lateness" {
        try await benchLateness(runs: runs, count: 2_000, spread: 10, others: 100_000)
    }
    if what == "all" || what == "crash" { try await benchCrash(runs: runs, count: 1_000) }
    if what == "all" || what == "idle" { try benchIdle(seconds: quick ? 5 : 30, sizes: [100_000, 1_000_000]) }
    if what == "all" || what == "cli" { try benchCLI(runs: quick ? 5 : 21) }
    if what == "all" || what == "desktop" { try await benchDesktop(posts: 1_000, spawns: 200) }
    if what == "all" || what == "focus" { try benchFocus(runs: quick ? 3 : 5, sizes: quick ? [5_000] : [5_000, 100_000]) }
    if what == "all" || what == "doses" { try benchDoses(runs: quick ? 3 : 5, medications: 20, years: quick ? 1 : 5) }
} catch {
    FileHandle.standardError.write(Data("chime-bench: \(error)\n".utf8))
    exit(1)
}

// W3: firing lateness (notifier call − due), next to a clock_nanosleep thread and Python's schedulers.
import ArgumentParser
import ChimeCore
import ChimeRunner
import ChimeStore
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

struct Lateness: Workload {
    static let configuration = CommandConfiguration(
        abstract: "W3: firing lateness of 2,000 due over 10 s, alone and with 100,000 pending (clock_nanosleep, Python)."
    )

    @OptionGroup var options: BenchOptions

    static func measure(_ options: BenchOptions) async throws {
        try await benchLateness(runs: options.runs, count: 2_000, spread: 10, others: 100_000)
    }
}

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

    func withdraw(_ shown: PostedNote) async throws {}
    var responses: AsyncStream<NoteResponse> { stream }
}

func measureLateness(count: Int, spread: Double, others: Int, wakes: WakeTimes? = nil) async throws -> [Double] {
    let directory = temporaryDirectory("lateness")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    // The others are scheduled as the CLI would, through a connection of its own.
    if others > 0 { try populate(try ReminderStore(path: directory + "/chime.sqlite", schemas: chimeSchemas), count: others) }
    let store = try ReminderStore(path: directory + "/chime.sqlite", schemas: chimeSchemas, deferCheckpoints: true)
    let now = Date()
    let firstDue = now.addingTimeInterval(1.0)
    let batch = evenOneShots(count, prefix: "l", title: "Lateness", from: firstDue, over: spread)
    _ = try store.scheduleBatch(batch, now: now, systemZone: .current)
    let (doneStream, done) = AsyncStream.makeStream(of: Void.self)
    let notifier = LatenessNotifier(expected: count, done: done)
    let waker = try TimerWaker(socketFD: nil, timerThread: RunnerThread.shared)
    let scheduler = Scheduler(store: store, notifier: notifier)
    // As in `chime run`: the scheduler on Chime's own thread.
    let task = Task(executorPreference: RunnerThread.shared) {
        if let wakes { await scheduler.run(waker: TimedWaker(inner: waker, times: wakes)) } else { await scheduler.run(waker: waker) }
    }
    for await _ in doneStream { break }
    waker.shutdown()
    await task.value
    return notifier.box.values.withLock { $0 }
}

/// The same deadlines, slept to by one thread with clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME).
func baselineLateness(count: Int, spread: Double) -> [Double] {
    let firstDue = Date().addingTimeInterval(1.0)
    let deadlines = evenInstants(count, from: firstDue, over: spread)
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

/// Each run's p50, p99 and maximum lateness, for a row of medians.
struct LatenessRuns {
    var p50: [Double] = []
    var p99: [Double] = []
    var maxima: [Double] = []

    mutating func add(_ values: [Double]) {
        p50.append(percentile(values, 50))
        p99.append(percentile(values, 99))
        maxima.append(values.max() ?? .nan)
    }
}

func benchLateness(runs: Int, count: Int, spread: Double, others: Int) async throws {
    print(
        "\n## Firing lateness: \(count) reminders due over \(Int(spread)) s; notifier call − due, ms (median over \(runs) runs of each run's percentile)"
    )
    var rows: [(String, LatenessRuns)] = []
    for (label, pending) in [("chime, queue otherwise empty", 0), ("chime, \(others) others pending", others)] {
        var figures = LatenessRuns()
        for _ in 0..<runs { figures.add(try await measureLateness(count: count, spread: spread, others: pending)) }
        rows.append((label, figures))
    }
    var baseline = LatenessRuns()
    for _ in 0..<runs { baseline.add(baselineLateness(count: count, spread: spread)) }
    rows.append(("baseline: clock_nanosleep thread", baseline))
    // What people use instead: Python's sched and APScheduler (when installed), same deadlines.
    var python: [String: LatenessRuns] = [:]
    for _ in 0..<runs {
        guard let results = pythonLateness(count: count, spread: spread) else { break }
        for (name, values) in results where !values.isEmpty { python[name, default: LatenessRuns()].add(values) }
    }
    for name in ["sched", "apscheduler"] {
        guard let figures = python[name] else {
            rows.append(("(python3 \(name): not available)", LatenessRuns()))
            continue
        }
        rows.append((name == "sched" ? "python3 sched.scheduler" : "python3 APScheduler 3 BackgroundScheduler", figures))
    }
    let widths = [36, 8, 8, 8]
    print(row(["what", "p50", "p99", "max"], widths: widths))
    for (label, figures) in rows {
        print(row([label, fmt(median(figures.p50)), fmt(median(figures.p99)), fmt(median(figures.maxima))], widths: widths))
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

/// How late the scheduler's loop resumes after each deadline it waited for (ms), for `lateness-stages`.
final class WakeTimes: Sendable { let values = Mutex<[Double]>([]) }

/// The runner's waker, noting how late each deadline wake reaches the scheduler's thread.
struct TimedWaker: Waker {
    let inner: TimerWaker
    let times: WakeTimes

    func wait(until deadline: Date?) async -> WakeReason {
        let reason = await inner.wait(until: deadline)
        if reason == .deadline, let deadline {
            let late = Date().timeIntervalSince(deadline) * 1000
            times.values.withLock { $0.append(late) }
        }
        return reason
    }
    func hasPendingWake() -> Bool { inner.hasPendingWake() }
    func takeQueries() -> [DeliveryQuery] { inner.takeQueries() }
    func takeWithdrawals() -> [Withdrawal] { inner.takeWithdrawals() }
    func poke() { inner.poke() }
}

/// W3 split in two: how late the loop resumes after a deadline, and how late the notifier is called.
struct LatenessStages: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lateness-stages",
        abstract: "W3 split: the loop's resumption after each deadline, and the notifier's call, both after the due instant (ms).",
        shouldDisplay: false
    )

    @Option(help: "Runs (medians of each run's percentiles).")
    var runs = 3

    @Option(help: "Other reminders pending.")
    var others = 0

    @Option(help: "A file to write each run's notifier lateness to, one figure a line in due order.")
    var dump: String?

    func run() async throws {
        var wake = LatenessRuns()
        var call = LatenessRuns()
        for _ in 0..<runs {
            let wakes = WakeTimes()
            let values = try await measureLateness(count: 2_000, spread: 10, others: others, wakes: wakes)
            if let dump {
                try (values.map { fmt($0) }.joined(separator: "\n") + "\n").write(toFile: dump, atomically: true, encoding: .utf8)
            }
            call.add(values)
            wake.add(wakes.values.withLock { $0 })
        }
        var floor = LatenessRuns()
        for _ in 0..<runs { floor.add(baselineLateness(count: 2_000, spread: 10)) }
        let widths = [36, 8, 8, 8]
        print(row(["what", "p50", "p99", "max"], widths: widths))
        for (label, figures) in [("loop resumed after a deadline", wake), ("notifier called", call), ("clock_nanosleep thread", floor)] {
            print(row([label, fmt(median(figures.p50)), fmt(median(figures.p99)), fmt(median(figures.maxima))], widths: widths))
        }
    }
}

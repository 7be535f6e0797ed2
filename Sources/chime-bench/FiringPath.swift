// W3's firing path under a profiler: the runner's loop fires `count` one-shots 5 ms apart on a clock
// that jumps to each deadline (no sleeping), so a profile of the posts and passes does not depend on
// timing. Valgrind 3.19 (Debian 12) cannot run chime-bench (an internal SIGSEGV reading
// lib_FoundationICU.so; with --sim-hints=fuse-compatible, an assertion in its syscall wrapper):
// profile it with `perf record -g` instead.
import ArgumentParser
import ChimeApp
import ChimeCore
import ChimeRunner
import ChimeStore
import Foundation
import Logging
import Synchronization

struct FiringPath: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "firing-path",
        abstract: "W3's firing path for a profiler: one-shots 5 ms apart fired on a clock that jumps to each deadline.",
        discussion: """
            perf record -g -o /tmp/firing.data .build/release/chime-bench firing-path --count 2000
            perf report -i /tmp/firing.data --children --sort sym -g none | swift demangle --simplified | head -60
            """,
        shouldDisplay: false
    )

    @Option(help: "How many one-shots fire.")
    var count = 400

    @Option(help: "How many other reminders are pending (due after an hour).")
    var others = 0

    @Flag(help: "The scheduler serves chime run's families (focus, doses, plain reminders), as the runner does.")
    var families = false

    func run() async throws {
        let directory = temporaryDirectory("firing-path")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        if others > 0 { try populate(try ReminderStore(path: directory + "/chime.sqlite", schemas: chimeSchemas), count: others) }
        let store = try ReminderStore(path: directory + "/chime.sqlite", schemas: chimeSchemas, deferCheckpoints: true)
        let start = Date()
        _ = try store.scheduleBatch(
            evenOneShots(count, prefix: "f", title: "Firing", from: start.addingTimeInterval(1), over: Double(count) * 0.005),
            now: start,
            systemZone: .current
        )
        let clock = SteppedClock(now: start)
        let notifier = SteppedNotifier(expected: count, clock: clock)
        let served = families ? ChimeApp.families(store: store, logger: Logger(label: "firing-path")) : []
        let scheduler = Scheduler(store: store, notifier: notifier, clock: clock, families: served)
        let began = Date()
        let task = Task(executorPreference: RunnerThread.shared) { await scheduler.run(waker: clock) }
        await task.value
        let seconds = Date().timeIntervalSince(began)
        let (posts, late) = notifier.box.counts.withLock { ($0.posts, $0.late) }
        print(
            "posts: \(posts) (of \(count)), late on the stepped clock: \(late), \(fmt(seconds * 1e6 / Double(max(posts, 1)), 1)) µs a post"
        )
    }
}

/// A clock and waker in one: each wait jumps the clock to its deadline and returns at once.
final class SteppedClock: WallClock, Waker {
    private let state: Mutex<(now: Date, stopped: Bool)>

    init(now: Date) { state = Mutex((now, false)) }

    func now() -> Date { state.withLock { $0.now } }

    func wait(until deadline: Date?) async -> WakeReason {
        state.withLock { state in
            guard !state.stopped, let deadline else { return .shutdown }
            state.now = max(state.now, deadline)
            return .deadline
        }
    }

    func stop() { state.withLock { $0.stopped = true } }

    func poke() {}
}

/// Counts the posts (and those called after their due instant on the stepped clock); stops the
/// clock at the last one.
struct SteppedNotifier: Notifier {
    final class Box: Sendable { let counts = Mutex((posts: 0, late: 0)) }
    let box = Box()
    let expected: Int
    let clock: SteppedClock
    let stream: AsyncStream<NoteResponse> = AsyncStream { $0.finish() }

    func post(_ note: Note) async throws -> PostedNote {
        let now = clock.now()
        let posts = box.counts.withLock { box in
            box.posts += note.deliveries.count
            box.late += note.deliveries.filter { $0.due < now }.count
            return box.posts
        }
        if posts >= expected { clock.stop() }
        return PostedNote(id: note.id)
    }

    func withdraw(_ shown: PostedNote) async throws {}
    var responses: AsyncStream<NoteResponse> { stream }
}

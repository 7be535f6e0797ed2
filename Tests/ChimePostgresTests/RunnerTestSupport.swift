import ChimeCore
import ChimePostgres
import ChimeTesting
import Foundation
import Logging
import PostgresNIO
import Synchronization

/// A ``PostgresRunnerSleeper`` that never sleeps for real: each wait is recorded (duration and
/// reason) and lasts until the test ends it (``wake(_:)``, ``release(_:)``) or the runner
/// cancels it. Tests await the runner's waits (``next(_:)``, ``idle(until:)``) instead of
/// polling: a runner asks for an idle wait at the end of every pass.
final class ManualSleeper: PostgresRunnerSleeper {
    struct Request: Sendable {
        var id: Int
        var duration: Duration
        var reason: PostgresRunnerSleep
    }

    private struct State {
        var nextID = 0
        var sleeping: [Int: (reason: PostgresRunnerSleep, continuation: CheckedContinuation<Void, any Error>)] = [:]
        var cancelled: Set<Int> = []
        var unread: [Request] = []
        var readers: [(reason: PostgresRunnerSleep, continuation: CheckedContinuation<Request, Never>)] = []
        /// Wakes asked for while no wait of that reason was in progress: the next one ends at once.
        var early: Set<PostgresRunnerSleep> = []
        var all: [Request] = []
    }

    private let state = Mutex(State())

    func sleep(for duration: Duration, reason: PostgresRunnerSleep) async throws {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        let request = Request(id: id, duration: duration, reason: reason)
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                enum Outcome {
                    case cancelled
                    /// Announced to `reader` (nil: kept for the next reader); `now`: a wake was
                    /// asked for before this wait began, so it ends at once.
                    case announced(reader: CheckedContinuation<Request, Never>?, now: Bool)
                }
                let outcome: Outcome = state.withLock { state in
                    if state.cancelled.contains(id) { return .cancelled }
                    state.all.append(request)
                    var reader: CheckedContinuation<Request, Never>?
                    if let index = state.readers.firstIndex(where: { $0.reason == reason }) {
                        reader = state.readers.remove(at: index).continuation
                    } else {
                        state.unread.append(request)
                    }
                    if state.early.remove(reason) != nil { return .announced(reader: reader, now: true) }
                    state.sleeping[id] = (reason, continuation)
                    return .announced(reader: reader, now: false)
                }
                switch outcome {
                case .cancelled:
                    continuation.resume(throwing: CancellationError())
                case .announced(let reader, let now):
                    reader?.resume(returning: request)
                    if now { continuation.resume() }
                }
            }
        } onCancel: {
            let sleeping = state.withLock { state in
                state.cancelled.insert(id)
                return state.sleeping.removeValue(forKey: id)
            }
            sleeping?.continuation.resume(throwing: CancellationError())
        }
    }

    /// The next wait of `reason` not yet returned by this method, waiting for it if need be.
    func next(_ reason: PostgresRunnerSleep) async -> Request {
        await withCheckedContinuation { continuation in
            let ready: Request? = state.withLock { state in
                if let index = state.unread.firstIndex(where: { $0.reason == reason }) { return state.unread.remove(at: index) }
                state.readers.append((reason, continuation))
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    /// Takes the runner's idle waits (one per pass) until `condition` holds, checked before
    /// each; returns the last wait taken (nil when it held at once).
    @discardableResult
    func idle(until condition: () async -> Bool) async -> Request? {
        var last: Request?
        while !(await condition()) { last = await next(.idle) }
        return last
    }

    /// Ends the wait of `reason` in progress as if its time had come, or the next one at once
    /// when none is in progress (the runner is in a pass).
    func wake(_ reason: PostgresRunnerSleep) {
        let woken: [CheckedContinuation<Void, any Error>] = state.withLock { state in
            let ids = state.sleeping.filter { $0.value.reason == reason }.map(\.key)
            if ids.isEmpty {
                state.early.insert(reason)
                return []
            }
            return ids.compactMap { state.sleeping.removeValue(forKey: $0)?.continuation }
        }
        for continuation in woken { continuation.resume() }
    }

    /// Ends one recorded wait, if it is still in progress.
    func release(_ request: Request) {
        let sleeping = state.withLock { $0.sleeping.removeValue(forKey: request.id) }
        sleeping?.continuation.resume()
    }

    /// Every wait asked for, in order.
    var requests: [Request] { state.withLock { $0.all } }
}

/// Keeps what a logger was told, for tests that check a log line.
final class LogRecorder: Sendable {
    struct Line: Sendable {
        var level: Logger.Level
        var message: String
    }

    private let storage = Mutex<[Line]>([])

    var lines: [Line] { storage.withLock { $0 } }

    func append(_ line: Line) { storage.withLock { $0.append(line) } }

    var logger: Logger {
        Logger(label: "chime.test") { _ in Handler(recorder: self) }
    }

    struct Handler: LogHandler {
        let recorder: LogRecorder
        var metadata: Logger.Metadata = [:]
        var metadataProvider: Logger.MetadataProvider?
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            recorder.append(Line(level: event.level, message: event.message.description))
        }
    }
}

/// A notifier that runs `before` (a cancel from another host, a stall past the lease) as each
/// note is handed to it, then records it in `recording`.
struct HookNotifier: Notifier {
    let recording: RecordingNotifier
    let before: @Sendable (Note) async throws -> Void

    func post(_ note: Note) async throws -> PostedNote {
        try await before(note)
        return try await recording.post(note)
    }

    func withdraw(_ shown: PostedNote) async throws { try await recording.withdraw(shown) }

    var responses: AsyncStream<NoteResponse> { recording.responses }
}

/// Runs `runner` for the time of `body`, then cancels it and waits for `run()` to return.
func whileRunning(_ runners: PostgresRunner..., body: () async throws -> Void) async throws {
    try await withThrowingTaskGroup(of: Void.self) { group in
        for runner in runners { group.addTask { try await runner.run() } }
        try await body()
        group.cancelAll()
        try await group.waitForAll()
    }
}

extension PostgresStore {
    /// One occurrence of reminder `id`: its attempts, retry time (database seconds from now) and last error.
    func retryState(id: String) async throws -> (attempts: Int, retryIn: Double?, lastError: String?) {
        let rows = try await client.query(
            """
            SELECT o.attempts, extract(epoch FROM o.retry_at - now())::float8, o.last_error
            FROM occurrence o JOIN reminder r ON r.key = o.reminder_key WHERE r.id = \(id) ORDER BY o.due_us DESC LIMIT 1
            """
        )
        for try await (attempts, retryIn, lastError) in rows.decode((Int, Double?, String?).self) {
            return (attempts, retryIn, lastError)
        }
        return (0, nil, nil)
    }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}

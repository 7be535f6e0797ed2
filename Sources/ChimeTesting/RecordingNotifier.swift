import ChimeCore
import Foundation
import Synchronization

/// A ``Notifier`` that keeps every post and withdrawal, for tests of everything above the
/// notifier. Copies share one storage: make one per test, never a global.
///
/// Tests await ``nextPost()`` rather than polling, inject responses with ``respond(_:)`` (an
/// action invoked, an alert closed), and failures with ``failNext(_:error:)``.
public struct RecordingNotifier: Notifier {
    /// What a test can inject as a failure: "no notification server".
    public struct Unavailable: Error, Sendable, CustomStringConvertible {
        public var description: String
        public init(_ description: String = "no notification server") { self.description = description }
    }

    private final class Storage: Sendable {
        struct State {
            var posts: [Note] = []
            var withdrawals: [String] = []
            var confirmations: [Note] = []
            var failures: [Unavailable] = []
            var failAlways: Unavailable?
            var serverAbsent = false
            var attempts = 0
            var unread: [Note] = []
            var readers: [CheckedContinuation<Note, Never>] = []
        }
        let state = Mutex(State())
        let responses: AsyncStream<NoteResponse>
        let responder: AsyncStream<NoteResponse>.Continuation
        let availability: AsyncStream<Bool>
        let availabilityChanges: AsyncStream<Bool>.Continuation
        init() {
            (responses, responder) = AsyncStream.makeStream()
            (availability, availabilityChanges) = AsyncStream.makeStream()
        }
    }

    private let storage = Storage()

    public init() {}

    public func post(_ note: Note) async throws -> PostedNote {
        let outcome: Result<CheckedContinuation<Note, Never>?, any Error> = storage.state.withLock { state in
            state.attempts += 1
            if state.serverAbsent { return .failure(NotifierUnavailable("no notification server")) }
            if let failure = state.failAlways { return .failure(failure) }
            if !state.failures.isEmpty { return .failure(state.failures.removeFirst()) }
            state.posts.append(note)
            if state.readers.isEmpty {
                state.unread.append(note)
                return .success(nil)
            }
            return .success(state.readers.removeFirst())
        }
        switch outcome {
        case .failure(let error): throw error
        case .success(let reader): reader?.resume(returning: note)
        }
        return PostedNote(id: note.id, via: "recording")
    }

    public func withdraw(_ shown: PostedNote) async throws {
        storage.state.withLock { $0.withdrawals.append(shown.id) }
    }

    /// Records the confirmation that replaces alert `shown.id` (see ``confirmations``).
    public func confirm(_ shown: PostedNote, with confirmation: Note) async throws {
        storage.state.withLock { $0.confirmations.append(confirmation) }
    }

    public var responses: AsyncStream<NoteResponse> { storage.responses }

    public var availability: AsyncStream<Bool> { storage.availability }

    public var destination: String? { storage.state.withLock { $0.serverAbsent ? nil : "recording" } }

    /// The notification server leaves (`false`: every post throws ``NotifierUnavailable``) or
    /// appears (`true`), told on ``availability`` as a desktop notifier tells it.
    public func setServer(present: Bool) {
        storage.state.withLock { $0.serverAbsent = !present }
        storage.availabilityChanges.yield(present)
    }

    /// Every note posted successfully, in order.
    public var posts: [Note] { storage.state.withLock { $0.posts } }
    /// Every identifier withdrawn, in order.
    public var withdrawals: [String] { storage.state.withLock { $0.withdrawals } }
    /// Every confirmation that replaced an answered alert, in order (its id is the alert's).
    public var confirmations: [Note] { storage.state.withLock { $0.confirmations } }
    /// Calls to ``post(_:)``, failed ones included.
    public var attempts: Int { storage.state.withLock { $0.attempts } }

    /// The next post not yet returned by this method, waiting for it if need be.
    public func nextPost() async -> Note {
        await withCheckedContinuation { continuation in
            let ready: Note? = storage.state.withLock { state in
                if !state.unread.isEmpty { return state.unread.removeFirst() }
                state.readers.append(continuation)
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    /// The next `count` posts, in order.
    public func nextPosts(_ count: Int) async -> [Note] {
        var notes: [Note] = []
        for _ in 0..<count { notes.append(await nextPost()) }
        return notes
    }

    /// Makes the next `count` posts throw `error`.
    public func failNext(_ count: Int = 1, error: Unavailable = Unavailable()) {
        storage.state.withLock { $0.failures.append(contentsOf: repeatElement(error, count: count)) }
    }

    /// Makes every post throw `error` until called with `nil`.
    public func failAlways(_ error: Unavailable? = Unavailable()) {
        storage.state.withLock { $0.failAlways = error }
    }

    /// Delivers a response as if a person had acted on an alert.
    public func respond(_ response: NoteResponse) {
        storage.responder.yield(response)
    }
}

import ChimeCore
import Foundation
import Synchronization

/// The desktop notifier with the console as its witness: when the desktop cannot show an
/// alert (no bus, no server, the server restarting), the console prints it once, saying so,
/// and the failure goes back to the scheduler, which keeps the occurrence and retries.
public struct EchoOnFailureNotifier: Notifier {
    public let primary: any Notifier
    public let echo: ConsoleNotifier
    private final class Echoed: Sendable { let keys = Mutex<Set<String>>([]) }
    private let echoed = Echoed()

    public init(primary: any Notifier, echo: ConsoleNotifier) {
        self.primary = primary
        self.echo = echo
    }

    public func post(_ note: Note) async throws -> PostedNote {
        do {
            return try await primary.post(note)
        } catch {
            let key = note.id + "@" + note.deliveries.map { String($0.due.micros) }.joined(separator: ",")
            if echoed.keys.withLock({ $0.insert(key).inserted }) {
                var copy = note
                copy.body = [note.body, "(not shown on the desktop yet: \(error); retrying)"].filter { !$0.isEmpty }.joined(separator: " ")
                _ = try? await echo.post(copy)
            }
            throw error
        }
    }

    public func withdraw(_ shown: PostedNote) async throws {
        try await primary.withdraw(shown)
    }

    public var responses: AsyncStream<NoteResponse> { primary.responses }
}

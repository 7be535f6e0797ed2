import ChimeCore
import Foundation
import Synchronization

/// The desktop notifier with the console as its witness: when the desktop cannot show an
/// alert (no bus, no server, the server restarting), the console prints it once, saying so,
/// and the failure goes back to the scheduler, which keeps the occurrence due in its ledger.
///
/// So the ledger says what reached the desktop: an occurrence only echoed is still due, and
/// is shown on the desktop once, when the desktop can show it again (at once when the primary
/// reports a notification server appearing on ``Notifier/availability``, else at its retry),
/// and recorded as posted then. It is echoed once per occurrence by this process (a runner
/// restarted meanwhile echoes it once more on its console; the desktop still shows it once).
public struct EchoOnFailureNotifier: Notifier {
    public let primary: any Notifier
    public let echo: ConsoleNotifier
    private final class Echoed: Sendable { let keys = Mutex<Set<String>>([]) }
    private let echoed = Echoed()

    public init(primary: any Notifier, echo: ConsoleNotifier) {
        self.primary = primary
        self.echo = echo
    }

    /// The primary's note as it returned it (its server id and whatever else it records).
    public func post(_ note: Note) async throws -> PostedNote {
        do {
            return try await primary.post(note)
        } catch {
            let key = note.id + "@" + note.deliveries.map { String($0.due.micros) }.joined(separator: ",")
            if echoed.keys.withLock({ $0.insert(key).inserted }) {
                var copy = note
                let why =
                    error is NotifierUnavailable
                    ? "(not shown on the desktop yet: \(error); it will be when a notification server starts)"
                    : "(not shown on the desktop yet: \(error); retrying)"
                copy.body = [note.body, why].filter { !$0.isEmpty }.joined(separator: " ")
                _ = try? await echo.post(copy)
            }
            throw error
        }
    }

    public func withdraw(_ shown: PostedNote) async throws {
        try await primary.withdraw(shown)
    }

    public func confirm(_ shown: PostedNote, with confirmation: Note) async throws {
        try await primary.confirm(shown, with: confirmation)
    }

    public var responses: AsyncStream<NoteResponse> { primary.responses }

    public var availability: AsyncStream<Bool> { primary.availability }

    /// The primary's, or the console (waiting for a notification server) while it has none.
    public var destination: String? {
        primary.destination ?? "\(echo.format.rawValue) (no notification server: the desktop once one starts)"
    }
}

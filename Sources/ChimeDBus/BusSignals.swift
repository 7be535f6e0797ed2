import ChimeCore
import ChimeViewModels
import Foundation
import Synchronization

/// Where the runner's parts tell what the service signals: the notifier (``SignallingNotifier``)
/// what it showed, the scheduler's events what was answered, the runner what another process
/// changed. Made before the runner, the server attached once it serves; until then (and with no
/// session bus) nothing is sent.
public final class BusSignals: Sendable {
    private let server = Mutex<ChimeBusServer?>(nil)

    public init() {}

    public func attach(_ server: ChimeBusServer) { self.server.withLock { $0 = server } }

    /// `Fired` for each occurrence `note` showed.
    public func posted(_ note: Note) {
        guard let server = server.withLock({ $0 }) else { return }
        for delivery in note.deliveries {
            server.fired(
                id: delivery.reminderID,
                due: delivery.due,
                details: [
                    "title": .string(delivery.title), "body": .string(delivery.body), "kind": .string(delivery.kind),
                    "missed": .int64(Int64(delivery.missedCount)),
                ]
            )
        }
    }

    /// `Answered` for an answer that matched a shown alert (the scheduler's event).
    public func observe(_ event: SchedulerEvent) {
        guard case let .answered(id, response, recorded) = event, recorded else { return }
        let answer =
            switch response {
            case .action(let key): key
            case .closed: "closed"
            }
        answered(id: id, answer: answer)
        // One of the reminder's own actions: to the app that scheduled it, when it can be reached.
        server.withLock { $0 }?.route(id: id, answer: answer)
    }

    public func answered(id: String, answer: String) {
        server.withLock { $0 }?.answered(id: id, answer: answer)
    }

    /// Opens the Chime app at `page` (an alert's body was clicked: ``ChimeBusServer/openApp(_:done:)``);
    /// a page it does not know opens the first. Nothing without the service.
    public func openApp(page: String) {
        server.withLock { $0 }?.openApp(AppPage(rawValue: page))
    }

    /// `Changed`: the ids, or none when another process changed the store.
    public func changed(_ ids: [String]) {
        server.withLock { $0 }?.changed(ids: ids)
    }

    /// The runner finished a pass (the store may have changed: a post, an answer, a hold, a
    /// focus stage): the properties are read again, and those that changed are signalled.
    public func passed() {
        server.withLock { $0 }?.refreshProperties()
    }
}

/// A notifier that tells ``BusSignals`` each note its base showed, and is the base otherwise.
public struct SignallingNotifier: Notifier {
    public let base: any Notifier
    private let signals: BusSignals

    public init(_ base: any Notifier, signals: BusSignals) {
        self.base = base
        self.signals = signals
    }

    public func post(_ note: Note) async throws -> PostedNote {
        let posted = try await base.post(note)
        signals.posted(note)
        return posted
    }

    public func withdraw(_ shown: PostedNote) async throws { try await base.withdraw(shown) }
    public func confirm(_ shown: PostedNote, with confirmation: Note) async throws { try await base.confirm(shown, with: confirmation) }
    public var responses: AsyncStream<NoteResponse> { base.responses }
    public var destination: String? { base.destination }
    public var availability: AsyncStream<Bool> { base.availability }
}

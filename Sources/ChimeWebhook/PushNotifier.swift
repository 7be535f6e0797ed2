import ChimeCore
import Foundation
import Logging

/// Push to a phone: each alert is one JSON `POST` to an ntfy server (https://docs.ntfy.sh/publish/)
/// or a Gotify server (https://gotify.net/docs/pushmsg), which the phone's app shows.
///
/// - ntfy: `POST` to the server's root URL with `topic`, `title`, `message`, `priority` (low,
///   normal and critical as 2, 3 and 5) and `tags`; a token goes as `Authorization: Bearer`.
/// - Gotify: `POST /message` under the server's URL with `title`, `message` and `priority` (low,
///   normal and critical as 2, 5 and 8); the application's token goes as `X-Gotify-Key`.
///
/// One push per alert, as the desktop shows it (a summary is one push, not one per
/// occurrence). An alert's buttons are not sent: ntfy's and Gotify's buttons run on the phone
/// and cannot reach a runner on a computer, so an alert that has some (Done, Snooze) ends with
/// the line that says how to answer it with `chime` instead (``Note/answerInstead``).
///
/// Posting follows the webhook's delivery rules (``DeliveryRules``, ``HTTPDelivery``): the same
/// libcurl transport and thread, quick retries of a failed connection, a timeout, 408, 429 and
/// 5xx, none of another 4xx (a 401 for a wrong token), and every failure a ``ChimeError``
/// `.delivery` that names only the service and the server's origin, never the token; the
/// scheduler keeps the occurrence due and retries it later. Neither server drops a repeat, so
/// an attempt that reached the server but whose answer was lost may show twice.
public final class PushNotifier: Notifier {
    /// Which server speaks to the phone.
    public enum Service: Sendable, Hashable {
        /// An ntfy server, and the topic the phone subscribes to.
        case ntfy(topic: String)
        case gotify

        /// `ntfy` or `gotify`: the `--notifier` value, and how messages name it.
        public var name: String {
            switch self {
            case .ntfy: "ntfy"
            case .gotify: "gotify"
            }
        }
    }

    public struct Configuration: Sendable {
        public var service: Service
        /// The server (``WebhookURL/server(_:root:)``).
        public var server: WebhookURL
        /// ntfy's access token or Gotify's application token; never shown.
        public var token: String?
        public var delivery = DeliveryRules()
        /// Sent as `User-Agent`.
        public var userAgent: String

        public init(_ service: Service, server: WebhookURL, token: String?) {
            self.service = service
            self.server = server
            self.token = token
            userAgent = "Chime/\(ChimeVersion.string) (\(service.name); libcurl)"
        }
    }

    public let configuration: Configuration
    private let delivery: HTTPDelivery

    /// - Parameters:
    ///   - sleep: waits between quick retries (tests pass one that records and returns).
    ///   - jitter: a number in `0..<1` for each backoff (random by default).
    ///   - now: wall time, to read a `Retry-After` given as an HTTP date.
    public init(
        _ configuration: Configuration,
        logger: Logger = Logger(label: "chime.push"),
        sleep: @escaping WebhookNotifier.Sleeper = { try await Task.sleep(for: $0) },
        jitter: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) },
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.configuration = configuration
        let (server, token) = (configuration.server, configuration.token)
        delivery = HTTPDelivery(
            service: configuration.service.name,
            origin: server.origin,
            rules: configuration.delivery,
            userAgent: configuration.userAgent,
            logger: logger,
            sleep: sleep,
            jitter: jitter,
            now: now,
            redact: { message in
                let shown = HTTPDelivery.redact(message, url: server)
                guard let token, !token.isEmpty else { return shown }
                return shown.replacingOccurrences(of: token, with: "***")
            }
        )
    }

    /// Ends the notifier's thread and closes its connection; a second call does nothing.
    public func shutdown() async {
        await delivery.shutdown()
    }

    // MARK: Notifier

    /// Pushes the alert.
    /// - Throws: ``ChimeError`` `.delivery` saying what the server answered or why it could not
    ///   be reached; `CancellationError` when the awaiting task is cancelled.
    public func post(_ note: Note) async throws -> PostedNote {
        let request = Self.request(for: note, configuration)
        try await delivery.send(request)
        return PostedNote(id: note.id, via: configuration.service.name)
    }

    /// Neither server takes a message back from a sender: nothing is sent.
    public func withdraw(_ shown: PostedNote) async throws {}

    /// Nothing on the phone answers the runner.
    public var responses: AsyncStream<NoteResponse> { AsyncStream { $0.finish() } }

    /// `ntfy (https://ntfy.sh)`: the server's origin, not the topic (on a public server, whoever
    /// knows the topic reads it).
    public var destination: String? { "\(configuration.service.name) (\(configuration.server.origin))" }

    // MARK: The request

    /// ntfy's JSON publish body (https://docs.ntfy.sh/publish/#publish-as-json).
    struct NtfyMessage: Encodable {
        var topic: String
        var title: String?
        var message: String
        var priority: Int
        var tags: [String]
    }

    /// Gotify's `POST /message` body (https://gotify.net/api-docs, `Message`).
    struct GotifyMessage: Encodable {
        var title: String?
        var message: String
        var priority: Int
    }

    /// ntfy's priority: 1 (min) to 5 (max), 3 the default.
    static func ntfyPriority(_ urgency: Note.Urgency) -> Int {
        switch urgency {
        case .low: 2
        case .normal: 3
        case .critical: 5
        }
    }

    /// Gotify's priority: 0 to 10; its Android app is silent below 4 and pops up from 8.
    static func gotifyPriority(_ urgency: Note.Urgency) -> Int {
        switch urgency {
        case .low: 2
        case .normal: 5
        case .critical: 8
        }
    }

    /// The title and the message the phone shows: the alert's title over its body; an alert
    /// without a body is its title as the message (ntfy would show "triggered", and Gotify
    /// refuses a message without text). An alert with buttons ends with how to answer it.
    static func text(of note: Note) -> (title: String?, message: String) {
        var (title, message): (String?, String) = note.body.isEmpty ? (nil, note.title) : (note.title, note.body)
        if !note.actions.isEmpty, let answer = note.answerInstead, !answer.isEmpty { message += "\n\n" + answer }
        return (title, message)
    }

    static func request(for note: Note, _ configuration: Configuration) -> HTTPDelivery.Request {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let (title, message) = text(of: note)
        var headers = ["Content-Type: application/json"]
        let url: String
        let body: Data?
        switch configuration.service {
        case .ntfy(let topic):
            url = configuration.server.requestURL
            if let token = configuration.token { headers.append("Authorization: Bearer \(token)") }
            let tags = note.urgency == .critical ? ["rotating_light"] : ["bell"]
            body = try? encoder.encode(
                NtfyMessage(topic: topic, title: title, message: message, priority: ntfyPriority(note.urgency), tags: tags)
            )
        case .gotify:
            url = configuration.server.appending(path: "message")
            if let token = configuration.token { headers.append("X-Gotify-Key: \(token)") }
            body = try? encoder.encode(GotifyMessage(title: title, message: message, priority: gotifyPriority(note.urgency)))
        }
        // Encoding strings and integers cannot fail.
        return HTTPDelivery.Request(url: url, headers: headers, body: body ?? Data("{}".utf8), label: note.id)
    }
}

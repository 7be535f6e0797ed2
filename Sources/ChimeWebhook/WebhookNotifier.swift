import ChimeCore
import Foundation
import Logging

/// A server-side channel: each occurrence an alert delivers is one JSON `POST` to a URL.
///
/// A URL with user info (`https://user:password@host/…`) sends it as HTTP Basic
/// authorization; the URL is shown only redacted (``WebhookURL/redacted``).
///
/// The request carries `Idempotency-Key: "<reminder id>@<due micros>"`, the same for every
/// retry of one occurrence (a retry inside one post, or the runner's own after a failed post,
/// or another runner's after a crash) and different for every occurrence, so a receiver that
/// keeps the keys it has seen shows each occurrence once although delivery is at-least-once.
/// The field follows the IETF draft "The Idempotency-Key HTTP Header Field"
/// (draft-ietf-httpapi-idempotency-key-header-06, February 2025, §2 Syntax): "an Item
/// Structured Header [RFC8941]. Its value MUST be a String" (RFC 8941 §3.3.3), hence the
/// quotes, and a client sends one such field per request; a key is unique to one request, and
/// a client retrying that request sends the same key again.
///
/// Inside one ``post(_:)``: the delivery rules every notifier over HTTP shares
/// (``DeliveryRules``, applied by ``HTTPDelivery``): a few quick retries with backoff where the
/// receiver may not have got the request (a connection that failed, a timeout, HTTP 5xx, 408
/// and 429, `Retry-After` honoured up to a cap), none for any other 4xx; every failure throws
/// ``ChimeError`` `.delivery`, and the scheduler keeps the occurrence due and retries it with
/// its own, longer backoff. When the task awaiting a post is cancelled, the request in flight is
/// aborted at once and the post throws `CancellationError`.
///
/// The HTTP client is Debian's libcurl (``CurlTransport``): one handle made in `init` serves
/// every post on a thread of its own (never the caller's, never Swift's cooperative pool),
/// keeping the connection alive between alerts. ``DeliveryRules/timeout`` bounds the whole of
/// each attempt, however slowly a receiver answers. Call ``shutdown()`` once when done (it
/// ends the thread and closes the connection), or use ``withWebhookNotifier(_:logger:_:)``.
/// libcurl's messages are shown with the URL redacted.
public final class WebhookNotifier: Notifier {
    /// Where the notifier posts, and how it retries (``DeliveryRules``).
    public struct Configuration: Sendable {
        public var url: WebhookURL
        public var delivery = DeliveryRules()
        /// Sent as `User-Agent`.
        public var userAgent: String = "Chime/\(ChimeVersion.string) (webhook; libcurl)"

        public init(url: WebhookURL) { self.url = url }
    }

    /// What ``post(_:)`` waits with between quick retries: the real clock in production, a
    /// recording one in tests.
    public typealias Sleeper = @Sendable (Duration) async throws -> Void

    public let configuration: Configuration
    private let delivery: HTTPDelivery

    /// - Parameters:
    ///   - sleep: waits between quick retries (tests pass one that records and returns).
    ///   - jitter: a number in `0..<1` for each backoff (random by default).
    ///   - now: wall time, to read a `Retry-After` given as an HTTP date.
    public init(
        _ configuration: Configuration,
        logger: Logger = Logger(label: "chime.webhook"),
        sleep: @escaping Sleeper = { try await Task.sleep(for: $0) },
        jitter: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) },
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.configuration = configuration
        let url = configuration.url
        delivery = HTTPDelivery(
            service: "webhook",
            origin: url.origin,
            rules: configuration.delivery,
            userAgent: configuration.userAgent,
            logger: logger,
            sleep: sleep,
            jitter: jitter,
            now: now,
            redact: { HTTPDelivery.redact($0, url: url) }
        )
    }

    /// Runs `body` with a notifier and shuts it down afterwards, also when `body` throws.
    public static func withWebhookNotifier<Result: Sendable>(
        _ configuration: Configuration,
        logger: Logger = Logger(label: "chime.webhook"),
        _ body: (WebhookNotifier) async throws -> Result
    ) async throws -> Result {
        let notifier = WebhookNotifier(configuration, logger: logger)
        let result: Result
        do {
            result = try await body(notifier)
        } catch {
            try? await notifier.shutdown()
            throw error
        }
        try await notifier.shutdown()
        return result
    }

    /// Ends the notifier's thread and closes its connection. Call once, after the last post has
    /// returned (a later post fails as a delivery error); a second call does nothing.
    public func shutdown() async throws {
        await delivery.shutdown()
    }

    /// Requests waiting for the one in progress to end (for tests).
    var queuedRequests: Int { delivery.queuedRequests }

    // MARK: Notifier

    /// Posts one request per occurrence the note delivers (a summary's occurrences each under
    /// its own key, so that a summary retried after a partial failure repeats nothing a
    /// receiver keeps keys for), or one for a note that delivers none (a live status).
    /// - Throws: ``ChimeError`` `.delivery` saying what the receiver answered or why it could not
    ///   be reached; `CancellationError` when the awaiting task is cancelled.
    public func post(_ note: Note) async throws -> PostedNote {
        let url = configuration.url
        for request in Self.requests(for: note) {
            // Credentials in the URL's user info go as Basic authorization, and the URL curl gets
            // has none (so neither its messages nor a proxy's logs can show the password).
            var headers = ["Content-Type: application/json", "Idempotency-Key: \(request.idempotencyKey)"]
            if let authorization = url.authorization { headers.append("Authorization: \(authorization)") }
            try await delivery.send(
                .init(url: url.requestURL, headers: headers, body: request.body, label: request.idempotencyKey)
            )
        }
        return PostedNote(id: note.id, via: "webhook")
    }

    /// A webhook cannot take an alert back: nothing is sent.
    public func withdraw(_ shown: PostedNote) async throws {}

    /// A webhook has no buttons: nothing ever responds.
    public var responses: AsyncStream<NoteResponse> { AsyncStream { $0.finish() } }

    /// `webhook (http://host:port)`, without the path and query, which may carry a token.
    public var destination: String? { "webhook (\(configuration.url.origin))" }

    // MARK: The request

    /// One request: the occurrence's key and its JSON body.
    struct Request: Sendable, Hashable {
        var idempotencyKey: String
        var body: Data
    }

    /// The fields a receiver gets, in snake case: `event` (`reminder`, `summary` or `alert`),
    /// `id`, `kind`, `title`, `body`, `due` (ISO 8601, UTC, microseconds), `due_micros`,
    /// `missed`, `attempt`, `posted`, `urgency`, and for a summary's occurrence `summary`
    /// (the alert's title and how many occurrences it gathers).
    struct Payload: Encodable {
        struct Summary: Encodable {
            var title: String
            var count: Int
        }
        var event: String
        var id: String
        var kind: String
        var title: String
        var body: String
        var due: String
        var dueMicros: Int64
        var missed: Int
        var attempt: Int
        var posted: String
        var urgency: String
        var summary: Summary?

        enum CodingKeys: String, CodingKey {
            case event, id, kind, title, body, due, missed, attempt, posted, urgency, summary
            case dueMicros = "due_micros"
        }
    }

    static func requests(for note: Note) -> [Request] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let posted = isoMicros(note.postedAt.micros)
        func request(_ payload: Payload) -> Request {
            // Encoding strings and integers cannot fail.
            let body = (try? encoder.encode(payload)) ?? Data("{}".utf8)
            return Request(idempotencyKey: idempotencyKey(reminderID: payload.id, dueMicros: payload.dueMicros), body: body)
        }
        guard !note.deliveries.isEmpty else {
            let micros = note.postedAt.micros
            return [
                request(
                    Payload(
                        event: "alert",
                        id: note.id,
                        kind: note.category ?? "alert",
                        title: note.title,
                        body: note.body,
                        due: isoMicros(micros),
                        dueMicros: micros,
                        missed: 0,
                        attempt: 1,
                        posted: posted,
                        urgency: note.urgency.rawValue
                    )
                )
            ]
        }
        return note.deliveries.map { delivery in
            let micros = delivery.due.micros
            // A single alert says what the person would see (its family may have dressed the
            // title); a summary's occurrences each say their own reminder's.
            return request(
                Payload(
                    event: note.isSummary ? "summary" : "reminder",
                    id: delivery.reminderID,
                    kind: delivery.kind,
                    title: note.isSummary ? delivery.title : note.title,
                    body: note.isSummary ? delivery.body : note.body,
                    due: isoMicros(micros),
                    dueMicros: micros,
                    missed: delivery.missedCount,
                    attempt: delivery.attempt,
                    posted: posted,
                    urgency: note.urgency.rawValue,
                    summary: note.isSummary ? .init(title: note.title, count: note.deliveries.count) : nil
                )
            )
        }
    }

    /// `"<reminder id>@<due micros>"` as an RFC 8941 String: `\` and `"` escaped, and any byte
    /// outside printable ASCII (which an sf-string cannot hold) percent-encoded.
    static func idempotencyKey(reminderID: String, dueMicros: Int64) -> String {
        var text = "\""
        for byte in "\(reminderID)@\(dueMicros)".utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): text += "\\" + String(UnicodeScalar(byte))
            case UInt8(ascii: "%"): text += "%25"
            case 0x20...0x7E: text.unicodeScalars.append(UnicodeScalar(byte))
            default: text += String(format: "%%%02X", byte)
            }
        }
        return text + "\""
    }

    /// `2026-11-23T21:05:43.123456Z`: microseconds since 1970 in ISO 8601, UTC.
    static func isoMicros(_ micros: Int64) -> String {
        let (seconds, fraction) = (micros.floorDiv(1_000_000), micros.floorMod(1_000_000))
        let days = seconds.floorDiv(86_400)
        let inDay = seconds - days * 86_400
        let (year, month, day) = ZoneMath.civilFromDays(Int(days))
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ",
            year,
            month,
            day,
            Int(inDay / 3600),
            Int(inDay % 3600 / 60),
            Int(inDay % 60),
            Int(fraction)
        )
    }
}

extension Int64 {
    fileprivate func floorDiv(_ divisor: Int64) -> Int64 {
        let quotient = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }
    fileprivate func floorMod(_ divisor: Int64) -> Int64 { self - floorDiv(divisor) * divisor }
}

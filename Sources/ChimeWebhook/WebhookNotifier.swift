import CLibcurlLoader
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
/// Inside one ``post(_:)``: a small, bounded number of quick retries with exponential backoff
/// and jitter, only where the request may not have reached the receiver or the receiver asked
/// for it (a connection that failed, a timeout, HTTP 5xx, 408 and 429; `Retry-After` is
/// honoured up to ``Configuration/retryAfterCap``). Any other 4xx is a permanent failure, not
/// retried here. Every failure throws ``ChimeError`` `.delivery`: the scheduler then keeps the
/// occurrence due and retries it with its own, longer backoff. When the task awaiting a post is
/// cancelled, the request in flight is aborted at once and the post throws `CancellationError`.
///
/// The HTTP client is Debian's libcurl (``CurlTransport``): one handle made in `init` serves
/// every post on a thread of its own (never the caller's, never Swift's cooperative pool),
/// keeping the connection alive between alerts. ``Configuration/timeout`` bounds the whole of
/// each attempt, however slowly a receiver answers. Call ``shutdown()`` once when done (it
/// ends the thread and closes the connection), or use ``withWebhookNotifier(_:logger:_:)``.
/// libcurl's messages are shown with the URL redacted.
public final class WebhookNotifier: Notifier {
    /// How the notifier posts and retries. With the defaults one post of one occurrence takes at
    /// most 3 attempts of 10 s plus the waits between them (0.25 s and 0.5 s of backoff, or a
    /// `Retry-After` of at most 5 s each): about 40 s before the scheduler's own backoff takes over.
    public struct Configuration: Sendable {
        public var url: WebhookURL
        /// The whole of one request (connect, send, the answer's head and body), per attempt:
        /// a receiver that answers a byte at a time is cut off at it too.
        public var timeout: Duration = .seconds(10)
        /// Attempts inside one post, the first included (at least 1).
        public var maxAttempts: Int = 3
        /// The wait before the first quick retry; doubled for each after it, up to ``backoffMax``,
        /// then jittered to between half and all of it.
        public var backoffBase: Duration = .milliseconds(250)
        public var backoffMax: Duration = .seconds(2)
        /// The longest `Retry-After` waited for inside one post. A receiver that asks for longer
        /// is not retried here: the post fails, and the scheduler's backoff retries it later.
        public var retryAfterCap: Duration = .seconds(5)
        /// Sent as `User-Agent`.
        public var userAgent: String = "Chime/\(ChimeVersion.string) (webhook; libcurl)"

        public init(url: WebhookURL) { self.url = url }
    }

    /// What ``post(_:)`` waits with between quick retries: the real clock in production, a
    /// recording one in tests.
    public typealias Sleeper = @Sendable (Duration) async throws -> Void

    public let configuration: Configuration
    private let transport: CurlTransport
    private let logger: Logger
    private let sleep: Sleeper
    private let jitter: @Sendable () -> Double
    private let now: @Sendable () -> Date

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
        self.logger = logger
        self.sleep = sleep
        self.jitter = jitter
        self.now = now
        self.transport = CurlTransport()
    }

    deinit {
        // A notifier dropped without shutdown() still ends its thread.
        transport.stop()
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
        await transport.shutdown()
    }

    /// Requests waiting for the one in progress to end (for tests).
    var queuedRequests: Int { transport.queuedCount }

    // MARK: Notifier

    /// Posts one request per occurrence the note delivers (a summary's occurrences each under
    /// its own key, so that a summary retried after a partial failure repeats nothing a
    /// receiver keeps keys for), or one for a note that delivers none (a live status).
    /// - Throws: ``ChimeError`` `.delivery` saying what the receiver answered or why it could not
    ///   be reached; `CancellationError` when the awaiting task is cancelled.
    public func post(_ note: Note) async throws -> PostedNote {
        for request in Self.requests(for: note) {
            try await send(request)
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

    // MARK: Sending and retrying

    /// What one attempt came to.
    enum Outcome: Sendable, Equatable {
        case delivered
        /// Worth another quick try: the receiver may not have got it, or asked for it later.
        case transient(reason: String, retryAfter: Duration?)
        /// Not worth retrying now (a 4xx other than 408 and 429, or an error no retry can mend).
        case permanent(reason: String)
    }

    private func send(_ request: Request) async throws {
        var attempt = 1
        while true {
            try Task.checkCancellation()
            let outcome = try await tryOnce(request)
            switch outcome {
            case .delivered:
                return
            case .permanent(let reason):
                throw ChimeError(.delivery, "webhook \(configuration.url.origin) \(reason)")
            case .transient(let reason, let retryAfter):
                let attempts = max(configuration.maxAttempts, 1)
                if let retryAfter, retryAfter > configuration.retryAfterCap {
                    throw ChimeError(
                        .delivery,
                        "webhook \(configuration.url.origin) \(reason) and asked to retry after \(formatDuration(retryAfter)); "
                            + "Chime retries it later"
                    )
                }
                guard attempt < attempts else {
                    throw ChimeError(
                        .delivery,
                        "webhook \(configuration.url.origin) \(reason) (\(attempts) attempt\(attempts == 1 ? "" : "s"))"
                    )
                }
                let wait = retryAfter ?? backoff(afterAttempt: attempt)
                logger.debug(
                    "Webhook retry",
                    metadata: [
                        "webhook.key": "\(request.idempotencyKey)", "webhook.attempt": "\(attempt)",
                        "webhook.reason": "\(reason)", "webhook.wait": "\(wait)",
                    ]
                )
                do {
                    try await sleep(wait)
                } catch is CancellationError {
                    throw CancellationError()
                } catch {
                    throw ChimeError(.delivery, "webhook \(configuration.url.origin) \(reason); retry cancelled")
                }
                attempt += 1
            }
        }
    }

    /// The wait before quick retry number `attempt`: ``Configuration/backoffBase`` doubled per
    /// attempt, at most ``Configuration/backoffMax``, jittered to between half and all of it so
    /// that runners retrying together spread out.
    func backoff(afterAttempt attempt: Int) -> Duration {
        let exponent = min(max(attempt - 1, 0), 20)
        let full = min(configuration.backoffBase * (1 << exponent), configuration.backoffMax)
        let fraction = 0.5 + 0.5 * min(max(jitter(), 0), 1)
        let seconds = Double(full.components.seconds) + Double(full.components.attoseconds) / 1e18
        return .nanoseconds(Int64((seconds * fraction * 1e9).rounded()))
    }

    /// One attempt. - Throws: `CancellationError` only.
    private func tryOnce(_ request: Request) async throws -> Outcome {
        let url = configuration.url
        // Credentials in the URL's user info go as Basic authorization, and the URL curl gets has
        // none (so neither its messages nor a proxy's logs can show the password).
        var headers = ["Content-Type: application/json", "Idempotency-Key: \(request.idempotencyKey)"]
        if let authorization = url.authorization { headers.append("Authorization: \(authorization)") }
        let result = await transport.perform(
            CurlRequest(
                url: url.requestURL,
                headers: headers,
                userAgent: configuration.userAgent,
                body: request.body,
                timeout: configuration.timeout
            )
        )
        switch result {
        case .cancelled:
            throw CancellationError()
        case .failed(let code, let message):
            return Self.outcome(of: code, message: Self.redact(message, url: url), timeout: configuration.timeout)
        case .answered(let status, let reason, let headers, let body):
            return Self.outcome(status: status, reason: reason, headers: headers, body: body, now: now())
        }
    }

    /// What an answer means for retrying.
    static func outcome(status code: Int, reason: String, headers: [(String, String)], body: Data?, now: Date) -> Outcome {
        let said = "HTTP \(code)" + (reason.isEmpty ? "" : " \(reason)")
        let line = body.flatMap { firstLine(of: $0) }.map { ": \($0)" } ?? ""
        switch code {
        case 200..<300:
            return .delivered
        case 408, 429, 500..<600:
            let retryAfter = headers.first { $0.0.lowercased() == "retry-after" }.flatMap { retryAfterDuration($0.1, now: now) }
            return .transient(reason: "answered \(said)\(line)", retryAfter: retryAfter)
        default:
            // 3xx (redirects are not followed), 4xx: the receiver will answer the same again.
            return .permanent(reason: "refused the alert: \(said)\(line)")
        }
    }

    /// What a failed transfer means for retrying: a timeout, a connection that could not be made
    /// or that broke are worth another try; anything else (a TLS certificate or handshake
    /// refused, a URL curl rejects) is not.
    static func outcome(of code: CURLcode, message: String, timeout: Duration) -> Outcome {
        switch code {
        case CURLE_OPERATION_TIMEDOUT:
            return .transient(reason: "did not answer within \(formatDuration(timeout))", retryAfter: nil)
        case CURLE_COULDNT_CONNECT, CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY:
            return .transient(reason: "could not be reached (\(message))", retryAfter: nil)
        case CURLE_GOT_NOTHING, CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_PARTIAL_FILE:
            return .transient(reason: "closed the connection before answering (\(message))", retryAfter: nil)
        default:
            return .permanent(reason: "failed: \(message)")
        }
    }

    /// libcurl's message with the URL in it redacted (``WebhookURL/redacted``): curl names the
    /// URL in some messages, and its query may carry a token.
    static func redact(_ message: String, url: WebhookURL) -> String {
        var message = message
        for text in [url.text, url.requestURL] where !text.isEmpty {
            message = message.replacingOccurrences(of: text, with: WebhookURL.redacted(text))
        }
        // The path and query alone (`/hook?token=…`), as in a request line.
        if let components = URLComponents(string: url.requestURL), let query = components.percentEncodedQuery, !query.isEmpty {
            let tail = "?" + query
            let shown = WebhookURL.redacted("http://h" + tail).dropFirst("http://h".count)
            message = message.replacingOccurrences(of: tail, with: shown)
        }
        return message
    }

    /// `Retry-After` as delay-seconds or an HTTP date (RFC 9110 §10.2.3); nil when it is neither.
    static func retryAfterDuration(_ value: String, now: Date) -> Duration? {
        let value = value.trimmingCharacters(in: .whitespaces)
        if !value.isEmpty, value.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) {
            return Int64(value).map { .seconds($0) } ?? .seconds(Int64.max / 1_000_000_000_000)
        }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        guard let date = formatter.date(from: value) else { return nil }
        return .milliseconds(Int64((max(0, date.timeIntervalSince(now)) * 1000).rounded()))
    }

    /// The body's first non-blank line, at most 200 characters (one line in the error).
    static func firstLine(of body: Data) -> String? {
        let text = String(decoding: body, as: UTF8.self)
        guard let line = text.split(whereSeparator: \.isNewline).first(where: { !$0.allSatisfy(\.isWhitespace) }) else {
            return nil
        }
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        return trimmed.count > 200 ? String(trimmed.prefix(200)) + "…" : trimmed
    }
}

extension Int64 {
    fileprivate func floorDiv(_ divisor: Int64) -> Int64 {
        let quotient = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }
    fileprivate func floorMod(_ divisor: Int64) -> Int64 { self - floorDiv(divisor) * divisor }
}

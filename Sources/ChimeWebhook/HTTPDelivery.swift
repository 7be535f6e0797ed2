import CLibcurlLoader
import ChimeCore
import Foundation
import Logging

/// How a notifier over HTTP (the webhook, ntfy, Gotify) posts and retries. With the defaults one
/// post takes at most 3 attempts of 10 s plus the waits between them (0.25 s and 0.5 s of
/// backoff, or a `Retry-After` of at most 5 s each): about 40 s before the scheduler's own
/// backoff takes over.
public struct DeliveryRules: Sendable {
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

    public init() {}
}

/// What a notifier over HTTP shares: one ``CurlTransport`` (its thread, its kept-alive
/// connection) and the delivery rules, applied to each request it is handed.
///
/// Inside one ``send(_:)``: a small, bounded number of quick retries with exponential backoff
/// and jitter, only where the request may not have reached the receiver or the receiver asked
/// for it (a connection that failed, a timeout, HTTP 5xx, 408 and 429; `Retry-After` is
/// honoured up to ``DeliveryRules/retryAfterCap``). Any other 4xx (a 401 for a wrong token) is a
/// permanent failure, not retried here. Every failure throws ``ChimeError`` `.delivery`, which
/// names the service and the server's origin only: the scheduler then keeps the occurrence due
/// and retries it with its own, longer backoff. When the awaiting task is cancelled, the
/// request in flight is aborted at once and the send throws `CancellationError`.
final class HTTPDelivery: Sendable {
    /// One POST.
    struct Request: Sendable {
        var url: String
        /// `Name: value` lines.
        var headers: [String]
        var body: Data
        /// What the debug log names the request by (an idempotency key, an alert's id).
        var label: String
    }

    /// What ``send(_:)`` waits with between quick retries.
    typealias Sleeper = @Sendable (Duration) async throws -> Void

    /// `webhook`, `ntfy`, `gotify`: how messages and the log name the channel.
    let service: String
    /// `scheme://host[:port]`: all a message says of where it posts.
    let origin: String
    let rules: DeliveryRules
    let userAgent: String
    private let transport: CurlTransport
    private let logger: Logger
    private let sleep: Sleeper
    private let jitter: @Sendable () -> Double
    private let now: @Sendable () -> Date
    /// Makes a message fit to show: the URL's secrets and any token written as `***`.
    private let redact: @Sendable (String) -> String

    init(
        service: String,
        origin: String,
        rules: DeliveryRules,
        userAgent: String,
        logger: Logger,
        sleep: @escaping Sleeper,
        jitter: @escaping @Sendable () -> Double,
        now: @escaping @Sendable () -> Date,
        redact: @escaping @Sendable (String) -> String
    ) {
        self.service = service
        self.origin = origin
        self.rules = rules
        self.userAgent = userAgent
        self.logger = logger
        self.sleep = sleep
        self.jitter = jitter
        self.now = now
        self.redact = redact
        self.transport = CurlTransport()
    }

    deinit {
        // A notifier dropped without shutdown() still ends its thread.
        transport.stop()
    }

    /// Ends the transport's thread and closes its connection; a second call does nothing.
    func shutdown() async { await transport.shutdown() }

    /// Requests waiting for the one in progress to end (for tests).
    var queuedRequests: Int { transport.queuedCount }

    /// What one attempt came to.
    enum Outcome: Sendable, Equatable {
        case delivered
        /// Worth another quick try: the receiver may not have got it, or asked for it later.
        case transient(reason: String, retryAfter: Duration?)
        /// Not worth retrying now (a 4xx other than 408 and 429, or an error no retry can mend).
        case permanent(reason: String)
    }

    /// Posts `request`, retrying it by the rules.
    /// - Throws: ``ChimeError`` `.delivery`; `CancellationError` when the awaiting task is cancelled.
    func send(_ request: Request) async throws {
        var attempt = 1
        while true {
            try Task.checkCancellation()
            let outcome = try await tryOnce(request)
            switch outcome {
            case .delivered:
                return
            case .permanent(let reason):
                throw failure(reason)
            case .transient(let reason, let retryAfter):
                let attempts = max(rules.maxAttempts, 1)
                if let retryAfter, retryAfter > rules.retryAfterCap {
                    throw failure("\(reason) and asked to retry after \(formatDuration(retryAfter)); Chime retries it later")
                }
                guard attempt < attempts else { throw failure("\(reason) (\(attempts) attempt\(attempts == 1 ? "" : "s"))") }
                let wait = retryAfter ?? backoff(afterAttempt: attempt)
                logger.debug(
                    "\(service.prefix(1).uppercased() + service.dropFirst()) retry",
                    metadata: [
                        "\(service).key": "\(request.label)", "\(service).attempt": "\(attempt)",
                        "\(service).reason": "\(redact(reason))", "\(service).wait": "\(wait)",
                    ]
                )
                do {
                    try await sleep(wait)
                } catch is CancellationError {
                    throw CancellationError()
                } catch {
                    throw failure("\(reason); retry cancelled")
                }
                attempt += 1
            }
        }
    }

    /// `<service> <origin> <reason>`, as one line fit to show.
    private func failure(_ reason: String) -> ChimeError {
        ChimeError(.delivery, redact("\(service) \(origin) \(reason)"))
    }

    /// The wait before quick retry number `attempt`: ``DeliveryRules/backoffBase`` doubled per
    /// attempt, at most ``DeliveryRules/backoffMax``, jittered to between half and all of it so
    /// that runners retrying together spread out.
    func backoff(afterAttempt attempt: Int) -> Duration {
        let exponent = min(max(attempt - 1, 0), 20)
        let full = min(rules.backoffBase * (1 << exponent), rules.backoffMax)
        let fraction = 0.5 + 0.5 * min(max(jitter(), 0), 1)
        let seconds = Double(full.components.seconds) + Double(full.components.attoseconds) / 1e18
        return .nanoseconds(Int64((seconds * fraction * 1e9).rounded()))
    }

    /// One attempt. - Throws: `CancellationError` only.
    private func tryOnce(_ request: Request) async throws -> Outcome {
        let result = await transport.perform(
            CurlRequest(url: request.url, headers: request.headers, userAgent: userAgent, body: request.body, timeout: rules.timeout)
        )
        switch result {
        case .cancelled:
            throw CancellationError()
        case .failed(let code, let message):
            return Self.outcome(of: code, message: redact(message), timeout: rules.timeout)
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

    /// `message` with `url` in it redacted (``WebhookURL/redacted``): curl names the URL in
    /// some messages, and its query may carry a token.
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

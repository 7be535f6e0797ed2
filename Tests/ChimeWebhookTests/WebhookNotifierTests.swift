import ChimeCore
import Foundation
import Synchronization
import Testing

@testable import ChimeWebhook

/// The waits the notifier asked for between quick retries; returns at once (no real sleeping).
final class RecordedSleeps: Sendable {
    private let waits = Mutex<[Duration]>([])
    var all: [Duration] { waits.withLock { $0 } }
    var sleeper: WebhookNotifier.Sleeper { { [self] wait in waits.withLock { $0.append(wait) } } }
}

/// A 2026 instant with microseconds, as the ledger keeps them.
let dueMicros: Int64 = 1_795_467_900_123_456

func note(id: String = "tea", due micros: Int64 = dueMicros, kind: String = "plain", attempt: Int = 1, missed: Int = 0) -> Note {
    Note(
        id: id,
        title: "Tea is ready",
        body: "Green, 3 minutes",
        deliveries: [
            Note.Delivery(
                reminderID: id,
                title: "Tea is ready",
                body: "Green, 3 minutes",
                due: Date(micros: micros),
                missedCount: missed,
                kind: kind,
                attempt: attempt
            )
        ],
        postedAt: Date(micros: micros + 250_000)
    )
}

/// Runs `body` with a notifier on `server`'s URL whose quick retries sleep through `sleeps`,
/// and shuts both down afterwards.
func withNotifier<R: Sendable>(
    _ server: LoopbackHTTPServer,
    sleeps: RecordedSleeps = RecordedSleeps(),
    url: String? = nil,
    configure: (inout WebhookNotifier.Configuration) -> Void = { _ in },
    _ body: (WebhookNotifier) async throws -> R
) async throws -> R {
    var configuration = WebhookNotifier.Configuration(url: try WebhookURL(url ?? server.url))
    configure(&configuration)
    // Jitter 1: each backoff is the whole of its exponential step, so tests can name it.
    let notifier = WebhookNotifier(configuration, sleep: sleeps.sleeper, jitter: { 1 })
    do {
        let result = try await body(notifier)
        try await notifier.shutdown()
        await server.stop()
        return result
    } catch {
        try? await notifier.shutdown()
        await server.stop()
        throw error
    }
}

/// The ChimeError a post threw.
func deliveryError(_ post: () async throws -> Void) async -> ChimeError? {
    do {
        try await post()
        return nil
    } catch let error as ChimeError {
        return error
    } catch {
        Issue.record("not a ChimeError: \(error)")
        return nil
    }
}

@Suite struct WebhookNotifierTests {
    @Test func postsTheOccurrenceAsJSONWithItsKeyAndHeaders() async throws {
        let server = try await LoopbackHTTPServer.start([.ok])
        let posted = try await withNotifier(server) { try await $0.post(note(kind: "dose", attempt: 2, missed: 3)) }

        #expect(posted.id == "tea")
        #expect(posted.via == "webhook")
        let requests = server.received
        try #require(requests.count == 1)
        let request = requests[0]
        #expect(request.method == .POST)
        #expect(request.uri == "/hook?token=secret")
        #expect(request.headers["Content-Type"] == ["application/json"])
        #expect(request.headers["Idempotency-Key"] == ["\"tea@\(dueMicros)\""])
        let agent = try #require(request.headers["User-Agent"].first)
        #expect(agent.hasPrefix("Chime/"))
        #expect(agent.contains("webhook"))
        #expect(agent.hasSuffix("(webhook; libcurl)"))
        #expect(request.headers["Expect"] == [])
        let json = try request.json()
        #expect(json["event"] as? String == "reminder")
        #expect(json["id"] as? String == "tea")
        #expect(json["kind"] as? String == "dose")
        #expect(json["title"] as? String == "Tea is ready")
        #expect(json["body"] as? String == "Green, 3 minutes")
        #expect(json["due"] as? String == "2026-11-23T21:05:00.123456Z")
        #expect((json["due_micros"] as? NSNumber)?.int64Value == dueMicros)
        #expect(json["missed"] as? Int == 3)
        #expect(json["attempt"] as? Int == 2)
        #expect(json["posted"] as? String == "2026-11-23T21:05:00.373456Z")
        #expect(json["summary"] == nil)
    }

    @Test func oneClientServesEveryPostOnOneKeptAliveConnection() async throws {
        let server = try await LoopbackHTTPServer.start([])
        let configuration = WebhookNotifier.Configuration(url: try WebhookURL(server.url))
        try await WebhookNotifier.withWebhookNotifier(configuration) { notifier in
            for day in 0..<3 { _ = try await notifier.post(note(due: dueMicros + Int64(day) * 86_400_000_000)) }
        }
        await server.stop()

        let ports = server.received.map(\.clientPort)
        #expect(ports.count == 3)
        #expect(ports[0] != nil)
        #expect(Set(ports).count == 1)
    }

    @Test func sendsTheURLsCredentialsAsBasicAuthorizationAndNotInTheRequestLine() async throws {
        let server = try await LoopbackHTTPServer.start([.ok, .ok])
        let url = "http://bob:p%40ss%3Aword@127.0.0.1:\(server.port)/hook?token=secret"
        _ = try await withNotifier(server, url: url) { try await $0.post(note()) }
        let plain = try await LoopbackHTTPServer.start([.ok])
        _ = try await withNotifier(plain) { try await $0.post(note()) }

        let request = try #require(server.received.first)
        // RFC 7617: base64 of "user:password", the user info percent-decoded.
        #expect(request.headers["Authorization"] == ["Basic " + Data("bob:p@ss:word".utf8).base64EncodedString()])
        #expect(request.uri == "/hook?token=secret")
        #expect(plain.received.first?.headers["Authorization"] == [])
    }

    @Test func keepsOneKeyAcrossRetriesOfAnOccurrenceAndChangesItPerOccurrence() async throws {
        let server = try await LoopbackHTTPServer.start([.answer(.serviceUnavailable), .ok, .ok])
        let later = dueMicros + 86_400_000_000
        try await withNotifier(server) { notifier in
            _ = try await notifier.post(note())
            _ = try await notifier.post(note(due: later))
        }

        let keys = server.received.flatMap { $0.headers["Idempotency-Key"] }
        #expect(keys == ["\"tea@\(dueMicros)\"", "\"tea@\(dueMicros)\"", "\"tea@\(later)\""])
    }

    @Test func postsEachOccurrenceOfASummaryUnderItsOwnKey() async throws {
        let server = try await LoopbackHTTPServer.start([])
        let summary = Note(
            id: "summary",
            title: "2 missed reminders",
            deliveries: [
                Note.Delivery(reminderID: "tea", title: "Tea", due: Date(micros: dueMicros)),
                Note.Delivery(reminderID: "walk", title: "Walk", due: Date(micros: dueMicros + 1)),
            ],
            postedAt: Date(micros: dueMicros + 60_000_000)
        )
        try await withNotifier(server) { _ = try await $0.post(summary) }

        let received = server.received
        #expect(received.flatMap { $0.headers["Idempotency-Key"] } == ["\"tea@\(dueMicros)\"", "\"walk@\(dueMicros + 1)\""])
        let first = try received[0].json()
        #expect(first["event"] as? String == "summary")
        #expect(first["title"] as? String == "Tea")
        #expect((first["summary"] as? [String: Any])?["count"] as? Int == 2)
    }

    @Test func deliversAfterOneRetryWhenTheReceiverWasUnavailable() async throws {
        let server = try await LoopbackHTTPServer.start([.answer(.serviceUnavailable, body: "down\n"), .ok])
        let sleeps = RecordedSleeps()
        let posted = try await withNotifier(server, sleeps: sleeps) { try await $0.post(note()) }

        #expect(posted.via == "webhook")
        #expect(server.received.count == 2)
        // One backoff, the first step (250 ms with jitter 1), through the injected sleeper.
        #expect(sleeps.all == [.milliseconds(250)])
    }

    @Test func backsOffExponentiallyAndFailsAfterTheLastAttempt() async throws {
        let server = try await LoopbackHTTPServer.start(Array(repeating: .answer(.internalServerError, body: "boom"), count: 4))
        let sleeps = RecordedSleeps()
        let error = await deliveryError {
            try await withNotifier(server, sleeps: sleeps, configure: { $0.delivery.maxAttempts = 4 }) { _ = try await $0.post(note()) }
        }

        #expect(error?.code == .delivery)
        #expect(error?.message.contains("HTTP 500 Internal Server Error: boom") == true)
        #expect(error?.message.contains("4 attempts") == true)
        #expect(server.received.count == 4)
        #expect(sleeps.all == [.milliseconds(250), .milliseconds(500), .seconds(1)])
    }

    @Test func waitsTheRetryAfterATooManyRequestsAnswerAsks() async throws {
        let server = try await LoopbackHTTPServer.start([.answer(.tooManyRequests, headers: [("Retry-After", "3")]), .ok])
        let sleeps = RecordedSleeps()
        _ = try await withNotifier(server, sleeps: sleeps) { try await $0.post(note()) }

        #expect(server.received.count == 2)
        #expect(sleeps.all == [.seconds(3)])
    }

    @Test func leavesARetryAfterBeyondTheCapToTheScheduler() async throws {
        let server = try await LoopbackHTTPServer.start([.answer(.tooManyRequests, headers: [("Retry-After", "120")])])
        let sleeps = RecordedSleeps()
        let error = await deliveryError {
            try await withNotifier(server, sleeps: sleeps) { _ = try await $0.post(note()) }
        }

        #expect(error?.code == .delivery)
        #expect(error?.message.contains("HTTP 429") == true)
        #expect(error?.message.contains("retry after 2m") == true)
        #expect(server.received.count == 1)
        #expect(sleeps.all.isEmpty)
    }

    @Test func aClientErrorIsPermanentNamesTheStatusAndIsNotRetried() async throws {
        let server = try await LoopbackHTTPServer.start([.answer(.badRequest, body: "\n  missing field 'due'  \nsecond line\n")])
        let sleeps = RecordedSleeps()
        let error = await deliveryError {
            try await withNotifier(server, sleeps: sleeps) { _ = try await $0.post(note()) }
        }

        let message = try #require(error?.message)
        #expect(error?.code == .delivery)
        #expect(message.contains("refused the alert: HTTP 400 Bad Request: missing field 'due'"))
        #expect(!message.contains("second line"))
        #expect(!message.contains("token=secret"))
        #expect(server.received.count == 1)
        #expect(sleeps.all.isEmpty)
    }

    @Test(arguments: [408, 429, 500, 502, 503, 504])
    func aStatusWorthRetryingIsRetried(_ code: Int) async throws {
        let server = try await LoopbackHTTPServer.start([.answer(HTTPResponseStatus(statusCode: code)), .ok])
        let sleeps = RecordedSleeps()
        _ = try await withNotifier(server, sleeps: sleeps) { try await $0.post(note()) }

        #expect(server.received.count == 2)
        #expect(sleeps.all.count == 1)
    }

    @Test(arguments: [301, 400, 401, 403, 404, 410, 413, 422])
    func anyOtherStatusIsPermanentAndNotRetried(_ code: Int) async throws {
        let server = try await LoopbackHTTPServer.start([.answer(HTTPResponseStatus(statusCode: code)), .ok])
        let sleeps = RecordedSleeps()
        let error = await deliveryError {
            try await withNotifier(server, sleeps: sleeps) { _ = try await $0.post(note()) }
        }

        #expect(error?.code == .delivery)
        #expect(error?.message.contains("refused the alert: HTTP \(code)") == true)
        #expect(server.received.count == 1)
        #expect(sleeps.all.isEmpty)
    }

    @Test func anAlertThatDeliversNoOccurrenceIsPostedOnceKeyedByItsPostingTime() async throws {
        // A family's live status (a focus session's tree): no ledger occurrence behind it.
        let server = try await LoopbackHTTPServer.start([])
        var live = Note(id: "focus-live", title: "Focus: 12m left", postedAt: Date(micros: dueMicros))
        live.category = "x-chime.focus"
        _ = try await withNotifier(server) { try await $0.post(live) }

        let received = server.received
        try #require(received.count == 1)
        #expect(received[0].headers["Idempotency-Key"] == ["\"focus-live@\(dueMicros)\""])
        let json = try received[0].json()
        #expect(json["event"] as? String == "alert")
        #expect(json["kind"] as? String == "x-chime.focus")
        #expect(json["title"] as? String == "Focus: 12m left")
    }

    @Test func aReceiverThatNeverAnswersTimesOutWithinTheBound() async throws {
        let server = try await LoopbackHTTPServer.start([.silence, .silence])
        let clock = ContinuousClock()
        let start = clock.now
        let error = await deliveryError {
            try await withNotifier(
                server,
                configure: {
                    $0.delivery.timeout = .milliseconds(200)
                    $0.delivery.maxAttempts = 2
                }
            ) { _ = try await $0.post(note()) }
        }
        let elapsed = clock.now - start

        #expect(error?.code == .delivery)
        #expect(error?.message.contains("did not answer within 200.0ms") == true)
        #expect(server.received.count == 2)
        // Two attempts of 200 ms each (the backoff between them is not slept), with room for a busy
        // machine (a CI dry run beside three builds stalled the whole test process for 24 s): a
        // receiver that never answers would hold the post for ever.
        #expect(elapsed >= .milliseconds(400))
        #expect(elapsed < .seconds(90))
    }

    @Test(arguments: [false, true])
    func aReceiverThatTricklesItsAnswerIsCutOffAtTheTimeout(afterHead: Bool) async throws {
        // A byte every 20 ms, from the status line on or after a head sent at once: each byte
        // arrives well within the timeout, yet the attempt as a whole is bounded by it.
        let server = try await LoopbackHTTPServer.start([.trickle(afterHead: afterHead), .trickle(afterHead: afterHead)])
        let clock = ContinuousClock()
        let start = clock.now
        let error = await deliveryError {
            try await withNotifier(
                server,
                configure: {
                    $0.delivery.timeout = .milliseconds(300)
                    $0.delivery.maxAttempts = 2
                }
            ) { _ = try await $0.post(note()) }
        }
        let elapsed = clock.now - start

        // Bounded by the timeout, not by the trickle (60,000 bytes at 20 ms each: 20 minutes).
        #expect(error?.code == .delivery)
        #expect(error?.message.contains("did not answer within 300.0ms") == true, "\(String(describing: error))")
        #expect(server.received.count == 2)
        #expect(elapsed >= .milliseconds(600))
        #expect(elapsed < .seconds(90))
    }

    @Test func cancellingThePostAbortsTheRequestInFlightAndThrowsCancellationError() async throws {
        // A receiver that never answers and a timeout of 30 s: only the cancellation ends the post.
        let server = try await LoopbackHTTPServer.start([.silence])
        let thirtySeconds: (inout WebhookNotifier.Configuration) -> Void = { $0.delivery.timeout = .seconds(30) }
        try await withNotifier(server, configure: thirtySeconds) { notifier in
            let post = Task { try await notifier.post(note()) }
            // A deadline, not a pause: the post's task starts on Swift's cooperative pool, which
            // the run's long CPU-bound tests may hold for seconds on a 2-core machine.
            #expect(await server.waitUntilReceived(1, within: .seconds(60)))
            let clock = ContinuousClock()
            let start = clock.now
            post.cancel()
            let result = await post.result
            let elapsed = clock.now - start

            #expect(elapsed < .seconds(20))
            switch result {
            case .success: Issue.record("the post was delivered")
            case .failure(let error): #expect(error is CancellationError, "\(error)")
            }
            // The notifier serves the next post (on a new connection: the aborted one is closed).
            _ = try await notifier.post(note(due: dueMicros + 1))
            let received = server.received
            #expect(received.count == 2)
            #expect(received.count == 2 && received[0].clientPort != received[1].clientPort)
        }
    }

    @Test func cancellingAPostQueuedBehindAnotherEndsItAtOnce() async throws {
        // Posts on one notifier take turns: the second waits behind the first (a silent receiver,
        // 30 s); cancelled, it leaves the queue without waiting for its turn and sends nothing.
        let server = try await LoopbackHTTPServer.start([.silence])
        let thirtySeconds: (inout WebhookNotifier.Configuration) -> Void = { $0.delivery.timeout = .seconds(30) }
        try await withNotifier(server, configure: thirtySeconds) { notifier in
            let first = Task { try await notifier.post(note()) }
            // (A deadline: the pool may be held by other tests for seconds, as above.)
            #expect(await server.waitUntilReceived(1, within: .seconds(60)))
            let second = Task { try await notifier.post(note(due: dueMicros + 1)) }
            let clock = ContinuousClock()
            let queued = clock.now
            while notifier.queuedRequests < 1 && clock.now - queued < .seconds(60) { await Task.yield() }
            #expect(notifier.queuedRequests == 1)
            let start = clock.now
            second.cancel()
            await #expect(throws: CancellationError.self) { try await second.value }
            #expect(clock.now - start < .seconds(5))
            #expect(server.received.count == 1)
            #expect(notifier.queuedRequests == 0)
            first.cancel()
            await #expect(throws: CancellationError.self) { try await first.value }
        }
    }

    @Test func aPostInATaskAlreadyCancelledSendsNothing() async throws {
        let server = try await LoopbackHTTPServer.start([])
        try await withNotifier(server) { notifier in
            let post = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                return try await notifier.post(note())
            }
            await #expect(throws: CancellationError.self) { try await post.value }
        }
        #expect(server.received.isEmpty)
    }

    @Test func postsInFlightTakeNoThreadOfTheCooperativePool() async throws {
        // More posts waiting on silent receivers than the cooperative pool has threads (one per
        // core): had a transfer blocked a pool thread, the later posts could not even start
        // (nor this test's own waits resume) before the first ones timed out after 30 s.
        let count = ProcessInfo.processInfo.activeProcessorCount + 2
        let servers = try await (0..<count).asyncMap { _ in try await LoopbackHTTPServer.start([.silence]) }
        let notifiers = try servers.map { server in
            var configuration = WebhookNotifier.Configuration(url: try WebhookURL(server.url))
            configuration.delivery.timeout = .seconds(30)
            return WebhookNotifier(configuration, sleep: RecordedSleeps().sleeper)
        }
        let clock = ContinuousClock()
        let start = clock.now
        let posts = notifiers.map { notifier in Task { try await notifier.post(note()) } }
        // (25 s, under the posts' 30 s: room for a loaded test run, where other suites' store
        // calls hold the pool's threads for seconds, and still less than a blocked transfer takes.)
        for server in servers { #expect(await server.waitUntilReceived(1, within: .seconds(25))) }
        // A task on the pool still runs at once.
        #expect(await Task.detached { 42 }.value == 42)
        #expect(clock.now - start < .seconds(25))
        for post in posts { post.cancel() }
        for post in posts { _ = await post.result }
        for notifier in notifiers { try await notifier.shutdown() }
        for server in servers { await server.stop() }
    }

    @Test func curlsMessagesShowTheURLRedacted() throws {
        let url = try WebhookURL("http://bob:pw@127.0.0.1:9/hook?token=secret")
        let message = HTTPDelivery.redact(
            "Failed to connect to http://127.0.0.1:9/hook?token=secret (POST /hook?token=secret); from http://bob:pw@127.0.0.1:9/hook?token=secret",
            url: url
        )
        #expect(!message.contains("secret"), "\(message)")
        #expect(!message.contains("pw"), "\(message)")
        #expect(message.contains("127.0.0.1:9/hook?token=***"), "\(message)")
    }

    @Test func aRefusedConnectionIsADeliveryError() async throws {
        // A port that was just free: the server is stopped before the post.
        let server = try await LoopbackHTTPServer.start([])
        let url = server.url
        await server.stop()
        let sleeps = RecordedSleeps()
        let error = await deliveryError {
            try await withNotifier(server, sleeps: sleeps, url: url) { _ = try await $0.post(note()) }
        }

        #expect(error?.code == .delivery)
        #expect(error?.message.contains("could not be reached") == true)
        #expect(error?.message.contains("3 attempts") == true)
        #expect(sleeps.all.count == 2)
    }

    @Test func anHTTPSURLOnAPlainHTTPServerIsADeliveryError() async throws {
        // The TLS handshake meets a plain HTTP/1.1 server: it fails, within the timeout, as a delivery error.
        let server = try await LoopbackHTTPServer.start([])
        let sleeps = RecordedSleeps()
        let error = await deliveryError {
            try await withNotifier(
                server,
                sleeps: sleeps,
                url: "https://127.0.0.1:\(server.port)/hook",
                configure: { $0.delivery.timeout = .seconds(1) }
            ) {
                _ = try await $0.post(note())
            }
        }

        #expect(error?.code == .delivery)
        #expect(error?.message.hasPrefix("webhook https://127.0.0.1:\(server.port) ") == true, "\(String(describing: error))")
        // A refused handshake (the certificate, the protocol) is not retried inside the post.
        #expect(error?.message.contains(" failed: ") == true, "\(String(describing: error))")
        #expect(server.received.isEmpty)
        // No backoff between attempts: one attempt. (Not a wall-clock bound: on a loaded CI
        // machine a bound of 5 s failed at 12 s; the injected sleeps say what was waited for.)
        #expect(sleeps.all.isEmpty)
    }

    @Test(arguments: ["ftp://example.com/hook", "http://", "127.0.0.1:8080/hook", "http:/hook", "", "http://a b/hook", "hook"])
    func aBadURLIsOneLineNamingItAndWhatIsAccepted(_ text: String) {
        #expect(throws: ChimeError.self) { try WebhookURL(text) }
        do {
            _ = try WebhookURL(text)
        } catch {
            #expect(error.code == .usage)
            #expect(
                error.message
                    == "invalid webhook URL '\(text)': expected an http:// or https:// URL with a host, such as http://127.0.0.1:8080/hook"
            )
            #expect(!error.message.contains("\n"))
        }
    }

    @Test func aBadURLIsNamedWithItsSecretsRedacted() {
        #expect(throws: ChimeError.self) { try WebhookURL("https://bob:pw@hooks.example:0/h?token=secret") }
        do {
            _ = try WebhookURL("https://bob:pw@hooks.example:0/h?token=secret")
        } catch {
            #expect(error.message.hasPrefix("invalid webhook URL 'https://bob:***@hooks.example:0/h?token=***': expected "), "\(error)")
        }
    }

    @Test(arguments: ["http://127.0.0.1:8080/hook", "HTTPS://hooks.example.com/x?token=1", "http://[::1]:9/"])
    func aGoodURLIsAccepted(_ text: String) throws {
        let url = try WebhookURL(text)
        #expect(url.text == text)
        #expect(!url.origin.contains("token"))
    }

    @Test func formatsTheDueInstantAndTheKey() {
        #expect(WebhookNotifier.isoMicros(0) == "1970-01-01T00:00:00.000000Z")
        #expect(WebhookNotifier.isoMicros(-1) == "1969-12-31T23:59:59.999999Z")
        #expect(WebhookNotifier.isoMicros(dueMicros) == "2026-11-23T21:05:00.123456Z")
        #expect(WebhookNotifier.idempotencyKey(reminderID: "a\"b\\é", dueMicros: 5) == #""a\"b\\%C3%A9@5""#)
    }

    @Test func readsRetryAfterAsSecondsOrAnHTTPDate() {
        let now = Date(timeIntervalSince1970: 1_445_412_480)  // Wed, 21 Oct 2015 07:28:00 GMT
        #expect(HTTPDelivery.retryAfterDuration("7", now: now) == .seconds(7))
        #expect(HTTPDelivery.retryAfterDuration("Wed, 21 Oct 2015 07:28:30 GMT", now: now) == .seconds(30))
        #expect(HTTPDelivery.retryAfterDuration("soon", now: now) == nil)
    }
}

extension Sequence {
    fileprivate func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var result: [T] = []
        for element in self { result.append(try await transform(element)) }
        return result
    }
}

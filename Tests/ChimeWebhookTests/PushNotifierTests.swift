import ChimeCore
import Foundation
import Logging
import Synchronization
import Testing

@testable import ChimeWebhook

/// Loopback servers that answer as ntfy and Gotify document it: ntfy's JSON publish on `POST /`
/// (https://docs.ntfy.sh/publish/#publish-as-json, errors as `{"code":40101,"http":401,…}`),
/// Gotify's `POST /message` with `X-Gotify-Key` (https://gotify.net/api-docs).
enum PushServers {
    static let ntfyToken = "tk_AgQdq7mVBoFD37zQVN29RhuMzNIz2"
    static let gotifyToken = "AWH1dDpZ5bh.MaT"

    static func json(_ status: Int, _ object: [String: Any]) -> LoopbackHTTPServer.Reply {
        let body = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])).map { String(decoding: $0, as: UTF8.self) }
        return .answer(HTTPResponseStatus(statusCode: status), headers: [("Content-Type", "application/json")], body: (body ?? "{}") + "\n")
    }

    /// ntfy with access control: the topic needs `Authorization: Bearer <ntfyToken>`.
    static func ntfy(_ request: LoopbackHTTPServer.Received) -> LoopbackHTTPServer.Reply {
        guard request.method == .POST, request.uri == "/" else {
            return json(404, ["code": 40401, "http": 404, "error": "page not found"])
        }
        guard request.headers["Authorization"] == ["Bearer \(ntfyToken)"] else {
            return json(401, ["code": 40101, "http": 401, "error": "unauthorized", "link": "https://ntfy.sh/docs/publish/#authentication"])
        }
        guard let message = try? request.json(), let topic = message["topic"] as? String, PushSettings.isTopic(topic) else {
            return json(400, ["code": 40009, "http": 400, "error": "invalid request: topic invalid"])
        }
        if let priority = message["priority"] as? Int, !(1...5).contains(priority) {
            return json(400, ["code": 40007, "http": 400, "error": "invalid priority"])
        }
        var answer: [String: Any] = ["id": "hwQ2YpKdmg", "time": 1_795_467_900, "event": "message", "topic": topic]
        for key in ["title", "message", "priority", "tags"] { answer[key] = message[key] }
        return json(200, answer)
    }

    /// Gotify: an application's token in `X-Gotify-Key`, a message with text.
    static func gotify(_ request: LoopbackHTTPServer.Received) -> LoopbackHTTPServer.Reply {
        guard request.method == .POST, request.uri == "/message" else {
            return json(404, ["error": "Not Found", "errorCode": 404, "errorDescription": "page not found"])
        }
        guard request.headers["X-Gotify-Key"] == [gotifyToken] else {
            return json(
                401,
                [
                    "error": "Unauthorized", "errorCode": 401,
                    "errorDescription": "you need to provide a valid access token or user credentials to access this api",
                ]
            )
        }
        guard let message = try? request.json(), let text = message["message"] as? String, !text.isEmpty else {
            return json(400, ["error": "Bad Request", "errorCode": 400, "errorDescription": "Field 'message' is required"])
        }
        var answer: [String: Any] = ["id": 25, "appid": 5, "date": "2026-11-23T21:05:00.373456Z", "message": text]
        answer["title"] = message["title"]
        answer["priority"] = message["priority"]
        return json(200, answer)
    }
}

/// Log lines a test can read back (to check that no token reaches them).
final class RecordedLog: LogHandler, @unchecked Sendable {
    private let lines = Mutex<[String]>([])
    var all: [String] { lines.withLock { $0 } }
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }
    func log(event: LogEvent) {
        let text = "\(event.message) \(event.metadata ?? [:])"
        lines.withLock { $0.append(text) }
    }
}

@Suite struct PushNotifierTests {
    func plainNote(urgency: Note.Urgency = .normal, body: String = "Green, 3 minutes", answerable: Bool = true) -> Note {
        var note = note()
        note.body = body
        note.urgency = urgency
        if answerable {
            note.actions = [.init(key: "done", label: "Done"), .init(key: "snooze", label: "Snooze")]
            note.answerInstead = "Answer: chime done tea (or chime snooze tea)"
        }
        return note
    }

    /// Posts `notes` to `server` as `service`, and shuts both down.
    func push(
        _ notes: [Note],
        to server: LoopbackHTTPServer,
        _ service: PushNotifier.Service,
        token: String?,
        sleeps: RecordedSleeps = RecordedSleeps(),
        log: RecordedLog = RecordedLog()
    ) async throws -> [PostedNote] {
        let configuration = PushNotifier.Configuration(
            service,
            server: try WebhookURL.server("http://127.0.0.1:\(server.port)", root: true),
            token: token
        )
        let notifier = PushNotifier(configuration, logger: Logger(label: "test") { _ in log }, sleep: sleeps.sleeper, jitter: { 1 })
        defer { _ = notifier }
        do {
            var posted: [PostedNote] = []
            for note in notes { posted.append(try await notifier.post(note)) }
            await notifier.shutdown()
            await server.stop()
            return posted
        } catch {
            await notifier.shutdown()
            await server.stop()
            throw error
        }
    }

    // MARK: ntfy

    @Test func ntfyPublishesJSONToTheRootWithTheTopicTheBearerTokenAndNoButtons() async throws {
        let server = try await LoopbackHTTPServer.start([], responder: PushServers.ntfy)
        let posted = try await push([plainNote()], to: server, .ntfy(topic: "chime-alerts"), token: PushServers.ntfyToken)

        #expect(posted.map(\.via) == ["ntfy"])
        let request = try #require(server.received.first)
        #expect(server.received.count == 1)
        #expect(request.method == .POST)
        #expect(request.uri == "/")
        #expect(request.headers["Authorization"] == ["Bearer \(PushServers.ntfyToken)"])
        #expect(request.headers["Content-Type"] == ["application/json"])
        #expect(request.headers["User-Agent"].first?.hasSuffix("(ntfy; libcurl)") == true)
        let json = try request.json()
        #expect(json["topic"] as? String == "chime-alerts")
        #expect(json["title"] as? String == "Tea is ready")
        #expect(json["message"] as? String == "Green, 3 minutes\n\nAnswer: chime done tea (or chime snooze tea)")
        #expect(json["priority"] as? Int == 3)
        #expect(json["tags"] as? [String] == ["bell"])
        // ntfy's `http` actions run on the phone and cannot reach the runner: none are sent.
        #expect(json["actions"] == nil)
    }

    @Test(arguments: [(Note.Urgency.low, 2), (.normal, 3), (.critical, 5)])
    func ntfyPriorityFollowsTheUrgency(_ urgency: Note.Urgency, _ priority: Int) async throws {
        let server = try await LoopbackHTTPServer.start([], responder: PushServers.ntfy)
        _ = try await push([plainNote(urgency: urgency)], to: server, .ntfy(topic: "t"), token: PushServers.ntfyToken)
        #expect(try server.received.first?.json()["priority"] as? Int == priority)
    }

    @Test func anAlertWithoutBodyOrButtonsIsItsTitleAsTheMessage() async throws {
        let server = try await LoopbackHTTPServer.start([], responder: PushServers.ntfy)
        _ = try await push([plainNote(body: "", answerable: false)], to: server, .ntfy(topic: "t"), token: PushServers.ntfyToken)
        let json = try #require(try server.received.first?.json())
        #expect(json["message"] as? String == "Tea is ready")
        #expect(json["title"] == nil)
    }

    @Test func aSummaryIsOnePush() async throws {
        let server = try await LoopbackHTTPServer.start([], responder: PushServers.ntfy)
        let summary = Note(
            id: "summary",
            title: "2 missed reminders",
            body: "Tea\nWalk",
            deliveries: [
                Note.Delivery(reminderID: "tea", title: "Tea", due: Date(micros: dueMicros)),
                Note.Delivery(reminderID: "walk", title: "Walk", due: Date(micros: dueMicros + 1)),
            ],
            postedAt: Date(micros: dueMicros + 60_000_000)
        )
        _ = try await push([summary], to: server, .ntfy(topic: "t"), token: PushServers.ntfyToken)
        #expect(server.received.count == 1)
        #expect(try server.received.first?.json()["title"] as? String == "2 missed reminders")
    }

    @Test func ntfyWithoutATokenSendsNoAuthorization() async throws {
        let server = try await LoopbackHTTPServer.start([.ok])
        _ = try await push([plainNote()], to: server, .ntfy(topic: "t"), token: nil)
        #expect(server.received.first?.headers["Authorization"] == [])
    }

    @Test func aWrongTokenIsRefusedOnceReportedAsADeliveryErrorAndNeverShown() async throws {
        let server = try await LoopbackHTTPServer.start([], responder: PushServers.ntfy)
        let sleeps = RecordedSleeps()
        let log = RecordedLog()
        let wrong = "tk_wrongwrongwrongwrongwrongwro"
        let error = await deliveryError {
            _ = try await push([plainNote()], to: server, .ntfy(topic: "t"), token: wrong, sleeps: sleeps, log: log)
        }

        let message = try #require(error?.message)
        #expect(error?.code == .delivery)
        #expect(message.hasPrefix("ntfy http://127.0.0.1:\(server.port) refused the alert: HTTP 401 Unauthorized: "), "\(message)")
        #expect(message.contains("unauthorized"))
        #expect(!message.contains(wrong))
        // Permanent: not retried inside the post (the scheduler retries it later, as a webhook's).
        #expect(server.received.count == 1)
        #expect(sleeps.all.isEmpty)
        #expect(!log.all.joined().contains(wrong))
    }

    @Test func aServerErrorIsRetriedWithBackoffThenDelivered() async throws {
        let unavailable = PushServers.json(503, ["code": 50301, "http": 503, "error": "service unavailable"])
        let server = try await LoopbackHTTPServer.start([unavailable, unavailable], responder: PushServers.ntfy)
        let sleeps = RecordedSleeps()
        let log = RecordedLog()
        _ = try await push([plainNote()], to: server, .ntfy(topic: "t"), token: PushServers.ntfyToken, sleeps: sleeps, log: log)

        #expect(server.received.count == 3)
        #expect(sleeps.all == [.milliseconds(250), .milliseconds(500)])
        #expect(log.all.count == 2 && log.all.allSatisfy { $0.contains("retry") }, "\(log.all)")
        #expect(!log.all.joined().contains(PushServers.ntfyToken))
    }

    @Test func aServerThatKeepsFailingIsADeliveryErrorAfterTheLastAttempt() async throws {
        let server = try await LoopbackHTTPServer.start([], responder: { _ in .answer(.internalServerError, body: "boom") })
        let sleeps = RecordedSleeps()
        let error = await deliveryError {
            _ = try await push([plainNote()], to: server, .gotify, token: PushServers.gotifyToken, sleeps: sleeps)
        }
        #expect(error?.code == .delivery)
        #expect(error?.message.hasPrefix("gotify http://127.0.0.1:") == true)
        #expect(error?.message.contains("HTTP 500 Internal Server Error: boom (3 attempts)") == true, "\(String(describing: error))")
        #expect(error?.message.contains(PushServers.gotifyToken) == false)
        #expect(server.received.count == 3)
    }

    // MARK: Gotify

    @Test func gotifyPostsToMessageWithTheAppTokenInItsHeader() async throws {
        let server = try await LoopbackHTTPServer.start([], responder: PushServers.gotify)
        let posted = try await push([plainNote()], to: server, .gotify, token: PushServers.gotifyToken)

        #expect(posted.map(\.via) == ["gotify"])
        let request = try #require(server.received.first)
        #expect(request.method == .POST)
        #expect(request.uri == "/message")
        #expect(request.headers["X-Gotify-Key"] == [PushServers.gotifyToken])
        #expect(request.headers["Authorization"] == [])
        let json = try request.json()
        #expect(json["title"] as? String == "Tea is ready")
        #expect(json["message"] as? String == "Green, 3 minutes\n\nAnswer: chime done tea (or chime snooze tea)")
        #expect(json["priority"] as? Int == 5)
        #expect(json["extras"] == nil)
    }

    @Test(arguments: [(Note.Urgency.low, 2), (.normal, 5), (.critical, 8)])
    func gotifyPriorityFollowsTheUrgency(_ urgency: Note.Urgency, _ priority: Int) async throws {
        let server = try await LoopbackHTTPServer.start([], responder: PushServers.gotify)
        _ = try await push([plainNote(urgency: urgency)], to: server, .gotify, token: PushServers.gotifyToken)
        #expect(try server.received.first?.json()["priority"] as? Int == priority)
    }

    @Test func gotifyUnderAPathPostsToMessageBelowIt() throws {
        let configuration = PushNotifier.Configuration(
            .gotify,
            server: try WebhookURL.server("https://push.example/gotify/", root: false),
            token: "t"
        )
        #expect(PushNotifier.request(for: plainNote(), configuration).url == "https://push.example/gotify/message")
        let bare = PushNotifier.Configuration(.gotify, server: try WebhookURL.server("https://push.example", root: false), token: "t")
        #expect(PushNotifier.request(for: plainNote(), bare).url == "https://push.example/message")
    }

    @Test func gotifyWithAWrongTokenIsADeliveryError() async throws {
        let server = try await LoopbackHTTPServer.start([], responder: PushServers.gotify)
        let error = await deliveryError { _ = try await push([plainNote()], to: server, .gotify, token: "Awrong.token12") }
        #expect(error?.code == .delivery)
        #expect(error?.message.contains("HTTP 401 Unauthorized") == true)
        #expect(error?.message.contains("Awrong.token12") == false)
        #expect(server.received.count == 1)
    }

    // MARK: Settings

    @Test func theDestinationNamesTheServerNotTheTopic() throws {
        let notifier = PushNotifier(
            .init(.ntfy(topic: "secret-topic"), server: try WebhookURL.server("https://ntfy.sh", root: true), token: "tk_x")
        )
        #expect(notifier.destination == "ntfy (https://ntfy.sh)")
    }

    @Test(arguments: ["https://ntfy.sh/alerts", "https://bob:pw@ntfy.sh", "https://ntfy.sh/?auth=x", "ntfy.sh", "https://ntfy.sh/#x"])
    func anNtfyURLIsTheServersRootOnly(_ text: String) {
        #expect(throws: ChimeError.self) { try WebhookURL.server(text, root: true) }
    }

    @Test func topicsAndTokensFollowTheServersRules() {
        #expect(PushSettings.isTopic("chime-alerts_2"))
        #expect(
            !PushSettings.isTopic("chime alerts") && !PushSettings.isTopic("a/b")
                && !PushSettings.isTopic(String(repeating: "a", count: 65))
        )
        #expect(PushSettings.isToken(PushServers.ntfyToken) && PushSettings.isToken(PushServers.gotifyToken))
        #expect(!PushSettings.isToken("tk with space") && !PushSettings.isToken("tk\n") && !PushSettings.isToken(""))
    }
}

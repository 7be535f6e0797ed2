import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A real HTTP/1.1 server on 127.0.0.1, on a port the kernel picks (bind to port 0, read it
/// back), that answers each request with the next scripted reply and records what it got.
///
/// Hand-written on POSIX sockets, a thread per connection, on purpose: the tests need a
/// receiver that misbehaves (accepts and never answers, answers a byte at a time, answers a TLS
/// handshake with plain HTTP), which a library's server is built never to be, and the tests
/// should not pull in a server framework (SwiftNIO) that Chime itself does not use.
/// It reads a request line, header fields and a `Content-Length` body, and keeps the
/// connection alive for the next request. ``stop()`` closes it and every connection.
final class LoopbackHTTPServer: Sendable {
    enum Reply: Sendable {
        case answer(HTTPResponseStatus, headers: [(String, String)] = [], body: String = "")
        /// Reads the request and never answers (the connection stays open until ``stop()``).
        case silence
        /// Answers 200 one byte every `every` (never finishing within a test): from the status
        /// line on, or, `afterHead`, with the status line and header fields at once and then a
        /// body of 60,000 bytes (less than the 64 KiB the notifier reads of a body) a byte at a time.
        case trickle(afterHead: Bool, every: Duration = .milliseconds(20))

        static let ok = Reply.answer(.ok, body: "ok\n")
    }

    struct Received: Sendable {
        var method: HTTPMethod
        var uri: String
        var headers: HTTPHeaders
        var body: Data
        /// The client's port: the same for requests on one kept-alive connection.
        var clientPort: Int?
        /// The body as a JSON object.
        func json() throws -> [String: Any] {
            try JSONSerialization.jsonObject(with: body) as? [String: Any] ?? [:]
        }
    }

    private struct State {
        var replies: [Reply]
        /// Answers each request past the scripted replies (nil: 200).
        var responder: (@Sendable (Received) -> Reply)?
        var received: [Received] = []
        var listener: Int32
        var connections: Set<Int32> = []
        var stopped = false
        /// Callers of ``waitUntilReceived(_:within:)``.
        var waiting: [(count: Int, done: CheckedContinuation<Bool, Never>)] = []
    }

    private let state: Mutex<State>
    let port: Int

    /// Every request past the scripted replies is answered 200.
    var url: String { "http://127.0.0.1:\(port)/hook?token=secret" }

    var received: [Received] { state.withLock { $0.received } }

    private init(listener: Int32, replies: [Reply], responder: (@Sendable (Received) -> Reply)?, port: Int) {
        self.state = Mutex(State(replies: replies, responder: responder, listener: listener))
        self.port = port
    }

    /// A server that answers with `replies` in turn, then each request as `responder` says
    /// (a server that speaks an API: ntfy's, Gotify's), or 200 without one.
    static func start(_ replies: [Reply], responder: (@Sendable (Received) -> Reply)? = nil) async throws -> LoopbackHTTPServer {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard listener >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        var one: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(listener, pointer, length) == 0 && listen(listener, 16) == 0
                    && getsockname(listener, pointer, &length) == 0
            }
        }
        guard bound else {
            let code = errno
            close(listener)
            throw POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO)
        }
        let server = LoopbackHTTPServer(
            listener: listener,
            replies: replies,
            responder: responder,
            port: Int(UInt16(bigEndian: address.sin_port))
        )
        Thread { server.acceptLoop(listener) }.start()
        return server
    }

    /// Closes the listening socket and every connection.
    func stop() async {
        let waiting = state.withLock { state in
            state.stopped = true
            // shutdown, not close: it wakes the thread blocked in accept or recv, which closes its descriptor.
            if state.listener >= 0 { shutdown(state.listener, Int32(SHUT_RDWR)) }
            for connection in state.connections { shutdown(connection, Int32(SHUT_RDWR)) }
            defer { state.waiting = [] }
            return state.waiting
        }
        for waiter in waiting { waiter.done.resume(returning: false) }
    }

    /// Whether `count` requests have arrived, waiting for them at most `bound`; the wait runs on
    /// the server's threads and a timer's, never on the tasks under test.
    func waitUntilReceived(_ count: Int, within bound: Duration) async -> Bool {
        await withCheckedContinuation { (done: CheckedContinuation<Bool, Never>) in
            let already = state.withLock { state -> Bool? in
                if state.received.count >= count { return true }
                if state.stopped { return false }
                state.waiting.append((count, done))
                return nil
            }
            if let already {
                done.resume(returning: already)
                return
            }
            let seconds = Double(bound.components.seconds) + Double(bound.components.attoseconds) / 1e18
            DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { [self] in
                let expired = state.withLock { state in
                    let (late, rest) = (state.waiting.filter { $0.count == count }, state.waiting.filter { $0.count != count })
                    state.waiting = rest
                    return late
                }
                for waiter in expired { waiter.done.resume(returning: false) }
            }
        }
    }

    // MARK: The threads

    private func acceptLoop(_ listener: Int32) {
        while true {
            var peer = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let connection = withUnsafeMutablePointer(to: &peer) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { accept(listener, $0, &length) }
            }
            if connection < 0 && errno == EINTR { continue }
            let admitted = state.withLock { state in
                guard connection >= 0, !state.stopped else { return false }
                state.connections.insert(connection)
                return true
            }
            guard admitted else {
                if connection >= 0 { close(connection) }
                state.withLock { state in
                    close(listener)
                    state.listener = -1
                }
                return
            }
            let port = Int(UInt16(bigEndian: peer.sin_port))
            Thread { self.serve(connection, clientPort: port) }.start()
        }
    }

    private func serve(_ connection: Int32, clientPort: Int) {
        defer {
            state.withLock { state in
                state.connections.remove(connection)
                close(connection)
            }
        }
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            // A whole request in the buffer: answer it and go on with what follows it.
            if let (request, used) = Self.parse(buffer) {
                buffer.removeFirst(used)
                let reply = next(after: Received(request, clientPort: clientPort))
                guard answer(reply, on: connection) else { return }
                continue
            }
            // Not HTTP (a TLS ClientHello): 400 and close, as a real server does.
            if buffer.contains(where: { $0 < 0x09 || ($0 > 0x0D && $0 < 0x20) || $0 >= 0x7F }) && !Self.headEnded(buffer) {
                _ = send(connection, Array("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".utf8))
                return
            }
            let count = recv(connection, &chunk, chunk.count, 0)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return }
            buffer += chunk[..<count]
        }
    }

    /// Writes `reply`; false when the connection is to be closed (the client went away, the
    /// server stopped).
    private func answer(_ reply: Reply, on connection: Int32) -> Bool {
        switch reply {
        case .silence:
            return true
        case .answer(let status, let headers, let body):
            var head = "HTTP/1.1 \(status.code) \(status.reasonPhrase)\r\n"
            for (name, value) in headers { head += "\(name): \(value)\r\n" }
            head += "Content-Length: \(body.utf8.count)\r\n\r\n"
            return send(connection, Array((head + body).utf8))
        case .trickle(let afterHead, let every):
            let padding = String(repeating: "p", count: 2000)
            let head = Array("HTTP/1.1 200 OK\r\nX-Padding: \(padding)\r\nContent-Length: 60000\r\n\r\n".utf8)
            var rest = head + [UInt8](repeating: UInt8(ascii: "x"), count: 60_000)
            if afterHead {
                guard send(connection, head) else { return false }
                rest.removeFirst(head.count)
            }
            let micros = UInt32(every.components.seconds * 1_000_000 + every.components.attoseconds / 1_000_000_000_000)
            for byte in rest {
                guard !state.withLock({ $0.stopped }), send(connection, [byte]) else { return false }
                usleep(micros)
            }
            return true
        }
    }

    private func send(_ connection: Int32, _ bytes: [UInt8]) -> Bool {
        var sent = 0
        while sent < bytes.count {
            // MSG_NOSIGNAL: a client that went away is an error here, not SIGPIPE for the test process.
            let count = bytes[sent...].withUnsafeBytes { Glibc.send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return false }
            sent += count
        }
        return true
    }

    private func next(after request: Received) -> Reply {
        let (reply, ready) = state.withLock { state in
            state.received.append(request)
            let count = state.received.count
            let ready = state.waiting.filter { $0.count <= count }
            state.waiting.removeAll { $0.count <= count }
            let reply = state.replies.isEmpty ? (state.responder?(request) ?? .ok) : state.replies.removeFirst()
            return (reply, ready)
        }
        for waiter in ready { waiter.done.resume(returning: true) }
        return reply
    }

    // MARK: Parsing

    private static let headEnd: [UInt8] = Array("\r\n\r\n".utf8)

    private static func headEnded(_ buffer: [UInt8]) -> Bool { range(of: headEnd, in: buffer) != nil }

    private static func range(of needle: [UInt8], in buffer: [UInt8]) -> Int? {
        guard buffer.count >= needle.count else { return nil }
        return (0...(buffer.count - needle.count)).first { buffer[$0..<($0 + needle.count)].elementsEqual(needle) }
    }

    /// A request line, its header fields and its `Content-Length` body, and how many bytes they
    /// took; nil until all of it is in `buffer`.
    private static func parse(_ buffer: [UInt8]) -> ((method: String, uri: String, headers: HTTPHeaders, body: Data), Int)? {
        guard let end = range(of: headEnd, in: buffer) else { return nil }
        let lines = String(decoding: buffer[..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let requestLine = lines[0].split(separator: " ")
        guard requestLine.count == 3 else { return nil }
        var headers = HTTPHeaders()
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers.add(name: String(line[..<colon]), value: line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        let length = headers["Content-Length"].first.flatMap { Int($0) } ?? 0
        let bodyStart = end + headEnd.count
        guard buffer.count >= bodyStart + length else { return nil }
        return (
            (String(requestLine[0]), String(requestLine[1]), headers, Data(buffer[bodyStart..<(bodyStart + length)])),
            bodyStart + length
        )
    }
}

extension LoopbackHTTPServer.Received {
    fileprivate init(_ request: (method: String, uri: String, headers: HTTPHeaders, body: Data), clientPort: Int) {
        self.init(
            method: HTTPMethod(rawValue: request.method),
            uri: request.uri,
            headers: request.headers,
            body: request.body,
            clientPort: clientPort
        )
    }
}

/// A request's method (`.POST`).
struct HTTPMethod: RawRepresentable, Hashable, Sendable {
    var rawValue: String
    static let GET = HTTPMethod(rawValue: "GET")
    static let POST = HTTPMethod(rawValue: "POST")
}

/// A request's header fields in order; `headers["name"]` is every value of that name, matched
/// without regard to case (an empty array when there is none).
struct HTTPHeaders: Sendable {
    private var fields: [(name: String, value: String)] = []
    mutating func add(name: String, value: String) { fields.append((name, value)) }
    subscript(name: String) -> [String] {
        fields.filter { $0.name.lowercased() == name.lowercased() }.map(\.value)
    }
}

/// A status code and its reason phrase (RFC 9110 §15).
struct HTTPResponseStatus: Sendable {
    var code: Int
    var reasonPhrase: String

    init(statusCode code: Int) {
        self.code = code
        self.reasonPhrase = Self.phrases[code] ?? "Status \(code)"
    }

    static let ok = HTTPResponseStatus(statusCode: 200)
    static let badRequest = HTTPResponseStatus(statusCode: 400)
    static let tooManyRequests = HTTPResponseStatus(statusCode: 429)
    static let internalServerError = HTTPResponseStatus(statusCode: 500)
    static let serviceUnavailable = HTTPResponseStatus(statusCode: 503)

    private static let phrases: [Int: String] = [
        200: "OK", 301: "Moved Permanently", 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found",
        408: "Request Timeout", 410: "Gone", 413: "Content Too Large", 422: "Unprocessable Content",
        429: "Too Many Requests", 500: "Internal Server Error", 502: "Bad Gateway", 503: "Service Unavailable",
        504: "Gateway Timeout",
    ]
}

import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// A real HTTP/1.1 server on 127.0.0.1, on a port the kernel picks (bind to port 0, read it
/// back), that answers each request with the next scripted reply and records what it got.
/// One per test, on an event loop of its own; ``stop()`` closes it and every connection.
final class LoopbackHTTPServer: Sendable {
    enum Reply: Sendable {
        case answer(HTTPResponseStatus, headers: [(String, String)] = [], body: String = "")
        /// Reads the request and never answers (the connection stays open until ``stop()``).
        case silence

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
        var received: [Received] = []
    }

    private let group: MultiThreadedEventLoopGroup
    private let state: Mutex<State>
    let port: Int

    /// Every request past the scripted replies is answered 200.
    var url: String { "http://127.0.0.1:\(port)/hook?token=secret" }

    var received: [Received] { state.withLock { $0.received } }

    private init(group: MultiThreadedEventLoopGroup, replies: [Reply], port: Int) {
        self.group = group
        self.state = Mutex(State(replies: replies))
        self.port = port
    }

    static func start(_ replies: [Reply]) async throws -> LoopbackHTTPServer {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let box = Mutex<LoopbackHTTPServer?>(nil)
        let channel: any Channel
        do {
            channel = try await ServerBootstrap(group: group)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        guard let server = box.withLock({ $0 }) else { throw ChannelError.ioOnClosedChannel }
                        try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                        try channel.pipeline.syncOperations.addHandler(Handler(server: server))
                    }
                }
                .bind(host: "127.0.0.1", port: 0).get()
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
        guard let port = channel.localAddress?.port else {
            try? await group.shutdownGracefully()
            throw ChannelError.unknownLocalAddress
        }
        let server = LoopbackHTTPServer(group: group, replies: replies, port: port)
        box.withLock { $0 = server }
        return server
    }

    /// Closes the listening socket and every connection (its event loop group shuts down).
    func stop() async {
        try? await group.shutdownGracefully()
    }

    fileprivate func next(after request: Received) -> Reply {
        state.withLock { state in
            state.received.append(request)
            return state.replies.isEmpty ? .ok : state.replies.removeFirst()
        }
    }

    private final class Handler: ChannelInboundHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart

        let server: LoopbackHTTPServer
        var head: HTTPRequestHead?
        var body = Data()

        init(server: LoopbackHTTPServer) { self.server = server }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head):
                self.head = head
                body = Data()
            case .body(let buffer):
                body.append(contentsOf: buffer.readableBytesView)
            case .end:
                guard let head else { return }
                let reply = server.next(
                    after: Received(
                        method: head.method,
                        uri: head.uri,
                        headers: head.headers,
                        body: body,
                        clientPort: context.channel.remoteAddress?.port
                    )
                )
                guard case .answer(let status, let extra, let text) = reply else { return }
                var headers = HTTPHeaders(extra)
                headers.replaceOrAdd(name: "Content-Length", value: String(text.utf8.count))
                context.write(
                    wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: status, headers: headers))),
                    promise: nil
                )
                context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: text)))), promise: nil)
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            }
        }
    }
}

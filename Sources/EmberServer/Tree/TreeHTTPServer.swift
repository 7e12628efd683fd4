import EmberConcurrency
import EmberBackend
import Logging
import NIOCore
import NIOHTTP1
import EmberModel
import Foundation
import NIOWebSocket
import NIOSSL
import NIOPosix

/// Responsible for: the tree's HTTP/1.1 port: accepts connections (the same `ConnectionGuard`
/// limits as the gRPC port), reads each request whole (a body past `maxBodyBytes` is answered 400
/// WRITE_TOO_BIG, as the Realtime Database does, and the connection closed), hands it to `TreeREST`, and writes the answer, keep-alive and
/// pipelining as HTTP/1.1 asks (NIO's server pipeline answers requests in order). HTTPS when
/// given a TLS context (the server's certificate and key, as on the gRPC port).
///
///     let http = TreeHTTPServer(rest: rest, group: group, logger: logger)
///     let port = try await http.start(host: "127.0.0.1", port: 9000)
final class TreeHTTPServer {
    private let rest: TreeREST
    private let tls: NIOSSLContext?
    private let backend: Backend
    private let group: EventLoopGroup
    private let connectionGuard: ConnectionGuard
    private let maxBodyBytes: Int
    private var channel: Channel?
    /// The open connections (closed by `stop()`: streams and realtime sessions end with it).
    private let open = OpenChannels()
    private let operations: OperationsHTTP?

    /// `tls`: HTTPS (the gRPC port's certificate and key); nil: plaintext. `operations`: the
    /// health and metrics paths.
    init(rest: TreeREST, backend: Backend, group: EventLoopGroup, connectionGuard: ConnectionGuard, maxBodyBytes: Int,
         tls: NIOSSLContext? = nil, operations: OperationsHTTP? = nil) {
        self.operations = operations
        self.tls = tls
        self.rest = rest
        self.backend = backend
        self.group = group
        self.connectionGuard = connectionGuard
        self.maxBodyBytes = maxBodyBytes
    }

    /// Binds and starts accepting; returns the port bound.
    func start(host: String, port: Int) async throws -> Int {
        let rest = self.rest
        let backend = self.backend
        let maxBody = maxBodyBytes
        let guardian = connectionGuard
        let tls = self.tls
        let open = self.open
        let operations = self.operations
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                open.add(channel)
                return channel.eventLoop.makeCompletedFuture {
                    if let tls { try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls)) }
                    let http = TreeHTTPHandler(rest: rest, backend: backend, maxBodyBytes: maxBody, operations: operations)
                    let upgrade: NIOHTTPServerUpgradeSendableConfiguration = (
                        upgraders: [TreeHTTPServer.realtimeUpgrader(rest: rest, backend: backend, maxMessageBytes: maxBody)],
                        completionHandler: { context in context.pipeline.removeHandler(http, promise: nil) })
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withServerUpgrade: upgrade, withErrorHandling: true)
                    try channel.pipeline.syncOperations.addHandler(http)
                }.flatMap { guardian.admit(channel) }
            }
        let ch = try await bootstrap.bind(host: host, port: port).get()
        channel = ch
        return ch.localAddress?.port ?? port
    }

    /// `GET /.ws?v=5&ns=...` with a WebSocket upgrade: a `RealtimeSession` (the realtime
    /// protocol). Other paths are not upgraded (they get their HTTP answer).
    static func realtimeUpgrader(rest: TreeREST, backend: Backend, maxMessageBytes: Int) -> NIOWebSocketServerUpgrader {
        NIOWebSocketServerUpgrader(
            maxFrameSize: max(1 << 16, min(maxMessageBytes, 1 << 24)),
            shouldUpgrade: { channel, head in
                let path = head.uri.split(separator: "?", maxSplits: 1).first.map(String.init) ?? ""
                guard path == "/.ws" else { return channel.eventLoop.makeSucceededFuture(nil) }
                return channel.eventLoop.makeSucceededFuture(HTTPHeaders())
            },
            upgradePipelineHandler: { channel, head in
                let params = URLComponents(string: head.uri)?.queryItems ?? []
                let host = head.headers.first(name: "host") ?? "127.0.0.1"
                return channel.eventLoop.makeCompletedFuture {
                    guard let ns = try? rest.namespace(param: params.first(where: { $0.name == "ns" })?.value, host: host) else {
                        throw RealtimeProtocolError("invalid namespace")
                    }
                    try channel.pipeline.syncOperations.addHandler(NIOWebSocketFrameAggregator(
                        minNonFinalFragmentSize: 0, maxAccumulatedFrameCount: 1 << 12, maxAccumulatedFrameSize: max(1 << 16, min(maxMessageBytes, 1 << 24))))
                    try channel.pipeline.syncOperations.addHandler(RealtimeSession(
                        rest: rest, backend: backend, namespace: ns, host: host, maxMessageBytes: maxMessageBytes))
                }
            })
    }

    /// Stops accepting, and closes every open connection (its onDisconnect writes run).
    func stop() async {
        try? await channel?.close()
        for c in open.all() { try? await c.close() }
    }
}

/// Responsible for: one connection's requests: collects head and body, runs `TreeREST` off the
/// event loop, and writes the response back on it. On the channel's event loop.
final class TreeHTTPHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let rest: TreeREST
    private let backend: Backend
    private let maxBodyBytes: Int
    private var head: HTTPRequestHead?
    private var body: [UInt8] = []
    private var tooLarge = false
    private let operations: OperationsHTTP?

    init(rest: TreeREST, backend: Backend, maxBodyBytes: Int, operations: OperationsHTTP? = nil) {
        self.operations = operations
        self.rest = rest
        self.backend = backend
        self.maxBodyBytes = maxBodyBytes
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let h):
            head = h
            body = []
            tooLarge = false
        case .body(var buffer):
            guard !tooLarge else { return }
            if body.count + buffer.readableBytes > maxBodyBytes + 1 {
                tooLarge = true
                body = []
                return
            }
            body += buffer.readBytes(length: buffer.readableBytes) ?? []
        case .end:
            guard let head else { return }
            self.head = nil
            if tooLarge {
                var r = TreeHTTPResponse.error(400, "WRITE_TOO_BIG: Data to write exceeds the maximum size that can be modified with a single request.")
                r.headers.append(("Connection", "close"))
                return write(r, head: head, keepAlive: false, context: context)
            }
            let request = TreeHTTPRequest(method: head.method.rawValue, uri: head.uri,
                                          headers: head.headers.map { (name: $0.name.lowercased(), value: $0.value) }, body: body)
            body = []
            let keepAlive = head.isKeepAlive
            if let answer = operations?.answer(request) {
                return write(answer, head: head, keepAlive: keepAlive, context: context)
            }
            let rest = self.rest
            let loop = context.eventLoop
            let bound = NIOLoopBound((self, context), eventLoop: loop)
            Task {
                let response = await rest.handle(request)
                loop.execute {
                    let (handler, context) = bound.value
                    handler.write(response, head: head, keepAlive: keepAlive, context: context)
                }
            }
        }
    }

    private func write(_ r: TreeHTTPResponse, head: HTTPRequestHead, keepAlive: Bool, context: ChannelHandlerContext) {
        if let stream = r.stream {
            // An event stream: the head now, the events as the tree changes, until the client
            // closes (no content length: chunked).
            var headers = HTTPHeaders()
            headers.add(name: "Content-Type", value: "text/event-stream; charset=utf-8")
            headers.add(name: "Cache-Control", value: "no-cache")
            headers.add(name: "Access-Control-Allow-Origin", value: "*")
            context.writeAndFlush(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: .ok, headers: headers))), promise: nil)
            TreeEventStream(channel: context.channel, request: stream).start(backend: backend)
            return
        }
        var headers = HTTPHeaders()
        for (n, v) in r.headers { headers.add(name: n, value: v) }
        let bytes = Array(r.body.utf8)
        if r.status != 204 && r.status != 304 { headers.replaceOrAdd(name: "Content-Length", value: String(bytes.count)) }
        headers.replaceOrAdd(name: "Connection", value: keepAlive ? "keep-alive" : "close")
        let status = HTTPResponseStatus(statusCode: r.status)
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: status, headers: headers))), promise: nil)
        if !bytes.isEmpty && head.method != .HEAD {
            var buffer = context.channel.allocator.buffer(capacity: bytes.count)
            buffer.writeBytes(bytes)
            context.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
        }
        let done = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if !keepAlive {
            let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
            done.whenComplete { _ in bound.value.close(promise: nil) }
        }
    }
}

/// Responsible for: the tree port's open connections, each forgotten when it closes. Thread-safe.
final class OpenChannels: Sendable {
    private let channels = LockedValueBox<[ObjectIdentifier: Channel]>([:])

    func add(_ channel: Channel) {
        let id = ObjectIdentifier(channel)
        channels.withLockedValue { $0[id] = channel }
        channel.closeFuture.whenComplete { [channels] _ in channels.withLockedValue { _ = $0.removeValue(forKey: id) } }
    }

    func all() -> [Channel] { channels.withLockedValue { Array($0.values) } }
}

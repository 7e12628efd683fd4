import EmberConcurrency
import Dispatch
import EmberModel
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOWebSocket

/// Responsible for: the connection of one of Ember's tree clients to a tree host over the
/// Realtime Database's realtime protocol, version 5 (WebSocket at `/.ws?v=5&ns=...`): connecting
/// (TLS when asked), the server's hello (`connected`, with the server's clock offset), numbered
/// requests each answered once (status and data; a connection lost first answers them
/// "disconnected"), the server's pushes handed to the delegate in order, a ping to the server
/// every `pingEvery`, counted frames both ways, and reconnecting after a loss with the SDKs'
/// back-off (1 s, ×1.3, jittered, at most 5 min; reset once a connection lasted 30 s). What to
/// send again on a new connection (listens, writes) is the delegate's. Each attempt that fails
/// before the server's hello (refused, a TLS handshake, no hello) is a `ConnectionLog` line, as
/// the documents' streams tell theirs. State and every delegate call on `queue`.
public final class RealtimeClient {
    public struct Settings: Sendable {
        public var host: String
        public var port: Int
        public var namespace: String
        public var tls: Bool
        /// With TLS: PEM certificates the server's is verified against (nil: the system's roots).
        public var trustedCertificatesFile: String?
        /// The first back-off pause, in seconds (tests shorten it).
        public var initialBackoff: Double = 1

        public init(host: String, port: Int, namespace: String, tls: Bool = false, trustedCertificatesFile: String? = nil) {
            self.host = host
            self.port = port
            self.namespace = namespace
            self.tls = tls
            self.trustedCertificatesFile = trustedCertificatesFile
        }

        /// Refuses a trusted certificates file that cannot be read (with TLS on).
        public func validate() throws {
            if tls, let file = trustedCertificatesFile, !FileManager.default.isReadableFile(atPath: file) {
                throw EmberError.invalidArgument("Cannot read the trusted certificates file '\(file)'")
            }
        }
    }

    public typealias Completion = (_ status: String, _ data: Value) -> Void

    static let pingEvery: TimeAmount = .seconds(45)
    static let helloTimeout = 10.0
    static let maxMessageBytes = 64 << 20

    public let settings: Settings
    public let queue: DispatchQueue
    private weak var delegate: (any RealtimeClientDelegate)?
    private let group: EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    private var channel: Channel?
    private var connected = false
    private var stopped = false
    private var nextRequest = 1
    private var waiting: [Int: Completion] = [:]
    private var framing = RealtimeFraming(maxMessageBytes: RealtimeClient.maxMessageBytes)
    private var pauseBase = 0.0
    private var connectedAt: Date?
    private var pinger: RepeatedTask?
    /// Why the last attempt failed (for the owner's log).
    public private(set) var lastError: String?
    /// Tells why the server cannot be reached (stderr by default).
    let log: ConnectionLog

    public init(settings: Settings, delegate: any RealtimeClientDelegate, queue: DispatchQueue) {
        self.settings = settings
        log = ConnectionLog(address: "\(settings.host):\(settings.port)", tls: settings.tls)
        self.delegate = delegate
        self.queue = queue
    }

    /// Starts connecting (and reconnecting) until `stop()`. On `queue`.
    public func start() {
        dispatchPrecondition(condition: .onQueue(queue))
        stopped = false
        connect()
    }

    /// Closes the connection; nothing more reaches the delegate. On `queue`.
    public func stop() {
        dispatchPrecondition(condition: .onQueue(queue))
        stopped = true
        log.close()
        pinger?.cancel()
        channel?.close(promise: nil)
        channel = nil
        failWaiting()
    }

    /// Whether the server's hello arrived on the current connection.
    public var isConnected: Bool { connected }

    /// Sends a request (`a`, `b`); `completion` gets the status and data once, on `queue`
    /// ("disconnected" when the connection is lost first, or when there is none).
    public func request(_ action: String, _ body: Value, completion: Completion? = nil) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard connected, let channel else {
            completion?("disconnected", .null)
            return
        }
        let r = nextRequest
        nextRequest += 1
        if let completion { waiting[r] = completion }
        let message = #"{"t":"d","d":{"r":\#(r),"a":"\#(action)","b":\#(ValueJSON.render(body, plain: true))}}"#
        RealtimeClient.write(message, to: channel)
    }

    // MARK: connecting

    private func connect() {
        guard !stopped else { return }
        let settings = self.settings
        let queue = self.queue
        let key = Data((0..<16).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
        let uri = "/.ws?v=5&ns=" + (settings.namespace.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? settings.namespace)
        let hostHeader = "\(settings.host):\(settings.port)"
        var tls: NIOSSLContext?
        if settings.tls {
            var config = TLSConfiguration.makeClientConfiguration()
            if let file = settings.trustedCertificatesFile { config.trustRoots = .file(file) }
            do { tls = try NIOSSLContext(configuration: config) } catch { return failed("TLS: \(error)") }
        }
        let sslContext = tls
        let me = WeakClient(self)
        let bootstrap = ClientBootstrap(group: group)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .connectTimeout(.seconds(10))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let sslContext {
                        // An IP address is no server name (SNI): none is sent, as gRPC's transport does.
                        let name = (try? SocketAddress(ipAddress: settings.host, port: 0)) == nil ? settings.host : nil
                        try channel.pipeline.syncOperations.addHandler(try NIOSSLClientHandler(context: sslContext, serverHostname: name))
                    }
                    let request = UpgradeRequest(uri: uri, host: hostHeader)
                    let upgrader = NIOWebSocketClientUpgrader(requestKey: key, maxFrameSize: 1 << 24, upgradePipelineHandler: { channel, _ in
                        channel.eventLoop.makeCompletedFuture {
                            try channel.pipeline.syncOperations.addHandler(NIOWebSocketFrameAggregator(
                                minNonFinalFragmentSize: 0, maxAccumulatedFrameCount: 1 << 12, maxAccumulatedFrameSize: 1 << 24))
                            try channel.pipeline.syncOperations.addHandler(FrameReader { event in
                                queue.asyncConfined { me.client?.received(event, on: channel) }
                            })
                        }
                    })
                    let config: NIOHTTPClientUpgradeSendableConfiguration = (
                        upgraders: [upgrader],
                        completionHandler: { context in context.pipeline.removeHandler(request, promise: nil) })
                    // The hello may come in the same packet as the 101: its bytes go on to the WebSocket.
                    try channel.pipeline.syncOperations.addHTTPClientHandlers(leftOverBytesStrategy: .forwardBytes, withClientUpgrade: config)
                    try channel.pipeline.syncOperations.addHandler(request)
                    // Why a connection closed before the hello (a TLS handshake, an HTTP refusal).
                    try channel.pipeline.syncOperations.addHandler(ErrorRecorder { error in
                        queue.asyncConfined { if let c = me.client, c.channel === channel, !c.connected { c.lastError = "\(error)" } }
                    })
                }
            }
        bootstrap.connect(host: settings.host, port: settings.port).whenComplete { result in
            queue.asyncConfined {
                guard let self = me.client else { return }
                switch result {
                case .success(let channel):
                    if self.stopped { channel.close(promise: nil); return }
                    self.channel = channel
                    channel.closeFuture.whenComplete { _ in queue.asyncConfined { me.client?.lost(channel) } }
                    // A server that never says hello is no server of this protocol: try again.
                    queue.asyncAfterConfined(deadline: .now() + RealtimeClient.helloTimeout) {
                        guard let c = me.client, c.channel === channel, !c.connected else { return }
                        c.lastError = "no hello from the server within \(Int(RealtimeClient.helloTimeout)) s"
                        channel.close(promise: nil)
                    }
                case .failure(let error):
                    self.failed("\(error)")
                }
            }
        }
    }

    private func failed(_ why: String) {
        lastError = why
        log.failed(RealtimeConnectionError(why), retryIn: scheduleReconnect())
    }

    private func lost(_ channel: Channel) {
        guard self.channel === channel else { return }
        self.channel = nil
        pinger?.cancel()
        let wasConnected = connected
        connected = false
        failWaiting()
        if let at = connectedAt, Date().timeIntervalSince(at) >= 30 { pauseBase = 0 }
        connectedAt = nil
        if wasConnected { delegate?.realtimeDisconnected(self) }
        if lastError == nil { lastError = wasConnected ? "the connection closed" : "the connection closed before the server's hello" }
        let pause = scheduleReconnect()
        if !wasConnected && !stopped { log.failed(RealtimeConnectionError(lastError!), retryIn: pause) }
    }

    /// Connects again after a pause; returns the pause (seconds).
    @discardableResult
    private func scheduleReconnect() -> Double {
        guard !stopped else { return 0 }
        let pause = pauseBase * Double.random(in: 0.5...1.5)
        pauseBase = pauseBase == 0 ? settings.initialBackoff : min(pauseBase * 1.3, 300)
        queue.asyncAfterConfined(deadline: .now() + pause) { [weak self] in self?.connect() }
        return pause
    }

    private func failWaiting() {
        let all = waiting
        waiting.removeAll()
        for (_, c) in all.sorted(by: { $0.key < $1.key }) { c("disconnected", .null) }
    }

    // MARK: receiving

    private func received(_ event: FrameReader.Event, on channel: Channel) {
        guard self.channel === channel, !stopped else { return }
        switch event {
        case .text(let text):
            do {
                guard let message = try framing.feed(text) else { return }
                guard case .map(let envelope) = try ValueJSON.parse(message, plain: true) else { throw RealtimeProtocolError("not an object") }
                handle(envelope, on: channel)
            } catch {
                lastError = "the server sent what the protocol does not allow: \(error)"
                channel.close(promise: nil)
            }
        }
    }

    private func handle(_ envelope: MapValue, on channel: Channel) {
        guard case .map(let d)? = envelope["d"] else { return }
        if case .string("c")? = envelope["t"] {
            switch d["t"] {
            case .string("h")?:
                guard case .map(let hello)? = d["d"] else { return }
                var offset = 0.0
                if case .int(let ts)? = hello["ts"] { offset = Double(ts) - Date().timeIntervalSince1970 * 1000 }
                connected = true
                connectedAt = Date()
                lastError = nil
                log.reached()
                framing = RealtimeFraming(maxMessageBytes: RealtimeClient.maxMessageBytes)
                pinger = channel.eventLoop.scheduleRepeatedTask(initialDelay: Self.pingEvery, delay: Self.pingEvery) { _ in
                    RealtimeClient.write(#"{"t":"c","d":{"t":"p","d":{}}}"#, to: channel)
                }
                delegate?.realtimeConnected(self, serverTimeOffsetMillis: offset)
            case .string("s")?:
                lastError = "the server shut the connection down"
                stopped = true
                channel.close(promise: nil)
            default:
                break
            }
            return
        }
        if case .int(let r)? = d["r"] {
            guard let c = waiting.removeValue(forKey: Int(r)) else { return }
            guard case .map(let b)? = d["b"], case .string(let s)? = b["s"] else { return c("invalid_response", .null) }
            c(s, b["d"] ?? .null)
            return
        }
        if case .string(let action)? = d["a"] {
            delegate?.realtime(self, push: action, body: d["b"] ?? .null)
        }
    }

    static func write(_ message: String, to channel: Channel) {
        for f in RealtimeFraming.frames(message) {
            var buffer = channel.allocator.buffer(capacity: f.utf8.count)
            buffer.writeString(f)
            // Frames a client sends are masked (RFC 6455).
            let mask = WebSocketMaskingKey.random()
            channel.write(WebSocketFrame(fin: true, opcode: .text, maskKey: mask, data: buffer), promise: nil)
        }
        channel.flush()
    }
}

/// Responsible for: what a `RealtimeClient` tells its owner, on the client's queue.
public protocol RealtimeClientDelegate: AnyObject {
    /// The server's hello arrived: send what the connection needs (auth, listens, writes).
    func realtimeConnected(_ client: RealtimeClient, serverTimeOffsetMillis: Double)
    /// The connection was lost; requests not answered were answered "disconnected".
    func realtimeDisconnected(_ client: RealtimeClient)
    /// A server push (`d`, `m`, `c`, `ac`, ...).
    func realtime(_ client: RealtimeClient, push action: String, body: Value)
}

/// Responsible for: the HTTP request that asks for the WebSocket upgrade, sent when the
/// connection opens. On the channel's event loop.
final class UpgradeRequest: ChannelInboundHandler, RemovableChannelHandler, Sendable {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart

    let uri: String
    let host: String

    init(uri: String, host: String) {
        self.uri = uri
        self.host = host
    }

    func channelActive(context: ChannelHandlerContext) {
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: host)
        headers.add(name: "User-Agent", value: "Firebase/5/Ember")
        headers.add(name: "Content-Length", value: "0")
        context.write(wrapOutboundOut(.head(HTTPRequestHead(version: .http1_1, method: .GET, uri: uri, headers: headers))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // A plain HTTP answer: the server refused the upgrade.
        if case .head = unwrapInboundIn(data) { context.close(promise: nil) }
    }
}

/// Responsible for: a WebSocket's text frames (pings answered, a close closing), handed on.
final class FrameReader: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    enum Event { case text(String) }
    private let deliver: (Event) -> Void

    init(_ deliver: @escaping (Event) -> Void) { self.deliver = deliver }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .text:
            var d = frame.unmaskedData
            if let s = d.readString(length: d.readableBytes) { deliver(.text(s)) }
        case .ping:
            context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .pong, maskKey: .random(), data: frame.unmaskedData)), promise: nil)
        case .connectionClose:
            context.close(promise: nil)
        default:
            break
        }
    }
}

/// Responsible for: passing on the error that ends a connection's pipeline (it is closed).
final class ErrorRecorder: ChannelInboundHandler {
    typealias InboundIn = NIOAny
    private let record: (Error) -> Void
    init(_ record: @escaping (Error) -> Void) { self.record = record }
    func errorCaught(context: ChannelHandlerContext, error: Error) {
        record(error)
        context.close(promise: nil)
    }
}

/// Responsible for: why a realtime connection attempt failed, as an Error for `ConnectionLog`.
struct RealtimeConnectionError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Responsible for: a weak reference to a client that closures on other threads may hold.
final class WeakClient {
    weak var client: RealtimeClient?
    init(_ client: RealtimeClient) { self.client = client }
}

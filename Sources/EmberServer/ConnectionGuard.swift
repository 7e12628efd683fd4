import Foundation
import EmberConcurrency
import Logging
import NIOCore
import NIOSSL

/// Responsible for: the server's accepted connections beside gRPC: at most `limit` open at once
/// (a connection past it is closed at once, with a log line at most every ten seconds saying how
/// many were refused), and each peer's deadlines (`PeerDeadlines`, after TLS when TLS is on): the
/// HTTP/2 preface within `handshakeTimeout`, then never silent longer than `silenceTimeout`.
/// Connections with no call for the idle timeout are sent away by gRPC's own idle timer
/// (`EmberServer`'s transport configuration).
///
/// The limit keeps the process below its descriptor limit: accept(2) failing with EMFILE makes
/// the event loop retry at once, burning a CPU (measured here with SwiftNIO 2.101), while
/// closing a connection past the limit costs one accept and one close. Thread-safe: called on
/// the event loops.
final class ConnectionGuard: Sendable {
    let limit: Int
    let handshakeTimeout: TimeAmount
    let silenceTimeout: TimeAmount
    private let logger: Logger
    /// Open connections, those refused since the last log line, and when that line was.
    private struct Count { var open = 0; var refusedSinceLog = 0; var lastLog: ContinuousClock.Instant? }
    private let count = LockedValueBox(Count())

    init(limit: Int, handshakeTimeout: Duration, silenceTimeout: Duration, logger: Logger) {
        self.limit = limit
        self.handshakeTimeout = ConnectionGuard.timeAmount(handshakeTimeout)
        self.silenceTimeout = ConnectionGuard.timeAmount(silenceTimeout)
        self.logger = logger
    }

    static func timeAmount(_ d: Duration) -> TimeAmount {
        let (s, atto) = d.components
        return .nanoseconds(s * 1_000_000_000 + atto / 1_000_000_000)
    }

    /// The default limit: the descriptor limit less a reserve for the store and the server's
    /// own descriptors (an eighth of the limit, at least 64), and at least 16.
    static func defaultLimit() -> Int {
        var rl = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &rl) == 0, rl.rlim_cur != rlim_t.max else { return 10_000 }
        let n = Int(clamping: rl.rlim_cur)
        return max(16, n - max(64, n / 8))
    }

    /// Open connections now.
    var openConnections: Int { count.withLockedValue { $0.open } }

    /// Called once per accepted connection, after gRPC configured its pipeline.
    func admit(_ channel: any Channel) -> EventLoopFuture<Void> {
        let (admitted, report): (Bool, Int?) = count.withLockedValue { c in
            c.open += 1
            let admitted = c.open <= limit
            var report: Int?
            if !admitted {
                c.refusedSinceLog += 1
                let now = ContinuousClock.now
                if c.lastLog.map({ now - $0 >= .seconds(10) }) ?? true {
                    report = c.refusedSinceLog
                    c.refusedSinceLog = 0
                    c.lastLog = now
                }
            }
            return (admitted, report)
        }
        channel.closeFuture.whenComplete { [count] _ in
            count.withLockedValue { $0.open -= 1 }
        }
        if let report {
            logger.warning("connection limit reached: refusing new connections", metadata: [
                "event": "connection_limit", "limit": "\(limit)", "refused": "\(report)"])
        }
        guard admitted else {
            channel.close(promise: nil)
            return channel.eventLoop.makeSucceededVoidFuture()
        }
        return channel.eventLoop.submit { [handshakeTimeout, silenceTimeout] in
            let sync = channel.pipeline.syncOperations
            let deadline = PeerDeadlines(handshake: handshakeTimeout, silence: silenceTimeout)
            if let tls = try? sync.handler(type: NIOSSLServerHandler.self) {
                try sync.addHandler(deadline, position: .after(tls))
            } else {
                try sync.addHandler(deadline, position: .first)
            }
        }
    }
}

/// Responsible for: the deadlines of one connection's peer: it must send the HTTP/2 preface and
/// a frame header (33 bytes) within `handshake` of being accepted, and afterwards never stay
/// silent longer than `silence`. The server's keepalive PING after its idle time makes a healthy
/// peer answer well within that; a peer that neither reads nor closes (so never answers gRPC's
/// GOAWAY and PING either, which leaves the connection open otherwise) is closed. On the
/// channel's event loop.
final class PeerDeadlines: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    static let prefaceBytes = 24 + 9

    private let handshake: TimeAmount
    private let silence: TimeAmount
    private var seen = 0
    private var lastRead = NIODeadline.now()
    private var timer: Scheduled<Void>?

    init(handshake: TimeAmount, silence: TimeAmount) {
        self.handshake = handshake
        self.silence = silence
    }

    func handlerAdded(context: ChannelHandlerContext) {
        lastRead = .now()
        schedule(context, at: lastRead + handshake)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if seen < Self.prefaceBytes { seen += unwrapInboundIn(data).readableBytes }
        lastRead = .now()
        context.fireChannelRead(data)
    }

    private func schedule(_ context: ChannelHandlerContext, at deadline: NIODeadline) {
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(deadline: deadline) {
            let (handler, context) = loopBound.value
            handler.check(context)
        }
    }

    private func check(_ context: ChannelHandlerContext) {
        timer = nil
        if seen < Self.prefaceBytes { return context.close(promise: nil) }
        let due = lastRead + silence
        if due <= .now() { return context.close(promise: nil) }
        schedule(context, at: due)
    }
}

import Dispatch
import Foundation
import EmberBackend
import EmberModel
import NIOCore
import NIOHTTP1

/// Responsible for: one REST streaming GET (`Accept: text/event-stream`): listens to its location
/// in the backend's tree and writes Server-Sent Events on the connection in commit order: `put`
/// at "/" with the whole value first, then per write a `put` at the path it replaced (relative
/// to the location; a write above the location arrives cut to it, as "/"), or one `patch` at
/// their parent for the overwrites of a multi-path update that share one; a streamed query sends
/// its whole result again as a `put` at "/" whenever a write changes it. A `keep-alive` every
/// `keepAliveInterval`. The stream ends when the client closes the connection, or when the
/// client stops reading: more than `maxQueuedBytes` not yet written closes it.
/// State on `queue` (the backend's deliveries); writes go to the channel, which orders them.
final class TreeEventStream: TreeBackendClient, @unchecked Sendable {
    static let keepAliveInterval: TimeAmount = .seconds(30)
    static let maxQueuedBytes = 16 << 20

    private let channel: Channel
    private let location: TreePath
    private let query: TreeRESTQuery?
    private let queue = DispatchQueue(label: "ember.server.tree-stream", target: .global())
    private var connection: TreeConnection?
    /// The value at the location (query streams: to compute the result again).
    private var current: TreeValue = .null
    private var lastResult: TreeValue?
    private let queued = ManagedAtomicCounter()
    private var keepAlive: RepeatedTask?

    init(channel: Channel, location: TreePath, query: TreeRESTQuery?) {
        self.channel = channel
        self.location = location
        self.query = query
    }

    /// Starts listening; stops by itself when the channel closes.
    func start(backend: Backend) {
        queue.async { [self] in
            let c = backend.connectTree(client: self, queue: queue)
            connection = c
            c.listen(location)
        }
        keepAlive = channel.eventLoop.scheduleRepeatedTask(initialDelay: Self.keepAliveInterval, delay: Self.keepAliveInterval) { [self] _ in
            send("keep-alive", "null")
        }
        channel.closeFuture.whenComplete { [self] _ in
            keepAlive?.cancel()
            queue.async { [self] in
                connection?.disconnect()
                connection = nil
            }
        }
    }

    func tree(_ connection: TreeConnection, didSend event: TreeBackendEvent) {
        guard self.connection === connection else { return }
        switch event {
        case .listenResult(_, let value, _):
            current = value
            if let query {
                let r = query.apply(to: value)
                lastResult = r
                put("/", r)
            } else {
                put("/", value)
            }
        case .change(let ops, _):
            guard !ops.isEmpty else { return }
            if let query {
                for op in ops { current.set(location.relative(op.path), op.value) }
                let r = query.apply(to: current)
                if let last = lastResult, last == r { return }
                lastResult = r
                put("/", r)
                return
            }
            let parents = Set(ops.map { $0.path.parent })
            if ops.count > 1, parents.count == 1, let parent = ops[0].path.parent, location.isAncestorOrSelf(of: parent) {
                var data = "{"
                for (i, op) in ops.enumerated() {
                    TreeJSON.quote(op.path.last!, into: &data)
                    data += ":" + TreeJSON.render(op.value) + (i < ops.count - 1 ? "," : "")
                }
                self.event("patch", relativePath(parent), data + "}")
            } else {
                for op in ops { put(relativePath(op.path), op.value) }
            }
        case .rejected:
            break
        }
    }

    private func relativePath(_ p: TreePath) -> String {
        "/" + location.relative(p).joined(separator: "/")
    }

    private func put(_ path: String, _ value: TreeValue) { event("put", path, TreeJSON.render(value)) }

    private func event(_ name: String, _ path: String, _ data: String) {
        var json = "{\"path\":"
        TreeJSON.quote(path, into: &json)
        send(name, json + ",\"data\":" + data + "}")
    }

    /// Writes one event; a client that lets too much pile up is disconnected.
    private func send(_ name: String, _ data: String) {
        let text = "event: \(name)\ndata: \(data)\n\n"
        let n = text.utf8.count
        if queued.add(n) > Self.maxQueuedBytes {
            channel.close(promise: nil)
            return
        }
        var buffer = channel.allocator.buffer(capacity: n)
        buffer.writeString(text)
        let counter = queued
        channel.writeAndFlush(HTTPServerResponsePart.body(.byteBuffer(buffer))).whenComplete { _ in _ = counter.add(-n) }
    }
}

/// Responsible for: a counter shared by a stream's writer and the channel's completions.
final class ManagedAtomicCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0
    /// Adds `n`; returns the new value.
    func add(_ n: Int) -> Int { lock.lock(); defer { lock.unlock() }; value += n; return value }
}

import EmberConcurrency
import Dispatch
import Foundation
import EmberBackend
import EmberModel
import NIOCore
import NIOHTTP1

/// Responsible for: one REST streaming GET (`Accept: text/event-stream`): a `TreeWatch` on its
/// location, written as Server-Sent Events (`put` / `patch` with `{"path", "data"}`, paths
/// relative to the location), a `keep-alive` every `keepAliveInterval` (re-checking rules that
/// read `now`), `cancel` ("Permission denied") when the rules stop allowing the read and
/// `auth_revoked` ("credential is no longer valid") when the caller's ID token expires, each
/// ending the response. The stream ends when the client closes the connection, or when it stops
/// reading: more than `UnreadBound`'s limit not yet written closes it. State on the watch's queue;
/// writes go to the channel, which orders them.
final class TreeEventStream: TreeWatchSink {
    static let keepAliveInterval: TimeAmount = .seconds(30)

    private let channel: Channel
    private let request: TreeStreamRequest
    private let queue = DispatchQueue(label: "ember.server.tree-stream", target: .global())
    private var watch: TreeWatch?
    private let unread = UnreadBound()
    private var keepAlive: RepeatedTask?
    private var expiry: Scheduled<Void>?
    /// Set when the stream was cancelled or revoked: nothing more is sent.
    private var ended = false

    init(channel: Channel, request: TreeStreamRequest) {
        self.channel = channel
        self.request = request
    }

    /// Starts listening; stops by itself when the channel closes.
    func start(backend: Backend) {
        let watch = TreeWatch(request: request, sink: self, queue: queue)
        self.watch = watch
        watch.start(backend: backend)
        keepAlive = channel.eventLoop.scheduleRepeatedTask(initialDelay: Self.keepAliveInterval, delay: Self.keepAliveInterval) { [self] _ in
            send("keep-alive", "null")
            if request.guard.dependsOnClock { queue.asyncConfined { watch.recheck() } }
        }
        if let expires = request.guard.who.caller.expires {
            let delay = TimeAmount.milliseconds(max(0, Int64((expires - Date().timeIntervalSince1970) * 1000)))
            expiry = channel.eventLoop.scheduleTask(in: delay) { [self] in
                queue.asyncConfined { [self] in
                    watch.stop()
                    end("auth_revoked", "credential is no longer valid")
                }
            }
        }
        channel.closeFuture.whenComplete { [self] _ in
            keepAlive?.cancel()
            expiry?.cancel()
            watch.stop()
        }
    }

    func watch(_ watch: TreeWatch, put path: ArraySlice<String>, _ value: TreeValue) {
        event("put", path, TreeJSON.render(value))
    }

    func watch(_ watch: TreeWatch, patch path: ArraySlice<String>, _ children: [(String, TreeValue)]) {
        var data = "{"
        for (i, (key, value)) in children.enumerated() {
            TreeJSON.quote(key, into: &data)
            data += ":" + TreeJSON.render(value) + (i < children.count - 1 ? "," : "")
        }
        event("patch", path, data + "}")
    }

    func watchCancelled(_ watch: TreeWatch) { end("cancel", "\"Permission denied\"") }

    /// Sends the last event, then closes.
    private func end(_ name: String, _ data: String) {
        guard !ended else { return }
        ended = true
        var buffer = channel.allocator.buffer(capacity: data.utf8.count + 32)
        buffer.writeString("event: \(name)\ndata: \(data)\n\n")
        let channel = self.channel
        channel.writeAndFlush(HTTPServerResponsePart.body(.byteBuffer(buffer))).whenComplete { _ in
            channel.writeAndFlush(HTTPServerResponsePart.end(nil)).whenComplete { _ in channel.close(promise: nil) }
        }
    }

    private func event(_ name: String, _ path: ArraySlice<String>, _ data: String) {
        guard !ended else { return }
        var json = "{\"path\":"
        TreeJSON.quote("/" + path.joined(separator: "/"), into: &json)
        send(name, json + ",\"data\":" + data + "}")
    }

    /// Writes one event; a client that lets too much pile up is disconnected.
    private func send(_ name: String, _ data: String) {
        let text = "event: \(name)\ndata: \(data)\n\n"
        let n = text.utf8.count
        guard unread.admit(n, closing: channel) else { return }
        var buffer = channel.allocator.buffer(capacity: n)
        buffer.writeString(text)
        let unread = self.unread
        channel.writeAndFlush(HTTPServerResponsePart.body(.byteBuffer(buffer))).whenComplete { _ in unread.written(n) }
    }
}

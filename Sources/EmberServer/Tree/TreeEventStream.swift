import Dispatch
import Foundation
import EmberBackend
import EmberModel
import EmberTreeRules
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
///
/// The rules keep deciding (`TreeStreamGuard`): when the read rules on the way to the location
/// read data, each event is sent only once a check on the tree after it allows the read; when
/// they change (a rules PUT) or read `now` (at each keep-alive) the read is checked again. A
/// read no longer allowed ends the stream with `cancel` ("Permission denied"); an ID token's
/// expiry ends it with `auth_revoked` ("credential is no longer valid").
/// State on `queue` (the backend's deliveries); writes go to the channel, which orders them.
final class TreeEventStream: TreeBackendClient, @unchecked Sendable {
    static let keepAliveInterval: TimeAmount = .seconds(30)
    static let maxQueuedBytes = 16 << 20

    private let channel: Channel
    private let location: TreePath
    private let query: TreeRESTQuery?
    private let queue = DispatchQueue(label: "ember.server.tree-stream", target: .global())
    private var connection: TreeConnection?
    /// The value at the location (to compute a query's result again, and to leave out writes
    /// that change nothing here).
    private var current: TreeValue = .null
    private var lastResult: TreeValue?
    private let queued = ManagedAtomicCounter()
    private var keepAlive: RepeatedTask?
    private var expiry: Scheduled<Void>?
    private let gate: TreeStreamGuard
    /// A `$priority` query's location's priorities (it listens to them too), and their value.
    private let priorityLocation: TreePath
    private var priorities: TreeValue = .null
    /// Listen results still to come before the first event (2 for a `$priority` query).
    private var awaitedResults: Int
    /// Rules checks not yet answered: events wait behind them, in order.
    private var checksInFlight = 0
    /// Set when the stream was cancelled or revoked: nothing more is sent.
    private var ended = false

    init(channel: Channel, request: TreeStreamRequest) {
        self.channel = channel
        self.location = request.location
        self.query = request.query
        self.priorityLocation = request.priorities
        awaitedResults = request.query?.byPriority == true ? 2 : 1
        self.gate = request.guard
    }

    /// Starts listening; stops by itself when the channel closes.
    func start(backend: Backend) {
        queue.async { [self] in
            let c = backend.connectTree(client: self, queue: queue)
            connection = c
            c.listen(location)
            if query?.byPriority == true { c.listen(priorityLocation) }
        }
        keepAlive = channel.eventLoop.scheduleRepeatedTask(initialDelay: Self.keepAliveInterval, delay: Self.keepAliveInterval) { [self] _ in
            send("keep-alive", "null")
            if gate.dependsOnClock { queue.async { [self] in recheck() } }
        }
        if !gate.bypassesRules {
            gate.access.watch(gate.who.namespace, ObjectIdentifier(self)) { [weak self] in
                guard let self else { return }
                queue.async { self.recheck() }
            }
        }
        if let expires = gate.who.caller.expires {
            let delay = TimeAmount.milliseconds(max(0, Int64((expires - Date().timeIntervalSince1970) * 1000)))
            expiry = channel.eventLoop.scheduleTask(in: delay) { [self] in
                queue.async { [self] in end("auth_revoked", "credential is no longer valid") }
            }
        }
        channel.closeFuture.whenComplete { [self] _ in
            keepAlive?.cancel()
            expiry?.cancel()
            gate.access.unwatch(gate.who.namespace, ObjectIdentifier(self))
            queue.async { [self] in
                connection?.disconnect()
                connection = nil
            }
        }
    }

    func tree(_ connection: TreeConnection, didSend event: TreeBackendEvent) {
        guard self.connection === connection, !ended else { return }
        if case .rejected = event { return }
        let check = gate.dependsOnData
        guard check || checksInFlight > 0 else { return deliver(event) }
        checksInFlight += 1
        let gate = self.gate
        connection.inspect({ read in check ? gate.allows(read) : true }) { [self] allowed in
            checksInFlight -= 1
            guard !ended else { return }
            if allowed { deliver(event) } else { end("cancel", "\"Permission denied\"") }
        }
    }

    /// Checks the read again (rules changed, or time passed); ends the stream if it is refused.
    private func recheck() {
        guard let connection, !ended else { return }
        let gate = self.gate
        connection.inspect({ read in gate.allows(read) }) { [self] allowed in
            if !allowed && !ended { end("cancel", "\"Permission denied\"") }
        }
    }

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

    private func deliver(_ event: TreeBackendEvent) {
        switch event {
        case .listenResult(let path, let value, _):
            if path == location { current = value } else { priorities = value }
            awaitedResults -= 1
            guard awaitedResults == 0 else { return }
            if let query {
                let r = query.apply(to: current, priorities: priorities)
                lastResult = r
                put("/", r)
            } else {
                put("/", value)
            }
        case .change(let ops, _):
            guard !ops.isEmpty else { return }
            if let query {
                for op in ops {
                    if location.isAncestorOrSelf(of: op.path) {
                        current.set(location.relative(op.path), op.value)
                    } else if priorityLocation.isAncestorOrSelf(of: op.path) {
                        priorities.set(priorityLocation.relative(op.path), op.value)
                    }
                }
                // A change between the two listens' results: the second result sends it.
                guard awaitedResults == 0 else { return }
                let r = query.apply(to: current, priorities: priorities)
                if let last = lastResult, last == r { return }
                lastResult = r
                put("/", r)
                return
            }
            // A write above the location arrives cut to it: when it leaves the location as it
            // was, nothing is sent (the Realtime Database sends only changes).
            if ops.count == 1, ops[0].path == location, ops[0].value == current { return }
            for op in ops { current.set(location.relative(op.path), op.value) }
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

/// Responsible for: whether a stream's caller may still read its location: the namespace's rules
/// as they are now, the caller and the query the stream was opened with.
struct TreeStreamGuard: Sendable {
    let access: TreeAccess
    let who: Who
    /// The namespace's location.
    let location: TreePath
    let query: TreeRulesQuery?

    var bypassesRules: Bool { who.caller.bypassesRules }
    private var rules: TreeRules { access.currentDecider(who.namespace).rules }
    var dependsOnData: Bool { !bypassesRules && rules.readDepends(at: location).onData }
    var dependsOnClock: Bool { !bypassesRules && rules.readDepends(at: location).onClock }

    func allows(_ read: (TreePath) -> TreeValue) -> Bool {
        Who(caller: who.caller, rules: rules, namespace: who.namespace).mayRead(location, query: query, nowMillis: TreeREST.nowMillis(), read)
    }
}

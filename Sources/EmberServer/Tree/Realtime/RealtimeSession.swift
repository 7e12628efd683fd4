import Dispatch
import EmberBackend
import EmberModel
import EmberTreeRules
import Foundation
import NIOCore
import NIOWebSocket

/// Responsible for: one connection of the Realtime Database's realtime protocol, version 5
/// (`/.ws?v=5&ns=...` on the tree's port; docs/server-tree.md): the hello first,
/// pings answered, then the client's requests in the order sent, each answered `{"r", "b":
/// {"s", "d"}}`: `s` stats, `auth`/`gauth` (an ID token, or the admin's with `authvar` or
/// `noauth`), `unauth`, `appcheck`/`unappeck`, `q` listens (plain, or a query with its tag; the
/// data is pushed before the `ok`, then every change as `d`/`m` pushes through a `TreeWatch`),
/// `n` unlistens, `g` gets, `p` puts (compare-and-set with `h`: `datastale` when the hash
/// differs) and `m` merges through `TreeWrites`, `o`/`om`/`oc` onDisconnect writes, checked by
/// the rules when registered and again when they run, after the connection ends. A listen the
/// rules stop allowing is revoked with a `c` push; an ID token's expiry with `ac`, then the
/// connection is closed. A peer silent for `deadAfter` (WebSocket pings every `pingEvery`) is
/// closed, its onDisconnect writes run; so is one that leaves too much unread (`UnreadBound`).
///
/// Requests run one after another on a task of their own; pushes are written from the watches'
/// queue; the channel orders what is written.
final class RealtimeSession: ChannelInboundHandler, @unchecked Sendable { // state on `queue`; the channel orders its writes
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    static let pingEvery: TimeAmount = .seconds(30)
    static let deadAfter: Double = 90

    private let rest: TreeREST
    private let backend: Backend
    private let namespace: String
    private let host: String
    private var framing: RealtimeFraming
    private let inbox: AsyncStream<Value>.Continuation
    private let messages: AsyncStream<Value>
    private var channel: Channel?
    private let lock = NSLock()
    /// Bytes given to the channel and not yet written to the socket.
    private let unread = UnreadBound()
    /// Open listens by key (path and tag, or path and query).
    private var listens: [String: (watch: TreeWatch, sink: RealtimeListen)] = [:]
    private var caller = TreeAccess.Caller(bypassesRules: false, auth: .signedOut, expires: nil)
    /// onDisconnect writes, in the order registered: (stored path, inputs).
    private var onDisconnect: [(TreePath, [(TreePath, TreeInput)])] = []
    private let queue = DispatchQueue(label: "ember.server.realtime", target: .global())
    private var lastHeard = Date().timeIntervalSince1970
    private var pinger: RepeatedTask?
    private var expiry: Scheduled<Void>?

    init(rest: TreeREST, backend: Backend, namespace: String, host: String, maxMessageBytes: Int) {
        self.rest = rest
        self.backend = backend
        self.namespace = namespace
        self.host = host
        framing = RealtimeFraming(maxMessageBytes: maxMessageBytes)
        (messages, inbox) = AsyncStream<Value>.makeStream()
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let channel = context.channel
        self.channel = channel
        let session = UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        send(#"{"t":"c","d":{"t":"h","d":{"ts":\#(TreeREST.nowMillis()),"v":"5","h":\#(quoted(host)),"s":"\#(session)"}}}"#)
        pinger = channel.eventLoop.scheduleRepeatedTask(initialDelay: Self.pingEvery, delay: Self.pingEvery) { [self] _ in
            if Date().timeIntervalSince1970 - lock.withLock({ lastHeard }) > Self.deadAfter {
                channel.close(promise: nil)
                return
            }
            channel.writeAndFlush(WebSocketFrame(fin: true, opcode: .ping, data: channel.allocator.buffer(capacity: 0)), promise: nil)
        }
        let messages = self.messages
        Task { [self] in
            for await m in messages { await handle(m) }
            await closed()
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        lock.withLock { lastHeard = Date().timeIntervalSince1970 }
        switch frame.opcode {
        case .text:
            var data = frame.unmaskedData
            guard let text = data.readString(length: data.readableBytes) else { return fail(context, "a frame is not UTF-8") }
            do {
                guard let message = try framing.feed(text) else { return }
                guard case .map(let envelope) = try ValueJSON.parse(message, plain: true) else { return fail(context, "a message is not a JSON object") }
                inbox.yield(.map(envelope))
            } catch let e as RealtimeProtocolError {
                fail(context, e.message)
            } catch {
                fail(context, "a message is not JSON")
            }
        case .ping:
            context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .pong, data: frame.unmaskedData)), promise: nil)
        case .connectionClose:
            context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .connectionClose, data: context.channel.allocator.buffer(capacity: 0))))
                .whenComplete { _ in context.close(promise: nil) }
        default:
            break
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        pinger?.cancel()
        expiry?.cancel()
        inbox.finish()
        context.fireChannelInactive()
    }

    private func fail(_ context: ChannelHandlerContext, _ why: String) {
        send(#"{"t":"c","d":{"t":"e","d":\#(quoted(why))}}"#)
        context.close(promise: nil)
    }

    // MARK: requests

    private func handle(_ envelope: Value) async {
        guard case .map(let e) = envelope else { return }
        if case .string("c")? = e["t"] {
            if case .map(let c)? = e["d"], case .string("p")? = c["t"] { send(#"{"t":"c","d":{"t":"o","d":null}}"#) }
            return
        }
        guard case .string("d")? = e["t"], case .map(let d)? = e["d"], case .string(let action)? = d["a"] else { return }
        let r = d["r"]
        let body: MapValue
        if case .map(let b)? = d["b"] { body = b } else { body = MapValue() }
        let (status, data) = await respond(action, body)
        if let r { send(#"{"t":"d","d":{"r":\#(ValueJSON.render(r, plain: true)),"b":{"s":\#(quoted(status)),"d":\#(data)}}}"#) }
    }

    /// The status and JSON data answering one request.
    private func respond(_ action: String, _ b: MapValue) async -> (String, String) {
        do {
            switch action {
            case "s", "appcheck", "unappeck": return ("ok", "{}")
            case "auth", "gauth": return try await authenticate(b)
            case "unauth":
                setCaller(TreeAccess.Caller(bypassesRules: false, auth: .signedOut, expires: nil))
                return ("ok", "{}")
            case "q": return try await listen(b)
            case "n":
                let key = try listenKey(b)
                if let l = lock.withLock({ listens.removeValue(forKey: key) }) { l.watch.stop() }
                return ("ok", "{}")
            case "g": return try await get(b)
            case "p", "m": return try await write(action, b)
            case "o", "om": return try await registerOnDisconnect(action, b)
            case "oc":
                let path = try storedPath(b)
                lock.withLock { onDisconnect.removeAll { path.isAncestorOrSelf(of: $0.0) } }
                return ("ok", "{}")
            default:
                return ("invalid_request", quoted("unknown action '\(action)'"))
            }
        } catch let e as TreeRESTError {
            switch e.status {
            case 401: return ("permission_denied", quoted(e.message))
            case 412: return ("datastale", quoted("The transaction needs to be run again with current data"))
            default: return ("invalid_request", quoted(e.message))
            }
        } catch let e as EmberError {
            return (e.code == .invalidArgument ? "invalid_request" : "unavailable", quoted(e.message))
        } catch {
            return ("unavailable", quoted("\(error)"))
        }
    }

    private func authenticate(_ b: MapValue) async throws -> (String, String) {
        guard case .string(let cred)? = b["cred"] else { return ("invalid_token", quoted("auth needs a 'cred'")) }
        var params: [String: String] = [:]
        if let v = b["authvar"] { params["auth_variable_override"] = ValueJSON.render(v, plain: true) }
        if case .bool(true)? = b["noauth"] { params["auth_variable_override"] = "null" }
        let who: TreeAccess.Caller
        do {
            who = try await rest.access.caller(authorization: "Bearer " + cred, params: params, namespace: namespace)
        } catch let e as TreeRESTError {
            return ("invalid_token", quoted(e.message))
        }
        setCaller(who)
        return ("ok", who.bypassesRules ? #"{"auth":null,"admin":true}"# : "{}")
    }

    private func setCaller(_ c: TreeAccess.Caller) {
        lock.withLock { caller = c }
        expiry?.cancel()
        expiry = nil
        if let expires = c.expires, let channel {
            let delay = TimeAmount.milliseconds(max(0, Int64((expires - Date().timeIntervalSince1970) * 1000)))
            expiry = channel.eventLoop.scheduleTask(in: delay) { [self] in
                send(#"{"t":"d","d":{"a":"ac","b":{"s":"expired_token","d":"Auth token is expired."}}}"#)
                channel.close(promise: nil)
            }
        }
    }

    private func who() async -> Who {
        let c = lock.withLock { caller }
        return Who(caller: c, rules: await rest.access.decider(namespace).rules, namespace: namespace)
    }

    /// The request's path (`p`) in the namespace.
    private func path(_ b: MapValue) throws -> TreePath {
        guard case .string(let p)? = b["p"] else { throw TreeRESTError(400, "the request has no path ('p')") }
        do { return try TreePath(parsing: p, context: "path") } catch let e as EmberError { throw TreeRESTError(400, e.message) }
    }

    private func storedPath(_ b: MapValue) throws -> TreePath {
        TreePath(unchecked: [TreeREST.namespacesKey, namespace]).appending(try path(b))
    }

    private func query(_ b: MapValue) throws -> TreeRESTQuery? {
        guard case .map(let q)? = b["q"] else { return nil }
        do { return try TreeRESTQuery.wire(q) } catch let e as EmberError { throw TreeRESTError(400, e.message) }
    }

    private func listenKey(_ b: MapValue) throws -> String {
        let p = try path(b).description
        if let t = b["t"] { return p + "#t" + ValueJSON.render(t, plain: true) }
        if let q = b["q"] { return p + "#q" + ValueJSON.render(q, plain: true) }
        return p
    }

    private func listen(_ b: MapValue) async throws -> (String, String) {
        let path = try self.path(b)
        let query = try self.query(b)
        let key = try listenKey(b)
        let who = await self.who()
        let decider = await rest.access.decider(namespace)
        let rulesQuery = query?.rulesQuery
        let now = TreeREST.nowMillis()
        let allowed = await rest.door.inspect { read in who.mayRead(path, query: rulesQuery, nowMillis: now, read) }
        guard allowed else { throw TreeRESTError(401, "Permission denied") }
        var warnings = ""
        if let index = query?.indexName, decider.requiresIndexes, !decider.rules.hasIndex(index, at: path) { warnings = #","w":["no_index"]"# }
        if let old = lock.withLock({ listens.removeValue(forKey: key) }) { old.watch.stop() }
        let request = TreeStreamRequest(location: who.base.appending(path), query: query,
                                        priorities: TreePriorities.base(namespace).appending(path),
                                        guard: TreeStreamGuard(access: rest.access, who: who, location: path, query: rulesQuery))
        var tag: String?
        if let t = b["t"], query != nil { tag = ValueJSON.render(t, plain: true) }
        // The data goes before the `ok` (an `ok` first would show the client an empty value).
        await withCheckedContinuation { (first: CheckedContinuation<Void, Never>) in
            let sink = RealtimeListen(session: self, path: path, tag: tag, query: b["q"], resume: query == nil ? RealtimeResume(b) : nil, first: first)
            let watch = TreeWatch(request: request, sink: sink, queue: queue)
            lock.withLock { listens[key] = (watch, sink) }
            watch.start(backend: backend)
        }
        return ("ok", "{" + (warnings.isEmpty ? "" : String(warnings.dropFirst())) + "}")
    }

    /// A revoked listen: forgotten, and the client told.
    func revoked(_ listen: RealtimeListen) {
        lock.withLock {
            for (k, v) in listens where v.sink === listen { listens.removeValue(forKey: k) }
        }
        var body = "{\"p\":"
        TreeJSON.quote(listen.path.description, into: &body)
        if let q = listen.query { body += ",\"q\":" + ValueJSON.render(q, plain: true) }
        // `body` is left open: its "}" and the envelope's two close the message.
        send(#"{"t":"d","d":{"a":"c","b":\#(body)}}}"#)
    }

    private func get(_ b: MapValue) async throws -> (String, String) {
        let path = try self.path(b)
        let query = try self.query(b)
        let who = await self.who()
        let decider = await rest.access.decider(namespace)
        if let index = query?.indexName, decider.requiresIndexes, !decider.rules.hasIndex(index, at: path) {
            throw TreeRESTError(400, "Index not defined, add \".indexOn\": \"\(index)\", for path \"\(path)\", to the rules")
        }
        let rulesQuery = query?.rulesQuery
        let now = TreeREST.nowMillis()
        let location = who.base.appending(path)
        let priorityPath = TreePriorities.base(namespace).appending(path)
        let (allowed, value, priorities) = await rest.door.inspect { read in
            guard who.mayRead(path, query: rulesQuery, nowMillis: now, read) else { return (false, TreeValue.null, TreeValue.null) }
            return (true, read(location), read(priorityPath))
        }
        guard allowed else { throw TreeRESTError(401, "Permission denied") }
        let result = query.map { $0.apply(to: value, priorities: priorities) } ?? value
        return ("ok", TreeJSON.render(TreePriorities.export(result, query == nil ? priorities : .null)))
    }

    /// The overwrites of a `p` (the value at the path) or an `m` (each key a child path).
    private func inputs(_ action: String, _ b: MapValue) throws -> [(TreePath, TreeInput)] {
        let location = try storedPath(b)
        let data = b["d"] ?? .null
        func input(_ v: Value, at p: TreePath) throws -> TreeInput {
            do { return try TreeJSON.input(ValueJSON.render(v, plain: true), at: TreeREST.inNamespace(p)) } catch let e as EmberError {
                throw TreeRESTError(400, e.message)
            }
        }
        guard action == "m" || action == "om" else { return [(location, try input(data, at: location))] }
        guard case .map(let m) = data else { throw TreeRESTError(400, "a merge's data must be an object of child paths") }
        var out: [(TreePath, TreeInput)] = []
        for (k, v) in m.entries {
            let sub: TreePath
            do { sub = try TreePath(parsing: k, context: "path in a merge") } catch let e as EmberError { throw TreeRESTError(400, e.message) }
            guard !sub.isRoot else { throw TreeRESTError(400, "a merge's key must name a child path, got '\(k)'") }
            out.append((location.appending(sub), try input(v, at: location.appending(sub))))
        }
        do { try TreeLimits.validate(out.map { TreeWriteOp(path: TreeREST.inNamespace($0.0), value: $0.1.value) }) } catch let e as EmberError {
            throw TreeRESTError(400, e.message)
        }
        return out
    }

    private func write(_ action: String, _ b: MapValue) async throws -> (String, String) {
        let inputs = try self.inputs(action, b)
        let who = await self.who()
        var expectation: TreeWrites.Expectation?
        if action == "p", case .string(let hash)? = b["h"] {
            expectation = TreeWrites.Expectation(location: try storedPath(b)) { value, priorities in
                TreeHash.of(value, priorities: priorities) == hash
            }
        }
        do {
            _ = try await TreeWrites(door: rest.door, priorityFlags: rest.priorityFlags).apply(who, inputs, expecting: expectation)
        } catch let e as TreeRESTError where e.status == 412 {
            // The data that made the hash stale goes out before the `datastale`: the client's
            // next attempt runs on it.
            await settle()
            throw e
        }
        await settle()
        return ("ok", "{}")
    }

    /// Returns once this connection's listens have pushed what the write just acknowledged
    /// changed, so the `ok` follows the data (a client drops its local copy of a write at the
    /// `ok`; data after it would flicker back). The backend hands a commit to every listening
    /// connection in the turn that acknowledges it, but the acknowledgement may be heard before
    /// that turn ends: a turn of the backend's queue lets it end, one of the listens' queue
    /// passes the commit on, and another pair passes on what a rules check held back.
    private func settle() async {
        for _ in 0..<2 {
            _ = await rest.door.inspect { _ in 0 }
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in queue.async { c.resume() } }
        }
    }

    private func registerOnDisconnect(_ action: String, _ b: MapValue) async throws -> (String, String) {
        let inputs = try self.inputs(action == "om" ? "m" : "p", b)
        let who = await self.who()
        // Checked now against the tree as it is (and again when it runs).
        let now = TreeREST.nowMillis()
        let probe = inputs
        let allowed = await rest.door.inspect { read in
            who.mayWrite(probe.map { TreeWriteOp(path: $0.0, value: $0.1.resolved(at: $0.0, read: read, nowMillis: now)) }, nowMillis: now, read)
        }
        guard allowed else { throw TreeRESTError(401, "Permission denied") }
        let path = try storedPath(b)
        lock.withLock { onDisconnect.append((path, inputs)) }
        return ("ok", "{}")
    }

    /// The connection ended: its listens stop, its onDisconnect writes run (each judged by the
    /// rules now, as the caller it had).
    private func closed() async {
        let (all, writes) = lock.withLock { () -> ([TreeWatch], [(TreePath, [(TreePath, TreeInput)])]) in
            defer { listens.removeAll(); onDisconnect.removeAll() }
            return (listens.values.map(\.watch), onDisconnect)
        }
        for w in all { w.stop() }
        let who = await self.who()
        for (_, inputs) in writes { _ = try? await TreeWrites(door: rest.door, priorityFlags: rest.priorityFlags).apply(who, inputs) }
    }

    // MARK: output

    /// Writes one message (in frames when long).
    /// Writes one message (in counted frames when long). A peer that stops reading while more
    /// than `UnreadBound`'s limit waits to be written is disconnected, as a REST stream is: its
    /// onDisconnect writes run, and its client resumes by hash when it connects again.
    func send(_ message: String) {
        guard let channel else { return }
        let n = message.utf8.count
        guard unread.admit(n, closing: channel) else { return }
        let frames = RealtimeFraming.frames(message)
        let unread = self.unread
        for (i, f) in frames.enumerated() {
            var buffer = channel.allocator.buffer(capacity: f.utf8.count)
            buffer.writeString(f)
            let frame = WebSocketFrame(fin: true, opcode: .text, data: buffer)
            if i == frames.count - 1 {
                channel.writeAndFlush(frame).whenComplete { _ in unread.written(n) }
            } else {
                channel.write(frame, promise: nil)
            }
        }
    }

    private func quoted(_ s: String) -> String {
        var out = ""
        TreeJSON.quote(s, into: &out)
        return out
    }
}

/// Responsible for: one realtime listen's pushes: `d` (overwrite) and `m` (merge) with the
/// listened path joined to the watch's relative paths, and the listen's tag for queries; the
/// first push lets the listen's `ok` go. On the watch's queue.
final class RealtimeListen: TreeWatchSink, @unchecked Sendable { // confined to the watch's queue
    private weak var session: RealtimeSession?
    let path: TreePath
    let tag: String?
    let query: Value?
    /// What the client holds already (a plain listen's `h` and `ch`), for its first answer.
    private var resume: RealtimeResume?
    private var first: CheckedContinuation<Void, Never>?

    init(session: RealtimeSession, path: TreePath, tag: String?, query: Value?, resume: RealtimeResume?, first: CheckedContinuation<Void, Never>) {
        self.session = session
        self.path = path
        self.tag = tag
        self.query = query
        self.resume = resume
        self.first = first
    }

    func watch(_ watch: TreeWatch, put rel: ArraySlice<String>, _ value: TreeValue) {
        if let r = resume, rel.isEmpty {
            // The first answer: nothing when the client's copy hashes the same, the ranges that
            // differ when it sent them (`TreeRanges`), else the whole node.
            resume = nil
            if r.hash == TreeHash.of(value) { return release() }
            if !r.points.isEmpty, case .object = value {
                var data = "["
                for (i, range) in TreeRanges.differing(value, points: r.points, hashes: r.hashes).enumerated() {
                    data += (i == 0 ? "{\"s\":" : ",{\"s\":")
                    if let s = range.start { TreeJSON.quote(s, into: &data) } else { data += "null" }
                    data += ",\"e\":"
                    if let e = range.end { TreeJSON.quote(e, into: &data) } else { data += "null" }
                    data += ",\"m\":" + TreeJSON.render(range.data) + "}"
                }
                return push("rm", rel, data + "]")
            }
        }
        resume = nil
        push("d", rel, TreeJSON.render(value))
    }

    func watch(_ watch: TreeWatch, patch rel: ArraySlice<String>, _ children: [(String, TreeValue)]) {
        var data = "{"
        for (i, (k, v)) in children.enumerated() {
            TreeJSON.quote(k, into: &data)
            data += ":" + TreeJSON.render(v) + (i < children.count - 1 ? "," : "")
        }
        push("m", rel, data + "}")
    }

    func watchCancelled(_ watch: TreeWatch) {
        session?.revoked(self)
        release()
    }

    private func push(_ action: String, _ rel: ArraySlice<String>, _ data: String) {
        var body = "{\"p\":"
        TreeJSON.quote(TreePath(unchecked: path.segments + rel).description, into: &body)
        body += ",\"d\":" + data
        if let tag { body += ",\"t\":" + tag }
        // `body` is left open: its "}" and the envelope's two close the message.
        session?.send(#"{"t":"d","d":{"a":"\#(action)","b":\#(body)}}}"#)
        release()
    }

    private func release() {
        first?.resume()
        first = nil
    }
}

/// Responsible for: what a client resuming a plain listen says it holds: the hash of its copy
/// (`h`) and, for a large node, its compound hash (`ch`: range end keys `ps`, range hashes `hs`).
struct RealtimeResume: Sendable {
    let hash: String
    let points: [String]
    let hashes: [String]

    /// nil when the client holds nothing (`h` absent or "").
    init?(_ b: MapValue) {
        guard case .string(let h)? = b["h"], !h.isEmpty else { return nil }
        hash = h
        var points: [String] = [], hashes: [String] = []
        if case .map(let ch)? = b["ch"], case .array(let ps)? = ch["ps"], case .array(let hs)? = ch["hs"], hs.count == ps.count + 1 {
            // Ember's points are child keys; another client's deeper paths ("/a/b", Android's
            // compound hash) are not understood here: the whole node goes instead.
            for p in ps { if case .string(let s) = p, !s.contains("/") { points.append(s) } }
            for h in hs { if case .string(let s) = h { hashes.append(s) } }
            if points.count != ps.count || hashes.count != hs.count { points = []; hashes = [] }
        }
        self.points = points
        self.hashes = hashes
    }
}

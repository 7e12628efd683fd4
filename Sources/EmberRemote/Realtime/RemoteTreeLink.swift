import EmberConcurrency
import Dispatch
import EmberBackend
import EmberModel
import Foundation

/// Responsible for: a tree client's link to a tree host (`ember serve`'s tree port, or any server
/// of the Realtime Database's realtime protocol) through a `RealtimeClient`: a listen is a `q`
/// of the whole location (its first `d` push is the `.listenResult`, later `d`/`m` pushes are
/// `.change`s), a write a `p` (one overwrite) or an `m` (several, under their deepest common
/// parent) answered as `.change(ack:)` or `.rejected`, a get a `g`. A lost connection is
/// `treeLinkLost`; a new one (after the token, when given, is accepted) `treeLinkRestored`, after
/// which the client sends its listens and unacknowledged writes again. On the client's queue.
public final class RemoteTreeLink: TreeLink, RealtimeClientDelegate {
    private weak var client: (any TreeLinkClient)?
    private let queue: DispatchQueue
    private var realtime: RealtimeClient!
    private let token: String?
    /// Listened paths whose data has not come yet since they were (re)listened.
    private var awaitingFirst: Set<TreePath> = []
    /// What the client held at each listened path when it (re)listened (its hash went with the
    /// listen: the server sends nothing, or only the ranges that changed).
    private var resumedFrom: [TreePath: TreeValue] = [:]
    /// Children received in listens' first answers (whole nodes or ranges), for the resume
    /// benchmark and tests. Read on the link's queue.
    public private(set) var childrenReceived = 0
    /// Tagged query listens: their location and their window as last pushed.
    private var windows: [Int: (path: TreePath, value: TreeValue)] = [:]
    private var listened: Set<TreePath> = []
    private var closed = false

    public init(settings: RealtimeClient.Settings, token: String? = nil, client: any TreeLinkClient, queue: DispatchQueue) {
        self.client = client
        self.queue = queue
        self.token = token
        realtime = RealtimeClient(settings: settings, delegate: self, queue: queue)
        queue.asyncConfined { [self] in if !closed { realtime.start() } }
    }

    public func listen(_ path: TreePath, windows: [TreeQuery], cached: TreeValue?) {
        listened.insert(path)
        awaitingFirst.insert(path)
        var body: [String: Value] = ["p": .string(path.description), "h": .string(cached.map { TreeHash.of($0) } ?? "")]
        resumedFrom[path] = cached
        if let cached {
            let points = TreeRanges.splitPoints(cached)
            if !points.isEmpty {
                body["ch"] = .map(MapValue(["ps": .array(points.map { .string($0) }),
                                            "hs": .array(TreeRanges.hashes(cached, points: points).map { .string($0) })]))
            }
        }
        realtime.request("q", .map(MapValue(body))) { [weak self] status, data in
            guard let self, !self.closed, status != "disconnected" else { return }
            guard status == "ok" else { return self.revoked(path, status, data) }
            // No data before the `ok`: the server's node hashes as the client's copy.
            if self.awaitingFirst.contains(path), let cached = self.resumedFrom[path] {
                self.first(path, cached)
            }
        }
    }

    public func servesWindow(of query: TreeQuery) -> Bool { RemoteTreeLink.wire(query) != nil }

    /// A `q` with the query object and its tag: pushes carrying the tag hold the window.
    public func listen(_ path: TreePath, query: TreeQuery, tag: Int) {
        guard let q = RemoteTreeLink.wire(query) else { return }
        windows[tag] = (path, .null)
        let body: [String: Value] = ["p": .string(path.description), "h": .string(""), "q": q, "t": .int(Int64(tag))]
        realtime.request("q", .map(MapValue(body))) { [weak self] status, data in
            guard let self, !self.closed, status != "disconnected", status != "ok" else { return }
            self.revoked(path, status, data)
        }
    }

    public func unlisten(_ path: TreePath, query: TreeQuery, tag: Int) {
        windows[tag] = nil
        guard let q = RemoteTreeLink.wire(query) else { return }
        realtime.request("n", .map(MapValue(["p": .string(path.description), "q": q, "t": .int(Int64(tag))])))
    }

    /// The realtime protocol's query object (`i` index, `sp`/`sn`/`sin` start, `ep`/`en`/`ein`
    /// end, `l` limit, `vf` from the left or right), nil for a query it cannot say as Ember
    /// means it: bounds without an order-by (Ember's default order is by key, the server's by
    /// priority then key).
    static func wire(_ q: TreeQuery) -> Value? {
        if q.isDefault || (q.orderBy == nil && q.hasRange) { return nil }
        var o: [String: Value] = [:]
        switch q.index {
        case .key: o["i"] = .string(".key")
        case .value: o["i"] = .string(".value")
        case .child(let p): o["i"] = .string(p.segments.joined(separator: "/"))
        }
        if let b = q.start {
            o["sp"] = b.value.jsonValue
            if let k = b.key { o["sn"] = .string(k) }
            o["sin"] = .bool(b.kind != .exclusive)
        }
        if let b = q.end {
            o["ep"] = b.value.jsonValue
            if let k = b.key { o["en"] = .string(k) }
            o["ein"] = .bool(b.kind != .exclusive)
        }
        if let l = q.limit {
            o["l"] = .int(Int64(l))
            o["vf"] = .string(q.limitType == .first ? "l" : "r")
        }
        return .map(MapValue(o))
    }

    /// A push for tagged listen `tag` at `path`: applied to its window, which goes to the client.
    private func windowPush(_ tag: Int, _ action: String, _ path: TreePath, _ data: Value) {
        guard var w = windows[tag], w.path.isAncestorOrSelf(of: path) else { return }
        let rel = w.path.relative(path)
        if action == "m" {
            guard case .map(let m) = data else { return }
            for (k, v) in m.entries {
                guard let sub = try? TreePath(parsing: k) else { continue }
                w.value.set(rel + sub.segments, (try? TreeValue(json: v)) ?? .null)
            }
        } else {
            w.value.set(rel, (try? TreeValue(json: data)) ?? .null)
        }
        windows[tag] = w
        childrenReceived += rel.isEmpty ? w.value.childCount : 1
        client?.treeLink(self, didSend: .window(tag: tag, value: w.value))
    }

    /// The first answer of a listen: the node at `path` now.
    private func first(_ path: TreePath, _ value: TreeValue) {
        awaitingFirst.remove(path)
        resumedFrom[path] = nil
        client?.treeLink(self, didSend: .listenResult(path: path, value: value, windows: []))
    }

    /// A listen the server refused or revoked (plain or tagged): forgotten, the observers at
    /// its location told.
    private func revoked(_ path: TreePath, _ status: String, _ data: Value) {
        let plain = listened.remove(path) != nil
        let tags = windows.filter { $0.value.path == path }.map(\.key)
        guard plain || !tags.isEmpty else { return }
        for t in tags { windows[t] = nil }
        awaitingFirst.remove(path)
        resumedFrom[path] = nil
        var message = status == "permission_denied" ? "Client doesn't have permission to access the desired data." : "The server refused the listen (\(status))"
        if case .string(let s) = data, status != "permission_denied" { message += ": \(s)" }
        client?.treeLink(self, didSend: .listenRevoked(path: path, error: EmberError(status == "permission_denied" ? .permissionDenied : .unavailable, message)))
    }

    public func unlisten(_ path: TreePath) {
        listened.remove(path)
        awaitingFirst.remove(path)
        resumedFrom[path] = nil
        realtime.request("n", .map(MapValue(["p": .string(path.description)])))
    }

    /// Server values go as their placeholders: the server fills them in.
    public func write(id: Int64, _ ops: [TreeWriteOp], serverValues: Bool) {
        let (action, body) = RemoteTreeLink.request(for: ops)
        send(id: id, action, body)
    }

    /// A `p` with the hash `h`: the server answers `datastale` when its node hashes otherwise.
    public func write(id: Int64, _ ops: [TreeWriteOp], ifHash hash: String) {
        guard ops.count == 1 else { return write(id: id, ops, serverValues: true) }
        send(id: id, "p", .map(MapValue(["p": .string(ops[0].path.description), "d": ops[0].value.jsonValue, "h": .string(hash)])))
    }

    private func send(id: Int64, _ action: String, _ body: Value) {
        realtime.request(action, body) { [weak self] status, data in
            guard let self, !self.closed else { return }
            switch status {
            case "ok":
                self.client?.treeLink(self, didSend: .change(ops: [], ack: id))
            case "disconnected":
                break        // sent again by the client once the link is restored
            default:
                if status == "datastale" {
                    self.client?.treeLink(self, didSend: .rejected(writeId: id, error: TreeLinkError.dataStale))
                    return
                }
                var message = "The server refused the write (\(status))"
                if case .string(let s) = data { message += ": \(s)" }
                let code: ErrorCode = status == "permission_denied" ? .permissionDenied : .invalidArgument
                self.client?.treeLink(self, didSend: .rejected(writeId: id, error: EmberError(code, message)))
            }
        }
    }

    public func get(_ path: TreePath, completion: @escaping @Sendable (TreeValue) -> Void) {
        realtime.request("g", .map(MapValue(["p": .string(path.description), "q": .map(MapValue())]))) { status, data in
            completion(status == "ok" ? ((try? TreeValue(json: data)) ?? .null) : .null)
        }
    }

    public func disconnect() {
        closed = true
        realtime.stop()
    }

    /// `o` (a set), `om` (an update) or `oc` (a cancellation); "disconnected" comes back as
    /// unavailable, which the client sends again once the link is back.
    public func onDisconnect(_ op: TreeOnDisconnect, completion: @escaping @Sendable (EmberError?) -> Void) {
        let action: String
        let body: Value
        switch op {
        case .cancel(let path):
            action = "oc"
            body = .map(MapValue(["p": .string(path.description), "d": .null]))
        case .write(let path, let ops, let update):
            if update {
                action = "om"
                var children: [String: Value] = [:]
                for o in ops { children[path.relative(o.path).joined(separator: "/")] = o.value.jsonValue }
                body = .map(MapValue(["p": .string(path.description), "d": .map(MapValue(children))]))
            } else {
                action = "o"
                body = .map(MapValue(["p": .string(path.description), "d": (ops.first?.value ?? .null).jsonValue]))
            }
        }
        realtime.request(action, body) { status, data in
            switch status {
            case "ok": completion(nil)
            case "disconnected": completion(EmberError(.unavailable, "The client is offline"))
            default:
                var message = "The server refused the onDisconnect write (\(status))"
                if case .string(let s) = data { message += ": \(s)" }
                completion(EmberError(status == "permission_denied" ? .permissionDenied : .invalidArgument, message))
            }
        }
    }

    /// A `p` for one overwrite, else an `m` of the overwrites under their deepest common parent.
    static func request(for ops: [TreeWriteOp]) -> (String, Value) {
        if ops.count == 1 {
            return ("p", .map(MapValue(["p": .string(ops[0].path.description), "d": ops[0].value.jsonValue])))
        }
        var common = ops[0].path.segments
        for op in ops.dropFirst() {
            let s = op.path.segments
            var n = 0
            while n < common.count && n < s.count && common[n] == s[n] { n += 1 }
            common = Array(common.prefix(n))
        }
        // A merge's keys name children: the parent sits above every overwrite.
        if ops.contains(where: { $0.path.count == common.count }) { common.removeLast() }
        let parent = TreePath(unchecked: common)
        var children: [String: Value] = [:]
        for op in ops { children[parent.relative(op.path).joined(separator: "/")] = op.value.jsonValue }
        return ("m", .map(MapValue(["p": .string(parent.description), "d": .map(MapValue(children))])))
    }

    // MARK: RealtimeClientDelegate

    public func realtimeConnected(_ client: RealtimeClient, serverTimeOffsetMillis: Double) {
        self.client?.treeLink(self, serverTimeOffsetMillis: serverTimeOffsetMillis)
        guard let token else { return restored() }
        client.request("auth", .map(MapValue(["cred": .string(token)]))) { [weak self] status, _ in
            guard let self, status == "ok" else { return }
            self.restored()
        }
    }

    private func restored() {
        awaitingFirst = listened
        resumedFrom.removeAll()
        client?.treeLinkRestored(self)
    }

    public func realtimeDisconnected(_ client: RealtimeClient) {
        self.client?.treeLinkLost(self)
    }

    public func realtime(_ client: RealtimeClient, push action: String, body: Value) {
        guard case .map(let b) = body, case .string(let p)? = b["p"], let path = try? TreePath(parsing: p) else { return }
        let data = b["d"] ?? .null
        if case .int(let t)? = b["t"], action == "d" || action == "m" { return windowPush(Int(t), action, path, data) }
        switch action {
        case "d":
            let value = (try? TreeValue(json: data)) ?? .null
            if awaitingFirst.contains(path) {
                childrenReceived += max(1, value.childCount)
                first(path, value)
            } else {
                self.client?.treeLink(self, didSend: .change(ops: [TreeWriteOp(path: path, value: value)], ack: nil))
            }
        case "m":
            guard case .map(let m) = data else { return }
            var ops: [TreeWriteOp] = []
            for (k, v) in m.entries {
                guard let sub = try? TreePath(parsing: k) else { continue }
                ops.append(TreeWriteOp(path: path.appending(sub), value: (try? TreeValue(json: v)) ?? .null))
            }
            if !ops.isEmpty { self.client?.treeLink(self, didSend: .change(ops: ops, ack: nil)) }
        case "rm":
            // The ranges of the node that changed since the client's copy (`TreeRanges`).
            guard case .array(let items) = data, awaitingFirst.contains(path), let cached = resumedFrom[path] else { return }
            var ranges: [TreeRanges.Range] = []
            for item in items {
                guard case .map(let r) = item else { continue }
                func key(_ v: Value?) -> String? { if case .string(let s)? = v { return s }; return nil }
                let m = (try? TreeValue(json: r["m"] ?? .null)) ?? .null
                childrenReceived += m.childCount
                ranges.append(TreeRanges.Range(start: key(r["s"]), end: key(r["e"]), data: m))
            }
            first(path, TreeRanges.merge(cached, ranges))
        case "c":
            revoked(path, "permission_denied", .null)
        default:
            break
        }
    }
}

/// Responsible for: opening `RemoteTreeLink`s to one tree host (an `EmberClient`'s `tree`), and
/// summing what they received (`childrenReceived`, for tests and benchmarks).
public final class RemoteTreeEndpoint: TreeEndpoint {
    public let settings: RealtimeClient.Settings
    public let token: String?
    private let lock = NSLock()
    /// The links opened, held weakly (their clients own them), with their queues.
    private var opened: [(link: WeakTreeLink, queue: DispatchQueue)] = []

    public init(settings: RealtimeClient.Settings, token: String? = nil) {
        self.settings = settings
        self.token = token
    }

    public func openTreeLink(client: any TreeLinkClient, queue: DispatchQueue) -> any TreeLink {
        let link = RemoteTreeLink(settings: settings, token: token, client: client, queue: queue)
        lock.withLock { opened.append((WeakTreeLink(link), queue)) }
        return link
    }

    /// The children the listens of the links still open brought in their first answers,
    /// summed (each read on its link's queue: never call it from there).
    public var childrenReceived: Int {
        lock.withLock { opened }.reduce(0) { sum, o in sum + o.queue.sync { o.link.link?.childrenReceived ?? 0 } }
    }
}

/// Responsible for: a weak reference to a link an endpoint opened.
final class WeakTreeLink {
    weak var link: RemoteTreeLink?
    init(_ link: RemoteTreeLink) { self.link = link }
}

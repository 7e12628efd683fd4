import Dispatch
import EmberModel
import EmberStorage
import EmberBackend

/// Responsible for: the client side of the Realtime-Database tree, run only on the worker
/// queue: local writes (applied as pending overlays over what the backend said, raised at once,
/// then sent), the backend's answers and changes, listens per observed path, the network switch,
/// and one-shot reads. Views and observers live in TreeEngine+Views.swift.
///
/// `cache` is the backend's tree as last heard for the listened paths; `local` is `cache` with
/// every pending write applied (what views show). A path is `complete` once its listen was
/// answered (or an ancestor's was): only complete views raise events (Firebase raises nothing
/// for a location it knows nothing about).
///
///     engine.write([TreeWriteOp(path: p, value: v)]) { error in }    // on the worker
final class TreeEngine: TreeBackendClient {
    struct PendingWrite {
        let id: Int64
        let ops: [TreeWriteOp]
        let completion: ((EmberError?) -> Void)?
    }

    let worker: DispatchQueue
    let events: EventThread
    private(set) var connection: TreeConnection!
    private(set) var networkEnabled = true
    private(set) var closed = false

    var cache = TreeValue.null
    var local = TreeValue.null
    private var pending: [PendingWrite] = []
    private var nextWriteId: Int64 = 1
    private var sentUpTo: Int64 = 0
    var complete = PathTrie<Bool>()
    /// Views per path; each path with views is listened to at the backend while online.
    var listenCounts = PathTrie<Int>()
    var views: [String: TreeView] = [:]
    var viewsByPath = PathTrie<[TreeView]>()
    var observers: [UInt: TreeObserver] = [:]
    var nextHandle: UInt = 1

    init(worker: DispatchQueue, events: EventThread) {
        self.worker = worker
        self.events = events
    }

    func start(backend: Backend, networkEnabled: Bool = true) {
        connection = backend.connectTree(client: self, queue: worker)
        self.networkEnabled = networkEnabled
    }

    var pendingWriteCount: Int { pending.count }
    /// Every pending overwrite, oldest first.
    var pendingOps: [TreeWriteOp] { pending.flatMap { $0.ops } }

    // MARK: writes

    /// Applies the overwrites locally (events are posted before this returns) and sends them
    /// when the network is on. `completion` runs on the event thread at the acknowledgement.
    @discardableResult
    func write(_ ops: [TreeWriteOp], completion: ((EmberError?) -> Void)?) -> Int64 {
        let id = nextWriteId
        nextWriteId += 1
        pending.append(PendingWrite(id: id, ops: ops, completion: completion))
        changeLocal(ops.map { $0.path }, fromLocalWrite: true) {
            for op in ops { local.set(op.path.segments[...], op.value) }
        }
        if networkEnabled {
            connection.write(id: id, ops)
            sentUpTo = id
        }
        return id
    }

    /// The node at `path` as the backend's `base` with every pending write applied over it.
    func overlay(_ base: TreeValue, at path: TreePath) -> TreeValue {
        var result = base
        for w in pending {
            for op in w.ops {
                if op.path.isAncestorOrSelf(of: path) {
                    result = op.value.value(at: op.path.relative(path))
                } else if path.isAncestor(of: op.path) {
                    result.set(path.relative(op.path), op.value)
                }
            }
        }
        return result
    }

    // MARK: backend messages

    func tree(_ connection: TreeConnection, didSend event: TreeBackendEvent) {
        guard !closed else { return }
        switch event {
        case .listenResult(let path, let value):
            guard listenCounts[path] != nil else { return }
            changeLocal([path]) {
                cache.set(path.segments[...], value)
                local.set(path.segments[...], overlay(value, at: path))
            }
            complete[path] = true
            initializeViews(at: path)
        case .change(let ops, let ack):
            var paths = ops.map { $0.path }
            var done: PendingWrite?
            if let a = ack, let i = pending.firstIndex(where: { $0.id == a }) {
                let w = pending.remove(at: i)
                done = w
                for op in w.ops where !paths.contains(op.path) { paths.append(op.path) }
            }
            changeLocal(paths) {
                for op in ops { cache.set(op.path.segments[...], op.value) }
                for p in paths { local.set(p.segments[...], overlay(cache.value(at: p.segments), at: p)) }
            }
            if let cb = done?.completion { events.post { cb(nil) } }
        }
    }

    // MARK: listens

    func addListen(_ path: TreePath) {
        let n = listenCounts[path] ?? 0
        listenCounts[path] = n + 1
        if n == 0 && networkEnabled { connection.listen(path) }
    }

    func removeListen(_ path: TreePath) {
        guard let n = listenCounts[path] else { return }
        if n > 1 { listenCounts[path] = n - 1; return }
        listenCounts[path] = nil
        if networkEnabled { connection.unlisten(path) }
        complete[path] = nil
        // Nothing keeps this part of the cache up to date any more: forget it (unless an
        // ancestor's or a descendant's listen still covers it).
        if !complete.hasAncestorOrSelf(of: path) && !listenCounts.hasDescendant(of: path) && !listenCounts.hasAncestorOrSelf(of: path) {
            changeLocal([path]) {
                cache.set(path.segments[...], .null)
                local.set(path.segments[...], overlay(.null, at: path))
            }
        }
    }

    private var listenedPaths: [TreePath] {
        var out: [TreePath] = []
        if listenCounts[.root] != nil { out.append(.root) }
        listenCounts.forEachDescendant(of: .root) { p, _ in out.append(p) }
        return out
    }

    // MARK: network

    func disableNetwork() {
        guard networkEnabled else { return }
        networkEnabled = false
        for p in listenedPaths { connection.unlisten(p) }
    }

    func enableNetwork() {
        guard !networkEnabled else { return }
        networkEnabled = true
        for p in listenedPaths { connection.listen(p) }
        for w in pending where w.id > sentUpTo {
            connection.write(id: w.id, w.ops)
            sentUpTo = w.id
        }
    }

    // MARK: reads

    /// The node at `path` (through `query`): from the backend when online (with pending writes
    /// applied), else from a complete cache, else an `unavailable` error. Completion on the event thread.
    func get(_ path: TreePath, query: TreeQuery, completion: @escaping (Result<TreeSnapshot, EmberError>) -> Void) {
        func answer(_ node: TreeValue) {
            let snap: TreeSnapshot
            if query.isDefault {
                snap = TreeSnapshot(path: path, value: node, index: query.index)
            } else {
                let v = TreeView(path: path, query: query)
                v.initialize(node)
                snap = TreeSnapshot(path: path, value: v.valueSnapshot(node), index: query.index)
            }
            events.post { completion(.success(snap)) }
        }
        if networkEnabled {
            connection.get(path) { [self] value in
                if closed {
                    events.post { completion(.failure(EmberError(.cancelled, "The database was closed."))) }
                    return
                }
                answer(overlay(value, at: path))
            }
        } else if complete.hasAncestorOrSelf(of: path) {
            answer(local.value(at: path.segments))
        } else {
            events.post { completion(.failure(EmberError(.unavailable, "Failed to get '\(path)': the client is offline and the location is not in the cache."))) }
        }
    }

    // MARK: shutdown

    func close() {
        guard !closed else { return }
        closed = true
        connection?.disconnect()
        let err = EmberError(.cancelled, "The database was closed before the write was acknowledged.")
        for w in pending { if let cb = w.completion { events.post { cb(err) } } }
        pending.removeAll()
        views.removeAll()
        viewsByPath = PathTrie()
        observers.removeAll()
    }
}

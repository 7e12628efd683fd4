import Dispatch
import EmberModel
import EmberStorage

/// Responsible for: one client's link to the backend's tree: what it sends crosses to the
/// backend's queue; what the backend sends arrives in order on the client's delivery queue
/// (the same ordering contract as `BackendConnection`).
///
///     let c = backend.connectTree(client: engine, queue: worker)
///     c.listen(path)            // -> .listenResult, then .change events
///     c.write(id: 1, ops)       // -> .change(ack: 1)
public final class TreeConnection: @unchecked Sendable { // sends on the backend's queue; `client` read on the delivery queue
    unowned let backend: Backend
    public let id: Int
    weak var client: TreeBackendClient?
    let deliveryQueue: DispatchQueue
    /// Whether the client caches in this backend's durable store (exactly-once after a crash).
    let sharesPersistence: Bool
    /// Paths listened to (backend queue only), to drop them on disconnect.
    private var listened: [TreePath: Int] = [:]

    init(backend: Backend, id: Int, client: TreeBackendClient, deliveryQueue: DispatchQueue, sharesPersistence: Bool) {
        self.sharesPersistence = sharesPersistence
        self.backend = backend
        self.id = id
        self.client = client
        self.deliveryQueue = deliveryQueue
    }

    /// Called on the backend queue.
    func send(_ event: TreeBackendEvent) {
        deliveryQueue.async { [weak self] in
            guard let self, let client = self.client else { return }
            client.tree(self, didSend: event)
        }
    }

    /// Listens to `path`; the answer carries the first window of each limited query in
    /// `windows` (from the backend's child indexes, consistent with the node sent).
    public func listen(_ path: TreePath, windows: [TreeQuery] = []) {
        backend.queue.async { [self, backend = self.backend] in
            backend.tree.log?.catchUp()
            listened[path, default: 0] += 1
            let v = backend.tree.listen(self, path)
            let ws = windows.compactMap { backend.tree.window(path, $0, node: v) }
            send(.listenResult(path: path, value: v, windows: ws))
            // A window taken by a pass: its index is built next, off the queue (later listens
            // in that order take passes until it is installed).
            if backend.tree.hasPendingBuilds { backend.tree.startPendingBuilds() }
        }
    }

    public func unlisten(_ path: TreePath) {
        backend.queue.async { [self, backend = self.backend] in
            if let n = listened[path] { listened[path] = n > 1 ? n - 1 : nil }
            backend.tree.unlisten(self, path)
        }
    }

    /// Applies the overwrites atomically; the acknowledgement arrives as `.change(ack: id)`.
    /// Applies the overwrites as they are (`TreeLink.write(id:_:serverValues:)` fills in server
    /// values).
    public func write(id writeId: Int64, _ ops: [TreeWriteOp]) {
        backend.queue.async { [self, backend = self.backend] in backend.tree.apply(ops, from: self, writeId: writeId) }
    }

    /// A write computed from the tree as it is at that moment and applied in the same step on
    /// the backend's queue, nothing between them: a compare-and-set, a server value's increment.
    /// `compute` runs on the backend's queue with a reader of the current tree and returns the
    /// overwrites (none: nothing is written, and the acknowledgement still comes), or throws an
    /// EmberError that refuses the write. The outcome arrives as for `write`: `.change(ack:)`, or
    /// `.rejected(writeId:error:)` with the error `compute` threw or the storage error.
    public func write(id writeId: Int64, computing compute: @escaping @Sendable (_ read: (TreePath) -> TreeValue) throws -> [TreeWriteOp]) {
        backend.queue.async { [self, backend = self.backend] in
            // With a shared log: computed on the tree as the log has it, and again when another
            // server's write came first.
            for attempt in 1...Backend.logAttempts {
                backend.tree.log?.catchUp()
                let ops: [TreeWriteOp]
                do {
                    ops = try compute { backend.tree.store.read($0) }
                } catch {
                    send(.rejected(writeId: writeId, error: error as? EmberError ?? EmberError(.internal, "\(error)")))
                    return
                }
                if backend.tree.apply(ops, from: self, writeId: writeId, checked: true, lastAttempt: attempt == Backend.logAttempts) { return }
            }
        }
    }

    /// The node at `path` now, delivered on the client's queue.
    public func get(_ path: TreePath, completion: @escaping @Sendable (TreeValue) -> Void) {
        backend.queue.async { [self, backend = self.backend] in
            backend.tree.log?.catchUp()
            let v = backend.tree.store.read(path)
            deliveryQueue.async { completion(v) }
        }
    }

    /// What `body` makes of the tree as it is now (several reads seeing one state, e.g. a rules
    /// decision and the value it guards), delivered on the client's queue.
    public func inspect<T: Sendable>(_ body: @escaping @Sendable (_ read: (TreePath) -> TreeValue) -> T, completion: @escaping @Sendable (T) -> Void) {
        backend.queue.async { [self, backend = self.backend] in
            backend.tree.log?.catchUp()
            let result = body { backend.tree.store.read($0) }
            deliveryQueue.async { completion(result) }
        }
    }

    /// Drops every listen of this connection; nothing is delivered after the client's queue
    /// runs past this point.
    public func disconnect() {
        backend.queue.async { [self, backend = self.backend] in
            backend.tree.disconnect(self, paths: Array(listened.keys))
            listened.removeAll()
            deliveryQueue.async { [self] in client = nil }
        }
    }
}

extension Backend {
    /// Opens a tree connection whose events are delivered to `client` on `queue`. When
    /// `clientPersistence` is this backend's durable store, the writes it applies are recorded
    /// in the same transaction, so one resent after a crash is acknowledged, not applied twice.
    public func connectTree(client: TreeBackendClient, queue deliveryQueue: DispatchQueue, clientPersistence: Persistence? = nil) -> TreeConnection {
        queue.sync {
            let shares = clientPersistence.map { $0 === persistence && persistence.isDurable } ?? false
            return tree.makeConnection { TreeConnection(backend: self, id: $0, client: client, deliveryQueue: deliveryQueue, sharesPersistence: shares) }
        }
    }

    /// Number of child indexes the tree keeps (tests and diagnostics; blocking).
    public var treeIndexCount: Int { queue.sync { tree.indexCount } }

    /// Number of limited queries' first windows the tree has answered (tests and diagnostics;
    /// blocking).
    public var treeWindowCount: Int { queue.sync { tree.windowCount } }

    /// Number of those windows taken by a pass over the children, without an index (tests).
    public var treeWindowsFromPasses: Int { queue.sync { tree.windowsFromPasses } }

    /// The tree's node at `path` (blocking; tests and tools).
    public func readTree(_ path: TreePath) -> TreeValue { queue.sync { tree.store.read(path) } }
}

import Dispatch
import EmberModel

/// Responsible for: one client's link to the backend's tree: what it sends crosses to the
/// backend's queue; what the backend sends arrives in order on the client's delivery queue
/// (the same ordering contract as `BackendConnection`).
///
///     let c = backend.connectTree(client: engine, queue: worker)
///     c.listen(path)            // -> .listenResult, then .change events
///     c.write(id: 1, ops)       // -> .change(ack: 1)
public final class TreeConnection: @unchecked Sendable {
    unowned let backend: Backend
    public let id: Int
    weak var client: TreeBackendClient?
    let deliveryQueue: DispatchQueue
    /// Paths listened to (backend queue only), to drop them on disconnect.
    private var listened: [TreePath: Int] = [:]

    init(backend: Backend, id: Int, client: TreeBackendClient, deliveryQueue: DispatchQueue) {
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

    public func listen(_ path: TreePath) {
        backend.queue.async { [self, backend = self.backend] in
            listened[path, default: 0] += 1
            let v = backend.tree.listen(self, path)
            send(.listenResult(path: path, value: v))
        }
    }

    public func unlisten(_ path: TreePath) {
        backend.queue.async { [self, backend = self.backend] in
            if let n = listened[path] { listened[path] = n > 1 ? n - 1 : nil }
            backend.tree.unlisten(self, path)
        }
    }

    /// Applies the overwrites atomically; the acknowledgement arrives as `.change(ack: id)`.
    public func write(id writeId: Int64, _ ops: [TreeWriteOp]) {
        backend.queue.async { [self, backend = self.backend] in backend.tree.apply(ops, from: self, writeId: writeId) }
    }

    /// The node at `path` now, delivered on the client's queue.
    public func get(_ path: TreePath, completion: @escaping (TreeValue) -> Void) {
        backend.queue.async { [self, backend = self.backend] in
            let v = backend.tree.store.read(path)
            deliveryQueue.async { completion(v) }
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
    /// Opens a tree connection whose events are delivered to `client` on `queue`.
    public func connectTree(client: TreeBackendClient, queue deliveryQueue: DispatchQueue) -> TreeConnection {
        queue.sync {
            tree.makeConnection { TreeConnection(backend: self, id: $0, client: client, deliveryQueue: deliveryQueue) }
        }
    }

    /// The tree's node at `path` (blocking; tests and tools).
    public func readTree(_ path: TreePath) -> TreeValue { queue.sync { tree.store.read(path) } }
}

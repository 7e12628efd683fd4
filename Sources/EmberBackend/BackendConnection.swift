import Dispatch
import EmberModel

/// Responsible for: one client's link to the backend: everything it sends crosses to the
/// backend's queue (a real asynchronous boundary), and everything the backend sends arrives, in
/// order, on the client's delivery queue. Each message holds the backend until the backend has
/// processed it, so a client may close and let go of the backend while messages are in flight.
///
///     conn.listen(targetId: 1, query: q, knownKeys: [])   // -> .listenResult on the client's queue
public final class BackendConnection: @unchecked Sendable { // sends on the backend's queue; `client` read on the delivery queue
    unowned let backend: Backend
    public let id: Int
    /// Read and cleared on `deliveryQueue` only.
    weak var client: BackendClient?
    let deliveryQueue: DispatchQueue
    /// Whether the client caches in the backend's own durable store (see `Backend.connect`).
    let sharesPersistence: Bool
    /// Whether the client's cache is the backend's own table (`Persistence.documentsShared`):
    /// then its batches are committed on its worker's thread (`commitNow`), so the worker never
    /// reads a document the backend changed before the worker heard of the change.
    public let commitsInline: Bool
    /// While `commitNow` runs (on the backend's queue): the event for this connection is kept
    /// here instead of being sent.
    private var capturing = false
    private var captured: BackendEvent?

    init(backend: Backend, id: Int, client: BackendClient, deliveryQueue: DispatchQueue, sharesPersistence: Bool = false,
         commitsInline: Bool = false) {
        self.backend = backend
        self.sharesPersistence = sharesPersistence
        self.commitsInline = commitsInline
        self.id = id
        self.client = client
        self.deliveryQueue = deliveryQueue
    }

    /// Called on the backend queue.
    func send(_ event: BackendEvent) {
        if capturing {
            captured = event
            return
        }
        deliveryQueue.async { [weak self] in
            guard let self, let client = self.client else { return }
            client.backend(self, didSend: event)
        }
    }

    private func reply<T: Sendable>(_ value: T, _ completion: @escaping @Sendable (T) -> Void) {
        deliveryQueue.async { completion(value) }
    }

    /// Commits a queued batch; the outcome arrives as `.commit(ack:)` or `.writeRejected`.
    public func commit(_ batch: MutationBatch) {
        backend.queue.async { [self, backend = self.backend] in
            if case .failure(let e) = backend.applyCommit(batch.mutations, from: self, batchId: batch.batchId) {
                send(.writeRejected(batchId: batch.batchId, error: e))
            }
        }
    }

    /// Commits `batch` on the calling thread (the client's delivery queue; the backend's queue is
    /// entered synchronously and never waits on the client's) and returns its outcome instead of
    /// sending it: the acknowledgement the client would have received, or the refusal. Other
    /// connections hear of the commit as usual. For a `commitsInline` connection.
    public func commitNow(_ batch: MutationBatch) -> InlineCommitOutcome {
        backend.queue.sync {
            capturing = true
            defer { capturing = false; captured = nil }
            switch backend.applyCommit(batch.mutations, from: self, batchId: batch.batchId) {
            case .success:
                // A commit always answers its origin, unless the connection was closed meanwhile.
                guard let ack = captured else { return .rejected(EmberError(.cancelled, "The connection to the backend was closed.")) }
                return .acknowledged(ack)
            case .failure(let e):
                return backend.lastCommitNotStored ? .notStored(e) : .rejected(e)
            }
        }
    }

    /// Commits a transaction's writes (with their preconditions) outside the write queue.
    ///
    /// For a `commitsInline` connection the commit runs on the client's delivery queue, after
    /// what is queued there, and the client handles the commit's event before anything else runs
    /// on that queue: the client's cache is the backend's table, so otherwise a read made between
    /// the commit and its event (an inline write's local view) could show some of the
    /// transaction's documents new and others old.
    public func commitTransaction(_ mutations: [Mutation], completion: @escaping @Sendable (Result<Int64, EmberError>) -> Void) {
        guard commitsInline else {
            backend.queue.async { [self, backend = self.backend] in
                reply(backend.applyCommit(mutations, from: self, batchId: nil), completion)
            }
            return
        }
        deliveryQueue.async { [self, backend = self.backend] in
            let (result, event): (Result<Int64, EmberError>, BackendEvent?) = backend.queue.sync {
                capturing = true
                defer { capturing = false; captured = nil }
                return (backend.applyCommit(mutations, from: self, batchId: nil), captured)
            }
            if let event, let client { client.backend(self, didSend: event) }
            completion(result)
        }
    }

    /// Starts watching `query` as `targetId`: a `.listenResult` follows, then `.commit` events.
    public func listen(targetId: Int, query: Query, knownKeys: [DocumentKey]) {
        backend.queue.async { [self, backend = self.backend] in
            backend.readBarrier()
            let target = BackendTarget(connection: self, id: targetId, query: query)
            let docs = target.start(with: backend.scan(query))
            backend.targets.add(target)
            var resolved = backend.resolve(knownKeys, excluding: docs)
            if let key = query.documentKey, docs.isEmpty, !knownKeys.contains(key) {
                resolved.append(backend.lookup(key))
            }
            send(.listenResult(targetId: targetId, documents: docs, resolved: resolved, version: backend.lastVersion))
        }
    }

    public func unlisten(targetId: Int) {
        backend.queue.async { [self, backend = self.backend] in backend.targets.remove(connectionId: id, targetId: targetId) }
    }

    /// Current states of `keys` (tombstones for missing ones) and the read version.
    public func lookup(_ keys: [DocumentKey], completion: @escaping @Sendable (([Document], Int64)) -> Void) {
        backend.queue.async { [self, backend = self.backend] in
            backend.readBarrier()
            reply(backend.lookup(keys), completion)
        }
    }

    /// Runs a query once: its result, plus the current state of known keys not in it.
    public func runQuery(_ query: Query, knownKeys: [DocumentKey], completion: @escaping @Sendable (([Document], [Document], Int64)) -> Void) {
        backend.queue.async { [self, backend = self.backend] in
            backend.readBarrier()
            let docs = backend.run(query)
            reply((docs, backend.resolve(knownKeys, excluding: docs), backend.lastVersion), completion)
        }
    }

    /// Counts the query's result (limit applied).
    public func count(_ query: Query, completion: @escaping @Sendable (Int) -> Void) {
        backend.queue.async { [self, backend = self.backend] in
            let n = backend.scan(query).count
            reply(query.limit.map { min($0, n) } ?? n, completion)
        }
    }

    /// Drops every target of this connection; the backend sends nothing after it processes it, and
    /// the client gets nothing once its queue has run past that point. (`client` is read on the
    /// delivery queue only, so it is cleared there.)
    public func disconnect() {
        backend.queue.async { [self, backend = self.backend] in
            backend.targets.removeAll(connectionId: id)
            backend.connections[id] = nil
            deliveryQueue.async { [self] in client = nil }
        }
    }
}

import EmberConcurrency
import Dispatch
import EmberModel
import EmberStorage
import EmberBackend

/// Responsible for: the thread-safe entry point to one Ember database: it owns the serial
/// worker (all engine state), the event thread (all callbacks), the backend link and the
/// storage, and hands every call to the worker. Both the Swift API and the C ABI sit on it.
/// Every call after `close()` fails with `failedPrecondition`.
///
///     let client = EmberClient()                               // in memory, its own backend
///     let token = client.listen(Query(document: key)) { event in ... }
///     try client.write([Mutation(key: key, kind: .set(fields))])
public final class EmberClient: @unchecked Sendable { // its flags under `stateLock`; the engines only on `worker`
    let worker = DispatchQueue(label: "ember.worker")
    public let events = EventThread(name: "ember.events")
    let engine: SyncEngine
    /// The Realtime-Database tree's engine (Tree/, EmberClient+Tree.swift).
    let treeEngine: TreeEngine
    public let backend: Backend
    let persistence: Persistence
    private let stateLock = Lock()
    private var isClosed = false
    /// Writes handed to the worker without waiting (memory cache only), under `stateLock`:
    /// waiting now, and in all (for tests).
    private var queuedWrites = 0
    private typealias HandedOverWrite = (mutations: [Mutation], completion: ((EmberError?) -> Void)?)
    /// Writes handed to the worker and not yet taken by `applyHandedOver` (under `stateLock`).
    private var handedOver: [HandedOverWrite] = []
    private var handedOverWrites = 0
    var writesHandedOver: Int { stateLock.withLock { handedOverWrites } }
    /// Stores this client opened itself and closes with it (the durable file, see `init(options:)`).
    private var owned: [Persistence] = []
    /// What `close()` runs last (`atClose`), under `stateLock`.
    private var closeActions: [() -> Void] = []
    /// Entered by the first `close()` for its whole run: a later one waits on it.
    private let closing = DispatchGroup()
    /// Set on `worker`: true when the caller runs on it.
    private static let workerKey = DispatchSpecificKey<Bool>()
    private var onWorkerQueue: Bool { DispatchQueue.getSpecific(key: EmberClient.workerKey) == true }

    /// A database in memory with its own in-process backend.
    public convenience init() {
        let p = MemoryPersistence()
        self.init(persistence: p, backend: Backend(persistence: p))
    }

    /// A client of `backend` (several clients may share one backend) caching in `persistence`.
    /// Documents sync with `documents` when given (a server), else with `backend`; the
    /// Realtime-Database tree with `tree` when given (a server), else with `backend`.
    public init(persistence: Persistence, backend: Backend, documents: BackendEndpoint? = nil, tree: (any TreeEndpoint)? = nil,
                gc: GarbageCollectionSettings = GarbageCollectionSettings(), networkEnabled: Bool = true) {
        self.persistence = persistence
        self.backend = backend
        self.engine = SyncEngine(worker: worker, events: events, persistence: persistence, gc: gc)
        self.treeEngine = TreeEngine(worker: worker, events: events, persistence: persistence)
        worker.setSpecific(key: EmberClient.workerKey, value: true)
        worker.sync {
            engine.start(backend: documents ?? backend, networkEnabled: networkEnabled)
            if let tree {
                treeEngine.start(endpoint: tree, networkEnabled: networkEnabled)
            } else {
                treeEngine.start(backend: backend, networkEnabled: networkEnabled)
            }
        }
    }

    public var closed: Bool { stateLock.withLock { isClosed } }

    private func checkOpen() throws {
        if closed { throw EmberError(.failedPrecondition, "The database is closed.") }
    }

    /// Runs `body` on the worker and returns its result (the caller waits).
    private func onWorker<T>(_ body: () throws -> T) throws -> T {
        try checkOpen()
        return try worker.sync {
            if engine.closed { throw EmberError(.failedPrecondition, "The database is closed.") }
            return try body()
        }
    }

    func onWorkerPublic<T>(_ body: () throws -> T) throws -> T { try onWorker(body) }

    func adopt(_ p: Persistence) { owned.append(p) }

    /// Runs `action` once when the client closes, after its worker and event thread have stopped
    /// and its files are closed (e.g. to end the connection to a server opened for this client
    /// alone); at once when the client is already closed.
    public func atClose(_ action: @escaping () -> Void) {
        let closedAlready: Bool = stateLock.withLock {
            if isClosed { return true }
            closeActions.append(action)
            return false
        }
        if closedAlready { action() }
    }

    // MARK: writes

    /// Applies the mutations locally and queues them for the backend; `completion` runs on the
    /// event thread when the backend acknowledges (nil) or rejects the batch.
    ///
    /// With a durable cache the batch is in the on-disk queue when this returns (it survives a
    /// crash from then on). With a memory cache, where nothing survives the process anyway, a
    /// write made while four earlier ones sent to the backend are still unacknowledged (a stream
    /// of writes; writes made offline are not sent, so they never count) is handed to
    /// the worker without waiting, as Firestore's SDKs do: the worker applies it before any later
    /// call of this client (reads, listens and waits all go through the same serial worker), so
    /// no caller can observe the difference, and the writer overlaps with the worker. A lone
    /// write still runs at once on the caller's thread (handing it over would add a thread wake-up
    /// to its latency). At most `maxQueuedWrites` wait on the worker (backpressure).
    public func write(_ mutations: [Mutation], completion: ((EmberError?) -> Void)? = nil) throws {
        if mutations.count > MutationBatch.maxOperations {
            throw EmberError.invalidArgument("A batch holds at most \(MutationBatch.maxOperations) operations, this one has \(mutations.count).")
        }
        if !persistence.isDurable, try handOver(mutations, completion: completion) { return }
        _ = try onWorker { try engine.write(mutations, completion: completion) }
    }

    /// Queues a memory-cache write on the worker without waiting when a stream of writes is
    /// under way (see `write`); false when the caller should apply it itself.
    /// Handing over happens under `stateLock`, which `close()` takes to mark the client closed
    /// before it queues its own work on the worker: a write handed over is applied (and its
    /// completion delivered, with an error if the close came first) before the close runs.
    private func handOver(_ mutations: [Mutation], completion: ((EmberError?) -> Void)?) throws -> Bool {
        try stateLock.withLock {
            if isClosed { throw EmberError(.failedPrecondition, "The database is closed.") }
            guard queuedWrites < EmberClient.maxQueuedWrites,
                  queuedWrites > 0 || engine.unacknowledged.load(ordering: .relaxed) >= EmberClient.streamingWrites
            else { return false }
            queuedWrites += 1
            handedOverWrites += 1
            // One block on the worker applies every write handed over until it runs (a burst of
            // writes costs one dispatch, not one each); it is queued with the first of them, so
            // it runs before any later call's work.
            handedOver.append((mutations, completion))
            if handedOver.count == 1 { worker.async { [self] in applyHandedOver() } }
            return true
        }
    }

    /// Worker: applies the writes handed over so far, in order. They count as waiting until
    /// applied (the bound on `queuedWrites` holds while this runs).
    private func applyHandedOver() {
        var writes: [HandedOverWrite] = []
        stateLock.withLock { swap(&writes, &handedOver) }
        for w in writes {
            do { _ = try engine.write(w.mutations, completion: w.completion) } catch {
                // Memory caches only (never a durable queue): cannot fail to store.
                let e = EmberError.storage(error)
                if let c = w.completion { events.post { c(e) } }
            }
        }
        stateLock.withLock { queuedWrites -= writes.count }
    }

    /// Unacknowledged writes from which further memory-cache writes no longer wait for the worker.
    static let streamingWrites = 4
    /// Memory-cache writes that may wait on the worker before a writer is made to wait.
    static let maxQueuedWrites = 1_024

    /// Calls `completion` (event thread) once every write made so far is acknowledged or rejected.
    public func waitForPendingWrites(_ completion: @escaping @Sendable (EmberError?) -> Void) throws {
        try onWorker { engine.waitForPendingWrites(completion) }
    }

    // MARK: listening

    /// Starts a listener. Events arrive on the event thread; an error ends the listener.
    public func listen(_ query: Query, options: ListenOptions = ListenOptions(), onGone: (() -> Void)? = nil,
                       _ callback: @escaping (ListenEvent) -> Void) throws -> ListenerToken {
        let token = makeListenerToken(onGone: onGone)
        token.holdCallbacksUntilStarted()
        defer { token.started() }
        try listen(query, options: options, token: token, callback)
        return token
    }

    /// A token for a listener not started yet (`listen(_:options:token:_:)`, `treeObserve`): a
    /// caller that must be able to remove the listener from inside its first callback records the
    /// token before starting it (the first events may run before the start call returns).
    public func makeListenerToken(onGone: (() -> Void)? = nil) -> ListenerToken {
        ListenerToken(events: events, onGone: onGone)
    }

    /// Starts a listener with a token from `makeListenerToken`.
    public func listen(_ query: Query, options: ListenOptions = ListenOptions(), token: ListenerToken,
                       _ callback: @escaping (ListenEvent) -> Void) throws {
        let id = try onWorker { engine.listen(query, options: options, token: token, callback: callback) }
        token.detach = { [weak self] in
            guard let self, !self.closed else { return }
            self.worker.async { if !self.engine.closed { self.engine.removeListener(id) } }
        }
    }

    // MARK: reads

    /// The ids of the collections directly under `parent` (a document path; the empty path for the
    /// root) that hold a document, sorted: the backend's when online, the cache's offline, with the
    /// collections local writes created (Firestore's listCollections / ListCollectionIds).
    public func collectionIds(under parent: ResourcePath) throws -> [String] {
        if !parent.segments.isEmpty && parent.segments.count % 2 != 0 {
            throw EmberError.invalidArgument("Collections are listed under a document or the root, not under the collection '\(parent.canonical)'.")
        }
        return try wait(30) { done in
            try onWorker {
                let pending = engine.local.pendingCollectionIds(under: parent)
                @Sendable func answer(_ ids: [String]) { done(.success(sortedDistinctUTF8(ids + pending))) }
                guard engine.networkEnabled else { return answer(engine.local.remote.collectionIds(under: parent)) }
                engine.connection.fetchCollectionIds(under: parent) { r in
                    switch r {
                    case .success(let ids): answer(ids)
                    case .failure(let e): done(.failure(e))
                    }
                }
            }
        }
    }

    public func getDocument(_ key: DocumentKey, source: GetSource = .default,
                            completion: @escaping @Sendable (Result<DocumentRead, EmberError>) -> Void) throws {
        try onWorker { engine.getDocument(key, source: source, completion: completion) }
    }

    public func getDocuments(_ query: Query, source: GetSource = .default,
                             completion: @escaping @Sendable (Result<ViewSnapshot, EmberError>) -> Void) throws {
        try onWorker { engine.getDocuments(query, source: source, completion: completion) }
    }

    public func count(_ query: Query, completion: @escaping @Sendable (Result<Int, EmberError>) -> Void) throws {
        try onWorker { engine.count(query, completion: completion) }
    }

    /// Blocking forms, for callers that are not on the worker (they wait at most `timeout` s).
    public func getDocument(_ key: DocumentKey, source: GetSource = .default, timeout: Double = 30) throws -> DocumentRead {
        try wait(timeout) { done in try getDocument(key, source: source, completion: done) }
    }

    public func getDocuments(_ query: Query, source: GetSource = .default, timeout: Double = 30) throws -> ViewSnapshot {
        try wait(timeout) { done in try getDocuments(query, source: source, completion: done) }
    }

    public func count(_ query: Query, timeout: Double = 30) throws -> Int {
        try wait(timeout) { done in try count(query, completion: done) }
    }

    func wait<T: Sendable>(_ timeout: Double, _ start: (@escaping @Sendable (Result<T, EmberError>) -> Void) throws -> Void) throws -> T {
        let sem = Semaphore()
        let box = LockedValueBox<Result<T, EmberError>?>(nil)
        try start { r in box.withLockedValue { $0 = r }; sem.signal() }
        guard sem.wait(seconds: timeout) else { throw EmberError(.deadlineExceeded, "No answer within \(timeout) s.") }
        return try box.current!.get()
    }

    // MARK: network

    public func disableNetwork() throws { try onWorker { engine.disableNetwork(); treeEngine.disableNetwork() } }
    public func enableNetwork() throws { try onWorker { engine.enableNetwork(); treeEngine.enableNetwork() } }
    public var isNetworkEnabled: Bool { (try? onWorker { engine.networkEnabled }) ?? false }

    // MARK: lifetime

    /// Stops listeners and the worker's links, fails unacknowledged write callbacks with
    /// `cancelled`, and runs every callback already posted. Idempotent: a call while or after
    /// another closes waits, as that one does, until the close is done and the event thread has
    /// run its last callback (at once from an Ember callback or the worker, which that close may
    /// be waiting for). Must not be called from a callback that the caller then expects to keep
    /// running.
    public func close() {
        let first: Bool = stateLock.withLock {
            if isClosed { return false }
            isClosed = true
            closing.enter()
            return true
        }
        guard first else {
            if !events.isCurrent && !onWorkerQueue {
                closing.wait()
                events.stop()
            }
            return
        }
        defer { closing.leave() }
        // On the worker (the last reference let go by a block it ran, so `deinit` runs there):
        // its work runs here, as a `sync` onto the queue it is on would trap.
        if onWorkerQueue { engine.close(); treeEngine.close() } else { worker.sync { engine.close(); treeEngine.close() } }
        events.stop()
        if !owned.isEmpty {
            // The backend may still be applying a commit: let it finish before the file closes.
            backend.flush()
            backend.storeExactClock()
            for p in owned { p.close() }
        }
        let actions: [() -> Void] = stateLock.withLock { defer { closeActions = [] }; return closeActions }
        for a in actions { a() }
    }

    /// Waits until the backend has finished what this client sent it before the close, and the
    /// worker has drained what the backend sent back: afterwards no Ember thread works for this
    /// client (the C ABI's close promises it; a process may then exit with nothing in flight).
    /// Call after `close()`, never from an Ember callback or while the backend is held.
    public func waitForBackgroundWork() {
        backend.flush()
        worker.sync {}
    }

    deinit { close() }
}

import EmberConcurrency
import Dispatch
import Synchronization
import EmberModel
import EmberStorage
import EmberBackend
#if canImport(Glibc)
import Glibc
#endif

/// Responsible for: the glue of the client, run only on the worker queue: local writes
/// (applied and raised at once, then sent), the backend's messages (results, commits,
/// acknowledgements, rejections), listens and their targets, the network switch, and turning
/// view snapshots into listener events posted, in order, to the event thread.
///
///     engine.write(mutations) { error in }      // on the worker
final class SyncEngine: BackendClient {
    let worker: DispatchQueue
    let events: EventThread
    let local: LocalStore
    /// The link to the backend (in-process or a server): the engine knows it only by its protocol.
    private(set) var connection: (any BackendLink)!
    /// The connection when it commits on this thread (the embedded default: see `writeInline`).
    private var inlineLink: BackendConnection?
    private(set) var networkEnabled = true
    var onlineState: OnlineState = .online
    /// The link reports its targets' membership (a server's watch): views track the keys the
    /// server holds, their limbo documents are resolved by document targets, and the online
    /// state follows the Firebase SDKs' tracker (SyncEngine+Watch.swift).
    private(set) var tracksMembership = false
    /// Each key in some view's limbo: its document target (nil while it waits for a slot) and the
    /// targets holding it in limbo; the keys waiting for a slot, oldest first.
    var limboResolutions: [DocumentKey: LimboResolution] = [:]
    var limboByBackendId: [Int: DocumentKey] = [:]
    var limboQueue: [DocumentKey] = []
    /// The online state's timer: its generation (a newer state cancels it) and whether it runs.
    var onlineTimerGeneration = 0
    var onlineTimerArmed = false

    private(set) var targets: [String: Target] = [:]
    /// The targets each backend target id serves (several only with a server: queries the
    /// server watches as one, such as a limit query and its limit-to-last mirror).
    var targetsByBackendId: [Int: [Target]] = [:]
    /// With a server: the backend target id of each watched query (`Query.targetCanonicalId`).
    private var backendIdByWatchKey: [String: Int] = [:]
    private var index = TargetIndex()
    private var listenerTargets: [Int: Target] = [:]
    var nextBackendTargetId = 1
    private var nextListenerId = 1
    private var dirty: [Target] = []
    private var dirtySet = Set<ObjectIdentifier>()

    private var writeCallbacks: [Int64: (EmberError?) -> Void] = [:]
    /// Acknowledgements the client's store could not take yet (a full disk): version, documents, batch.
    private var unstoredAcknowledgements: [(Int64, [Document], Int64?)] = []
    private var pendingWaiters: [(upTo: Int64, done: (EmberError?) -> Void)] = []
    /// Highest batch id handed to the backend; later batches wait for the network.
    private var sentUpTo: Int64 = 0
    private(set) var closed = false
    /// A retry of the queued batches is scheduled (`scheduleQueuedRetry`).
    private var queuedRetryScheduled = false
    /// Batches sent to the backend and not yet acknowledged or rejected (writes made offline are
    /// not sent, so not counted): changed on the worker, read by writers on other threads
    /// (EmberClient.write) as a hint only.
    let unacknowledged = Atomic<Int>(0)

    /// The LRU collector's settings and state (see SyncEngine+GarbageCollection.swift).
    let gc: GarbageCollectionSettings
    var docsSinceCollection = 0
    var collectionScheduled = false

    init(worker: DispatchQueue, events: EventThread, persistence: Persistence, gc: GarbageCollectionSettings = GarbageCollectionSettings()) {
        self.worker = worker
        self.events = events
        self.local = LocalStore(persistence: persistence)
        self.gc = gc
    }

    /// Connects to the backend and sends writes left pending from before. Worker only.
    func start(backend: BackendEndpoint, networkEnabled: Bool = true) {
        worker.assertCurrent()
        if !networkEnabled {
            self.networkEnabled = false
            onlineState = .offline
        }
        connection = backend.openLink(client: self, queue: worker, clientPersistence: local.persistence)
        if let c = connection as? BackendConnection, c.commitsInline { inlineLink = c }
        tracksMembership = connection.reportsTargetMembership
        // The SDKs' tracker starts unknown: a first failure takes it offline at once.
        if tracksMembership && networkEnabled { onlineState = .unknown }
        sendPendingWrites()
        schedulePeriodicCollection(after: gc.initialDelay)
    }

    static func now() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1_000_000 + Int64(ts.tv_nsec) / 1000
    }

    // MARK: writes

    /// Applies a batch locally, raises its events, and sends it when the network is on.
    func write(_ mutations: [Mutation], completion: ((EmberError?) -> Void)?) throws -> Int64 {
        worker.assertCurrent()
        if let link = inlineLink, networkEnabled, !local.hasPendingWrites {
            return try writeInline(mutations, link: link, completion: completion)
        }
        let (batch, keys) = try local.write(mutations, localWriteTime: SyncEngine.now())
        if let c = completion { writeCallbacks[batch.batchId] = c }
        refresh(keys)
        emit()
        if networkEnabled && inlineLink != nil {
            // Behind batches still queued: all of them go now, in order, on this thread.
            sendPendingWrites()
        } else if networkEnabled {
            connection.commit(batch)
            unacknowledged.add(1, ordering: .relaxed)
            sentUpTo = batch.batchId
        }
        return batch.batchId
    }

    /// The embedded default's write (the cache is the backend's table, `inlineLink`): the backend
    /// commits the batch on this thread, in one transaction, and it is never queued: when this
    /// returns it is in the file, or this threw (a batch the file cannot store; nothing of it
    /// stays applied). Only with no batch pending (a queued batch must reach the backend first).
    ///
    /// When a listener may see the batch, it is applied locally and raised first (as pending
    /// writes, as Firestore's latency compensation), then committed and acknowledged; a refusal
    /// then rolls it back with the events of a rejected write. When none may (no target holds any
    /// of its documents), it is only committed: a pending state no one can observe (every read
    /// waits for this worker) is not built.
    private func writeInline(_ mutations: [Mutation], link: BackendConnection, completion: ((EmberError?) -> Void)?) throws -> Int64 {
        local.storeUnstoredRemovals()
        let batch = local.unqueuedBatch(mutations, localWriteTime: SyncEngine.now())
        if !mutations.contains(where: { index.touches($0.key) }) {
            switch link.commitNow(batch) {
            case .notStored(let e): throw e
            case .rejected(let e): if let c = completion { events.post { c(e) } }
            case .acknowledged: if let c = completion { events.post { c(nil) } }
            }
            return batch.batchId
        }
        refresh(local.applyPending(batch))
        emit(posterStaysBusy: local.persistence.isDurable)
        switch link.commitNow(batch) {
        case .acknowledged(let ack):
            if let c = completion { writeCallbacks[batch.batchId] = c }
            backend(link, didSend: ack)
        case .rejected(let e):
            rollBackUnqueued(batch)
            if let c = completion { events.post { c(e) } }
        case .notStored(let e):
            rollBackUnqueued(batch)
            throw e
        }
        return batch.batchId
    }

    /// Takes back the local view of an inline batch the backend refused (the events of a
    /// rejected write).
    private func rollBackUnqueued(_ batch: MutationBatch) {
        refresh(local.removeUnqueued(batch.batchId))
        emit()
    }

    private func sendPendingWrites() {
        guard networkEnabled else { return }
        if let link = inlineLink {
            // Queued batches (written offline, or before a restart) go in order, each committed
            // and acknowledged before the next; a refused one is rejected as usual.
            for b in local.pendingBatches where b.batchId > sentUpTo {
                sentUpTo = b.batchId
                switch link.commitNow(b) {
                case .acknowledged(let ack): backend(link, didSend: ack)
                case .rejected(let e): backend(link, didSend: .writeRejected(batchId: b.batchId, error: e))
                case .notStored(let e) where SyncEngine.mayPass(e):
                    // The file could not take it for now (a full disk, an I/O error): the batch is
                    // not refused but kept queued, with those behind it, and sent again later (on
                    // the next write, when the network is enabled again, at the next start, or by
                    // the retry scheduled here), as a write the backend could not reach.
                    sentUpTo = b.batchId - 1
                    scheduleQueuedRetry()
                    return
                case .notStored(let e):
                    // A file that will not take it again (corrupted, removed, read-only, closed):
                    // the write fails with the cause rather than waiting for ever.
                    backend(link, didSend: .writeRejected(batchId: b.batchId, error: e))
                }
            }
            return
        }
        for b in local.pendingBatches where b.batchId > sentUpTo {
            connection.commit(b)
            unacknowledged.add(1, ordering: .relaxed)
            sentUpTo = b.batchId
        }
    }

    /// Sends the queued batches again after `queuedRetryDelay` (one retry scheduled at a time).
    private func scheduleQueuedRetry() {
        guard !queuedRetryScheduled else { return }
        queuedRetryScheduled = true
        worker.asyncAfterConfined(deadline: .now() + SyncEngine.queuedRetryDelay) { [weak self] in
            guard let self else { return }
            self.queuedRetryScheduled = false
            guard !self.closed else { return }
            self.sendPendingWrites()
        }
    }

    /// Seconds between attempts to store a queued batch the file refused.
    static let queuedRetryDelay = 1.0

    /// Whether a storage error may pass (a full disk, an I/O error): a queued batch it stopped is
    /// tried again. Data loss, a read-only or closed file are not waited out.
    static func mayPass(_ e: EmberError) -> Bool { e.code == .resourceExhausted || e.code == .unavailable }

    func waitForPendingWrites(_ done: @escaping (EmberError?) -> Void) {
        worker.assertCurrent()
        guard let upTo = local.highestPendingBatchId else {
            events.post { done(nil) }
            return
        }
        pendingWaiters.append((upTo, done))
    }

    private func completeBatch(_ batchId: Int64, error: EmberError?) {
        if unacknowledged.load(ordering: .relaxed) > 0 { unacknowledged.subtract(1, ordering: .relaxed) }
        if let cb = writeCallbacks.removeValue(forKey: batchId) { events.post { cb(error) } }
        guard !pendingWaiters.isEmpty else { return }
        let lowestPending = local.lowestPendingBatchId ?? Int64.max
        pendingWaiters.removeAll { w in
            guard w.upTo < lowestPending else { return false }
            events.post { w.done(nil) }
            return true
        }
    }

    // MARK: backend messages

    func backend(_ link: any BackendLink, didSend event: BackendEvent) {
        worker.assertCurrent()
        guard !closed else { return }
        switch event {
        case .listenResult(let targetId, let docs, let resolved, let version):
            guard let served = targetsByBackendId[targetId] else { return }
            // A result after a lost connection: the link is through again.
            if onlineState == .offline && networkEnabled { setOnlineState(.online) }
            refresh(local.applyRemote(docs + resolved))
            noteRemoteDocuments(docs.count + resolved.count)
            for target in served {
                target.view.isCurrent = true
                target.view.readTime = max(target.view.readTime, version)
                rememberTarget(target)
                markDirty(target)
            }
            emit()
        case .commit(let version, let docs, let ack):
            retryUnstoredAcknowledgements()
            // The cache update and the batch's removal from the queue: one transaction. When it
            // cannot be stored, the write still succeeded (the backend has it): it completes,
            // stays pending locally, and its acknowledgement is stored with a later message.
            if let keys = local.acknowledge(docs, batchId: ack) {
                noteRemoteDocuments(docs.count)
                refresh(keys, readTime: version)
                emit()
            } else {
                unstoredAcknowledgements.append((version, docs, ack))
            }
            if let batchId = ack { completeBatch(batchId, error: nil) }
        case .acknowledged(let batchId, let version, let results):
            // A server acknowledges with write results, not documents: the batch's writes applied
            // to the cached documents give them, then the acknowledgement goes as above. Those a
            // listener watches stay pending until the watch sends their version (the SDKs do).
            let docs = local.committedDocuments(batchId: batchId, results: results)
            if tracksMembership { local.awaitWatch(docs.filter { index.touches($0.key) }, version: version) }
            backend(link, didSend: .commit(version: version, documents: docs, ack: batchId))
        case .writeRejected(let batchId, let error):
            refresh(local.removeBatch(batchId))
            emit()
            completeBatch(batchId, error: error)
        case .targetRejected(let targetId, let error):
            if limboTargetRejected(targetId) { return }
            for target in targetsByBackendId[targetId] ?? [] {
                stopBackendListen(target, unlisten: false)
                endListeners(of: target, with: error)
            }
        case .resumeToken(let targetId, let token):
            for target in targetsByBackendId[targetId] ?? [] { noteResumeToken(target, token) }
        case .watch(let e):
            applyWatch(e)
        case .reached:
            if networkEnabled { setOnlineState(.online) }
        case .connectionLost:
            // Writes stay pending (the link sends them again); listeners see fromCache once the
            // online state is offline (SyncEngine+Watch.swift).
            streamFailed()
        }
    }

    /// Keeps a target's newest resume token: the first at once (a server may send it after the
    /// result), later ones at most every `tokenStoreInterval`.
    func noteResumeToken(_ target: Target, _ token: [UInt8]) {
        target.resumeToken = token
        if local.persistence.isDurable && (target.storedResumeToken == nil
            || SyncEngine.monotonicSeconds() - target.tokenStoredAt >= SyncEngine.tokenStoreInterval) {
            rememberTarget(target)
        }
    }

    /// Every backend target is no longer current: listeners see fromCache until theirs is again.
    func markTargetsNotCurrent() {
        for t in targets.values where t.listensToBackend && t.view.isCurrent {
            t.view.isCurrent = false
            markDirty(t)
        }
    }

    /// Ends every listener of `target` with `error` (their last event) and forgets the target.
    func endListeners(of target: Target, with error: EmberError) {
        for l in target.listeners {
            listenerTargets[l.id] = nil
            let token = l.token, cb = l.callback
            events.post { token.deliverFinal { cb(.error(error)) } }
        }
        target.listeners.removeAll()
        releaseLimbo(of: target)
        targetReleased(target)
        index.remove(target)
        targets[target.key] = nil
        if dirtySet.remove(ObjectIdentifier(target)) != nil { dirty.removeAll { $0 === target } }
    }

    /// Stores the acknowledgements that could not be stored when they came, oldest first, until
    /// one fails again.
    private func retryUnstoredAcknowledgements() {
        while let (version, docs, ack) = unstoredAcknowledgements.first {
            guard let keys = local.acknowledge(docs, batchId: ack) else { return }
            unstoredAcknowledgements.removeFirst()
            refresh(keys, readTime: version)
            emit()
        }
    }

    // MARK: views

    /// Gives every target that may contain `keys` their new local state.
    func refresh(_ keys: [DocumentKey], readTime: Int64? = nil) {
        for key in keys {
            var doc: Document?? = nil
            index.forEach(touching: key) { t in
                if doc == nil { doc = .some(local.localDocument(key)) }
                t.view.update(key, doc!)
                // Never back: an inline acknowledgement can be handled before an older event.
                if let r = readTime { t.view.readTime = max(t.view.readTime, r) }
                markDirty(t)
            }
        }
    }

    @inline(__always)
    func markDirty(_ t: Target) {
        if dirtySet.insert(ObjectIdentifier(t)).inserted { dirty.append(t) }
    }

    private func fromCache(_ t: Target) -> Bool {
        !t.listensToBackend || !networkEnabled || !t.view.isCurrent || !t.limbo.isEmpty
    }

    /// Takes a snapshot of every dirty target and raises the events its listeners should see.
    /// `posterStaysBusy`: the caller stores a batch in the file next (`EventThread.post`).
    func emit(posterStaysBusy: Bool = false) {
        guard !dirty.isEmpty else { return }
        let ts = dirty
        dirty.removeAll(keepingCapacity: true)
        dirtySet.removeAll(keepingCapacity: true)
        // The snapshots being replaced are released only after every event is posted: freeing one
        // releases each of its documents (1,000 for a 1,000-document query), which the listeners
        // need not wait for.
        var replaced: [ViewSnapshot?] = []
        for t in ts {
            if tracksMembership && t.listensToBackend { updateLimbo(t) }
            guard let snap = t.view.takeSnapshot(fromCache: fromCache(t)) else { continue }
            replaced.append(t.lastSnapshot)
            t.lastSnapshot = snap
            for l in t.listeners {
                replaced.append(l.lastSnapshot)
                if let ev = l.onViewSnapshot(snap) { raise(l, ev, posterStaysBusy: posterStaysBusy) }
            }
        }
        withExtendedLifetime(replaced) {}
    }

    private func raise(_ l: QueryListener, _ snap: ViewSnapshot, posterStaysBusy: Bool) {
        let token = l.token, cb = l.callback
        events.post(posterStaysBusy: posterStaysBusy) { token.deliver { cb(.snapshot(snap)) } }
    }

    // MARK: listening

    /// Registers a listener; its events go through `token`. Returns the listener id.
    func listen(_ query: Query, options: ListenOptions, token: ListenerToken, callback: @escaping (ListenEvent) -> Void) -> Int {
        worker.assertCurrent()
        let id = nextListenerId
        nextListenerId += 1
        do {
            try query.validateForExecution()
        } catch {
            let e = error as? EmberError ?? EmberError(.internal, "\(error)")
            events.post { token.deliverFinal { callback(.error(e)) } }
            return id
        }
        let key = query.canonicalId + (options.source == .cache ? "#cache" : "")
        let target: Target
        var isNew = false
        if let t = targets[key] { target = t } else {
            target = Target(key: key, query: query, listensToBackend: options.source == .default)
            targets[key] = target
            index.add(target)
            target.view.reset(local.execute(query))
            if target.listensToBackend && (local.persistence.isDurable || tracksMembership) {
                // The cache still holds what the target had when its token was stored (the
                // collector forgets tokens when it removes documents): listen from there.
                target.resumeToken = local.persistence.targetCache.get(key)?.resumeToken
                target.storedResumeToken = target.resumeToken
                target.hasCachedResults = target.resumeToken != nil
                // What the server held then, as near as the cache tells: the matching documents
                // without local writes.
                if tracksMembership && target.hasCachedResults {
                    target.syncedKeys = Set(target.view.window.lazy.filter { !$0.hasLocalMutations }.map { $0.key })
                }
            }
            isNew = true
        }
        let listener = QueryListener(id: id, options: options, token: token, onlineState: onlineState,
                                     hasCachedResults: target.hasCachedResults, callback: callback)
        target.listeners.append(listener)
        listenerTargets[id] = target
        if isNew {
            markDirty(target)
            emit()
            if target.listensToBackend && networkEnabled { startBackendListen(target) }
        } else if let snap = target.lastSnapshot, let ev = listener.onViewSnapshot(snap) {
            raise(listener, ev, posterStaysBusy: false)
        }
        return id
    }

    private func startBackendListen(_ t: Target) {
        if tracksMembership, let id = backendIdByWatchKey[t.query.targetCanonicalId], let sibling = targetsByBackendId[id]?.first {
            // The server already watches this query as another (a limit query and its
            // limit-to-last mirror): the target shares it, and what the server told it so far.
            t.backendId = id
            targetsByBackendId[id]!.append(t)
            t.syncedKeys = sibling.syncedKeys
            t.resumeToken = sibling.resumeToken ?? t.resumeToken
            t.view.isCurrent = sibling.view.isCurrent
            t.view.readTime = max(t.view.readTime, sibling.view.readTime)
            markDirty(t)
            emit()
            return
        }
        let id = nextBackendTargetId
        nextBackendTargetId += 1
        t.backendId = id
        targetsByBackendId[id] = [t]
        var known = t.view.matchedKeys
        if tracksMembership {
            backendIdByWatchKey[t.query.targetCanonicalId] = id
            // The keys the server holds in the target: none when it starts from scratch.
            if t.resumeToken == nil { t.syncedKeys = [] }
            known = Array(t.syncedKeys)
            armOnlineTimerIfUnknown()
        }
        connection.listen(targetId: id, query: t.query, knownKeys: known, resumeToken: t.resumeToken)
    }

    /// `t` stops listening at the backend; the backend target ends with the last target it
    /// serves (`unlisten` false: the backend ended it).
    private func stopBackendListen(_ t: Target, unlisten: Bool = true) {
        guard let id = t.backendId else { return }
        t.backendId = nil
        var served = targetsByBackendId[id] ?? []
        served.removeAll { $0 === t }
        guard served.isEmpty else { targetsByBackendId[id] = served; return }
        targetsByBackendId[id] = nil
        if tracksMembership { backendIdByWatchKey[t.query.targetCanonicalId] = nil }
        if unlisten { connection.unlisten(targetId: id) }
    }

    func removeListener(_ id: Int) {
        worker.assertCurrent()
        guard let t = listenerTargets.removeValue(forKey: id) else { return }
        t.listeners.removeAll { $0.id == id }
        if t.listeners.isEmpty {
            releaseLimbo(of: t)
            targetReleased(t)
            stopBackendListen(t)
            index.remove(t)
            targets[t.key] = nil
            if dirtySet.remove(ObjectIdentifier(t)) != nil { dirty.removeAll { $0 === t } }
        }
    }

    // MARK: network

    func disableNetwork() {
        worker.assertCurrent()
        guard networkEnabled else { return }
        networkEnabled = false
        connection.setNetworkEnabled(false)
        setOnlineState(.offline)
        suspendLimboResolutions()
        for t in targets.values where t.listensToBackend {
            stopBackendListen(t)
            t.view.isCurrent = false
            markDirty(t)
        }
        emit()
    }

    func enableNetwork() {
        worker.assertCurrent()
        guard !networkEnabled else { return }
        networkEnabled = true
        connection.setNetworkEnabled(true)
        setOnlineState(tracksMembership ? .unknown : .online)
        for t in targets.values where t.listensToBackend { startBackendListen(t) }
        pumpLimboResolutions()
        sendPendingWrites()
    }

    func setOnlineState(_ s: OnlineState) {
        if s != .unknown { disarmOnlineTimer() }
        guard s != onlineState else { return }
        onlineState = s
        for t in targets.values {
            for l in t.listeners {
                if let ev = l.onOnlineStateChange(s) { raise(l, ev, posterStaysBusy: false) }
            }
        }
    }

    // MARK: one-shot reads

    /// The local view of a document, from the cache or after asking the backend.
    func getDocument(_ key: DocumentKey, source: GetSource, completion: @escaping @Sendable (Result<DocumentRead, EmberError>) -> Void) {
        worker.assertCurrent()
        let online = networkEnabled && source != .cache
        if !online {
            if source == .server {
                return completion(.failure(EmberError(.unavailable, "Failed to get document from server: the client is offline.")))
            }
            guard let doc = local.localDocument(key) else {
                let why = source == .cache
                    ? "Failed to get document '\(key)' from cache. (It may exist on the server: get it without source cache.)"
                    : "Failed to get document '\(key)' because the client is offline and the document is not in the cache."
                return completion(.failure(EmberError(.unavailable, why)))
            }
            return completion(.success(DocumentRead(key: key, document: doc.exists ? doc : nil, fromCache: true)))
        }
        connection.fetchDocuments([key], completion: worker.confined { [self] result in
            let fetched: FetchedDocuments
            switch result {
            case .success(let f): fetched = f
            case .failure(let e): return completion(.failure(e))
            }
            refresh(local.applyRemote(fetched.documents))
            emit()
            let doc = local.localDocument(key)
            completion(.success(DocumentRead(key: key, document: doc?.exists == true ? doc : nil, fromCache: false)))
        })
    }

    /// A query's result once, from the cache or after asking the backend.
    func getDocuments(_ query: Query, source: GetSource, completion: @escaping @Sendable (Result<ViewSnapshot, EmberError>) -> Void) {
        worker.assertCurrent()
        do { try query.validateForExecution() } catch { return completion(.failure(error as! EmberError)) }
        let online = networkEnabled && source != .cache
        if !online && source == .server {
            return completion(.failure(EmberError(.unavailable, "Failed to get documents from server: the client is offline.")))
        }
        let cached = local.execute(query)
        if !online { return completion(.success(View.snapshot(of: query, cached, fromCache: true, readTime: 0))) }
        let known = cached.map { $0.key }
        connection.fetchQuery(query, knownKeys: known, completion: worker.confined { [self] result in
            let fetched: FetchedQuery
            switch result {
            case .success(let f): fetched = f
            case .failure(let e): return completion(.failure(e))
            }
            let (docs, resolved, version) = (fetched.documents, fetched.resolved, fetched.readVersion)
            refresh(local.applyRemote(docs + resolved))
            emit()
            // Only the documents the backend sent and those with local writes can have changed
            // whether they match since the local run: no second scan of the collection.
            let fresh = local.execute(query, among: known + docs.map { $0.key } + resolved.map { $0.key })
            completion(.success(View.snapshot(of: query, fresh, fromCache: false, readTime: version)))
        })
    }

    func count(_ query: Query, completion: @escaping @Sendable (Result<Int, EmberError>) -> Void) {
        worker.assertCurrent()
        do { try query.validateForExecution() } catch { return completion(.failure(error as! EmberError)) }
        guard networkEnabled else {
            return completion(.failure(EmberError(.unavailable, "Failed to count: aggregate queries need the backend and the client is offline.")))
        }
        connection.fetchCount(query, completion: completion)
    }

    // MARK: shutdown

    func close() {
        worker.assertCurrent()
        guard !closed else { return }
        closed = true
        for t in targets.values {
            // The latest resume token, for listening again after a restart.
            if t.listensToBackend && local.persistence.isDurable && t.resumeToken != t.storedResumeToken { rememberTarget(t) }
            stopBackendListen(t)
            for l in t.listeners { l.token.end() }
        }
        listenerTargets.removeAll()
        targets.removeAll()
        index = TargetIndex()
        connection?.disconnect()
        let err = EmberError(.cancelled, "The database was closed before the write was acknowledged.")
        for (_, cb) in writeCallbacks { events.post { cb(err) } }
        writeCallbacks.removeAll()
        for w in pendingWaiters { events.post { w.done(err) } }
        pendingWaiters.removeAll()
    }
}

/// Where a one-shot read gets its data (Firestore's `Source`).
public enum GetSource: Sendable { case `default`, server, cache }

/// Responsible for: the result of reading one document: the document (nil when it does not
/// exist) and whether it came from the cache.
public struct DocumentRead: Sendable {
    public let key: DocumentKey
    public let document: Document?
    public let fromCache: Bool
    public var hasPendingWrites: Bool { document?.hasLocalMutations ?? false }
}

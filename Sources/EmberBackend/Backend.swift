import EmberConcurrency
import Dispatch
import EmberModel
import EmberStorage
#if canImport(Glibc)
import Glibc
#endif

/// Responsible for: the authoritative store clients sync with (in-process now; a server later
/// speaks the same messages). It applies each batch atomically in commit order on its own queue,
/// stamps create/update times from a strictly increasing clock, resolves server timestamps at
/// commit, refuses what Firestore refuses, and tells each connection about changes to the targets
/// it watches: the work per commit is proportional to the documents changed and the targets
/// indexed on their collection, not to the size of the data.
///
///     let backend = Backend(persistence: MemoryPersistence())
///     let conn = backend.connect(client: engine, queue: workerQueue)
///     conn.commit(batch)     // acknowledged later, as a .commit event
public final class Backend: @unchecked Sendable { // confined to `queue`; its entry points assert it
    let queue = DispatchQueue(label: "ember.backend")
    let persistence: Persistence
    var store: DocumentStore { persistence.backendDocuments }
    private(set) var lastVersion: Int64 = 0
    /// The clock as stored (durable stores): a mark at or above every version issued, written a
    /// lease ahead (`clockLease`) so that most commits need not write it (one page less in the
    /// file per commit), and set to the exact last version at a clean close (`storeExactClock`).
    /// A reopened backend starts at the mark: never behind a version issued before, and after a
    /// crash (or an exit without close) up to a lease ahead of the wall clock until it catches up.
    /// (The mark is written in the commit's own transaction, which must be the outermost one.)
    private var storedClock: Int64 = 0
    static let clockLease: Int64 = 100_000
    var connections: [Int: BackendConnection] = [:]
    private var nextConnectionId = 1
    let targets = BackendTargetIndex()
    /// Commits and targets, for metrics.
    public let counters = BackendCounters()
    /// The Realtime-Database tree (Tree/BackendTree.swift).
    let tree: BackendTree

    /// The highest batch of a client sharing this durable store that was applied (see
    /// `PersistenceKey.backendAppliedBatch`); 0 for memory stores.
    private var appliedBatch: Int64 = 0
    /// Whether the last refused commit was refused because its transaction could not be stored
    /// (on `queue`; read by `BackendConnection.commitNow` right after the commit).
    private(set) var lastCommitNotStored = false
    /// With several servers on one store: the log every commit reaches before it is applied
    /// here (set before the first connection; see `CommitLog`).
    public var commitLog: CommitLog?
    /// How many times a commit (or a computed tree write) is computed again when the log says
    /// another came first.
    static let logAttempts = 20
    /// Whether the keys plain sets write are mostly new, from the last ones seen (a saturating
    /// count in -16...16: a new key adds one, an existing key takes one away). While positive,
    /// commits insert such keys without reading them first (`DocumentStore.insertIfAbsent`).
    private(set) var newKeysGuess = 16

    /// Whether `after` leaves the stored document `before` as it was (both exist, same fields).
    private static func leavesUnchanged(_ after: Document, _ before: Document?) -> Bool {
        guard after.exists, let before, before.exists else { return false }
        return after.data == before.data
    }

    private func noteKey(new: Bool) {
        newKeysGuess = new ? min(newKeysGuess + 1, 16) : max(newKeysGuess - 1, -16)
    }

    public init(persistence: Persistence) {
        self.persistence = persistence
        if persistence.isDurable {
            lastVersion = persistence.metadata(PersistenceKey.backendVersion) ?? 0
            storedClock = lastVersion
            appliedBatch = persistence.metadata(PersistenceKey.backendAppliedBatch) ?? 0
        }
        self.tree = BackendTree(persistence: persistence, queue: queue)
        targets.onCount = { [counters] n in counters.update { $0.targets = n } }
    }

    /// Opens a connection whose events are delivered to `client` on `queue`. `clientPersistence`
    /// is the client's store: when it is this backend's durable store, the backend records the
    /// batches it applies in the same transaction, so a batch resent after a crash between the
    /// commit and its acknowledgement is acknowledged without being applied twice.
    public func connect(client: BackendClient, queue deliveryQueue: DispatchQueue, clientPersistence: Persistence? = nil) -> BackendConnection {
        queue.sync {
            let shares = clientPersistence.map { $0 === persistence && persistence.isDurable } ?? false
            let conn = BackendConnection(backend: self, id: nextConnectionId, client: client, deliveryQueue: deliveryQueue,
                                         sharesPersistence: shares, commitsInline: shares && persistence.documentsShared)
            connections[conn.id] = conn
            nextConnectionId += 1
            return conn
        }
    }

    /// Blocks until every message sent so far has been processed, and the tree's index builds
    /// they started are installed (tests and shutdown: then no backend work runs off the queue).
    public func flush() {
        queue.sync {}
        tree.builds.wait()
    }

    /// The stored document at `key` (nil when missing), read in order with the commits. Never
    /// call it on the backend's own queue (a `CommitAuthorizer` is given its own reader there).
    public func document(at key: DocumentKey) -> Document? {
        queue.sync { store.get(key).flatMap { $0.exists ? $0 : nil } }
    }

    /// The ids of the collections under `parent` holding a document (ListCollectionIds).
    public func collectionIds(under parent: ResourcePath) -> [String] {
        queue.sync { store.collectionIds(under: parent) }
    }

    /// Stores the exact last version as the clock's mark (before the file closes), so that a
    /// reopened backend continues from it rather than from a lease ahead: repeated opens and
    /// closes do not push the clock ahead of the wall clock.
    public func storeExactClock() {
        queue.sync {
            guard persistence.isDurable, storedClock != lastVersion else { return }
            let exact = lastVersion
            // A close that cannot store it leaves the mark ahead: still never behind.
            if (try? persistence.runTransaction("clock") { persistence.setMetadata(PersistenceKey.backendVersion, exact) }) != nil {
                storedClock = exact
            }
        }
    }

    /// Keeps the clock past `version` (a commit logged by another server).
    func noteVersion(_ version: Int64) {
        if version > lastVersion { lastVersion = version }
    }

    /// A strictly increasing clock in µs, close to wall-clock time.
    func nextVersion() -> Int64 {
        queue.assertCurrent()
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        let now = Int64(ts.tv_sec) * 1_000_000 + Int64(ts.tv_nsec) / 1000
        lastVersion = max(now, lastVersion + 1)
        return lastVersion
    }

    // MARK: commits (on `queue`)

    /// Applies `mutations` atomically. Returns the commit version and the changed documents
    /// (tombstones for deletes), or the error that refused the whole batch.
    func applyCommit(_ mutations: [Mutation], from origin: BackendConnection, batchId: Int64?,
                     authorize: CommitAuthorizer? = nil, reads: [DocumentKey: Int64] = [:], attempt: Int = 0) -> Result<Int64, EmberError> {
        queue.assertCurrent()
        if origin.sharesPersistence, let b = batchId, b <= appliedBatch {
            // Applied before the client restarted, its acknowledgement lost: acknowledge it now.
            // A client committing inline leaves the dequeuing to the backend: do it here too
            // (when it cannot be stored, the batch is acknowledged again at the next start).
            if origin.commitsInline {
                try? persistence.runTransaction("dequeue an applied batch") { persistence.mutationQueue.remove(batchId: b) }
            }
            var seen = Set<DocumentKey>()
            let docs = mutations.filter { seen.insert($0.key).inserted }.map { lookup($0.key) }
            origin.send(.commit(version: lastVersion, documents: docs, ack: b))
            return .success(lastVersion)
        }
        lastCommitNotStored = false
        // A commit that is refused or not stored gives its version back: `lastVersion` is handed
        // out as a read time, and the file's clock mark covers only the versions of stored commits.
        let versionBefore = lastVersion
        var stored = false
        defer { if !stored { lastVersion = versionBefore } }
        let version = nextVersion()
        // Per distinct key, in first-seen order: its state before the commit and after it (nil
        // while only verified). One dictionary lookup per mutation finds the key's slot.
        var order: [DocumentKey] = []
        var slotOf: [Int] = []
        var blind: [Bool] = []
        var first: [Int] = []
        var slot: [DocumentKey: Int] = [:]
        slot.reserveCapacity(mutations.count)
        slotOf.reserveCapacity(mutations.count)
        for m in mutations {
            if let s = slot[m.key] {
                blind[s] = false
                slotOf.append(s)
            } else {
                slot[m.key] = order.count
                slotOf.append(order.count)
                order.append(m.key)
                blind.append(m.isBlindSet)
                first.append(slotOf.count - 1)
            }
        }
        // A key whose one write in the batch is a plain set is not read first while such keys
        // are mostly new (`newKeysGuess`): the transaction inserts it, and reads it only when
        // it turns out to be there (`unread`). Its `before` stays nil until then.
        let guessNew = commitLog == nil && authorize == nil && newKeysGuess > 0 && store.insertsWithoutReading
        var unread = [Bool](repeating: false, count: order.count)
        var before: [Document?] = []
        before.reserveCapacity(order.count)
        for (i, key) in order.enumerated() {
            if guessNew && blind[i] {
                unread[i] = true
                before.append(nil)
                continue
            }
            // A row that cannot be read (a storage error, damaged fields) fails the commit: read
            // as absent, an update would be refused and a merge would replace the document.
            let b: Document?
            do { b = try store.read(key) } catch {
                lastCommitNotStored = true
                return .failure(EmberError.storage(error))
            }
            if blind[i] && authorize == nil { noteKey(new: b == nil) }
            before.append(b)
        }
        var after = [Document?](repeating: nil, count: order.count)
        // The authorizer's reader of other documents (a local function: no closure is allocated
        // on commits that have no authorizer).
        func read(_ key: DocumentKey) -> Document? { store.get(key).flatMap { $0.exists ? $0 : nil } }
        var current: (mutation: Mutation, state: Document?)?
        // A set was checked whole by the client; a patch or transform can grow the stored
        // document past the limits, which only the merged result shows. That error depends on
        // what is stored (it names the merged size), so it is raised only after the rules
        // allowed the whole commit: a caller they refuse learns nothing of the document.
        var limitError: EmberError?
        do {
            for (j, m) in mutations.enumerated() {
                let i = slotOf[j]
                if authorize != nil { current = (m, after[i] ?? before[i]) }
                if let result = try m.applyAtBackend(to: after[i] ?? before[i], commitTime: version) {
                    if limitError == nil, result.exists, !m.transforms.isEmpty || m.isPatch {
                        do { try DocumentLimits.validate(key: m.key, data: result.data) } catch let e as EmberError {
                            limitError = e
                            if authorize == nil { throw e }
                        }
                    }
                    after[i] = result
                }
            }
        } catch let e as EmberError {
            // A failed precondition tells whether the document exists: as Firestore, the write's
            // rule decides first (on the write as it would be without its precondition), and a
            // caller it refuses learns nothing more.
            if let authorize, let (m, state) = current, [.notFound, .alreadyExists, .failedPrecondition].contains(e.code),
               let unconditional = try? Mutation(key: m.key, kind: m.kind, transforms: m.transforms).applyAtBackend(to: state, commitTime: version),
               let refusal = authorize(m.key, state.flatMap { $0.exists ? $0 : nil }, unconditional, version, read) {
                return .failure(refusal)
            }
            return .failure(e)
        } catch {
            return .failure(EmberError(.internal, "\(error)"))
        }
        // The caller's permission for each document it writes, on the state the batch applies
        // to: one refusal refuses the whole batch, before anything is stored.
        if let authorize {
            for (i, key) in order.enumerated() {
                guard let a = after[i] else { continue }
                if let refusal = authorize(key, before[i].flatMap { $0.exists ? $0 : nil }, a, version, read) { return .failure(refusal) }
            }
        }
        if let limitError { return .failure(limitError) }
        // A document the commit leaves with the same contents is not changed (Firestore keeps
        // its update time and tells no listener): only its writer's acknowledgement carries it.
        var unchanged: [Bool] = Array(repeating: false, count: order.count)
        for i in order.indices {
            if let a = after[i], Backend.leavesUnchanged(a, before[i]) {
                after[i] = before[i]
                unchanged[i] = true
            }
        }
        if let log = commitLog {
            // Logged first: the log orders it among every server's and checks that what it was
            // computed from is still there; another commit first: catch up and compute it again.
            var entries: [CommitLogEntry] = []
            for (i, key) in order.enumerated() {
                // A document the transaction read must be as it read it; any other as computed.
                let expected = reads[key] ?? before[i].flatMap { $0.exists ? $0.updateTime : nil } ?? 0
                entries.append(CommitLogEntry(key: key, document: unchanged[i] ? nil : after[i], expectedUpdateTime: expected))
            }
            for (key, time) in reads where slot[key] == nil {
                entries.append(CommitLogEntry(key: key, document: nil, expectedUpdateTime: time))
            }
            switch log.append(version: version, entries: entries) {
            case .success:
                break
            case .failure(let e) where e.code == .aborted:
                // Another commit came first: catch up, and compute the commit again, unless it is
                // a transaction's (what it read changed: its client retries the transaction).
                stored = true   // the version is given back here, not by the deferred reset
                lastVersion = versionBefore
                log.catchUp()
                guard reads.isEmpty, attempt < Backend.logAttempts else { return .failure(e) }
                return applyCommit(mutations, from: origin, batchId: batchId, authorize: authorize, reads: reads, attempt: attempt + 1)
            case .failure(let e):
                return .failure(e)
            }
        }
        // The batch is committed only when its transaction is in the file: a storage error (full
        // disk, I/O error, read-only file) refuses the whole batch, like any other refusal, and
        // nothing of it is applied or announced.
        var clockMark: Int64?
        let guessBefore = newKeysGuess
        do {
            try persistence.runTransaction("backend commit") {
                for (i, key) in order.enumerated() {
                    guard let doc = after[i], !unchanged[i] else { continue }
                    if unread[i] {
                        if store.insertIfAbsent(doc) { noteKey(new: true); continue }
                        // There after all: the set applies to what is stored, as if read first.
                        noteKey(new: false)
                        let b = try store.read(key)
                        before[i] = b
                        guard let a = try mutations[first[i]].applyAtBackend(to: b, commitTime: version) else { continue }
                        if Backend.leavesUnchanged(a, b) {
                            after[i] = b
                            unchanged[i] = true
                            continue
                        }
                        after[i] = a
                        store.put(a)
                        continue
                    }
                    if doc.exists { store.put(doc) } else { store.remove(key) }
                }
                if persistence.isDurable {
                    if version > storedClock {
                        clockMark = version + Backend.clockLease
                        persistence.setMetadata(PersistenceKey.backendVersion, clockMark!)
                    }
                    if origin.commitsInline, let b = batchId {
                        // The batch leaves the client's queue (when it was queued: a write made
                        // offline) in the transaction that applies it: applied exactly when no
                        // longer queued, so a batch is never applied twice after a crash.
                        persistence.mutationQueue.remove(batchId: b)
                    } else if origin.sharesPersistence, let b = batchId {
                        persistence.setMetadata(PersistenceKey.backendAppliedBatch, b)
                    }
                }
            }
        } catch {
            // A statement that failed answered as if the row were there: the guess learnt nothing.
            newKeysGuess = guessBefore
            lastCommitNotStored = true
            return .failure(EmberError.storage(error))
        }
        stored = true
        if let m = clockMark { storedClock = m }
        if origin.sharesPersistence, !origin.commitsInline, let b = batchId, persistence.isDurable { appliedBatch = b }
        var changes: [(key: DocumentKey, old: Document?, new: Document, unchanged: Bool)] = []
        for (i, key) in order.enumerated() {
            guard let new = after[i] else { continue }
            changes.append((key, before[i], new, unchanged[i]))
        }
        counters.update { $0.commits += 1 }
        announce(changes, version: version, origin: batchId == nil ? nil : (origin, batchId!))
        return .success(version)
    }

    /// Tells every connection whose targets a commit changed (and its writer, acknowledging
    /// `origin`'s batch, every document it wrote).
    func announce(_ changes: [(key: DocumentKey, old: Document?, new: Document, unchanged: Bool)], version: Int64,
                  origin: (connection: BackendConnection, batchId: Int64)?) {
        var outgoing: [Int: [DocumentKey: Document]] = [:]
        if let o = origin { outgoing[o.connection.id] = [:] }
        for c in changes {
            if let o = origin { outgoing[o.connection.id]![c.key] = c.new }
            if c.unchanged { continue }
            targets.forEachTarget(touching: c.key) { target in
                target.noteChange(old: c.old, new: c.new) { doc in
                    outgoing[target.connection.id, default: [:]][doc.key] = doc
                }
            }
        }
        for target in targets.takeTouchedLimitTargets() {
            for doc in target.enteredWindow() {
                if outgoing[target.connection.id]?[doc.key] == nil {
                    outgoing[target.connection.id, default: [:]][doc.key] = doc
                }
            }
        }
        for (connId, docs) in outgoing {
            guard let conn = connections[connId] else { continue }
            let ack = connId == origin?.connection.id ? origin?.batchId : nil
            conn.send(.commit(version: version, documents: Array(docs.values), ack: ack))
        }
    }

    // MARK: reads (on `queue`)

    /// Every existing document the query's collection or group holds that matches it, limit aside.
    func scan(_ query: Query) -> [Document] {
        queue.assertCurrent()
        if let key = query.documentKey {
            if let d = store.get(key), d.exists { return [d] }
            return []
        }
        let order = query.normalizedOrderBy
        return store.documents(matching: query) { query.matchesListed($0, orderBy: order) }
    }

    /// The query's result with its limit applied, in query order.
    func run(_ query: Query) -> [Document] {
        queue.assertCurrent()
        var set = DocumentSet(orderBy: query.normalizedOrderBy)
        set.replaceAll(scan(query))
        return Array(set.window(limit: query.limit, type: query.limitType))
    }

    /// The current state of `key`: the document, or a tombstone at the current version.
    func lookup(_ key: DocumentKey) -> Document {
        if let d = store.get(key), d.exists { return d }
        return Document.missing(key, version: lastVersion)
    }

    /// The current states of `keys` (tombstones for missing ones) and the read version.
    func lookup(_ keys: [DocumentKey]) -> ([Document], Int64) {
        (keys.map { lookup($0) }, lastVersion)
    }

    func resolve(_ knownKeys: [DocumentKey], excluding docs: [Document]) -> [Document] {
        let inResult = Set(docs.map { $0.key })
        return knownKeys.filter { !inResult.contains($0) }.map { lookup($0) }
    }
}

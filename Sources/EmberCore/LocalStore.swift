import EmberModel
import EmberStorage

/// Responsible for: the client's local truth: local document = cached backend document + every
/// pending write on it, in order. It keeps the pending writes' results ("overlays") materialized
/// per key so reads and queries cost no more than a lookup. Worker queue only.
///
///     let changed = local.write(mutations, localWriteTime: now)   // keys whose local view changed
///     local.localDocument(key)
final class LocalStore {
    /// A queued batch with its mutations findable by key. A one-mutation batch (every single
    /// write) needs no index; a larger one chains the mutations of each key through `next`
    /// instead of allocating an array per key.
    struct PendingBatch {
        let batch: MutationBatch
        /// The distinct keys, in first-seen order.
        let keys: [DocumentKey]
        private let first: [DocumentKey: Int]
        private let next: [Int]

        init(_ batch: MutationBatch) {
            self.batch = batch
            let ms = batch.mutations
            if ms.count == 1 {
                keys = [ms[0].key]
                first = [:]
                next = []
                return
            }
            var keys: [DocumentKey] = []
            var first: [DocumentKey: Int] = [:]
            first.reserveCapacity(ms.count)
            var last: [Int] = []        // per distinct key (index into keys): its last mutation so far
            var next = [Int](repeating: -1, count: ms.count)
            var slotOfKey: [Int] = []   // per mutation: index into keys
            slotOfKey.reserveCapacity(ms.count)
            for (i, m) in ms.enumerated() {
                if let f = first[m.key] {
                    let slot = slotOfKey[f]
                    next[last[slot]] = i
                    last[slot] = i
                    slotOfKey.append(slot)
                } else {
                    first[m.key] = i
                    slotOfKey.append(keys.count)
                    last.append(i)
                    keys.append(m.key)
                }
            }
            self.keys = keys
            self.first = first
            self.next = next
        }

        /// Runs `body` for each mutation of the batch on `key`, in order; false when there is none.
        @inline(__always)
        @discardableResult
        func forEach(on key: DocumentKey, _ body: (Mutation) -> Void) -> Bool {
            let ms = batch.mutations
            if next.isEmpty {
                guard ms.count == 1, ms[0].key == key else { return false }
                body(ms[0])
                return true
            }
            guard var i = first[key] else { return false }
            while i >= 0 { body(ms[i]); i = next[i] }
            return true
        }
    }

    let persistence: Persistence
    var remote: DocumentStore { persistence.remoteDocuments }
    /// Whether the cache is the backend's own table (`Persistence.documentsShared`): the
    /// backend's commits are the cache's content, so acknowledgements and remote documents
    /// store nothing here.
    private let shared: Bool
    private var pending: [Int64: PendingBatch] = [:]
    private var pendingOrder: [Int64] = []
    private var pendingHead = 0
    private var batchesByKey: [DocumentKey: [Int64]] = [:]
    private var overlays: [DocumentKey: Document] = [:]
    private var overlaysByCollection: [ParentKey: Set<DocumentKey>] = [:]
    private var nextBatchId: Int64
    /// Batches dropped from memory whose removal from a durable queue could not be stored yet.
    private var unstoredRemovals: [Int64] = []
    /// Keys a server acknowledged a write to at a version its watch has not sent yet (the
    /// Firebase SDKs' committed mutations): the local document stays pending until it has.
    /// In memory only: after a restart the committed document shows as synced.
    private var awaitingWatch: [DocumentKey: Int64] = [:]

    init(persistence: Persistence) {
        self.persistence = persistence
        self.shared = persistence.documentsShared
        self.nextBatchId = persistence.mutationQueue.nextBatchId()
        for b in persistence.mutationQueue.allBatches() { track(b) }
        for key in batchesByKey.keys { recomputeOverlay(key) }
    }

    var hasPendingWrites: Bool { pendingHead < pendingOrder.count }
    var highestPendingBatchId: Int64? { hasPendingWrites ? pendingOrder.last : nil }
    /// The oldest pending batch (O(1): every acknowledgement asks while someone waits for pending writes).
    var lowestPendingBatchId: Int64? { hasPendingWrites ? pendingOrder[pendingHead] : nil }

    /// Pending batches in order (to send, or resend after the network comes back).
    var pendingBatches: [MutationBatch] {
        pendingOrder[pendingHead...].compactMap { pending[$0]?.batch }
    }

    func localDocument(_ key: DocumentKey) -> Document? {
        overlays[key] ?? remote.get(key)
    }

    func hasPendingWrites(for key: DocumentKey) -> Bool { batchesByKey[key] != nil }

    /// Keys with pending writes (the LRU collector keeps their cached documents).
    var pendingKeys: Dictionary<DocumentKey, [Int64]>.Keys { batchesByKey.keys }

    // MARK: writes

    /// Queues a batch and applies it locally. Returns the batch and the keys it touched. Throws,
    /// applying nothing, when a durable queue cannot store it (full disk, I/O error, read-only
    /// file): a write is either in the file when this returns or refused.
    func write(_ mutations: [Mutation], localWriteTime: Int64) throws -> (MutationBatch, [DocumentKey]) {
        let batch = MutationBatch(batchId: nextBatchId, localWriteTime: localWriteTime, mutations: mutations)
        do {
            try persistence.runTransaction("write") {
                persistence.mutationQueue.add(batch)
                for id in unstoredRemovals { persistence.mutationQueue.remove(batchId: id) }
            }
        } catch {
            throw EmberError.storage(error)
        }
        unstoredRemovals.removeAll()
        nextBatchId += 1
        return (batch, applyPending(batch))
    }

    /// A batch with the next id, not queued anywhere: for a write the backend commits before it
    /// is applied locally (`applyPending`), so it never needs the durable queue.
    func unqueuedBatch(_ mutations: [Mutation], localWriteTime: Int64) -> MutationBatch {
        defer { nextBatchId += 1 }
        return MutationBatch(batchId: nextBatchId, localWriteTime: localWriteTime, mutations: mutations)
    }

    /// Tracks `batch` (the newest) as pending and applies it to the local view. Returns its keys.
    func applyPending(_ batch: MutationBatch) -> [DocumentKey] {
        let pb = track(batch)
        for key in pb.keys { applyNewestBatch(pb, to: key) }
        return pb.keys
    }

    /// `recomputeOverlay(key)` when `batch`, the newest pending batch, was just tracked: the
    /// replay of every earlier pending batch is the current local document (an overlay exists
    /// exactly when that replay set `hasLocalMutations`; otherwise the replay left the remote
    /// document as it was), so only `batch`'s mutations need applying on top of it.
    private func applyNewestBatch(_ pb: PendingBatch, to key: DocumentKey) {
        var doc = localDocument(key)
        let t = pb.batch.localWriteTime
        guard pb.forEach(on: key, { m in doc = m.applyLocally(to: doc, localWriteTime: t) }) else { return recomputeOverlay(key) }
        storeOverlay(doc, for: key)
    }

    @discardableResult
    private func track(_ batch: MutationBatch) -> PendingBatch {
        let pb = PendingBatch(batch)
        let keys = pb.keys
        pending[batch.batchId] = pb
        pendingOrder.append(batch.batchId)
        nextBatchId = max(nextBatchId, batch.batchId + 1)
        for k in keys { batchesByKey[k, default: []].append(batch.batchId) }
        return pb
    }

    /// Stores the removals of rejected batches that could not be stored when they were rejected
    /// (else such a batch stays queued and is sent again at the next start).
    func storeUnstoredRemovals() {
        guard !unstoredRemovals.isEmpty else { return }
        do {
            try persistence.runTransaction("remove batches") {
                for id in unstoredRemovals { persistence.mutationQueue.remove(batchId: id) }
            }
            unstoredRemovals.removeAll()
        } catch {}
    }

    /// Drops a batch that was never queued (`unqueuedBatch`) and that the backend refused.
    /// Returns the keys whose local view may change.
    func removeUnqueued(_ batchId: Int64) -> [DocumentKey] {
        forgetBatch(batchId)
    }

    /// Drops a rejected batch. Returns the keys whose local view may change. When its removal
    /// from a durable queue cannot be stored, it is removed with the next write that can be.
    func removeBatch(_ batchId: Int64) -> [DocumentKey] {
        guard pending[batchId] != nil else { return [] }
        do {
            try persistence.runTransaction("remove batch") { persistence.mutationQueue.remove(batchId: batchId) }
        } catch {
            unstoredRemovals.append(batchId)
        }
        return forgetBatch(batchId)
    }

    /// The backend's acknowledgement: the committed documents enter the cache and the batch
    /// leaves the queue, in one transaction. Returns the keys whose local view may change, or nil
    /// when the transaction could not be stored: then nothing changes (the batch stays pending,
    /// its overlay showing the write, which the backend holds) and the caller tries again later.
    func acknowledge(_ docs: [Document], batchId: Int64?) -> [DocumentKey]? {
        var changed: [DocumentKey] = []
        if shared {
            // The backend stored the documents and took the batch out of the queue when it
            // committed it: only removals that failed earlier remain to be stored.
            storeUnstoredRemovals()
            var keys = recomputeChanged(docs.map { $0.key }, acknowledging: batchId)
            if let b = batchId { keys += forgetBatch(b) }
            return keys
        }
        do {
            try persistence.runTransaction("acknowledge") {
                changed = []
                for d in docs where remote.putIfNewer(d) { changed.append(d.key) }
                if let b = batchId, pending[b] != nil { persistence.mutationQueue.remove(batchId: b) }
                for id in unstoredRemovals { persistence.mutationQueue.remove(batchId: id) }
            }
        } catch {
            return nil
        }
        unstoredRemovals.removeAll()
        var keys = recomputeChanged(changed, acknowledging: batchId)
        if let b = batchId { keys += forgetBatch(b) }
        return keys
    }

    /// The documents batch `batchId` committed, for a backend that acknowledged it with write
    /// results only (a server): each write applied in order to the cached document with its result
    /// (Firebase's `applyToRemoteDocument`). Left out: keys whose committed state cannot be known
    /// here (a patch of a document not cached), and keys the cache already holds at the write's
    /// version or later (the listen stream brought them first: they are the backend's own).
    func committedDocuments(batchId: Int64, results: [MutationResult]) -> [Document] {
        guard let pb = pending[batchId] else { return [] }
        var state: [DocumentKey: Document?] = [:]
        var resultVersion: [DocumentKey: Int64] = [:]
        for (i, m) in pb.batch.mutations.enumerated() where i < results.count {
            if case .verify = m.kind { continue }
            let base: Document? = state[m.key] ?? remote.get(m.key)
            state[m.key] = .some(m.applyCommitted(to: base, result: results[i]))
            resultVersion[m.key] = results[i].version
        }
        return pb.keys.compactMap { key in
            guard let doc = state[key] ?? nil else { return nil }
            if let cached = remote.get(key), cached.version >= resultVersion[key]! { return nil }
            return doc
        }
    }

    /// The committed documents of a server's acknowledgement stay pending until its watch sends
    /// their version (or a later one): call before `acknowledge` stores them.
    func awaitWatch(_ docs: [Document], version: Int64) {
        for d in docs { awaitingWatch[d.key] = max(awaitingWatch[d.key] ?? 0, d.version, version) }
    }

    /// Drops batch `batchId` from memory (the queue in storage is the caller's). Returns the keys
    /// whose local view may change.
    private func forgetBatch(_ batchId: Int64) -> [DocumentKey] {
        guard let pb = pending.removeValue(forKey: batchId) else { return [] }
        if pendingHead < pendingOrder.count && pendingOrder[pendingHead] == batchId {
            pendingHead += 1
            if pendingHead > 1024 && pendingHead * 2 > pendingOrder.count {
                pendingOrder.removeFirst(pendingHead)
                pendingHead = 0
            }
        } else if let i = pendingOrder[pendingHead...].firstIndex(of: batchId) {
            pendingOrder.remove(at: i)
        }
        let keys = pb.keys
        for k in keys {
            if var ids = batchesByKey[k] {
                if ids.first == batchId { ids.removeFirst() } else { ids.removeAll { $0 == batchId } }
                batchesByKey[k] = ids.isEmpty ? nil : ids
            }
            recomputeOverlay(k)
        }
        return keys
    }

    /// Stores documents from the backend unless the cache already has a newer version.
    /// Returns the keys whose cached version changed. When the caller removes batch `acknowledging`
    /// right after (`removeBatch`), the overlays of that batch's keys are left for `removeBatch` to
    /// recompute, instead of being replayed here and again there.
    /// The cache is a copy of the backend's documents: when it cannot be stored, nothing changes
    /// and the documents are read from the backend again later.
    ///
    /// A document a server's acknowledgement left pending (`awaitWatch`) stops being pending at
    /// its committed version or later; an older version of it is ignored.
    func applyRemote(_ docs: [Document], acknowledging acked: Int64? = nil) -> [DocumentKey] {
        // The backend's table is the cache: its documents are there already (perhaps newer).
        if shared { return recomputeChanged(docs.map { $0.key }, acknowledging: acked) }
        var changed: [DocumentKey] = []
        changed.reserveCapacity(docs.count)
        var caughtUp: [DocumentKey] = []
        if !awaitingWatch.isEmpty {
            for d in docs {
                if let v = awaitingWatch[d.key], d.version >= v {
                    awaitingWatch[d.key] = nil
                    caughtUp.append(d.key)
                }
            }
        }
        do {
            try persistence.runTransaction("apply remote") {
                changed.removeAll(keepingCapacity: true)
                for d in docs where remote.putIfNewer(d) { changed.append(d.key) }
            }
        } catch {
            return []
        }
        for k in caughtUp {
            if !changed.contains(k) { changed.append(k) }
            if batchesByKey[k] == nil { recomputeOverlay(k) }
        }
        return recomputeChanged(changed, acknowledging: acked)
    }

    /// Recomputes the overlays of `changed` keys with pending batches (except those of batch
    /// `acked`, which `forgetBatch` recomputes next). Returns `changed`.
    private func recomputeChanged(_ changed: [DocumentKey], acknowledging acked: Int64?) -> [DocumentKey] {
        for k in changed {
            guard let ids = batchesByKey[k] else { continue }
            // removeBatch(acked) recomputes every key of that batch next: once is enough.
            if let a = acked, ids[0] == a || ids.contains(a), pending[a] != nil { continue }
            recomputeOverlay(k)
        }
        return changed
    }

    private func recomputeOverlay(_ key: DocumentKey) {
        if batchesByKey[key] == nil, awaitingWatch[key] != nil, let d = remote.get(key) {
            return storeOverlay(d.markedPending(), for: key)
        }
        guard let ids = batchesByKey[key] else {
            if overlays.removeValue(forKey: key) != nil {
                let parent = ParentKey(of: key)
                overlaysByCollection[parent]?.remove(key)
                if overlaysByCollection[parent]?.isEmpty == true { overlaysByCollection[parent] = nil }
            }
            return
        }
        var doc = remote.get(key)
        for id in ids {
            guard let pb = pending[id] else { continue }
            let t = pb.batch.localWriteTime
            pb.forEach(on: key) { m in doc = m.applyLocally(to: doc, localWriteTime: t) }
        }
        storeOverlay(doc, for: key)
    }

    /// Keeps `doc` as the overlay of `key` when it carries local mutations, else drops the overlay.
    private func storeOverlay(_ doc: Document?, for key: DocumentKey) {
        if let d = doc, d.hasLocalMutations {
            if overlays.updateValue(d, forKey: key) == nil { overlaysByCollection[ParentKey(of: key), default: []].insert(key) }
        } else if overlays.removeValue(forKey: key) != nil {
            overlaysByCollection[ParentKey(of: key)]?.remove(key)
        }
    }

    /// The collections under `parent` where a local write (not yet acknowledged) put a document
    /// (ids compared by UTF-8 bytes, unsorted, possibly repeated).
    func pendingCollectionIds(under parent: ResourcePath) -> [String] {
        var out: [String] = []
        let n = parent.segments.count
        for (k, d) in overlays where d.exists {
            if k.path.count > n + 1 && parent.isPrefix(of: k.path) { out.append(k.path.segments[n]) }
        }
        return out
    }

    // MARK: queries

    /// `execute(query)` when only `keys` and the documents with local mutations can have changed
    /// whether they match since the caller's last full execution (`keys` holding that result).
    func execute(_ query: Query, among keys: [DocumentKey]) -> [Document] {
        let order = query.normalizedOrderBy
        var seen = Set<DocumentKey>(minimumCapacity: keys.count)
        var out: [Document] = []
        func consider(_ key: DocumentKey) {
            guard seen.insert(key).inserted, let d = localDocument(key), query.matches(d, orderBy: order) else { return }
            out.append(d)
        }
        for k in keys { consider(k) }
        if let g = query.collectionGroup {
            for k in overlays.keys where k.collectionGroup == g { consider(k) }
        } else {
            for k in overlaysByCollection[ParentKey(query.path)] ?? [] { consider(k) }
        }
        return out
    }

    /// Every existing local document matching the query (limit not applied).
    func execute(_ query: Query) -> [Document] {
        if let key = query.documentKey {
            if let d = localDocument(key), d.exists { return [d] }
            return []
        }
        let order = query.normalizedOrderBy
        var out: [Document] = []
        var seen = Set<DocumentKey>()
        if let g = query.collectionGroup {
            for (k, d) in overlays where k.collectionGroup == g {
                seen.insert(k)
                if query.matches(d, orderBy: order) { out.append(d) }
            }
        } else {
            for k in overlaysByCollection[ParentKey(query.path)] ?? [] {
                seen.insert(k)
                if let d = overlays[k], query.matches(d, orderBy: order) { out.append(d) }
            }
        }
        out += remote.documents(matching: query) { d in
            (seen.isEmpty || !seen.contains(d.key)) && query.matchesListed(d, orderBy: order)
        }
        return out
    }
}

extension Document {
    /// This document as a local one with a pending write (the same fields and versions).
    fileprivate func markedPending() -> Document {
        exists ? Document(key: key, data: data, version: version, createTime: createTime, updateTime: updateTime, hasLocalMutations: true)
               : .missing(key, version: version, hasLocalMutations: true)
    }
}

import EmberModel

/// Responsible for: the in-memory `Persistence` (nothing survives the process). Not thread-safe:
/// its owner (the backend's queue or the client's worker) serializes access to each store.
///
///     let p = MemoryPersistence(); p.remoteDocuments.put(doc)
public final class MemoryPersistence: Persistence {
    public let backendDocuments: DocumentStore = MemoryDocumentStore()
    public let remoteDocuments: DocumentStore = MemoryDocumentStore()
    public let mutationQueue: MutationQueue = MemoryMutationQueue()
    public let targetCache: TargetCache = MemoryTargetCache()
    public var indexManager: IndexManager? { nil }
    public let backendTree: TreeStore? = MemoryTreeStore()
    public var isDurable: Bool { false }
    private var meta: [String: Int64] = [:]

    public func metadata(_ key: String) -> Int64? { meta[key] }
    public func setMetadata(_ key: String, _ value: Int64) { meta[key] = value }

    public init() {}

    public func runTransaction<T>(_ label: String, _ body: () throws -> T) throws -> T { try body() }
    public func close() {}
}

/// Responsible for: documents in memory, grouped by collection for scans, with a group index.
/// Entries are keyed by `DocumentKey` (UTF-8 equality), not by the id `String`, whose `==` would
/// merge canonically equivalent ids ("\u{E9}" and "e\u{301}") that are two documents.
public final class MemoryDocumentStore: DocumentStore {
    private var byCollection: [ParentKey: CollectionEntries] = [:]
    private var collectionsByGroup: [String: Set<ResourcePath>] = [:]
    public private(set) var count = 0

    public init() {}

    public func get(_ key: DocumentKey) -> Document? {
        byCollection[ParentKey(of: key)]?.get(key)
    }

    public func put(_ doc: Document) {
        let parent = ParentKey(of: doc.key)
        let entries: CollectionEntries
        if let e = byCollection[parent] {
            entries = e
        } else {
            entries = CollectionEntries()
            byCollection[parent] = entries
            collectionsByGroup[doc.key.collectionGroup, default: []].insert(doc.key.collectionPath)
        }
        if entries.put(doc) { count += 1 }
    }

    public func remove(_ key: DocumentKey) {
        if byCollection[ParentKey(of: key)]?.remove(key) == true { count -= 1 }
    }

    public func documents(in collection: ResourcePath) -> [Document] {
        byCollection[ParentKey(collection)]?.docs ?? []
    }

    public func documents(matching query: Query, where keep: (Document) -> Bool) -> [Document] {
        if let g = query.collectionGroup { return documents(inGroup: g).filter(keep) }
        guard let entries = byCollection[ParentKey(query.path)] else { return [] }
        var out: [Document] = []
        for d in entries.docs where keep(d) { out.append(d) }
        return out
    }

    public func collectionIds(under parent: ResourcePath) -> [String] {
        var out = Set<UTF8String>()
        let n = parent.segments.count
        for paths in collectionsByGroup.values {
            for c in paths where c.segments.count > n && parent.isPrefix(of: c) {
                let id = UTF8String(c.segments[n])
                if out.contains(id) { continue }
                if documents(in: c).contains(where: { $0.exists }) { out.insert(id) }
            }
        }
        return sortedDistinctUTF8(out.map(\.s))
    }

    public func documents(inGroup id: String) -> [Document] {
        guard let paths = collectionsByGroup[id] else { return [] }
        // The index's String key may also hold canonically equivalent ids: keep exact matches.
        return paths.filter { compareUTF8($0.last, id) == 0 }.flatMap { documents(in: $0) }
    }
}

/// Responsible for: one collection's entries in a contiguous array (a scan walks them in the
/// order they were stored, which is close to their order in memory) with a slot per key.
final class CollectionEntries {
    private(set) var docs: [Document] = []
    private var slot: [DocumentKey: Int] = [:]

    func get(_ key: DocumentKey) -> Document? {
        slot[key].map { docs[$0] }
    }

    /// Stores `doc`; true when its key is new.
    func put(_ doc: Document) -> Bool {
        if let i = slot[doc.key] {
            docs[i] = doc
            return false
        }
        slot[doc.key] = docs.count
        docs.append(doc)
        return true
    }

    /// Removes the entry at `key` (the last entry takes its slot); true when there was one.
    func remove(_ key: DocumentKey) -> Bool {
        guard let i = slot.removeValue(forKey: key) else { return false }
        let last = docs.removeLast()
        if i < docs.count {
            docs[i] = last
            slot[last.key] = i
        }
        return true
    }
}

/// Responsible for: the mutation queue in memory.
public final class MemoryMutationQueue: MutationQueue {
    private var batches: [MutationBatch] = []
    private var head = 0
    private var lastId: Int64 = 0

    public init() {}

    public func add(_ batch: MutationBatch) {
        batches.append(batch)
        lastId = max(lastId, batch.batchId)
    }

    public func remove(batchId: Int64) {
        // Acknowledgements arrive in order, so the common case removes the head in O(1).
        if head < batches.count && batches[head].batchId == batchId {
            head += 1
            if head > 1024 && head * 2 > batches.count {
                batches.removeFirst(head)
                head = 0
            }
            return
        }
        if let i = batches[head...].firstIndex(where: { $0.batchId == batchId }) { batches.remove(at: i) }
    }

    public func allBatches() -> [MutationBatch] { Array(batches[head...]) }
    public var isEmpty: Bool { head >= batches.count }
    public func nextBatchId() -> Int64 { lastId + 1 }
}

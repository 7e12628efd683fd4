import EmberModel

/// Responsible for: the storage contract every Ember store implements (memory now, SQLite next):
/// the documents a backend holds, the client's cache of them, and the client's queue of
/// unacknowledged writes. Every group of reads and writes that must be atomic runs in
/// `runTransaction`, so a durable implementation can commit them as one unit.
///
///     let p: Persistence = MemoryPersistence()
///     p.runTransaction("write") { p.mutationQueue.add(batch) }
public protocol Persistence: AnyObject {
    /// The authoritative documents of the backend living in this database.
    var backendDocuments: DocumentStore { get }
    /// The client's cache of backend documents (what it last heard from the backend).
    var remoteDocuments: DocumentStore { get }
    /// The client's writes not yet acknowledged, in order.
    var mutationQueue: MutationQueue { get }
    /// Whether writes survive the process (false for memory persistence).
    var isDurable: Bool { get }
    /// The backend's Realtime-Database tree (nil: the backend keeps one in memory). Has a default.
    var backendTree: TreeStore? { get }

    func runTransaction<T>(_ label: String, _ body: () throws -> T) rethrows -> T
    func close()
}

/// Responsible for: documents (and tombstones) by key, listed by collection or collection group.
public protocol DocumentStore: AnyObject {
    func get(_ key: DocumentKey) -> Document?
    /// Inserts or replaces the entry for `doc.key` (a tombstone when `doc.exists` is false).
    func put(_ doc: Document)
    func remove(_ key: DocumentKey)
    /// Every entry whose parent is `collection`, tombstones included, in no particular order.
    func documents(in collection: ResourcePath) -> [Document]
    /// Every entry in every collection named `id`, tombstones included.
    func documents(inGroup id: String) -> [Document]
    /// Number of entries (tombstones included).
    var count: Int { get }
}

/// Responsible for: the ordered queue of unacknowledged mutation batches.
public protocol MutationQueue: AnyObject {
    func add(_ batch: MutationBatch)
    /// Removes the batch; removing an unknown id does nothing.
    func remove(batchId: Int64)
    /// All batches in batch-id order.
    func allBatches() -> [MutationBatch]
    var isEmpty: Bool { get }
    /// The id the next batch gets (one more than the highest ever used).
    func nextBatchId() -> Int64
}

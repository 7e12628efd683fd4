import EmberModel

/// Responsible for: the storage contract every Ember store implements (memory and SQLite):
/// the documents a backend holds, the client's cache of them, the client's queue of
/// unacknowledged writes, the client's listen targets, and a few durable counters. Every group
/// of reads and writes that must be atomic runs in `runTransaction`, so a durable implementation
/// commits them as one unit.
///
///     let p: Persistence = MemoryPersistence()
///     try p.runTransaction("write") { p.mutationQueue.add(batch) }
public protocol Persistence: AnyObject {
    /// The authoritative documents of the backend living in this database.
    var backendDocuments: DocumentStore { get }
    /// The client's cache of backend documents (what it last heard from the backend).
    var remoteDocuments: DocumentStore { get }
    /// The client's writes not yet acknowledged, in order.
    var mutationQueue: MutationQueue { get }
    /// The client's listen targets (read times and LRU sequence numbers).
    var targetCache: TargetCache { get }
    /// Offline query indexes over `remoteDocuments`; nil where the store has none (memory).
    var indexManager: IndexManager? { get }
    /// Whether writes survive the process (false for memory persistence).
    var isDurable: Bool { get }
    /// The backend's Realtime-Database tree (nil: the backend keeps one in memory). Has a default.
    var backendTree: TreeStore? { get }
    /// The client's durable tree cache and pending tree writes (nil: kept in memory). Has a default.
    var clientTree: ClientTreeStore? { get }
    /// Whether the client's cache is the backend's own table (`remoteDocuments` and
    /// `backendDocuments` are one store): the embedded default, where the in-process backend and
    /// its one client share the file. Then the cache keeps one copy of each document, is never
    /// collected, and is indexed where the backend stores. Has a default (false).
    var documentsShared: Bool { get }

    /// A durable integer fact (the backend's clock, the highest batch it applied, ...).
    func metadata(_ key: String) -> Int64?
    func setMetadata(_ key: String, _ value: Int64)

    /// Runs `body` as one atomic unit. Throws what `body` throws, or the storage error that failed
    /// the unit (then none of it is stored: a durable store rolls it back).
    func runTransaction<T>(_ label: String, _ body: () throws -> T) throws -> T
    func close()
}

/// Responsible for: documents (and tombstones) by key, listed by collection or collection group,
/// with the bookkeeping a bounded cache needs (sizes and least-recently-used order).
public protocol DocumentStore: AnyObject {
    func get(_ key: DocumentKey) -> Document?
    /// `get` for a writer that builds on the document: a read the store could not make (a
    /// storage error, stored fields that do not decode) throws instead of reading as absent,
    /// inside a transaction or not.
    func read(_ key: DocumentKey) throws -> Document?
    /// The version of the entry at `key` (nil when none), without reading its fields.
    func version(of key: DocumentKey) -> Int64?
    /// Inserts or replaces the entry for `doc.key` (a tombstone when `doc.exists` is false).
    func put(_ doc: Document)
    /// Puts `doc` unless the store holds a newer version of it; true when it was stored.
    func putIfNewer(_ doc: Document) -> Bool
    /// Stores `doc` only when the store holds no entry for its key (not even a tombstone); true
    /// when it was stored. With `insertsWithoutReading`, cheaper than a `get` then a `put`.
    func insertIfAbsent(_ doc: Document) -> Bool
    /// Whether a writer of documents that are probably new should `insertIfAbsent` rather than
    /// read first: true where a read is a seek in a file, false where it is a dictionary lookup.
    var insertsWithoutReading: Bool { get }
    func remove(_ key: DocumentKey)
    /// Every entry whose parent is `collection`, tombstones included, in no particular order.
    func documents(in collection: ResourcePath) -> [Document]
    /// Every entry in every collection named `id`, tombstones included.
    func documents(inGroup id: String) -> [Document]
    /// The ids of the collections directly under `parent` (a document path, or the empty path for
    /// the root) that hold an existing document, directly or deeper (Firestore's ListCollectionIds),
    /// without repeats and sorted, both by UTF-8 bytes: ids that differ only in their Unicode
    /// normalization ("\u{E9}", "e\u{301}") are different collections.
    func collectionIds(under parent: ResourcePath) -> [String]
    /// At least every entry `query` (a collection or group query) can match, perhaps more
    /// (callers still filter): a store with indexes reads only the candidates an index gives.
    func documents(matching query: Query) -> [Document]
    /// The entries of `documents(matching:)` that `keep` accepts, without listing the rest first
    /// (a memory store filters in place; the default filters the list).
    func documents(matching query: Query, where keep: (Document) -> Bool) -> [Document]
    /// Number of entries (tombstones included).
    var count: Int { get }

    /// Marks entries as used now (least-recently-used order). No-op where the store is not bounded.
    func touch(_ keys: [DocumentKey])
    /// Bytes the entries take (0 where not tracked).
    var byteSize: Int64 { get }
    /// Removes least-recently-used entries that `pinned` does not hold until the store takes at
    /// most `thresholdBytes`. Returns how many entries were removed.
    func collectGarbage(thresholdBytes: Int64, pinned: (DocumentKey) -> Bool) -> Int
}

extension Persistence {
    public var documentsShared: Bool { false }
}

extension DocumentStore {
    /// A store whose reads cannot fail (in memory) reads as `get`.
    public func read(_ key: DocumentKey) throws -> Document? { get(key) }

    public func version(of key: DocumentKey) -> Int64? { get(key)?.version }
    public func putIfNewer(_ doc: Document) -> Bool {
        if let v = version(of: doc.key), v > doc.version { return false }
        put(doc)
        return true
    }
    public func insertIfAbsent(_ doc: Document) -> Bool {
        if get(doc.key) != nil { return false }
        put(doc)
        return true
    }
    public var insertsWithoutReading: Bool { false }
    public func documents(matching query: Query) -> [Document] {
        if let g = query.collectionGroup { return documents(inGroup: g) }
        return documents(in: query.path)
    }
    public func documents(matching query: Query, where keep: (Document) -> Bool) -> [Document] {
        documents(matching: query).filter(keep)
    }
    public func touch(_ keys: [DocumentKey]) {}
    public var byteSize: Int64 { 0 }
    public func collectGarbage(thresholdBytes: Int64, pinned: (DocumentKey) -> Bool) -> Int { 0 }
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

/// Responsible for: what the client remembers of one listened query between sessions.
public struct TargetData: Sendable, Equatable {
    /// The query's canonical id (plus "#cache" for cache-only listens).
    public let targetId: String
    /// The backend read time of the last consistent result (µs), 0 when never current.
    public var readTime: Int64
    /// When the target was last listened to (the LRU clock; higher is more recent).
    public var lastUsed: Int64
    /// A server's resume token for the target (listening again sends only what changed since),
    /// valid while the cache holds the documents the target had then; nil when there is none.
    public var resumeToken: [UInt8]?
    public init(targetId: String, readTime: Int64, lastUsed: Int64, resumeToken: [UInt8]? = nil) {
        self.targetId = targetId
        self.readTime = readTime
        self.lastUsed = lastUsed
        self.resumeToken = resumeToken
    }
}

/// Responsible for: the client's listen targets by id.
public protocol TargetCache: AnyObject {
    func get(_ targetId: String) -> TargetData?
    /// Stores the target, stamping `lastUsed` with the store's LRU clock.
    func put(_ target: TargetData)
    func remove(_ targetId: String)
    func all() -> [TargetData]
}

/// Durable metadata keys shared by the backend and the client.
public enum PersistenceKey {
    /// The backend's last commit version (its clock never goes back after a reopen).
    public static let backendVersion = "backend.version"
    /// The highest batch id of the local client the backend applied (a batch resent after a
    /// crash between the commit and its acknowledgement is acknowledged, not applied twice).
    public static let backendAppliedBatch = "backend.appliedBatch"
}

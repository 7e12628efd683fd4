import EmberModel
import EmberStorage
import EmberBackend

/// Responsible for: how an embedded database is opened: in memory, or durable at a path.
///
///     var o = EmberOptions(); o.path = "/data/app.ember"; o.cacheSizeBytes = 50 << 20
///     let client = try EmberClient(options: o)
public struct EmberOptions: Sendable {
    /// Where the database lives; nil keeps everything in memory.
    public var path: String?
    /// With a path: whether the client's cache, write queue and targets are durable too (true,
    /// the default) or kept in memory (Firestore's MemoryCacheSettings; the backend's documents
    /// stay in the file either way).
    public var persistence: Bool
    /// The cache's size threshold (default 100 MB, at least 1 MB, or `cacheSizeUnlimited`), for
    /// a durable cache of a server (`documents`); the embedded default keeps one copy of each
    /// document, the database itself, which is never collected.
    public var cacheSizeBytes: Int64
    /// Durability of each commit: `.normal` survives a killed process, `.full` also a power loss.
    public var synchronous: SQLitePersistence.Synchronous
    /// Collector timing (the threshold comes from `cacheSizeBytes`).
    public var gcInitialDelay: Double = 60
    public var gcInterval: Double = 300
    /// Whether the client starts online (false: pending writes wait for `enableNetwork`).
    public var networkEnabled: Bool = true

    public static let defaultCacheSizeBytes = GarbageCollectionSettings.defaultCacheSizeBytes
    public static let minimumCacheSizeBytes = GarbageCollectionSettings.minimumCacheSizeBytes
    public static let cacheSizeUnlimited = GarbageCollectionSettings.cacheSizeUnlimited

    public init(path: String? = nil, persistence: Bool = true, cacheSizeBytes: Int64 = EmberOptions.defaultCacheSizeBytes,
                synchronous: SQLitePersistence.Synchronous = .normal) {
        self.path = path
        self.persistence = persistence
        self.cacheSizeBytes = cacheSizeBytes
        self.synchronous = synchronous
    }

    var gcSettings: GarbageCollectionSettings {
        GarbageCollectionSettings(cacheSizeBytes: cacheSizeBytes, initialDelay: gcInitialDelay, interval: gcInterval)
    }
}

extension EmberClient {
    /// Opens a database as `options` says: in memory without a path; with one, the backend's
    /// documents and (unless `persistence` is false) the client's cache, pending writes and
    /// targets in one SQLite file, restored as they were. Throws invalidArgument for a cache
    /// size under 1 MB, failedPrecondition when another instance has the path open, dataLoss
    /// for a damaged file, unavailable/permissionDenied for a missing or read-only directory.
    ///
    /// `documents`, when given (a server, `RemoteBackend`), is what the documents sync with; the
    /// Realtime-Database tree keeps syncing with the in-process backend (in the file with a path).
    /// The cache, pending writes and targets are kept as without it: durable with a path.
    public convenience init(options: EmberOptions, documents: BackendEndpoint? = nil, tree: (any TreeEndpoint)? = nil) throws {
        try options.gcSettings.validate()
        guard let path = options.path else {
            let p = MemoryPersistence()
            self.init(persistence: p, backend: Backend(persistence: p), documents: documents, tree: tree, gc: options.gcSettings,
                      networkEnabled: options.networkEnabled)
            return
        }
        // The embedded default (a durable cache, documents synced with the in-process backend):
        // the cache is the backend's table, one copy of each document (`documentsShared`).
        let file = try SQLitePersistence(path: path, synchronous: options.synchronous,
                                         sharedDocuments: options.persistence && documents == nil)
        let cache: Persistence = options.persistence ? file : MemoryPersistence()
        self.init(persistence: cache, backend: Backend(persistence: file), documents: documents, tree: tree, gc: options.gcSettings,
                  networkEnabled: options.networkEnabled)
        adopt(file)
    }

    /// Deletes the database files at `path`. Fails with failedPrecondition while it is open
    /// (Firestore's clearPersistence: only before start or after terminate).
    public static func clearPersistence(path: String) throws {
        try SQLitePersistence.clear(path: path)
    }

    /// Whether the client's cache is durable.
    public var isPersistent: Bool { persistence.isDurable }

    // MARK: offline indexes

    /// Whether the cache has offline indexes (a persistent cache; nil manager for memory).
    public var hasIndexManager: Bool { persistence.indexManager != nil }

    /// Parses Firestore's index JSON and builds the indexes (a memory cache validates and
    /// ignores it, as Firestore does). Throws invalidArgument for malformed JSON.
    public func setIndexConfiguration(json: String) throws {
        let defs = try IndexDefinition.parse(json: json)
        if closed { throw EmberError(.failedPrecondition, "The database is closed.") }
        try persistence.indexManager?.setConfiguration(defs)
    }

    public func setIndexAutoCreation(_ enabled: Bool) throws {
        if closed { throw EmberError(.failedPrecondition, "The database is closed.") }
        persistence.indexManager?.autoCreationEnabled = enabled
    }

    public func deleteAllIndexes() throws {
        if closed { throw EmberError(.failedPrecondition, "The database is closed.") }
        persistence.indexManager?.deleteAllIndexes()
    }

    /// The indexes the cache has (configured and auto-created).
    public var indexes: [IndexDefinition] { persistence.indexManager?.indexes() ?? [] }

    /// What the last cache read did (whether an index served it, how many documents it read).
    public var lastIndexRead: IndexReadStats? { persistence.indexManager?.lastRead }

    // MARK: cache size

    /// Runs the LRU collector now. Returns how many cached documents it removed.
    @discardableResult
    public func collectGarbage() throws -> Int {
        try onWorkerPublic { engine.collectGarbage() }
    }

    /// Bytes the cached documents take (0 for a memory cache).
    public var cacheBytes: Int64 { persistence.remoteDocuments.byteSize }
}

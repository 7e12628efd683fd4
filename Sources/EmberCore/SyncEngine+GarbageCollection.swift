import EmberConcurrency
import Dispatch
import EmberModel
import EmberStorage

/// Responsible for: the settings of the client cache's least-recently-used collector.
public struct GarbageCollectionSettings: Sendable {
    /// Firestore's default threshold (100 MB).
    public static let defaultCacheSizeBytes: Int64 = 100 * 1024 * 1024
    /// The smallest threshold accepted (1 MB).
    public static let minimumCacheSizeBytes: Int64 = 1024 * 1024
    /// No threshold: the cache is never collected (Firestore's CACHE_SIZE_UNLIMITED).
    public static let cacheSizeUnlimited: Int64 = -1

    public var cacheSizeBytes: Int64
    /// First periodic collection after opening (Firestore: 1 min), then every `interval` (5 min).
    public var initialDelay: Double
    public var interval: Double
    /// A collection also runs once this many documents reached the cache since the last one.
    public var documentsBetweenCollections: Int

    public init(cacheSizeBytes: Int64 = defaultCacheSizeBytes, initialDelay: Double = 60, interval: Double = 300,
                documentsBetweenCollections: Int = 5_000) {
        self.cacheSizeBytes = cacheSizeBytes
        self.initialDelay = initialDelay
        self.interval = interval
        self.documentsBetweenCollections = documentsBetweenCollections
    }

    public func validate() throws {
        if cacheSizeBytes != GarbageCollectionSettings.cacheSizeUnlimited && cacheSizeBytes < GarbageCollectionSettings.minimumCacheSizeBytes {
            throw EmberError.invalidArgument("cacheSizeBytes must be at least \(GarbageCollectionSettings.minimumCacheSizeBytes) (1 MB) or CACHE_SIZE_UNLIMITED (-1), got \(cacheSizeBytes).")
        }
    }

    var enabled: Bool { cacheSizeBytes != GarbageCollectionSettings.cacheSizeUnlimited }
}

/// The cache facet of the sync engine: remembering targets, LRU bookkeeping when a target is
/// released, and collecting least-recently-used documents that no active target and no pending
/// write holds — periodically, after enough new documents, and on demand. Worker only.
extension SyncEngine {
    /// Records a target that became current (its read time and the LRU clock).
    func rememberTarget(_ t: Target) {
        let p = local.persistence
        // Advisory (resume and LRU bookkeeping): not storing it loses nothing the user wrote.
        let stored = (try? p.runTransaction("remember target") {
            p.targetCache.put(TargetData(targetId: t.key, readTime: t.view.readTime, lastUsed: 0, resumeToken: t.resumeToken))
        }) != nil
        if stored {
            t.storedResumeToken = t.resumeToken
            t.tokenStoredAt = SyncEngine.monotonicSeconds()
        }
    }

    /// How often (seconds) a listening target's newer resume token is stored: an older one stays
    /// valid (listening again with it resends a little more), so not every change writes it.
    static let tokenStoreInterval: Double = 30

    static func monotonicSeconds() -> Double { Double(EventThread.monotonicNanos()) / 1e9 }

    /// The last listener of `t` left: its documents become the most recently used, so the
    /// collector removes documents of targets released earlier first.
    func targetReleased(_ t: Target) {
        // A server's resume token is kept in a memory cache too: listening again resumes.
        if t.listensToBackend && (local.persistence.isDurable || (tracksMembership && t.resumeToken != nil)) { rememberTarget(t) }
        guard local.persistence.isDurable else { return }
        guard collects else { return }
        local.remote.touch(t.view.matchedKeys)
        if docsSinceCollection > 0 { scheduleCollection() }
    }

    /// Whether this cache is ever collected: a durable cache with a threshold, unless it is the
    /// backend's own table (the embedded default keeps one copy of each document: that copy is
    /// the database, not a cache of it, so nothing may be evicted).
    var collects: Bool {
        gc.enabled && local.persistence.isDurable && !local.persistence.documentsShared
    }

    func noteRemoteDocuments(_ n: Int) {
        guard collects else { return }
        docsSinceCollection += n
        if docsSinceCollection >= gc.documentsBetweenCollections { scheduleCollection() }
    }

    private func scheduleCollection() {
        guard !collectionScheduled else { return }
        collectionScheduled = true
        worker.asyncConfined { [weak self] in
            guard let self, !self.closed else { return }
            self.collectionScheduled = false
            _ = self.collectGarbage()
        }
    }

    func schedulePeriodicCollection(after delay: Double) {
        guard collects else { return }
        worker.asyncAfterConfined(deadline: .now() + delay) { [weak self] in
            guard let self, !self.closed else { return }
            _ = self.collectGarbage()
            self.schedulePeriodicCollection(after: self.gc.interval)
        }
    }

    /// Removes least-recently-used cached documents until the cache is under its threshold,
    /// keeping those in an active target's view and those with pending writes. Returns how many
    /// were removed (0 when the cache is unlimited or already small enough).
    @discardableResult
    func collectGarbage() -> Int {
        worker.assertCurrent()
        docsSinceCollection = 0
        guard collects else { return 0 }
        var pinned = Set<DocumentKey>()
        for t in targets.values { pinned.formUnion(t.view.matchedKeys) }
        for k in local.pendingKeys { pinned.insert(k) }
        let removed = local.remote.collectGarbage(thresholdBytes: gc.cacheSizeBytes) { pinned.contains($0) }
        if removed > 0 { forgetReleasedTargetsTokens() }
        return removed
    }

    /// A released target's stored resume token assumes the cache still holds its documents; once
    /// the collector removed some, listening again must start from scratch.
    private func forgetReleasedTargetsTokens() {
        let p = local.persistence
        let stale = p.targetCache.all().filter { $0.resumeToken != nil && targets[$0.targetId] == nil }
        guard !stale.isEmpty else { return }
        try? p.runTransaction("forget resume tokens") {
            for var t in stale {
                t.resumeToken = nil
                p.targetCache.put(t)
            }
        }
    }
}

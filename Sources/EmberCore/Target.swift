import EmberModel

/// Responsible for: one listened query inside the engine: its view, its listeners, its last
/// snapshot (handed to listeners that attach later), and whether and as what id it is watched at
/// the backend. Listeners with equal queries and sources share one target. Worker queue only.
final class Target {
    let key: String
    let query: Query
    let view: View
    let listensToBackend: Bool
    var listeners: [QueryListener] = []
    var lastSnapshot: ViewSnapshot?
    /// The id under which the backend currently watches this target (a fresh one per listen).
    var backendId: Int?
    /// A server's latest resume token for this target (what its view holds), and the one last
    /// stored with the target in a durable cache.
    var resumeToken: [UInt8]?
    var storedResumeToken: [UInt8]?
    /// When the token was last stored (seconds, monotonic): tokens are stored at most every
    /// `SyncEngine.tokenStoreInterval` while listening, and when the target is released.
    var tokenStoredAt: Double = -.infinity
    /// The cache held a result of this query from the backend when it was listened to (a
    /// resume token): its first snapshot is raised from the cache even when empty.
    var hasCachedResults = false
    /// With a link that reports membership (a server's watch): the keys the server holds in
    /// the target, and the documents of the view it does not hold (in limbo: each resolved by a
    /// document target of its own, the view fromCache meanwhile).
    var syncedKeys = Set<DocumentKey>()
    var limbo = Set<DocumentKey>()

    init(key: String, query: Query, listensToBackend: Bool) {
        self.key = key
        self.query = query
        self.view = View(query: query)
        self.listensToBackend = listensToBackend
    }
}

/// Responsible for: finding the targets a changed document may affect (those on its
/// collection, its collection group, or the document itself), so a write reaches only the views
/// whose query can match it.
struct TargetIndex {
    private var byCollection: [ParentKey: [ObjectIdentifier: Target]] = [:]
    private var byGroup: [String: [ObjectIdentifier: Target]] = [:]
    private var byDocument: [DocumentKey: [Target]] = [:]

    mutating func add(_ t: Target) {
        let id = ObjectIdentifier(t)
        if let g = t.query.collectionGroup { byGroup[g, default: [:]][id] = t }
        else if let k = t.query.documentKey { byDocument[k, default: []].append(t) }
        else { byCollection[ParentKey(t.query.path), default: [:]][id] = t }
    }

    mutating func remove(_ t: Target) {
        let id = ObjectIdentifier(t)
        if let g = t.query.collectionGroup {
            byGroup[g]?[id] = nil
            if byGroup[g]?.isEmpty == true { byGroup[g] = nil }
        } else if let k = t.query.documentKey {
            byDocument[k]?.removeAll { $0 === t }
            if byDocument[k]?.isEmpty == true { byDocument[k] = nil }
        } else {
            let c = ParentKey(t.query.path)
            byCollection[c]?[id] = nil
            if byCollection[c]?.isEmpty == true { byCollection[c] = nil }
        }
    }

    /// Whether any target may contain `key`.
    func touches(_ key: DocumentKey) -> Bool {
        (!byDocument.isEmpty && byDocument[key] != nil)
            || (!byCollection.isEmpty && byCollection[ParentKey(of: key)] != nil)
            || (!byGroup.isEmpty && byGroup[key.collectionGroup] != nil)
    }

    @inline(__always)
    func forEach(touching key: DocumentKey, _ body: (Target) -> Void) {
        if !byDocument.isEmpty, let ts = byDocument[key] { for t in ts { body(t) } }
        if !byCollection.isEmpty, let ts = byCollection[ParentKey(of: key)] { for t in ts.values { body(t) } }
        if !byGroup.isEmpty, let ts = byGroup[key.collectionGroup] { for t in ts.values { body(t) } }
    }
}

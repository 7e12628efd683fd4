import EmberModel

/// Responsible for: one query a connection watches at the backend. For a limit query it keeps
/// every matching document sorted, so that when the window changes it knows which documents
/// entered it (the ones the client may not have).
final class BackendTarget {
    let connection: BackendConnection
    let id: Int
    let query: Query
    let orderBy: [OrderBy]
    private var matches: DocumentSet?
    private var windowBefore: Set<DocumentKey>?

    init(connection: BackendConnection, id: Int, query: Query) {
        self.connection = connection
        self.id = id
        self.query = query
        self.orderBy = query.normalizedOrderBy
        if query.limit != nil { matches = DocumentSet(orderBy: orderBy) }
    }

    /// Takes the full matching set; returns what the client gets (the window for limit queries).
    func start(with docs: [Document]) -> [Document] {
        guard var m = matches else { return docs }
        m.replaceAll(docs)
        matches = m
        return Array(m.window(limit: query.limit, type: query.limitType))
    }

    var isLimit: Bool { matches != nil }

    /// Records a committed change; calls `send` when the client must hear about it.
    func noteChange(old: Document?, new: Document, send: (Document) -> Void) {
        let wasIn = old.map { query.matches($0, orderBy: orderBy) } ?? false
        let isIn = query.matches(new, orderBy: orderBy)
        if matches != nil && (wasIn || isIn) {
            if windowBefore == nil { windowBefore = currentWindowKeys() }
            matches!.remove(new.key)
            if isIn { matches!.insert(new) }
        }
        if wasIn || isIn { send(new) }
    }

    private func currentWindowKeys() -> Set<DocumentKey> {
        Set(matches!.window(limit: query.limit, type: query.limitType).map { $0.key })
    }

    var touched: Bool { windowBefore != nil }

    /// Documents now in the window that were not in it before the commit.
    func enteredWindow() -> [Document] {
        guard let before = windowBefore, let m = matches else { return [] }
        windowBefore = nil
        return m.window(limit: query.limit, type: query.limitType).filter { !before.contains($0.key) }
    }
}

/// Responsible for: finding, for a changed document, the targets that may care: those on its
/// collection, on its collection group, or on the document itself.
final class BackendTargetIndex {
    /// Told the number of targets after each change (the backend's counters).
    var onCount: ((Int) -> Void)?
    struct Key: Hashable { let connection: Int; let target: Int }
    private var all: [Key: BackendTarget] = [:]
    private var byCollection: [ParentKey: [Key: BackendTarget]] = [:]
    private var byGroup: [String: [Key: BackendTarget]] = [:]
    /// A plain list per document (most documents have one watcher; a dictionary each cost ~120 bytes).
    private var byDocument: [DocumentKey: [BackendTarget]] = [:]
    private var touchedLimit: [BackendTarget] = []

    func add(_ t: BackendTarget) {
        let k = Key(connection: t.connection.id, target: t.id)
        remove(connectionId: k.connection, targetId: k.target)
        all[k] = t
        if let g = t.query.collectionGroup { byGroup[g, default: [:]][k] = t }
        else if let d = t.query.documentKey { byDocument[d, default: []].append(t) }
        else { byCollection[ParentKey(t.query.path), default: [:]][k] = t }
        onCount?(all.count)
    }

    func remove(connectionId: Int, targetId: Int) {
        let k = Key(connection: connectionId, target: targetId)
        guard let t = all.removeValue(forKey: k) else { return }
        if let g = t.query.collectionGroup { byGroup[g]?[k] = nil; if byGroup[g]?.isEmpty == true { byGroup[g] = nil } }
        else if let d = t.query.documentKey { byDocument[d]?.removeAll { $0 === t }; if byDocument[d]?.isEmpty == true { byDocument[d] = nil } }
        else { let c = ParentKey(t.query.path); byCollection[c]?[k] = nil; if byCollection[c]?.isEmpty == true { byCollection[c] = nil } }
        onCount?(all.count)
    }

    func removeAll(connectionId: Int) {
        for k in all.keys where k.connection == connectionId { remove(connectionId: k.connection, targetId: k.target) }
    }

    func forEachTarget(touching key: DocumentKey, _ body: (BackendTarget) -> Void) {
        func visit<S: Sequence>(_ ts: S?) where S.Element == BackendTarget {
            guard let ts else { return }
            for t in ts {
                let wasTouched = t.touched
                body(t)
                if t.isLimit && !wasTouched && t.touched { touchedLimit.append(t) }
            }
        }
        // (Empty indexes are skipped: hashing a key costs.)
        if !byCollection.isEmpty { visit(byCollection[ParentKey(of: key)]?.values) }
        if !byGroup.isEmpty { visit(byGroup[key.collectionGroup]?.values) }
        if !byDocument.isEmpty { visit(byDocument[key]) }
    }

    func takeTouchedLimitTargets() -> [BackendTarget] {
        defer { touchedLimit = [] }
        return touchedLimit
    }
}

import EmberModel

/// Responsible for: the merged local truth of one query and the changes since its last
/// snapshot. It keeps every matching local document sorted in query order (so a limit window
/// refills from the cache without re-running the query), takes the new local state of only the
/// keys a write touched, and computes the next `ViewSnapshot`. Worker queue only.
///
///     view.reset(local.execute(query)); view.update(key, doc); let snap = view.takeSnapshot(...)
final class View {
    let query: Query
    let orderBy: [OrderBy]
    private var matches: DocumentSet
    /// Documents of the last snapshot, in order, and by key.
    private(set) var emitted = DocumentList()
    private var emittedByKey: [DocumentKey: Document] = [:]
    private var dirtyKeys: [DocumentKey] = []
    private var dirtySet = Set<DocumentKey>()
    private var pendingKeys = Set<DocumentKey>()
    private var lastFromCache = true
    private var hasSnapshot = false
    /// The backend has sent this target's result and the view follows it.
    var isCurrent = false
    var readTime: Int64 = 0

    init(query: Query) {
        self.query = query
        self.orderBy = query.normalizedOrderBy
        self.matches = DocumentSet(orderBy: orderBy)
    }

    var isLimited: Bool { query.limit != nil }
    var matchedKeys: [DocumentKey] { matches.sorted.map { $0.key } }
    /// The documents the next snapshot holds (the limit applied).
    var window: DocumentList { matches.window(limit: query.limit, type: query.limitType) }

    /// A one-shot read's snapshot of `docs` (the query's local result, every one matching): what
    /// a new view's first snapshot would be, without the bookkeeping a live view keeps for the
    /// next one (dirty keys, the emitted documents by key, the documents by key).
    static func snapshot(of query: Query, _ docs: [Document], fromCache: Bool, readTime: Int64) -> ViewSnapshot {
        let orderBy = query.normalizedOrderBy
        let all = DocumentList(docs.sorted { Query.compare($0, $1, orderBy: orderBy) < 0 })
        let window: DocumentList
        if let n = query.limit, n < all.count {
            window = query.limitType == .first ? all.prefix(count: n) : all.suffix(count: n)
        } else {
            window = all
        }
        var changes: [DocumentChange] = []
        changes.reserveCapacity(window.count)
        var pending = false
        for (i, d) in window.enumerated() {
            changes.append(DocumentChange(kind: .added, document: d, oldIndex: -1, newIndex: i))
            if d.hasLocalMutations { pending = true }
        }
        // A new view's last state was "from cache": only a server result changes the sync state.
        return ViewSnapshot(query: query, documents: window, changes: changes, isFromCache: fromCache,
                            hasPendingWrites: pending, syncStateChanged: !fromCache, readTime: readTime)
    }

    /// Loads the initial local result.
    func reset(_ docs: [Document]) {
        matches.replaceAll(docs)
        pendingKeys = Set(docs.filter { $0.hasLocalMutations }.map { $0.key })
        for d in docs where !dirtySet.contains(d.key) { dirtySet.insert(d.key); dirtyKeys.append(d.key) }
    }

    /// Takes the new local state of `key` (nil or a tombstone when it does not exist locally).
    func update(_ key: DocumentKey, _ doc: Document?) {
        let isIn = doc.map { query.matches($0, orderBy: orderBy) } ?? false
        if isIn {
            matches.insert(doc!)
            if doc!.hasLocalMutations { pendingKeys.insert(key) } else { pendingKeys.remove(key) }
        } else {
            guard matches.remove(key) != nil else { return }
            pendingKeys.remove(key)
        }
        if dirtySet.insert(key).inserted { dirtyKeys.append(key) }
    }

    /// The next snapshot, or nil when nothing a listener could see changed.
    func takeSnapshot(fromCache: Bool) -> ViewSnapshot? {
        let window = matches.window(limit: query.limit, type: query.limitType)
        var changes: [Pending] = []
        if isLimited {
            var newByKey: [DocumentKey: Document] = [:]
            newByKey.reserveCapacity(window.count)
            for d in window { newByKey[d.key] = d }
            for (k, old) in emittedByKey where newByKey[k] == nil {
                changes.append(Pending(kind: .removed, doc: old, old: old))
            }
            for d in window {
                if let old = emittedByKey[d.key] {
                    if let c = View.change(old: old, new: d) { changes.append(c) }
                } else {
                    changes.append(Pending(kind: .added, doc: d, old: nil))
                }
            }
            emittedByKey = newByKey
        } else {
            for k in dirtyKeys {
                let old = emittedByKey[k], new = matches[k]
                switch (old, new) {
                case (nil, nil): break
                case (let o?, nil): changes.append(Pending(kind: .removed, doc: o, old: o)); emittedByKey[k] = nil
                case (nil, let n?): changes.append(Pending(kind: .added, doc: n, old: nil)); emittedByKey[k] = n
                case (let o?, let n?):
                    if let c = View.change(old: o, new: n) { changes.append(c) }
                    emittedByKey[k] = n
                }
            }
        }
        // A view that changes one document at a time (every document listener's) gives its
        // buffers back: thousands of idle listeners would otherwise each keep two allocations.
        let keep = dirtyKeys.count > 16
        dirtyKeys.removeAll(keepingCapacity: keep)
        dirtySet.removeAll(keepingCapacity: keep)
        let syncChanged = fromCache != lastFromCache
        if changes.isEmpty && !syncChanged && hasSnapshot { return nil }
        // Onto an empty list every change is an addition of the window's documents, in order:
        // their indexes are their positions (the first snapshot of every view, and every one-shot
        // get, need no sort and no replay).
        let indexedChanges: [DocumentChange]
        if emitted.isEmpty && changes.count == window.count && changes.allSatisfy({ $0.kind == .added }) {
            var out: [DocumentChange] = []
            out.reserveCapacity(window.count)
            for (i, d) in window.enumerated() { out.append(DocumentChange(kind: .added, document: d, oldIndex: -1, newIndex: i)) }
            indexedChanges = out
        } else {
            indexedChanges = indexed(changes)
        }
        emitted = window
        lastFromCache = fromCache
        hasSnapshot = true
        let pending = isLimited ? pendingKeys.contains { emittedByKey[$0] != nil } : !pendingKeys.isEmpty
        return ViewSnapshot(query: query, documents: emitted, changes: indexedChanges, isFromCache: fromCache,
                            hasPendingWrites: pending, syncStateChanged: syncChanged, readTime: readTime)
    }

    /// A change before its indexes are known; `old` is the document as the last snapshot had it.
    private struct Pending {
        let kind: DocumentChange.Kind
        let doc: Document
        let old: Document?
        var rank: Int { kind == .removed ? 0 : (kind == .added ? 1 : 2) }
    }

    private static func change(old: Document, new: Document) -> Pending? {
        if old === new { return nil }
        if old.data != new.data { return Pending(kind: .modified, doc: new, old: old) }
        if old.hasLocalMutations != new.hasLocalMutations { return Pending(kind: .metadata, doc: new, old: old) }
        return nil
    }

    /// Sorts changes (removed, added, modified; each in query order) and computes indexes by
    /// replaying them on the previous snapshot's list (docs/semantics.md 8).
    private func indexed(_ changes: [Pending]) -> [DocumentChange] {
        if changes.isEmpty { return [] }
        if changes.count == 1 { return [indexedSingle(changes[0])] }
        let orderBy = self.orderBy
        let sortedChanges = changes.sorted {
            if $0.rank != $1.rank { return $0.rank < $1.rank }
            return Query.compare($0.doc, $1.doc, orderBy: orderBy) < 0
        }
        var tracker = emitted
        func position(of doc: Document) -> Int {
            tracker.partitionIndex { Query.compare($0, doc, orderBy: orderBy) < 0 }
        }
        var out: [DocumentChange] = []
        out.reserveCapacity(sortedChanges.count)
        for c in sortedChanges {
            var oldIndex = -1, newIndex = -1
            if let old = c.old {
                let i = position(of: old)
                if i < tracker.count && tracker[i].key == old.key {
                    oldIndex = i
                    tracker.remove(at: i)
                }
            }
            if c.kind != .removed {
                let i = position(of: c.doc)
                tracker.insert(c.doc, at: i)
                newIndex = i
            }
            out.append(DocumentChange(kind: c.kind, document: c.doc, oldIndex: oldIndex, newIndex: newIndex))
        }
        return out
    }

    /// `indexed([c])` without copying the previous list: removing the old document at `i` shifts
    /// the new document's insertion point `j` (found in the unmodified list) down by one exactly
    /// when `i < j`, that is, when the old document sorted before the new one.
    private func indexedSingle(_ c: Pending) -> DocumentChange {
        let orderBy = self.orderBy
        func position(of doc: Document) -> Int {
            emitted.partitionIndex { Query.compare($0, doc, orderBy: orderBy) < 0 }
        }
        var oldIndex = -1, newIndex = -1
        if let old = c.old {
            let i = position(of: old)
            if i < emitted.count && emitted[i].key == old.key { oldIndex = i }
        }
        if c.kind != .removed {
            if oldIndex >= 0 && emitted.fitsBetweenNeighbours(of: oldIndex, c.doc, orderBy: orderBy) {
                // Still between its neighbours (a metadata change, or any change in a key order):
                // it stays where it was, found with two comparisons instead of a second search.
                newIndex = oldIndex
            } else {
                let j = position(of: c.doc)
                newIndex = oldIndex >= 0 && oldIndex < j ? j - 1 : j
            }
        }
        return DocumentChange(kind: c.kind, document: c.doc, oldIndex: oldIndex, newIndex: newIndex)
    }
}

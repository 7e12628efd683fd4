import EmberModel
import EmberStorage

/// Responsible for: the backend's index of one node's children in one order (Firebase's
/// `.indexOn`, built right after the first limited query in its order at that node, which
/// `ChildSelection` answers, and kept while the backend runs):
/// the children sorted by (sort value, key), updated in O(log n) when a write changes one child,
/// so a limited query's window is read from one end without touching the other children.
/// Built on a thread of its own (`BackendTree.startPendingBuilds`), then used on the backend
/// queue only.
///
///     let i = BackendChildIndex(index: .child(scorePath), node: store.read(posts))
///     i.window(query)      // the best 2 x limit in-range children, ascending
final class BackendChildIndex: @unchecked Sendable {
    let index: TreeIndex
    private var children: OrderedChildren
    private var sortValues: [UTF8String: TreeValue]   // keys by bytes, as the tree's

    init(index: TreeIndex, node: TreeValue) {
        self.index = index
        var entries: [ChildEntry] = []
        var values: [UTF8String: TreeValue] = [:]
        if case .object(let o) = node {
            entries.reserveCapacity(o.count)
            values.reserveCapacity(o.count)
            let keys = o.children.keys
            index.forEachSortValue(in: o) { i, sv in
                entries.append(ChildEntry(key: keys[i].s, sortValue: sv))
                values[keys[i]] = sv
            }
        }
        sortValues = values
        children = OrderedChildren(sorted: BackendChildIndex.sort(entries))
    }

    /// Sorts by a cheap key first (the value's rank, then numbers as doubles: a monotonic
    /// mapping, so it never contradicts the exact order) and compares entries fully only on
    /// ties (strings, equal doubles, keys): most comparisons touch two words.
    static func sort(_ entries: [ChildEntry]) -> [ChildEntry] {
        struct Key { let rank: Int; let num: Double; let i: Int }
        var keys: [Key] = []
        keys.reserveCapacity(entries.count)
        for (i, e) in entries.enumerated() {
            switch e.sortValue {
            case .null: keys.append(Key(rank: 0, num: 0, i: i))
            case .bool(let b): keys.append(Key(rank: b ? 2 : 1, num: 0, i: i))
            case .int(let x): keys.append(Key(rank: 3, num: Double(x), i: i))
            case .double(let d): keys.append(Key(rank: 3, num: d, i: i))
            case .string: keys.append(Key(rank: 4, num: 0, i: i))
            case .object: keys.append(Key(rank: 5, num: 0, i: i))
            }
        }
        keys.sort { a, b in
            if a.rank != b.rank { return a.rank < b.rank }
            if a.num != b.num { return a.num < b.num }
            return ChildEntry.compare(entries[a.i], entries[b.i]) < 0
        }
        return keys.map { entries[$0.i] }
    }

    var count: Int { children.count }

    /// Re-reads child `key` of the node at `path` from `store` (after a write under it).
    func update(key: String, at path: TreePath, store: TreeStore) {
        if let old = sortValues.removeValue(forKey: UTF8String(key)) { children.remove(ChildEntry(key: key, sortValue: old)) }
        let childPath = path.child(key)
        let sv: TreeValue?
        switch index {
        case .key: sv = store.exists(childPath) ? .null : nil
        case .value:
            let v = store.read(childPath)
            sv = v.exists ? index.sortValue(of: v) : nil
        case .child(let p): sv = store.exists(childPath) ? store.read(childPath.appending(p)) : nil
        }
        guard let sv else { return }
        sortValues[UTF8String(key)] = sv
        children.insert(ChildEntry(key: key, sortValue: sv))
    }

    /// The best 2 x limit children of `query`'s range from its limit's end, ascending, and
    /// whether in-range children were left out (all of them worse than those given).
    func window(_ query: TreeQuery) -> TreeWindow {
        let n = query.windowSize
        var out: [ChildEntry] = []
        var truncated = false
        let body: (ChildEntry) -> Bool = { e in
            guard query.contains(e) else { return true }
            if out.count == n { truncated = true; return false }
            out.append(e)
            return true
        }
        if query.limitType == .first { children.forEach(from: nil, body) } else {
            children.forEachReversed(body)
            out.reverse()
        }
        return TreeWindow(query: query, entries: out, truncated: truncated)
    }
}

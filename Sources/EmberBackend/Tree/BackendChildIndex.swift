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
final class BackendChildIndex {
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

    /// Sorts by a cheap key first and compares entries fully only where it ties: one 64-bit
    /// word per entry, the value's rank in its top 3 bits, then for a number its double's bits
    /// in an order-keeping form (shortened by 3 bits). The word never contradicts the exact order
    /// (it can only tie: strings, booleans, equal or nearly equal numbers, integers past 2^53),
    /// so sorting by it and then each run of equal words by the full comparison gives the exact
    /// order. Most comparisons are then one integer comparison.
    static func sort(_ entries: [ChildEntry]) -> [ChildEntry] {
        struct Keyed { let word: UInt64; let i: Int }
        var keyed: [Keyed] = []
        keyed.reserveCapacity(entries.count)
        for (i, e) in entries.enumerated() { keyed.append(Keyed(word: sortWord(e.sortValue), i: i)) }
        keyed.sort { $0.word < $1.word }
        // Runs of equal words, in the exact order.
        var start = 0
        while start < keyed.count {
            var end = start + 1
            while end < keyed.count && keyed[end].word == keyed[start].word { end += 1 }
            if end - start > 1 {
                keyed[start..<end].sort { ChildEntry.compare(entries[$0.i], entries[$1.i]) < 0 }
            }
            start = end
        }
        return keyed.map { entries[$0.i] }
    }

    /// The cheap key of `sortValue` (see `sort`). Numbers are finite in the tree (validated).
    static func sortWord(_ sortValue: TreeValue) -> UInt64 {
        func rank(_ r: UInt64) -> UInt64 { r << 61 }
        func number(_ d: Double) -> UInt64 {
            let bits = (d == 0 ? 0.0 : d).bitPattern          // -0 sorts as 0
            let ordered = bits >> 63 == 1 ? ~bits : bits | (1 << 63)
            return rank(3) | (ordered >> 3)
        }
        switch sortValue {
        case .null: return rank(0)
        case .bool(let b): return rank(b ? 2 : 1)
        case .int(let x): return number(Double(x))
        case .double(let d): return number(d)
        case .string: return rank(4)
        case .object: return rank(5)
        }
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

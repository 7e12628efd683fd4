import EmberModel
import EmberBackend

/// Responsible for: what one (path, query) shows and how it changes (docs/semantics.md 20-21,
/// Firebase JS `core/view/`): the children in the query's range ordered by its index, the window
/// a limit cuts from them, and, for each change, the child_removed / child_added / child_moved /
/// child_changed events in index order with previous-sibling keys, and whether a value event
/// follows. Work per change is O(log n) comparisons per changed child plus the children that
/// cross the window's edge. A limited view over many children first keeps only the best 2 x
/// limit children (everything beyond `cut` is known to be worse) and indexes the rest when a
/// refill needs it. Worker queue only.
final class TreeView {
    let path: TreePath
    let query: TreeQuery
    let index: TreeIndex
    let id: String
    var observers: [TreeObserver] = []
    var valueObservers = 0
    private(set) var initialized = false

    private var children = OrderedChildren()
    /// Sort value of every child in `children`.
    private var sortValues: [UTF8String: TreeValue] = [:]
    /// When set, `children` holds only the in-range entries no worse than it (limited views).
    private var cut: ChildEntry?
    /// The node when it is a leaf or empty (nil when it has children), for value events.
    private var leaf: TreeValue? = .null
    /// Before the view is complete: the children it knows whole from pending local writes (null
    /// for one known to be removed), the only ones it raises child events for (as Firebase does).
    var known: [UTF8String: TreeValue] = [:]

    init(path: TreePath, query: TreeQuery) {
        self.path = path
        self.query = query
        self.index = query.index
        self.id = TreeView.id(path, query)
    }

    /// One text per (path, query), ASCII (`asciiEscapedUTF8`): segments with their UTF-8 length,
    /// then `TreeQuery.identity`, so two different views never share an id.
    static func id(_ path: TreePath, _ query: TreeQuery) -> String {
        asciiEscapedUTF8(path.segments.map(lengthPrefixedUTF8).joined(separator: "/") + "|" + query.identity)
    }

    // MARK: order helpers

    /// True when `a` comes before `b` in the direction the window is filled from.
    @inline(__always)
    private func better(_ a: ChildEntry, _ b: ChildEntry) -> Bool {
        let c = ChildEntry.compare(a, b)
        return query.limitType == .first ? c < 0 : c > 0
    }

    @inline(__always)
    private func inRegion(_ e: ChildEntry) -> Bool {
        guard let c = cut else { return true }
        return !better(c, e)
    }

    /// The window's inner edge: the last child of a limitToFirst window, the first of a
    /// limitToLast one (nil when empty or unlimited).
    private func edge() -> ChildEntry? {
        guard let n = query.limit, !children.isEmpty else { return nil }
        let k = Swift.min(n, children.count) - 1
        return query.limitType == .first ? children.entry(fromStart: k) : children.entry(fromEnd: k)
    }

    /// Whether an indexed entry is inside the window whose edge is `edge`.
    @inline(__always)
    private func inWindow(_ e: ChildEntry, _ edge: ChildEntry?) -> Bool {
        guard query.limit != nil else { return true }
        guard let b = edge else { return false }
        let c = ChildEntry.compare(e, b)
        return query.limitType == .first ? c <= 0 : c >= 0
    }

    private func previousKey(_ e: ChildEntry, _ edge: ChildEntry?) -> String? {
        guard let p = children.predecessor(of: e) else { return nil }
        if query.limit != nil && query.limitType == .last, let lo = edge, ChildEntry.compare(p, lo) < 0 { return nil }
        return p.key
    }

    // MARK: initial state

    /// Takes the node at the view's path as its first complete state.
    func initialize(_ node: TreeValue) {
        initialized = true
        known = [:]
        rebuild(node, partial: true)
    }

    /// Takes the node at the view's path as its first complete state, with its in-range
    /// children as the backend's index gave them (`window`: the best 2 x limit, ascending; any
    /// others are worse), so nothing else of the node is looked at.
    func initialize(_ node: TreeValue, window: TreeWindow) {
        initialized = true
        known = [:]
        leaf = leafState(node)
        sortValues = [:]
        guard node.object != nil, !window.entries.isEmpty else { children = OrderedChildren(); cut = nil; return }
        for e in window.entries { sortValues[UTF8String(e.key)] = e.sortValue }
        children = OrderedChildren(sorted: window.entries)
        cut = window.truncated ? (query.limitType == .last ? window.entries.first : window.entries.last) : nil
    }

    /// Turns a partial view complete: the changes from what it knew to `node` (to `apply` next).
    func completeFromPartial(_ node: TreeValue) -> [ChildChange] {
        var changes: [ChildChange] = []
        for (k, old) in known {
            let new = node.child(k.s)
            if old != new { changes.append(ChildChange(key: k.s, old: old, new: new)) }
        }
        if case .object(let o) = node {
            for (k, v) in o.children where known[k] == nil { changes.append(ChildChange(key: k.s, old: .null, new: v)) }
        }
        initialized = true
        known = [:]
        leaf = leafState(node)
        return changes
    }

    /// What a value event shows for a node without children: the leaf itself, except through a
    /// range or a limit, which show nothing (Firebase filters a leaf to an empty node); nil for
    /// a node with children.
    private func leafState(_ node: TreeValue) -> TreeValue? {
        guard node.object == nil else { return nil }
        return query.hasRange || query.isLimited ? .null : node
    }

    private func rebuild(_ node: TreeValue, partial: Bool) {
        leaf = leafState(node)
        sortValues = [:]
        cut = nil
        guard case .object(let o) = node else { children = OrderedChildren(); return }
        if partial, let n = query.limit, n < o.count / 4 {
            // The best 2 x limit children, without building an entry for the many that lose
            // against the worst kept one on their sort value alone.
            let heap = query.bestChildren(query.windowSize, of: o)
            if heap.rejected { cut = heap.worst }
            children = OrderedChildren(heap.items)
            for e in heap.items { sortValues[UTF8String(e.key)] = e.sortValue }
            return
        }
        var entries: [ChildEntry] = []
        entries.reserveCapacity(o.count)
        for (k, v) in o.children {
            let e = ChildEntry(key: k.s, sortValue: index.sortValue(of: v))
            if query.contains(e) { entries.append(e) }
        }
        for e in entries { sortValues[UTF8String(e.key)] = e.sortValue }
        children = OrderedChildren(entries)
    }

    /// The keys in the window, in order, with their previous siblings (child_added on attach).
    func windowKeys() -> [(key: String, prev: String?)] {
        var out: [(String, String?)] = []
        var prev: String? = nil
        let e = edge()
        let start: ChildEntry? = (query.limit != nil && query.limitType == .last) ? e : nil
        if query.limit != nil && e == nil { return [] }
        children.forEach(from: start) { c in
            if query.limit != nil && query.limitType == .first, let hi = e, ChildEntry.compare(c, hi) > 0 { return false }
            out.append((c.key, prev))
            prev = c.key
            return true
        }
        return out
    }

    /// The value a value event shows: the node itself for a plain location, else the children
    /// in the window.
    func valueSnapshot(_ node: TreeValue) -> TreeValue {
        if query.isDefault { return node }
        guard node.object != nil else { return leafState(node) ?? .null }
        var d: [UTF8String: TreeValue] = [:]
        for (k, _) in windowKeys() { d[UTF8String(k)] = node.child(k) }
        return d.isEmpty ? .null : .object(TreeObject(d))
    }

    // MARK: changes

    struct ChildChange {
        let key: String
        let old: TreeValue
        let new: TreeValue
    }

    /// Applies changed children (old and new values) given the node they are now part of;
    /// returns the child events in firing order and whether a value event follows.
    func apply(_ changes: [ChildChange], node: TreeValue) -> (events: [TreeViewEvent], value: Bool) {
        let oldEdge = edge()
        let oldLeaf = leaf
        var oldIn = [ChildEntry?](repeating: nil, count: changes.count)
        for (i, c) in changes.enumerated() {
            if let sv = sortValues.removeValue(forKey: UTF8String(c.key)) {
                let e = ChildEntry(key: c.key, sortValue: sv)
                children.remove(e)
                if inWindow(e, oldEdge) { oldIn[i] = e }
            }
            if c.new.exists {
                let e = ChildEntry(key: c.key, sortValue: index.sortValue(of: c.new))
                if query.contains(e) && inRegion(e) {
                    children.insert(e)
                    sortValues[UTF8String(c.key)] = e.sortValue
                }
            }
        }
        if let n = query.limit, cut != nil, children.count < n { rebuild(node, partial: false) }
        let newEdge = edge()

        var removed: [(ChildEntry, String, TreeValue)] = []
        var added: [(ChildEntry, String, TreeValue)] = []
        var changed: [(ChildEntry, String, TreeValue)] = []
        var moved: [(ChildEntry, String, TreeValue)] = []
        for (i, c) in changes.enumerated() {
            var ne: ChildEntry? = nil
            if let sv = sortValues[UTF8String(c.key)] {
                let e = ChildEntry(key: c.key, sortValue: sv)
                if inWindow(e, newEdge) { ne = e }
            }
            switch (oldIn[i], ne) {
            case (let o?, nil): removed.append((o, c.key, c.old))
            case (nil, let n?): added.append((n, c.key, c.new))
            case (_?, let n?):
                if c.old != c.new {
                    changed.append((n, c.key, c.new))
                    if index.indexedValueChanged(c.old, c.new) { moved.append((n, c.key, c.new)) }
                }
            case (nil, nil): break
            }
        }
        if query.limit != nil {
            let skip = Set(changes.map { UTF8String($0.key) })
            crossings(oldEdge, newEdge, skip: skip, node: node, removed: &removed, added: &added)
        }

        let newLeaf = leafState(node)
        let leafChanged = newLeaf != nil && (oldLeaf == nil || oldLeaf! != newLeaf!)
        leaf = newLeaf

        var events: [TreeViewEvent] = []
        func emit(_ list: [(ChildEntry, String, TreeValue)], _ type: TreeEventType, prev: Bool) {
            let sorted = list.count > 1 ? list.sorted { ChildEntry.compare($0.0, $1.0) < 0 } : list
            for (e, k, v) in sorted {
                events.append(TreeViewEvent(type: type, key: k, value: v, prevKey: prev ? previousKey(e, newEdge) : nil))
            }
        }
        emit(removed, .childRemoved, prev: false)
        emit(added, .childAdded, prev: true)
        emit(moved, .childMoved, prev: true)
        emit(changed, .childChanged, prev: true)
        return (events, !events.isEmpty || leafChanged)
    }

    /// Children that did not change but crossed the window's edge because it moved.
    private func crossings(_ oldEdge: ChildEntry?, _ newEdge: ChildEntry?, skip: Set<UTF8String>, node: TreeValue,
                           removed: inout [(ChildEntry, String, TreeValue)], added: inout [(ChildEntry, String, TreeValue)]) {
        func collect(from start: ChildEntry?, inclusive: Bool, while cond: (ChildEntry) -> Bool, into list: inout [(ChildEntry, String, TreeValue)]) {
            children.forEach(from: start, inclusive: inclusive) { e in
                guard cond(e) else { return false }
                if !skip.contains(UTF8String(e.key)) { list.append((e, e.key, node.child(e.key))) }
                return true
            }
        }
        if query.limitType == .first {
            // Members: entries <= edge.
            if let hi = newEdge {
                collect(from: oldEdge, inclusive: oldEdge == nil, while: { ChildEntry.compare($0, hi) <= 0 }, into: &added)
            }
            if let oldHi = oldEdge {
                collect(from: newEdge, inclusive: newEdge == nil, while: { ChildEntry.compare($0, oldHi) <= 0 }, into: &removed)
            }
        } else {
            // Members: entries >= edge.
            if let lo = newEdge {
                collect(from: lo, inclusive: true, while: { e in oldEdge.map { ChildEntry.compare(e, $0) < 0 } ?? true }, into: &added)
            }
            if let oldLo = oldEdge {
                collect(from: oldLo, inclusive: true, while: { e in newEdge.map { ChildEntry.compare(e, $0) < 0 } ?? true }, into: &removed)
            }
        }
    }
}

/// Responsible for: keeping the best `capacity` children offered for a limited query (a binary
/// heap with the worst kept entry on top), and the one-pass selection of a node's best children
/// that both the backend (a first window without an index) and a client's limited view (its
/// start from a node it holds) use.
///
///     let heap = query.bestChildren(200, of: node)   // heap.items, heap.worst, heap.rejected
public struct BoundedHeap {
    public let capacity: Int
    /// Best means largest (limitToLast) or smallest (limitToFirst).
    public let keepLargest: Bool
    /// The entries kept, in heap order (the worst first).
    public private(set) var items: [ChildEntry] = []
    /// Whether some entry offered was dropped (then everything dropped is worse than `worst`).
    public private(set) var rejected = false

    public init(capacity: Int, keepLargest: Bool) {
        self.capacity = capacity
        self.keepLargest = keepLargest
        items.reserveCapacity(capacity)
    }

    public var worst: ChildEntry? { items.first }

    @inline(__always)
    private func worse(_ a: ChildEntry, _ b: ChildEntry) -> Bool {
        let c = ChildEntry.compare(a, b)
        return keepLargest ? c < 0 : c > 0
    }

    /// True (and counted as dropped) when a child with sort value `sv` is worse than the worst
    /// kept one whatever its key.
    @inline(__always)
    public mutating func rejects(_ sv: TreeValue) -> Bool {
        guard items.count == capacity, capacity > 0 else { return false }
        let c = TreeValue.compareIndexed(sv, items[0].sortValue)
        if keepLargest ? c < 0 : c > 0 { rejected = true; return true }
        return false
    }

    public mutating func offer(_ e: ChildEntry) {
        if items.count < capacity {
            items.append(e)
            var i = items.count - 1
            while i > 0 {
                let p = (i - 1) / 2
                guard worse(items[i], items[p]) else { break }
                items.swapAt(i, p)
                i = p
            }
            return
        }
        rejected = true
        guard capacity > 0, worse(items[0], e) else { return }
        items[0] = e
        var i = 0
        while true {
            let l = 2 * i + 1, r = l + 1
            var m = i
            if l < items.count && worse(items[l], items[m]) { m = l }
            if r < items.count && worse(items[r], items[m]) { m = r }
            if m == i { break }
            items.swapAt(i, m)
            i = m
        }
    }
}

extension TreeQuery {
    /// The best `capacity` children of `node` in this query's order and range (limitToLast keeps
    /// the largest), in one pass: a child that loses against the worst kept one on its sort value
    /// alone costs one comparison and no entry. `rejected` tells whether in-range children were
    /// left out.
    public func bestChildren(_ capacity: Int, of node: TreeObject) -> BoundedHeap {
        // Never more than the node holds (a limit may be far larger than the node).
        var heap = BoundedHeap(capacity: min(capacity, node.count), keepLargest: limitType == .last)
        let hasRange = self.hasRange
        let index = self.index
        var single: String? = nil
        if case .child(let p) = index, p.count == 1 { single = p.segments[0] }
        for (k, v) in node.children {
            let sv: TreeValue
            if let seg = single {
                if case .object(let co) = v { sv = co[seg] } else { sv = .null }
            } else {
                sv = index.sortValue(of: v)
            }
            if hasRange {
                // Out of range is not "left out": the range is checked before any rejection.
                let e = ChildEntry(key: k.s, sortValue: sv)
                if !contains(e) { continue }
                if heap.rejects(sv) { continue }
                heap.offer(e)
            } else {
                if heap.rejects(sv) { continue }
                heap.offer(ChildEntry(key: k.s, sortValue: sv))
            }
        }
        return heap
    }
}

/// Responsible for: keeping the best `capacity` children offered for a limited query (a binary
/// heap with the worst kept entry on top), and the one-pass selection of a node's best children
/// (over `TreeIndex.forEachSortValue`) that both the backend (a first window without an index)
/// and a client's limited view (its start from a node it holds) use.
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
    private func worse(_ a: ChildEntry, _ b: ChildEntry) -> Bool { BoundedHeap.worse(a, b, keepLargest) }

    /// True (and counted as dropped) when a child with sort value `sv` is worse than the worst
    /// kept one whatever its key.
    @inline(__always)
    public mutating func rejects(_ sv: TreeValue) -> Bool {
        guard items.count == capacity, capacity > 0 else { return false }
        let c = TreeValue.compareIndexed(sv, items[0].sortValue)
        if keepLargest ? c < 0 : c > 0 { rejected = true; return true }
        return false
    }

    /// Keeps `e` when the heap has room or `e` is better than the worst kept entry (which is then
    /// dropped). Entries move by swaps in the array's memory: copying one would retain its key,
    /// a string of its own for a push id.
    public mutating func offer(_ e: ChildEntry) {
        if items.count < capacity {
            items.append(e)
            let keepLargest = self.keepLargest
            items.withUnsafeMutableBufferPointer { buf in
                var i = buf.count - 1
                while i > 0 {
                    let p = (i - 1) / 2
                    guard BoundedHeap.worse(buf[i], buf[p], keepLargest) else { break }
                    buf.swapAt(i, p)
                    i = p
                }
            }
            return
        }
        rejected = true
        guard capacity > 0, worse(items[0], e) else { return }
        items[0] = e
        let keepLargest = self.keepLargest
        items.withUnsafeMutableBufferPointer { buf in
            var i = 0
            while true {
                let l = 2 * i + 1, r = l + 1
                var m = i
                if l < buf.count && BoundedHeap.worse(buf[l], buf[m], keepLargest) { m = l }
                if r < buf.count && BoundedHeap.worse(buf[r], buf[m], keepLargest) { m = r }
                if m == i { break }
                buf.swapAt(i, m)
                i = m
            }
        }
    }

    /// Whether `a` is worse than `b` for a heap that keeps the largest (or the smallest).
    @inline(__always)
    private static func worse(_ a: ChildEntry, _ b: ChildEntry, _ keepLargest: Bool) -> Bool {
        let c = ChildEntry.compare(a, b)
        return keepLargest ? c < 0 : c > 0
    }
}

extension TreeQuery {
    /// The best `capacity` children of `node` in this query's order and range (limitToLast keeps
    /// the largest), in one pass (`TreeIndex.forEachSortValue`: it prefetches, and reads no
    /// child for the key order): a child that loses against the worst kept one on its sort value
    /// alone costs one comparison and no entry. `rejected` tells whether in-range children were
    /// left out.
    public func bestChildren(_ capacity: Int, of node: TreeObject) -> BoundedHeap {
        // Never more than the node holds (a limit may be far larger than the node).
        var heap = BoundedHeap(capacity: min(capacity, node.count), keepLargest: limitType == .last)
        let children = node.children
        let ranged = hasRange
        index.forEachSortValue(in: node) { i, sv in consider(children, i, sv, ranged, &heap) }
        return heap
    }

    /// Offers the child at `i` of `children` with sort value `sv` to `heap` when it is in range
    /// (`ranged`: the query has one) and not worse than everything kept. Its key is copied only
    /// then (a push id is a string of its own: copying it is one more object touched).
    @inline(__always)
    private func consider(_ children: [UTF8String: TreeValue], _ i: Dictionary<UTF8String, TreeValue>.Index,
                          _ sv: TreeValue, _ ranged: Bool, _ heap: inout BoundedHeap) {
        if ranged {
            // Out of range is not "left out": the range is checked before any rejection.
            let e = ChildEntry(key: children.keys[i].s, sortValue: sv)
            if !contains(e) || heap.rejects(sv) { return }
            heap.offer(e)
        } else {
            if heap.rejects(sv) { return }
            heap.offer(ChildEntry(key: children.keys[i].s, sortValue: sv))
        }
    }
}

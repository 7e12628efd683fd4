/// Responsible for: the children of one node in an index's order, kept sorted under single
/// inserts and removals in O(log n) comparisons plus a move of at most one chunk (a two-level
/// sorted array: chunks of up to 256 entries), with access by position from either end,
/// neighbours, and iteration from a point. Views keep one per (path, query).
///
///     var c = OrderedChildren()
///     c.insert(ChildEntry(key: "a", sortValue: .int(3)))
///     c.last?.key    // "a"
public struct OrderedChildren: Sendable {
    static let chunkSize = 256
    private var chunks: [[ChildEntry]] = []
    public private(set) var count = 0

    public init() {}

    /// Builds from entries in any order.
    public init(_ entries: [ChildEntry]) {
        let sorted = entries.sorted { ChildEntry.compare($0, $1) < 0 }
        var i = 0
        while i < sorted.count {
            let end = Swift.min(sorted.count, i + OrderedChildren.chunkSize / 2)
            chunks.append(Array(sorted[i..<end]))
            i = end
        }
        count = sorted.count
    }

    /// Builds from entries already in order (ascending, no duplicates); not checked.
    public init(sorted: [ChildEntry]) {
        var i = 0
        while i < sorted.count {
            let end = Swift.min(sorted.count, i + OrderedChildren.chunkSize / 2)
            chunks.append(Array(sorted[i..<end]))
            i = end
        }
        count = sorted.count
    }

    public var isEmpty: Bool { count == 0 }
    public var first: ChildEntry? { chunks.first?.first }
    public var last: ChildEntry? { chunks.last?.last }

    /// The chunk that holds (or would hold) `e`: the first whose last entry is >= e.
    private func chunkIndex(for e: ChildEntry) -> Int {
        var lo = 0, hi = chunks.count - 1
        if hi < 0 { return 0 }
        while lo < hi {
            let mid = (lo + hi) / 2
            if ChildEntry.compare(chunks[mid][chunks[mid].count - 1], e) < 0 { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }

    /// First position in `chunk` whose entry is >= e.
    private static func lowerBound(_ chunk: [ChildEntry], _ e: ChildEntry) -> Int {
        var lo = 0, hi = chunk.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if ChildEntry.compare(chunk[mid], e) < 0 { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }

    public mutating func insert(_ e: ChildEntry) {
        if chunks.isEmpty { chunks = [[e]]; count = 1; return }
        let ci = chunkIndex(for: e)
        let pos = OrderedChildren.lowerBound(chunks[ci], e)
        if pos < chunks[ci].count && ChildEntry.compare(chunks[ci][pos], e) == 0 { return }
        chunks[ci].insert(e, at: pos)
        count += 1
        if chunks[ci].count > OrderedChildren.chunkSize {
            let half = chunks[ci].count / 2
            let tail = Array(chunks[ci][half...])
            chunks[ci].removeSubrange(half...)
            chunks.insert(tail, at: ci + 1)
        }
    }

    /// Removes the entry equal to `e` (same key and sort value); returns whether it was there.
    @discardableResult
    public mutating func remove(_ e: ChildEntry) -> Bool {
        guard !chunks.isEmpty else { return false }
        let ci = chunkIndex(for: e)
        guard ci < chunks.count else { return false }
        let pos = OrderedChildren.lowerBound(chunks[ci], e)
        guard pos < chunks[ci].count, ChildEntry.compare(chunks[ci][pos], e) == 0 else { return false }
        chunks[ci].remove(at: pos)
        count -= 1
        if chunks[ci].isEmpty { chunks.remove(at: ci) }
        return true
    }

    /// The entry `offset` places from the start (0 = first).
    public func entry(fromStart offset: Int) -> ChildEntry? {
        guard offset >= 0 && offset < count else { return nil }
        var o = offset
        for c in chunks {
            if o < c.count { return c[o] }
            o -= c.count
        }
        return nil
    }

    /// The entry `offset` places from the end (0 = last).
    public func entry(fromEnd offset: Int) -> ChildEntry? {
        guard offset >= 0 && offset < count else { return nil }
        var o = offset
        for c in chunks.reversed() {
            if o < c.count { return c[c.count - 1 - o] }
            o -= c.count
        }
        return nil
    }

    /// The entry just before `e` (which need not be present).
    public func predecessor(of e: ChildEntry) -> ChildEntry? {
        guard !chunks.isEmpty else { return nil }
        let ci = chunkIndex(for: e)
        if ci >= chunks.count { return last }
        let pos = OrderedChildren.lowerBound(chunks[ci], e)
        if pos > 0 { return chunks[ci][pos - 1] }
        return ci > 0 ? chunks[ci - 1].last : nil
    }

    /// Calls `body` for each entry from the first one >= `start` (or > when `inclusive` is false;
    /// from the beginning when nil) until `body` returns false.
    public func forEach(from start: ChildEntry?, inclusive: Bool = true, _ body: (ChildEntry) -> Bool) {
        var ci = 0, pos = 0
        if let s = start {
            ci = chunkIndex(for: s)
            if ci >= chunks.count { return }
            pos = OrderedChildren.lowerBound(chunks[ci], s)
            if !inclusive && pos < chunks[ci].count && ChildEntry.compare(chunks[ci][pos], s) == 0 { pos += 1 }
        }
        while ci < chunks.count {
            let c = chunks[ci]
            while pos < c.count {
                if !body(c[pos]) { return }
                pos += 1
            }
            ci += 1
            pos = 0
        }
    }

    /// Calls `body` for each entry from the last one backwards until `body` returns false.
    public func forEachReversed(_ body: (ChildEntry) -> Bool) {
        var ci = chunks.count - 1
        while ci >= 0 {
            let c = chunks[ci]
            var pos = c.count - 1
            while pos >= 0 {
                if !body(c[pos]) { return }
                pos -= 1
            }
            ci -= 1
        }
    }

    /// Every entry, in order.
    public var all: [ChildEntry] { chunks.flatMap { $0 } }
}

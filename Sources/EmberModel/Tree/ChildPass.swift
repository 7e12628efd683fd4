import CEmberMemory

/// Responsible for: reading every child's sort value of a large node quickly, for the passes that
/// must see them all (a limited query's first window, the build of a child index). Such a pass is
/// bound by memory, not by its comparisons: each child is its own heap object, scattered, and
/// reading it waits for the memory. So the pass asks for the child `prefetchDistance` places
/// ahead while the caller works on the current one (their misses overlap instead of following
/// each other), finds a one-segment child path's value by comparing the child's few keys instead
/// of hashing (`TreeObject.child(matching:)`), and in key order reads no child at all.
///
///     TreeIndex.child(score).forEachSortValue(in: node) { i, sv in use(node.children.keys[i], sv) }
extension TreeIndex {
    @inline(__always)
    public func forEachSortValue(in node: TreeObject, _ body: (Dictionary<UTF8String, TreeValue>.Index, TreeValue) -> Void) {
        let children = node.children
        if case .key = self {
            var i = children.startIndex
            while i != children.endIndex {
                body(i, .null)
                i = children.index(after: i)
            }
            return
        }
        var single: UTF8String? = nil
        if case .child(let p) = self, p.count == 1 { single = UTF8String(p.segments[0]) }
        var ahead = children.startIndex
        for _ in 0..<TreeIndex.prefetchDistance where ahead != children.endIndex { ahead = children.index(after: ahead) }
        var i = children.startIndex
        while i != children.endIndex {
            if ahead != children.endIndex {
                if case .object(let o) = children.values[ahead] { ember_prefetch_range(o.identity, TreeObject.smallStorageBytes) }
                ahead = children.index(after: ahead)
            }
            if let seg = single {
                // The child's dictionary is borrowed only until its sort value is out.
                let sv: TreeValue
                if case .object(let co) = children.values[i] { sv = co.child(matching: seg) } else { sv = .null }
                body(i, sv)
            } else {
                body(i, sortValue(of: children.values[i]))
            }
            i = children.index(after: i)
        }
    }

    /// Children a pass asks for ahead of the one it reads: enough to cover a memory access with
    /// the work on the children between (8 to 32 measured alike in a model of the pass; 16 is in
    /// the middle).
    static let prefetchDistance = 16
}

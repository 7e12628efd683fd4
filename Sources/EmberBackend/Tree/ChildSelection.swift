import EmberModel

/// Responsible for: a limited query's first window taken in one pass over a node's children,
/// without building an index (`TreeQuery.bestChildren`: the pass costs a sort value and usually
/// one comparison per child, not a sort of them all). The first limited query at a node is
/// answered this way; the index is built right after the answer has left (`BackendTree.window`).
/// Gives exactly what `BackendChildIndex.window` would.
///
///     let w = ChildSelection.window(query, node: store.read(posts))
enum ChildSelection {
    static func window(_ query: TreeQuery, node: TreeValue) -> TreeWindow {
        let capacity = query.windowSize
        guard case .object(let o) = node else {
            return TreeWindow(query: query, entries: [], truncated: false)
        }
        let heap = query.bestChildren(capacity, of: o)
        let entries = heap.items.sorted { ChildEntry.compare($0, $1) < 0 }
        return TreeWindow(query: query, entries: entries, truncated: heap.rejected)
    }
}

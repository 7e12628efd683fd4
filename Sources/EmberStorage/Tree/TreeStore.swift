import EmberModel

/// Responsible for: the storage contract of a Realtime-Database tree: read the subtree at a
/// path, replace the subtree at a path. Both cost what the subtree costs, never the whole
/// tree, so a table of (path, leaf value) rows implements it directly: a read is a range scan
/// of the paths under `path`; a write deletes that range and the leaf rows of `path`'s ancestors
/// (a leaf on the way becomes an object) and inserts the new value's leaves. Not thread-safe:
/// its owner serializes access (the backend's queue).
///
///     let s: TreeStore = MemoryTreeStore()
///     s.write(try TreePath(parsing: "posts/a"), .string("Hi"))
///     s.read(.root)           // {posts: {a: "Hi"}}
public protocol TreeStore: AnyObject {
    /// The node at `path`: null when absent.
    func read(_ path: TreePath) -> TreeValue
    /// Replaces the node at `path` with `value` (null removes it; parents left empty disappear).
    func write(_ path: TreePath, _ value: TreeValue)
    /// Number of leaves stored (diagnostics and tests).
    var leafCount: Int { get }
}

extension Persistence {
    /// Where the backend keeps its tree. Implementations without one (nil) get a memory tree
    /// from the backend. (A durable implementation returns its own, e.g. a SQLite table.)
    public var backendTree: TreeStore? { nil }
}

/// Responsible for: a tree held in memory as one copy-on-write value; reads hand out shared
/// subtrees in O(depth), writes copy only the nodes on the path they change that are shared.
public final class MemoryTreeStore: TreeStore {
    private var root = TreeValue.null
    public private(set) var leafCount = 0

    public init() {}

    public func read(_ path: TreePath) -> TreeValue { root.value(at: path.segments) }

    public func write(_ path: TreePath, _ value: TreeValue) {
        let old = root.value(at: path.segments)
        var removed = MemoryTreeStore.leaves(old)
        // A leaf ancestor is replaced by the object the write creates.
        if value.exists {
            var node = root
            for s in path.segments {
                if node.isLeaf { removed += 1; break }
                node = node.child(s)
            }
        }
        root.set(path.segments[...], value)
        leafCount += MemoryTreeStore.leaves(value) - removed
    }

    static func leaves(_ v: TreeValue) -> Int {
        switch v {
        case .null: return 0
        case .object(let o): return o.children.values.reduce(0) { $0 + leaves($1) }
        default: return 1
        }
    }
}

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
    /// Whether anything is stored at or under `path` (without reading it when the store can).
    func exists(_ path: TreePath) -> Bool
}

extension TreeStore {
    public func exists(_ path: TreePath) -> Bool { read(path).exists }
}

/// Responsible for: what a client keeps of the tree between sessions: its cache of the
/// backend's tree (`cache`, a `TreeStore`), the paths whose cached node was once complete (a
/// listen's answer), and its queue of unacknowledged writes with their ids (never reused). A
/// durable store implements it in the same file as the documents; a memory client has none.
/// Callers group calls in the persistence's `runTransaction`. Worker queue only.
public protocol ClientTreeStore: AnyObject {
    var cache: TreeStore { get }
    /// Paths whose node in `cache` was complete when last heard (none below another one).
    func completePaths() -> [TreePath]
    /// Records `path` as complete (dropping the records below it).
    func markComplete(_ path: TreePath)
    /// Unacknowledged writes, oldest first.
    func pendingWrites() -> [(id: Int64, ops: [TreeWriteOp])]
    func addPendingWrite(id: Int64, _ ops: [TreeWriteOp])
    func removePendingWrite(id: Int64)
    /// Records `id` as used by a write never queued here (a transaction's attempt).
    func noteWriteId(_ id: Int64)
    /// The highest write id ever queued or noted (0 when none).
    func lastWriteId() -> Int64
}

extension Persistence {
    /// Where the backend keeps its tree. Implementations without one (nil) get a memory tree
    /// from the backend. (A durable implementation returns its own, e.g. a SQLite table.)
    public var backendTree: TreeStore? { nil }
    /// Where the client keeps its tree cache and pending tree writes (nil: in memory).
    public var clientTree: ClientTreeStore? { nil }
}

extension PersistenceKey {
    /// The highest tree write id of the local client the backend applied (as `backendAppliedBatch`).
    public static let backendAppliedTreeWrite = "backend.appliedTreeWrite"
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

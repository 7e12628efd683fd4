import EmberConcurrency
import CEmberABI
import EmberModel
import EmberCore
#if canImport(Glibc)
import Glibc
#endif

// Responsible for: ember_tree_snapshot, the data at a location as a tree event saw it
// (reference counted): key, existence, child count, the value in either format (its own
// children in the query's order), and child snapshots (in order, made once, owned by the parent).

final class CTreeSnapshot: Counted {
    let snap: TreeSnapshot
    private let lock = Lock()
    private var keyC: UnsafeMutablePointer<CChar>?
    private var keyMade = false
    private var children: [CTreeSnapshot]?

    init(_ snap: TreeSnapshot) { self.snap = snap }

    /// The key as a C string (NULL at the root), made on first use.
    var key: UnsafePointer<CChar>? {
        lock.withLock {
            if !keyMade {
                keyMade = true
                keyC = snap.key.map(cCopy)
            }
            return keyC.map { UnsafePointer($0) }
        }
    }

    /// The direct children in the snapshot's order.
    func child(at i: Int) -> CTreeSnapshot? {
        lock.withLock {
            if children == nil { children = snap.children.map(CTreeSnapshot.init) }
            guard let c = children, i >= 0, i < c.count else { return nil }
            return c[i]
        }
    }

    deinit { free(keyC) }
}

@inline(__always)
func treeSnap(_ p: OpaquePointer?) -> CTreeSnapshot? {
    p.map { Unmanaged<CTreeSnapshot>.fromOpaque(UnsafeRawPointer($0)).takeUnretainedValue() }
}

@_cdecl("ember_tree_snapshot_retain")
public func ember_tree_snapshot_retain(_ s: OpaquePointer?) -> OpaquePointer? {
    guard let s else { return nil }
    _ = Unmanaged<CTreeSnapshot>.fromOpaque(UnsafeRawPointer(s)).retain()
    return s
}

@_cdecl("ember_tree_snapshot_release")
public func ember_tree_snapshot_release(_ s: OpaquePointer?) {
    guard let s else { return }
    Unmanaged<CTreeSnapshot>.fromOpaque(UnsafeRawPointer(s)).release()
}

@_cdecl("ember_tree_snapshot_key")
public func ember_tree_snapshot_key(_ s: OpaquePointer?) -> UnsafePointer<CChar>? { treeSnap(s)?.key }

@_cdecl("ember_tree_snapshot_exists")
public func ember_tree_snapshot_exists(_ s: OpaquePointer?) -> Bool { treeSnap(s)?.snap.exists ?? false }

@_cdecl("ember_tree_snapshot_child_count")
public func ember_tree_snapshot_child_count(_ s: OpaquePointer?) -> Int { treeSnap(s)?.snap.value.childCount ?? 0 }

@_cdecl("ember_tree_snapshot_value")
public func ember_tree_snapshot_value(_ s: OpaquePointer?, _ format: Int32, _ outLen: UnsafeMutablePointer<Int>?,
                                      _ err: UnsafeMutablePointer<ember_error>?) -> UnsafeMutablePointer<CChar>? {
    wrap(err, nil) {
        let o = try object(s, CTreeSnapshot.self, "snapshot")
        return try TreeValues.encode(o.snap.value, orderedBy: o.snap.index, format, outLen)
    }
}

@_cdecl("ember_tree_snapshot_child_at")
public func ember_tree_snapshot_child_at(_ s: OpaquePointer?, _ i: Int) -> OpaquePointer? {
    guard let o = treeSnap(s), let c = o.child(at: i) else { return nil }
    return unretained(c)
}

@_cdecl("ember_tree_snapshot_child")
public func ember_tree_snapshot_child(_ s: OpaquePointer?, _ path: UnsafePointer<CChar>?, _ err: UnsafeMutablePointer<ember_error>?) -> OpaquePointer? {
    wrap(err, nil) {
        let o = try object(s, CTreeSnapshot.self, "snapshot")
        let rel = try TreePath(parsing: try text(path, "path"), context: "child path")
        return retained(CTreeSnapshot(o.snap.child(rel)))
    }
}

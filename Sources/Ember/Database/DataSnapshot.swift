import Foundation
import EmberModel
import EmberCore

/// Responsible for: the data at a location as an event or a read saw it: key, value (Swift
/// values, converted on access), children in the query's order, and child snapshots.
///
///     for case let child as DataSnapshot in snapshot.children { print(child.key, child.value ?? "") }
public final class DataSnapshot: Sendable {
    let database: Database
    let snap: TreeSnapshot

    init(database: Database, snap: TreeSnapshot) {
        self.database = database
        self.snap = snap
    }

    /// The last path segment ("" at the root).
    public var key: String { snap.key ?? "" }
    /// nil when nothing is there; else Bool, Int, Double, String, [String: Any] or [Any].
    public var value: Any? { TreeUserData.toSwift(snap.value) }
    public var priority: Any? { nil }
    public func exists() -> Bool { snap.exists }
    public var ref: DatabaseReference { DatabaseReference(database: database, path: snap.path) }

    public var childrenCount: UInt { UInt(snap.value.childCount) }
    public func hasChildren() -> Bool { snap.value.childCount > 0 }

    public func hasChild(_ childPathString: String) -> Bool {
        guard let p = try? TreePath(parsing: childPathString) else { return false }
        return snap.value.value(at: p.segments).exists
    }

    public func childSnapshot(forPath childPathString: String) -> DataSnapshot {
        let p = (try? TreePath(parsing: childPathString)) ?? TreePath(unchecked: [childPathString])
        return DataSnapshot(database: database, snap: snap.child(p))
    }

    /// The direct children, in the order of the query that produced this snapshot.
    public var children: NSEnumerator { SnapshotEnumerator(snap.children.map { DataSnapshot(database: database, snap: $0) }) }

    /// The children as an array (Swift convenience).
    public var childSnapshots: [DataSnapshot] { snap.children.map { DataSnapshot(database: database, snap: $0) } }
}

/// Responsible for: enumerating child snapshots as Firebase's `children` does.
final class SnapshotEnumerator: NSEnumerator {
    private var items: [Any]
    private var i = 0
    init(_ items: [Any]) { self.items = items }
    override func nextObject() -> Any? {
        guard i < items.count else { return nil }
        defer { i += 1 }
        return items[i]
    }
}

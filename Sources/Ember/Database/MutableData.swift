import Foundation
import EmberModel
import EmberCore

/// Responsible for: the data a transaction's block reads and changes (Firebase's `MutableData`):
/// a location's value, its children, and child data that write through to the same value (one
/// tree shared by the data and every child data made from it). A value that is not tree data
/// is kept as the error that fails the transaction.
///
///     ref.runTransactionBlock { data in
///         data.value = ((data.value as? Int) ?? 0) + 1
///         return TransactionResult.success(withValue: data)
///     }
public final class MutableData: NSObject, @unchecked Sendable { // used by one transaction block at a time, on the event thread
    /// The whole value the block works on, shared with every child data.
    final class Root {
        var value: TreeValue
        var error: EmberError?
        init(_ value: TreeValue) { self.value = value }
    }

    let root: Root
    let path: [String]
    let location: TreePath

    init(value: TreeValue, location: TreePath) {
        root = Root(value)
        path = []
        self.location = location
    }

    private init(root: Root, path: [String], location: TreePath) {
        self.root = root
        self.path = path
        self.location = location
    }

    private var node: TreeValue { root.value.value(at: path[...]) }

    /// nil when nothing is here; else Bool, Int, Double, String, [String: Any] or [Any]. Setting
    /// nil or NSNull removes it.
    public var value: Any? {
        get { TreeUserData.toSwift(node) }
        set {
            do {
                let v = try TreeUserData.parse(newValue, at: location.description + path.map { "/" + $0 }.joined())
                root.value.set(path[...], v)
            } catch {
                root.error = error as? EmberError ?? EmberError(.invalidArgument, "\(error)")
            }
        }
    }

    /// Ember keeps no priorities in the client tree: always nil.
    public var priority: Any? { nil }

    /// The last segment of the location (nil at the root).
    public var key: String? { path.last ?? location.last }
    public var childrenCount: UInt { UInt(node.childCount) }
    public func hasChildren() -> Bool { node.childCount > 0 }

    public func hasChild(atPath path: String) -> Bool {
        guard let p = try? TreePath(parsing: path) else { return false }
        return node.value(at: p.segments).exists
    }

    /// The data at `path` below this one; setting its value changes this one.
    public func childData(byAppendingPath path: String) -> MutableData {
        let segments = (try? TreePath(parsing: path).segments) ?? [path]
        return MutableData(root: root, path: self.path + segments, location: location)
    }

    /// The direct children, in key order.
    public var children: NSEnumerator {
        let keys: [String]
        if case .object(let o) = node { keys = o.sortedKeys() } else { keys = [] }
        return SnapshotEnumerator(keys.map { MutableData(root: root, path: path + [$0], location: location) })
    }
}

/// Responsible for: what a transaction's block returns: a value to write, or abort.
public final class TransactionResult: NSObject, Sendable {
    let data: MutableData?

    private init(data: MutableData?) { self.data = data }

    /// Writes `value` (the data the block was given, changed or not).
    public static func success(withValue value: MutableData) -> TransactionResult { TransactionResult(data: value) }
    /// Ends the transaction without writing; its completion says it was not committed.
    public static func abort() -> TransactionResult { TransactionResult(data: nil) }

    var outcome: TreeTransactionOutcome {
        guard let data else { return .abort }
        if let e = data.root.error { return .fail(e) }
        return .write(data.root.value)
    }
}

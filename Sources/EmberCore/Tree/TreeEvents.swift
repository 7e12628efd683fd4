import EmberModel

/// The kinds of tree events (raw values as Firebase's `FIRDataEventType`).
public enum TreeEventType: Int, Sendable, CaseIterable {
    case childAdded = 0, childRemoved = 1, childChanged = 2, childMoved = 3, value = 4
}

/// Responsible for: the data an event carries: the node at a path (for a query's value event:
/// the children in its window) and the index its children are ordered by.
///
///     snap.children.map { $0.key }      // in the query's order
public struct TreeSnapshot: Sendable {
    public let path: TreePath
    public let value: TreeValue
    public let index: TreeIndex

    public init(path: TreePath, value: TreeValue, index: TreeIndex = .key) {
        self.path = path
        self.value = value
        self.index = index
    }

    /// The last segment of the path (nil at the root).
    public var key: String? { path.last }
    public var exists: Bool { value.exists }

    /// The children in index order.
    public var children: [TreeSnapshot] {
        guard case .object(let o) = value else { return [] }
        let entries = o.children.map { ChildEntry(key: $0.key.s, sortValue: index.sortValue(of: $0.value)) }
            .sorted { ChildEntry.compare($0, $1) < 0 }
        return entries.map { TreeSnapshot(path: path.child($0.key), value: o[$0.key]) }
    }

    public func child(_ relative: TreePath) -> TreeSnapshot {
        TreeSnapshot(path: path.appending(relative), value: value.value(at: relative.segments))
    }
}

/// Responsible for: what one tree observer receives: an event (with the previous sibling's key
/// for child events), or the error that ends it.
public enum TreeListenEvent: Sendable {
    case event(TreeEventType, TreeSnapshot, previousKey: String?)
    case cancelled(EmberError)
}

/// One child event a view computed (the engine turns it into observer callbacks).
struct TreeViewEvent {
    let type: TreeEventType
    let key: String
    let value: TreeValue
    let prevKey: String?
}

/// Responsible for: one registered observer: its event type, callback and token.
final class TreeObserver {
    let handle: UInt
    let type: TreeEventType
    let token: ListenerToken
    let callback: (TreeListenEvent) -> Void
    unowned let view: TreeView

    init(handle: UInt, type: TreeEventType, token: ListenerToken, view: TreeView, callback: @escaping (TreeListenEvent) -> Void) {
        self.handle = handle
        self.type = type
        self.token = token
        self.view = view
        self.callback = callback
    }
}

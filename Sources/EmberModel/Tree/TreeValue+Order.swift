/// Responsible for: the order of values under orderByValue / orderByChild (docs/semantics.md 16,
/// Firebase's `ValueIndex` / `PathIndex`): null (or missing) < false < true < numbers < strings
/// < objects, objects all equal to each other; ties are broken by key elsewhere.
///
///     TreeValue.compareIndexed(.bool(true), .int(0)) < 0
extension TreeValue {
    @inline(__always)
    var indexRank: Int {
        switch self {
        case .null: return 0
        case .bool(let b): return b ? 2 : 1
        case .int, .double: return 3
        case .string: return 4
        case .object: return 5
        }
    }

    /// Negative, zero or positive as `a` sorts before, with or after `b` under a value index.
    public static func compareIndexed(_ a: TreeValue, _ b: TreeValue) -> Int {
        let ra = a.indexRank, rb = b.indexRank
        if ra != rb { return ra < rb ? -1 : 1 }
        switch (a, b) {
        case (.string(let x), .string(let y)): return TreeKey.compareJS(x, y)
        case (.int, _), (.double, _): return compareNumbers(a, b)
        default: return 0
        }
    }
}

/// Responsible for: what a query orders children by: key (the default), value, or the value at
/// a (possibly nested) child path.
public enum TreeIndex: Hashable, Sendable, CustomStringConvertible {
    case key
    case value
    case child(TreePath)

    /// The value this index orders `child` by (null for the key index).
    @inline(__always)
    public func sortValue(of child: TreeValue) -> TreeValue {
        switch self {
        case .key: return .null
        case .value: return child.isLeaf ? child : (child.isNull ? .null : .object(TreeObject()))
        case .child(let p): return child.value(at: p.segments)
        }
    }

    /// Whether a change of a child from `old` to `new` changes its place in this order
    /// (Firebase's `indexedValueChanged`: child_moved is raised when it does).
    public func indexedValueChanged(_ old: TreeValue, _ new: TreeValue) -> Bool {
        switch self {
        case .key: return false
        case .value: return old != new
        case .child(let p): return old.value(at: p.segments) != new.value(at: p.segments)
        }
    }

    public var description: String {
        switch self {
        case .key: return "key"
        case .value: return "value"
        case .child(let p): return "child(\(p.segments.joined(separator: "/")))"
        }
    }
}

/// Responsible for: one child as an index sees it: its key and the value it is ordered by.
public struct ChildEntry: Sendable, CustomStringConvertible {
    public let key: String
    public let sortValue: TreeValue
    public init(key: String, sortValue: TreeValue) { self.key = key; self.sortValue = sortValue }

    /// Value order (objects equal), then key order.
    @inline(__always)
    public static func compare(_ a: ChildEntry, _ b: ChildEntry) -> Int {
        let c = TreeValue.compareIndexed(a.sortValue, b.sortValue)
        if c != 0 { return c }
        if equalUTF8(a.key, b.key) { return 0 }   // (Swift's == would merge 'é' and 'e\u{301}')
        return TreeKey.compare(a.key, b.key)
    }

    public var description: String { "\(key)=\(sortValue)" }
}

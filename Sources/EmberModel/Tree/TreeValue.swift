/// Responsible for: one node of the Realtime-Database JSON tree as a value: null (absent), a
/// boolean, a number (integer or double, compared numerically), a string, or an object of
/// children. Arrays are stored as objects with integer keys ("0", "1", ...). An object never
/// holds a null child and is never empty (that node is null). Objects share storage until one
/// copy is changed (copy on write), so handing a subtree to a snapshot costs one reference.
///
///     var v = TreeValue.null
///     v.set(["posts", "a", "title"], .string("Hi"))
///     v.value(at: ["posts", "a"])        // {title: "Hi"}
public enum TreeValue: Sendable, CustomStringConvertible {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case object(TreeObject)

    public var isNull: Bool { if case .null = self { return true }; return false }
    public var exists: Bool { !isNull }
    public var isLeaf: Bool { if case .object = self { return false }; return !isNull }
    public var object: TreeObject? { if case .object(let o) = self { return o }; return nil }

    /// The child under `key` (null when absent or when this node is a leaf).
    @inline(__always)
    public func child(_ key: String) -> TreeValue {
        if case .object(let o) = self { return o[key] }
        return .null
    }

    public func value<C: Collection>(at path: C) -> TreeValue where C.Element == String {
        var node = self
        for k in path {
            guard case .object(let o) = node else { return .null }
            node = o[k]
        }
        return node
    }

    public func value(at path: TreePath) -> TreeValue { value(at: path.segments) }

    /// Replaces the node at `path` with `v` (null removes it; objects left empty disappear, a leaf
    /// on the way becomes an object).
    public mutating func set(_ path: ArraySlice<String>, _ v: TreeValue) {
        guard let first = path.first else { self = v; return }
        var obj: TreeObject
        if case .object(let o) = self {
            obj = o
            self = .null          // the only reference left is `obj`: mutated in place
        } else {
            if v.isNull { return }
            obj = TreeObject()
        }
        obj.update(first) { $0.set(path.dropFirst(), v) }
        self = obj.isEmpty ? .null : .object(obj)
    }

    public mutating func set(_ path: TreePath, _ v: TreeValue) { set(path.segments[...], v) }

    public var childCount: Int { object?.count ?? 0 }

    /// Levels of nesting below this node (0 for a leaf or null).
    public var depth: Int {
        guard case .object(let o) = self else { return 0 }
        var d = 0
        for (_, c) in o.children { d = Swift.max(d, c.depth) }
        return d + 1
    }

    /// Both nodes are the same storage (or equal leaves): a cheap sufficient test for equality.
    @inline(__always)
    public func isIdentical(to other: TreeValue) -> Bool {
        switch (self, other) {
        case (.object(let a), .object(let b)): return a.identity == b.identity
        case (.object, _), (_, .object): return false
        default: return self == other
        }
    }

    public var description: String {
        switch self {
        case .null: return "null"
        case .bool(let b): return b ? "true" : "false"
        case .int(let i): return "\(i)"
        case .double(let d): return "\(d)"
        case .string(let s): return "\"\(s)\""
        case .object(let o):
            return "{" + o.sortedKeys().map { "\($0): \(o[$0])" }.joined(separator: ", ") + "}"
        }
    }
}

extension TreeValue: Equatable {
    /// Deep equality; numbers compare numerically (1 == 1.0, as JavaScript numbers do).
    public static func == (a: TreeValue, b: TreeValue) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case (.bool(let x), .bool(let y)): return x == y
        case (.string(let x), .string(let y)): return equalUTF8(x, y)
        case (.int, .int), (.int, .double), (.double, .int), (.double, .double):
            return TreeValue.compareNumbers(a, b) == 0
        case (.object(let x), .object(let y)):
            if x.identity == y.identity { return true }
            guard x.count == y.count else { return false }
            for (k, v) in x.children {
                guard let w = y.children[k], v == w else { return false }
            }
            return true
        default: return false
        }
    }
}

/// Responsible for: the children of an object node: a copy-on-write dictionary held directly
/// (one allocation per node, so a pass over many children chases one pointer per child), whose
/// storage identity tells when two nodes are the same without comparing them. Keys are told
/// apart by their UTF-8 bytes: "\u{E9}" and "e\u{301}" are two children (Swift's `String ==`
/// would make them one).
public struct TreeObject: Sendable {
    public private(set) var children: [UTF8String: TreeValue]

    public init() { children = [:] }

    /// Children as given (null children are dropped).
    public init(_ children: [UTF8String: TreeValue]) {
        self.children = children.filter { !$0.value.isNull }
    }

    /// Children as given, from keys that are distinct as Swift Strings (literals, ASCII keys).
    public init(_ children: [String: TreeValue]) {
        var d: [UTF8String: TreeValue] = [:]
        for (k, v) in children where !v.isNull { d[UTF8String(k)] = v }
        self.children = d
    }

    public var count: Int { children.count }
    public var isEmpty: Bool { children.isEmpty }
    /// The keys, in no particular order.
    public var keys: LazyMapSequence<Dictionary<UTF8String, TreeValue>.Keys, String> { children.keys.lazy.map { $0.s } }

    @inline(__always)
    public subscript(key: String) -> TreeValue { children[UTF8String(key)] ?? .null }

    /// The child under `key`, found in a small node (up to 8 children) by comparing its keys,
    /// each first by its representation (`UTF8String.identical`: the usual hit for short keys),
    /// then byte by byte inline (`UTF8String.sameBytesInline`: no call, so a caller that
    /// borrows this node around it keeps no retain), instead of hashing `key` with the node's
    /// seed; in a larger node by the hash.
    @inline(__always)
    public func child(matching key: UTF8String) -> TreeValue {
        guard children.count <= 8 else { return children[key] ?? .null }
        let keys = children.keys
        var i = keys.startIndex
        while i != keys.endIndex {
            // Only the matching child's value is copied.
            if UTF8String.identical(keys[i], key) || UTF8String.sameBytesInline(keys[i], key) { return children.values[i] }
            i = keys.index(after: i)
        }
        return .null
    }

    /// Bytes of a small node's storage (2 or 3 children, 4 buckets): the dictionary's header
    /// (64), its bucket bits (8), then 4 keys and 4 values. What a pass prefetches per child:
    /// 232 bytes, 4 or 5 cache lines as the allocation falls. A one-child node's storage is
    /// smaller (2 buckets, 152 bytes) and larger nodes' larger: the hint then reaches past the
    /// storage or stops short of its end, which a prefetch allows (it never faults and loads
    /// nothing the pass relies on).
    static let smallStorageBytes = 72 + 4 * (MemoryLayout<UTF8String>.stride + MemoryLayout<TreeValue>.stride)

    /// The address of the children's storage (equal addresses: the same node).
    @inline(__always)
    var identity: UnsafeRawPointer { unsafeBitCast(children, to: UnsafeRawPointer.self) }

    /// The keys in key order (docs/semantics.md 15).
    public func sortedKeys() -> [String] { keys.sorted { TreeKey.compare($0, $1) < 0 } }

    /// Changes the child under `key` in place (removing it when it becomes null).
    mutating func update(_ key: String, _ body: (inout TreeValue) -> Void) {
        let k = UTF8String(key)
        body(&children[k, default: .null])
        if case .null = children[k]! { children.removeValue(forKey: k) }
    }

    public mutating func set(_ key: String, _ value: TreeValue) {
        update(key) { $0 = value }
    }
}

extension TreeValue {
    /// Numeric order of two numbers, exact across integers and doubles.
    public static func compareNumbers(_ a: TreeValue, _ b: TreeValue) -> Int {
        switch (a, b) {
        case (.int(let x), .int(let y)): return x < y ? -1 : (x > y ? 1 : 0)
        case (.double(let x), .double(let y)): return x < y ? -1 : (x > y ? 1 : 0)
        case (.int(let x), .double(let y)): return -compareDoubleInt(y, x)
        case (.double(let x), .int(let y)): return compareDoubleInt(x, y)
        default: return 0
        }
    }

    static func compareDoubleInt(_ d: Double, _ i: Int64) -> Int {
        if d.isNaN { return -1 }
        if d >= 9_223_372_036_854_775_808.0 { return 1 }
        if d < -9_223_372_036_854_775_808.0 { return -1 }
        let t = d.rounded(.down)
        let ti = Int64(t)
        if ti != i { return ti < i ? -1 : 1 }
        return d > t ? 1 : 0
    }

    /// When this node reads back as a list (every key a canonical non-negative integer and the
    /// highest below twice the count, Firebase's `ChildrenNode.val()` rule): its length.
    public var arrayLength: Int? {
        guard case .object(let o) = self, !o.isEmpty else { return nil }
        var maxKey = -1
        for k in o.keys {
            guard let i = TreeValue.canonicalIndex(k) else { return nil }
            maxKey = Swift.max(maxKey, i)
        }
        return maxKey < 2 * o.count ? maxKey + 1 : nil
    }

    /// `k` as an array index when it is written canonically (`0` or `[1-9][0-9]*`).
    static func canonicalIndex(_ k: String) -> Int? {
        let u = k.utf8
        guard let f = u.first, u.count <= 9 else { return nil }
        if f == 48 { return u.count == 1 ? 0 : nil }
        var v = 0
        for c in u {
            guard c >= 48 && c <= 57 else { return nil }
            v = v * 10 + Int(c - 48)
        }
        return v
    }
}

extension TreeValue {
    /// A JSON-shaped value as a tree node: maps and arrays become objects (array indexes as keys),
    /// null children are dropped, an empty object is null. Throws for values JSON does not have
    /// (timestamps, bytes, references, geo points). Keys are not checked here.
    public init(json v: Value) throws {
        if let leaf = TreeValue.leaf(v) { self = leaf; return }
        var out: [UTF8String: TreeValue] = [:]   // keys by bytes, as the map's
        switch v {
        case .map(let m):
            out.reserveCapacity(m.count)
            for (k, c) in m.entries {
                let t = try TreeValue(json: c)
                if t.exists { out[UTF8String(k)] = t }
            }
        case .array(let a):
            for (i, c) in a.enumerated() {
                let t = try TreeValue(json: c)
                if t.exists { out[UTF8String(String(i))] = t }
            }
        default:
            throw EmberError.invalidArgument("the tree holds null, booleans, numbers, strings, maps and arrays (timestamps, bytes, references and geo points are not tree values)")
        }
        self = out.isEmpty ? .null : .object(TreeObject(out))
    }

    /// The node as a JSON-shaped value (objects as maps; the reverse of `init(json:)`).
    public var jsonValue: Value {
        switch self {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .int(let i): return .int(i)
        case .double(let d): return .double(d)
        case .string(let s): return .string(s)
        case .object(let o):
            var out: [String: Value] = [:]
            for (k, c) in o.children { out[k.s] = c.jsonValue }
            return .map(MapValue(out))
        }
    }

    /// A null, boolean, number or string as a tree leaf; nil for anything else.
    public static func leaf(_ v: Value) -> TreeValue? {
        switch v {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .int(let i): return .int(i)
        case .double(let d): return .double(d)
        case .string(let s): return .string(s)
        default: return nil
        }
    }
}

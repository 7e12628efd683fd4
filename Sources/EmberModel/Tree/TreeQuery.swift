/// Responsible for: a Realtime-Database query's parameters (one order-by, start / end bounds with
/// an optional key, a limit from either end), the errors of building one (docs/semantics.md 19,
/// Firebase JS `api/Reference_impl.ts` validation) and whether a child falls in its range
/// (docs/semantics.md 18). Without an order-by, children are ordered as the Realtime Database's
/// default (priority) index orders them: by priority, then key. Ember has no priorities (every
/// child's is null), so children come in key order and a bound (priority, key) compares null with
/// the priority, then the key: `start(.at, .null, key: "b")` starts at key "b".
///
///     let q = try TreeQuery().orderBy(.child(TreePath(parsing: "metrics/views"))).limit(100, .last)
///     q.contains(ChildEntry(key: "a", sortValue: .int(5)))
public struct TreeQuery: Hashable, Sendable, CustomStringConvertible {
    public enum LimitType: Hashable, Sendable { case first, last }
    /// How a bound was given: inclusive (startAt / endAt), exclusive (startAfter / endBefore), or equalTo.
    public enum BoundKind: Hashable, Sendable { case at, exclusive, equal }
    /// A start or end point as the caller gave it (converted to a comparison when executed).
    public struct Bound: Hashable, Sendable {
        public let kind: BoundKind
        public let value: TreeValue
        public let key: String?
        /// Keys equal by their bytes ("\u{E9}" and "e\u{301}" are two keys); values as the index
        /// orders them (1 and 1.0 are one bound).
        public static func == (a: Bound, b: Bound) -> Bool {
            a.kind == b.kind && a.key.map { x in b.key.map { equalUTF8(x, $0) } ?? false } ?? (b.key == nil)
                && a.value.indexRank == b.value.indexRank && TreeValue.compareIndexed(a.value, b.value) == 0
        }
        /// Consistent with `==`: the kind, the key's bytes and the value's rank (not its text,
        /// which differs for 1 and 1.0).
        public func hash(into h: inout Hasher) {
            h.combine(kind)
            h.combine(key.map { UTF8String($0) })
            h.combine(value.indexRank)
        }
    }

    public private(set) var orderBy: TreeIndex?
    public private(set) var start: Bound?
    public private(set) var end: Bound?
    public private(set) var limit: Int?
    public private(set) var limitType: LimitType = .first

    public init() {}

    /// The index children are ordered by (key when no order-by was given).
    public var index: TreeIndex { orderBy ?? .key }
    /// True for a plain location (no order-by, bounds or limit): it sees every child.
    public var isDefault: Bool { orderBy == nil && start == nil && end == nil && limit == nil }
    /// Whether children come in a window of a fixed size.
    public var isLimited: Bool { limit != nil }
    /// How many children a limited query's first window holds: 2 x limit (saturating; unlimited
    /// without a limit).
    public var windowSize: Int { limit.map { $0 > Int.max / 2 ? Int.max : 2 * $0 } ?? Int.max }
    public var hasRange: Bool { start != nil || end != nil }

    // MARK: building (each step validates as Firebase does)

    public func orderBy(_ index: TreeIndex, method: String? = nil) throws -> TreeQuery {
        let name = method ?? TreeQuery.methodName(index)
        if orderBy != nil { throw EmberError.invalidArgument("\(name): You can't combine multiple orderBy calls.") }
        if case .child(let p) = index { try TreeQuery.validateChildPath(p, name) }
        var q = self
        q.orderBy = index
        try q.validateBounds(name)
        return q
    }

    /// Parses and validates `orderByChild`'s path ("metrics/views"; "$key", "$value", "$priority"
    /// and "" are errors).
    public static func childIndex(_ path: String) throws -> TreeIndex {
        let name = "queryOrdered(byChild:)"
        switch path {
        case "$key": throw EmberError.invalidArgument("\(name): \"$key\" is invalid. Use queryOrderedByKey() instead.")
        case "$value": throw EmberError.invalidArgument("\(name): \"$value\" is invalid. Use queryOrderedByValue() instead.")
        case "$priority": throw EmberError.invalidArgument("\(name): \"$priority\" is invalid. Ember has no priorities; order by a child instead.")
        default: break
        }
        let p: TreePath
        do { p = try TreePath(parsing: path, context: "child path") } catch let e as EmberError {
            throw EmberError.invalidArgument("\(name): \(e.message)")
        }
        try validateChildPath(p, name)
        return .child(p)
    }

    static func validateChildPath(_ p: TreePath, _ name: String) throws {
        if p.isRoot { throw EmberError.invalidArgument("\(name): the child path must not be empty. Use queryOrderedByValue() to order by the children's own values.") }
    }

    static func methodName(_ i: TreeIndex) -> String {
        switch i {
        case .key: return "queryOrderedByKey()"
        case .value: return "queryOrderedByValue()"
        case .child: return "queryOrdered(byChild:)"
        }
    }

    public func limit(_ n: Int, _ type: LimitType) throws -> TreeQuery {
        let name = type == .first ? "queryLimited(toFirst:)" : "queryLimited(toLast:)"
        if limit != nil { throw EmberError.invalidArgument("\(name): Limit was already set (by another call to queryLimited(toFirst:) or queryLimited(toLast:)).") }
        if n <= 0 { throw EmberError.invalidArgument("\(name): the limit must be a positive integer, got \(n).") }
        var q = self
        q.limit = n
        q.limitType = type
        return q
    }

    public func start(_ kind: BoundKind, _ value: TreeValue, key: String?) throws -> TreeQuery {
        let name = kind == .at ? "queryStarting(atValue:)" : "queryStarting(afterValue:)"
        if start != nil { throw EmberError.invalidArgument("\(name): Starting point was already set (by another call to queryStarting(atValue:), queryStarting(afterValue:) or queryEqual(toValue:)).") }
        var q = self
        q.start = Bound(kind: kind, value: value, key: key)
        try q.validateBounds(name)
        return q
    }

    public func end(_ kind: BoundKind, _ value: TreeValue, key: String?) throws -> TreeQuery {
        let name = kind == .at ? "queryEnding(atValue:)" : "queryEnding(beforeValue:)"
        if end != nil { throw EmberError.invalidArgument("\(name): Ending point was already set (by another call to queryEnding(atValue:), queryEnding(beforeValue:) or queryEqual(toValue:)).") }
        var q = self
        q.end = Bound(kind: kind, value: value, key: key)
        try q.validateBounds(name)
        return q
    }

    public func equal(_ value: TreeValue, key: String?) throws -> TreeQuery {
        let name = "queryEqual(toValue:)"
        if start != nil { throw EmberError.invalidArgument("\(name): Starting point was already set (by another call to queryStarting(atValue:), queryStarting(afterValue:) or queryEqual(toValue:)).") }
        if end != nil { throw EmberError.invalidArgument("\(name): Ending point was already set (by another call to queryEnding(atValue:), queryEnding(beforeValue:) or queryEqual(toValue:)).") }
        var q = self
        q.start = Bound(kind: .equal, value: value, key: key)
        q.end = Bound(kind: .equal, value: value, key: key)
        try q.validateBounds(name)
        return q
    }

    /// Bounds against the index: key-ordered bounds are strings without a second key; other
    /// bounds are not objects; keys are valid keys.
    func validateBounds(_ name: String) throws {
        for b in [start, end].compactMap({ $0 }) {
            if let k = b.key { try TreeKey.validate(k, context: "\(name) child key") }
            if case .object = b.value {
                throw EmberError.invalidArgument("\(name): a bound cannot be an object; use null, a boolean, a number or a string.")
            }
            if orderBy == .key {
                guard case .string = b.value else {
                    throw EmberError.invalidArgument("\(name): When ordering by key, the value passed to queryStarting, queryEnding or queryEqual must be a string.")
                }
                if b.key != nil {
                    throw EmberError.invalidArgument("\(name): When ordering by key, you may only pass a value (no child key) to queryStarting, queryEnding or queryEqual.")
                }
            }
        }
    }

    /// The checks that wait for execution: bounds without an order-by are priorities (null, a
    /// number or a string), with an optional child key.
    public func validate() throws {
        guard orderBy == nil else { return }
        for b in [start, end].compactMap({ $0 }) {
            switch b.value {
            case .null, .int, .double, .string: break
            default:
                throw EmberError.invalidArgument("query: Without an order-by, queryStarting, queryEnding and queryEqual take a priority (null, a number or a string) and an optional child key; got \(b.value).")
            }
        }
    }

    // MARK: matching

    private enum KeyBound { case min, max, key(String) }

    /// Compares an entry with a bound: negative when the entry is below it.
    private func compare(_ e: ChildEntry, _ value: TreeValue, _ key: KeyBound) -> Int {
        if orderBy != .key {   // without an order-by: the priority (null for every child) first
            let c = TreeValue.compareIndexed(e.sortValue, value)
            if c != 0 { return c }
        }
        switch key {
        case .min: return 1
        case .max: return -1
        case .key(let k): return equalUTF8(e.key, k) ? 0 : TreeKey.compare(e.key, k)
        }
    }

    private func startPoint(_ b: Bound) -> (TreeValue, KeyBound, inclusive: Bool) {
        if orderBy == .key {
            if case .string(let s) = b.value { return (.null, .key(s), b.kind != .exclusive) }
            return (.null, .min, true)
        }
        switch (b.kind, b.key) {
        case (.exclusive, nil): return (b.value, .max, true)
        case (.exclusive, let k?): return (b.value, .key(k), false)
        case (_, nil): return (b.value, .min, true)
        case (_, let k?): return (b.value, .key(k), true)
        }
    }

    private func endPoint(_ b: Bound) -> (TreeValue, KeyBound, inclusive: Bool) {
        if orderBy == .key {
            if case .string(let s) = b.value { return (.null, .key(s), b.kind != .exclusive) }
            return (.null, .max, true)
        }
        switch (b.kind, b.key) {
        case (.exclusive, nil): return (b.value, .min, true)     // endBefore(v): before every child with v
        case (.exclusive, let k?): return (b.value, .key(k), false)
        case (_, nil): return (b.value, .max, true)
        case (_, let k?): return (b.value, .key(k), true)
        }
    }

    /// Whether `e` lies between the start and end points.
    public func contains(_ e: ChildEntry) -> Bool {
        if let s = start {
            let (v, k, incl) = startPoint(s)
            let c = compare(e, v, k)
            if c < 0 || (c == 0 && !incl) { return false }
        }
        if let en = end {
            let (v, k, incl) = endPoint(en)
            let c = compare(e, v, k)
            if c > 0 || (c == 0 && !incl) { return false }
        }
        return true
    }

    /// Text that differs for any two queries that differ: keys, path segments and string values
    /// enter with their UTF-8 length, numbers by their bits (so 1 and 1.0 give two texts of one
    /// query, which is harmless where it names a view). `TreeView.id` makes it ASCII.
    public var identity: String {
        if isDefault { return "default" }
        func value(_ v: TreeValue) -> String {
            switch v {
            case .null: return "n"
            case .bool(let b): return b ? "t" : "f"
            case .int(let i): return "i\(i)"
            case .double(let d): return "d\(d.bitPattern)"
            case .string(let s): return "s" + lengthPrefixedUTF8(s)
            case .object: return "o"
            }
        }
        var s: String
        switch index {
        case .key: s = "i=key"
        case .value: s = "i=value"
        case .child(let p): s = "i=child(" + p.segments.map(lengthPrefixedUTF8).joined(separator: "/") + ")"
        }
        func b(_ x: Bound) -> String { "\(x.kind):\(value(x.value))" + (x.key.map { ",k=" + lengthPrefixedUTF8($0) } ?? "") }
        if let st = start { s += ";s=\(b(st))" }
        if let en = end { s += ";e=\(b(en))" }
        if let l = limit { s += ";l=\(limitType == .first ? "f" : "l")\(l)" }
        return s
    }

    /// The query for people ("default" for a plain location).
    public var description: String {
        if isDefault { return "default" }
        var s = "i=\(index)"
        func b(_ x: Bound) -> String { "\(x.kind):\(x.value)\(x.key.map { ",k=\($0)" } ?? "")" }
        if let st = start { s += ";s=\(b(st))" }
        if let en = end { s += ";e=\(b(en))" }
        if let l = limit { s += ";l=\(limitType == .first ? "f" : "l")\(l)" }
        return s
    }
}

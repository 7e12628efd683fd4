import EmberModel

/// Responsible for: what a `list` rule knows of the query it decides: `request.query` (limit,
/// offset, order) and what the query's filters say of each field. Firestore allows a query
/// only when its `list` rule holds for every document the query could return, without reading
/// them. Ember decides that by evaluating the rule once per way the filter can match (its
/// disjunctive normal form; an `in` or `array-contains-any` is one way per value), with
/// `resource.data` holding only what that way says: `==` pins a field to a value, `<` `<=` `>`
/// `>=` bound it, `array-contains` says what it holds (FieldBounds). A rule that reads a field
/// the query leaves open, or asks what the query does not decide, fails to evaluate and so
/// denies.
///
///     // where owner == "alice", limit 5
///     RulesQuery(filters: [f], limit: 5).alternatives   // [[owner: .pinned("alice")]]
public struct RulesQuery: Sendable {
    /// The most alternatives a query is evaluated for; a filter with more is denied.
    public static let maxAlternatives = 100

    /// What one way of matching says of one field.
    public enum Knowledge: Sendable {
        case pinned(Value)
        case bounded(FieldBounds)
    }
    public typealias Way = [FieldPath: Knowledge]

    public var limit: Int?
    public var offset: Int
    /// The ordered fields, as dotted paths, with their direction.
    public var orderBy: [(field: String, descending: Bool)]
    /// One entry per way the filter can match, or nil when there are more than `maxAlternatives`.
    public var alternatives: [Way]?

    public init(filters: [Filter] = [], limit: Int? = nil, offset: Int = 0, orderBy: [(field: String, descending: Bool)] = []) {
        self.limit = limit
        self.offset = offset
        self.orderBy = orderBy
        alternatives = RulesQuery.ways(.composite(CompositeFilter(op: .and, filters: filters)))
    }

    /// The disjunctive normal form of `filter`, each conjunction kept as what it says per field.
    static func ways(_ filter: Filter) -> [Way]? {
        switch filter {
        case .field(let f):
            let bound = { (v: Value) in FieldBounds.End(value: RuleValue(v), inclusive: f.op == .lessThanOrEqual || f.op == .greaterThanOrEqual) }
            switch f.op {
            case .equal: return [[f.field: .pinned(f.value)]]
            case .in, .arrayContainsAny:
                guard case .array(let values) = f.value, values.count <= maxAlternatives else { return nil }
                return values.map { [f.field: f.op == .in ? .pinned($0) : .bounded(FieldBounds(contains: [RuleValue($0)]))] }
            case .lessThan, .lessThanOrEqual: return [[f.field: .bounded(FieldBounds(upper: bound(f.value)))]]
            case .greaterThan, .greaterThanOrEqual: return [[f.field: .bounded(FieldBounds(lower: bound(f.value)))]]
            case .arrayContains: return [[f.field: .bounded(FieldBounds(contains: [RuleValue(f.value)]))]]
            case .notEqual, .notIn: return [[:]]
            }
        case .composite(let c):
            var out: [Way] = c.op == .and ? [[:]] : []
            for sub in c.filters {
                guard let inner = ways(sub) else { return nil }
                if c.op == .or {
                    out += inner
                } else {
                    out = out.flatMap { a in inner.compactMap { b in both(a, b) } }
                }
                if out.count > maxAlternatives { return nil }
            }
            return out
        }
    }

    /// Two conjuncts at once; nil when they cannot both hold (one field pinned to two values).
    private static func both(_ a: Way, _ b: Way) -> Way? {
        var out = a
        for (field, k) in b {
            switch (out[field], k) {
            case (nil, _): out[field] = k
            case (.pinned(let x)?, .pinned(let y)): if Value.compare(x, y) != 0 { return nil }
            case (.pinned?, .bounded): break  // the pin says more
            case (.bounded?, .pinned): out[field] = k
            case (.bounded(let x)?, .bounded(let y)): out[field] = .bounded(x.intersecting(y))
            }
        }
        return out
    }

    /// `request.query`.
    var value: RuleValue {
        var orders: [RuleValue] = []
        for o in orderBy { orders.append(.map(["field": .string(o.field), "direction": .string(o.descending ? "DESC" : "ASC")])) }
        return .map(["limit": limit.map { .int(Int64($0)) } ?? .null, "offset": .int(Int64(offset)), "orderBy": .list(orders)])
    }

    /// `resource` for one way: `{data: <what it says of each field, nested by path>}`.
    static func resource(_ way: Way, database: String) -> RuleValue {
        var root: RuleMap = [:]
        for (path, k) in way where path != .documentId {
            let v: RuleValue
            switch k {
            case .pinned(let x): v = RuleValue(x, database: database)
            case .bounded(let b): v = .bounded(b)
            }
            root = setting(root, path.segments[...], v)
        }
        return .map(["data": .partialMap(root)])
    }

    private static func setting(_ m: RuleMap, _ path: ArraySlice<String>, _ v: RuleValue) -> RuleMap {
        var copy = m
        guard let first = path.first.map({ UTF8String($0) }) else { return copy }
        if path.count == 1 {
            copy[first] = v
        } else {
            var inner: RuleMap = [:]
            if case .partialMap(let i)? = m[first] { inner = i }
            copy[first] = .partialMap(setting(inner, path.dropFirst(), v))
        }
        return copy
    }
}

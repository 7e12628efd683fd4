import EmberModel

/// Responsible for: the values an expression evaluates to: Firestore values plus the rules-only
/// kinds (paths, map diffs), their type names for `is`, and conversion from EmberModel values.
///
///     RuleValue(.map(MapValue(["n": .int(1)])))   // .map(["n": .int(1)])
/// A rules map: keys told apart by their UTF-8 bytes ("\u{E9}" and "e\u{301}" are two fields, as
/// in the documents; a `[String: RuleValue]` would merge them).
public typealias RuleMap = [UTF8String: RuleValue]

public indirect enum RuleValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case int(Int64)
    case float(Double)
    case string(String)
    case bytes([UInt8])
    case timestamp(Timestamp)
    case latlng(Double, Double)
    case list([RuleValue])
    case map(RuleMap)
    /// A path such as `/databases/(default)/documents/users/alice`, as its segments.
    case path([String])
    /// `a.diff(b)`: the two maps compared, for `affectedKeys()` and friends.
    case mapDiff(MapDiff)
    /// `resource.data` of a `list` rule: only the fields the query constrains. A field is read
    /// as usual (one the query leaves open is an error); anything else done with the map
    /// (equality, `keys()`, `in`, `is`) is an error, since the documents hold more.
    case partialMap(RuleMap)
    /// A field a query constrains without pinning it (see FieldBounds).
    case bounded(FieldBounds)

    /// True for the query-time stand-ins above, anywhere inside.
    var isPartial: Bool {
        switch self {
        case .partialMap, .bounded: return true
        case .list(let l): return l.contains { $0.isPartial }
        case .map(let m): return m.values.contains { $0.isPartial }
        default: return false
        }
    }

    /// An EmberModel value as a rules value (references become paths under `database`).
    public init(_ value: Value, database: String = "(default)") {
        switch value {
        case .null: self = .null
        case .bool(let b): self = .bool(b)
        case .int(let i): self = .int(i)
        case .double(let d): self = .float(d)
        case .timestamp(let t): self = .timestamp(t)
        case .string(let s): self = .string(s)
        case .bytes(let b): self = .bytes(b)
        case .reference(let k): self = .path(["databases", database, "documents"] + k.path.segments)
        case .geoPoint(let g): self = .latlng(g.latitude, g.longitude)
        case .array(let a): self = .list(a.map { RuleValue($0, database: database) })
        case .map(let m): self = .map(RuleValue.map(m, database: database))
        }
    }

    public static func map(_ m: MapValue, database: String = "(default)") -> RuleMap {
        var out: RuleMap = [:]
        for (k, v) in m.entries { out[UTF8String(k)] = RuleValue(v, database: database) }
        return out
    }

    /// The names `is` accepts for this value (`number` for ints and floats).
    public func isType(_ name: String) -> Bool {
        switch (self, name) {
        case (.null, "null"), (.bool, "bool"), (.int, "int"), (.int, "number"), (.float, "float"),
             (.float, "number"), (.string, "string"), (.bytes, "bytes"), (.timestamp, "timestamp"),
             (.latlng, "latlng"), (.list, "list"), (.map, "map"), (.path, "path"), (.mapDiff, "map_diff"):
            return true
        default:
            return false
        }
    }

    public var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "bool"
        case .int: return "int"
        case .float: return "float"
        case .string: return "string"
        case .bytes: return "bytes"
        case .timestamp: return "timestamp"
        case .latlng: return "latlng"
        case .list: return "list"
        case .map: return "map"
        case .path: return "path"
        case .mapDiff: return "map_diff"
        case .partialMap: return "map"
        case .bounded: return "value"
        }
    }

    /// Equality as `==` sees it: ints and floats compare by number, other kinds must match.
    public static func == (a: RuleValue, b: RuleValue) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case (.bool(let x), .bool(let y)): return x == y
        case (.int(let x), .int(let y)): return x == y
        case (.float(let x), .float(let y)): return x == y
        case (.int(let x), .float(let y)): return Double(x) == y
        case (.float(let x), .int(let y)): return x == Double(y)
        case (.string(let x), .string(let y)): return equalUTF8(x, y)   // bytes, as Firestore
        case (.bytes(let x), .bytes(let y)): return x == y
        case (.timestamp(let x), .timestamp(let y)): return x == y
        case (.latlng(let a1, let a2), .latlng(let b1, let b2)): return a1 == b1 && a2 == b2
        case (.list(let x), .list(let y)): return x == y
        case (.map(let x), .map(let y)): return x == y
        case (.path(let x), .path(let y)): return x.count == y.count && zip(x, y).allSatisfy { equalUTF8($0, $1) }
        case (.mapDiff(let x), .mapDiff(let y)): return x == y
        case (.partialMap(let x), .partialMap(let y)): return x == y
        case (.bounded(let x), .bounded(let y)): return x == y
        default: return false
        }
    }
}

/// Responsible for: `request.resource.data.diff(resource.data)`: which keys were added, removed,
/// changed or left alone between two maps.
public struct MapDiff: Sendable, Equatable {
    public var new: RuleMap
    public var old: RuleMap

    // Keys sorted by their UTF-8 bytes.
    public var addedKeys: [String] { new.keys.filter { old[$0] == nil }.sorted().map(\.s) }
    public var removedKeys: [String] { old.keys.filter { new[$0] == nil }.sorted().map(\.s) }
    public var changedKeys: [String] { new.keys.filter { k in old[k].map { $0 != new[k]! } ?? false }.sorted().map(\.s) }
    public var unchangedKeys: [String] { new.keys.filter { k in old[k].map { $0 == new[k]! } ?? false }.sorted().map(\.s) }
    public var affectedKeys: [String] { sortedDistinctUTF8(addedKeys + removedKeys + changedKeys) }
}

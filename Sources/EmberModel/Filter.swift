/// Responsible for: query filters (field comparisons and AND/OR composites) and whether a
/// document matches them, by docs/semantics.md 2 and 4, and where those leave it to the Firestore
/// emulator, as it answers (numeric equality for `in`/`array-contains`, NaN in no range).
///
///     let f = Filter.field(FieldFilter(field: try FieldPath(parsing: "state"), op: .equal, value: .string("CA")))
///     f.matches(doc)
public indirect enum Filter: Sendable {
    case field(FieldFilter)
    case composite(CompositeFilter)

    public func matches(_ doc: Document) -> Bool {
        switch self {
        case .field(let f): return f.matches(doc)
        case .composite(let c): return c.matches(doc)
        }
    }

    /// The disjunctions this filter becomes in disjunctive normal form: an `in` or
    /// `array-contains-any` of n values is n, an AND the product, an OR the sum (saturating past
    /// a million), as Firestore counts them against its limit of 30; repeated values count once.
    /// Repeated operand values are one disjunction (the emulator accepts `in` lists of 33
    /// values with duplicates where 30 distinct ones fit): values equal in Firestore's order
    /// (1 and 1.0 too) count once.
    static func distinctCount(_ values: [Value]) -> Int {
        let sorted = values.sorted { Value.compare($0, $1) < 0 }
        var n = 0
        for (i, v) in sorted.enumerated() where i == 0 || Value.compare(sorted[i - 1], v) != 0 { n += 1 }
        return n
    }

    public var disjunctionCount: Int {
        switch self {
        case .field(let f):
            if f.op == .in || f.op == .arrayContainsAny, case .array(let a) = f.value { return max(1, Filter.distinctCount(a)) }
            return 1
        case .composite(let c):
            switch c.op {
            case .and: return c.filters.reduce(1) { Query.saturatedProduct($0, $1.disjunctionCount) }
            case .or: return min(1_000_001, c.filters.reduce(0) { $0 + $1.disjunctionCount })
            }
        }
    }

    /// True when an OR (of more than one filter) is inside.
    public var hasOr: Bool {
        switch self {
        case .field: return false
        case .composite(let c): return (c.op == .or && c.filters.count > 1) || c.filters.contains { $0.hasOr }
        }
    }

    /// Every field filter inside, flattened.
    public var fieldFilters: [FieldFilter] {
        switch self {
        case .field(let f): return [f]
        case .composite(let c): return c.filters.flatMap { $0.fieldFilters }
        }
    }
}

/// Responsible for: the comparison operators Firestore supports, with their wire names.
public enum FilterOperator: String, Sendable, CaseIterable {
    case lessThan = "<"
    case lessThanOrEqual = "<="
    case equal = "=="
    case notEqual = "!="
    case greaterThan = ">"
    case greaterThanOrEqual = ">="
    case arrayContains = "array-contains"
    case arrayContainsAny = "array-contains-any"
    case `in` = "in"
    case notIn = "not-in"

    /// Parses "==", "array-contains", also "array_contains" and "not_in" as google-cloud-firestore accepts.
    public init(parsing s: String) throws {
        if let op = FilterOperator(rawValue: s) { self = op; return }
        if let op = FilterOperator(rawValue: s.replacingUnderscores()) { self = op; return }
        throw EmberError.invalidArgument("Invalid operator '\(s)': use one of \(FilterOperator.allCases.map { $0.rawValue }.joined(separator: ", "))")
    }

    public var isInequality: Bool {
        switch self {
        case .lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual, .notEqual, .notIn: return true
        default: return false
        }
    }

    public var takesArray: Bool { self == .in || self == .notIn || self == .arrayContainsAny }
}

extension String {
    func replacingUnderscores() -> String { String(map { $0 == "_" ? "-" : $0 }) }
}

/// Responsible for: one `field op value` comparison.
public struct FieldFilter: Sendable {
    public let field: FieldPath
    public let op: FilterOperator
    public let value: Value

    public init(field: FieldPath, op: FilterOperator, value: Value) {
        self.field = field
        self.op = op
        self.value = value
    }

    public func matches(_ doc: Document) -> Bool { matches(fieldValue: doc.field(field)) }

    /// Whether a document whose `field` holds `fieldValue` (nil: absent) passes this filter.
    public func matches(fieldValue: Value?) -> Bool {
        guard let other = fieldValue else { return false }
        switch op {
        case .notEqual:
            if other.isNull { return false }
            return !(other.typeOrder == value.typeOrder && Value.compare(other, value) == 0)
        case .arrayContains:
            guard case .array(let a) = other else { return false }
            return a.contains { FieldFilter.operandEquals($0, value) }
        case .arrayContainsAny:
            guard case .array(let a) = other, case .array(let wanted) = value else { return false }
            return a.contains { e in wanted.contains { FieldFilter.operandEquals(e, $0) } }
        case .in:
            guard case .array(let wanted) = value else { return false }
            return wanted.contains { FieldFilter.operandEquals(other, $0) }
        case .notIn:
            guard case .array(let excluded) = value else { return false }
            if excluded.contains(.null) || other.isNull { return false }
            return !excluded.contains { FieldFilter.operandEquals(other, $0) }
        default:
            guard other.typeOrder == value.typeOrder else { return false }
            // NaN is in no range (emulator: `< 5` and `>= -Infinity` skip NaN); `== NaN` is IS_NAN.
            if other.isNaN && op != .equal { return false }
            let c = Value.compare(other, value)
            switch op {
            case .lessThan: return c < 0
            case .lessThanOrEqual: return c <= 0
            case .equal: return c == 0
            case .greaterThan: return c > 0
            case .greaterThanOrEqual: return c >= 0
            default: return false
            }
        }
    }

    /// Equality for `in`, `not-in`, `array-contains` and `array-contains-any`, as the Firestore
    /// emulator applies it (checked by EmulatorDifferentialTests): numbers compare numerically
    /// (1 matches 1.0, -0.0 matches 0), but a null or NaN at the top level equals nothing, so
    /// `in [NaN]` and `in [null]` match nothing and `not-in [NaN]` keeps NaN. Inside arrays and
    /// maps the values compare by the total order (`[NaN]` equals `[NaN]`).
    static func operandEquals(_ a: Value, _ b: Value) -> Bool {
        if a.isNull || a.isNaN || b.isNull || b.isNaN { return false }
        return Value.compare(a, b) == 0
    }
}

/// Responsible for: an AND or OR of filters.
public struct CompositeFilter: Sendable {
    public enum Op: String, Sendable { case and = "AND", or = "OR" }
    public let op: Op
    public let filters: [Filter]

    public init(op: Op, filters: [Filter]) {
        self.op = op
        self.filters = filters
    }

    public func matches(_ doc: Document) -> Bool {
        switch op {
        case .and: return filters.allSatisfy { $0.matches(doc) }
        case .or: return filters.contains { $0.matches(doc) }
        }
    }
}

import EmberFirestoreProto
import EmberModel
import EmberWire

/// Responsible for: a query's where clause as the Firestore backend reads it: a tree of
/// comparisons (atoms) under AND/OR, read from the wire with the backend's messages (unknown
/// operators, an empty OR, `IN`/`NOT_IN`/`ARRAY_CONTAINS_ANY` operands), and turned into Ember's
/// Filter. The counts the backend limits are computed on its simplified form (WireFilterForm+Counts).
///
///     let form = try WireFilterForm.read(sq.where, codec)   // nil: no constraint (an empty AND)
///     q = try q.filter(form!.simplified!.filter)
indirect enum WireFilterForm: Sendable {
    case atom(WireFilterAtom)
    case and([WireFilterForm])
    case or([WireFilterForm])

    static let maxDepth = 100

    /// Reads a wire filter; checks are made in the order the filters come, depth first.
    static func read(_ f: StructuredQuery.Filter, _ codec: WireCodec, depth: Int = 0) throws -> WireFilterForm {
        guard depth < maxDepth else { throw EmberError.invalidArgument("Filters are nested too deeply") }
        switch f.filterType {
        case .compositeFilter(let c)?:
            let children = try c.filters.map { try read($0, codec, depth: depth + 1) }
            switch c.op {
            case .and: return .and(children)
            case .or:
                guard !children.isEmpty else { throw EmberError.invalidArgument("Composite filter must have at least one sub-filter.") }
                return .or(children)
            default: throw EmberError.invalidArgument("Unsupported CompositeFilter operator.")
            }
        case .fieldFilter(let ff)?:
            guard let op = WireFilterAtom.Op(ff.op) else { throw EmberError.invalidArgument("Unknown FieldFilter operator.") }
            let field = try WirePropertyPath.parse(ff.field.fieldPath)
            if let max = op.maxValues {
                guard case .arrayValue(let list)? = ff.value.valueType else {
                    throw EmberError.invalidArgument("'\(op.rawValue)' requires an ArrayValue.")
                }
                guard !list.values.isEmpty else { throw EmberError.invalidArgument("'\(op.rawValue)' requires an non-empty ArrayValue.") }
                guard list.values.count <= max else { throw EmberError.invalidArgument("'\(op.rawValue)' supports up to \(max) comparison values.") }
            }
            // Operands are not document data: nested arrays, deep maps and empty keys are
            // accepted (the emulator does; they match nothing a document can hold).
            return .atom(WireFilterAtom(field: field, op: op, value: try codec.value(ff.value)))
        case .unaryFilter(let u)?:
            let op: WireFilterAtom.Op
            switch u.op {
            case .isNan: op = .isNan
            case .isNull: op = .isNull
            case .isNotNan: op = .isNotNan
            case .isNotNull: op = .isNotNull
            default: throw EmberError.invalidArgument("Unknown UnaryFilter operator.")
            }
            guard case .field(let ref)? = u.operandType else { throw EmberError.invalidArgument("UnaryFilter needs a field") }
            return .atom(WireFilterAtom(field: try WirePropertyPath.parse(ref.fieldPath), op: op, value: nil))
        case nil:
            throw EmberError.invalidArgument("Filter has no filter_type set")
        }
    }

    /// Every atom, in the order the query gives them.
    var atoms: [WireFilterAtom] {
        switch self {
        case .atom(let a): return [a]
        case .and(let c), .or(let c): return c.flatMap { $0.atoms }
        }
    }

    /// Ember's filter for this form.
    var filter: Filter {
        switch self {
        case .atom(let a): return .field(a.fieldFilter)
        case .and(let c): return .composite(CompositeFilter(op: .and, filters: c.map { $0.filter }))
        case .or(let c): return .composite(CompositeFilter(op: .or, filters: c.map { $0.filter }))
        }
    }
}

/// Responsible for: one comparison of a where clause (a field filter or a unary filter), with
/// the identity the backend's normalization compares it by: the field, the operator and the exact
/// operand (an integer is not its double, -0.0 is not 0.0, NaN is NaN); `IN`,
/// `ARRAY_CONTAINS_ANY` and `NOT_IN` lists keep each exact value once.
struct WireFilterAtom: Sendable {
    enum Op: String, Sendable {
        case lessThan = "LESS_THAN", lessThanOrEqual = "LESS_THAN_OR_EQUAL", greaterThan = "GREATER_THAN"
        case greaterThanOrEqual = "GREATER_THAN_OR_EQUAL", equal = "EQUAL", notEqual = "NOT_EQUAL"
        case arrayContains = "ARRAY_CONTAINS", `in` = "IN", arrayContainsAny = "ARRAY_CONTAINS_ANY", notIn = "NOT_IN"
        case isNan = "IS_NAN", isNull = "IS_NULL", isNotNan = "IS_NOT_NAN", isNotNull = "IS_NOT_NULL"

        init?(_ wire: StructuredQuery.FieldFilter.Operator) {
            switch wire {
            case .lessThan: self = .lessThan
            case .lessThanOrEqual: self = .lessThanOrEqual
            case .greaterThan: self = .greaterThan
            case .greaterThanOrEqual: self = .greaterThanOrEqual
            case .equal: self = .equal
            case .notEqual: self = .notEqual
            case .arrayContains: self = .arrayContains
            case .in: self = .in
            case .arrayContainsAny: self = .arrayContainsAny
            case .notIn: self = .notIn
            default: return nil
            }
        }

        /// The most operand values a list operator takes.
        var maxValues: Int? {
            switch self {
            case .in, .arrayContainsAny: return 30
            case .notIn: return 10
            default: return nil
            }
        }

        /// Operators that exclude rather than select (the backend allows one per query).
        var isNegation: Bool { self == .notEqual || self == .notIn || self == .isNotNan || self == .isNotNull }

        var isInequality: Bool {
            switch self {
            case .lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual, .notEqual, .notIn, .isNotNan, .isNotNull: return true
            default: return false
            }
        }
    }

    let field: FieldPath
    let op: Op
    /// The operand (a list for IN, NOT_IN and ARRAY_CONTAINS_ANY); nil for a unary filter.
    let value: Value?

    init(field: FieldPath, op: Op, value: Value?) {
        self.field = field
        self.op = op
        if op.maxValues != nil, case .array(let list)? = value {
            var seen = Set<UTF8String>()   // by bytes: equal Swift Strings may be two operands
            self.value = .array(list.filter { seen.insert(UTF8String(WireFilterAtom.exactKey($0))).inserted })
        } else {
            self.value = value
        }
    }

    /// The values of a list operator, else the one operand.
    var operands: [Value] {
        if op.maxValues != nil, case .array(let list)? = value { return list }
        return value.map { [$0] } ?? []
    }

    var identity: String { Self.identity(field, op, value.map(WireFilterAtom.exactKey) ?? "") }

    /// ASCII (`asciiEscapedUTF8`), the field with its length: equal only for the same field bytes,
    /// operator and operand, also as a Swift String key ("\u{E9}" and "e\u{301}" are two fields).
    static func identity(_ field: FieldPath, _ op: Op, _ operand: String) -> String {
        asciiEscapedUTF8(lengthPrefixedUTF8(field.canonical) + "|\(op.rawValue)|\(operand)")
    }

    var fieldFilter: FieldFilter {
        switch op {
        case .isNan: return FieldFilter(field: field, op: .equal, value: .double(.nan))
        case .isNull: return FieldFilter(field: field, op: .equal, value: .null)
        case .isNotNan: return FieldFilter(field: field, op: .notEqual, value: .double(.nan))
        case .isNotNull: return FieldFilter(field: field, op: .notEqual, value: .null)
        default: return FieldFilter(field: field, op: Self.modelOps[op]!, value: value ?? .null)
        }
    }

    private static let modelOps: [Op: FilterOperator] = [
        .lessThan: .lessThan, .lessThanOrEqual: .lessThanOrEqual, .greaterThan: .greaterThan,
        .greaterThanOrEqual: .greaterThanOrEqual, .equal: .equal, .notEqual: .notEqual,
        .arrayContains: .arrayContains, .in: .in, .arrayContainsAny: .arrayContainsAny, .notIn: .notIn,
    ]

    /// A text equal for exactly equal operands: types tagged, doubles by bits (one NaN).
    static func exactKey(_ v: Value) -> String {
        switch v {
        case .double(let d) where d.isNaN: return "dNaN"
        case .array(let a): return "[" + a.map(exactKey).joined(separator: ",") + "]"
        case .map(let m): return "{" + m.entries.map { lengthPrefixedUTF8($0.key) + "=" + exactKey($0.value) }.joined(separator: ",") + "}"
        default: return v.canonicalString
        }
    }
}

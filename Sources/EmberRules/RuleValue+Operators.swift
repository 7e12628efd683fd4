import EmberModel

/// Responsible for: the binary operators on rules values: `==` `!=` (never an error), the
/// orderings (numbers, strings, timestamps, bytes; an error across kinds), `in` (lists and map
/// keys), and arithmetic (ints with overflow checks, floats, string and list `+`).
extension RuleValue {
    static func apply(_ op: BinaryOp, _ a: RuleValue, _ b: RuleValue) throws -> RuleValue {
        if a.isPartial || b.isPartial { return try applyPartial(op, a, b) }
        switch op {
        case .eq: return .bool(a == b)
        case .ne: return .bool(a != b)
        case .lt, .le, .gt, .ge:
            let c = try compare(a, b)
            switch op {
            case .lt: return .bool(c < 0)
            case .le: return .bool(c <= 0)
            case .gt: return .bool(c > 0)
            default: return .bool(c >= 0)
            }
        case .in:
            switch b {
            case .list(let l): return .bool(l.contains(a))
            case .map(let m):
                guard case .string(let k) = a else { return .bool(false) }
                return .bool(m[UTF8String(k)] != nil)
            default: throw RulesEvaluationError("'in' needs a list or a map on its right, got \(b.typeName)")
            }
        case .add, .sub, .mul, .div, .mod: return try arithmetic(op, a, b)
        case .and, .or: throw RulesEvaluationError("'\(op.rawValue)' is evaluated by the evaluator")
        }
    }

    /// An operator with a query-time stand-in on a side (a `list` rule): decided when the
    /// query decides it for every document it could return, an error otherwise.
    private static func applyPartial(_ op: BinaryOp, _ a: RuleValue, _ b: RuleValue) throws -> RuleValue {
        switch (op, a, b) {
        case (.in, _, .bounded(let f)) where !a.isPartial && f.contains.contains(a): return .bool(true)
        case (.eq, .bounded(let f), _), (.ne, .bounded(let f), _), (.lt, .bounded(let f), _), (.le, .bounded(let f), _),
             (.gt, .bounded(let f), _), (.ge, .bounded(let f), _):
            if !b.isPartial { return .bool(try f.compare(op, b)) }
        case (.eq, _, .bounded(let f)), (.ne, _, .bounded(let f)), (.lt, _, .bounded(let f)), (.le, _, .bounded(let f)),
             (.gt, _, .bounded(let f)), (.ge, _, .bounded(let f)):
            if !a.isPartial { return .bool(try f.compare(op.flipped, a)) }
        default:
            break
        }
        throw RulesEvaluationError("the query does not decide '\(op.rawValue)' for every document it could return")
    }

    /// -1, 0 or 1; an error when the two cannot be ordered.
    static func compare(_ a: RuleValue, _ b: RuleValue) throws -> Int {
        func sign<T: Comparable>(_ x: T, _ y: T) -> Int { x < y ? -1 : (x > y ? 1 : 0) }
        switch (a, b) {
        case (.int(let x), .int(let y)): return sign(x, y)
        case (.float(let x), .float(let y)): return sign(x, y)
        case (.int(let x), .float(let y)): return sign(Double(x), y)
        case (.float(let x), .int(let y)): return sign(x, Double(y))
        case (.string(let x), .string(let y)):
            return compareUTF8(x, y)   // bytes: Swift's == would call canonically equivalent strings equal
        case (.timestamp(let x), .timestamp(let y)): return sign(x.micros, y.micros)
        case (.bytes(let x), .bytes(let y)): return x == y ? 0 : (x.lexicographicallyPrecedes(y) ? -1 : 1)
        default: throw RulesEvaluationError("cannot compare \(a.typeName) with \(b.typeName)")
        }
    }

    private static func arithmetic(_ op: BinaryOp, _ a: RuleValue, _ b: RuleValue) throws -> RuleValue {
        switch (a, b) {
        case (.int(let x), .int(let y)):
            let r: (Int64, Bool)
            switch op {
            case .add: r = x.addingReportingOverflow(y)
            case .sub: r = x.subtractingReportingOverflow(y)
            case .mul: r = x.multipliedReportingOverflow(by: y)
            case .div:
                guard y != 0 else { throw RulesEvaluationError("division by zero") }
                r = x.dividedReportingOverflow(by: y)
            default:
                guard y != 0 else { throw RulesEvaluationError("modulo by zero") }
                r = x.remainderReportingOverflow(dividingBy: y)
            }
            guard !r.1 else { throw RulesEvaluationError("integer overflow") }
            return .int(r.0)
        case (.int, .float), (.float, .int), (.float, .float):
            let x = a.number!, y = b.number!
            switch op {
            case .add: return .float(x + y)
            case .sub: return .float(x - y)
            case .mul: return .float(x * y)
            case .div: return .float(x / y)
            default: return .float(x.truncatingRemainder(dividingBy: y))
            }
        case (.string(let x), .string(let y)) where op == .add: return .string(x + y)
        case (.list(let x), .list(let y)) where op == .add: return .list(x + y)
        default:
            throw RulesEvaluationError("cannot apply '\(op.rawValue)' to \(a.typeName) and \(b.typeName)")
        }
    }

    var number: Double? {
        switch self {
        case .int(let i): return Double(i)
        case .float(let d): return d
        default: return nil
        }
    }
}

/// Responsible for: what a query says of a field it does not pin to one value, for a `list`
/// rule: a range (each end inclusive or not; Firestore's range filters match only values of
/// their bound's kind) and values an array field holds (`array-contains`). A rule's comparison
/// with it is true or false only when that holds for every value the range allows, and an
/// evaluation error (so a denial) otherwise; `x in field` is true when the query says the
/// field holds `x`.
///
///     // where points < 50: the rule `resource.data.points < 100` holds for every result
///     FieldBounds(upper: .init(value: .int(50), inclusive: false)).compare(.lt, .int(100))   // true
public struct FieldBounds: Sendable, Equatable {
    public struct End: Sendable, Equatable {
        public var value: RuleValue
        public var inclusive: Bool
        public init(value: RuleValue, inclusive: Bool) {
            self.value = value
            self.inclusive = inclusive
        }
    }

    public var lower: End?
    public var upper: End?
    public var contains: [RuleValue]

    public init(lower: End? = nil, upper: End? = nil, contains: [RuleValue] = []) {
        self.lower = lower
        self.upper = upper
        self.contains = contains
    }

    /// Both constraints at once: the tighter end of each side, every contained value.
    func intersecting(_ o: FieldBounds) -> FieldBounds {
        func tighter(_ a: End?, _ b: End?, lowerEnd: Bool) -> End? {
            guard let a else { return b }
            guard let b else { return a }
            guard let c = try? RuleValue.compare(a.value, b.value) else { return a }
            if c == 0 { return a.inclusive ? b : a }
            return (c > 0) == lowerEnd ? a : b
        }
        return FieldBounds(lower: tighter(lower, o.lower, lowerEnd: true), upper: tighter(upper, o.upper, lowerEnd: false),
                           contains: contains + o.contains)
    }

    /// `field op x` for every value in the range: true, false, or an error when it depends.
    func compare(_ op: BinaryOp, _ x: RuleValue) throws -> Bool {
        switch op {
        case .lt:
            if try allBelow(x, orEqual: false) { return true }
            if try allAbove(x, orEqual: true) { return false }
        case .le:
            if try allBelow(x, orEqual: true) { return true }
            if try allAbove(x, orEqual: false) { return false }
        case .gt:
            if try allAbove(x, orEqual: false) { return true }
            if try allBelow(x, orEqual: true) { return false }
        case .ge:
            if try allAbove(x, orEqual: true) { return true }
            if try allBelow(x, orEqual: false) { return false }
        case .eq, .ne:
            // Equal to nothing outside the range.
            if try allBelow(x, orEqual: false) || allAbove(x, orEqual: false) { return op == .ne }
        default:
            break
        }
        throw RulesEvaluationError("the query does not decide '\(op.rawValue)' for every document it could return")
    }

    /// Every value is < x (or <= x).
    private func allBelow(_ x: RuleValue, orEqual: Bool) throws -> Bool {
        guard let upper else { return false }
        let c = try RuleValue.compare(upper.value, x)
        return c < 0 || (c == 0 && (orEqual || !upper.inclusive))
    }

    /// Every value is > x (or >= x).
    private func allAbove(_ x: RuleValue, orEqual: Bool) throws -> Bool {
        guard let lower else { return false }
        let c = try RuleValue.compare(lower.value, x)
        return c > 0 || (c == 0 && (orEqual || !lower.inclusive))
    }
}

extension BinaryOp {
    /// `a op b` as `b op' a`.
    var flipped: BinaryOp {
        switch self {
        case .lt: return .gt
        case .le: return .ge
        case .gt: return .lt
        case .ge: return .le
        default: return self
        }
    }
}

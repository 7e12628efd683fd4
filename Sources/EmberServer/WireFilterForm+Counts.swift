import EmberModel

/// Responsible for: the backend's simplified form of a where clause and the sizes it limits,
/// as the Firestore emulator computes them:
/// - simplified: nested ANDs (ORs) flattened, a composite of one filter is that filter, equal
///   siblings (same atoms, in any order) kept once, an empty AND is no constraint;
/// - filterCount: each comparison counts 1, a list operator one per distinct value;
/// - arrayContainsPerDisjunction: the most ARRAY_CONTAINS (ARRAY_CONTAINS_ANY counts 1) one
///   conjunction can hold, counted on the tree (AND adds, OR takes the largest);
/// - disjunctions: the terms of the disjunctive normal form, as sets of comparisons (`IN`
///   becomes one `EQUAL` per value, `ARRAY_CONTAINS_ANY` one `ARRAY_CONTAINS` per value), equal
///   terms once; an AND whose product passes 60 terms stops the expansion (`tooManyTerms`).
///
///     let s = form.simplified      // nil: no constraint
///     try s?.disjunctions()        // 36 for `a in [6 values] and b in [6 values]`
extension WireFilterForm {
    /// A text equal for forms the backend treats as the same (children in any order).
    var key: String {
        switch self {
        case .atom(let a): return a.identity
        case .and(let c): return "AND(" + c.map { $0.key }.sorted().joined(separator: ",") + ")"
        case .or(let c): return "OR(" + c.map { $0.key }.sorted().joined(separator: ",") + ")"
        }
    }

    /// Nil when the clause constrains nothing (only empty ANDs).
    var simplified: WireFilterForm? {
        switch self {
        case .atom: return self
        case .and(let children):
            let kept = children.compactMap { $0.simplified }.flatMap { c -> [WireFilterForm] in
                if case .and(let inner) = c { return inner }
                return [c]
            }
            return Self.composite(kept, and: true)
        case .or(let children):
            var kept: [WireFilterForm] = []
            for c in children {
                guard let s = c.simplified else { return nil }  // OR with "always true"
                if case .or(let inner) = s { kept += inner } else { kept.append(s) }
            }
            return Self.composite(kept, and: false)
        }
    }

    private static func composite(_ children: [WireFilterForm], and: Bool) -> WireFilterForm? {
        var seen = Set<String>()
        let unique = children.filter { seen.insert($0.key).inserted }
        if unique.isEmpty { return nil }
        if unique.count == 1 { return unique[0] }
        return and ? .and(unique) : .or(unique)
    }

    var filterCount: Int {
        switch self {
        case .atom(let a): return a.op.maxValues != nil ? a.operands.count : 1
        case .and(let c), .or(let c): return c.reduce(0) { $0 + $1.filterCount }
        }
    }

    var arrayContainsPerDisjunction: Int {
        switch self {
        case .atom(let a): return a.op == .arrayContains || a.op == .arrayContainsAny ? 1 : 0
        case .and(let c): return c.reduce(0) { $0 + $1.arrayContainsPerDisjunction }
        case .or(let c): return c.map { $0.arrayContainsPerDisjunction }.max() ?? 0
        }
    }

    /// The AND product past which the emulator stops normalizing.
    static let maxExpansion = 60

    static let tooManyTerms = EmberError.invalidArgument("Too many disjunctions after normalization, the maximum is 30")

    /// The number of terms in disjunctive normal form; throws `tooManyTerms` past the expansion bound.
    func disjunctions() throws -> Int { try terms().count }

    func terms() throws -> Set<Set<String>> {
        switch self {
        case .atom(let a):
            switch a.op {
            case .in: return Set(a.operands.map { [WireFilterAtom.identity(a.field, .equal, WireFilterAtom.exactKey($0))] })
            case .arrayContainsAny: return Set(a.operands.map { [WireFilterAtom.identity(a.field, .arrayContains, WireFilterAtom.exactKey($0))] })
            default: return [[a.identity]]
            }
        case .or(let c):
            return try c.reduce(into: Set<Set<String>>()) { $0.formUnion(try $1.terms()) }
        case .and(let c):
            var product: Set<Set<String>> = [[]]
            for child in c {
                let terms = try child.terms()
                var next = Set<Set<String>>()
                for a in product {
                    for b in terms {
                        next.insert(a.union(b))
                        if next.count > Self.maxExpansion { throw Self.tooManyTerms }
                    }
                }
                product = next
            }
            return product
        }
    }
}

extension WireFilterForm {
    /// Ember's filter for this form's disjunctive normal form: an OR of the terms, each an AND
    /// of its comparisons (a list operator's value as a one-value list, so `in [null]` keeps its
    /// meaning). Ember's Query counts a tree's disjunctions without merging equal terms; this
    /// form has exactly as many as the backend counted, so a query it accepted is accepted.
    func normalFormFilter() throws -> Filter {
        var table: [String: WireFilterAtom] = [:]
        for a in atoms {
            switch a.op {
            case .in, .arrayContainsAny:
                let element: Op = a.op == .in ? .equal : .arrayContains
                for v in a.operands {
                    let id = WireFilterAtom.identity(a.field, element, WireFilterAtom.exactKey(v))
                    if table[id] == nil { table[id] = WireFilterAtom(field: a.field, op: a.op, value: .array([v])) }
                }
            default:
                if table[a.identity] == nil { table[a.identity] = a }
            }
        }
        let terms = try terms().map { $0.sorted() }.sorted { $0.lexicographicallyPrecedes($1) }
        let ands: [Filter] = terms.map { term in
            let parts = term.map { Filter.field(table[$0]!.fieldFilter) }
            return parts.count == 1 ? parts[0] : .composite(CompositeFilter(op: .and, filters: parts))
        }
        return ands.count == 1 ? ands[0] : .composite(CompositeFilter(op: .or, filters: ands))
    }

    typealias Op = WireFilterAtom.Op
}

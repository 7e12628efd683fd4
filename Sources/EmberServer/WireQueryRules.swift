import EmberFirestoreProto
import EmberModel
import EmberWire

/// Responsible for: checking a wire StructuredQuery (and an aggregation query's list) with the
/// Firestore backend's rules and messages, before WireQuery turns it into Ember's Query, whose
/// own checks (the client SDKs' wording, docs/semantics.md 7) are then only a backstop. A query
/// breaking several rules gets the message the emulator gives, so the checks run in its order:
///  1. one NOT_EQUAL / NOT_IN / IS_NOT_NAN / IS_NOT_NULL per query; NOT_IN without IN,
///     ARRAY_CONTAINS_ANY or OR (read from the raw filters, before anything else);
///  2. reading: filters in order (operators, paths, list operands), select paths, order-by
///     paths, cursors (no more values than order-bys; `__name__` values are references);
///  3. the aggregations' own list (AggregationRules);
///  4. offset, then limit, not negative;
///  5. at most 100 filters + sort orders + ancestor;
///  6. one ARRAY_CONTAINS per disjunction;
///  7. `__name__` filters compare with references, and take no array operator;
///  8. at most 30 disjunctions;
///  9. no equality on `__name__` beside an inequality on another field only;
/// 10. sum/avg fields need an index with them before `__name__` (AggregationRules);
/// 11. order-bys: no field twice, nothing after `__name__`.
///
///     let rules = try WireQueryRules(sq, codec: codec, hasAncestor: !parentPath.isEmpty)
///     rules.filter?.filter   // Ember's filter for the simplified where clause
struct WireQueryRules: Sendable {
    /// `select`'s fields, nil for whole documents.
    let projection: [FieldPath]?
    /// The where clause, simplified (equal siblings once); nil for none.
    let filter: WireFilterForm?
    let orderBy: [OrderBy]
    /// The distinct sum/avg fields, sorted.
    let aggregatedFields: [FieldPath]

    static let maxFiltersAndOrders = 100
    static let maxDisjunctions = 30

    init(_ sq: StructuredQuery, codec: WireCodec, hasAncestor: Bool, aggregations: [WireAggregation]? = nil) throws {
        if sq.hasWhere { try Self.checkNegations(sq.where) }
        let read = sq.hasWhere ? try WireFilterForm.read(sq.where, codec) : nil
        projection = sq.hasSelect ? try sq.select.fields.map { try WirePropertyPath.parse($0.fieldPath) } : nil
        orderBy = try sq.orderBy.map { o in
            guard o.hasField else { throw EmberError.invalidArgument("order_by needs a field") }
            return OrderBy(field: try WirePropertyPath.parse(o.field.fieldPath), descending: o.direction == .descending)
        }
        if sq.hasStartAt { try Self.checkCursor(sq.startAt, orderBy) }
        if sq.hasEndAt { try Self.checkCursor(sq.endAt, orderBy) }
        aggregatedFields = try aggregations.map(AggregationRules.fields) ?? []
        guard sq.offset >= 0 else { throw EmberError.invalidArgument("offset is negative") }
        guard !sq.hasLimit || sq.limit.value >= 0 else { throw EmberError.invalidArgument("limit is negative") }

        filter = read?.simplified
        let filters = filter?.filterCount ?? 0
        if filters + orderBy.count + (hasAncestor ? 1 : 0) > Self.maxFiltersAndOrders {
            throw EmberError.invalidArgument("The query may not have more than \(Self.maxFiltersAndOrders) filters + sort orders + ancestor total. Currently there are \(filters) filters, \(orderBy.count) sort orders, and \(hasAncestor ? "one" : "no") ancestor filter.")
        }
        if (filter?.arrayContainsPerDisjunction ?? 0) > 1 {
            throw EmberError.invalidArgument("A maximum of 1 'ARRAY_CONTAINS' filter is allowed per disjunction.")
        }
        let atoms = read?.atoms ?? []
        try Self.checkKeyFilters(atoms)
        if let filter {
            let n = try filter.disjunctions()
            if n > Self.maxDisjunctions {
                throw EmberError.invalidArgument("Too many disjunctions after normalization. Result had \(n) disjunctions which is more than the maximum of \(Self.maxDisjunctions)")
            }
        }
        let inequalities = atoms.filter { $0.op.isInequality }.map { $0.field }
        if atoms.contains(where: { $0.field.isDocumentId && ($0.op == .equal || $0.op == .in) }),
           !inequalities.isEmpty, !inequalities.contains(.documentId) {
            throw EmberError.invalidArgument("Equality on key is not allowed if there are other inequality fields and key does not appear in inequalities.")
        }
        try AggregationRules.checkIndex(aggregatedFields, orderBy: orderBy.map { $0.field }, inequalities: inequalities)
        try Self.checkOrderBy(orderBy)
    }

    /// Rule 1, on the filters as sent (a filter counts even when it repeats another).
    static func checkNegations(_ f: StructuredQuery.Filter) throws {
        var negations = 0, notIn = false, disjunctive = false
        func walk(_ f: StructuredQuery.Filter, _ depth: Int) {
            guard depth < WireFilterForm.maxDepth else { return }  // refused when read
            switch f.filterType {
            case .compositeFilter(let c)?:
                if c.op == .or { disjunctive = true }
                for child in c.filters { walk(child, depth + 1) }
            case .fieldFilter(let ff)?:
                switch ff.op {
                case .notEqual: negations += 1
                case .notIn: negations += 1; notIn = true
                case .in, .arrayContainsAny: disjunctive = true
                default: break
                }
            case .unaryFilter(let u)?:
                if u.op == .isNotNan || u.op == .isNotNull { negations += 1 }
            case nil: break
            }
        }
        walk(f, 0)
        if negations > 1 {
            throw EmberError.invalidArgument("Only a single 'NOT_EQUAL', 'NOT_IN', 'IS_NOT_NAN', or 'IS_NOT_NULL' filter allowed per query.")
        }
        if notIn && disjunctive {
            throw EmberError.invalidArgument("'NOT_IN' cannot be used in the same query with 'IN', 'ARRAY_CONTAINS_ANY' or 'OR'.")
        }
    }

    /// A cursor's values position against the order-bys the query gives (not the implicit ones).
    static func checkCursor(_ c: Google_Firestore_V1_Cursor, _ orderBy: [OrderBy]) throws {
        guard c.values.count <= orderBy.count else { throw EmberError.invalidArgument("Cursor has too many values.") }
        for (i, v) in c.values.enumerated() where orderBy[i].field.isDocumentId {
            guard case .referenceValue? = v.valueType else {
                throw EmberError.invalidArgument("Cursor __key__ value is not a document reference.")
            }
        }
    }

    /// Rule 7, filter by filter in the query's order.
    static func checkKeyFilters(_ atoms: [WireFilterAtom]) throws {
        for a in atoms {
            if a.field.isDocumentId {
                if a.op == .arrayContains || a.op == .arrayContainsAny { throw EmberError.invalidArgument("the name __key__ is reserved") }
                let refs = a.value != nil && a.operands.allSatisfy { if case .reference = $0 { return true } else { return false } }
                if !refs { throw EmberError.invalidArgument("__key__ filter value must be a Key") }
            } else if a.field.segments.contains("__name__") {
                throw EmberError.invalidArgument("the name __key__ is reserved")
            }
        }
    }

    static func checkOrderBy(_ orderBy: [OrderBy]) throws {
        var seen = Set<FieldPath>()
        for (i, o) in orderBy.enumerated() {
            if i > 0 && orderBy[i - 1].field.isDocumentId {
                throw EmberError.invalidArgument("order by clause cannot contain more fields after the key")
            }
            guard seen.insert(o.field).inserted else {
                throw EmberError.invalidArgument("order by clause cannot contain duplicate fields \(o.field.canonical)")
            }
        }
    }
}

import EmberFirestoreProto
import EmberModel

typealias StructuredQuery = Google_Firestore_V1_StructuredQuery

/// Responsible for: turning a wire StructuredQuery (with the parent it runs under) into Ember's
/// Query plus what Ember's Query leaves to the caller: the offset and the projection. Every
/// filter, composite AND/OR, order-by, cursor, limit, offset, select and collection-group form is
/// read; what Firestore refuses (no collection, several collections, an operator left unset, vector
/// search) throws INVALID_ARGUMENT / UNIMPLEMENTED with a message naming it.
struct WireQuery: Sendable {
    let query: Query
    let offset: Int
    /// Field paths to return (`select`), nil for whole documents; an empty select returns names.
    let projection: [FieldPath]?

    init(parent: String, structured sq: StructuredQuery) throws {
        let (db, parentPath) = try DatabaseName.parse(resource: parent)
        try self.init(db: db, parentPath: parentPath, structured: sq)
    }

    init(db: DatabaseName, parentPath: ResourcePath, structured sq: StructuredQuery) throws {
        let codec = WireCodec(db: db)
        guard !parentPath.isCollectionPath || parentPath.isEmpty else {
            throw EmberError.invalidArgument("Invalid parent: a query's parent is the documents root or a document, not a collection")
        }
        guard sq.from.count == 1 else {
            throw EmberError.invalidArgument(sq.from.isEmpty ? "A query needs a collection (from)" : "Querying several collections at once is not supported")
        }
        if sq.hasFindNearest { throw EmberError(.unimplemented, "Vector search (find_nearest) is not supported") }
        let from = sq.from[0]
        // A kind-less query (all descendants, no collection id) is run by KindlessQuery, one
        // collection id at a time; this query is its template (order, limit, offset, select).
        guard !from.collectionID.isEmpty || from.allDescendants else { throw EmberError.invalidArgument("collection_id is required") }
        if !from.collectionID.isEmpty { try ResourcePath.validateSegment(from.collectionID) }
        var q: Query
        if from.allDescendants {
            q = Query(collectionGroup: from.collectionID, under: db.internalPath(parentPath))
        } else {
            q = Query(collection: db.internalPath(parentPath.appending(from.collectionID)))
        }
        if sq.hasWhere { q = try q.filter(try WireQuery.filter(sq.where, codec)) }
        for o in sq.orderBy {
            guard o.hasField else { throw EmberError.invalidArgument("order_by needs a field") }
            q = try q.order(by: try codec.fieldPath(o.field.fieldPath), descending: o.direction == .descending)
        }
        if sq.hasStartAt {
            q = try q.start(try sq.startAt.values.map { try codec.value($0) }, inclusive: sq.startAt.before, fromDocument: true)
        }
        if sq.hasEndAt {
            q = try q.end(try sq.endAt.values.map { try codec.value($0) }, inclusive: !sq.endAt.before, fromDocument: true)
        }
        if sq.hasLimit {
            guard sq.limit.value >= 0 else { throw EmberError.invalidArgument("limit is negative: \(sq.limit.value)") }
            if sq.limit.value > 0 { q = try q.limit(Int(sq.limit.value) + Int(max(0, sq.offset))) }  // the offset comes off the front
        }
        guard sq.offset >= 0 else { throw EmberError.invalidArgument("offset is negative: \(sq.offset)") }
        try q.validateForExecution()
        query = q
        offset = Int(sq.offset)
        projection = sq.hasSelect ? try sq.select.fields.map { try codec.fieldPath($0.fieldPath) } : nil
        limitZero = sq.hasLimit && sq.limit.value == 0
    }

    /// `limit: 0` returns nothing (Ember's Query has no empty limit).
    let limitZero: Bool

    static func filter(_ f: StructuredQuery.Filter, _ codec: WireCodec, depth: Int = 0) throws -> Filter {
        guard depth < 100 else { throw EmberError.invalidArgument("Filters are nested too deeply") }
        switch f.filterType {
        case .compositeFilter(let c)?:
            let op: CompositeFilter.Op
            switch c.op {
            case .and: op = .and
            case .or: op = .or
            default: throw EmberError.invalidArgument("CompositeFilter operator is unspecified")
            }
            guard !c.filters.isEmpty else { throw EmberError.invalidArgument("CompositeFilter has no filters") }
            let parts = try c.filters.map { try filter($0, codec, depth: depth + 1) }
            return parts.count == 1 ? parts[0] : .composite(CompositeFilter(op: op, filters: parts))
        case .fieldFilter(let ff)?:
            let op: FilterOperator
            switch ff.op {
            case .lessThan: op = .lessThan
            case .lessThanOrEqual: op = .lessThanOrEqual
            case .greaterThan: op = .greaterThan
            case .greaterThanOrEqual: op = .greaterThanOrEqual
            case .equal: op = .equal
            case .notEqual: op = .notEqual
            case .arrayContains: op = .arrayContains
            case .in: op = .in
            case .arrayContainsAny: op = .arrayContainsAny
            case .notIn: op = .notIn
            default: throw EmberError.invalidArgument("FieldFilter operator is unspecified or unknown")
            }
            guard ff.hasField, ff.hasValue else { throw EmberError.invalidArgument("FieldFilter needs a field and a value") }
            let value = try codec.value(ff.value)
            try DocumentLimits.validate(value: value)
            return .field(FieldFilter(field: try codec.fieldPath(ff.field.fieldPath), op: op, value: value))
        case .unaryFilter(let u)?:
            guard case .field(let ref)? = u.operandType else { throw EmberError.invalidArgument("UnaryFilter needs a field") }
            let field = try codec.fieldPath(ref.fieldPath)
            switch u.op {
            case .isNan: return .field(FieldFilter(field: field, op: .equal, value: .double(.nan)))
            case .isNull: return .field(FieldFilter(field: field, op: .equal, value: .null))
            case .isNotNan: return .field(FieldFilter(field: field, op: .notEqual, value: .double(.nan)))
            case .isNotNull: return .field(FieldFilter(field: field, op: .notEqual, value: .null))
            default: throw EmberError.invalidArgument("UnaryFilter operator is unspecified or unknown")
            }
        case nil:
            throw EmberError.invalidArgument("Filter has no filter_type set")
        }
    }

    /// Applies the offset and `limit: 0` to a query's result.
    func window(_ docs: [Document]) -> ArraySlice<Document> {
        if limitZero { return [] }
        return docs.dropFirst(offset)
    }
}

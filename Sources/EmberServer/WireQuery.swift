import EmberFirestoreProto
import EmberModel
import EmberWire

typealias StructuredQuery = Google_Firestore_V1_StructuredQuery

/// Responsible for: turning a wire StructuredQuery (with the parent it runs under) into Ember's
/// Query plus what Ember's Query leaves to the caller: the offset and the projection. Every
/// filter, composite AND/OR, order-by, cursor, limit, offset, select and collection-group form is
/// read; what Firestore refuses (no collection, several collections, vector search) throws
/// INVALID_ARGUMENT / UNIMPLEMENTED with a message naming it, and the query itself is checked by
/// WireQueryRules, with the backend's rules and messages, before it is converted. For an
/// aggregation with sum/avg, the query is also ordered by those fields (before `__name__`), as
/// Firestore reads them from their index: only documents having them are aggregated, in that order.
struct WireQuery: Sendable {
    let query: Query
    let offset: Int
    /// Field paths to return (`select`), nil for whole documents; an empty select returns names.
    let projection: [FieldPath]?

    init(parent: String, structured sq: StructuredQuery, aggregations: [WireAggregation]? = nil) throws {
        let (db, parentPath) = try DatabaseName.parse(resource: parent)
        try self.init(db: db, parentPath: parentPath, structured: sq, aggregations: aggregations)
    }

    init(db: DatabaseName, parentPath: ResourcePath, structured sq: StructuredQuery, aggregations: [WireAggregation]? = nil) throws {
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
        let rules = try WireQueryRules(sq, codec: codec, hasAncestor: !parentPath.isEmpty, aggregations: aggregations)
        var q: Query
        if from.allDescendants {
            q = Query(collectionGroup: from.collectionID, under: db.internalPath(parentPath))
        } else {
            q = Query(collection: db.internalPath(parentPath.appending(from.collectionID)))
        }
        if let form = rules.filter {
            // Ember's Query counts disjunctions without merging equal terms: where that count
            // passes the limit the backend's did not, it gets the normal form, of that count.
            let f = form.filter
            q = try q.filter(f.disjunctionCount <= Query.maxDisjunctions ? f : try form.normalFormFilter())
        }
        for o in try WireQuery.order(rules, filtered: q) { q = try q.order(by: o.field, descending: o.descending) }
        if sq.hasStartAt {
            q = try q.start(try sq.startAt.values.map { try codec.value($0) }, inclusive: sq.startAt.before, fromDocument: true)
        }
        if sq.hasEndAt {
            q = try q.end(try sq.endAt.values.map { try codec.value($0) }, inclusive: !sq.endAt.before, fromDocument: true)
        }
        if sq.hasLimit, sq.limit.value > 0 {
            q = try q.limit(Int(sq.limit.value) + Int(sq.offset))  // the offset comes off the front
        }
        try q.validateForExecution()
        query = q
        offset = Int(sq.offset)
        projection = rules.projection
        limitZero = sq.hasLimit && sq.limit.value == 0
    }

    /// The explicit order-bys, or for sum/avg fields not yet ordered: the whole normalized order
    /// (explicit, inequality fields) then those fields, then `__name__`, the added ones in the
    /// direction of the last explicit order-by (WireQueryRules refused `__name__` before them).
    static func order(_ rules: WireQueryRules, filtered q: Query) throws -> [OrderBy] {
        var explicit = q
        for o in rules.orderBy { explicit = try explicit.order(by: o.field, descending: o.descending) }
        let normalized = explicit.normalizedOrderBy
        let missing = rules.aggregatedFields.filter { f in !normalized.contains { $0.field == f } }
        guard !missing.isEmpty else { return rules.orderBy }
        let descending = rules.orderBy.last?.descending ?? false
        return normalized.filter { !$0.field.isDocumentId } + missing.map { OrderBy(field: $0, descending: descending) }
            + [OrderBy(field: .documentId, descending: descending)]
    }

    /// `limit: 0` returns nothing (Ember's Query has no empty limit).
    let limitZero: Bool

    /// Applies the offset and `limit: 0` to a query's result.
    func window(_ docs: [Document]) -> ArraySlice<Document> {
        if limitZero { return [] }
        return docs.dropFirst(offset)
    }
}

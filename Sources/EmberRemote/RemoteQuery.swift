import EmberFirestoreProto
import EmberModel
import EmberWire

typealias StructuredQuery = Google_Firestore_V1_StructuredQuery

/// Responsible for: an Ember query as the wire asks it: the parent it runs under and its
/// StructuredQuery (collection or collection group, filters, the normalized order, cursors,
/// limit), as the Firebase SDKs send it. `== null` / `== NaN` (and `!=`) travel as unary
/// filters. A limit-to-last query goes with its order and cursors reversed and its result is
/// reversed back (`reversesResult`), since the wire only has a limit from the front.
///
///     let wq = RemoteQuery(query, codec)     // wq.parent, wq.structured
struct RemoteQuery {
    let parent: String
    let structured: StructuredQuery
    /// Limit-to-last: the server's result comes in reverse order.
    let reversesResult: Bool

    init(_ query: Query, _ codec: WireCodec) {
        var sq = StructuredQuery()
        var from = StructuredQuery.CollectionSelector()
        if let group = query.collectionGroup {
            parent = codec.name(of: query.path)
            from.collectionID = group
            from.allDescendants = true
        } else {
            parent = codec.name(of: query.path.parent ?? ResourcePath(segments: []))
            from.collectionID = query.path.last
        }
        sq.from = [from]
        if !query.filters.isEmpty {
            sq.where = query.filters.count == 1
                ? RemoteQuery.filter(query.filters[0], codec)
                : RemoteQuery.filter(.composite(CompositeFilter(op: .and, filters: query.filters)), codec)
        }
        let last = query.limit != nil && query.limitType == .last
        reversesResult = last
        sq.orderBy = query.normalizedOrderBy.map { ob in
            var o = StructuredQuery.Order()
            o.field.fieldPath = ob.field.canonical
            o.direction = ob.descending != last ? .descending : .ascending
            return o
        }
        let (start, end) = last ? (query.endAt, query.startAt) : (query.startAt, query.endAt)
        if let b = start {
            sq.startAt.values = b.values.map(codec.wire)
            sq.startAt.before = b.inclusive
        }
        if let b = end {
            sq.endAt.values = b.values.map(codec.wire)
            sq.endAt.before = !b.inclusive
        }
        if let l = query.limit { sq.limit.value = Int32(clamping: l) }
        structured = sq
    }

    static func filter(_ f: Filter, _ codec: WireCodec) -> StructuredQuery.Filter {
        var w = StructuredQuery.Filter()
        switch f {
        case .composite(let c):
            var cf = StructuredQuery.CompositeFilter()
            cf.op = c.op == .and ? .and : .or
            cf.filters = c.filters.map { filter($0, codec) }
            w.compositeFilter = cf
        case .field(let ff):
            if let unary = unary(ff) {
                var u = StructuredQuery.UnaryFilter()
                u.op = unary
                var ref = StructuredQuery.FieldReference()
                ref.fieldPath = ff.field.canonical
                u.field = ref
                w.unaryFilter = u
            } else {
                var wf = StructuredQuery.FieldFilter()
                wf.field.fieldPath = ff.field.canonical
                wf.op = op(ff.op)
                wf.value = codec.wire(ff.value)
                w.fieldFilter = wf
            }
        }
        return w
    }

    private static func unary(_ ff: FieldFilter) -> StructuredQuery.UnaryFilter.Operator? {
        guard ff.op == .equal || ff.op == .notEqual else { return nil }
        if ff.value.isNull { return ff.op == .equal ? .isNull : .isNotNull }
        if ff.value.isNaN { return ff.op == .equal ? .isNan : .isNotNan }
        return nil
    }

    private static func op(_ o: FilterOperator) -> StructuredQuery.FieldFilter.Operator {
        switch o {
        case .lessThan: return .lessThan
        case .lessThanOrEqual: return .lessThanOrEqual
        case .greaterThan: return .greaterThan
        case .greaterThanOrEqual: return .greaterThanOrEqual
        case .equal: return .equal
        case .notEqual: return .notEqual
        case .arrayContains: return .arrayContains
        case .in: return .in
        case .arrayContainsAny: return .arrayContainsAny
        case .notIn: return .notIn
        }
    }
}

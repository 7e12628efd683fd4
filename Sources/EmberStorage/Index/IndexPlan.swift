import EmberModel

/// Responsible for: choosing how an index serves a query's filters: the longest run of leading
/// index fields fixed by equality (`==`, `in`, `array-contains`, `array-contains-any` on a
/// CONTAINS field), then perhaps a range (`<`, `<=`, `>`, `>=`) on the next field, as key ranges
/// `[lo, hi)` over the index's encoded keys. Every bound is inclusive of what the filter may
/// match (the encoding is monotone, not strict), so the ranges yield a superset.
///
///     let plan = IndexPlan.best([(1, def)], conjuncts)   // nil: no index serves the query
struct IndexPlan {
    struct Range { let lo: [UInt8]; let hi: [UInt8]? }

    let indexId: Int64
    let definition: IndexDefinition
    let ranges: [Range]
    /// Whether one document may appear in several ranges (CONTAINS fields).
    let mayRepeat: Bool
    /// Fields served, doubled, plus one for a trailing range (higher is more selective).
    let score: Int

    /// Equality prefixes beyond this many are not worth separate lookups.
    static let maxPrefixes = 256

    /// `orderBy`: the query's order-by fields (a matching document has each of them).
    static func best(_ indexes: [(Int64, IndexDefinition)], _ filters: [FieldFilter], orderBy: [FieldPath] = []) -> IndexPlan? {
        var best: IndexPlan?
        for (id, def) in indexes where covers(def, filters, orderBy) {
            if let p = plan(id, def, filters), p.score > (best?.score ?? 0) { best = p }
        }
        return best
    }

    /// An index holds only documents that have every one of its fields (a non-empty array for a
    /// CONTAINS field), so it may serve a query only when every document the query matches does:
    /// each field is filtered on (every field filter requires the field) or ordered by, and each
    /// CONTAINS field is filtered with array-contains(-any).
    static func covers(_ def: IndexDefinition, _ filters: [FieldFilter], _ orderBy: [FieldPath]) -> Bool {
        def.fields.allSatisfy { f in
            if f.kind == .contains {
                return filters.contains { $0.field == f.path && ($0.op == .arrayContains || $0.op == .arrayContainsAny) }
            }
            return filters.contains { $0.field == f.path } || orderBy.contains(f.path)
        }
    }

    static func plan(_ id: Int64, _ def: IndexDefinition, _ filters: [FieldFilter]) -> IndexPlan? {
        var prefixes: [[UInt8]] = [[]]
        var score = 0
        var mayRepeat = false
        var range: (lo: [UInt8], hi: [UInt8]?)?
        for field in def.fields {
            let on = filters.filter { $0.field == field.path }
            var values: [Value]?
            if field.kind == .contains {
                if let f = on.first(where: { $0.op == .arrayContains }) { values = [f.value] }
                else if let f = on.first(where: { $0.op == .arrayContainsAny }), case .array(let a) = f.value { values = a; mayRepeat = true }
                if values != nil { mayRepeat = true }
            } else {
                if let f = on.first(where: { $0.op == .equal }) { values = [f.value] }
                else if let f = on.first(where: { $0.op == .in }), case .array(let a) = f.value { values = a }
            }
            if let vs = values {
                if vs.isEmpty { return IndexPlan(indexId: id, definition: def, ranges: [], mayRepeat: false, score: 1000) }
                if prefixes.count * vs.count > maxPrefixes { break }
                let encs = Array(Set(vs.map { IndexValueEncoder.encode($0) }))
                prefixes = prefixes.flatMap { p in encs.map { p + $0 } }
                score += 2
                continue
            }
            if field.kind != .contains {
                let bounds = on.compactMap { bound($0) }
                if !bounds.isEmpty {
                    var lo = bounds[0].lo, hi = bounds[0].hi
                    for b in bounds.dropFirst() {
                        if less(lo, b.lo) { lo = b.lo }
                        if let bh = b.hi, hi == nil || less(bh, hi!) { hi = bh }
                    }
                    range = (lo, hi)
                    score += 1
                }
            }
            break
        }
        guard score > 0 else { return nil }
        let ranges: [Range] = prefixes.map { p in
            if let r = range {
                return Range(lo: p + r.lo, hi: r.hi.map { p + $0 } ?? IndexValueEncoder.prefixSuccessor(p))
            }
            return Range(lo: p, hi: IndexValueEncoder.prefixSuccessor(p))
        }
        return IndexPlan(indexId: id, definition: def, ranges: ranges, mayRepeat: mayRepeat, score: score)
    }

    /// The key range (suffix after the prefix) a range filter can match: values of the operand's
    /// type on the operand's side of it, the operand included.
    static func bound(_ f: FieldFilter) -> (lo: [UInt8], hi: [UInt8]?)? {
        let t = IndexValueEncoder.typeByte(f.value)
        let enc = IndexValueEncoder.encode(f.value)
        switch f.op {
        case .greaterThan, .greaterThanOrEqual: return (enc, [t + 1])
        case .lessThan, .lessThanOrEqual: return ([t], IndexValueEncoder.prefixSuccessor(enc))
        default: return nil
        }
    }

    static func less(_ a: [UInt8], _ b: [UInt8]) -> Bool { a.lexicographicallyPrecedes(b) }

    /// The index Firestore's auto-creation would build for these filters: equality fields
    /// (ascending, by path), one array-contains field (CONTAINS), then the first range field.
    static func definition(for group: String, _ filters: [FieldFilter]) -> IndexDefinition? {
        var fields: [IndexDefinition.Field] = []
        var seen = Set<FieldPath>()
        for f in filters.filter({ $0.op == .equal || $0.op == .in }).sorted(by: { $0.field.compare($1.field) < 0 })
        where !f.field.isDocumentId && seen.insert(f.field).inserted {
            fields.append(.init(path: f.field, kind: .ascending))
        }
        if let f = filters.first(where: { ($0.op == .arrayContains || $0.op == .arrayContainsAny) && !$0.field.isDocumentId }) {
            fields.append(.init(path: f.field, kind: .contains))
        }
        if let f = filters.first(where: { [.lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual].contains($0.op) && !$0.field.isDocumentId }),
           !seen.contains(f.field) {
            fields.append(.init(path: f.field, kind: .ascending))
        }
        return fields.isEmpty ? nil : IndexDefinition(collectionGroup: group, scope: .collection, fields: fields)
    }
}

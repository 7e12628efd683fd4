/// Responsible for: evaluating a query against documents: membership (path, filters, order-by
/// fields present, cursors) and the normalized order (docs/semantics.md 5-6) used to sort results.
///
///     if query.matches(doc) { ... }; query.compare(a, b) < 0
extension Query {
    /// Explicit order-bys, then inequality fields not yet ordered (sorted), then the document
    /// name, the implicit ones in the direction of the last explicit order-by.
    public var normalizedOrderBy: [OrderBy] {
        // Common case (no explicit order, no inequality): share one array instead of allocating
        // one per view and target.
        if explicitOrderBy.isEmpty && !filters.contains(where: { $0.fieldFilters.contains { $0.op.isInequality } }) {
            return Query.byDocumentIdAscending
        }
        var result = explicitOrderBy
        var seen = Set(result.map { $0.field })
        let lastDescending = explicitOrderBy.last?.descending ?? false
        let inequalities = filters.flatMap { $0.fieldFilters }.filter { $0.op.isInequality }.map { $0.field }
        // An inequality on __name__ adds nothing here: the name is always the last order-by (JS skips key fields).
        for field in Set(inequalities).sorted(by: { $0.compare($1) < 0 }) where !seen.contains(field) && !field.isDocumentId {
            result.append(OrderBy(field: field, descending: lastDescending))
            seen.insert(field)
        }
        if !seen.contains(FieldPath.documentId) {
            result.append(OrderBy(field: .documentId, descending: lastDescending))
        }
        return result
    }

    static let byDocumentIdAscending = [OrderBy(field: .documentId, descending: false)]

    /// Whether a document's key belongs to the collection (or group) this query reads.
    @inlinable
    public func matchesPath(_ key: DocumentKey) -> Bool {
        if let group = collectionGroup {
            return compareUTF8(key.collectionGroup, group) == 0 && (path.isEmpty || path.isPrefix(of: key.path))
        }
        if isDocumentQuery { return key.path == path }
        let segs = key.path.segments
        guard segs.count == path.segments.count + 1 else { return false }
        for i in 0..<path.segments.count where compareUTF8(segs[i], path.segments[i]) != 0 { return false }
        return true
    }

    /// Whether `doc` (an existing document) is in this query's result, limit aside.
    public func matches(_ doc: Document, orderBy: [OrderBy]? = nil) -> Bool {
        guard doc.exists, matchesPath(doc.key) else { return false }
        if isDocumentQuery { return true }
        return matchesContent(doc, orderBy: orderBy)
    }

    /// `matches` for a document a store listed for this query: a collection's listing holds
    /// only documents at its path, so the path check is skipped; a group's is still checked (a
    /// group holds every collection with that id, compared by UTF-8 bytes).
    public func matchesListed(_ doc: Document, orderBy: [OrderBy]? = nil) -> Bool {
        collectionGroup == nil ? matchesContent(doc, orderBy: orderBy) : matches(doc, orderBy: orderBy)
    }

    /// `matches` for a document already known to be at this query's path: filters, order-by
    /// fields present, and cursors.
    public func matchesContent(_ doc: Document, orderBy: [OrderBy]? = nil) -> Bool {
        guard doc.exists else { return false }
        for f in filters where !f.matches(doc) { return false }
        let order = orderBy ?? normalizedOrderBy
        for ob in order where !ob.isDocumentId {
            if doc.field(ob.field) == nil { return false }
        }
        if let s = startAt, !Query.boundSortsBefore(s, order, doc) { return false }
        if let e = endAt, !Query.boundSortsAfter(e, order, doc) { return false }
        return true
    }

    /// Compares two documents in query order: -1, 0, 1.
    public static func compare(_ a: Document, _ b: Document, orderBy: [OrderBy]) -> Int {
        for ob in orderBy {
            var c: Int
            if ob.isDocumentId {
                c = a.key.path.compare(b.key.path)
            } else {
                let va = a.field(ob.field), vb = b.field(ob.field)
                switch (va, vb) {
                case (nil, nil): c = 0
                case (nil, _): c = -1
                case (_, nil): c = 1
                default: c = Value.compare(va!, vb!)
                }
            }
            if c != 0 { return ob.descending ? -c : c }
        }
        return 0
    }

    static func boundCompare(_ bound: Bound, _ orderBy: [OrderBy], _ doc: Document) -> Int {
        var c = 0
        for (i, v) in bound.values.enumerated() {
            let ob = orderBy[i]
            if ob.isDocumentId {
                guard case .reference(let k) = v else { return 0 }
                c = k.path.compare(doc.key.path)
            } else {
                guard let dv = doc.field(ob.field) else { return 0 }
                c = Value.compare(v, dv)
            }
            if ob.descending { c = -c }
            if c != 0 { break }
        }
        return c
    }

    static func boundSortsBefore(_ b: Bound, _ orderBy: [OrderBy], _ doc: Document) -> Bool {
        let c = boundCompare(b, orderBy, doc)
        return b.inclusive ? c <= 0 : c < 0
    }

    static func boundSortsAfter(_ b: Bound, _ orderBy: [OrderBy], _ doc: Document) -> Bool {
        let c = boundCompare(b, orderBy, doc)
        return b.inclusive ? c >= 0 : c > 0
    }

    /// A stable identity for sharing one view among listeners of equal queries: two queries have
    /// the same id exactly when they are the same query. Ids, field names and string values enter
    /// it with their UTF-8 length, and the result is ASCII (every byte from 0x80 and `%` written as
    /// `%XX`), so that Swift's `String ==`, which merges canonically equivalent text ("\u{E9}" and
    /// "e\u{301}"), compares it byte for byte wherever it is a key.
    public var canonicalId: String {
        canonical(orderBy: explicitOrderBy, limit: limit.map { "\(limitType == .first ? "f" : "l")\($0)" }, start: startAt, end: endAt)
    }

    /// The identity of what a server watches for this query (the Firebase SDKs' target): the
    /// normalized order, and a limit-to-last query as the server runs it (the order reversed,
    /// the cursors swapped, the limit from the start), so that a limit query and its
    /// limit-to-last mirror have the same id.
    public var targetCanonicalId: String {
        let last = limit != nil && limitType == .last
        let order = normalizedOrderBy.map { OrderBy(field: $0.field, descending: $0.descending != last) }
        return canonical(orderBy: order, limit: limit.map { "f\($0)" }, start: last ? endAt : startAt, end: last ? startAt : endAt)
    }

    private func canonical(orderBy: [OrderBy], limit: String?, start: Bound?, end: Bound?) -> String {
        func path(_ p: ResourcePath) -> String { p.segments.map(lengthPrefixedUTF8).joined(separator: "/") }
        var s = collectionGroup.map { "cg:\(path(self.path))/" + lengthPrefixedUTF8($0) } ?? path(self.path)
        s += "|f:" + filters.map(Query.canonical).joined(separator: ",")
        s += "|ob:" + orderBy.map { "\(Query.canonical($0.field))\($0.descending ? "-" : "+")" }.joined(separator: ",")
        if let l = limit { s += "|l:" + l }
        if let b = start { s += "|s:\(b.inclusive ? "i" : "e")" + b.values.map { $0.canonicalString }.joined(separator: ",") }
        if let b = end { s += "|e:\(b.inclusive ? "i" : "e")" + b.values.map { $0.canonicalString }.joined(separator: ",") }
        return asciiEscapedUTF8(s)
    }

    static func canonical(_ field: FieldPath) -> String { lengthPrefixedUTF8(field.canonical) }

    static func canonical(_ f: Filter) -> String {
        switch f {
        case .field(let ff): return "\(canonical(ff.field))\(ff.op.rawValue)\(ff.value.canonicalString)"
        case .composite(let c): return "\(c.op.rawValue)(" + c.filters.map(canonical).joined(separator: ",") + ")"
        }
    }
}

extension Value {
    /// An unambiguous text form (types tagged), used for canonical ids and debugging.
    public var canonicalString: String {
        switch self {
        case .null: return "null"
        case .bool(let b): return b ? "true" : "false"
        case .int(let i): return "i\(i)"
        case .double(let d): return "d\(d.bitPattern)"
        case .timestamp(let t): return "t\(t.micros)"
        case .string(let s): return "s" + lengthPrefixedUTF8(s)
        case .bytes(let b): return "b" + b.map { String($0, radix: 16) }.joined(separator: ".")
        case .reference(let k): return "r" + lengthPrefixedUTF8(k.path.canonical)
        case .geoPoint(let g): return "g\(g.latitude),\(g.longitude)"
        case .array(let a): return "[" + a.map { $0.canonicalString }.joined(separator: ",") + "]"
        case .map(let m): return "{" + m.entries.map { lengthPrefixedUTF8($0.key) + "=" + $0.value.canonicalString }.joined(separator: ",") + "}"
        }
    }
}

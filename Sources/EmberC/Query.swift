import EmberConcurrency
import CEmberABI
import EmberModel
import EmberCore

// Responsible for: ember_query, a query built step by step (each step checked at once, leaving
// the query unchanged when refused), and running it once (get, count).

final class CQuery: Counted {
    let db: DBHandle
    private let lock = Lock()
    private var query: Query

    init(db: DBHandle, query: Query) { self.db = db; self.query = query }

    var current: Query { lock.withLock { query } }

    /// Applies one builder step; the query changes only when the step succeeds.
    func update(_ step: (Query) throws -> Query) throws {
        try lock.withLock { query = try step(query) }
    }
}

@_cdecl("ember_query_new")
public func ember_query_new(_ db: OpaquePointer?, _ path: UnsafePointer<CChar>?, _ err: UnsafeMutablePointer<ember_error>?) -> OpaquePointer? {
    wrap(err, nil) {
        let handle = try object(db, DBHandle.self, "db")
        _ = try handle.open()
        let s = try text(path, "collection_path")
        let p = try ResourcePath(parsing: s)
        guard p.isCollectionPath else {
            throw invalid("Invalid collection reference. Collection references must have an odd number of segments, but '\(s)' has \(p.count).")
        }
        return retained(CQuery(db: handle, query: Query(collection: p)))
    }
}

@_cdecl("ember_query_new_collection_group")
public func ember_query_new_collection_group(_ db: OpaquePointer?, _ id: UnsafePointer<CChar>?, _ err: UnsafeMutablePointer<ember_error>?) -> OpaquePointer? {
    wrap(err, nil) {
        let handle = try object(db, DBHandle.self, "db")
        _ = try handle.open()
        let s = try text(id, "collection_id")
        if s.isEmpty || s.utf8.contains(0x2F) {
            throw invalid("Invalid collection ID '\(s)' passed to collectionGroup(): it must not be empty nor contain '/'.")
        }
        try ResourcePath.validateSegment(s)
        return retained(CQuery(db: handle, query: Query(collectionGroup: s)))
    }
}

@_cdecl("ember_query_copy")
public func ember_query_copy(_ q: OpaquePointer?) -> OpaquePointer? {
    guard let q else { return nil }
    let o = Unmanaged<CQuery>.fromOpaque(UnsafeRawPointer(q)).takeUnretainedValue()
    return retained(CQuery(db: o.db, query: o.current))
}

@_cdecl("ember_query_release")
public func ember_query_release(_ q: OpaquePointer?) {
    guard let q else { return }
    Unmanaged<CQuery>.fromOpaque(UnsafeRawPointer(q)).release()
}

@_cdecl("ember_query_where")
public func ember_query_where(_ q: OpaquePointer?, _ field: UnsafePointer<CChar>?, _ op: Int32, _ format: Int32,
                              _ value: UnsafeRawPointer?, _ len: Int, _ err: UnsafeMutablePointer<ember_error>?) -> Bool {
    wrap(err, false) {
        let o = try object(q, CQuery.self, "query")
        let raw = try rawField(field, op, format, value, len)
        try o.update { try $0.filter(try raw.build(for: $0)) }
        return true
    }
}

@_cdecl("ember_query_where_filter")
public func ember_query_where_filter(_ q: OpaquePointer?, _ f: OpaquePointer?, _ err: UnsafeMutablePointer<ember_error>?) -> Bool {
    wrap(err, false) {
        let o = try object(q, CQuery.self, "query")
        let raw = try object(f, CFilter.self, "filter").raw
        try o.update { try $0.filter(try raw.build(for: $0)) }
        return true
    }
}

@_cdecl("ember_query_order_by")
public func ember_query_order_by(_ q: OpaquePointer?, _ field: UnsafePointer<CChar>?, _ descending: Bool,
                                 _ err: UnsafeMutablePointer<ember_error>?) -> Bool {
    wrap(err, false) {
        let o = try object(q, CQuery.self, "query")
        let path = try parseFieldPath(field)
        try o.update { try $0.order(by: path, descending: descending) }
        return true
    }
}

func limit(_ q: OpaquePointer?, _ n: Int64, _ type: Query.LimitType) throws -> Bool {
    let o = try object(q, CQuery.self, "query")
    guard n > 0, n <= Int64(Int32.max) else { throw invalid("Invalid query. The limit must be positive (and fit in 32 bits), got \(n).") }
    try o.update { try $0.limit(Int(n), type: type) }
    return true
}

@_cdecl("ember_query_limit")
public func ember_query_limit(_ q: OpaquePointer?, _ n: Int64, _ err: UnsafeMutablePointer<ember_error>?) -> Bool {
    wrap(err, false) { try limit(q, n, .first) }
}

@_cdecl("ember_query_limit_to_last")
public func ember_query_limit_to_last(_ q: OpaquePointer?, _ n: Int64, _ err: UnsafeMutablePointer<ember_error>?) -> Bool {
    wrap(err, false) { try limit(q, n, .last) }
}

func setCursor(_ o: CQuery, _ cursor: Int32, _ values: [Value], fromDocument: Bool) throws {
    let start: Bool, inclusive: Bool
    switch cursor {
    case Int32(EMBER_CURSOR_START_AT): (start, inclusive) = (true, true)
    case Int32(EMBER_CURSOR_START_AFTER): (start, inclusive) = (true, false)
    case Int32(EMBER_CURSOR_END_AT): (start, inclusive) = (false, true)
    case Int32(EMBER_CURSOR_END_BEFORE): (start, inclusive) = (false, false)
    default: throw invalid("Unknown cursor \(cursor): use EMBER_CURSOR_*")
    }
    for v in values { try DocumentLimits.validate(value: v) }
    try o.update { q in
        start ? try q.start(values, inclusive: inclusive, fromDocument: fromDocument)
              : try q.end(values, inclusive: inclusive, fromDocument: fromDocument)
    }
}

@_cdecl("ember_query_cursor")
public func ember_query_cursor(_ q: OpaquePointer?, _ cursor: Int32, _ format: Int32, _ values: UnsafeRawPointer?, _ len: Int,
                               _ err: UnsafeMutablePointer<ember_error>?) -> Bool {
    wrap(err, false) {
        let o = try object(q, CQuery.self, "query")
        guard case .array(let vs) = try decodeValue(values, len, format, "values") else {
            throw invalid("Cursor values must be an array (one value per order-by)")
        }
        try setCursor(o, cursor, vs, fromDocument: false)
        return true
    }
}

@_cdecl("ember_query_cursor_document")
public func ember_query_cursor_document(_ q: OpaquePointer?, _ cursor: Int32, _ d: OpaquePointer?,
                                        _ err: UnsafeMutablePointer<ember_error>?) -> Bool {
    wrap(err, false) {
        let o = try object(q, CQuery.self, "query")
        let c = try object(d, CDocument.self, "doc")
        guard let document = c.document else {
            throw invalid("Invalid query. You are trying to start or end a query using a document that doesn't exist.")
        }
        try setCursor(o, cursor, try o.current.cursorValues(for: document), fromDocument: true)
        return true
    }
}

@_cdecl("ember_query_get")
public func ember_query_get(_ q: OpaquePointer?, _ source: Int32, _ err: UnsafeMutablePointer<ember_error>?) -> OpaquePointer? {
    wrap(err, nil) {
        let o = try object(q, CQuery.self, "query")
        let client = try o.db.open()
        let s = try client.getDocuments(o.current, source: try getSource(source))
        return retained(CSnapshot(s))
    }
}

@_cdecl("ember_query_count")
public func ember_query_count(_ q: OpaquePointer?, _ out: UnsafeMutablePointer<Int64>?, _ err: UnsafeMutablePointer<ember_error>?) -> Bool {
    wrap(err, false) {
        let o = try object(q, CQuery.self, "query")
        guard let out else { throw invalid("out_count is NULL") }
        let client = try o.db.open()
        let query = o.current
        try query.validateForExecution()
        out.pointee = Int64(try client.count(query))
        return true
    }
}

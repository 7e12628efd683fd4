import EmberConcurrency
import CEmberABI
import EmberModel
import EmberCore

// Responsible for: ember_tree_query, a tree query built step by step on a location (one
// order-by; start, end and limit once each; docs/semantics.md 18-19). Each step is checked at once
// and leaves the query unchanged when refused; reading it once (get) and its remove-all.

final class CTreeQuery: Counted {
    let db: DBHandle
    let path: TreePath
    private let lock = Lock()
    private var query: TreeQuery

    init(db: DBHandle, path: TreePath, query: TreeQuery = TreeQuery()) {
        self.db = db
        self.path = path
        self.query = query
    }

    var current: TreeQuery { lock.withLock { query } }

    func update(_ step: (TreeQuery) throws -> TreeQuery) throws {
        try lock.withLock { query = try step(query) }
    }
}

@inline(__always)
func treeQuery(_ p: OpaquePointer?) throws -> CTreeQuery { try object(p, CTreeQuery.self, "query") }

@_cdecl("ember_tree_query_new")
public func ember_tree_query_new(_ r: OpaquePointer?, _ err: UnsafeMutablePointer<ember_error>?) -> OpaquePointer? {
    wrap(err, nil) {
        let o = try ref(r)
        return retained(CTreeQuery(db: o.db, path: o.path))
    }
}

@_cdecl("ember_tree_query_copy")
public func ember_tree_query_copy(_ q: OpaquePointer?) -> OpaquePointer? {
    guard let o = try? treeQuery(q) else { return nil }
    return retained(CTreeQuery(db: o.db, path: o.path, query: o.current))
}

@_cdecl("ember_tree_query_release")
public func ember_tree_query_release(_ q: OpaquePointer?) {
    guard let q else { return }
    Unmanaged<CTreeQuery>.fromOpaque(UnsafeRawPointer(q)).release()
}

@_cdecl("ember_tree_query_ref")
public func ember_tree_query_ref(_ q: OpaquePointer?) -> OpaquePointer? {
    guard let o = try? treeQuery(q) else { return nil }
    return retained(CRef(db: o.db, path: o.path))
}

@_cdecl("ember_tree_query_order_by_key")
public func ember_tree_query_order_by_key(_ q: OpaquePointer?, _ err: UnsafeMutablePointer<ember_error>?) -> Bool {
    wrap(err, false) { try treeQuery(q).update { try $0.orderBy(.key, method: "order_by_key") }; return true }
}

@_cdecl("ember_tree_query_order_by_value")
public func ember_tree_query_order_by_value(_ q: OpaquePointer?, _ err: UnsafeMutablePointer<ember_error>?) -> Bool {
    wrap(err, false) { try treeQuery(q).update { try $0.orderBy(.value, method: "order_by_value") }; return true }
}

@_cdecl("ember_tree_query_order_by_child")
public func ember_tree_query_order_by_child(_ q: OpaquePointer?, _ path: UnsafePointer<CChar>?, _ err: UnsafeMutablePointer<ember_error>?) -> Bool {
    wrap(err, false) {
        let o = try treeQuery(q)
        let p = try text(path, "path")
        try o.update { q in
            if q.orderBy != nil { return try q.orderBy(.key, method: "order_by_child") }   // "can't combine" error
            return try q.orderBy(try TreeQuery.childIndex(p), method: "order_by_child")
        }
        return true
    }
}

func treeLimit(_ q: OpaquePointer?, _ n: Int64, _ type: TreeQuery.LimitType, _ err: UnsafeMutablePointer<ember_error>?) -> Bool {
    wrap(err, false) {
        let o = try treeQuery(q)
        if n > Int64(Int32.max) { throw invalid("the limit must be a positive 32-bit integer, got \(n)") }
        try o.update { try $0.limit(Int(n), type) }
        return true
    }
}

@_cdecl("ember_tree_query_limit_to_first")
public func ember_tree_query_limit_to_first(_ q: OpaquePointer?, _ n: Int64, _ err: UnsafeMutablePointer<ember_error>?) -> Bool {
    treeLimit(q, n, .first, err)
}

@_cdecl("ember_tree_query_limit_to_last")
public func ember_tree_query_limit_to_last(_ q: OpaquePointer?, _ n: Int64, _ err: UnsafeMutablePointer<ember_error>?) -> Bool {
    treeLimit(q, n, .last, err)
}

@_cdecl("ember_tree_query_bound")
public func ember_tree_query_bound(_ q: OpaquePointer?, _ bound: Int32, _ format: Int32, _ value: UnsafeRawPointer?, _ len: Int,
                                   _ key: UnsafePointer<CChar>?, _ err: UnsafeMutablePointer<ember_error>?) -> Bool {
    wrap(err, false) {
        let o = try treeQuery(q)
        let v = try TreeValues.decode(value, len, format, "value")
        let k: String? = key == nil ? nil : try text(key, "key")
        try o.update { q in
            switch bound {
            case Int32(EMBER_TREE_START_AT): return try q.start(.at, v, key: k)
            case Int32(EMBER_TREE_START_AFTER): return try q.start(.exclusive, v, key: k)
            case Int32(EMBER_TREE_END_AT): return try q.end(.at, v, key: k)
            case Int32(EMBER_TREE_END_BEFORE): return try q.end(.exclusive, v, key: k)
            case Int32(EMBER_TREE_EQUAL_TO): return try q.equal(v, key: k)
            default: throw invalid("Unknown bound \(bound): use EMBER_TREE_START_AT .. EMBER_TREE_EQUAL_TO")
            }
        }
        return true
    }
}

@_cdecl("ember_tree_query_get")
public func ember_tree_query_get(_ q: OpaquePointer?, _ format: Int32, _ outLen: UnsafeMutablePointer<Int>?,
                                 _ err: UnsafeMutablePointer<ember_error>?) -> UnsafeMutablePointer<CChar>? {
    wrap(err, nil) {
        let o = try treeQuery(q)
        try checkFormat(format)
        let query = o.current
        let s = try treeRead(o.db, o.path, query)
        return try TreeValues.encode(s.value, orderedBy: query.isDefault ? nil : query.index, format, outLen)
    }
}

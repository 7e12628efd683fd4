import CEmberABI
import EmberModel
import EmberCore
#if canImport(Glibc)
import Glibc
#endif

// Responsible for: ember_ref, a location in the Realtime-Database tree:
// navigation (new, child, push, parent), its key and path as C strings, and the writes (set,
// multi-path update, remove) and the blocking read at that location.

/// The object behind `ember_ref *`: the database's handle and a validated path. Immutable.
final class CRef: Counted {
    let db: DBHandle
    let path: TreePath
    /// NUL-terminated copies for the borrowed accessors (freed with the ref).
    let keyC: UnsafeMutablePointer<CChar>?
    let pathC: UnsafeMutablePointer<CChar>

    init(db: DBHandle, path: TreePath) {
        self.db = db
        self.path = path
        keyC = path.last.map(cCopy)
        pathC = cCopy(path.description)
    }

    deinit {
        free(keyC)
        free(pathC)
    }
}

@inline(__always)
func ref(_ p: OpaquePointer?) throws -> CRef { try object(p, CRef.self, "ref") }

/// Parses a path relative to `base` ("a/b"; NULL or "" is `base` itself when `allowEmpty`).
func treePath(_ base: TreePath, _ p: UnsafePointer<CChar>?, _ what: String, allowEmpty: Bool) throws -> TreePath {
    if p == nil && allowEmpty { return base }
    let s = try text(p, what)
    let rel = try TreePath(parsing: s, context: what)
    if rel.isRoot && !allowEmpty { throw invalid("Invalid \(what) '\(s)': a non-empty path is needed") }
    let full = base.appending(rel)
    _ = try TreePath(parsing: full.segments.joined(separator: "/"), context: what)   // total depth and length
    return full
}

@_cdecl("ember_ref_new")
public func ember_ref_new(_ db: OpaquePointer?, _ path: UnsafePointer<CChar>?, _ err: UnsafeMutablePointer<ember_error>?) -> OpaquePointer? {
    wrap(err, nil) {
        let handle = try object(db, DBHandle.self, "db")
        _ = try handle.open()
        return retained(CRef(db: handle, path: try treePath(.root, path, "path", allowEmpty: true)))
    }
}

@_cdecl("ember_ref_child")
public func ember_ref_child(_ r: OpaquePointer?, _ path: UnsafePointer<CChar>?, _ err: UnsafeMutablePointer<ember_error>?) -> OpaquePointer? {
    wrap(err, nil) {
        let o = try ref(r)
        return retained(CRef(db: o.db, path: try treePath(o.path, path, "child path", allowEmpty: false)))
    }
}

@_cdecl("ember_ref_push")
public func ember_ref_push(_ r: OpaquePointer?, _ err: UnsafeMutablePointer<ember_error>?) -> OpaquePointer? {
    wrap(err, nil) {
        let o = try ref(r)
        let p = o.path.child(PushId.next())
        if p.count > TreePath.maxDepth { throw invalid("Invalid path '\(p)': paths are at most \(TreePath.maxDepth) levels deep") }
        return retained(CRef(db: o.db, path: p))
    }
}

@_cdecl("ember_ref_parent")
public func ember_ref_parent(_ r: OpaquePointer?) -> OpaquePointer? {
    guard let o = try? ref(r), let p = o.path.parent else { return nil }
    return retained(CRef(db: o.db, path: p))
}

@_cdecl("ember_ref_release")
public func ember_ref_release(_ r: OpaquePointer?) {
    guard let r else { return }
    Unmanaged<CRef>.fromOpaque(UnsafeRawPointer(r)).release()
}

@_cdecl("ember_ref_key")
public func ember_ref_key(_ r: OpaquePointer?) -> UnsafePointer<CChar>? {
    guard let o = try? ref(r), let k = o.keyC else { return nil }
    return UnsafePointer(k)
}

@_cdecl("ember_ref_path")
public func ember_ref_path(_ r: OpaquePointer?) -> UnsafePointer<CChar>? {
    guard let o = try? ref(r) else { return nil }
    return UnsafePointer(o.pathC)
}

// MARK: writes

func treeWrite(_ o: CRef, _ ops: [TreeWriteOp], _ cb: ember_write_cb?, _ ctx: UnsafeMutableRawPointer?) throws {
    try o.db.open().treeWrite(ops, completion: writeCompletion(cb, ctx))
}

@_cdecl("ember_ref_set")
public func ember_ref_set(_ r: OpaquePointer?, _ format: Int32, _ data: UnsafeRawPointer?, _ len: Int,
                          _ cb: ember_write_cb?, _ ctx: UnsafeMutableRawPointer?, _ err: UnsafeMutablePointer<ember_error>?) -> Bool {
    wrap(err, false) {
        let o = try ref(r)
        let v = try TreeValues.decode(data, len, format, "data")
        try treeWrite(o, [TreeWriteOp(path: o.path, value: v)], cb, ctx)
        return true
    }
}

@_cdecl("ember_ref_update")
public func ember_ref_update(_ r: OpaquePointer?, _ format: Int32, _ data: UnsafeRawPointer?, _ len: Int,
                             _ cb: ember_write_cb?, _ ctx: UnsafeMutableRawPointer?, _ err: UnsafeMutablePointer<ember_error>?) -> Bool {
    wrap(err, false) {
        let o = try ref(r)
        guard case .map(let m) = try decodeValue(data, len, format, "data") else {
            throw invalid("data must be a map from relative paths (\"a/b\") to values")
        }
        var ops: [TreeWriteOp] = []
        ops.reserveCapacity(m.count)
        for (k, v) in m.entries {
            let rel = try TreePath(parsing: k, context: "update path")
            if rel.isRoot { throw invalid("Invalid update path '\(k)': it names the location itself; use ember_ref_set") }
            let full = o.path.appending(rel)
            if full.count > TreePath.maxDepth { throw invalid("Invalid update path '\(k)': paths are at most \(TreePath.maxDepth) levels deep") }
            ops.append(TreeWriteOp(path: full, value: try TreeValues.tree(v, "data['\(k)']")))
        }
        if ops.isEmpty {
            // Nothing to write: still answer the callback, once, as for an empty batch.
            let client = try o.db.open()
            if let done = writeCompletion(cb, ctx), !client.events.post({ done(nil) }) {
                throw EmberError(.failedPrecondition, "The database is closed.")
            }
            return true
        }
        try treeWrite(o, ops, cb, ctx)
        return true
    }
}

@_cdecl("ember_ref_remove")
public func ember_ref_remove(_ r: OpaquePointer?, _ cb: ember_write_cb?, _ ctx: UnsafeMutableRawPointer?,
                             _ err: UnsafeMutablePointer<ember_error>?) -> Bool {
    wrap(err, false) {
        let o = try ref(r)
        try treeWrite(o, [TreeWriteOp(path: o.path, value: .null)], cb, ctx)
        return true
    }
}

// MARK: reading

func checkFormat(_ format: Int32) throws {
    if format != Int32(EMBER_FORMAT_JSON) && format != Int32(EMBER_FORMAT_MSGPACK) {
        throw invalid("Unknown format \(format): use EMBER_FORMAT_MSGPACK (0) or EMBER_FORMAT_JSON (1)")
    }
}

/// Reads `path` through `query` once, blocking the caller (refused on the event thread, where
/// the answer is delivered).
func treeRead(_ db: DBHandle, _ path: TreePath, _ query: TreeQuery) throws -> TreeSnapshot {
    let client = try db.open()
    if client.events.isCurrent {
        throw EmberError(.failedPrecondition, "A blocking tree read from a callback would wait for the event thread it runs on; read outside callbacks (or observe a value event)")
    }
    try query.validate()
    return try client.treeGet(path, query: query)
}

@_cdecl("ember_ref_get")
public func ember_ref_get(_ r: OpaquePointer?, _ format: Int32, _ outLen: UnsafeMutablePointer<Int>?,
                          _ err: UnsafeMutablePointer<ember_error>?) -> UnsafeMutablePointer<CChar>? {
    wrap(err, nil) {
        let o = try ref(r)
        try checkFormat(format)
        let s = try treeRead(o.db, o.path, TreeQuery())
        return try TreeValues.encode(s.value, format, outLen)
    }
}

import CEmberABI
import EmberCore
import EmberModel

// Responsible for: ember_ref_on_disconnect_*: writes a server applies when this database's
// connection to it ends (Firebase's onDisconnect), with the in-process backend when the database
// closes; the values and callbacks as ember_ref_set / ember_ref_update take them.

@_cdecl("ember_ref_on_disconnect_set")
public func ember_ref_on_disconnect_set(_ r: OpaquePointer?, _ format: Int32, _ data: UnsafeRawPointer?, _ len: Int,
                                        _ cb: ember_write_cb?, _ ctx: UnsafeMutableRawPointer?, _ err: UnsafeMutablePointer<ember_error>?) -> Bool {
    wrap(err, false) {
        let o = try ref(r)
        let v = try TreeValues.decode(data, len, format, "data")
        try o.db.open().treeOnDisconnect(.write(path: o.path, ops: [TreeWriteOp(path: o.path, value: v)], update: false),
                                         completion: writeCompletion(cb, ctx))
        return true
    }
}

@_cdecl("ember_ref_on_disconnect_update")
public func ember_ref_on_disconnect_update(_ r: OpaquePointer?, _ format: Int32, _ data: UnsafeRawPointer?, _ len: Int,
                                           _ cb: ember_write_cb?, _ ctx: UnsafeMutableRawPointer?, _ err: UnsafeMutablePointer<ember_error>?) -> Bool {
    wrap(err, false) {
        let o = try ref(r)
        guard case .map(let m) = try decodeValue(data, len, format, "data"), m.count > 0 else {
            throw invalid("data must be a non-empty map from relative paths (\"a/b\") to values")
        }
        var ops: [TreeWriteOp] = []
        for (k, v) in m.entries {
            let rel = try TreePath(parsing: k, context: "update path")
            if rel.isRoot { throw invalid("Invalid update path '\(k)': it names the location itself; use ember_ref_on_disconnect_set") }
            ops.append(TreeWriteOp(path: o.path.appending(rel), value: try TreeValues.tree(v, "data['\(k)']")))
        }
        try o.db.open().treeOnDisconnect(.write(path: o.path, ops: ops, update: true), completion: writeCompletion(cb, ctx))
        return true
    }
}

@_cdecl("ember_ref_on_disconnect_remove")
public func ember_ref_on_disconnect_remove(_ r: OpaquePointer?, _ cb: ember_write_cb?, _ ctx: UnsafeMutableRawPointer?,
                                           _ err: UnsafeMutablePointer<ember_error>?) -> Bool {
    wrap(err, false) {
        let o = try ref(r)
        try o.db.open().treeOnDisconnect(.write(path: o.path, ops: [TreeWriteOp(path: o.path, value: .null)], update: false),
                                         completion: writeCompletion(cb, ctx))
        return true
    }
}

@_cdecl("ember_ref_on_disconnect_cancel")
public func ember_ref_on_disconnect_cancel(_ r: OpaquePointer?, _ cb: ember_write_cb?, _ ctx: UnsafeMutableRawPointer?,
                                           _ err: UnsafeMutablePointer<ember_error>?) -> Bool {
    wrap(err, false) {
        let o = try ref(r)
        try o.db.open().treeOnDisconnect(.cancel(o.path), completion: writeCompletion(cb, ctx))
        return true
    }
}

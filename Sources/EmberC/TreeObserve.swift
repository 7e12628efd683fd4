import EmberConcurrency
import CEmberABI
import EmberModel
import EmberCore

// Responsible for: tree observers through the C ABI: ember_ref_observe / ember_tree_query_observe
// return a listener token (the same table as document listeners, so ember_listener_remove works
// and is idempotent), ember_ref_remove_observer removes one observer of that location, and the
// remove-all functions end every observer at a location (of one query) but not on its children.

enum TreeObservers {
    private static let lock = Lock()
    /// The location each live tree observer's token observes.
    nonisolated(unsafe) private static var paths: [UInt64: TreePath] = [:]

    static func record(_ id: UInt64, _ path: TreePath) { lock.withLock { paths[id] = path } }
    static func forget(_ id: UInt64) { _ = lock.withLock { paths.removeValue(forKey: id) } }
    static func path(_ id: UInt64) -> TreePath? { lock.withLock { paths[id] } }

    static func eventType(_ t: Int32) throws -> TreeEventType {
        switch t {
        case Int32(EMBER_EVENT_CHILD_ADDED): return .childAdded
        case Int32(EMBER_EVENT_CHILD_REMOVED): return .childRemoved
        case Int32(EMBER_EVENT_CHILD_CHANGED): return .childChanged
        case Int32(EMBER_EVENT_CHILD_MOVED): return .childMoved
        case Int32(EMBER_EVENT_VALUE): return .value
        default: throw invalid("Unknown event type \(t): use EMBER_EVENT_CHILD_ADDED .. EMBER_EVENT_VALUE")
        }
    }

    static func observe(_ db: DBHandle, _ path: TreePath, _ query: TreeQuery, _ type: Int32, _ cb: ember_tree_event_cb?,
                        _ ctx: UnsafeMutableRawPointer?, _ ctxFree: ember_ctx_free?) throws -> UInt64 {
        let t = try eventType(type)
        guard let cb else { throw invalid("cb is NULL") }
        let client = try db.open()
        try query.validate()
        let c = UncheckedContext(ctx)
        return try Listeners.start(db, client, ctx, ctxFree, onGone: { TreeObservers.forget($0) }) { id, token in
            // Its location is known before the first event (remove_observer inside it works).
            record(id, path)
            do {
                _ = try client.treeObserve(path, query: query, type: t, token: token) { event in
                    switch event {
                    case .event(_, let snap, let prev):
                        let s = CTreeSnapshot(snap)
                        withExtendedLifetime(s) {
                            if let prev { prev.withCString { cb(c.value, unretained(s), $0, nil) } }
                            else { cb(c.value, unretained(s), nil, nil) }
                        }
                    case .cancelled(let e):
                        var ev = errorValue(e)
                        cb(c.value, nil, nil, &ev)
                    }
                }
            } catch {
                forget(id)
                throw error
            }
        }
    }

    /// Removes every observer at `path` (of `query` only, when given).
    static func removeAll(_ db: DBHandle, _ path: TreePath, _ query: TreeQuery?) {
        guard let client = try? db.open(), let tokens = try? client.treeTokens(at: path, query: query) else { return }
        for t in tokens { t.remove() }
    }
}

@_cdecl("ember_ref_observe")
public func ember_ref_observe(_ r: OpaquePointer?, _ type: Int32, _ cb: ember_tree_event_cb?, _ ctx: UnsafeMutableRawPointer?,
                              _ ctxFree: ember_ctx_free?, _ err: UnsafeMutablePointer<ember_error>?) -> UInt64 {
    wrap(err, 0) {
        let o = try ref(r)
        return try TreeObservers.observe(o.db, o.path, TreeQuery(), type, cb, ctx, ctxFree)
    }
}

@_cdecl("ember_tree_query_observe")
public func ember_tree_query_observe(_ q: OpaquePointer?, _ type: Int32, _ cb: ember_tree_event_cb?, _ ctx: UnsafeMutableRawPointer?,
                                     _ ctxFree: ember_ctx_free?, _ err: UnsafeMutablePointer<ember_error>?) -> UInt64 {
    wrap(err, 0) {
        let o = try treeQuery(q)
        return try TreeObservers.observe(o.db, o.path, o.current, type, cb, ctx, ctxFree)
    }
}

@_cdecl("ember_ref_remove_observer")
public func ember_ref_remove_observer(_ r: OpaquePointer?, _ token: UInt64) {
    guard let o = try? ref(r), TreeObservers.path(token) == o.path else { return }
    Listeners.remove(token)
}

@_cdecl("ember_ref_remove_all_observers")
public func ember_ref_remove_all_observers(_ r: OpaquePointer?) {
    guard let o = try? ref(r) else { return }
    TreeObservers.removeAll(o.db, o.path, nil)
}

@_cdecl("ember_tree_query_remove_all_observers")
public func ember_tree_query_remove_all_observers(_ q: OpaquePointer?) {
    guard let o = try? treeQuery(q) else { return }
    let query = o.current
    TreeObservers.removeAll(o.db, o.path, query.isDefault ? nil : query)
}

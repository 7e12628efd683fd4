import EmberConcurrency
import CEmberABI
import Synchronization
import EmberModel
import EmberCore

// Responsible for: listener tokens: the table from token to the core's ListenerToken, document
// and query listeners, and ember_listener_remove. The core's token gives the guarantee that once
// remove returns the callback is not running and never runs again; ctx_free runs from its onGone.

/// The caller's context and its free function: one per listener (counted as a live object).
final class ListenerContext: Counted {
    let ctx: UnsafeMutableRawPointer?
    let ctxFree: ember_ctx_free?
    /// Who owns `ctx` once the listener is over: 0 undecided; 1 the caller (the listener failed
    /// to start: no ctx_free); 2 this listener, whose onGone called ctx_free. Decided once.
    let owner = Atomic<Int>(0)
    /// Gives `ctx` back to the caller; false when onGone already freed it.
    func abandon() -> Bool { owner.compareExchange(expected: 0, desired: 1, ordering: .acquiringAndReleasing).exchanged }
    init(_ ctx: UnsafeMutableRawPointer?, _ ctxFree: ember_ctx_free?) { self.ctx = ctx; self.ctxFree = ctxFree }
}

enum Listeners {
    private static let lock = Lock()
    nonisolated(unsafe) private static var table: [UInt64: (token: ListenerToken, db: DBHandle)] = [:]
    /// Ids handed out whose listener is starting (not in the table yet), and those of them whose
    /// listener ended before it was recorded.
    nonisolated(unsafe) private static var starting = Set<UInt64>()
    nonisolated(unsafe) private static var goneEarly = Set<UInt64>()
    nonisolated(unsafe) private static var next: UInt64 = 1

    static func newId() -> UInt64 {
        lock.withLock {
            defer { next += 1 }
            starting.insert(next)
            return next
        }
    }

    static func abandon(_ id: UInt64) { _ = lock.withLock { starting.remove(id) } }

    /// Records a started listener; false when it is already gone or its database closed (the
    /// token is then left to the caller, who decides who owns the context before ending it).
    static func insert(_ id: UInt64, _ token: ListenerToken, _ db: DBHandle) -> Bool {
        let kept: Bool = lock.withLock {
            starting.remove(id)
            if goneEarly.remove(id) != nil { return false }
            table[id] = (token, db)
            return true
        }
        if kept && !db.add(id) {
            _ = lock.withLock { table.removeValue(forKey: id) }
            return false
        }
        return kept
    }

    /// Called when the listener is gone (from the token's onGone).
    static func gone(_ id: UInt64) {
        let entry: (token: ListenerToken, db: DBHandle)? = lock.withLock {
            if let e = table.removeValue(forKey: id) { return e }
            if starting.contains(id) { goneEarly.insert(id) }
            return nil
        }
        entry?.db.forget(id)
    }

    /// Idempotent; blocks while the listener's callback runs on another thread.
    static func remove(_ id: UInt64) {
        let entry = lock.withLock { table.removeValue(forKey: id) }
        guard let entry else { return }
        entry.db.forget(id)
        entry.token.remove()
    }

    /// Starts a listener on `query`; `deliver` turns each event into the C callback.
    static func listen(_ db: DBHandle, _ query: Query, flags: UInt32, ctx: UnsafeMutableRawPointer?, ctxFree: ember_ctx_free?,
                       _ deliver: @escaping (UnsafeMutableRawPointer?, ListenEvent) -> Void) throws -> UInt64 {
        let known = UInt32(EMBER_LISTEN_INCLUDE_METADATA_CHANGES) | UInt32(EMBER_LISTEN_SOURCE_CACHE)
        if flags & ~known != 0 { throw invalid("Unknown listen flags 0x\(String(flags & ~known, radix: 16))") }
        let options = ListenOptions(includeMetadataChanges: flags & UInt32(EMBER_LISTEN_INCLUDE_METADATA_CHANGES) != 0,
                                    source: flags & UInt32(EMBER_LISTEN_SOURCE_CACHE) != 0 ? .cache : .default)
        let client = try db.open()
        try query.validateForExecution()
        let c = UncheckedContext(ctx)
        return try start(db, client, ctx, ctxFree) { _, token in
            try client.listen(query, options: options, token: token) { event in deliver(c.value, event) }
        }
    }

    /// Records a new listener's token under a new id, then starts the listener with `begin`. The
    /// token is in the table before the first event can run, so ember_listener_remove(id) works
    /// from inside the first callback (events already due then never run). When `begin` throws,
    /// the listener is removed without calling ctx_free (the caller keeps its context) and the
    /// error is rethrown.
    static func start(_ db: DBHandle, _ client: EmberClient, _ ctx: UnsafeMutableRawPointer?, _ ctxFree: ember_ctx_free?,
                      onGone: ((UInt64) -> Void)? = nil, _ begin: (UInt64, ListenerToken) throws -> Void) throws -> UInt64 {
        let id = newId()
        let context = ListenerContext(ctx, ctxFree)
        let token = client.makeListenerToken(onGone: {
            Listeners.gone(id)
            onGone?(id)
            if context.owner.compareExchange(expected: 0, desired: 2, ordering: .acquiringAndReleasing).exchanged,
               let f = context.ctxFree { f(context.ctx) }
        })
        // Its first callbacks wait until this call returns (the caller then has the token).
        token.holdCallbacksUntilStarted()
        defer { token.started() }
        if !insert(id, token, db) {
            // The database closed meanwhile: the listener does not start, and the context stays
            // the caller's, decided before the token's end can call ctx_free.
            _ = context.abandon()
            token.remove()
            throw EmberError(.failedPrecondition, "The database is closed.")
        }
        do {
            try begin(id, token)
        } catch {
            // The context goes back to the caller unless the listener already ended (the
            // database closed while it started) and its ctx_free ran: then the call succeeds
            // with a listener that is over, so that ctx_free is never called for a failed call.
            let giveBack = context.abandon()
            remove(id)
            token.remove()
            if giveBack { throw error }
        }
        return id
    }
}

@_cdecl("ember_doc_listen")
public func ember_doc_listen(_ db: OpaquePointer?, _ path: UnsafePointer<CChar>?, _ flags: UInt32,
                             _ cb: ember_document_listener_cb?, _ ctx: UnsafeMutableRawPointer?, _ ctxFree: ember_ctx_free?,
                             _ err: UnsafeMutablePointer<ember_error>?) -> UInt64 {
    wrap(err, 0) {
        let handle = try object(db, DBHandle.self, "db")
        let key = try documentKey(path)
        guard let cb else { throw invalid("cb is NULL") }
        return try Listeners.listen(handle, Query(document: key), flags: flags, ctx: ctx, ctxFree: ctxFree) { ctx, event in
            switch event {
            case .snapshot(let s):
                let d = CDocument(key: key, document: s.documents.first, fromCache: s.isFromCache)
                withExtendedLifetime(d) { cb(ctx, unretained(d), nil) }
            case .error(let e):
                var ev = errorValue(e)
                cb(ctx, nil, &ev)
            }
        }
    }
}

@_cdecl("ember_query_listen")
public func ember_query_listen(_ q: OpaquePointer?, _ flags: UInt32,
                               _ cb: ember_query_listener_cb?, _ ctx: UnsafeMutableRawPointer?, _ ctxFree: ember_ctx_free?,
                               _ err: UnsafeMutablePointer<ember_error>?) -> UInt64 {
    wrap(err, 0) {
        let query = try object(q, CQuery.self, "query")
        guard let cb else { throw invalid("cb is NULL") }
        return try Listeners.listen(query.db, query.current, flags: flags, ctx: ctx, ctxFree: ctxFree) { ctx, event in
            switch event {
            case .snapshot(let s):
                let o = CSnapshot(s)
                withExtendedLifetime(o) { cb(ctx, unretained(o), nil) }
            case .error(let e):
                var ev = errorValue(e)
                cb(ctx, nil, &ev)
            }
        }
    }
}

@_cdecl("ember_listener_remove")
public func ember_listener_remove(_ token: UInt64) {
    Listeners.remove(token)
}

import EmberConcurrency
import CEmberABI
import EmberModel
import EmberCore

// Responsible for: ember_db: opening (settings; a host in Remote.swift), closing (ending its listeners), releasing,
// the network switch and waiting for pending writes.

/// The object behind `ember_db *`. Queries retain it; its listeners are ended by close().
final class DBHandle: Counted {
    let client: EmberClient
    private let lock = Lock()
    private var listenerTokens = Set<UInt64>()

    init(client: EmberClient) { self.client = client }

    /// The client, or failed-precondition once closed.
    func open() throws -> EmberClient {
        if client.closed { throw EmberError(.failedPrecondition, "The database is closed.") }
        return client
    }

    /// Registers a listener's token; false when the database closed meanwhile.
    func add(_ token: UInt64) -> Bool {
        lock.withLock {
            if client.closed { return false }
            listenerTokens.insert(token)
            return true
        }
    }

    func forget(_ token: UInt64) { _ = lock.withLock { listenerTokens.remove(token) } }

    func close() {
        client.close()
        client.waitForBackgroundWork()
        let tokens: Set<UInt64> = lock.withLock { defer { listenerTokens.removeAll() }; return listenerTokens }
        for t in tokens { Listeners.remove(t) }
    }

    deinit { close() }
}

@_cdecl("ember_settings_init")
public func ember_settings_init(_ s: UnsafeMutablePointer<ember_settings>?) {
    guard let s else { return }
    s.pointee = ember_settings(path: nil, persistence: true, cache_size_bytes: 104_857_600, host: nil, ssl: true,
                              ssl_ca_file: nil, auth_token: nil, database_host: nil)
}

@_cdecl("ember_db_open")
public func ember_db_open(_ settings: UnsafePointer<ember_settings>?, _ err: UnsafeMutablePointer<ember_error>?) -> OpaquePointer? {
    wrap(err, nil) { retained(DBHandle(client: try openClient(settings))) }
}
@_cdecl("ember_db_close")
public func ember_db_close(_ db: OpaquePointer?, _ err: UnsafeMutablePointer<ember_error>?) -> Bool {
    wrap(err, false) {
        try object(db, DBHandle.self, "db").close()
        return true
    }
}

@_cdecl("ember_db_release")
public func ember_db_release(_ db: OpaquePointer?) {
    guard let db else { return }
    let u = Unmanaged<DBHandle>.fromOpaque(UnsafeRawPointer(db))
    u.takeUnretainedValue().close()
    u.release()
}

@_cdecl("ember_db_disable_network")
public func ember_db_disable_network(_ db: OpaquePointer?, _ err: UnsafeMutablePointer<ember_error>?) -> Bool {
    wrap(err, false) { try object(db, DBHandle.self, "db").open().disableNetwork(); return true }
}

@_cdecl("ember_db_enable_network")
public func ember_db_enable_network(_ db: OpaquePointer?, _ err: UnsafeMutablePointer<ember_error>?) -> Bool {
    wrap(err, false) { try object(db, DBHandle.self, "db").open().enableNetwork(); return true }
}

/// A write completion as a Swift closure calling the C callback (nil when cb is NULL).
func writeCompletion(_ cb: ember_write_cb?, _ ctx: UnsafeMutableRawPointer?) -> (@Sendable (EmberError?) -> Void)? {
    guard let cb else { return nil }
    let c = UncheckedContext(ctx)
    return { e in
        var ev = errorValue(e)
        cb(c.value, &ev)
    }
}

/// A caller's context pointer carried into closures that run on other threads: the C caller
/// hands it over with the callback, and only the callback uses it.
typealias UncheckedContext = HandedOver<UnsafeMutableRawPointer?>

@_cdecl("ember_db_wait_for_pending_writes")
public func ember_db_wait_for_pending_writes(_ db: OpaquePointer?, _ cb: ember_write_cb?, _ ctx: UnsafeMutableRawPointer?,
                                             _ err: UnsafeMutablePointer<ember_error>?) -> Bool {
    wrap(err, false) {
        let client = try object(db, DBHandle.self, "db").open()
        if let done = writeCompletion(cb, ctx) {
            try client.waitForPendingWrites(done)
            return true
        }
        if client.events.isCurrent {
            throw EmberError(.failedPrecondition, "ember_db_wait_for_pending_writes with a NULL callback would block the event thread it waits for; pass a callback")
        }
        let sem = Semaphore()
        let box = LockedValueBox<EmberError?>(nil)
        try client.waitForPendingWrites { e in box.withLockedValue { $0 = e }; sem.signal() }
        sem.wait()
        if let e = box.current { throw e }
        return true
    }
}

/// ember_db_list_collection_ids: the collections under a document (or the root) as an array of
/// ids in `format` (an owned buffer).
@_cdecl("ember_db_list_collection_ids")
public func ember_db_list_collection_ids(_ db: OpaquePointer?, _ parent: UnsafePointer<CChar>?, _ format: Int32,
                                         _ outLen: UnsafeMutablePointer<Int>?,
                                         _ err: UnsafeMutablePointer<ember_error>?) -> UnsafeMutablePointer<CChar>? {
    wrap(err, nil) {
        let client = try object(db, DBHandle.self, "db").open()
        try checkFormat(format)
        let path: ResourcePath
        if let parent, parent.pointee != 0 {
            path = try DocumentKey(parsing: try text(parent, "parent")).path
        } else {
            path = ResourcePath(segments: [])
        }
        let ids = try client.collectionIds(under: path)
        return try encode(.array(ids.map { .string($0) }), format, outLen)
    }
}

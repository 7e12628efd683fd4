import CEmberABI
import EmberModel
import EmberCore

// Responsible for: durable storage through the C ABI: ember_settings as
// EmberOptions, the offline index manager (configuration JSON, auto-creation, delete all) and
// ember_clear_persistence. Opening itself is ember_db_open (Database.swift).

/// `settings` (NULL: defaults) as the core's options: a path opens SQLite storage; persistence
/// false keeps the client's cache in memory; a cache size of 0 is the default (100 MiB).
func options(_ settings: UnsafePointer<ember_settings>?) throws -> EmberOptions {
    var o = EmberOptions()
    guard let s = settings?.pointee else { return o }
    let size = s.cache_size_bytes
    if size != 0 && size != EmberOptions.cacheSizeUnlimited && size < EmberOptions.minimumCacheSizeBytes {
        throw invalid("cache_size_bytes must be at least 1 MiB (1048576) or EMBER_CACHE_SIZE_UNLIMITED, got \(size)")
    }
    if size != 0 { o.cacheSizeBytes = size }
    if let p = s.path {
        let path = try text(p, "settings.path")
        if path.isEmpty { throw invalid("settings.path is empty; pass NULL for an in-memory database") }
        o.path = path
    }
    o.persistence = s.persistence
    return o
}

@_cdecl("ember_db_set_index_configuration")
public func ember_db_set_index_configuration(_ db: OpaquePointer?, _ json: UnsafePointer<CChar>?,
                                             _ err: UnsafeMutablePointer<ember_error>?) -> Bool {
    wrap(err, false) {
        let client = try object(db, DBHandle.self, "db").open()
        try client.setIndexConfiguration(json: try text(json, "json"))
        return true
    }
}

@_cdecl("ember_db_index_auto_creation")
public func ember_db_index_auto_creation(_ db: OpaquePointer?, _ enable: Bool, _ err: UnsafeMutablePointer<ember_error>?) -> Bool {
    wrap(err, false) {
        try object(db, DBHandle.self, "db").open().setIndexAutoCreation(enable)
        return true
    }
}

@_cdecl("ember_db_delete_all_indexes")
public func ember_db_delete_all_indexes(_ db: OpaquePointer?, _ err: UnsafeMutablePointer<ember_error>?) -> Bool {
    wrap(err, false) {
        try object(db, DBHandle.self, "db").open().deleteAllIndexes()
        return true
    }
}

@_cdecl("ember_db_index_count")
public func ember_db_index_count(_ db: OpaquePointer?, _ err: UnsafeMutablePointer<ember_error>?) -> Int64 {
    wrap(err, -1) { Int64(try object(db, DBHandle.self, "db").open().indexes.count) }
}

@_cdecl("ember_db_is_persistent")
public func ember_db_is_persistent(_ db: OpaquePointer?) -> Bool {
    guard let db, let c = try? object(db, DBHandle.self, "db").open() else { return false }
    return c.isPersistent
}

@_cdecl("ember_clear_persistence")
public func ember_clear_persistence(_ path: UnsafePointer<CChar>?, _ err: UnsafeMutablePointer<ember_error>?) -> Bool {
    wrap(err, false) {
        let p = try text(path, "path")
        if p.isEmpty { throw invalid("path is empty") }
        try EmberClient.clearPersistence(path: p)
        return true
    }
}

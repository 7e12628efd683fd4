import CSQLite
import EmberModel
#if canImport(Glibc)
import Glibc
#endif

/// Responsible for: one SQLite connection: opening it, running statements, caching prepared
/// statements by SQL text, and turning SQLite result codes into `EmberError`s (corruption is
/// `dataLoss`, a busy or locked file `failedPrecondition`, I/O and permission problems
/// `unavailable`/`permissionDenied`). Not thread-safe: `SQLitePersistence` serializes access.
///
///     let db = try SQLiteDatabase(path: "/tmp/x.ember")
///     try db.exec("CREATE TABLE t(a)")
///     let st = try db.statement("SELECT a FROM t WHERE a = ?"); st.bind(1, Int64(3))
final class SQLiteDatabase {
    let handle: OpaquePointer
    let path: String
    private var cache: [String: SQLiteStatement] = [:]

    init(path: String, readOnly: Bool = false) throws {
        var h: OpaquePointer?
        let flags = (readOnly ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)) | SQLITE_OPEN_NOMUTEX
        let rc = sqlite3_open_v2(path, &h, flags, nil)
        guard rc == SQLITE_OK, let handle = h else {
            let msg = h.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            let sys = h.map { sqlite3_system_errno($0) } ?? 0
            if let h { sqlite3_close_v2(h) }
            throw SQLiteDatabase.error(rc, msg, path: path, systemErrno: sys)
        }
        self.handle = handle
        self.path = path
        sqlite3_extended_result_codes(handle, 1)
        let frc = SQLiteRowFilter.register(on: handle)
        guard frc == SQLITE_OK else {
            defer { sqlite3_close_v2(handle) }
            throw SQLiteDatabase.error(frc, String(cString: sqlite3_errmsg(handle)), path: path, systemErrno: 0)
        }
    }

    func close() {
        for st in cache.values { st.finalize() }
        cache.removeAll()
        sqlite3_close_v2(handle)
    }

    /// Runs one or more statements without results.
    /// True when no transaction is open (SQLite rolls one back by itself after some errors).
    var autocommit: Bool { sqlite3_get_autocommit(handle) != 0 }

    /// True when the file was removed or replaced since it was opened (what SQLite writes then
    /// goes to an unlinked file and is lost at close).
    var fileHasMoved: Bool {
        var moved: Int32 = 0
        return sqlite3_file_control(handle, "main", SQLITE_FCNTL_HAS_MOVED, &moved) == SQLITE_OK && moved != 0
    }

    func exec(_ sql: String) throws {
        var err: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &err)
        if rc != SQLITE_OK {
            let msg = err.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(handle))
            sqlite3_free(err)
            throw SQLiteDatabase.error(rc, msg, path: path, systemErrno: sqlite3_system_errno(handle))
        }
    }

    /// A prepared statement from the cache (reset, bindings cleared), prepared on first use.
    func statement(_ sql: String) throws -> SQLiteStatement {
        if let st = cache[sql] {
            st.reset()
            return st
        }
        var p: OpaquePointer?
        let rc = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &p, nil)
        guard rc == SQLITE_OK, let p else { throw lastError(rc) }
        let st = SQLiteStatement(db: self, p)
        cache[sql] = st
        return st
    }

    /// The statement of `q`, prepared on first use and kept in `q` (no lookup by SQL text). It is
    /// only reset: the caller binds every parameter.
    @inline(__always)
    func statement(_ q: SQL) throws -> SQLiteStatement {
        if let st = q.prepared { return st }
        let st = try statement(q.text)
        q.prepared = st
        return st
    }

    /// The first column of the first row of `sql` as an integer (nil when there is no row).
    func scalarInt(_ sql: String, _ args: [SQLiteArg] = []) throws -> Int64? {
        let st = try statement(sql)
        defer { st.reset() }
        for (i, a) in args.enumerated() { st.bind(Int32(i + 1), a) }
        return try st.step() ? (st.isNull(0) ? nil : st.int(0)) : nil
    }

    func run(_ sql: String, _ args: [SQLiteArg] = []) throws {
        let st = try statement(sql)
        defer { st.reset() }
        for (i, a) in args.enumerated() { st.bind(Int32(i + 1), a) }
        while try st.step() {}
    }

    /// Runs `q`, a statement without parameters or rows (BEGIN, COMMIT), prepared once: `exec`
    /// would parse it again on every call (a fifth of a one-document commit's instructions).
    func run(_ q: SQL) throws {
        let st = try statement(q)
        defer { st.reset() }
        while try st.step() {}
    }

    var changes: Int { Int(sqlite3_changes(handle)) }

    func lastError(_ rc: Int32) -> EmberError {
        SQLiteDatabase.error(rc, String(cString: sqlite3_errmsg(handle)), path: path, systemErrno: sqlite3_system_errno(handle))
    }

    /// The EmberError for SQLite result `rc`. `systemErrno` (the OS error behind an I/O error)
    /// tells a full disk (ENOSPC, EDQUOT: resource-exhausted) and a read-only or vanished file
    /// (EROFS, EACCES, EPERM: permission-denied) from other I/O errors (unavailable).
    static func error(_ rc: Int32, _ message: String, path: String, systemErrno: Int32 = 0) -> EmberError {
        let primary = rc & 0xFF
        if primary == SQLITE_IOERR || primary == SQLITE_CANTOPEN {
            // SQLite keeps the OS error only until the next system call; when it is gone, the
            // file system itself tells a read-only mount or a full disk from other I/O errors.
            var errno = systemErrno
            if errno == 0 || errno == EIO {
                var fs = statvfs()
                let dir = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
                if statvfs(dir.isEmpty ? "/" : dir, &fs) == 0 {
                    if fs.f_flag & UInt(ST_RDONLY) != 0 { errno = EROFS } else if fs.f_bavail == 0 { errno = ENOSPC }
                }
            }
            switch errno {
            case ENOSPC, EDQUOT:
                return EmberError(.resourceExhausted, "The disk holding '\(path)' is full (\(message)).")
            case EROFS, EACCES, EPERM:
                return EmberError(.permissionDenied, "The database '\(path)' is not writable (\(message): \(String(cString: strerror(systemErrno)))).")
            default: break
            }
        }
        switch primary {
        case SQLITE_CORRUPT, SQLITE_NOTADB:
            return EmberError(.dataLoss, "The database file '\(path)' is corrupted (\(message)). Restore it from a copy or delete it and clear persistence.")
        case SQLITE_BUSY, SQLITE_LOCKED:
            return EmberError(.failedPrecondition, "The database '\(path)' is locked by another connection (\(message)).")
        case SQLITE_CANTOPEN:
            return EmberError(.unavailable, "Cannot open the database file '\(path)' (\(message)): check that its directory exists and is writable.")
        case SQLITE_READONLY, SQLITE_PERM, SQLITE_AUTH:
            return EmberError(.permissionDenied, "The database '\(path)' is not writable (\(message)).")
        case SQLITE_FULL:
            return EmberError(.resourceExhausted, "The disk holding '\(path)' is full (\(message)).")
        case SQLITE_IOERR:
            let cause = systemErrno != 0 ? ": " + String(cString: strerror(systemErrno)) : ""
            return EmberError(.unavailable, "I/O error on the database '\(path)' (\(message)\(cause)).")
        default:
            return EmberError(.internal, "SQLite error \(rc) on '\(path)': \(message)")
        }
    }
}

/// Responsible for: one SQL text of a store and its prepared statement (on the store's single
/// connection; finalized with it), so hot paths neither rebuild the text nor look it up.
final class SQL {
    let text: String
    fileprivate var prepared: SQLiteStatement?
    init(_ text: String) { self.text = text }
}

/// A value bound to a statement parameter.
enum SQLiteArg {
    case int(Int64)
    case text(String)
    case blob([UInt8])
    case null
}

/// Responsible for: one prepared statement: binding parameters, stepping, reading columns.
/// Text and blobs are bound as transient copies (SQLite copies them before the call returns).
final class SQLiteStatement {
    unowned let db: SQLiteDatabase
    let p: OpaquePointer

    init(db: SQLiteDatabase, _ p: OpaquePointer) {
        self.db = db
        self.p = p
    }

    func finalize() { sqlite3_finalize(p) }

    func reset() {
        sqlite3_reset(p)
        sqlite3_clear_bindings(p)
    }

    static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    func bind(_ i: Int32, _ a: SQLiteArg) {
        switch a {
        case .int(let v): sqlite3_bind_int64(p, i, v)
        case .text(let s): bind(i, s)
        case .blob(let b): bind(i, b)
        case .null: sqlite3_bind_null(p, i)
        }
    }

    func bind(_ i: Int32, _ v: Int64) { sqlite3_bind_int64(p, i, v) }

    /// Binds bytes SQLite does not copy: they must stay valid until the statement is reset.
    func bindStatic(_ i: Int32, _ r: UnsafeRawBufferPointer) {
        if r.count == 0 { _ = sqlite3_bind_zeroblob(p, i, 0) }
        else { _ = sqlite3_bind_blob(p, i, r.baseAddress, Int32(r.count), nil) }
    }

    /// Only rewinds (bindings kept), for statements whose every parameter is bound again.
    @inline(__always)
    func rewind() { sqlite3_reset(p) }

    /// Binds UTF-8 text SQLite does not copy: it must stay valid while the statement runs, and
    /// the parameter must be bound again before the statement runs after that (as every
    /// statement here is: all parameters are bound for each use).
    func bindStatic(_ i: Int32, text u: UnsafeBufferPointer<UInt8>) {
        // A zero-length text still needs a non-NULL pointer to be text rather than NULL.
        let base = u.baseAddress.map { UnsafeRawPointer($0) } ?? UnsafeRawPointer(SQLiteStatement.emptyText)
        _ = sqlite3_bind_text(p, i, base.assumingMemoryBound(to: CChar.self), Int32(u.count), nil)
    }

    /// One zero byte, never written after it is made.
    nonisolated(unsafe) private static let emptyText: UnsafeMutablePointer<UInt8> = {
        let p = UnsafeMutablePointer<UInt8>.allocate(capacity: 1)
        p.initialize(to: 0)
        return p
    }()

    func bind(_ i: Int32, _ s: String) {
        var s = s
        s.withUTF8 { u in
            _ = sqlite3_bind_text(p, i, UnsafeRawPointer(u.baseAddress!).assumingMemoryBound(to: CChar.self), Int32(u.count), SQLiteStatement.transient)
        }
    }

    func bind(_ i: Int32, _ b: [UInt8]) {
        b.withUnsafeBytes { r in
            // A zero-length blob needs a non-NULL pointer to be a blob rather than NULL.
            if r.count == 0 { _ = sqlite3_bind_zeroblob(p, i, 0) }
            else { _ = sqlite3_bind_blob(p, i, r.baseAddress, Int32(r.count), SQLiteStatement.transient) }
        }
    }

    /// Advances: true when a row is available, false when done; throws on errors.
    func step() throws -> Bool {
        let rc = sqlite3_step(p)
        if rc == SQLITE_ROW { return true }
        if rc == SQLITE_DONE { return false }
        let e = db.lastError(rc)
        sqlite3_reset(p)
        throw e
    }

    func isNull(_ c: Int32) -> Bool { sqlite3_column_type(p, c) == SQLITE_NULL }
    func int(_ c: Int32) -> Int64 { sqlite3_column_int64(p, c) }

    func text(_ c: Int32) -> String {
        guard let t = sqlite3_column_text(p, c) else { return "" }
        let n = Int(sqlite3_column_bytes(p, c))
        return String(decoding: UnsafeBufferPointer(start: t, count: n), as: UTF8.self)
    }

    /// The column's bytes, valid until the next step/reset (no copy).
    func blob(_ c: Int32) -> UnsafeBufferPointer<UInt8> {
        let n = Int(sqlite3_column_bytes(p, c))
        guard n > 0, let b = sqlite3_column_blob(p, c) else { return UnsafeBufferPointer(start: nil, count: 0) }
        return UnsafeBufferPointer(start: b.assumingMemoryBound(to: UInt8.self), count: n)
    }

    func blobArray(_ c: Int32) -> [UInt8] { Array(blob(c)) }
    /// The size in bytes of column c's text or blob.
    func byteCount(_ c: Int32) -> Int { Int(sqlite3_column_bytes(p, c)) }
}

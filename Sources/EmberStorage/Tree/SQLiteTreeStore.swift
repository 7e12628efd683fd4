import CSQLite
import EmberModel

/// Responsible for: a Realtime-Database tree in a SQLite table of (path, leaf value) rows. A path
/// is stored as its segments' UTF-8 bytes each followed by 0x01 (keys never contain control
/// characters), so the rows of a subtree are exactly the rows whose path starts with the
/// subtree's bytes: one range of the primary key. A read is that range scan; a write deletes
/// the range and the leaf rows of the path's ancestors (a leaf on the way becomes an object) and
/// inserts the new value's leaves: both cost what the subtree costs. Leaves keep their SQLite
/// type (integer, real, text); booleans are a one-byte blob. Runs under the persistence's lock;
/// callers group writes in `runTransaction`.
///
///     let s = SQLiteTreeStore(persistence: p, table: "tree_backend")
///     p.runTransaction("w") { s.write(path, .int(1)) }
final class SQLiteTreeStore: TreeStore {
    unowned let persistence: SQLitePersistence
    let table: String
    private let selectAll: String, selectRange: String, deleteAll: String, deleteRange: String
    private let deleteExact: String, insert: String, existsAll: String, existsRange: String

    init(persistence: SQLitePersistence, table: String) {
        self.persistence = persistence
        self.table = table
        selectAll = "SELECT path, v FROM \(table)"
        selectRange = "SELECT path, v FROM \(table) WHERE path >= ?1 AND path < ?2"
        deleteAll = "DELETE FROM \(table)"
        deleteRange = "DELETE FROM \(table) WHERE path >= ?1 AND path < ?2"
        deleteExact = "DELETE FROM \(table) WHERE path = ?1"
        insert = "INSERT OR REPLACE INTO \(table)(path, v) VALUES(?1, ?2)"
        existsAll = "SELECT 1 FROM \(table) LIMIT 1"
        existsRange = "SELECT 1 FROM \(table) WHERE path >= ?1 AND path < ?2 LIMIT 1"
    }

    static func createSchema(_ db: SQLiteDatabase, table: String) throws {
        try db.exec("CREATE TABLE IF NOT EXISTS \(table)(path BLOB PRIMARY KEY, v) WITHOUT ROWID")
    }

    // MARK: path bytes

    static func encode(_ p: TreePath) -> [UInt8] {
        var out: [UInt8] = []
        for s in p.segments { out.append(contentsOf: s.utf8); out.append(1) }
        return out
    }

    /// The first byte string after every path below `prefix` (a non-root path's bytes end in 0x01).
    static func upper(_ prefix: [UInt8]) -> [UInt8] {
        var u = prefix
        u[u.count - 1] = 2
        return u
    }

    // MARK: TreeStore

    func read(_ path: TreePath) -> TreeValue {
        persistence.access(.null) { db in
            let prefix = SQLiteTreeStore.encode(path)
            let st: SQLiteStatement
            if path.isRoot { st = try db.statement(selectAll) } else {
                st = try db.statement(selectRange)
                st.bind(1, prefix)
                st.bind(2, SQLiteTreeStore.upper(prefix))
            }
            defer { st.reset() }
            var result = TreeValue.null
            var segs: [String] = []
            while try st.step() {
                let bytes = st.blob(0)
                segs.removeAll(keepingCapacity: true)
                var start = prefix.count
                for i in prefix.count..<bytes.count where bytes[i] == 1 {
                    segs.append(String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<i]), as: UTF8.self))
                    start = i + 1
                }
                let v = try leaf(st)
                result.set(segs[...], v)
            }
            return result
        }
    }

    func write(_ path: TreePath, _ value: TreeValue) {
        persistence.access(()) { db in
            let prefix = SQLiteTreeStore.encode(path)
            if path.isRoot { try db.run(deleteAll) } else {
                try db.run(deleteRange, [.blob(prefix), .blob(SQLiteTreeStore.upper(prefix))])
            }
            guard value.exists else { return }
            // A leaf at an ancestor is replaced by the object this write creates.
            var anc: [UInt8] = []
            try db.run(deleteExact, [.blob(anc)])
            for s in path.segments.dropLast() {
                anc.append(contentsOf: s.utf8); anc.append(1)
                try db.run(deleteExact, [.blob(anc)])
            }
            let st = try db.statement(insert)
            var buf = prefix
            try insertLeaves(value, &buf, st)
        }
    }

    private func insertLeaves(_ v: TreeValue, _ buf: inout [UInt8], _ st: SQLiteStatement) throws {
        switch v {
        case .null: return
        case .object(let o):
            let n = buf.count
            for (k, c) in o.children {
                buf.append(contentsOf: k.s.utf8); buf.append(1)
                try insertLeaves(c, &buf, st)
                buf.removeSubrange(n...)
            }
        default:
            st.reset()
            st.bind(1, buf)
            switch v {
            case .bool(let b): st.bind(2, [b ? 1 : 0] as [UInt8])
            case .int(let i): st.bind(2, i)
            case .double(let d): sqlite3_bind_double(st.p, 2, d)
            case .string(let s): st.bind(2, s)
            default: break
            }
            while try st.step() {}
        }
    }

    private func leaf(_ st: SQLiteStatement) throws -> TreeValue {
        switch sqlite3_column_type(st.p, 1) {
        case SQLITE_INTEGER: return .int(st.int(1))
        case SQLITE_FLOAT: return .double(sqlite3_column_double(st.p, 1))
        case SQLITE_TEXT: return .string(st.text(1))
        case SQLITE_BLOB:
            let b = st.blob(1)
            guard b.count == 1 else { throw TreeCodec.damaged }
            return .bool(b[0] != 0)
        default: throw TreeCodec.damaged
        }
    }

    var leafCount: Int {
        persistence.access(0) { db in Int(try db.scalarInt("SELECT count(*) FROM \(table)") ?? 0) }
    }

    func exists(_ path: TreePath) -> Bool {
        persistence.access(false) { db in
            if path.isRoot { return try db.scalarInt(existsAll) != nil }
            let prefix = SQLiteTreeStore.encode(path)
            return try db.scalarInt(existsRange, [.blob(prefix), .blob(SQLiteTreeStore.upper(prefix))]) != nil
        }
    }
}

/// Responsible for: the client's durable tree state in the SQLite file: the cache
/// (`tree_cache` rows, as the backend's `tree_backend`), the complete paths (`tree_complete`) and
/// the pending writes (`tree_writes`, one row per write in `TreeCodec` bytes, so a write is
/// queued whole or not at all).
final class SQLiteClientTree: ClientTreeStore {
    unowned let persistence: SQLitePersistence
    let cacheStore: SQLiteTreeStore
    var cache: TreeStore { cacheStore }
    static let lastWriteKey = "tree.lastWriteId"

    init(persistence: SQLitePersistence) {
        self.persistence = persistence
        cacheStore = SQLiteTreeStore(persistence: persistence, table: "tree_cache")
    }

    func completePaths() -> [TreePath] {
        persistence.access([]) { db in
            let st = try db.statement("SELECT path FROM tree_complete")
            defer { st.reset() }
            var out: [TreePath] = []
            while try st.step() {
                let b = st.blob(0)
                var segs: [String] = []
                var start = 0
                for i in 0..<b.count where b[i] == 1 {
                    segs.append(String(decoding: UnsafeBufferPointer(rebasing: b[start..<i]), as: UTF8.self))
                    start = i + 1
                }
                out.append(TreePath(unchecked: segs))
            }
            return out
        }
    }

    func markComplete(_ path: TreePath) {
        persistence.access(()) { db in
            // Already covered by an ancestor (or itself)?
            var anc: [UInt8] = []
            if try db.scalarInt("SELECT 1 FROM tree_complete WHERE path = ?1", [.blob(anc)]) != nil { return }
            for s in path.segments {
                anc.append(contentsOf: s.utf8); anc.append(1)
                if try db.scalarInt("SELECT 1 FROM tree_complete WHERE path = ?1", [.blob(anc)]) != nil { return }
            }
            let prefix = SQLiteTreeStore.encode(path)
            if path.isRoot { try db.run("DELETE FROM tree_complete") } else {
                try db.run("DELETE FROM tree_complete WHERE path >= ?1 AND path < ?2", [.blob(prefix), .blob(SQLiteTreeStore.upper(prefix))])
            }
            try db.run("INSERT INTO tree_complete(path) VALUES(?1)", [.blob(prefix)])
        }
    }

    func pendingWrites() -> [(id: Int64, ops: [TreeWriteOp])] {
        persistence.access([]) { db in
            let st = try db.statement("SELECT write_id, data FROM tree_writes ORDER BY write_id")
            defer { st.reset() }
            var out: [(id: Int64, ops: [TreeWriteOp])] = []
            while try st.step() {
                do { out.append((st.int(0), try TreeCodec.decodeOps(st.blob(1)))) } catch { persistence.record(error) }
            }
            return out
        }
    }

    func addPendingWrite(id: Int64, _ ops: [TreeWriteOp]) {
        persistence.access(()) { db in
            try db.run("INSERT OR REPLACE INTO tree_writes(write_id, data) VALUES(?1, ?2)", [.int(id), .blob(TreeCodec.encode(ops))])
            try db.run("INSERT INTO meta(key, value) VALUES(?1, ?2) ON CONFLICT(key) DO UPDATE SET value = max(value, excluded.value)", [.text(SQLiteClientTree.lastWriteKey), .int(id)])
        }
    }

    func noteWriteId(_ id: Int64) {
        persistence.access(()) { db in
            try db.run("INSERT INTO meta(key, value) VALUES(?1, ?2) ON CONFLICT(key) DO UPDATE SET value = max(value, excluded.value)", [.text(SQLiteClientTree.lastWriteKey), .int(id)])
        }
    }

    func removePendingWrite(id: Int64) {
        persistence.access(()) { db in try db.run("DELETE FROM tree_writes WHERE write_id = ?1", [.int(id)]) }
    }

    func lastWriteId() -> Int64 {
        persistence.access(0) { db in
            max(try db.scalarInt("SELECT value FROM meta WHERE key = ?1", [.text(SQLiteClientTree.lastWriteKey)]) ?? 0,
                try db.scalarInt("SELECT MAX(write_id) FROM tree_writes") ?? 0)
        }
    }
}

/// Responsible for: the tree's tables in the durable file and the stores over them (created
/// when missing, so files written before the tree was durable open unchanged).
final class SQLiteTreeTables {
    let backend: SQLiteTreeStore
    let client: SQLiteClientTree

    init(persistence: SQLitePersistence, db: SQLiteDatabase) throws {
        try SQLiteTreeStore.createSchema(db, table: "tree_backend")
        try SQLiteTreeStore.createSchema(db, table: "tree_cache")
        try db.exec("""
            CREATE TABLE IF NOT EXISTS tree_complete(path BLOB PRIMARY KEY) WITHOUT ROWID;
            CREATE TABLE IF NOT EXISTS tree_writes(write_id INTEGER PRIMARY KEY, data BLOB NOT NULL);
            """)
        backend = SQLiteTreeStore(persistence: persistence, table: "tree_backend")
        client = SQLiteClientTree(persistence: persistence)
    }
}

extension SQLitePersistence {
    public var backendTree: TreeStore? { tree.backend }
    public var clientTree: ClientTreeStore? { tree.client }
}

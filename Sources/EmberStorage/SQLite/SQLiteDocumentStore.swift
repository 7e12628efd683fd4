import EmberModel

/// Responsible for: documents (and tombstones) in one SQLite table keyed by (parent collection
/// path, id), its collections listed by group in the `collections` table for group scans (one
/// row per collection rather than an index entry per document), each entry's size
/// and LRU sequence number for the bounded cache, and — for the client's cache — the offline
/// indexes kept up to date on every put and remove. Fields are stored with `ValueMessagePack`.
///
///     let store = persistence.remoteDocuments; store.put(doc); store.get(doc.key)
final class SQLiteDocumentStore: DocumentStore {
    unowned let persistence: SQLitePersistence
    let table: String
    let indexes: SQLiteIndexManager?
    private let selectColumns = "parent, id, present, version, create_time, update_time, data"

    // The hot statements, their SQL built once (see `SQL`).
    private let sqlGet: SQL, sqlVersion: SQL, sqlPut: SQL, sqlPutIfNewer: SQL, sqlInsertIfAbsent: SQL, sqlDelete: SQL
    private let sqlInCollection: SQL, sqlInCollectionAdmitted: SQL, sqlParentsInGroup: SQL, sqlAddParent: SQL
    /// Parents known to be in the `collections` table (bounded; a miss costs one INSERT OR IGNORE).
    private var knownParents = Set<UTF8String>()
    /// An upper bound of `byteSize` once computed (puts add their size, removes leave it), so the
    /// collector need not sum the table while the cache is under its threshold.
    private var bytesUpperBound: Int64?
    /// Rows recently read or written through this store, in a small table placed by the key's
    /// hash (a newer row takes the slot; an inner nil: no row), so the several reads of one
    /// write's document (the local apply, the commit's before-state, the acknowledgement's
    /// refresh) cost one seek, not four. Every write of a row goes through this store and
    /// updates it; it is used under the persistence lock like the connection, and emptied when a
    /// transaction rolls back (`forgetCachedState`). A row whose fields take more than
    /// `recentMaxBytes` stored is not kept, so the table holds at most a few MiB.
    private var recent = [RecentRow?](repeating: nil, count: SQLiteDocumentStore.recentSlots)
    private struct RecentRow { let key: DocumentKey; let doc: Document? }
    private static let recentSlots = 256, recentMaxBytes = 4096

    init(persistence: SQLitePersistence, table: String, indexes: SQLiteIndexManager?) {
        self.persistence = persistence
        self.table = table
        self.indexes = indexes
        let cols = "parent, id, grp, present, version, create_time, update_time, data, size, seq"
        sqlGet = SQL("SELECT \(selectColumns) FROM \(table) WHERE parent = ?1 AND id = ?2")
        sqlVersion = SQL("SELECT version FROM \(table) WHERE parent = ?1 AND id = ?2")
        let values = "\(table)(\(cols)) VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10)"
        sqlPut = SQL("INSERT OR REPLACE INTO \(values)")
        // Replaces the entry unless it holds a newer version; sqlite3_changes() tells which.
        sqlPutIfNewer = SQL("""
            INSERT INTO \(values)
              ON CONFLICT(parent, id) DO UPDATE SET present = excluded.present, version = excluded.version,
                create_time = excluded.create_time, update_time = excluded.update_time, data = excluded.data,
                size = excluded.size, seq = excluded.seq
              WHERE excluded.version >= \(table).version
            """)
        sqlInsertIfAbsent = SQL("INSERT INTO \(values) ON CONFLICT(parent, id) DO NOTHING")
        sqlDelete = SQL("DELETE FROM \(table) WHERE parent = ?1 AND id = ?2")
        sqlInCollection = SQL("SELECT \(selectColumns) FROM \(table) WHERE parent = ?1")
        sqlInCollectionAdmitted = SQL("SELECT \(selectColumns) FROM \(table) WHERE parent = ?1 AND ember_admits(present, data, ?2)")
        sqlParentsInGroup = SQL("SELECT parent FROM collections WHERE tbl = '\(table)' AND grp = ?1")
        sqlAddParent = SQL("INSERT OR IGNORE INTO collections(tbl, grp, parent) VALUES('\(table)', ?1, ?2)")
    }

    /// The canonical parent path of `key` (no join for a top-level collection).
    @inline(__always)
    static func parent(_ key: DocumentKey) -> String {
        let segs = key.path.segments
        return segs.count == 2 ? segs[0] : key.collectionPath.canonical
    }

    /// Reads a row selected with `selectColumns`; `parents` knows its collection's path when the
    /// caller does, and parses each other one once.
    func row(_ st: SQLiteStatement, parents: inout RowParents) throws -> Document {
        let key = rowKey(st, parents: &parents)
        let version = st.int(3)
        if st.int(2) == 0 { return Document.missing(key, version: version) }
        // Decoded when first read: a result only handed on as bytes, or filtered on a field, never is.
        return Document(key: key, storedFields: st.blobArray(6), version: version, createTime: st.int(4), updateTime: st.int(5))
    }

    /// The key of a row whose columns 0 and 1 are its parent and id.
    func rowKey(_ st: SQLiteStatement, parents: inout RowParents) -> DocumentKey {
        let parent = parents.fixed ?? parents.parent(st.text(0), persistencePath)
        return DocumentKey(unchecked: ResourcePath(segments: parent.path.segments + [st.text(1)]), parentHash: parent.hash)
    }

    func get(_ key: DocumentKey) -> Document? {
        persistence.access(nil) { db in try fetch(key, in: db) }
    }

    func read(_ key: DocumentKey) throws -> Document? {
        try persistence.accessThrowing { db in try fetch(key, in: db) }
    }

    /// The row at `key` (from the recent rows when they hold it); throws a storage error, and
    /// `dataLoss` for stored fields that do not decode.
    private func fetch(_ key: DocumentKey, in db: SQLiteDatabase) throws -> Document? {
        if let r = recentRow(key) { return r.doc }
        let st = try db.statement(sqlGet)
        defer { st.rewind() }
        // The key's text is bound without a copy, for the time of the step.
        var parent = SQLiteDocumentStore.parent(key), id = key.id
        return try parent.withUTF8 { p in
            try id.withUTF8 { i in
                st.bindStatic(1, text: p)
                st.bindStatic(2, text: i)
                var parents = RowParents(key.collectionPath)
                guard try st.step() else {
                    remember(key, nil, bytes: 0)
                    return nil
                }
                let doc = try row(st, parents: &parents)
                // A point read (what writes build on) fails on damaged fields, as the eager
                // decode did, rather than reading them as an empty document.
                if let e = doc.storedFieldsError { throw e }
                remember(key, doc, bytes: st.byteCount(6))
                st.rewind()
                return doc
            }
        }
    }

    func version(of key: DocumentKey) -> Int64? {
        persistence.access(nil) { db in
            let st = try db.statement(sqlVersion)
            defer { st.rewind() }
            st.bind(1, SQLiteDocumentStore.parent(key))
            st.bind(2, key.id)
            return try st.step() ? st.int(0) : nil
        }
    }

    func put(_ doc: Document) {
        persistence.access(()) { db in _ = try write(doc, db.statement(sqlPut), in: db) }
    }

    /// One seek where `get` then `put` would take two: the insert finds the key's place and
    /// stops there when a row holds it. A key the recent rows know to have one answers at once.
    func insertIfAbsent(_ doc: Document) -> Bool {
        persistence.access(false) { db in
            if let r = recentRow(doc.key), r.doc != nil { return false }
            return try write(doc, db.statement(sqlInsertIfAbsent), in: db)
        }
    }

    var insertsWithoutReading: Bool { true }

    /// Forgets the parents known to be in `collections`, the size bound and the recent rows: a
    /// rolled-back transaction may have added or changed them.
    func forgetCachedState() {
        knownParents.removeAll(keepingCapacity: true)
        bytesUpperBound = nil
        for i in recent.indices { recent[i] = nil }
    }

    /// Records what the table holds for `key`, whose stored fields take `bytes` (called with the
    /// persistence lock held).
    @inline(__always)
    private func remember(_ key: DocumentKey, _ doc: Document?, bytes: Int) {
        guard bytes <= SQLiteDocumentStore.recentMaxBytes else { return forget(key) }
        recent[slot(key)] = RecentRow(key: key, doc: doc)
    }

    /// What the recent rows know of `key`, if its slot holds it.
    @inline(__always)
    private func recentRow(_ key: DocumentKey) -> RecentRow? {
        guard let r = recent[slot(key)], r.key == key else { return nil }
        return r
    }

    @inline(__always)
    private func forget(_ key: DocumentKey) {
        let s = slot(key)
        if let r = recent[s], r.key == key { recent[s] = nil }
    }

    @inline(__always)
    private func slot(_ key: DocumentKey) -> Int {
        Int(truncatingIfNeeded: (UInt64(bitPattern: Int64(key.precomputedHash)) &* 0x9E37_79B9_7F4A_7C15) >> 56)
    }

    func putIfNewer(_ doc: Document) -> Bool {
        persistence.access(false) { db in try write(doc, db.statement(sqlPutIfNewer), in: db) }
    }

    /// Runs `st` (sqlPut, sqlPutIfNewer or sqlInsertIfAbsent) for `doc`; true when a row changed (then the indexes follow).
    private func write(_ doc: Document, _ st: SQLiteStatement, in db: SQLiteDatabase) throws -> Bool {
        defer { st.rewind() }
        // Known again only once the row is written: a failure below leaves the key unknown.
        forget(doc.key)
        var parent = SQLiteDocumentStore.parent(doc.key)
        var id = doc.key.id
        var group = doc.key.collectionGroup
        try noteParent(parent, group: group, in: db)
        let blob = doc.exists ? doc.storedFields ?? ValueMessagePack.encode(.map(doc.data)) : []
        let size = Int64(blob.count + parent.utf8.count + id.utf8.count + 48)
        st.bind(4, Int64(doc.exists ? 1 : 0))
        st.bind(5, doc.version)
        st.bind(6, doc.createTime)
        st.bind(7, doc.updateTime)
        st.bind(9, size)
        st.bind(10, persistence.sequence)
        // Text and the blob are bound without a copy, for the time of the step.
        try parent.withUTF8 { p in
            try id.withUTF8 { i in
                try group.withUTF8 { g in
                    try blob.withUnsafeBytes { b in
                        st.bindStatic(1, text: p)
                        st.bindStatic(2, text: i)
                        st.bindStatic(3, text: g)
                        st.bindStatic(8, b)
                        while try st.step() {}
                        st.rewind()   // before the bound bytes go away
                    }
                }
            }
        }
        guard db.changes > 0 else { return false }
        if bytesUpperBound != nil { bytesUpperBound! += size }
        try indexes?.update(doc, in: db)
        // The row as `get` would read it back: a backend state, never local mutations.
        if !doc.hasLocalMutations {
            remember(doc.key, doc.exists ? doc : Document.missing(doc.key, version: doc.version), bytes: blob.count)
        }
        return true
    }

    /// Records `parent` in the `collections` table (group scans read it instead of an index on
    /// every row's group).
    private func noteParent(_ parent: String, group: String, in db: SQLiteDatabase) throws {
        let k = UTF8String(parent)
        if knownParents.contains(k) { return }
        let st = try db.statement(sqlAddParent)
        defer { st.rewind() }
        st.bind(1, group)
        st.bind(2, parent)
        while try st.step() {}
        if knownParents.count >= 4096 { knownParents.removeAll(keepingCapacity: true) }
        knownParents.insert(k)
    }

    func remove(_ key: DocumentKey) {
        persistence.access(()) { db in
            forget(key)
            let st = try db.statement(sqlDelete)
            defer { st.rewind() }
            st.bind(1, SQLiteDocumentStore.parent(key))
            st.bind(2, key.id)
            while try st.step() {}
            try indexes?.remove(key, in: db)
            remember(key, nil, bytes: 0)
        }
    }

    func documents(in collection: ResourcePath) -> [Document] {
        persistence.access([]) { db in
            let st = try db.statement(sqlInCollection)
            defer { st.rewind() }
            st.bind(1, collection.canonical)
            return try rows(st, parentPath: collection)
        }
    }

    func collectionIds(under parent: ResourcePath) -> [String] {
        persistence.access([]) { db in
            let prefix = parent.segments.isEmpty ? "" : parent.canonical + "/"
            let n = parent.segments.count
            let st = try db.statement("SELECT parent FROM collections WHERE tbl = ? AND parent >= ? AND parent < ?")
            defer { st.reset() }
            st.bind(1, table)
            st.bind(2, prefix)
            st.bind(3, prefix + "\u{10FFFF}")
            var candidates: [UTF8String: [String]] = [:]   // id -> collection paths under it
            while try st.step() {
                let path = st.text(0)
                let segs = ResourcePath(segments: splitAtSlashes(path))
                guard segs.count > n, parent.isPrefix(of: segs) else { continue }
                candidates[UTF8String(segs.segments[n]), default: []].append(path)
            }
            var out: [String] = []
            let exists = try db.statement("SELECT 1 FROM \(table) WHERE parent = ? AND present = 1 LIMIT 1")
            defer { exists.reset() }
            for (id, paths) in candidates {
                for p in paths {
                    exists.reset()
                    exists.bind(1, p)
                    if try exists.step() { out.append(id.s); break }
                }
            }
            return sortedDistinctUTF8(out)
        }
    }

    func documents(inGroup id: String) -> [Document] {
        persistence.access([]) { db in
            var out: [Document] = []
            for parent in try parents(inGroup: id, in: db) {
                out += documents(in: persistencePath(parent))
            }
            return out
        }
    }

    /// The existing entries of `collection` (or of every collection of group `group`) that pass
    /// `prefilter` on their encoded fields (all existing entries without one); only those are
    /// decoded. `scanned` counts the rows read. Under the persistence lock.
    func scan(collection: ResourcePath?, group: String?, prefilter: RawPrefilter?, scanned: inout Int, in db: SQLiteDatabase) throws -> [Document] {
        let parents: [String] = try group.map { try self.parents(inGroup: $0, in: db) } ?? [collection!.canonical]
        var out: [Document] = []
        // With filters, SQLite runs them on each row's stored fields (`ember_admits`) and reads
        // the other columns of the rows that pass only.
        let filter = prefilter.map { SQLiteRowFilter($0) }
        let st = try db.statement(filter == nil ? sqlInCollection : sqlInCollectionAdmitted)
        defer { st.reset() }
        for parent in parents {
            var rowParents = RowParents(collection ?? persistencePath(parent))
            st.rewind()
            st.bind(1, parent)
            if let filter { st.bind(2, rowFilter: filter) }
            while try st.step() {
                if filter == nil { scanned += 1 }
                out.append(try row(st, parents: &rowParents))
            }
        }
        st.reset()   // unbinds the filter while it is still alive (used just below)
        scanned += filter?.rowsSeen ?? 0
        return out
    }

    /// The parent paths of the collections named `id` (exact UTF-8 match).
    func parents(inGroup id: String, in db: SQLiteDatabase) throws -> [String] {
        let st = try db.statement(sqlParentsInGroup)
        defer { st.rewind() }
        st.bind(1, id)
        var out: [String] = []
        while try st.step() { out.append(st.text(0)) }
        return out
    }

    func rows(_ st: SQLiteStatement, parentPath: ResourcePath?) throws -> [Document] {
        var out: [Document] = []
        var parents = RowParents(parentPath)
        while try st.step() { out.append(try row(st, parents: &parents)) }
        return out
    }

    func documents(matching query: Query) -> [Document] {
        guard let indexes else {
            if let g = query.collectionGroup { return documents(inGroup: g) }
            return documents(in: query.path)
        }
        return persistence.access([]) { db in try indexes.candidates(for: query, store: self, in: db) }
    }

    /// The documents at `keys` (parent, id pairs from an index), in no particular order.
    func documents(parentIds: [(String, String)], in db: SQLiteDatabase) throws -> [Document] {
        let st = try db.statement("SELECT \(selectColumns) FROM \(table) WHERE parent = ? AND id = ?")
        var out: [Document] = []
        out.reserveCapacity(parentIds.count)
        var parents = RowParents()
        for (p, i) in parentIds {
            st.reset()
            st.bind(1, p)
            st.bind(2, i)
            if try st.step() { out.append(try row(st, parents: &parents)) }
        }
        st.reset()
        return out
    }

    var count: Int {
        persistence.access(0) { db in Int(try db.scalarInt("SELECT count(*) FROM \(table)") ?? 0) }
    }

    // MARK: LRU

    func touch(_ keys: [DocumentKey]) {
        guard !keys.isEmpty else { return }
        // The LRU order is advisory: when it cannot be stored, collection is merely less exact.
        try? persistence.runTransaction("touch") {
            persistence.access(()) { db in
                let st = try db.statement("UPDATE \(table) SET seq = ? WHERE parent = ? AND id = ?")
                for k in keys {
                    st.reset()
                    st.bind(1, persistence.sequence)
                    st.bind(2, k.collectionPath.canonical)
                    st.bind(3, k.id)
                    while try st.step() {}
                }
                st.reset()
            }
        }
    }

    var byteSize: Int64 {
        persistence.access(0) { db in try exactBytes(db) }
    }

    private func exactBytes(_ db: SQLiteDatabase) throws -> Int64 {
        let total = try db.scalarInt("SELECT COALESCE(SUM(size), 0) FROM \(table)") ?? 0
        bytesUpperBound = total
        return total
    }

    func collectGarbage(thresholdBytes: Int64, pinned: (DocumentKey) -> Bool) -> Int {
        // A collection that cannot be stored is rolled back and tried again at the next one.
        (try? persistence.runTransaction("lru gc") {
            persistence.access(0) { db in
                if let bound = bytesUpperBound, bound <= thresholdBytes { return 0 }
                var total = try exactBytes(db)
                guard total > thresholdBytes else { return 0 }
                let st = try db.statement("SELECT parent, id, size FROM \(table) ORDER BY seq")
                var victims: [DocumentKey] = []
                var parents = RowParents()
                while total > thresholdBytes, try st.step() {
                    let key = rowKey(st, parents: &parents)
                    if pinned(key) { continue }
                    victims.append(key)
                    total -= st.int(2)
                }
                st.reset()
                for k in victims { remove(k) }
                bytesUpperBound = total
                return victims.count
            }
        }) ?? 0
    }
}

/// Responsible for: the top-level AND field filters of a query, checked on a document's encoded
/// fields before it is decoded (a scan decodes only the documents that can match). Filters on
/// `__name__` are left to the query. Malformed bytes pass, so the full decode reports them.
struct RawPrefilter {
    let checks: [(segments: [[UInt8]], filter: FieldFilter)]

    init?(_ conjuncts: [FieldFilter]) {
        checks = conjuncts.filter { !$0.field.isDocumentId }.map { f in (f.field.segments.map { Array($0.utf8) }, f) }
        if checks.isEmpty { return nil }
    }

    func admits(_ fields: UnsafeBufferPointer<UInt8>) -> Bool {
        for c in checks {
            let v: Value?
            do { v = try ValueMessagePack.field(c.segments, in: fields) } catch { return true }
            if !c.filter.matches(fieldValue: v) { return false }
        }
        return true
    }
}

/// Responsible for: the collection paths (with their hashes) of the rows one read returns: the
/// caller's when it knows it (`fixed`), else each stored parent text parsed and hashed once.
struct RowParents {
    typealias Parent = (path: ResourcePath, hash: Int)
    let fixed: Parent?
    /// By bytes: canonically equivalent texts ("é", "e\u{301}") are different collections.
    private var known: [UTF8String: Parent] = [:]

    init(_ collection: ResourcePath? = nil) {
        fixed = collection.map { ($0, DocumentKey.parentHash(of: $0)) }
    }

    mutating func parent(_ text: String, _ parse: (String) -> ResourcePath) -> Parent {
        let k = UTF8String(text)
        if let p = known[k] { return p }
        let path = parse(text)
        let p = (path, DocumentKey.parentHash(of: path))
        known[k] = p
        return p
    }
}

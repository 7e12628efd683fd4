import EmberModel

/// Responsible for: documents (and tombstones) in one SQLite table keyed by (parent collection
/// path, id), with the collection group as an indexed column for group scans, each entry's size
/// and LRU sequence number for the bounded cache, and — for the client's cache — the offline
/// indexes kept up to date on every put and remove. Fields are stored with `ValueMessagePack`.
///
///     let store = persistence.remoteDocuments; store.put(doc); store.get(doc.key)
final class SQLiteDocumentStore: DocumentStore {
    unowned let persistence: SQLitePersistence
    let table: String
    let indexes: SQLiteIndexManager?
    private let selectColumns = "parent, id, present, version, create_time, update_time, data"

    init(persistence: SQLitePersistence, table: String, indexes: SQLiteIndexManager?) {
        self.persistence = persistence
        self.table = table
        self.indexes = indexes
    }

    /// Reads a row selected with `selectColumns`; `parentPath` is reused when the caller knows it.
    func row(_ st: SQLiteStatement, parentPath: ResourcePath?, cache: inout [String: ResourcePath]) throws -> Document {
        let parent: ResourcePath
        if let p = parentPath { parent = p } else {
            let s = st.text(0)
            if let p = cache[s] { parent = p } else {
                parent = ResourcePath(segments: s.split(separator: "/", omittingEmptySubsequences: false).map(String.init))
                cache[s] = parent
            }
        }
        let key = DocumentKey(unchecked: ResourcePath(segments: parent.segments + [st.text(1)]))
        let version = st.int(3)
        if st.int(2) == 0 { return Document.missing(key, version: version) }
        let data = try ValueMessagePack.decodeMap(st.blob(6))
        return Document(key: key, data: data, version: version, createTime: st.int(4), updateTime: st.int(5))
    }

    func get(_ key: DocumentKey) -> Document? {
        persistence.access(nil) { db in
            let st = try db.statement("SELECT \(selectColumns) FROM \(table) WHERE parent = ? AND id = ?")
            defer { st.reset() }
            st.bind(1, key.collectionPath.canonical)
            st.bind(2, key.id)
            var cache: [String: ResourcePath] = [:]
            return try st.step() ? try row(st, parentPath: key.collectionPath, cache: &cache) : nil
        }
    }

    func version(of key: DocumentKey) -> Int64? {
        persistence.access(nil) { db in
            let st = try db.statement("SELECT version FROM \(table) WHERE parent = ? AND id = ?")
            defer { st.reset() }
            st.bind(1, key.collectionPath.canonical)
            st.bind(2, key.id)
            return try st.step() ? st.int(0) : nil
        }
    }

    func put(_ doc: Document) {
        persistence.access(()) { db in
            let st = try db.statement("INSERT OR REPLACE INTO \(table)(parent, id, grp, present, version, create_time, update_time, data, size, seq) VALUES(?,?,?,?,?,?,?,?,?,?)")
            defer { st.reset() }
            let parent = doc.key.collectionPath.canonical
            let blob = doc.exists ? ValueMessagePack.encode(.map(doc.data)) : []
            st.bind(1, parent)
            st.bind(2, doc.key.id)
            st.bind(3, doc.key.collectionGroup)
            st.bind(4, Int64(doc.exists ? 1 : 0))
            st.bind(5, doc.version)
            st.bind(6, doc.createTime)
            st.bind(7, doc.updateTime)
            st.bind(8, blob)
            st.bind(9, Int64(blob.count + parent.utf8.count + doc.key.id.utf8.count + 48))
            st.bind(10, persistence.sequence)
            while try st.step() {}
            try indexes?.update(doc, in: db)
        }
    }

    func remove(_ key: DocumentKey) {
        persistence.access(()) { db in
            try db.run("DELETE FROM \(table) WHERE parent = ? AND id = ?", [.text(key.collectionPath.canonical), .text(key.id)])
            try indexes?.remove(key, in: db)
        }
    }

    func documents(in collection: ResourcePath) -> [Document] {
        persistence.access([]) { db in
            let st = try db.statement("SELECT \(selectColumns) FROM \(table) WHERE parent = ?")
            defer { st.reset() }
            st.bind(1, collection.canonical)
            return try rows(st, parentPath: collection)
        }
    }

    func documents(inGroup id: String) -> [Document] {
        persistence.access([]) { db in
            let st = try db.statement("SELECT \(selectColumns) FROM \(table) WHERE grp = ?")
            defer { st.reset() }
            st.bind(1, id)
            return try rows(st, parentPath: nil)
        }
    }

    func rows(_ st: SQLiteStatement, parentPath: ResourcePath?) throws -> [Document] {
        var out: [Document] = []
        var cache: [String: ResourcePath] = [:]
        while try st.step() { out.append(try row(st, parentPath: parentPath, cache: &cache)) }
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
        var cache: [String: ResourcePath] = [:]
        for (p, i) in parentIds {
            st.reset()
            st.bind(1, p)
            st.bind(2, i)
            if try st.step() { out.append(try row(st, parentPath: nil, cache: &cache)) }
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
        persistence.runTransaction("touch") {
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
        persistence.access(0) { db in try db.scalarInt("SELECT COALESCE(SUM(size), 0) FROM \(table)") ?? 0 }
    }

    func collectGarbage(thresholdBytes: Int64, pinned: (DocumentKey) -> Bool) -> Int {
        persistence.runTransaction("lru gc") {
            persistence.access(0) { db in
                var total = try db.scalarInt("SELECT COALESCE(SUM(size), 0) FROM \(table)") ?? 0
                guard total > thresholdBytes else { return 0 }
                let st = try db.statement("SELECT parent, id, size FROM \(table) ORDER BY seq")
                var victims: [DocumentKey] = []
                var cache: [String: ResourcePath] = [:]
                while total > thresholdBytes, try st.step() {
                    let s = st.text(0)
                    let parent = cache[s] ?? ResourcePath(segments: s.split(separator: "/", omittingEmptySubsequences: false).map(String.init))
                    cache[s] = parent
                    let key = DocumentKey(unchecked: ResourcePath(segments: parent.segments + [st.text(1)]))
                    if pinned(key) { continue }
                    victims.append(key)
                    total -= st.int(2)
                }
                st.reset()
                for k in victims { remove(k) }
                return victims.count
            }
        }
    }
}

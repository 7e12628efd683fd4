import EmberModel

/// Responsible for: the offline query indexes of the SQLite cache: their definitions (table
/// `index_config`), their entries (table `index_entries`, keyed by index id and the
/// order-preserving encoding of the indexed values, then the document), keeping entries current
/// as cached documents change, choosing an index for a query, and auto-creating indexes.
///
/// An index only narrows the candidates: every document the query can match is among them, and
/// the caller's filter decides, so an indexed read and a scan give identical results.
///
///     try manager.setConfiguration(IndexDefinition.parse(json: json))
///     manager.autoCreationEnabled = true
final class SQLiteIndexManager: IndexManager {
    struct Entry { let id: Int64; let def: IndexDefinition; let auto: Bool }

    unowned let persistence: SQLitePersistence
    private var byGroup: [UTF8String: [Entry]] = [:]
    private var _auto = false
    private var _lastRead = IndexReadStats()

    /// Firestore's heuristic: consider an index once a scan read at least this many documents...
    static let autoCreationMinScanned = 100
    /// ...and more than this many times the documents the query returned.
    static let autoCreationRelativeCost = 2

    init(persistence: SQLitePersistence) throws {
        self.persistence = persistence
        try loadConfiguration(persistence.db)
    }

    /// Reads the index definitions from `index_config` (at open, and after a rolled-back change).
    func loadConfiguration(_ db: SQLiteDatabase) throws {
        byGroup.removeAll()
        let st = try db.statement("SELECT index_id, definition, auto FROM index_config ORDER BY index_id")
        defer { st.reset() }
        while try st.step() {
            let def = try IndexDefinition(value: try ValueMessagePack.decode(st.blob(1)))
            byGroup[UTF8String(def.collectionGroup), default: []].append(Entry(id: st.int(0), def: def, auto: st.int(2) != 0))
        }
    }

    var autoCreationEnabled: Bool {
        get { persistence.lock.withLock { _auto } }
        set { persistence.lock.withLock { _auto = newValue } }
    }

    var lastRead: IndexReadStats { persistence.lock.withLock { _lastRead } }

    func indexes() -> [IndexDefinition] {
        persistence.lock.withLock { byGroup.values.flatMap { $0 }.sorted { $0.id < $1.id }.map { $0.def } }
    }

    // MARK: configuration

    func setConfiguration(_ defs: [IndexDefinition]) throws {
        var failure: Error?
        do {
        try persistence.runTransaction("set index configuration") {
            persistence.access(()) { db in
                do {
                    for e in byGroup.values.flatMap({ $0 }) where !e.auto && !defs.contains(e.def) { try drop(e, in: db) }
                    for d in defs where !byGroup[UTF8String(d.collectionGroup), default: []].contains(where: { $0.def == d }) {
                        try add(d, auto: false, in: db)
                    }
                } catch { failure = error }
            }
            if let f = failure { throw f }
        }
        } catch {
            // Rolled back: the definitions in memory go back to the file's.
            persistence.access(()) { db in try loadConfiguration(db) }
            throw error
        }
    }

    func deleteAllIndexes() {
        do {
            try persistence.runTransaction("delete indexes") {
                persistence.access(()) { db in
                    try db.run("DELETE FROM index_entries")
                    try db.run("DELETE FROM index_config")
                }
            }
            persistence.lock.withLock { byGroup.removeAll() }
        } catch {
            // Reported by the persistence (stderr); the indexes stay as they were, and usable.
        }
    }

    private func drop(_ e: Entry, in db: SQLiteDatabase) throws {
        try db.run("DELETE FROM index_entries WHERE index_id = ?", [.int(e.id)])
        try db.run("DELETE FROM index_config WHERE index_id = ?", [.int(e.id)])
        byGroup[UTF8String(e.def.collectionGroup)]?.removeAll { $0.id == e.id }
        if byGroup[UTF8String(e.def.collectionGroup)]?.isEmpty == true { byGroup[UTF8String(e.def.collectionGroup)] = nil }
    }

    /// Records a new index and fills it from the cached documents of its collection group.
    @discardableResult
    private func add(_ def: IndexDefinition, auto: Bool, in db: SQLiteDatabase) throws -> Entry {
        try db.run("INSERT INTO index_config(grp, definition, auto) VALUES(?, ?, ?)",
                   [.text(def.collectionGroup), .blob(ValueMessagePack.encode(def.value)), .int(auto ? 1 : 0)])
        let id = try db.scalarInt("SELECT last_insert_rowid()")!
        let e = Entry(id: id, def: def, auto: auto)
        byGroup[UTF8String(def.collectionGroup), default: []].append(e)
        try fill(e, in: db)
        return e
    }

    /// Adds the entries of every cached document of `e`'s collection group.
    private func fill(_ e: Entry, in db: SQLiteDatabase) throws {
        let docs = persistence.indexedStore.documents(inGroup: e.def.collectionGroup)
        let ins = try db.statement("INSERT OR IGNORE INTO index_entries(index_id, key, parent, id) VALUES(?, ?, ?, ?)")
        defer { ins.reset() }
        for d in docs where d.exists {
            let parent = d.key.collectionPath.canonical
            for k in SQLiteIndexManager.keys(of: d, for: e.def) {
                ins.reset()
                ins.bind(1, e.id); ins.bind(2, k); ins.bind(3, parent); ins.bind(4, d.key.id)
                while try ins.step() {}
            }
        }
    }

    /// Drops every entry and fills each index again from the indexed store (after the cache
    /// moved to the other table). Inside the caller's transaction.
    func rebuildEntries(in db: SQLiteDatabase) throws {
        try db.run("DELETE FROM index_entries")
        for e in byGroup.values.flatMap({ $0 }) { try fill(e, in: db) }
    }

    // MARK: maintenance (under the persistence lock)

    /// The index keys of `doc` for `def`: none when a field is missing (or, for CONTAINS, not an
    /// array); one per distinct element of each CONTAINS field otherwise.
    static func keys(of doc: Document, for def: IndexDefinition) -> [[UInt8]] {
        var keys: [[UInt8]] = [[]]
        for f in def.fields {
            guard let v = doc.field(f.path) else { return [] }
            if f.kind == .contains {
                guard case .array(let elems) = v, !elems.isEmpty else { return [] }
                let encs = Set(elems.map { IndexValueEncoder.encode($0) })
                keys = keys.flatMap { k in encs.map { k + $0 } }
            } else {
                let e = IndexValueEncoder.encode(v)
                for i in keys.indices { keys[i] += e }
            }
        }
        return keys
    }

    func update(_ doc: Document, in db: SQLiteDatabase) throws {
        guard let entries = byGroup[UTF8String(doc.key.collectionGroup)] else { return }
        try remove(doc.key, in: db)
        guard doc.exists else { return }
        let parent = doc.key.collectionPath.canonical
        let ins = try db.statement("INSERT OR IGNORE INTO index_entries(index_id, key, parent, id) VALUES(?, ?, ?, ?)")
        defer { ins.reset() }
        for e in entries {
            for k in SQLiteIndexManager.keys(of: doc, for: e.def) {
                ins.reset()
                ins.bind(1, e.id); ins.bind(2, k); ins.bind(3, parent); ins.bind(4, doc.key.id)
                while try ins.step() {}
            }
        }
    }

    func remove(_ key: DocumentKey, in db: SQLiteDatabase) throws {
        guard byGroup[UTF8String(key.collectionGroup)] != nil else { return }
        try db.run("DELETE FROM index_entries WHERE parent = ? AND id = ?", [.text(key.collectionPath.canonical), .text(key.id)])
    }

    // MARK: reads

    /// Every cached entry `query` can match (perhaps more), through an index when one serves it.
    func candidates(for query: Query, store: SQLiteDocumentStore, in db: SQLiteDatabase) throws -> [Document] {
        let group = query.collectionGroup ?? query.path.last
        let conjuncts = SQLiteIndexManager.conjuncts(query.filters)
        if let entries = byGroup[UTF8String(group)], let plan = IndexPlan.best(entries.map { ($0.id, $0.def) }, conjuncts, orderBy: query.normalizedOrderBy.map { $0.field }) {
            let docs = try read(plan, collection: query.collectionGroup == nil ? query.path.canonical : nil, store: store, in: db)
            _lastRead = IndexReadStats(usedIndex: plan.definition, documentsRead: docs.count)
            return docs
        }
        // A scan decodes only the documents that pass the query's AND filters on their bytes.
        var scanned = 0
        let docs = try store.scan(collection: query.collectionGroup == nil ? query.path : nil, group: query.collectionGroup,
                                  prefilter: RawPrefilter(conjuncts), scanned: &scanned, in: db)
        _lastRead = IndexReadStats(usedIndex: nil, documentsRead: scanned)
        if _auto && scanned >= SQLiteIndexManager.autoCreationMinScanned {
            let order = query.normalizedOrderBy
            let returned = docs.reduce(0) { $0 + (query.matches($1, orderBy: order) ? 1 : 0) }
            if scanned > SQLiteIndexManager.autoCreationRelativeCost * returned,
               let def = IndexPlan.definition(for: group, conjuncts),
               !(byGroup[UTF8String(group)] ?? []).contains(where: { $0.def == def }) {
                // One transaction: an index is either whole or absent (a crash in the middle of
                // its fill would otherwise leave it missing documents, and queries it serves
                // would miss them). Advisory: when it cannot be stored, no index is made.
                do {
                    _ = try persistence.runTransaction("auto-create index") { try add(def, auto: true, in: db) }
                } catch {
                    try loadConfiguration(db)
                }
            }
        }
        return docs
    }

    private func read(_ plan: IndexPlan, collection: String?, store: SQLiteDocumentStore, in db: SQLiteDatabase) throws -> [Document] {
        let cols = "d.parent, d.id, d.present, d.version, d.create_time, d.update_time, d.data"
        let join = "FROM index_entries e JOIN \(store.table) d ON d.parent = e.parent AND d.id = e.id WHERE e.index_id = ?1 AND e.key >= ?2"
        let pathCond = collection == nil ? "" : " AND e.parent = ?4"
        let bounded = try db.statement("SELECT \(cols) \(join) AND e.key < ?3\(pathCond)")
        let open = try db.statement("SELECT \(cols) \(join)\(collection == nil ? "" : " AND e.parent = ?3")")
        var out: [Document] = []
        var seen = Set<DocumentKey>()
        var parents = RowParents(collection.map { store.persistencePath($0) })
        for r in plan.ranges {
            let st = r.hi == nil ? open : bounded
            st.reset()
            st.bind(1, plan.indexId)
            st.bind(2, r.lo)
            if let hi = r.hi { st.bind(3, hi) }
            if let c = collection { st.bind(r.hi == nil ? 3 : 4, c) }
            while try st.step() {
                let d = try store.row(st, parents: &parents)
                if plan.ranges.count == 1 && !plan.mayRepeat { out.append(d) }
                else if seen.insert(d.key).inserted { out.append(d) }
            }
            st.reset()
        }
        return out
    }

    /// The field filters every matching document satisfies (top-level ANDs; ORs are skipped, the
    /// caller's filter still applies them).
    static func conjuncts(_ filters: [Filter]) -> [FieldFilter] {
        var out: [FieldFilter] = []
        func walk(_ f: Filter) {
            switch f {
            case .field(let ff): out.append(ff)
            case .composite(let c): if c.op == .and { c.filters.forEach(walk) }
            }
        }
        filters.forEach(walk)
        return out
    }
}

extension SQLiteDocumentStore {
    func persistencePath(_ canonical: String) -> ResourcePath {
        ResourcePath(segments: splitAtSlashes(canonical))
    }
}


import EmberConcurrency
import CSQLite
import EmberModel
#if canImport(Glibc)
import Glibc
#endif

/// Responsible for: the durable `Persistence`: one SQLite file (WAL) holding the backend's
/// documents, the client's cache, its write queue, its targets and the offline indexes. It owns
/// one connection, serializes every use of it (the backend's queue and the client's worker share
/// it), runs each `runTransaction` as one SQLite transaction, and holds an exclusive lock file so
/// a second process (or a second open in this one) gets a clear `failedPrecondition`.
///
/// Opening is lazy: it checks the file's header, creates the schema when missing, and reads
/// nothing else; documents are read as queries need them.
///
/// Durability: `synchronous=NORMAL` in WAL mode. Each commit is appended to the WAL before
/// `runTransaction` returns, so a killed process (`kill -9`) loses nothing committed; a power
/// loss or OS crash may lose the last transactions (never corrupt the file). `synchronous: .full`
/// fsyncs the WAL at every commit for power-loss durability at a cost per write.
///
///     let p = try SQLitePersistence(path: "/tmp/app.ember")
///     p.runTransaction("write") { p.mutationQueue.add(batch) }
public final class SQLitePersistence: Persistence {
    public enum Synchronous: String, Sendable { case normal = "NORMAL", full = "FULL" }

    public let path: String
    let db: SQLiteDatabase
    let lock = RecursiveLock()
    private var lockFd: Int32
    private var depth = 0
    private var closed = false
    /// The first storage error inside the open transaction (nil when none, or none is open).
    private var transactionError: Error?
    /// A transaction's first and last statements, prepared once.
    private let sqlBegin = SQL("BEGIN"), sqlCommit = SQL("COMMIT")
    /// The LRU clock: bumped by each outermost transaction.
    private(set) var sequence: Int64 = 0
    /// The first storage error met after opening (reads then return nothing, writes are dropped).
    public private(set) var failure: EmberError?

    private var _backend: SQLiteDocumentStore!
    private var _remote: SQLiteDocumentStore!
    private var _queue: SQLiteMutationQueue!
    private var _targets: SQLiteTargetCache!
    private var _indexes: SQLiteIndexManager!
    /// The Realtime-Database tree's tables (Tree/SQLiteTreeStore.swift).
    private(set) var tree: SQLiteTreeTables!

    public var backendDocuments: DocumentStore { _backend }
    public var remoteDocuments: DocumentStore { documentsShared ? _backend : _remote }
    /// Whether the client's cache is the backend's table (see `Persistence.documentsShared`):
    /// chosen at open, for the embedded default.
    public let documentsShared: Bool
    /// The store the offline indexes describe: the client's cache, which is `backend_docs`
    /// when the documents are shared and `remote_docs` otherwise.
    var indexedStore: SQLiteDocumentStore { documentsShared ? _backend : _remote }
    public var mutationQueue: MutationQueue { _queue }
    public var targetCache: TargetCache { _targets }
    public var indexManager: IndexManager? { _indexes }
    public var isDurable: Bool { true }

    /// 1: documents with an index on their collection group; 2: that index replaced by the
    /// `collections` table (one row per collection, not per document). 1 is upgraded on open.
    static let schemaVersion: Int64 = 3

    /// Opens (or creates) the file at `path`. With `sharedDocuments` the client's cache is the
    /// backend's `backend_docs` (the embedded default: one copy of each document); without it
    /// (a server's file, or a client of a server) the cache is `remote_docs`. A file opened one
    /// way after the other is made consistent at open (see `adoptCacheLayout`).
    public init(path: String, synchronous: Synchronous = .normal, sharedDocuments: Bool = false) throws {
        self.path = path
        self.documentsShared = sharedDocuments
        lockFd = try SQLitePersistence.acquireLock(path)
        do {
            try SQLitePersistence.checkHeader(path)
            db = try SQLiteDatabase(path: path)
        } catch {
            Glibc.close(lockFd)
            throw error
        }
        do {
            try db.exec("PRAGMA busy_timeout=0")
            // Reading the schema is where SQLite notices a file that is not a database.
            _ = try db.scalarInt("SELECT count(*) FROM sqlite_master")
            // Exclusive locking: the lock file already keeps other instances out, so SQLite need
            // not take file locks per statement, and the WAL index lives in memory (no -shm).
            try db.exec("PRAGMA locking_mode=EXCLUSIVE; PRAGMA journal_mode=WAL; PRAGMA synchronous=\(synchronous.rawValue); PRAGMA cache_size=-16384; PRAGMA temp_store=MEMORY")
            try createSchema()
            _indexes = try SQLiteIndexManager(persistence: self)
            _backend = SQLiteDocumentStore(persistence: self, table: "backend_docs", indexes: sharedDocuments ? _indexes : nil)
            _remote = SQLiteDocumentStore(persistence: self, table: "remote_docs", indexes: sharedDocuments ? nil : _indexes)
            _queue = SQLiteMutationQueue(persistence: self)
            _targets = SQLiteTargetCache(persistence: self)
            tree = try SQLiteTreeTables(persistence: self, db: db)
            try adoptCacheLayout()
            sequence = max(try db.scalarInt("SELECT MAX(seq) FROM remote_docs") ?? 0,
                           try db.scalarInt("SELECT MAX(last_used) FROM targets") ?? 0)
        } catch {
            db.close()
            Glibc.close(lockFd)
            throw error
        }
    }

    private func createSchema() throws {
        let version = try db.scalarInt("PRAGMA user_version") ?? 0
        if version > SQLitePersistence.schemaVersion {
            throw EmberError(.failedPrecondition, "The database '\(path)' was written by a newer Ember (schema \(version)).")
        }
        if version == SQLitePersistence.schemaVersion { return }   // reopening: nothing to write
        if version == 1 || version == 2 {
            // Upgrades. 1 -> 2: the collections each table holds, then the per-document group
            // indexes go. 2 -> 3: a target's resume token (a server's, for listening again).
            let oneToTwo = """
                \(SQLitePersistence.collectionsTable)
                INSERT OR IGNORE INTO collections(tbl, grp, parent) SELECT DISTINCT 'backend_docs', grp, parent FROM backend_docs;
                INSERT OR IGNORE INTO collections(tbl, grp, parent) SELECT DISTINCT 'remote_docs', grp, parent FROM remote_docs;
                DROP INDEX IF EXISTS backend_docs_grp;
                DROP INDEX IF EXISTS remote_docs_grp;
                """
            try db.exec("""
                BEGIN;
                \(version == 1 ? oneToTwo : "")
                ALTER TABLE targets ADD COLUMN resume_token BLOB;
                PRAGMA user_version=\(SQLitePersistence.schemaVersion);
                COMMIT;
                """)
            return
        }
        let docs = { (t: String) in """
            CREATE TABLE IF NOT EXISTS \(t)(parent TEXT NOT NULL, id TEXT NOT NULL, grp TEXT NOT NULL,
              present INTEGER NOT NULL, version INTEGER NOT NULL, create_time INTEGER NOT NULL,
              update_time INTEGER NOT NULL, data BLOB, size INTEGER NOT NULL, seq INTEGER NOT NULL,
              PRIMARY KEY(parent, id)) WITHOUT ROWID;
            """ }
        try db.exec("""
            BEGIN;
            CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
            \(docs("backend_docs"))
            \(docs("remote_docs"))
            CREATE INDEX IF NOT EXISTS remote_docs_seq ON remote_docs(seq);
            \(SQLitePersistence.collectionsTable)
            CREATE TABLE IF NOT EXISTS mutations(batch_id INTEGER PRIMARY KEY, data BLOB NOT NULL);
            CREATE TABLE IF NOT EXISTS targets(target_id TEXT PRIMARY KEY, read_time INTEGER NOT NULL, last_used INTEGER NOT NULL, resume_token BLOB) WITHOUT ROWID;
            CREATE TABLE IF NOT EXISTS index_config(index_id INTEGER PRIMARY KEY, grp TEXT NOT NULL, definition BLOB NOT NULL, auto INTEGER NOT NULL);
            CREATE TABLE IF NOT EXISTS index_entries(index_id INTEGER NOT NULL, key BLOB NOT NULL, parent TEXT NOT NULL, id TEXT NOT NULL,
              PRIMARY KEY(index_id, key, parent, id)) WITHOUT ROWID;
            CREATE INDEX IF NOT EXISTS index_entries_doc ON index_entries(parent, id);
            PRAGMA user_version=\(SQLitePersistence.schemaVersion);
            COMMIT;
            """)
    }

    /// Makes a file written with the other cache layout consistent with this one, in one
    /// transaction: the offline indexes are rebuilt from the table they now describe (meta
    /// `index.table`: 1 for `backend_docs`, absent or 0 for `remote_docs`); with shared documents,
    /// a separate cache left in `remote_docs` (an older Ember's copy, or a server's documents
    /// cached by a client of it) is dropped with the resume tokens that assumed it.
    private func adoptCacheLayout() throws {
        let want: Int64 = documentsShared ? 1 : 0
        let have = try db.scalarInt("SELECT value FROM meta WHERE key = 'index.table'") ?? 0
        let staleCopy = try documentsShared && db.scalarInt("SELECT 1 FROM remote_docs LIMIT 1") != nil
        guard have != want || staleCopy else { return }
        try runTransaction("adopt cache layout") {
            try db.run("INSERT OR REPLACE INTO meta(key, value) VALUES('index.table', ?)", [.int(want)])
            if staleCopy {
                try db.exec("DELETE FROM remote_docs; DELETE FROM collections WHERE tbl = 'remote_docs'; UPDATE targets SET resume_token = NULL")
            }
            // A stale copy also means another writer (an older Ember) had the file: its index
            // entries may not follow the table either.
            try _indexes.rebuildEntries(in: db)
        }
    }

    /// The collections (parent paths) each document table holds, by group, for group scans.
    static let collectionsTable = "CREATE TABLE IF NOT EXISTS collections(tbl TEXT NOT NULL, grp TEXT NOT NULL, parent TEXT NOT NULL, PRIMARY KEY(tbl, grp, parent)) WITHOUT ROWID;"

    // MARK: access

    /// Runs `body` with the connection under the lock; a storage error is recorded and `fallback`
    /// returned (the protocol's reads and writes do not throw). Inside a transaction the error
    /// also fails the transaction: `runTransaction` rolls it back and throws it, and nothing more
    /// of that transaction runs (after SQLITE_FULL or an I/O error SQLite may already have rolled
    /// it back, so a later statement would otherwise run, and commit, on its own).
    func access<T>(_ fallback: @autoclosure () -> T, _ body: (SQLiteDatabase) throws -> T) -> T {
        lock.withLock {
            if closed { return fallback() }
            if depth > 0 && transactionError != nil { return fallback() }
            do { return try body(db) } catch {
                if depth > 0 && transactionError == nil { transactionError = error }
                record(error)
                return fallback()
            }
        }
    }

    /// `access` for a caller that must know when the read or write could not be made: the error
    /// is recorded, fails an open transaction as there, and is thrown instead of a fallback.
    func accessThrowing<T>(_ body: (SQLiteDatabase) throws -> T) throws -> T {
        try lock.withLock {
            if closed { throw EmberError(.failedPrecondition, "The database '\(path)' is closed.") }
            if depth > 0, let e = transactionError { throw e }
            do { return try body(db) } catch {
                if depth > 0 && transactionError == nil { transactionError = error }
                record(error)
                throw error
            }
        }
    }

    func record(_ error: Error) {
        let e = error as? EmberError ?? EmberError(.internal, "\(error)")
        if failure == nil {
            failure = e
            StorageErrorLog.report("\(e)")
        }
    }

    /// Runs `body` as one SQLite transaction (nested calls join the outermost one). When any
    /// statement of it fails, or COMMIT does (a full disk, an I/O error, a read-only or removed
    /// file), the transaction is rolled back, the stores forget what they cached of it, and the
    /// error is thrown: nothing of it is in the file. The connection stays usable, so a later
    /// transaction succeeds once the cause is gone (space freed).
    public func runTransaction<T>(_ label: String, _ body: () throws -> T) throws -> T {
        try lock.withLock {
            if closed { throw EmberError(.failedPrecondition, "The database '\(path)' is closed.") }
            if depth > 0 {
                depth += 1
                defer { depth -= 1 }
                return try body()
            }
            do { try db.run(sqlBegin) } catch {
                record(error)
                throw error
            }
            sequence += 1
            depth = 1
            transactionError = nil
            defer { depth = 0; transactionError = nil }
            let result: T
            do { result = try body() } catch {
                rollBack()
                throw error
            }
            if let e = transactionError {
                rollBack()
                throw e
            }
            if db.fileHasMoved {
                let e = EmberError(.dataLoss, "The database file '\(path)' was removed or replaced while open: nothing more can be stored in it. Close the database and open it again.")
                record(e)
                rollBack()
                throw e
            }
            do { try db.run(sqlCommit) } catch {
                record(error)
                rollBack()
                throw error
            }
            return result
        }
    }

    /// Rolls back the open transaction (if SQLite has not already) and drops what the stores
    /// remembered of it.
    private func rollBack() {
        if !db.autocommit { try? db.exec("ROLLBACK") }
        _backend.forgetCachedState()
        _remote.forgetCachedState()
        _queue.forgetCachedState()
    }

    public func metadata(_ key: String) -> Int64? {
        access(nil) { db in try db.scalarInt("SELECT value FROM meta WHERE key = ?", [.text(key)]) }
    }

    public func setMetadata(_ key: String, _ value: Int64) {
        access(()) { db in try db.run("INSERT OR REPLACE INTO meta(key, value) VALUES(?, ?)", [.text(key), .int(value)]) }
    }

    public func close() {
        lock.withLock {
            guard !closed else { return }
            closed = true
            db.close()
            Glibc.close(lockFd)
            lockFd = -1
        }
    }

    deinit { close() }

    /// Bytes of the main file and its WAL (for size reporting).
    public var fileBytes: Int64 { fileSize(path) + fileSize(path + "-wal") }
}

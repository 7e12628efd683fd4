import EmberConcurrency
import EmberModel
import Foundation
import Logging
import NIOCore
import NIOPosix
import PostgresNIO

/// Responsible for: Ember's documents and change log in one PostgreSQL database, shared by every
/// `ember serve` instance that opens it (docs/scale-out.md): a bounded connection pool, the
/// schema's migration at open, each commit as one transaction that takes the database's next log
/// position and checks its writes' expectations inside it, reads of documents, and the log's tail
/// after a position. Errors are `EmberError`s: a stale expectation is ABORTED, a server out of
/// reach (or a lock not granted in time) UNAVAILABLE, a full disk RESOURCE_EXHAUSTED. Safe from
/// any task or thread.
///
///     let store = try await PostgresStore.open(url: "postgresql://ember@127.0.0.1:5432/ember")
///     let db = try await store.database(named: "projects/p/databases/(default)")
///     let at = try await store.commit(db, [PostgresWrite(key: k, fields: bytes, expect: .absent)])
///     let changes = try await store.changes(db, after: 0, limit: 1000)
public final class PostgresStore: Sendable {
    private let client: PostgresClient
    private let running: Task<Void, Never>
    /// Seconds an operation may take, waiting for a connection included, before it fails with
    /// UNAVAILABLE (a commit's outcome is then unknown, as when a reply is lost).
    let operationTimeout: Double

    /// Logs nothing (postgres-nio's default).
    static let quiet = Logger(label: "ember.postgres", factory: { _ in SwiftLogNoOpLogHandler() })

    /// Where the pool and every operation run, and the event loop of the connections: neither
    /// is shared with the process (see `PostgresExecutor`).
    let executor: PostgresExecutor
    private let loops: MultiThreadedEventLoopGroup
    /// The pool's bound, and its use so far (metrics).
    public let maxConnections: Int
    private let usageBox = LockedValueBox(Usage())

    /// Operations on the pool: running now, done, failed (any error, an ABORTED included).
    public struct Usage: Sendable, Equatable {
        public var inFlight = 0
        public var total: Int64 = 0
        public var failed: Int64 = 0
    }

    public var usage: Usage { usageBox.current }

    private init(client: PostgresClient, loops: MultiThreadedEventLoopGroup, executor: PostgresExecutor, operationTimeout: Double,
                 maxConnections: Int) {
        self.maxConnections = maxConnections
        self.client = client
        self.loops = loops
        self.executor = executor
        self.operationTimeout = operationTimeout
        running = Task(executorPreference: executor) { await client.run() }
    }

    /// Connects to `url` (`postgresql://user[:password]@host[:port]/database[?sslmode=disable|prefer|require]`),
    /// with at most `maxConnections` connections, and migrates the schema. Throws invalidArgument
    /// for a URL it cannot read, UNAVAILABLE when the server cannot be reached within
    /// `connectTimeout` seconds, failedPrecondition for a schema newer than this build's. Every
    /// later operation fails with UNAVAILABLE after `operationTimeout` seconds.
    public static func open(url: String, maxConnections: Int = 8, connectTimeout: Double = 10,
                            operationTimeout: Double = 10) async throws -> PostgresStore {
        let config = try configuration(url: url, maxConnections: maxConnections, connectTimeout: connectTimeout)
        let loops = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let store = PostgresStore(client: PostgresClient(configuration: config, eventLoopGroup: loops, backgroundLogger: quiet),
                                  loops: loops, executor: PostgresExecutor(), operationTimeout: operationTimeout,
                                  maxConnections: maxConnections)
        do {
            let client = store.client
            try await Task(executorPreference: store.executor) {
                try await bounded(connectTimeout + operationTimeout, "connecting and migrating", on: store.executor) { try await PostgresSchema.migrate(client) }
            }.value
        } catch {
            store.close()
            throw PostgresStore.mapped(error)
        }
        return store
    }

    static func configuration(url: String, maxConnections: Int, connectTimeout: Double) throws -> PostgresClient.Configuration {
        guard let c = URLComponents(string: url), c.scheme == "postgresql" || c.scheme == "postgres",
              let host = c.host, !host.isEmpty, let user = c.user, !user.isEmpty else {
            throw EmberError.invalidArgument("Invalid PostgreSQL URL '\(url)': expected postgresql://user@host[:port]/database")
        }
        let database = c.path.hasPrefix("/") ? String(c.path.dropFirst()) : c.path
        guard !database.isEmpty, !database.contains("/") else {
            throw EmberError.invalidArgument("Invalid PostgreSQL URL '\(url)': it names no database")
        }
        let tls: PostgresClient.Configuration.TLS
        switch c.queryItems?.first(where: { $0.name == "sslmode" })?.value ?? "disable" {
        case "disable": tls = .disable
        case "prefer": tls = .prefer(.makeClientConfiguration())
        case "require": tls = .require(.makeClientConfiguration())
        case let other: throw EmberError.invalidArgument("Invalid sslmode '\(other)' in the PostgreSQL URL: use disable, prefer or require")
        }
        guard maxConnections >= 1 else { throw EmberError.invalidArgument("The connection pool needs at least one connection") }
        var config = PostgresClient.Configuration(host: host, port: c.port ?? 5432, username: user, password: c.password,
                                                  database: database, tls: tls)
        config.options.maximumConnections = maxConnections
        config.options.connectTimeout = .milliseconds(Int64(connectTimeout * 1000))
        // A lock not granted in 2 s (a committer stuck on a dead connection), a statement over 30 s,
        // or a transaction left open 5 s fails instead of waiting for ever.
        config.options.additionalStartupParameters = [
            ("lock_timeout", "2s"), ("statement_timeout", "30s"), ("idle_in_transaction_session_timeout", "5s"),
        ]
        return config
    }

    /// Stops the pool and its event loop; calls after it fail. Idempotent.
    public func close() {
        running.cancel()
        loops.shutdownGracefully { _ in }
    }

    deinit { running.cancel() }

    // MARK: databases

    /// The log of database `name` (a Firestore database or a tree namespace), created at its first
    /// use with a random epoch.
    public func database(named name: String) async throws -> LogHead {
        try await run("opening a database's log") { client in
            let epoch = Int64.random(in: 1...Int64.max)
            try await client.query("INSERT INTO ember_log_head (name, epoch) VALUES (\(name), \(epoch)) ON CONFLICT (name) DO NOTHING")
            let rows = try await client.query("SELECT db_id, epoch, seq, commit_time, floor_seq, floor_time FROM ember_log_head WHERE name = \(name)")
            guard let head = try await PostgresStore.firstHead(rows) else { throw EmberError(.internal, "The log of '\(name)' is missing") }
            return head
        }
    }

    /// The log's head of `db` now.
    public func head(_ db: Int32) async throws -> LogHead {
        try await run("reading a log's head") { client in
            let rows = try await client.query("SELECT db_id, epoch, seq, commit_time, floor_seq, floor_time FROM ember_log_head WHERE db_id = \(db)")
            guard let head = try await PostgresStore.firstHead(rows) else { throw EmberError(.notFound, "No database \(db) on this PostgreSQL") }
            return head
        }
    }

    /// The head in the first row of `SELECT db_id, epoch, seq, commit_time, floor_seq`.
    private static func firstHead(_ rows: PostgresRowSequence) async throws -> LogHead? {
        for try await (id, epoch, seq, time, floor, floorTime) in rows.decode((Int32, Int64, Int64, Int64, Int64, Int64).self) {
            return LogHead(db: id, epoch: epoch, seq: seq, commitTime: time, floorSeq: floor, floorTime: floorTime)
        }
        return nil
    }

    // MARK: commits

    /// Commits `writes` as one transaction at the database's next log position: all of them, or
    /// (an expectation not met: ABORTED; any other error) none. `time` (µs) is the commit time
    /// the writer computed its documents with; it must be after the last commit's (else ABORTED:
    /// the writer catches up and tries again). 0: the server's clock.
    public func commit(_ db: Int32, _ writes: [PostgresWrite], at time: Int64 = 0) async throws -> CommitPosition {
        var parents: [String] = [], ids: [String] = [], groups: [String] = [], fields: [ByteBuffer] = []
        var kinds: [Int16] = [], expect: [Int64] = []
        for w in writes {
            parents.append(w.key.path.parent!.canonical)
            ids.append(w.key.id)
            groups.append(w.key.collectionGroup)
            fields.append(ByteBuffer(bytes: w.fields ?? []))
            kinds.append(w.checkOnly ? 2 : (w.fields == nil ? 1 : 0))
            expect.append(w.expect.code)
        }
        return try await run("committing") { [parents, ids, groups, fields, kinds, expect] client in
            let rows = try await client.query("""
                SELECT out_seq, out_commit_time FROM ember_commit(\(db), \(time), \(parents), \(ids), \(groups), \(fields), \(kinds), \(expect))
                """)
            for try await (seq, time) in rows.decode((Int64, Int64).self) {
                return CommitPosition(seq: seq, commitTime: time)
            }
            throw EmberError(.internal, "The commit returned no position")
        }
    }

    // MARK: reads

    /// Every document of `db` with the log head they are current at, read in one snapshot (an
    /// instance starting, before it tails the log from `head.seq`).
    public func snapshot(_ db: Int32) async throws -> (head: LogHead, documents: [StoredDocument]) {
        try await run("reading a snapshot") { client in
            try await client.withConnection { c in
                try await c.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", logger: PostgresStore.quiet)
                do {
                    let head = try await PostgresStore.firstHead(try await c.query(
                        "SELECT db_id, epoch, seq, commit_time, floor_seq, floor_time FROM ember_log_head WHERE db_id = \(db)", logger: PostgresStore.quiet))
                    guard let head else { throw EmberError(.notFound, "No database \(db) on this PostgreSQL") }
                    var docs: [StoredDocument] = []
                    for try await (parent, id, fields, create, update, seq) in try await c.query("""
                        SELECT parent, id, fields, create_time, update_time, update_seq FROM ember_documents WHERE db_id = \(db)
                        """, logger: PostgresStore.quiet).decode((String, String, ByteBuffer, Int64, Int64, Int64).self) {
                        let key = try DocumentKey(path: ResourcePath(parsing: parent).appending(id))
                        docs.append(StoredDocument(key: key, fields: Array(buffer: fields), createTime: create, updateTime: update, updateSeq: seq))
                    }
                    try await c.query("COMMIT", logger: PostgresStore.quiet)
                    return (head, docs)
                } catch {
                    _ = try? await c.query("ROLLBACK", logger: PostgresStore.quiet)
                    throw error
                }
            }
        }
    }

    public func document(_ db: Int32, _ key: DocumentKey) async throws -> StoredDocument? {
        let parent = key.path.parent!.canonical, id = key.id
        return try await run("reading a document") { client in
            let rows = try await client.query("""
                SELECT fields, create_time, update_time, update_seq FROM ember_documents
                 WHERE db_id = \(db) AND parent = \(parent) AND id = \(id)
                """)
            for try await (fields, create, update, seq) in rows.decode((ByteBuffer, Int64, Int64, Int64).self) {
                return StoredDocument(key: key, fields: Array(buffer: fields), createTime: create, updateTime: update, updateSeq: seq)
            }
            return nil
        }
    }

    /// The documents of one collection, by id (UTF-8 byte order).
    public func documents(_ db: Int32, in collection: ResourcePath) async throws -> [StoredDocument] {
        let parent = collection.canonical
        return try await run("listing a collection") { client in
            let rows = try await client.query("""
                SELECT id, fields, create_time, update_time, update_seq FROM ember_documents
                 WHERE db_id = \(db) AND parent = \(parent) ORDER BY id
                """)
            var out: [StoredDocument] = []
            for try await (id, fields, create, update, seq) in rows.decode((String, ByteBuffer, Int64, Int64, Int64).self) {
                let key = try DocumentKey(path: collection.appending(id))
                out.append(StoredDocument(key: key, fields: Array(buffer: fields), createTime: create, updateTime: update, updateSeq: seq))
            }
            return out
        }
    }

    /// The channel instances NOTIFY after a commit (the payload is the database id), so the
    /// others read the log at once instead of at their next poll.
    static let channel = "ember_log"

    /// Tells every instance listening that `db` has a new commit (outside the commit: a NOTIFY
    /// inside it would serialize commits on the cluster's notification queue). `payload`, when
    /// given, follows the id after a ':' (see `PostgresCommitLog`).
    public func notify(_ db: Int32, payload: String? = nil) async throws {
        let text = payload.map { "\(db):\($0)" } ?? String(db)
        try await run("notifying") { client in
            _ = try await client.query("SELECT pg_notify(\(PostgresStore.channel), \(text))")
        }
    }

    /// Calls `wake` with the database id and payload of every NOTIFY on the channel (nil, nil
    /// once listening starts), on one connection of the pool held for it, until the task is
    /// cancelled; throws when the connection fails. Run it on a task that prefers a
    /// `PostgresExecutor`.
    public func listenForCommits(_ wake: @escaping @Sendable (Int32?, Substring?) -> Void) async throws {
        try await client.withConnection { c in
            try await c.listen(on: PostgresStore.channel) { notifications in
                wake(nil, nil)
                for try await n in notifications {
                    let parts = n.payload.split(separator: ":", maxSplits: 1)
                    wake(parts.first.flatMap { Int32($0) }, parts.count == 2 ? parts[1] : nil)
                }
            }
        }
    }

    // MARK: the tree's log

    /// Logs one tree write (its overwrites, in order) at the log's next position. `expect`: the
    /// position the write was computed at (ABORTED when another write was logged since); nil
    /// for a blind overwrite.
    public func commitTree(_ db: Int32, _ ops: [TreeWriteOp], expect: Int64?) async throws -> CommitPosition {
        let paths = ops.map { $0.path.segments.joined(separator: "/") }
        // Empty bytes stand for null (no encoded value is empty).
        let values = ops.map { $0.value.exists ? ByteBuffer(bytes: ValueMessagePack.encode($0.value.jsonValue)) : ByteBuffer() }
        let e = expect ?? -1
        return try await run("logging a tree write") { client in
            let rows = try await client.query("SELECT out_seq, out_commit_time FROM ember_tree_commit(\(db), \(e), \(paths), \(values))")
            for try await (seq, time) in rows.decode((Int64, Int64).self) { return CommitPosition(seq: seq, commitTime: time) }
            throw EmberError(.internal, "ember_tree_commit returned nothing")
        }
    }

    /// The tree writes logged after position `seq`, in order, each whole: at most about `limit`
    /// overwrites.
    public func treeChanges(_ db: Int32, after seq: Int64, limit: Int = 1000) async throws -> [(seq: Int64, ops: [TreeWriteOp])] {
        try await run("reading the tree's log") { client in
            let rows = try await client.query("""
                SELECT seq, parent, fields FROM ember_changes
                 WHERE db_id = \(db) AND seq > \(seq)
                   AND seq <= coalesce((SELECT max(c.seq) FROM (SELECT seq FROM ember_changes
                                         WHERE db_id = \(db) AND seq > \(seq) ORDER BY seq, idx LIMIT \(limit)) c), \(seq))
                 ORDER BY seq, idx
                """)
            var out: [(seq: Int64, ops: [TreeWriteOp])] = []
            for try await (s, path, fields) in rows.decode((Int64, String, ByteBuffer?).self) {
                let value = try fields.map { try TreeValue(json: ValueMessagePack.decode(Array(buffer: $0))) } ?? .null
                let op = TreeWriteOp(path: TreePath(unchecked: path.split(separator: "/").map(String.init)), value: value)
                if out.last?.seq == s { out[out.count - 1].ops.append(op) } else { out.append((s, [op])) }
            }
            return out
        }
    }

    /// Removes the commits of `db` made before `time` (µs) from the log, and returns the floor
    /// (the newest position trimmed and its time; nothing trimmed: the floor as it was).
    public func trim(_ db: Int32, before time: Int64) async throws -> (seq: Int64, time: Int64) {
        try await run("trimming the log") { client in
            let rows = try await client.query("SELECT out_floor_seq, out_floor_time FROM ember_trim(\(db), \(time))")
            for try await (seq, t) in rows.decode((Int64, Int64).self) { return (seq, t) }
            throw EmberError(.notFound, "No database \(db) on this PostgreSQL")
        }
    }

    /// The log after position `seq`, in order: at most `limit` writes (a commit's writes are never
    /// split: the last commit is completed past the limit).
    public func changes(_ db: Int32, after seq: Int64, limit: Int = 1000) async throws -> [LoggedChange] {
        try await tail(db, after: seq, limit: limit).changes
    }

    /// `changes(after:)`, and whether positions after `seq` were trimmed (the reader is behind the
    /// log's floor and must start again from a snapshot), read in one statement.
    public func tail(_ db: Int32, after seq: Int64, limit: Int = 1000) async throws -> LogTail {
        try await run("reading the log") { client in
            let rows = try await client.query("""
                SELECT seq, idx, parent, id, fields, create_time, commit_time FROM ember_changes
                 WHERE db_id = \(db) AND seq > \(seq)
                   AND seq <= coalesce((SELECT max(c.seq) FROM (SELECT seq FROM ember_changes
                                         WHERE db_id = \(db) AND seq > \(seq) ORDER BY seq, idx LIMIT \(limit)) c), \(seq))
                UNION ALL
                SELECT -1, 0, '', '', NULL, 0, floor_seq FROM ember_log_head WHERE db_id = \(db) AND floor_seq > \(seq)
                 ORDER BY 1, 2
                """)
            var out = LogTail()
            for try await (s, idx, parent, id, fields, created, time) in rows.decode((Int64, Int32, String, String, ByteBuffer?, Int64, Int64).self) {
                if s == -1 { out.behindFloor = true; continue }
                let key = try DocumentKey(path: ResourcePath(parsing: parent).appending(id))
                out.changes.append(LoggedChange(seq: s, index: Int(idx), key: key, fields: fields.map { Array(buffer: $0) },
                                                createTime: created, commitTime: time))
            }
            return out
        }
    }

    // MARK: errors

    /// An `EmberError` for what the store or the server said.
    static func mapped(_ error: Error) -> Error {
        if error is EmberError { return error }
        if let e = error as? PostgresStoreError {
            switch e {
            case .newerSchema(let v):
                return EmberError(.failedPrecondition, "The PostgreSQL database holds Ember's schema version \(v), newer than this build's \(PostgresSchema.version): upgrade ember")
            }
        }
        if let e = error as? PSQLError {
            let state = e.serverInfo?[.sqlState]
            let message = e.serverInfo?[.message] ?? "\(e.code)"
            switch state {
            case "EM001"?: return EmberError(.aborted, "A document changed since it was read (\(message))")
            case "EM002"?: return EmberError(.notFound, message)
            case "EM003"?: return EmberError(.aborted, "Another commit came first (\(message))")
            case "53100"?: return EmberError(.resourceExhausted, "The PostgreSQL server's disk is full: \(message)")
            case "55P03"?, "57P01"?, "57P02"?, "57P03"?: return EmberError(.unavailable, "PostgreSQL: \(message)")
            case let s? where s.hasPrefix("08"): return EmberError(.unavailable, "PostgreSQL: \(message)")
            case let s? where s.hasPrefix("40"): return EmberError(.aborted, "PostgreSQL: \(message)")
            case nil: return EmberError(.unavailable, "PostgreSQL is out of reach: \(e.code)")
            default: return EmberError(.internal, "PostgreSQL (\(state!)): \(message)")
            }
        }
        return EmberError(.unavailable, "PostgreSQL is out of reach: \(error)")
    }
}

enum PostgresStoreError: Error {
    case newerSchema(Int)
}

/// Responsible for: one document write of a commit: its key, its new fields (Ember's MessagePack;
/// nil deletes it), and what the committer expects of the document as it is; or a check only.
public struct PostgresWrite: Sendable {
    public enum Expectation: Sendable, Equatable {
        case none
        case exists
        case absent
        /// The document's update time is this (µs): it has not changed since it was read.
        case updateTime(Int64)

        var code: Int64 {
            switch self {
            case .none: return -2
            case .exists: return -1
            case .absent: return 0
            case .updateTime(let t): return max(1, t)
            }
        }
    }
    public let key: DocumentKey
    public let fields: [UInt8]?
    public let expect: Expectation
    /// Only the expectation is checked; nothing is written (a document a transaction read).
    public let checkOnly: Bool
    public init(key: DocumentKey, fields: [UInt8]?, expect: Expectation = .none) {
        self.key = key
        self.fields = fields
        self.expect = expect
        self.checkOnly = false
    }

    private init(checking key: DocumentKey, expect: Expectation) {
        self.key = key
        self.fields = nil
        self.expect = expect
        self.checkOnly = true
    }

    /// A check of `key` against `expect` that writes nothing.
    public static func check(_ key: DocumentKey, _ expect: Expectation) -> PostgresWrite { PostgresWrite(checking: key, expect: expect) }
}

/// Responsible for: where a commit went: its log position and its commit time (µs).
public struct CommitPosition: Sendable, Equatable {
    public let seq: Int64
    public let commitTime: Int64
}

/// Responsible for: one database's log head: its id, epoch, last position and commit time, and
/// the oldest position a token may resume from.
public struct LogHead: Sendable, Equatable {
    public let db: Int32
    public let epoch: Int64
    public let seq: Int64
    public let commitTime: Int64
    /// The oldest position still in the log less one, and that commit's time: a resume from a
    /// time before `floorTime` cannot be answered from the log (a reset).
    public let floorSeq: Int64
    public let floorTime: Int64
}

/// Responsible for: a document as PostgreSQL holds it.
public struct StoredDocument: Sendable, Equatable {
    public let key: DocumentKey
    public let fields: [UInt8]
    public let createTime: Int64
    public let updateTime: Int64
    public let updateSeq: Int64
}

/// Responsible for: a read of the log's tail: the writes after a position, and whether the
/// log was trimmed past it.
public struct LogTail: Sendable, Equatable {
    public var changes: [LoggedChange] = []
    public var behindFloor = false
}

/// Responsible for: one write of the log: its commit's position, its index in the commit, the
/// document, its new fields (nil: deleted) and create time, and the commit's time.
public struct LoggedChange: Sendable, Equatable {
    public let seq: Int64
    public let index: Int
    public let key: DocumentKey
    public let fields: [UInt8]?
    public let createTime: Int64
    public let commitTime: Int64
}

extension PostgresStore {
    /// Runs one statement that returns nothing (tests, administration).
    func execute(_ sql: String) async throws {
        try await run("running a statement") { client in _ = try await client.query(PostgresQuery(unsafeSQL: sql)) }
    }
}

extension PostgresStore {
    /// `body`, or UNAVAILABLE once `seconds` have passed. The caller never waits past the bound:
    /// on time-out the body's task is cancelled and left to end on its own (a task group would
    /// wait for a body that ignores cancellation, e.g. a query on a connection that went silent).
    static func bounded<T: Sendable>(_ seconds: Double, _ what: String, on executor: PostgresExecutor,
                                     _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        let pending = LockedValueBox<CheckedContinuation<T, Error>?>(nil)
        let working = LockedValueBox<Task<Void, Never>?>(nil)
        @Sendable func finish(_ r: Result<T, Error>) -> Bool {
            guard let c = pending.withLockedValue({ p -> CheckedContinuation<T, Error>? in defer { p = nil }; return p }) else { return false }
            c.resume(with: r)
            return true
        }
        return try await withCheckedThrowingContinuation { (c: CheckedContinuation<T, Error>) in
            pending.withLockedValue { $0 = c }
            let timer = Task(executorPreference: executor) {
                try? await Task.sleep(for: .milliseconds(Int64(seconds * 1000)))
                if !Task.isCancelled, finish(.failure(EmberError(.unavailable, "PostgreSQL did not answer in \(seconds) s (\(what))"))) {
                    working.current?.cancel()
                }
            }
            let work = Task(executorPreference: executor) {
                let r: Result<T, Error>
                do { r = .success(try await body()) } catch { r = .failure(error) }
                timer.cancel()
                _ = finish(r)
            }
            working.withLockedValue { $0 = work }
        }
    }

    /// `body` bounded by the store's operation timeout, its errors mapped.
    func run<T: Sendable>(_ what: String, _ body: @escaping @Sendable (PostgresClient) async throws -> T) async throws -> T {
        let client = self.client, timeout = operationTimeout
        usageBox.withLockedValue { $0.inFlight += 1 }
        do {
            // On the store's executor (its own queue), never the process's global executor.
            let v = try await PostgresStore.bounded(timeout, what, on: executor) { try await body(client) }
            usageBox.withLockedValue { $0.inFlight -= 1; $0.total += 1 }
            return v
        } catch {
            usageBox.withLockedValue { $0.inFlight -= 1; $0.total += 1; $0.failed += 1 }
            throw PostgresStore.mapped(error)
        }
    }
}

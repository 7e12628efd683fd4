import EmberConcurrency
import XCTest
import EmberModel
import EmberCore
import EmberStorage
@testable import EmberBackend
import Foundation

/// Collects listener events on the event thread and lets a test wait for them (bounded).
final class EventLog: @unchecked Sendable {
    private let lock = Lock()
    private var events: [ListenEvent] = []
    private let sem = Semaphore()

    func append(_ e: ListenEvent) {
        lock.withLock { events.append(e) }
        sem.signal()
    }

    /// Waits until at least `n` events arrived (at most 5 s each) and returns all of them.
    @discardableResult
    func wait(for n: Int, file: StaticString = #filePath, line: UInt = #line) -> [ListenEvent] {
        while lock.withLock({ events.count }) < n {
            if !sem.wait(seconds: 5) { XCTFail("timed out waiting for \(n) events, got \(lock.withLock { events.count })", file: file, line: line); break }
        }
        return lock.withLock { events }
    }

    var all: [ListenEvent] { lock.withLock { events } }

    var snapshots: [ViewSnapshot] {
        all.compactMap { if case .snapshot(let s) = $0 { return s }; return nil }
    }
}

func key(_ s: String) -> DocumentKey { try! DocumentKey(parsing: s) }
func fields(_ d: [String: Value]) -> MapValue { MapValue(d) }
func setM(_ k: String, _ d: [String: Value]) -> Mutation { Mutation(key: key(k), kind: .set(MapValue(d))) }
func collection(_ s: String) -> Query { Query(collection: try! ResourcePath(parsing: s)) }
func fp(_ s: String) -> FieldPath { try! FieldPath(parsing: s) }
func summary(_ s: ViewSnapshot) -> [String] {
    s.changes.map { c in
        let k = ["added", "removed", "modified", "metadata"][c.kind.rawValue]
        return "\(k) \(c.document.key.id) \(c.oldIndex) \(c.newIndex)"
    }
}

// MARK: - more builders

func deleteM(_ k: String) -> Mutation { Mutation(key: key(k), kind: .delete) }
/// An update: sets the given fields and requires the document to exist (Firestore's update()).
func updateM(_ k: String, _ d: [String: Value]) -> Mutation {
    Mutation(key: key(k), kind: .patch(MapValue(d), mask: d.keys.sorted().map { fp($0) }), precondition: .exists(true))
}
func ordered(_ coll: String, by field: String = "n", descending: Bool = false) -> Query {
    try! collection(coll).order(by: fp(field), descending: descending)
}
func doc(_ k: String, _ d: [String: Value], version: Int64 = 1, local: Bool = false) -> Document {
    Document(key: key(k), data: MapValue(d), version: version, createTime: version, updateTime: version, hasLocalMutations: local)
}
func n(_ v: Int64) -> [String: Value] { ["n": .int(v)] }

/// Two clients (separate caches) of one shared in-process backend.
func twoClients() -> (EmberClient, EmberClient) {
    let backend = Backend(persistence: MemoryPersistence())
    return (EmberClient(persistence: MemoryPersistence(), backend: backend),
            EmberClient(persistence: MemoryPersistence(), backend: backend))
}

// MARK: - waiting without sleeping

/// Makes every message in flight land: the backend processes what it was sent, the worker
/// processes what the backend sent back (a round trip), and the event thread runs every callback
/// posted so far. Repeated so chains (worker -> backend -> worker -> callback -> ...) settle too. After it, "no
/// further event" can be asserted exactly.
func settle(_ clients: EmberClient...) {
    for _ in 0..<3 {
        for c in clients {
            c.backend.flush()
            _ = c.isNetworkEnabled          // a worker round trip
        }
        for c in clients { c.events.drain() }   // callbacks may post more (a write, a listen)
    }
}

/// Runs every callback the client's calls so far lead to without a backend round trip: the
/// worker finishes what it was handed (a memory-cache write is applied there after `write`
/// returns), then the event thread runs what that posted.
func drainLocal(_ client: EmberClient) {
    _ = client.isNetworkEnabled   // a worker round trip
    client.events.drain()
}

/// Runs `body` while the backend's queue is blocked, so nothing the backend sends can arrive
/// meanwhile (for example to attach two listeners before the first listen result). `body` must not
/// wait for the backend.
func whileBackendHeld(_ backend: Backend, _ body: () throws -> Void) rethrows {
    let held = Semaphore(), release = Semaphore()
    backend.queue.async { held.signal(); release.wait() }
    held.wait()
    defer { release.signal() }
    try body()
}

/// Writes and waits (bounded) for the backend's verdict.
@discardableResult
func writeAndWait(_ client: EmberClient, _ ms: [Mutation], file: StaticString = #filePath, line: UInt = #line) -> EmberError? {
    let sem = Semaphore()
    let box = Box<EmberError?>(nil)
    do {
        try client.write(ms) { e in box.value = e; sem.signal() }
    } catch {
        XCTFail("write threw \(error)", file: file, line: line)
        return error as? EmberError
    }
    if !sem.wait(seconds: 10) { XCTFail("no verdict for the write", file: file, line: line) }
    return box.value
}

/// Blocks (bounded) until every write made so far is acknowledged or rejected.
func waitForPendingWrites(_ client: EmberClient, file: StaticString = #filePath, line: UInt = #line) {
    let sem = Semaphore()
    XCTAssertNoThrow(try client.waitForPendingWrites { _ in sem.signal() }, file: file, line: line)
    if !sem.wait(seconds: 30) { XCTFail("pending writes never completed", file: file, line: line) }
}

/// A new directory for one test's database files, `ember-<label>-<pid>-<random>` under the
/// system's temporary directory; `removeTemporaryDirectory` deletes it with its contents.
func makeTemporaryDirectory(_ label: String) -> String {
    let dir = NSTemporaryDirectory() + "ember-\(label)-\(getpid())-\(UInt64.random(in: 0..<UInt64.max))"
    try! FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    return dir
}

func removeTemporaryDirectory(_ dir: String) { try? FileManager.default.removeItem(atPath: dir) }

/// A value shared between threads, behind a lock.
final class Box<T>: @unchecked Sendable {
    private let lock = Lock()
    private var v: T
    init(_ v: T) { self.v = v }
    var value: T {
        get { lock.withLock { v } }
        set { lock.withLock { v = newValue } }
    }
    func mutate<R>(_ body: (inout T) -> R) -> R { lock.withLock { body(&v) } }
}

/// Runs `body(i)` on `count` threads at once and waits for all of them.
func concurrently(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let group = DispatchGroup()
    for i in 0..<count {
        group.enter()
        Thread.detachNewThread { body(i); group.leave() }
    }
    group.wait()
}

// MARK: - rendering events

/// One line per event: its changes ("kind id old new", comma separated) then its metadata in
/// brackets: "added a -1 0, modified b 1 2 [pending,cache]". Errors render as "error CODE".
func render(_ e: ListenEvent) -> String {
    switch e {
    case .error(let err): return "error \(err.code.name)"
    case .snapshot(let s):
        var flags: [String] = []
        if s.hasPendingWrites { flags.append("pending") }
        if s.isFromCache { flags.append("cache") }
        let changes = summary(s).joined(separator: ", ")
        return (changes.isEmpty ? "" : changes + " ") + "[" + flags.joined(separator: ",") + "]"
    }
}

func ids(_ s: ViewSnapshot) -> [String] { s.documents.map { $0.key.id } }

extension EventLog {
    var lines: [String] { all.map(render) }
    var last: ViewSnapshot? { snapshots.last }
}

// MARK: - the replay check (docs/semantics.md 8-10)

/// Checks every snapshot of one listener against the previous one: the first is all ADDED with
/// new indexes 0..n-1; changes come removed, then added, then modified, each in query order;
/// replaying them step by step (remove at oldIndex, insert at newIndex) on the previous list
/// gives exactly the new list (keys and data); metadata-only changes appear only with
/// includeMetadataChanges and change no data; hasPendingWrites covers exactly the documents in
/// the result; nothing follows an error.
func assertReplays(_ events: [ListenEvent], includeMetadata: Bool, file: StaticString = #filePath, line: UInt = #line) {
    var list: [Document]? = nil
    var ended = false
    for (n, e) in events.enumerated() {
        let ctx = "event \(n): \(render(e))"
        if ended { XCTFail("an event follows an error: \(ctx)", file: file, line: line); return }
        guard case .snapshot(let s) = e else { ended = true; continue }
        let order = s.query.normalizedOrderBy
        if list == nil {
            for (i, c) in s.changes.enumerated() where c.kind != .added || c.oldIndex != -1 || c.newIndex != i {
                XCTFail("first snapshot must be all added 0..n-1: \(ctx)", file: file, line: line)
                break
            }
        }
        var cur = list ?? []
        // kinds in order, each group in query order
        func rank(_ k: DocumentChange.Kind) -> Int { k == .removed ? 0 : (k == .added ? 1 : 2) }
        for (a, b) in zip(s.changes, s.changes.dropFirst()) {
            if rank(a.kind) > rank(b.kind) || (rank(a.kind) == rank(b.kind) && Query.compare(a.document, b.document, orderBy: order) >= 0) {
                XCTFail("changes out of order: \(ctx)", file: file, line: line)
            }
        }
        for c in s.changes {
            if !includeMetadata && c.kind == .metadata { XCTFail("metadata change without includeMetadataChanges: \(ctx)", file: file, line: line) }
            switch c.kind {
            case .added: if c.oldIndex != -1 || c.newIndex < 0 { XCTFail("bad added indexes: \(ctx)", file: file, line: line) }
            case .removed: if c.oldIndex < 0 || c.newIndex != -1 { XCTFail("bad removed indexes: \(ctx)", file: file, line: line) }
            case .modified, .metadata: if c.oldIndex < 0 || c.newIndex < 0 { XCTFail("bad modified indexes: \(ctx)", file: file, line: line) }
            }
            if c.oldIndex >= 0 {
                guard c.oldIndex < cur.count, cur[c.oldIndex].key == c.document.key else {
                    XCTFail("oldIndex \(c.oldIndex) of \(c.document.key.id) does not point at it in \(cur.map { $0.key.id }): \(ctx)", file: file, line: line)
                    return
                }
                let old = cur.remove(at: c.oldIndex)
                if c.kind == .metadata && old.data != c.document.data { XCTFail("metadata change with new data: \(ctx)", file: file, line: line) }
                if c.kind == .modified && old.data == c.document.data { XCTFail("modified without new data: \(ctx)", file: file, line: line) }
            }
            if c.newIndex >= 0 {
                guard c.newIndex <= cur.count else {
                    XCTFail("newIndex \(c.newIndex) past the end of \(cur.map { $0.key.id }): \(ctx)", file: file, line: line)
                    return
                }
                cur.insert(c.document, at: c.newIndex)
            }
        }
        if cur.map({ $0.key }) != s.documents.map({ $0.key }) {
            XCTFail("replay gives \(cur.map { $0.key.id }), snapshot has \(ids(s)): \(ctx)", file: file, line: line)
        } else {
            for (a, b) in zip(cur, s.documents) where a.data != b.data {
                XCTFail("replay gives stale data for \(a.key.id): \(ctx)", file: file, line: line)
            }
        }
        for (a, b) in zip(s.documents, s.documents.dropFirst()) where Query.compare(a, b, orderBy: order) >= 0 {
            XCTFail("documents not in query order: \(ctx)", file: file, line: line)
        }
        if s.hasPendingWrites != s.documents.contains(where: { $0.hasLocalMutations }) {
            XCTFail("hasPendingWrites must cover exactly the result's documents: \(ctx)", file: file, line: line)
        }
        list = Array(s.documents)
    }
}

extension EventLog {
    /// The replay check on everything received so far.
    func assertConsistent(includeMetadata: Bool, file: StaticString = #filePath, line: UInt = #line) {
        assertReplays(all, includeMetadata: includeMetadata, file: file, line: line)
    }
}

extension EmberClient {
    /// Listens into `log`, checking that every callback runs on this client's event thread.
    @discardableResult
    func record(_ query: Query, _ log: EventLog, metadata: Bool = false, source: ListenOptions.Source = .default,
                onGone: (() -> Void)? = nil, file: StaticString = #filePath, line: UInt = #line) throws -> ListenerToken {
        let events = self.events
        return try listen(query, options: ListenOptions(includeMetadataChanges: metadata, source: source), onGone: onGone) { e in
            if !events.isCurrent { XCTFail("callback off the event thread", file: file, line: line) }
            log.append(e)
        }
    }
}

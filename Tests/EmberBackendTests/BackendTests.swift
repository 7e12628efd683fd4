import XCTest
import EmberConcurrency
import Dispatch
import EmberModel
import EmberStorage
@testable import EmberBackend

// MARK: helpers

private func key(_ s: String) -> DocumentKey { try! DocumentKey(parsing: s) }
private func fp(_ s: String) -> FieldPath { try! FieldPath(parsing: s) }
private func fields(_ d: [String: Value]) -> MapValue { MapValue(d) }
private func setM(_ k: String, _ d: [String: Value], transforms: [FieldTransform] = []) -> Mutation {
    Mutation(key: key(k), kind: .set(MapValue(d)), transforms: transforms)
}
private func updateM(_ k: String, _ d: [String: Value]) -> Mutation {
    Mutation(key: key(k), kind: .patch(MapValue(d), mask: d.keys.map { fp($0) }), precondition: .exists(true))
}
private func deleteM(_ k: String) -> Mutation { Mutation(key: key(k), kind: .delete) }
private func collection(_ s: String) -> Query { Query(collection: try! ResourcePath(parsing: s)) }
private func eq(_ f: String, _ v: Value) -> Filter { .field(FieldFilter(field: fp(f), op: .equal, value: v)) }

/// A BackendClient that records every event it receives on its own serial queue and lets a
/// test wait (bounded) for them.
private final class TestClient: BackendClient, @unchecked Sendable {
    let queue: DispatchQueue
    private let lock = Lock()
    private var received: [BackendEvent] = []
    private var onQueue: [Bool] = []
    private let sem = DispatchSemaphore(value: 0)
    private let marker = DispatchSpecificKey<Int>()

    init(_ name: String) {
        queue = DispatchQueue(label: "test.client.\(name)")
        queue.setSpecific(key: marker, value: 1)
    }

    func backend(_ link: any BackendLink, didSend event: BackendEvent) {
        let mine = DispatchQueue.getSpecific(key: marker) == 1
        lock.withLock { received.append(event); onQueue.append(mine) }
        sem.signal()
    }

    var events: [BackendEvent] { lock.withLock { received } }
    var allOnItsQueue: Bool { lock.withLock { onQueue.allSatisfy { $0 } } }

    @discardableResult
    func wait(for n: Int, file: StaticString = #filePath, line: UInt = #line) -> [BackendEvent] {
        let deadline = DispatchTime.now() + 5
        while events.count < n {
            if sem.wait(timeout: deadline) == .timedOut {
                XCTFail("timed out waiting for \(n) events, got \(events.count): \(events)", file: file, line: line)
                break
            }
        }
        return events
    }
}

/// Waits (bounded) for a reply delivered to a completion.
private func failure(_ r: Result<Int64, EmberError>?) -> ErrorCode? {
    if case .failure(let e)? = r { return e.code }
    return nil
}

private func reply<T: Sendable>(_ start: (@escaping @Sendable (T) -> Void) -> Void, file: StaticString = #filePath, line: UInt = #line) -> T? {
    let sem = DispatchSemaphore(value: 0)
    let value = LockedValueBox<T?>(nil)
    start { v in value.withLockedValue { $0 = v }; sem.signal() }
    if sem.wait(timeout: .now() + 5) == .timedOut { XCTFail("no reply within 5 s", file: file, line: line); return nil }
    return value.current
}

private struct Commit {
    let version: Int64
    let documents: [DocumentKey: Document]
    let ack: Int64?
}

private func commit(_ e: BackendEvent?, file: StaticString = #filePath, line: UInt = #line) -> Commit? {
    guard case .commit(let v, let docs, let ack)? = e else { XCTFail("expected a commit, got \(String(describing: e))", file: file, line: line); return nil }
    return Commit(version: v, documents: Dictionary(docs.map { ($0.key, $0) }, uniquingKeysWith: { a, _ in a }), ack: ack)
}

private func listenResult(_ e: BackendEvent?, file: StaticString = #filePath, line: UInt = #line)
    -> (target: Int, docs: [Document], resolved: [Document], version: Int64)? {
    guard case .listenResult(let t, let docs, let resolved, let v)? = e else {
        XCTFail("expected a listen result, got \(String(describing: e))", file: file, line: line); return nil
    }
    return (t, docs, resolved, v)
}

private func ids(_ docs: [Document]) -> [String] { docs.map { $0.key.path.canonical } }

// MARK: tests

/// Backend + BackendConnection: atomic ordered commits, versions and times, server timestamps,
/// rejections, watch targets (matching, limit windows, known keys), lookup, runQuery and count.
final class BackendTests: XCTestCase {
    var backend: Backend!
    fileprivate var a: TestClient!
    fileprivate var b: TestClient!
    var connA: BackendConnection!
    var connB: BackendConnection!
    var nextBatch: Int64 = 1

    override func setUp() {
        backend = Backend(persistence: MemoryPersistence())
        a = TestClient("a")
        b = TestClient("b")
        connA = backend.connect(client: a, queue: a.queue)
        connB = backend.connect(client: b, queue: b.queue)
    }

    override func tearDown() {
        connA.disconnect()
        connB.disconnect()
        backend.flush()
    }

    /// Commits a batch from `conn` and returns its id.
    @discardableResult
    func send(_ conn: BackendConnection, _ ms: [Mutation]) -> Int64 {
        let id = nextBatch
        nextBatch += 1
        conn.commit(MutationBatch(batchId: id, localWriteTime: 0, mutations: ms))
        return id
    }

    /// Commits from connection B and waits for its acknowledgement.
    @discardableResult
    fileprivate func seed(_ ms: [Mutation], file: StaticString = #filePath, line: UInt = #line) -> Commit? {
        let n = b.events.count
        let id = send(connB, ms)
        let c = commit(b.wait(for: n + 1, file: file, line: line).last, file: file, line: line)
        XCTAssertEqual(c?.ack, id, file: file, line: line)
        return c
    }

    func lookup(_ k: String) -> Document? { reply { self.connA.lookup([key(k)], completion: $0) }?.0.first }

    // MARK: commits

    func testCommitsAreAppliedInOrderWithStrictlyIncreasingVersions() {
        let id1 = send(connA, [setM("c/a", ["v": .int(1)])])
        let id2 = send(connA, [setM("c/a", ["v": .int(2)]), setM("c/b", ["v": .int(2)])])
        let id3 = send(connA, [updateM("c/a", ["v": .int(3)])])
        let events = a.wait(for: 3)
        let commits = events.compactMap { commit($0) }
        XCTAssertEqual(commits.map { $0.ack }, [id1, id2, id3])
        XCTAssertEqual(commits.map { $0.documents.count }, [1, 2, 1])
        XCTAssertEqual(commits[1].documents[key("c/b")]?.data["v"], .int(2))
        XCTAssertTrue(zip(commits, commits.dropFirst()).allSatisfy { $0.version < $1.version }, "\(commits.map { $0.version })")
        XCTAssertTrue(commits.allSatisfy { c in c.documents.values.allSatisfy { $0.version == c.version } })
        XCTAssertEqual(lookup("c/a")?.data["v"], .int(3))
        XCTAssertTrue(a.allOnItsQueue, "events arrive on the client's queue")
        XCTAssertEqual(b.events.count, 0, "B watches nothing and wrote nothing")
    }

    func testVersionsStayStrictlyIncreasingUnderLoad() {
        for i in 0..<200 { send(i % 2 == 0 ? connA : connB, [setM("c/d\(i % 7)", ["i": .int(Int64(i))])]) }
        let all = (a.wait(for: 100) + b.wait(for: 100)).compactMap { commit($0) }.sorted { $0.ack! < $1.ack! }
        XCTAssertEqual(all.count, 200)
        XCTAssertTrue(zip(all, all.dropFirst()).allSatisfy { $0.version < $1.version }, "commit order follows batch order")
    }

    func testABatchWhoseSecondMutationFailsLeavesNothingApplied() {
        seed([setM("c/x", ["v": .int(0)])])
        connB.listen(targetId: 1, query: collection("c"), knownKeys: [])
        b.wait(for: 2)
        let id = send(connA, [setM("c/a", ["v": .int(1)]), updateM("c/missing", ["v": .int(2)]), updateM("c/x", ["v": .int(3)])])
        guard case .writeRejected(let batchId, let error)? = a.wait(for: 1).first else { return XCTFail("\(a.events)") }
        XCTAssertEqual(batchId, id)
        XCTAssertEqual(error.code, .notFound)
        XCTAssertEqual(lookup("c/a")?.exists, false)
        XCTAssertEqual(lookup("c/x")?.data["v"], .int(0))
        // The watcher heard nothing of it: its next event is the next real commit.
        send(connA, [setM("c/y", ["v": .int(9)])])
        let next = commit(b.wait(for: 3).last)
        XCTAssertEqual(next?.documents.keys.map { $0.path.canonical }, ["c/y"])
        XCTAssertNil(next?.ack)
    }

    func testCreateAndUpdateTimes() {
        guard let c1 = seed([setM("c/a", ["v": .int(1)])]), let d1 = c1.documents[key("c/a")] else { return XCTFail() }
        XCTAssertEqual(d1.createTime, c1.version)
        XCTAssertEqual(d1.updateTime, c1.version)
        guard let c2 = seed([updateM("c/a", ["v": .int(2)])]), let d2 = c2.documents[key("c/a")] else { return XCTFail() }
        XCTAssertEqual(d2.createTime, c1.version, "the create time stays")
        XCTAssertEqual(d2.updateTime, c2.version)
        XCTAssertGreaterThan(c2.version, c1.version)
        guard let c3 = seed([deleteM("c/a")]), let d3 = c3.documents[key("c/a")] else { return XCTFail() }
        XCTAssertFalse(d3.exists, "a delete is sent as a tombstone")
        XCTAssertEqual(d3.version, c3.version)
        guard let c4 = seed([setM("c/a", ["v": .int(4)])]), let d4 = c4.documents[key("c/a")] else { return XCTFail() }
        XCTAssertEqual(d4.createTime, c4.version, "re-created: a new create time")
        XCTAssertEqual(lookup("c/a")?.createTime, c4.version)
    }

    /// Firestore: a write that leaves the document as it was changes nothing: the update time
    /// stays (the writer's acknowledgement carries the unchanged document) and no listener hears
    /// of it. 1 -> 1.0 is a change (strict equality).
    func testAWriteThatChangesNothingKeepsTheUpdateTimeAndIsNotAnnounced() {
        guard let c1 = seed([setM("c/a", ["v": .int(1)])]) else { return XCTFail() }
        connA.listen(targetId: 1, query: collection("c"), knownKeys: [])
        a.wait(for: 1)
        guard let c2 = seed([setM("c/a", ["v": .int(1)])]), let d2 = c2.documents[key("c/a")] else { return XCTFail() }
        XCTAssertGreaterThan(c2.version, c1.version, "the commit has its own version")
        XCTAssertEqual(d2.updateTime, c1.version, "the document's update time stays")
        XCTAssertEqual(lookup("c/a")?.updateTime, c1.version)
        // Changed and changed back in one batch: no change either.
        seed([setM("c/a", ["v": .int(2)]), setM("c/a", ["v": .int(1)])])
        XCTAssertEqual(lookup("c/a")?.updateTime, c1.version)
        guard let c4 = seed([setM("c/a", ["v": .double(1)])]) else { return XCTFail() }
        XCTAssertEqual(lookup("c/a")?.updateTime, c4.version, "int 1 -> double 1.0 is a change")
        let events = a.wait(for: 2)
        XCTAssertEqual(events.count, 2, "the listener heard only the real change: \(events)")
        XCTAssertEqual(commit(events.last)?.documents[key("c/a")]?.data["v"], .double(1))
    }

    func testServerTimestampsAreResolvedAtCommit() {
        let ts = [FieldTransform(path: fp("at"), op: .serverTimestamp), FieldTransform(path: fp("m.at"), op: .serverTimestamp)]
        guard let c = seed([setM("c/a", ["v": .int(1)], transforms: ts)]), let d = c.documents[key("c/a")] else { return XCTFail() }
        XCTAssertEqual(d.data["at"], .timestamp(Timestamp(micros: c.version)))
        XCTAssertEqual(d.field(fp("m.at")), .timestamp(Timestamp(micros: c.version)))
        XCTAssertEqual(lookup("c/a")?.data["at"], .timestamp(Timestamp(micros: c.version)))
        let inc = [FieldTransform(path: fp("v"), op: .increment(.int(5)))]
        let c2 = seed([Mutation(key: key("c/a"), kind: .patch(MapValue(), mask: []), transforms: inc, precondition: .exists(true))])
        XCTAssertEqual(c2?.documents[key("c/a")]?.data["v"], .int(6))
        XCTAssertEqual(c2?.documents[key("c/a")]?.data["at"], .timestamp(Timestamp(micros: c.version)), "earlier fields stay")
    }

    func testUpdateOfAMissingDocumentIsRejectedAsNotFound() {
        let id = send(connA, [updateM("c/missing", ["v": .int(1)])])
        guard case .writeRejected(let batchId, let error)? = a.wait(for: 1).first else { return XCTFail("\(a.events)") }
        XCTAssertEqual(batchId, id)
        XCTAssertEqual(error.code, .notFound)
        XCTAssertEqual(lookup("c/missing")?.exists, false)
    }

    /// Each update is small, but together they make the stored document larger than 1 MiB:
    /// the update that crosses the limit is refused and the document keeps its earlier fields.
    func testAnUpdateThatGrowsTheDocumentPastOneMiBIsRejected() {
        let half = Value.string(String(repeating: "x", count: 600_000))
        XCTAssertNotNil(seed([setM("c/big", ["a": half])]))
        let id = send(connA, [updateM("c/big", ["b": half])])
        guard case .writeRejected(let batchId, let error)? = a.wait(for: 1).first else { return XCTFail("\(a.events)") }
        XCTAssertEqual(batchId, id)
        XCTAssertEqual(error.code, .invalidArgument)
        XCTAssertTrue(error.message.contains("1 MiB"), error.message)
        XCTAssertEqual(lookup("c/big")?.data["b"], nil)
        XCTAssertEqual(lookup("c/big")?.data["a"], half)
    }

    func testTransactionCommitsCheckPreconditions() {
        guard let c = seed([setM("c/a", ["v": .int(1)])]) else { return XCTFail() }
        let stale = reply { self.connA.commitTransaction([Mutation(key: key("c/a"), kind: .set(fields(["v": .int(2)])), precondition: .updateTime(c.version - 1))], completion: $0) }
        XCTAssertEqual(failure(stale), .failedPrecondition)
        let exists = reply { self.connA.commitTransaction([Mutation(key: key("c/a"), kind: .set(fields([:])), precondition: .exists(false))], completion: $0) }
        XCTAssertEqual(failure(exists), .alreadyExists)
        let verifyMissing = reply { self.connA.commitTransaction([Mutation(key: key("c/none"), kind: .verify, precondition: .updateTime(0))], completion: $0) }
        XCTAssertEqual(failure(verifyMissing), .failedPrecondition)
        let ok = reply { self.connA.commitTransaction([Mutation(key: key("c/a"), kind: .set(fields(["v": .int(3)])), precondition: .updateTime(c.version)),
                                                         Mutation(key: key("c/none"), kind: .verify, precondition: .exists(false))], completion: $0) }
        guard case .success(let v)? = ok else { return XCTFail("\(String(describing: ok))") }
        XCTAssertGreaterThan(v, c.version)
        XCTAssertEqual(lookup("c/a")?.data["v"], .int(3))
        XCTAssertEqual(lookup("c/a")?.updateTime, v)
        XCTAssertEqual(a.events.count, 0, "a transaction commit is answered by its completion, not an ack event")
    }

    // MARK: watch targets

    func testListenResultThenCommitEventsOnlyForMatchingTargets() {
        seed([setM("cities/SF", ["state": .string("CA")]), setM("cities/TOK", ["state": .null])])
        let q = try! collection("cities").filter(eq("state", .string("CA")))
        connA.listen(targetId: 7, query: q, knownKeys: [])
        guard let r = listenResult(a.wait(for: 1).first) else { return }
        XCTAssertEqual(r.target, 7)
        XCTAssertEqual(ids(r.docs), ["cities/SF"])
        XCTAssertEqual(r.resolved.count, 0)
        XCTAssertGreaterThan(r.version, 0)

        seed([setM("other/x", ["state": .string("CA")])])             // another collection
        seed([setM("cities/TOK", ["state": .string("JP")])])         // never matched
        seed([setM("cities/SF/landmarks/gg", ["state": .string("CA")])])  // a subcollection
        seed([setM("cities/LA", ["state": .string("CA")])])          // matches
        let events = a.wait(for: 2)
        XCTAssertEqual(events.count, 2, "only the matching write was sent: \(events)")
        guard let c = commit(events.last) else { return }
        XCTAssertEqual(c.documents.keys.map { $0.path.canonical }, ["cities/LA"])
        XCTAssertNil(c.ack)
        // A document leaving the query is sent (so the client can drop it), and so is a delete.
        seed([updateM("cities/SF", ["state": .string("NV")])])
        XCTAssertEqual(commit(a.wait(for: 3).last)?.documents[key("cities/SF")]?.data["state"], .string("NV"))
        seed([deleteM("cities/LA")])
        XCTAssertEqual(commit(a.wait(for: 4).last)?.documents[key("cities/LA")]?.exists, false)
        // After unlisten nothing more is sent.
        connA.unlisten(targetId: 7)
        seed([setM("cities/LA", ["state": .string("CA")])])
        connA.listen(targetId: 8, query: collection("other"), knownKeys: [])
        XCTAssertEqual(ids(listenResult(a.wait(for: 5).last)?.docs ?? []), ["other/x"])
        XCTAssertEqual(a.events.count, 5)
        XCTAssertTrue(a.allOnItsQueue)
    }

    func testOneCommitIsOneEventPerConnectionWithOnlyWhatItWatchesOrWrote() {
        connA.listen(targetId: 1, query: collection("c"), knownKeys: [])
        connA.listen(targetId: 2, query: try! collection("c").filter(eq("x", .bool(true))), knownKeys: [])
        a.wait(for: 2)
        let id = send(connB, [setM("c/a", ["x": .bool(true)]), setM("d/b", [:]), setM("c/c", [:])])
        guard let ca = commit(a.wait(for: 3).last), let cb = commit(b.wait(for: 1).last) else { return }
        XCTAssertEqual(Set(ca.documents.keys.map { $0.path.canonical }), ["c/a", "c/c"])
        XCTAssertNil(ca.ack)
        XCTAssertEqual(Set(cb.documents.keys.map { $0.path.canonical }), ["c/a", "d/b", "c/c"], "the writer gets all it wrote")
        XCTAssertEqual(cb.ack, id)
        XCTAssertEqual(ca.version, cb.version)
    }

    func testCollectionGroupAndDocumentTargets() {
        connA.listen(targetId: 1, query: Query(collectionGroup: "landmarks"), knownKeys: [])
        connA.listen(targetId: 2, query: Query(document: key("cities/SF")), knownKeys: [])
        let first = a.wait(for: 2)
        guard let g = listenResult(first[0]), let d = listenResult(first[1]) else { return }
        XCTAssertEqual(g.docs.count, 0)
        XCTAssertEqual(d.docs.count, 0)
        XCTAssertEqual(d.resolved.map { $0.exists }, [false], "a document target resolves a missing document as a tombstone")
        XCTAssertEqual(ids(d.resolved), ["cities/SF"])
        seed([setM("cities/SF/landmarks/gg", [:]), setM("cities/SF", ["n": .int(1)]), setM("cities/LA", [:])])
        guard let c = commit(a.wait(for: 3).last) else { return }
        XCTAssertEqual(Set(c.documents.keys.map { $0.path.canonical }), ["cities/SF/landmarks/gg", "cities/SF"])
    }

    func testLimitTargetsSendTheDocumentThatEntersTheWindow() {
        seed((1...4).map { setM("c/p\($0)", ["p": .int(Int64($0))]) })
        let q = try! collection("c").order(by: fp("p")).limit(2)
        connA.listen(targetId: 1, query: q, knownKeys: [])
        guard let r = listenResult(a.wait(for: 1).first) else { return }
        XCTAssertEqual(ids(r.docs), ["c/p1", "c/p2"], "a limit target starts with its window")
        seed([deleteM("c/p1")])
        guard let c = commit(a.wait(for: 2).last) else { return }
        XCTAssertEqual(c.documents[key("c/p1")]?.exists, false)
        XCTAssertEqual(c.documents[key("c/p3")]?.data["p"], .int(3), "p3 entered the window and is sent although it did not change")
        XCTAssertEqual(c.documents.count, 2)
        // A limitToLast window refills from the other end.
        let last = try! collection("c").order(by: fp("p")).limit(2, type: .last)
        connA.listen(targetId: 2, query: last, knownKeys: [])
        XCTAssertEqual(ids(listenResult(a.wait(for: 3).last)?.docs ?? []), ["c/p3", "c/p4"])
        seed([updateM("c/p4", ["p": .int(0)])])
        guard let c2 = commit(a.wait(for: 4).last) else { return }
        // p4 changed (both targets); p2 entered the last-2 window ([p2, p3]).
        XCTAssertEqual(Set(c2.documents.keys.map { $0.path.canonical }), ["c/p4", "c/p2"])
    }

    func testKnownKeysAreResolvedWithTombstonesForDeletedDocuments() {
        seed([setM("c/keep", ["v": .int(1)]), setM("c/gone", ["v": .int(1)]), setM("c/moved", ["v": .int(1)])])
        seed([deleteM("c/gone"), updateM("c/moved", ["v": .int(2)])])
        let q = try! collection("c").filter(eq("v", .int(1)))
        connA.listen(targetId: 1, query: q, knownKeys: [key("c/keep"), key("c/gone"), key("c/moved"), key("c/never")])
        guard let r = listenResult(a.wait(for: 1).first) else { return }
        XCTAssertEqual(ids(r.docs), ["c/keep"])
        let resolved = Dictionary(uniqueKeysWithValues: r.resolved.map { ($0.key.path.canonical, $0) })
        XCTAssertEqual(Set(resolved.keys), ["c/gone", "c/moved", "c/never"], "known keys not in the result, and only those")
        XCTAssertEqual(resolved["c/gone"]?.exists, false)
        XCTAssertEqual(resolved["c/never"]?.exists, false)
        XCTAssertEqual(resolved["c/gone"]?.version, r.version, "tombstones are at the read version")
        XCTAssertEqual(resolved["c/moved"]?.data["v"], .int(2), "a document that no longer matches comes with its current state")
        // runQuery resolves known keys the same way.
        guard let run = reply({ self.connA.runQuery(q, knownKeys: [key("c/gone"), key("c/keep")], completion: $0) }) else { return }
        XCTAssertEqual(ids(run.0), ["c/keep"])
        XCTAssertEqual(run.1.map { "\($0.key.path.canonical) \($0.exists)" }, ["c/gone false"])
    }

    // MARK: reads

    func testLookupRunQueryAndCount() {
        guard let c = seed((1...5).map { setM("c/d\($0)", ["n": .int(Int64($0)), "odd": .bool($0 % 2 == 1)]) }) else { return XCTFail() }
        seed([setM("c/d1/sub/x", ["n": .int(100)]), setM("other/y", ["n": .int(1)])])
        guard let found = reply({ self.connA.lookup([key("c/d2"), key("c/none"), key("c/d1/sub/x")], completion: $0) }) else { return }
        XCTAssertEqual(found.0.map { $0.exists }, [true, false, true])
        XCTAssertEqual(found.0[0].data["n"], .int(2))
        XCTAssertEqual(found.0[0].version, c.version)
        XCTAssertEqual(found.0[1].version, found.1, "a missing document is a tombstone at the read version")
        XCTAssertGreaterThan(found.1, c.version)

        let odd = try! collection("c").filter(eq("odd", .bool(true))).order(by: fp("n"), descending: true)
        XCTAssertEqual(ids(reply { self.connA.runQuery(odd, knownKeys: [], completion: $0) }?.0 ?? []), ["c/d5", "c/d3", "c/d1"])
        XCTAssertEqual(ids(reply { self.connA.runQuery(try! odd.limit(2), knownKeys: [], completion: $0) }?.0 ?? []), ["c/d5", "c/d3"])
        XCTAssertEqual(ids(reply { self.connA.runQuery(try! odd.limit(1, type: .last), knownKeys: [], completion: $0) }?.0 ?? []), ["c/d1"])
        XCTAssertEqual(ids(reply { self.connA.runQuery(Query(collectionGroup: "sub"), knownKeys: [], completion: $0) }?.0 ?? []), ["c/d1/sub/x"])
        XCTAssertEqual(reply { self.connA.count(collection("c"), completion: $0) }, 5)
        XCTAssertEqual(reply { self.connA.count(odd, completion: $0) }, 3)
        XCTAssertEqual(reply { self.connA.count(try! odd.limit(2), completion: $0) }, 2)
        XCTAssertEqual(reply { self.connA.count(collection("empty"), completion: $0) }, 0)
        XCTAssertEqual(reply { self.connA.count(Query(document: key("c/d1")), completion: $0) }, 1)
        XCTAssertEqual(a.events.count, 0, "reads send no events")
    }

    func testRepliesArriveOnTheClientQueueInOrder() {
        let seen = LockedValueBox<[Int]>([])
        let done = DispatchSemaphore(value: 0)
        send(connA, [setM("c/a", [:])])
        connA.lookup([key("c/a")]) { _ in seen.withLockedValue { $0.append(1) } }
        connA.count(collection("c")) { _ in seen.withLockedValue { $0.append(2) } }
        connA.runQuery(collection("c"), knownKeys: []) { _ in seen.withLockedValue { $0.append(3) }; done.signal() }
        XCTAssertEqual(done.wait(timeout: .now() + 5), .success)
        a.queue.sync {}
        XCTAssertEqual(seen.current, [1, 2, 3])
        XCTAssertEqual(a.events.count, 1, "the ack came first, on the same queue")
    }

    // MARK: lifetime

    func testDisconnectStopsEventsAndLetsGoOfTheBackend() {
        var owned: Backend? = Backend(persistence: MemoryPersistence())
        let c = TestClient("lifetime")
        let conn = owned!.connect(client: c, queue: c.queue)
        conn.listen(targetId: 1, query: collection("c"), knownKeys: [])
        c.wait(for: 1)
        // Hold the backend's queue so the next messages are in flight when the owner lets go.
        let gate = DispatchSemaphore(value: 0)
        owned!.queue.async { _ = gate.wait(timeout: .now() + 5) }
        conn.disconnect()
        conn.commit(MutationBatch(batchId: 1, localWriteTime: 0, mutations: [setM("c/a", [:])]))
        let looked = DispatchSemaphore(value: 0)
        conn.lookup([key("c/a")]) { r in if r.0.first?.exists == true { looked.signal() } }
        owned = nil
        gate.signal()
        XCTAssertEqual(looked.wait(timeout: .now() + 5), .success, "messages in flight are processed by the backend they were sent to")
        c.queue.sync {}
        XCTAssertEqual(c.events.count, 1, "the listen result only: nothing is sent after disconnect")
    }

    func testDisconnectedConnectionGetsNoMoreEvents() {
        connA.listen(targetId: 1, query: collection("c"), knownKeys: [])
        a.wait(for: 1)
        connA.disconnect()
        seed([setM("c/a", [:])])
        backend.flush()
        a.queue.sync {}
        XCTAssertEqual(a.events.count, 1)
    }
}

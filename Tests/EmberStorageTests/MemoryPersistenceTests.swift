import XCTest
import EmberModel
import EmberStorage

private func key(_ s: String) -> DocumentKey { try! DocumentKey(parsing: s) }
private func path(_ s: String) -> ResourcePath { try! ResourcePath(parsing: s) }
private func doc(_ k: String, _ v: Int64 = 1, version: Int64 = 1) -> Document {
    Document(key: key(k), data: MapValue(["v": .int(v)]), version: version, createTime: version, updateTime: version)
}
private func batch(_ id: Int64, _ keys: [String] = ["c/a"]) -> MutationBatch {
    MutationBatch(batchId: id, localWriteTime: id * 10, mutations: keys.map { Mutation(key: key($0), kind: .delete) })
}
private func sortedKeys(_ docs: [Document]) -> [String] { docs.map { $0.key.path.canonical }.sorted() }

/// MemoryDocumentStore: get / put / remove / count and listing by collection and group.
final class MemoryDocumentStoreTests: XCTestCase {
    func testPutGetReplaceRemoveAndCount() {
        let s = MemoryDocumentStore()
        XCTAssertEqual(s.count, 0)
        XCTAssertNil(s.get(key("c/a")))
        s.put(doc("c/a", 1))
        s.put(doc("c/b", 2))
        XCTAssertEqual(s.count, 2)
        XCTAssertEqual(s.get(key("c/a"))?.data["v"], .int(1))
        s.put(doc("c/a", 3, version: 7))
        XCTAssertEqual(s.count, 2, "replacing does not count twice")
        XCTAssertEqual(s.get(key("c/a"))?.data["v"], .int(3))
        XCTAssertEqual(s.get(key("c/a"))?.version, 7)
        s.remove(key("c/a"))
        XCTAssertNil(s.get(key("c/a")))
        XCTAssertEqual(s.count, 1)
        s.remove(key("c/a"))
        s.remove(key("other/x"))
        XCTAssertEqual(s.count, 1, "removing a missing key does nothing")
        s.put(doc("c/a", 4))
        XCTAssertEqual(s.count, 2)
        XCTAssertEqual(s.get(key("c/a"))?.data["v"], .int(4))
    }

    /// Removing from the middle moves the last entry into the hole: every other key must still
    /// find its own document, and scans list each entry once.
    func testRandomPutsAndRemovesKeepEveryKeyFindable() {
        let s = MemoryDocumentStore()
        var model: [String: Int64] = [:]
        var rng = SystemRandomNumberGenerator()
        for step in 0..<3_000 {
            let k = "c/d\(Int.random(in: 0..<200, using: &rng))"
            if Bool.random(using: &rng) {
                s.put(doc(k, Int64(step)))
                model[k] = Int64(step)
            } else {
                s.remove(key(k))
                model[k] = nil
            }
        }
        XCTAssertEqual(s.count, model.count)
        for (k, v) in model { XCTAssertEqual(s.get(key(k))?.data["v"], .int(v), k) }
        XCTAssertEqual(sortedKeys(s.documents(in: path("c"))), model.keys.sorted())
        let even: (Document) -> Bool = { if case .int(let v)? = $0.data["v"] { return v % 2 == 0 } else { return false } }
        XCTAssertEqual(sortedKeys(s.documents(matching: Query(collection: path("c")), where: even)),
                       model.filter { $0.value % 2 == 0 }.keys.sorted())
    }

    func testTombstonesAreEntries() {
        let s = MemoryDocumentStore()
        s.put(Document.missing(key("c/gone"), version: 9))
        XCTAssertEqual(s.count, 1)
        XCTAssertEqual(s.get(key("c/gone"))?.exists, false)
        XCTAssertEqual(s.get(key("c/gone"))?.version, 9)
        XCTAssertEqual(sortedKeys(s.documents(in: path("c"))), ["c/gone"])
        s.put(doc("c/gone"))
        XCTAssertEqual(s.count, 1)
        XCTAssertEqual(s.get(key("c/gone"))?.exists, true)
    }

    func testInsertIfAbsentLeavesAnyEntryAlone() {
        let s = MemoryDocumentStore()
        XCTAssertFalse(s.insertsWithoutReading, "a dictionary lookup is cheaper than a failed insert")
        XCTAssertTrue(s.insertIfAbsent(doc("c/new")))
        XCTAssertEqual(s.get(key("c/new"))?.exists, true)
        XCTAssertFalse(s.insertIfAbsent(Document.missing(key("c/new"), version: 5)))
        XCTAssertEqual(s.get(key("c/new"))?.exists, true)
        s.put(Document.missing(key("c/gone"), version: 9))
        XCTAssertFalse(s.insertIfAbsent(doc("c/gone")), "a tombstone is an entry")
        XCTAssertEqual(s.get(key("c/gone"))?.version, 9)
    }

    func testDocumentsInACollectionAreOnlyItsDirectChildren() {
        let s = MemoryDocumentStore()
        for k in ["cities/SF", "cities/LA", "cities/SF/landmarks/gg", "cities/LA/landmarks/x", "citiesX/a", "other/SF"] { s.put(doc(k)) }
        XCTAssertEqual(sortedKeys(s.documents(in: path("cities"))), ["cities/LA", "cities/SF"])
        XCTAssertEqual(sortedKeys(s.documents(in: path("cities/SF/landmarks"))), ["cities/SF/landmarks/gg"])
        XCTAssertEqual(s.documents(in: path("nothing")).count, 0)
        XCTAssertEqual(s.documents(in: path("cities/NY/landmarks")).count, 0)
        s.remove(key("cities/SF"))
        XCTAssertEqual(sortedKeys(s.documents(in: path("cities"))), ["cities/LA"])
        XCTAssertEqual(sortedKeys(s.documents(in: path("cities/SF/landmarks"))), ["cities/SF/landmarks/gg"], "children outlive their parent")
    }

    func testDocumentsInAGroupSpanEveryParent() {
        let s = MemoryDocumentStore()
        for k in ["cities/SF/landmarks/gg", "cities/SF/landmarks/lh", "cities/TOK/landmarks/nm", "landmarks/top",
                  "a/b/c/d/landmarks/deep", "cities/SF/landmarksX/no", "landmarks/top/sub/no"] { s.put(doc(k)) }
        XCTAssertEqual(sortedKeys(s.documents(inGroup: "landmarks")),
                       ["a/b/c/d/landmarks/deep", "cities/SF/landmarks/gg", "cities/SF/landmarks/lh", "cities/TOK/landmarks/nm", "landmarks/top"])
        XCTAssertEqual(sortedKeys(s.documents(inGroup: "sub")), ["landmarks/top/sub/no"])
        XCTAssertEqual(s.documents(inGroup: "none").count, 0)
        s.remove(key("cities/SF/landmarks/gg"))
        s.put(Document.missing(key("cities/NY/landmarks/t"), version: 3))
        XCTAssertEqual(sortedKeys(s.documents(inGroup: "landmarks")),
                       ["a/b/c/d/landmarks/deep", "cities/NY/landmarks/t", "cities/SF/landmarks/lh", "cities/TOK/landmarks/nm", "landmarks/top"])
    }

    func testKeysCompareByUTF8Bytes() {
        let s = MemoryDocumentStore()
        s.put(doc("c/\u{E9}", 1))
        s.put(doc("c/e\u{301}", 2))
        XCTAssertEqual(s.count, 2, "canonically equivalent ids are two documents")
        XCTAssertEqual(s.get(key("c/\u{E9}"))?.data["v"], .int(1))
        XCTAssertEqual(s.get(key("c/e\u{301}"))?.data["v"], .int(2))
        XCTAssertEqual(s.documents(in: path("c")).count, 2)
        s.remove(key("c/e\u{301}"))
        XCTAssertEqual(s.get(key("c/\u{E9}"))?.data["v"], .int(1))
        XCTAssertEqual(s.count, 1)
        // Collections and groups too.
        s.put(doc("\u{E9}/a", 3))
        s.put(doc("e\u{301}/a", 4))
        XCTAssertEqual(s.documents(in: path("\u{E9}")).map { $0.data["v"] }, [.int(3)])
        XCTAssertEqual(s.documents(inGroup: "\u{E9}").map { $0.data["v"] }, [.int(3)])
        XCTAssertEqual(s.documents(inGroup: "e\u{301}").map { $0.data["v"] }, [.int(4)])
    }
}

/// MemoryMutationQueue: order, removal of the head and from the middle, next batch id.
final class MemoryMutationQueueTests: XCTestCase {
    func ids(_ q: MutationQueue) -> [Int64] { q.allBatches().map { $0.batchId } }

    func testEmptyQueue() {
        let q = MemoryMutationQueue()
        XCTAssertTrue(q.isEmpty)
        XCTAssertEqual(ids(q), [])
        XCTAssertEqual(q.nextBatchId(), 1)
        q.remove(batchId: 1)
        XCTAssertTrue(q.isEmpty)
    }

    func testBatchesKeepTheirOrderAndContent() {
        let q = MemoryMutationQueue()
        q.add(batch(1, ["c/a"]))
        q.add(batch(2, ["c/b", "c/c"]))
        q.add(batch(3))
        XCTAssertFalse(q.isEmpty)
        XCTAssertEqual(ids(q), [1, 2, 3])
        let b2 = q.allBatches()[1]
        XCTAssertEqual(b2.localWriteTime, 20)
        XCTAssertEqual(b2.mutations.map { $0.key.path.canonical }, ["c/b", "c/c"])
        XCTAssertEqual(q.nextBatchId(), 4)
    }

    func testRemoveHeadMiddleAndTail() {
        let q = MemoryMutationQueue()
        for i in 1...5 { q.add(batch(Int64(i))) }
        q.remove(batchId: 1)
        XCTAssertEqual(ids(q), [2, 3, 4, 5])
        q.remove(batchId: 4)
        XCTAssertEqual(ids(q), [2, 3, 5])
        q.remove(batchId: 5)
        XCTAssertEqual(ids(q), [2, 3])
        q.remove(batchId: 99)
        q.remove(batchId: 1)
        XCTAssertEqual(ids(q), [2, 3], "unknown or already removed ids do nothing")
        q.add(batch(6))
        XCTAssertEqual(ids(q), [2, 3, 6])
        q.remove(batchId: 2)
        q.remove(batchId: 3)
        q.remove(batchId: 6)
        XCTAssertTrue(q.isEmpty)
        XCTAssertEqual(ids(q), [])
    }

    func testNextBatchIdIsOneMoreThanTheHighestEverUsed() {
        let q = MemoryMutationQueue()
        q.add(batch(1))
        q.add(batch(2))
        q.remove(batchId: 2)
        q.remove(batchId: 1)
        XCTAssertEqual(q.nextBatchId(), 3, "removed ids are not reused")
        q.add(batch(10))
        XCTAssertEqual(q.nextBatchId(), 11)
    }

    func testManyHeadRemovalsCompactWithoutLosingBatches() {
        let q = MemoryMutationQueue()
        for i in 1...3000 { q.add(batch(Int64(i))) }
        for i in 1...2000 { q.remove(batchId: Int64(i)) }
        XCTAssertEqual(ids(q), Array(2001...3000))
        q.remove(batchId: 2500)
        XCTAssertEqual(ids(q).count, 999)
        XCTAssertFalse(ids(q).contains(2500))
        for i in 3001...3010 { q.add(batch(Int64(i))) }
        XCTAssertEqual(ids(q).first, 2001)
        XCTAssertEqual(ids(q).last, 3010)
        XCTAssertEqual(q.nextBatchId(), 3011)
        for i in 2001...3010 { q.remove(batchId: Int64(i)) }
        XCTAssertTrue(q.isEmpty)
    }
}

/// MemoryPersistence: its three stores are distinct, it is not durable, transactions run the body.
final class MemoryPersistenceTests: XCTestCase {
    func testStoresAreSeparate() {
        let p = MemoryPersistence()
        XCTAssertFalse(p.isDurable)
        p.backendDocuments.put(doc("c/a"))
        XCTAssertNil(p.remoteDocuments.get(key("c/a")))
        XCTAssertEqual(p.backendDocuments.count, 1)
        let r: Int = try! p.runTransaction("t") { p.remoteDocuments.put(doc("c/b")); return 7 }
        XCTAssertEqual(r, 7)
        XCTAssertEqual(p.remoteDocuments.count, 1)
        try! p.runTransaction("q") { p.mutationQueue.add(batch(1)) }
        XCTAssertEqual(p.mutationQueue.nextBatchId(), 2)
        XCTAssertThrowsError(try p.runTransaction("throws") { () throws -> Int in throw EmberError(.aborted, "x") })
        p.close()
    }
}

import EmberConcurrency
import XCTest
import Foundation
import EmberModel
@testable import EmberCore
import EmberStorage
import EmberBackend

/// The embedded default (a path, persistence on, documents in the in-process backend): one copy
/// of each document (the cache is the backend's table), each write committed before `write`
/// returns in one transaction, never queued; offline writes queued and sent in order; files of
/// the earlier layout (a separate cache copy) adopted at open.
final class EmbeddedDefaultTests: XCTestCase {
    var dir: String!
    var path: String { dir + "/db.ember" }

    override func setUp() { dir = makeTemporaryDirectory("embedded") }
    override func tearDown() { removeTemporaryDirectory(dir) }

    func open(online: Bool = true) throws -> EmberClient {
        var o = EmberOptions(path: path)
        o.networkEnabled = online
        return try EmberClient(options: o)
    }

    /// Reads the file's tables directly, after the client closed.
    func inspect(_ body: (SQLitePersistence) throws -> Void) throws {
        let p = try SQLitePersistence(path: path, sharedDocuments: true)
        defer { p.close() }
        try body(p)
    }

    func testWriteIsCommittedWhenTheCallReturnsAndStoredOnce() throws {
        let c = try open()
        let done = Semaphore()
        try c.write([setM("c/a", n(1)), setM("c/b", n(2))]) { _ in done.signal() }
        // Before the completion has run: the backend holds the batch already.
        XCTAssertEqual(c.backend.document(at: key("c/a"))?.data["n"], .int(1))
        XCTAssertTrue(done.wait(seconds: 10))
        c.close()
        try inspect { p in
            XCTAssertTrue(p.mutationQueue.isEmpty, "an online write is never queued")
            XCTAssertEqual(p.backendDocuments.count, 2)
        }
        // The separate cache table holds nothing: one copy of each document.
        let raw = try SQLitePersistence(path: path)
        defer { raw.close() }
        XCTAssertEqual(raw.remoteDocuments.count, 0)
        XCTAssertEqual(raw.backendDocuments.count, 2)
    }

    /// The local event of a write shows it applied once (the overlay is computed on the document
    /// as it was before the commit), then its acknowledgement shows the committed value.
    func testCloseStoresTheExactClock() throws {
        // The clock's mark runs a lease ahead while open; a clean close stores the last version
        // itself, so reopening again and again does not push versions ahead of the wall clock.
        var versions: [Int64] = []
        for i in 0..<3 {
            let c = try open()
            let done = Semaphore()
            try c.write([setM("c/a", n(Int64(i)))]) { _ in done.signal() }
            XCTAssertTrue(done.wait(seconds: 10))
            versions.append(try XCTUnwrap(c.backend.document(at: key("c/a"))?.updateTime))
            c.close()
            try inspect { p in XCTAssertEqual(p.metadata(PersistenceKey.backendVersion), versions.last) }
        }
        XCTAssertEqual(versions, versions.sorted())
    }

    func testIncrementIsAppliedOnceInTheLocalEvent() throws {
        let c = try open()
        defer { c.close() }
        XCTAssertNil(writeAndWait(c, [setM("c/a", n(10))]))
        let log = EventLog()
        let t = try c.record(Query(document: key("c/a")), log, metadata: true)
        defer { t.remove() }
        log.wait(for: 2)   // from the cache, then current
        let before = log.all.count
        let inc = Mutation(key: key("c/a"), kind: .patch(MapValue(), mask: []),
                           transforms: [FieldTransform(path: fp("n"), op: .increment(.int(5)))])
        XCTAssertNil(writeAndWait(c, [inc]))
        let snaps = log.wait(for: before + 2).suffix(2).compactMap { e -> ViewSnapshot? in
            if case .snapshot(let s) = e { return s }
            return nil
        }
        XCTAssertEqual(snaps.count, 2)
        XCTAssertEqual(snaps[0].documents.first?.data["n"], .int(15))
        XCTAssertTrue(snaps[0].hasPendingWrites)
        XCTAssertEqual(snaps[1].documents.first?.data["n"], .int(15))
        XCTAssertFalse(snaps[1].hasPendingWrites)
    }

    /// A write the backend refuses (an update of a missing document, which does not apply
    /// locally either) fails its completion and raises nothing.
    func testRefusedWriteRaisesNothing() throws {
        let c = try open()
        defer { c.close() }
        let log = EventLog()
        let t = try c.record(collection("c"), log, metadata: true)
        defer { t.remove() }
        log.wait(for: 1)
        settle(c)
        let before = log.all.count
        XCTAssertEqual(writeAndWait(c, [updateM("c/missing", n(1))])?.code, .notFound)
        XCTAssertNil(writeAndWait(c, [setM("c/x", n(1))]))
        let lines = log.wait(for: before + 2).dropFirst(before).map(render)
        XCTAssertEqual(lines, ["added x -1 0 [pending]", "metadata x 0 0 []"])
    }

    /// Offline writes are queued in the file, survive a restart, and are committed in order
    /// when the network comes back; each leaves the queue in the transaction that applies it.
    /// A write no listener watches is only committed; one a listener watches is applied and
    /// raised first. Both end in the same state, and later reads and listens see it.
    func testUnwatchedAndWatchedWritesEndTheSame() throws {
        let c = try open()
        defer { c.close() }
        XCTAssertNil(writeAndWait(c, [setM("w/a", n(1)), setM("u/a", n(1))]))
        let log = EventLog()
        let t = try c.record(collection("w"), log)
        defer { t.remove() }
        log.wait(for: 1)
        let inc = { (k: String) in Mutation(key: key(k), kind: .patch(MapValue(), mask: []),
                                            transforms: [FieldTransform(path: fp("n"), op: .increment(.int(2)))]) }
        XCTAssertNil(writeAndWait(c, [inc("w/a"), inc("u/a")]))
        XCTAssertNil(writeAndWait(c, [inc("u/a")]))
        XCTAssertEqual(try c.getDocument(key("w/a")).document?.data["n"], .int(3))
        XCTAssertEqual(try c.getDocument(key("u/a")).document?.data["n"], .int(5))
        XCTAssertEqual(log.wait(for: 2).last.map(render)?.hasPrefix("modified a 0 0 [pending"), true, "\(log.lines)")
        let later = EventLog()
        let t2 = try c.record(collection("u"), later)
        defer { t2.remove() }
        XCTAssertEqual(later.wait(for: 1).first.map(render)?.hasPrefix("added a -1 0 "), true)
        XCTAssertEqual(later.snapshots.first?.documents.first?.data["n"], .int(5))
    }

    func testOfflineWritesAreQueuedAndSentInOrder() throws {
        do {
            let c = try open(online: false)
            try c.write([setM("c/a", n(1))])
            try c.write([setM("c/a", n(2)), setM("c/b", n(1))])
            c.close()
        }
        try inspect { p in
            XCTAssertEqual(p.mutationQueue.allBatches().count, 2)
            XCTAssertNil(p.backendDocuments.get(key("c/a")))
        }
        do {
            let c = try open(online: false)
            // Online writes wait behind queued ones.
            try c.write([setM("c/a", n(3))])
            try c.enableNetwork()
            waitForPendingWrites(c)
            XCTAssertEqual(try c.getDocument(key("c/a")).document?.data["n"], .int(3))
            c.close()
        }
        try inspect { p in
            XCTAssertTrue(p.mutationQueue.isEmpty)
            XCTAssertEqual(p.backendDocuments.get(key("c/a"))?.data["n"], .int(3))
            XCTAssertEqual(p.backendDocuments.get(key("c/b"))?.data["n"], .int(1))
        }
        // A batch id is never reused after the queue emptied (the backend remembers applied ids).
        let c = try open(online: false)
        defer { c.close() }
        try c.write([setM("c/z", n(9))])
        try c.enableNetwork()
        waitForPendingWrites(c)
        XCTAssertEqual(try c.getDocument(key("c/z")).document?.data["n"], .int(9), "a new queued batch is applied, not taken for an old one")
    }

    /// A file of the earlier layout whose process died between a batch's commit and its
    /// acknowledgement (the batch still queued, the backend's applied mark past it): the
    /// embedded default acknowledges it without applying it again and takes it out of the queue.
    func testBatchAppliedBeforeACrashIsDequeuedNotReapplied() throws {
        do {
            let p = try SQLitePersistence(path: path)
            let inc = Mutation(key: key("c/a"), kind: .patch(MapValue(), mask: []),
                               transforms: [FieldTransform(path: fp("n"), op: .increment(.int(1)))])
            try p.runTransaction("crashed") {
                p.mutationQueue.add(MutationBatch(batchId: 7, localWriteTime: 1, mutations: [inc]))
                p.backendDocuments.put(doc("c/a", n(1), version: 5))
                p.setMetadata(PersistenceKey.backendAppliedBatch, 7)
            }
            p.close()
        }
        do {
            let c = try open()
            waitForPendingWrites(c)
            XCTAssertEqual(try c.getDocument(key("c/a")).document?.data["n"], .int(1), "applied once")
            c.close()
        }
        try inspect { p in XCTAssertTrue(p.mutationQueue.isEmpty) }
    }

    /// A file written with the earlier layout (the cache a second copy in `remote_docs`, indexed
    /// there): opening it as the embedded default drops the copy and rebuilds the indexes from
    /// the backend's table, so indexed queries read the backend's documents.
    func testEarlierLayoutIsAdopted() throws {
        do {
            let p = try SQLitePersistence(path: path)
            let c = EmberClient(persistence: p, backend: Backend(persistence: p))
            try c.setIndexConfiguration(json: #"{"indexes":[{"collectionGroup":"c","queryScope":"COLLECTION","fields":[{"fieldPath":"g","order":"ASCENDING"}]}]}"#)
            for i in 0..<50 { XCTAssertNil(writeAndWait(c, [setM("c/d\(i)", ["g": .int(Int64(i % 5))])])) }
            c.close()
            XCTAssertGreaterThan(p.remoteDocuments.count, 0, "the earlier layout keeps a copy")
            // The copy is stale for one document (as after a crash before an acknowledgement).
            try p.runTransaction("stale") { p.backendDocuments.put(doc("c/d0", ["g": .int(4)], version: Int64.max / 2)) }
            p.close()
        }
        let c = try open()
        defer { c.close() }
        try c.disableNetwork()
        let q = try collection("c").filter(.field(FieldFilter(field: fp("g"), op: .equal, value: .int(4))))
        let got = try c.getDocuments(q, source: .cache).documents.map { $0.key.id }.sorted()
        XCTAssertEqual(c.lastIndexRead?.usedIndex != nil, true, "served by the rebuilt index")
        XCTAssertEqual(got, ["d0", "d14", "d19", "d24", "d29", "d34", "d39", "d4", "d44", "d49", "d9"])
    }

    /// A file another writer had (an older Ember, which keeps a copy in `remote_docs` and does
    /// not keep the entries of `backend_docs`) is recognised by its stale copy: the indexes are
    /// rebuilt even though `index.table` already names the backend's table.
    func testStaleCopyRebuildsTheIndexes() throws {
        let json = #"{"indexes":[{"collectionGroup":"c","queryScope":"COLLECTION","fields":[{"fieldPath":"g","order":"ASCENDING"}]}]}"#
        do {
            let c = try open()
            try c.setIndexConfiguration(json: json)
            XCTAssertNil(writeAndWait(c, [setM("c/a", ["g": .int(1)])]))
            c.close()
        }
        do {
            // What the other writer left: rows the entries do not describe, a copy, the old mark.
            let p = try SQLitePersistence(path: path)
            try p.runTransaction("older writer") {
                p.backendDocuments.put(doc("c/b", ["g": .int(1)], version: 10))
                p.remoteDocuments.put(doc("c/b", ["g": .int(1)], version: 10))
                p.setMetadata("index.table", 1)
            }
            p.close()
        }
        let c = try open()
        defer { c.close() }
        try c.disableNetwork()
        let q = try collection("c").filter(.field(FieldFilter(field: fp("g"), op: .equal, value: .int(1))))
        XCTAssertEqual(try c.getDocuments(q, source: .cache).documents.map { $0.key.id }, ["a", "b"])
        XCTAssertNotNil(c.lastIndexRead?.usedIndex)
    }

    /// A client of another backend (a server) keeps its own cache in `remote_docs`; opening the
    /// same file as the embedded default and back rebuilds the indexes each time.
    func testSwitchingBetweenLayoutsKeepsIndexesRight() throws {
        let json = #"{"indexes":[{"collectionGroup":"c","queryScope":"COLLECTION","fields":[{"fieldPath":"g","order":"ASCENDING"}]}]}"#
        do {
            let c = try open()
            try c.setIndexConfiguration(json: json)
            for i in 0..<20 { XCTAssertNil(writeAndWait(c, [setM("c/d\(i)", ["g": .int(Int64(i % 2))])])) }
            c.close()
        }
        let server = Backend(persistence: MemoryPersistence())
        do {
            let c = try EmberClient(options: EmberOptions(path: path), documents: server)
            XCTAssertNil(writeAndWait(c, [setM("c/s", ["g": .int(1)])]))
            try c.disableNetwork()
            let q = try collection("c").filter(.field(FieldFilter(field: fp("g"), op: .equal, value: .int(1))))
            XCTAssertEqual(try c.getDocuments(q, source: .cache).documents.map { $0.key.id }, ["s"], "the server's cache only")
            c.close()
            server.flush()   // held until the client is closed
        }
        let c = try open()
        defer { c.close() }
        try c.disableNetwork()
        let q = try collection("c").filter(.field(FieldFilter(field: fp("g"), op: .equal, value: .int(1))))
        XCTAssertEqual(try c.getDocuments(q, source: .cache).documents.count, 10)
        XCTAssertNotNil(c.lastIndexRead?.usedIndex)
    }
    /// A transaction's documents change together in every snapshot, even with an inline write
    /// to one of them handed to the worker before the transaction commits: the commit and its
    /// event are one step of the worker, after the write, so no local view is built on the
    /// transaction's rows before the client heard of them.
    func testTransactionIsNeverSeenHalfApplied() throws {
        let c = try open()
        defer { c.close() }
        XCTAssertNil(writeAndWait(c, [setM("c/x", ["v": .int(0), "w": .int(0)]), setM("c/y", ["v": .int(0)])]))
        let log = EventLog()
        let t = try c.record(collection("c"), log, metadata: true)
        defer { t.remove() }
        log.wait(for: 1)
        let held = Semaphore(), release = Semaphore(), written = Semaphore()
        try c.runTransaction { tx in
            _ = try tx.get(key("c/x"))
            tx.write(updateM("c/x", ["v": .int(1)]))
            tx.write(setM("c/y", ["v": .int(1)]))
            // Hold the worker, hand it a write of x, then let the transaction commit.
            c.worker.async { held.signal(); release.wait() }
            held.wait()
            Thread.detachNewThread {
                try? c.write([updateM("c/x", ["w": .int(1)])])
                written.signal()
            }
            usleep(50_000)   // the write is waiting on the worker
            DispatchQueue.global().asyncAfter(deadline: .now() + 0.1) {
                c.backend.flush()   // without the inline commit: the rows changed, the event waits
                release.signal()
            }
        }
        XCTAssertTrue(written.wait(seconds: 10))
        drainLocal(c)
        let torn = log.snapshots.compactMap { s -> String? in
            let v = Dictionary(uniqueKeysWithValues: s.documents.map { ($0.key.id, $0.data["v"]) })
            return v["x"] == v["y"] ? nil : "x.v=\(String(describing: v["x"])) y.v=\(String(describing: v["y"]))"
        }
        XCTAssertEqual(torn, [])
        let last = try XCTUnwrap(log.snapshots.last)
        XCTAssertEqual(last.documents.map { $0.data }, [MapValue(["v": .int(1), "w": .int(1)]), MapValue(["v": .int(1)])])
    }
    /// An inline write's acknowledgement can be handled before an older event another client's
    /// commit sent (it was queued on the worker after the write): the view's read time never goes
    /// back for it.
    func testReadTimeNeverGoesBack() throws {
        let c = try open()
        defer { c.close() }
        let other = try EmberClient(options: EmberOptions(), documents: c.backend)
        defer { other.close() }
        let log = EventLog()
        let t = try c.record(collection("c"), log, metadata: true)
        defer { t.remove() }
        log.wait(for: 1)
        let held = Semaphore(), release = Semaphore(), written = Semaphore()
        c.worker.async { held.signal(); release.wait() }
        held.wait()
        Thread.detachNewThread {
            try? c.write([setM("c/mine", n(1))])
            written.signal()
        }
        usleep(50_000)   // the write waits on the worker
        XCTAssertNil(writeAndWait(other, [setM("c/theirs", n(2))]))   // its event waits behind the write
        release.signal()
        XCTAssertTrue(written.wait(seconds: 10))
        drainLocal(c)
        let times = log.snapshots.map { $0.readTime }
        XCTAssertEqual(times, times.sorted(), "read times: \(times)")
        XCTAssertEqual(log.snapshots.last.map(ids), ["mine", "theirs"])
    }
}

import XCTest
import Foundation
import EmberModel
import EmberCore
import EmberStorage
import EmberBackend

/// A client on a durable file: reopen round trips (cache, pending writes, targets), listeners
/// right after reopening, offline reads, memory cache over a durable backend, cache size.
final class PersistenceTests: XCTestCase {
    var dir: String!

    override func setUp() { dir = makeTemporaryDirectory("core") }
    override func tearDown() { removeTemporaryDirectory(dir) }

    /// The embedded default on `dir`/db.ember; with `documents`, a client of that backend
    /// instead (its cache in the file, bounded and collected, as a client of a server).
    func open(persistence: Bool = true, online: Bool = true, cacheSize: Int64 = EmberOptions.defaultCacheSizeBytes,
              documents: Backend? = nil) throws -> EmberClient {
        var o = EmberOptions(path: dir + "/db.ember", persistence: persistence, cacheSizeBytes: cacheSize)
        o.networkEnabled = online
        o.gcInitialDelay = 3600
        return try EmberClient(options: o, documents: documents)
    }

    func testReopenKeepsCachePendingWritesAndTargets() throws {
        do {
            let c = try open()
            XCTAssertNil(writeAndWait(c, [setM("cities/SF", ["name": .string("SF"), "state": .string("CA")])]))
            let log = EventLog()
            let t = try c.listen(collection("cities")) { log.append($0) }
            log.wait(for: 1)
            settle(c)
            try c.disableNetwork()
            try c.write([setM("cities/LA", ["name": .string("LA"), "state": .string("CA")])])
            t.remove()
            c.close()
        }
        do {
            let p = try SQLitePersistence(path: dir + "/db.ember", sharedDocuments: true)
            XCTAssertEqual(p.mutationQueue.allBatches().count, 1, "the offline write is still queued")
            XCTAssertEqual(p.remoteDocuments.get(key("cities/SF"))?.data["name"], .string("SF"))
            XCTAssertTrue(p.remoteDocuments === p.backendDocuments, "one copy of each document")
            XCTAssertNil(p.backendDocuments.get(key("cities/LA")))
            XCTAssertEqual(p.targetCache.all().count, 1, "the listened target is remembered")
            p.close()
        }
        let c = try open(online: false)
        defer { c.close() }
        let log = EventLog()
        let t = try c.listen(collection("cities"), options: ListenOptions(includeMetadataChanges: true)) { log.append($0) }
        defer { t.remove() }
        let first = log.wait(for: 1)[0]
        guard case .snapshot(let s) = first else { return XCTFail("\(first)") }
        XCTAssertTrue(s.isFromCache)
        XCTAssertEqual(s.documents.map { $0.key.id }, ["LA", "SF"])
        XCTAssertTrue(s.hasPendingWrites, "LA is still pending after reopening")
        // Offline reads: cached documents, an error for an uncached one, queries on the cache.
        XCTAssertEqual(try c.getDocument(key("cities/SF")).document?.data["name"], .string("SF"))
        XCTAssertTrue(try c.getDocument(key("cities/SF")).fromCache)
        XCTAssertThrowsError(try c.getDocument(key("cities/NOPE"))) { XCTAssertEqual(($0 as? EmberError)?.code, .unavailable) }
        XCTAssertEqual(try c.getDocuments(try collection("cities").filter(.field(FieldFilter(field: fp("name"), op: .equal, value: .string("LA"))))).documents.count, 1)
        XCTAssertEqual(try c.getDocuments(collection("towns")).documents.count, 0, "a query returns what the cache has")
        // Enabling the network sends the queued write.
        try c.enableNetwork()
        waitForPendingWrites(c)
        settle(c)
        let last = log.snapshots.last!
        XCTAssertFalse(last.isFromCache)
        XCTAssertFalse(last.hasPendingWrites)
        XCTAssertEqual(c.backend.flushAndCount(), 2)
    }

    func testListenerRightAfterReopenGetsCacheThenServer() throws {
        do {
            let c = try open()
            XCTAssertNil(writeAndWait(c, [setM("c/a", n(1)), setM("c/b", n(2))]))
            c.close()
        }
        let c = try open()
        defer { c.close() }
        let log = EventLog()
        let t = try c.listen(ordered("c"), options: ListenOptions(includeMetadataChanges: true)) { log.append($0) }
        defer { t.remove() }
        let snaps = log.wait(for: 2).compactMap { if case .snapshot(let s) = $0 { return s }; return nil }
        XCTAssertTrue(snaps[0].isFromCache)
        XCTAssertEqual(snaps[0].documents.map { $0.key.id }, ["a", "b"])
        XCTAssertFalse(snaps[1].isFromCache)
        XCTAssertEqual(snaps[1].documents.map { $0.key.id }, ["a", "b"])
    }

    func testMemoryCacheOverADurableBackend() throws {
        do {
            let c = try open(persistence: false)
            XCTAssertFalse(c.isPersistent)
            XCTAssertFalse(c.hasIndexManager)
            XCTAssertNil(writeAndWait(c, [setM("c/a", n(1))]))
            c.close()
        }
        let c = try open(persistence: false, online: false)
        defer { c.close() }
        XCTAssertThrowsError(try c.getDocument(key("c/a"), source: .cache), "the cache was in memory")
        try c.enableNetwork()
        XCTAssertEqual(try c.getDocument(key("c/a")).document?.data["n"], .int(1), "the backend's documents are durable")
    }

    func testCacheSizeLimits() throws {
        XCTAssertThrowsError(try open(cacheSize: 1024 * 1024 - 1)) { XCTAssertEqual(($0 as? EmberError)?.code, .invalidArgument) }
        XCTAssertThrowsError(try EmberClient(options: EmberOptions(cacheSizeBytes: 0))) { XCTAssertEqual(($0 as? EmberError)?.code, .invalidArgument) }
        try open(cacheSize: EmberOptions.cacheSizeUnlimited).close()
        try open(cacheSize: EmberOptions.minimumCacheSizeBytes).close()
        XCTAssertEqual(EmberOptions.defaultCacheSizeBytes, 100 * 1024 * 1024)
    }

    func testClearPersistenceOnlyWhileClosed() throws {
        let c = try open()
        XCTAssertNil(writeAndWait(c, [setM("c/a", n(1))]))
        XCTAssertThrowsError(try EmberClient.clearPersistence(path: dir + "/db.ember")) { XCTAssertEqual(($0 as? EmberError)?.code, .failedPrecondition) }
        XCTAssertThrowsError(try open()) { XCTAssertEqual(($0 as? EmberError)?.code, .failedPrecondition, "a second instance on the path is locked out") }
        c.close()
        try EmberClient.clearPersistence(path: dir + "/db.ember")
        let again = try open()
        defer { again.close() }
        XCTAssertNil(try again.getDocument(key("c/a")).document)
    }

    // MARK: LRU

    /// Writes `mb` MB of documents in collections col0..col9, each listened to and detached in turn.
    private func fillThroughQueries(_ c: EmberClient, mb: Double) throws {
        let pad = String(repeating: "z", count: 1000)
        let perCollection = Int(mb * 1024 * 1024 / 1100 / 10)
        for col in 0..<10 {
            var ms: [Mutation] = []
            for i in 0..<perCollection {
                ms.append(setM("col\(col)/d\(i)", ["i": .int(Int64(i)), "pad": .string(pad)]))
                if ms.count == 400 { XCTAssertNil(writeAndWait(c, ms)); ms = [] }
            }
            if !ms.isEmpty { XCTAssertNil(writeAndWait(c, ms)) }
            let log = EventLog()
            let t = try c.listen(collection("col\(col)")) { log.append($0) }
            log.wait(for: 1)
            settle(c)
            t.remove()
            settle(c)
        }
    }

    func testCacheReturnsUnderThresholdAfterQueriesAreDetached() throws {
        let threshold = EmberOptions.minimumCacheSizeBytes
        let server = Backend(persistence: MemoryPersistence())
        let c = try open(cacheSize: threshold, documents: server)
        defer { c.close(); server.flush() }
        try fillThroughQueries(c, mb: 2.2)
        settle(c)
        server.flush()
        XCTAssertLessThanOrEqual(Double(c.cacheBytes), Double(threshold) * 1.1, "collected after the detaches (\(c.cacheBytes) bytes)")
        // On demand too, and least recently used first: the last collection detached is kept.
        try c.collectGarbage()
        XCTAssertLessThanOrEqual(Double(c.cacheBytes), Double(threshold) * 1.1)
        try c.disableNetwork()
        XCTAssertEqual(try c.getDocuments(collection("col0"), source: .cache).documents.count, 0, "the oldest target's documents went first")
        XCTAssertGreaterThan(try c.getDocuments(collection("col9"), source: .cache).documents.count, 0, "the newest stayed")
    }

    func testActiveListenersAndPendingWritesPinDocuments() throws {
        let threshold = EmberOptions.minimumCacheSizeBytes
        let server = Backend(persistence: MemoryPersistence())   // held: a client does not own its documents' endpoint
        let c = try open(cacheSize: threshold, documents: server)
        defer { c.close(); server.flush() }
        let pad = String(repeating: "z", count: 1000)
        var ms: [Mutation] = []
        for i in 0..<1500 { ms.append(setM("held/d\(i)", ["pad": .string(pad)])) }
        for chunk in stride(from: 0, to: ms.count, by: 400) { XCTAssertNil(writeAndWait(c, Array(ms[chunk..<min(chunk + 400, ms.count)]))) }
        let log = EventLog()
        let t = try c.listen(collection("held")) { log.append($0) }
        defer { t.remove() }
        log.wait(for: 1)
        settle(c)
        try c.disableNetwork()
        try c.write([setM("other/p", ["pad": .string(pad)])])
        try c.collectGarbage()
        XCTAssertGreaterThan(c.cacheBytes, Int64(threshold), "nothing unpinned to collect")
        XCTAssertEqual(try c.getDocuments(collection("held"), source: .cache).documents.count, 1500)
        XCTAssertEqual(try c.getDocument(key("other/p"), source: .cache).hasPendingWrites, true)
    }

    func testUnlimitedCacheIsNeverCollected() throws {
        let server = Backend(persistence: MemoryPersistence())
        let c = try open(cacheSize: EmberOptions.cacheSizeUnlimited, documents: server)
        defer { c.close(); server.flush() }
        try fillThroughQueries(c, mb: 1.5)
        XCTAssertEqual(try c.collectGarbage(), 0)
        XCTAssertGreaterThan(c.cacheBytes, 1024 * 1024)
    }

    /// The embedded default keeps one copy of each document, the database itself: however small
    /// the cache size, nothing is collected, and every document stays readable offline.
    func testEmbeddedDefaultIsNeverCollected() throws {
        let c = try open(cacheSize: EmberOptions.minimumCacheSizeBytes)
        defer { c.close() }
        try fillThroughQueries(c, mb: 2.2)
        XCTAssertEqual(try c.collectGarbage(), 0)
        XCTAssertGreaterThan(c.cacheBytes, 2 * 1024 * 1024)
        try c.disableNetwork()
        XCTAssertGreaterThan(try c.getDocuments(collection("col0"), source: .cache).documents.count, 150)
    }
}

extension Backend {
    /// Waits for the backend queue and returns how many documents it holds in `cities`.
    func flushAndCount() -> Int {
        flush()
        let reader = EmberClient(persistence: MemoryPersistence(), backend: self)
        defer { reader.close() }
        return try! reader.getDocuments(collection("cities")).documents.count
    }
}

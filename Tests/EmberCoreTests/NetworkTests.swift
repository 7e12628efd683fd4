// Tests of SyncEngine's network switch (docs/semantics.md 13): listeners keep working on the cache,
// writes queue, reads answer from the cache or fail, and reconnecting catches up.
import XCTest
import EmberModel
import EmberCore

final class NetworkTests: XCTestCase {

    func testDisableNetworkWorksOnTheCacheAndEnableCatchesUp() throws {
        let (c1, c2) = twoClients()
        defer { c1.close(); c2.close() }
        XCTAssertNil(writeAndWait(c2, [setM("c/a", n(1)), setM("c/b", n(2))]))
        let plain = EventLog(), meta = EventLog()
        try c1.record(ordered("c"), plain)
        try c1.record(ordered("c"), meta, metadata: true)
        settle(c1)
        let initial = "added a -1 0, added b -1 1 []"

        try c1.disableNetwork()
        XCTAssertFalse(c1.isNetworkEnabled)
        settle(c1)
        XCTAssertEqual(plain.lines, [initial])
        XCTAssertEqual(meta.lines, [initial, "[cache]"])

        // Writes apply locally and queue: no acknowledgement while offline.
        let verdicts = Box<[String]>([])
        try c1.write([setM("c/x", n(3))]) { e in verdicts.mutate { $0.append("x \(e?.code.name ?? "ok")") } }
        try c1.waitForPendingWrites { e in verdicts.mutate { $0.append("all \(e?.code.name ?? "ok")") } }
        settle(c1)
        XCTAssertEqual(plain.lines, [initial, "added x -1 2 [pending,cache]"])
        XCTAssertEqual(meta.lines, [initial, "[cache]", "added x -1 2 [pending,cache]"])
        XCTAssertEqual(verdicts.value, [])
        XCTAssertEqual(try c2.count(collection("c")), 2, "the backend has not seen the write")

        // Reads: the server is unreachable; the cache answers what it has.
        XCTAssertThrowsError(try c1.getDocument(key("c/a"), source: .server)) { XCTAssertEqual(($0 as? EmberError)?.code, .unavailable) }
        XCTAssertThrowsError(try c1.getDocument(key("c/notcached"))) { XCTAssertEqual(($0 as? EmberError)?.code, .unavailable) }
        XCTAssertThrowsError(try c1.getDocuments(ordered("c"), source: .server)) { XCTAssertEqual(($0 as? EmberError)?.code, .unavailable) }
        XCTAssertThrowsError(try c1.count(collection("c"))) { XCTAssertEqual(($0 as? EmberError)?.code, .unavailable) }
        let a = try c1.getDocument(key("c/a"))
        XCTAssertTrue(a.fromCache)
        XCTAssertFalse(a.hasPendingWrites)
        XCTAssertEqual(a.document?.data["n"], .int(1))
        let x = try c1.getDocument(key("c/x"))
        XCTAssertTrue(x.fromCache)
        XCTAssertTrue(x.hasPendingWrites)
        let all = try c1.getDocuments(ordered("c"))
        XCTAssertEqual(ids(all), ["a", "b", "x"])
        XCTAssertTrue(all.isFromCache)
        XCTAssertTrue(all.hasPendingWrites)
        let none = try c1.getDocuments(collection("elsewhere"))
        XCTAssertEqual(ids(none), [])
        XCTAssertTrue(none.isFromCache)

        // Back online: the listen result first (fromCache false), then the acknowledgement.
        try c1.enableNetwork()
        XCTAssertTrue(c1.isNetworkEnabled)
        settle(c1)
        XCTAssertEqual(verdicts.value, ["x ok", "all ok"])
        XCTAssertEqual(plain.lines, [initial, "added x -1 2 [pending,cache]"])
        XCTAssertEqual(meta.lines, [initial, "[cache]", "added x -1 2 [pending,cache]", "[pending]", "metadata x 2 2 []"])
        XCTAssertEqual(try c2.count(collection("c")), 3)
        plain.assertConsistent(includeMetadata: false)
        meta.assertConsistent(includeMetadata: true)
    }

    /// Another client changes, deletes and adds documents while this one is offline: nothing is
    /// seen until enableNetwork, then one event carries all of it.
    func testRemoteChangesWhileOfflineArriveOnEnable() throws {
        let (c1, c2) = twoClients()
        defer { c1.close(); c2.close() }
        XCTAssertNil(writeAndWait(c2, [setM("c/a", n(1)), setM("c/b", n(2)), setM("c/c", n(3))]))
        let plain = EventLog(), meta = EventLog()
        try c1.record(ordered("c"), plain)
        try c1.record(ordered("c"), meta, metadata: true)
        settle(c1)
        try c1.disableNetwork()
        XCTAssertNil(writeAndWait(c2, [setM("c/a", ["n": .int(1), "x": .string("new")])]))
        XCTAssertNil(writeAndWait(c2, [deleteM("c/b")]))
        XCTAssertNil(writeAndWait(c2, [setM("c/d", n(4))]))
        settle(c1, c2)
        let initial = "added a -1 0, added b -1 1, added c -1 2 []"
        XCTAssertEqual(plain.lines, [initial])
        XCTAssertEqual(meta.lines, [initial, "[cache]"])
        XCTAssertEqual(ids(try c1.getDocuments(ordered("c"))), ["a", "b", "c"], "the cache still has the old state")

        try c1.enableNetwork()
        settle(c1)
        let catchUp = "removed b 1 -1, added d -1 2, modified a 0 0 []"
        XCTAssertEqual(plain.lines, [initial, catchUp])
        XCTAssertEqual(meta.lines, [initial, "[cache]", catchUp])
        XCTAssertEqual(plain.last?.documents.first?.data["x"], .string("new"))
        // and it follows the backend again
        XCTAssertNil(writeAndWait(c2, [deleteM("c/c")]))
        settle(c1)
        XCTAssertEqual(plain.lines, [initial, catchUp, "removed c 1 -1 []"])
        plain.assertConsistent(includeMetadata: false)
        meta.assertConsistent(includeMetadata: true)
    }

    /// A document that leaves the query's filter remotely while offline is removed on re-enable.
    func testDocumentLeavingTheFilterWhileOfflineIsRemovedOnEnable() throws {
        let (c1, c2) = twoClients()
        defer { c1.close(); c2.close() }
        XCTAssertNil(writeAndWait(c2, [setM("c/a", n(1)), setM("c/b", n(2))]))
        let small = try collection("c").filter(.field(FieldFilter(field: fp("n"), op: .lessThan, value: .int(10))))
        let log = EventLog()
        try c1.record(small, log)
        settle(c1)
        try c1.disableNetwork()
        XCTAssertNil(writeAndWait(c2, [setM("c/a", n(50))]))
        try c1.enableNetwork()
        settle(c1, c2)
        XCTAssertEqual(log.lines, ["added a -1 0, added b -1 1 []", "removed a 0 -1 []"])
        log.assertConsistent(includeMetadata: false)
    }

    /// A limit window whose first document was deleted remotely while offline is refilled on
    /// re-enable with a document the cache never had.
    func testLimitWindowCatchesUpOnEnable() throws {
        let (c1, c2) = twoClients()
        defer { c1.close(); c2.close() }
        XCTAssertNil(writeAndWait(c2, (1...5).map { setM("c/\(["a", "b", "c", "d", "e"][$0 - 1])", n(Int64($0))) }))
        let log = EventLog()
        try c1.record(try ordered("c").limit(2), log)
        settle(c1)
        try c1.disableNetwork()
        XCTAssertNil(writeAndWait(c2, [deleteM("c/a")]))
        settle(c1, c2)
        try c1.enableNetwork()
        settle(c1)
        XCTAssertEqual(log.lines, ["added a -1 0, added b -1 1 []", "removed a 0 -1, added c -1 1 []"])
        log.assertConsistent(includeMetadata: false)
    }

    /// Offline, a new listener gets the cache's answer at once (even empty); enable brings the
    /// backend's.
    func testListenWhileOfflineRaisesFromTheCacheAtOnce() throws {
        let (c1, c2) = twoClients()
        defer { c1.close(); c2.close() }
        XCTAssertNil(writeAndWait(c2, [setM("c/a", n(1))]))
        try c1.disableNetwork()
        let plain = EventLog(), meta = EventLog()
        try c1.record(collection("c"), plain)
        try c1.record(collection("c"), meta, metadata: true)
        drainLocal(c1)
        XCTAssertEqual(plain.lines, ["[cache]"])
        XCTAssertEqual(meta.lines, ["[cache]"])
        try c1.enableNetwork()
        settle(c1)
        XCTAssertEqual(plain.lines, ["[cache]", "added a -1 0 []"])
        XCTAssertEqual(meta.lines, ["[cache]", "added a -1 0 []"])
    }

    /// A listener still waiting for its first backend answer raises from the cache when the
    /// network goes away.
    func testGoingOfflineRaisesAPendingInitialSnapshotFromTheCache() throws {
        let client = EmberClient()
        defer { client.close() }
        let log = EventLog()
        // Hold the backend so the listen result cannot arrive before disableNetwork.
        try whileBackendHeld(client.backend) {
            try client.record(collection("c"), log)
            try client.disableNetwork()
        }
        settle(client)
        XCTAssertEqual(log.lines, ["[cache]"])
        try client.enableNetwork()
        settle(client)
        XCTAssertEqual(log.lines, ["[cache]"], "an empty result from the backend changes only metadata")
    }

    func testDisableAndEnableAreIdempotent() throws {
        let client = EmberClient()
        defer { client.close() }
        let meta = EventLog()
        try client.record(collection("c"), meta, metadata: true)
        settle(client)
        try client.disableNetwork()
        try client.disableNetwork()
        settle(client)
        try client.enableNetwork()
        try client.enableNetwork()
        settle(client)
        XCTAssertEqual(meta.lines, ["[]", "[cache]", "[]"])
        XCTAssertNil(writeAndWait(client, [setM("c/a", n(1))]))
        settle(client)
        XCTAssertEqual(meta.lines, ["[]", "[cache]", "[]", "added a -1 0 [pending]", "metadata a 0 0 []"])
    }
}

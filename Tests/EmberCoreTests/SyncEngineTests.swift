// Tests of SyncEngine through EmberClient: the exact listener events (docs/semantics.md 8-13) for
// initial snapshots, local writes and their acknowledgements, moves, deletes, batches, limit
// windows, remote changes and rejected writes. Offline behaviour is in NetworkTests.swift.
import XCTest
import EmberModel
import EmberCore

final class SyncEngineTests: XCTestCase {

    // MARK: initial snapshots

    func testInitialSnapshotOfEmptyCollectionWaitsForTheBackend() throws {
        let client = EmberClient()
        defer { client.close() }
        let plain = EventLog(), meta = EventLog()
        try client.record(collection("c"), plain)
        try client.record(collection("c"), meta, metadata: true)
        settle(client)
        XCTAssertEqual(plain.lines, ["[]"])
        XCTAssertEqual(meta.lines, ["[]"])
        XCTAssertTrue(plain.snapshots[0].documents.isEmpty)
    }

    func testInitialSnapshotWithDocumentsFromTheBackend() throws {
        let (c1, c2) = twoClients()
        defer { c1.close(); c2.close() }
        XCTAssertNil(writeAndWait(c2, [setM("c/a", n(2)), setM("c/b", n(1))]))
        let log = EventLog()
        try c1.record(ordered("c"), log, metadata: true)
        settle(c1)
        XCTAssertEqual(log.lines, ["added b -1 0, added a -1 1 []"])
        XCTAssertEqual(log.last?.documents.map { $0.data["n"] }, [.int(1), .int(2)])
        log.assertConsistent(includeMetadata: true)
    }

    /// A listener attached when the cache already has documents gets them from the cache at once,
    /// then the backend's confirmation as a metadata-only change (seen only with metadata).
    func testCachedDocumentsGiveAFromCacheEventFirst() throws {
        let client = EmberClient()
        defer { client.close() }
        XCTAssertNil(writeAndWait(client, [setM("c/a", n(1)), setM("c/b", n(2))]))
        let plain = EventLog(), meta = EventLog()
        try whileBackendHeld(client.backend) {
            try client.record(ordered("c"), plain)
            try client.record(ordered("c"), meta, metadata: true)
            drainLocal(client)   // no backend round trip: the cache answers at once
            XCTAssertEqual(plain.lines, ["added a -1 0, added b -1 1 [cache]"])
            XCTAssertEqual(meta.lines, ["added a -1 0, added b -1 1 [cache]"])
        }
        settle(client)
        XCTAssertEqual(plain.lines, ["added a -1 0, added b -1 1 [cache]"])
        XCTAssertEqual(meta.lines, ["added a -1 0, added b -1 1 [cache]", "[]"])
        meta.assertConsistent(includeMetadata: true)
    }

    func testASecondListenerOnTheSameQueryGetsTheCurrentResultAtOnce() throws {
        let (c1, c2) = twoClients()
        defer { c1.close(); c2.close() }
        XCTAssertNil(writeAndWait(c2, [setM("c/a", n(1)), setM("c/b", n(2))]))
        let first = EventLog(), second = EventLog()
        try c1.record(ordered("c"), first)
        settle(c1)
        try c1.record(ordered("c"), second)
        drainLocal(c1)
        XCTAssertEqual(second.lines, ["added a -1 0, added b -1 1 []"])
        settle(c1)
        XCTAssertEqual(first.lines, ["added a -1 0, added b -1 1 []"])
        XCTAssertEqual(second.lines, ["added a -1 0, added b -1 1 []"])
    }

    // MARK: local writes

    func testLocalWriteIsRaisedAtOnceThenAcknowledged() throws {
        let client = EmberClient()
        defer { client.close() }
        let plain = EventLog(), meta = EventLog(), docMeta = EventLog()
        try client.record(collection("c"), plain)
        try client.record(collection("c"), meta, metadata: true)
        try client.record(Query(document: key("c/a")), docMeta, metadata: true)
        settle(client)
        let eventsAtAck = Box<Int>(-1)
        try client.write([setM("c/a", ["name": .string("A")])]) { err in
            XCTAssertNil(err)
            eventsAtAck.value = meta.all.count
        }
        drainLocal(client)   // the local event comes before any backend round trip
        XCTAssertEqual(plain.lines, ["[]", "added a -1 0 [pending]"])
        XCTAssertEqual(Array(meta.lines.prefix(2)), ["[]", "added a -1 0 [pending]"])
        settle(client)
        XCTAssertEqual(plain.lines, ["[]", "added a -1 0 [pending]"])
        XCTAssertEqual(meta.lines, ["[]", "added a -1 0 [pending]", "metadata a 0 0 []"])
        XCTAssertEqual(docMeta.lines, ["[]", "added a -1 0 [pending]", "metadata a 0 0 []"])
        XCTAssertEqual(eventsAtAck.value, 3, "the completion runs after the acknowledgement's event")
        XCTAssertEqual(meta.snapshots[1].documents[0].data["name"], .string("A"))
        plain.assertConsistent(includeMetadata: false)
        meta.assertConsistent(includeMetadata: true)
    }

    func testModifyMovesADocumentInAnOrderedQuery() throws {
        let (c1, c2) = twoClients()
        defer { c1.close(); c2.close() }
        XCTAssertNil(writeAndWait(c2, [setM("c/a", n(1)), setM("c/b", n(2)), setM("c/c", n(3))]))
        let asc = EventLog(), desc = EventLog()
        try c1.record(ordered("c"), asc)
        settle(c1)   // the first listen brought the documents into the cache
        try c1.record(ordered("c", descending: true), desc)
        settle(c1)
        try c1.write([setM("c/a", n(5))])
        try c1.write([setM("c/c", n(0))])
        settle(c1)
        XCTAssertEqual(asc.lines, ["added a -1 0, added b -1 1, added c -1 2 []",
                                   "modified a 0 2 [pending]",
                                   "modified c 1 0 [pending]"])
        XCTAssertEqual(desc.lines, ["added c -1 0, added b -1 1, added a -1 2 [cache]",
                                    "modified a 2 0 [pending]",
                                    "modified c 1 2 [pending]"])
        XCTAssertEqual(ids(asc.last!), ["c", "b", "a"])
        asc.assertConsistent(includeMetadata: false)
        desc.assertConsistent(includeMetadata: false)
    }

    /// A deleted document is no longer in the result, so the snapshot has no pending writes and
    /// the acknowledgement changes nothing a listener can see (docs/semantics.md 10).
    func testDeleteRemovesTheDocumentWithItsOldIndex() throws {
        let (c1, c2) = twoClients()
        defer { c1.close(); c2.close() }
        XCTAssertNil(writeAndWait(c2, [setM("c/a", n(1)), setM("c/b", n(2)), setM("c/c", n(3))]))
        let meta = EventLog()
        try c1.record(ordered("c"), meta, metadata: true)
        settle(c1)
        try c1.write([deleteM("c/b")])
        settle(c1)
        XCTAssertNil(writeAndWait(c2, [deleteM("c/c")]))
        settle(c1)
        XCTAssertEqual(meta.lines, ["added a -1 0, added b -1 1, added c -1 2 []",
                                    "removed b 1 -1 []",
                                    "removed c 1 -1 []"])
        meta.assertConsistent(includeMetadata: true)
    }

    /// Removed, then added, then modified, each in query order, indexes step by step.
    func testSeveralChangesInOneBatch() throws {
        let (c1, c2) = twoClients()
        defer { c1.close(); c2.close() }
        XCTAssertNil(writeAndWait(c2, ["a", "b", "c", "d", "e"].enumerated().map { i, id in
            setM("c/\(id)", ["n": .int(Int64(i + 1)), "x": .string("old")])
        }))
        let plain = EventLog(), meta = EventLog()
        try c1.record(ordered("c"), plain)
        try c1.record(ordered("c"), meta, metadata: true)
        settle(c1)
        // [a1 b2 c3 d4 e5]
        try c1.write([deleteM("c/b"),
                      setM("c/f", n(0)),
                      setM("c/g", ["n": .double(2.5)]),
                      setM("c/c", ["n": .int(3), "x": .string("new")]),
                      setM("c/d", n(6))])
        settle(c1)
        // [f0 a1 g2.5 c3 e5 d6]; now a remote batch
        XCTAssertNil(writeAndWait(c2, [deleteM("c/a"), setM("c/h", n(10)), setM("c/e", n(-1)), setM("c/f", n(7))]))
        settle(c1)
        let initial = "added a -1 0, added b -1 1, added c -1 2, added d -1 3, added e -1 4 []"
        let local = "removed b 1 -1, added f -1 0, added g -1 2, modified c 3 3, modified d 4 5 [pending]"
        let remote = "removed a 1 -1, added h -1 5, modified e 3 0, modified f 1 4 []"
        XCTAssertEqual(plain.lines, [initial, local, remote])
        XCTAssertEqual(meta.lines, [initial, local,
                                    "metadata f 0 0, metadata g 2 2, metadata c 3 3, metadata d 5 5 []",
                                    remote])
        XCTAssertEqual(ids(meta.last!), ["e", "g", "c", "d", "f", "h"])
        plain.assertConsistent(includeMetadata: false)
        meta.assertConsistent(includeMetadata: true)
    }

    // MARK: limit windows

    func testLimitWindowRefillsFromTheCache() throws {
        let client = EmberClient()
        defer { client.close() }
        XCTAssertNil(writeAndWait(client, (1...5).map { setM("c/\(["a", "b", "c", "d", "e"][$0 - 1])", n(Int64($0))) }))
        let q = try ordered("c").limit(2)
        let plain = EventLog(), meta = EventLog()
        try whileBackendHeld(client.backend) {   // both attach before the backend answers
            try client.record(q, plain)
            try client.record(q, meta, metadata: true)
        }
        settle(client)
        try client.write([deleteM("c/a")])          // c comes in from the cache
        settle(client)
        try client.write([setM("c/b", n(10))])      // b leaves the window, d comes in
        settle(client)
        let initial = "added a -1 0, added b -1 1 [cache]"
        XCTAssertEqual(plain.lines, [initial, "removed a 0 -1, added c -1 1 []", "removed b 0 -1, added d -1 1 []"])
        XCTAssertEqual(meta.lines, [initial, "[]", "removed a 0 -1, added c -1 1 []", "removed b 0 -1, added d -1 1 []"])
        XCTAssertEqual(ids(meta.last!), ["c", "d"])
        plain.assertConsistent(includeMetadata: false)
        meta.assertConsistent(includeMetadata: true)
    }

    func testLimitWindowRefillsFromTheBackendWhenTheCacheHasNothingNext() throws {
        let (c1, c2) = twoClients()
        defer { c1.close(); c2.close() }
        XCTAssertNil(writeAndWait(c2, (1...5).map { setM("c/\(["a", "b", "c", "d", "e"][$0 - 1])", n(Int64($0))) }))
        let log = EventLog()
        try c1.record(try ordered("c").limit(2), log, metadata: true)
        settle(c1)
        try c1.write([deleteM("c/a")])              // the cache has only a and b
        settle(c1)
        XCTAssertNil(writeAndWait(c2, [deleteM("c/b")]))   // remote: b leaves, d enters
        settle(c1)
        XCTAssertEqual(log.lines, ["added a -1 0, added b -1 1 []",
                                   "removed a 0 -1 []",
                                   "added c -1 1 []",
                                   "removed b 0 -1, added d -1 1 []"])
        log.assertConsistent(includeMetadata: true)
    }

    func testLimitToLastRefills() throws {
        let (c1, c2) = twoClients()
        defer { c1.close(); c2.close() }
        XCTAssertNil(writeAndWait(c2, (1...5).map { setM("c/\(["a", "b", "c", "d", "e"][$0 - 1])", n(Int64($0))) }))
        let log = EventLog()
        try c1.record(try ordered("c").limit(2, type: .last), log)
        settle(c1)
        XCTAssertNil(writeAndWait(c2, [deleteM("c/e")]))   // remote: e leaves, c enters at the front
        settle(c1)
        try c1.write([deleteM("c/d")])              // from the cache: c is there, b is not yet
        settle(c1)
        XCTAssertEqual(log.lines, ["added d -1 0, added e -1 1 []",
                                   "removed e 1 -1, added c -1 0 []",
                                   "removed d 1 -1 []",
                                   "added b -1 0 []"])
        XCTAssertEqual(ids(log.last!), ["b", "c"])
        log.assertConsistent(includeMetadata: false)
    }

    func testLimitToLastRefillsFromTheCache() throws {
        let client = EmberClient()
        defer { client.close() }
        XCTAssertNil(writeAndWait(client, (1...5).map { setM("c/\(["a", "b", "c", "d", "e"][$0 - 1])", n(Int64($0))) }))
        let log = EventLog()
        try client.record(try ordered("c").limit(2, type: .last), log)
        settle(client)
        try client.write([deleteM("c/e")])
        drainLocal(client)
        XCTAssertEqual(log.lines, ["added d -1 0, added e -1 1 [cache]", "removed e 1 -1, added c -1 0 []"])
        settle(client)
        XCTAssertEqual(log.all.count, 2)
        log.assertConsistent(includeMetadata: false)
    }

    func testLimitToLastWithoutOrderByEndsTheListenerWithAnError() throws {
        let client = EmberClient()
        defer { client.close() }
        let log = EventLog()
        let gone = Box(0)
        let token = try client.record(try collection("c").limit(2, type: .last), log, onGone: { gone.value += 1 })
        settle(client)
        XCTAssertEqual(log.lines, ["error INVALID_ARGUMENT"])
        XCTAssertEqual(gone.value, 1)
        XCTAssertFalse(token.isActive)
        try client.write([setM("c/a", n(1))])
        token.remove()
        settle(client)
        XCTAssertEqual(log.lines, ["error INVALID_ARGUMENT"])
        XCTAssertEqual(gone.value, 1)
    }

    // MARK: cache-only listeners

    func testCacheOnlyListenerRaisesAtOnceAndSeesLocalWrites() throws {
        let client = EmberClient()
        defer { client.close() }
        let plain = EventLog(), meta = EventLog()
        try client.record(collection("c"), plain, source: .cache)
        try client.record(collection("c"), meta, metadata: true, source: .cache)
        drainLocal(client)   // no backend round trip needed
        XCTAssertEqual(plain.lines, ["[cache]"])
        XCTAssertEqual(meta.lines, ["[cache]"])
        try client.write([setM("c/a", n(1))])
        settle(client)
        XCTAssertEqual(plain.lines, ["[cache]", "added a -1 0 [pending,cache]"])
        XCTAssertEqual(meta.lines, ["[cache]", "added a -1 0 [pending,cache]", "metadata a 0 0 [cache]"])
        // A later cache listener gets the cached document at once.
        let later = EventLog()
        try client.record(collection("c"), later, source: .cache)
        drainLocal(client)
        XCTAssertEqual(later.lines, ["added a -1 0 [cache]"])
        meta.assertConsistent(includeMetadata: true)
    }

    /// A cache-only listener sees what other listeners bring into the cache, always from cache.
    func testCacheOnlyListenerSeesRemoteChangesBroughtByAnotherListener() throws {
        let (c1, c2) = twoClients()
        defer { c1.close(); c2.close() }
        let server = EventLog(), cache = EventLog()
        try c1.record(collection("c"), server)
        try c1.record(collection("c"), cache, source: .cache)
        settle(c1)
        XCTAssertNil(writeAndWait(c2, [setM("c/a", n(1))]))
        settle(c1)
        XCTAssertEqual(server.lines, ["[]", "added a -1 0 []"])
        XCTAssertEqual(cache.lines, ["[cache]", "added a -1 0 [cache]"])
    }

    // MARK: remote changes

    func testRemoteChangesArriveWithoutPendingWrites() throws {
        let (c1, c2) = twoClients()
        defer { c1.close(); c2.close() }
        let remote = EventLog(), own = EventLog()
        try c1.record(collection("c"), remote, metadata: true)
        try c2.record(collection("c"), own, metadata: true)
        settle(c1, c2)
        XCTAssertNil(writeAndWait(c2, [setM("c/a", n(1))]))
        settle(c1, c2)
        XCTAssertNil(writeAndWait(c2, [setM("c/a", n(2))]))
        settle(c1, c2)
        XCTAssertEqual(remote.lines, ["[]", "added a -1 0 []", "modified a 0 0 []"])
        XCTAssertEqual(own.lines, ["[]", "added a -1 0 [pending]", "metadata a 0 0 []",
                                   "modified a 0 0 [pending]", "metadata a 0 0 []"])
        XCTAssertEqual(remote.last?.documents[0].data["n"], .int(2))
        remote.assertConsistent(includeMetadata: true)
        own.assertConsistent(includeMetadata: true)
    }

    // MARK: rejected writes

    func testRejectedUpdateOfAMissingDocumentIsNeverSeen() throws {
        let client = EmberClient()
        defer { client.close() }
        let docLog = EventLog(), collLog = EventLog()
        try client.record(Query(document: key("c/ghost")), docLog, metadata: true)
        try client.record(collection("c"), collLog, metadata: true)
        settle(client)
        let err = writeAndWait(client, [updateM("c/ghost", n(1))])
        XCTAssertEqual(err?.code, .notFound)
        settle(client)
        XCTAssertEqual(docLog.lines, ["[]"])
        XCTAssertEqual(collLog.lines, ["[]"])
        XCTAssertNil(try client.getDocument(key("c/ghost")).document)
    }

    /// A batch whose set is visible locally is refused as a whole: the set is rolled back with the
    /// events that undo it, and the completion runs after them.
    func testRejectedBatchIsRolledBack() throws {
        let (c1, c2) = twoClients()
        defer { c1.close(); c2.close() }
        XCTAssertNil(writeAndWait(c2, [setM("c/a", n(1)), setM("c/b", n(2))]))
        let meta = EventLog()
        try c1.record(ordered("c"), meta, metadata: true)
        settle(c1)
        let eventsAtVerdict = Box(-1)
        let verdict = Box<EmberError?>(nil)
        try c1.write([setM("c/a", n(5)), setM("c/z", n(0)), updateM("c/ghost", n(1))]) { e in
            verdict.value = e
            eventsAtVerdict.value = meta.all.count
        }
        settle(c1)
        XCTAssertEqual(meta.lines, ["added a -1 0, added b -1 1 []",
                                    "added z -1 0, modified a 1 2 [pending]",
                                    "removed z 0 -1, modified a 1 0 []"])
        XCTAssertEqual(verdict.value?.code, .notFound)
        XCTAssertEqual(eventsAtVerdict.value, 3)
        XCTAssertEqual(meta.last?.documents.map { $0.data["n"] }, [.int(1), .int(2)])
        meta.assertConsistent(includeMetadata: true)
        XCTAssertNil(try c1.getDocument(key("c/z")).document)
        XCTAssertEqual(try c1.getDocument(key("c/a")).document?.data["n"], .int(1))
    }

    /// A good write followed by a refused batch on the same document: the document goes back to
    /// the acknowledged value, not to the one before both.
    func testRejectedBatchRevertsToTheAcknowledgedValue() throws {
        let (c1, c2) = twoClients()
        defer { c1.close(); c2.close() }
        XCTAssertNil(writeAndWait(c2, [setM("c/a", n(1)), setM("c/b", n(2))]))
        let meta = EventLog()
        try c1.record(ordered("c"), meta, metadata: true)
        settle(c1)
        try whileBackendHeld(c1.backend) {   // both are pending before either is answered
            try c1.write([setM("c/b", n(7))])
            try c1.write([setM("c/b", n(9)), updateM("c/ghost", n(1))])
        }
        settle(c1)
        XCTAssertEqual(meta.lines, ["added a -1 0, added b -1 1 []",
                                    "modified b 1 1 [pending]",
                                    "modified b 1 1 [pending]",
                                    "modified b 1 1 []"])
        XCTAssertEqual(meta.snapshots.map { $0.documents[1].data["n"] }, [.int(2), .int(7), .int(9), .int(7)])
        meta.assertConsistent(includeMetadata: true)
    }

    /// Offline, an update of a document the cache still has is applied locally; meanwhile another
    /// client deleted it. On reconnect the listen result removes it first, then the refusal rolls
    /// back the rest of the batch.
    func testRejectedWriteAfterARemoteDeleteWhileOffline() throws {
        let (c1, c2) = twoClients()
        defer { c1.close(); c2.close() }
        XCTAssertNil(writeAndWait(c2, [setM("r/b", n(1))]))
        let log = EventLog()
        try c1.record(collection("r"), log)
        settle(c1)
        try c1.disableNetwork()
        XCTAssertNil(writeAndWait(c2, [deleteM("r/b")]))
        settle(c1, c2)
        let verdict = Box<EmberError?>(nil)
        try c1.write([setM("r/a", n(0)), updateM("r/b", n(2))]) { verdict.value = $0 }
        settle(c1)
        try c1.enableNetwork()
        settle(c1)
        XCTAssertEqual(log.lines, ["added b -1 0 []",
                                   "added a -1 0, modified b 1 1 [pending,cache]",
                                   "removed b 1 -1 [pending]",
                                   "removed a 0 -1 []"])
        XCTAssertEqual(verdict.value?.code, .notFound)
        log.assertConsistent(includeMetadata: false)
    }

    // MARK: waitForPendingWrites

    func testWaitForPendingWritesRunsAfterEveryEarlierWrite() throws {
        let client = EmberClient()
        defer { client.close() }
        let order = Box<[String]>([])
        try client.waitForPendingWrites { e in XCTAssertNil(e); order.mutate { $0.append("none pending") } }
        drainLocal(client)
        XCTAssertEqual(order.value, ["none pending"])
        for i in 1...3 { try client.write([setM("c/\(i)", n(Int64(i)))]) { _ in order.mutate { $0.append("w\(i)") } } }
        try client.waitForPendingWrites { e in XCTAssertNil(e); order.mutate { $0.append("all") } }
        try client.write([setM("c/4", n(4))]) { _ in order.mutate { $0.append("w4") } }
        settle(client)
        XCTAssertEqual(order.value, ["none pending", "w1", "w2", "w3", "all", "w4"])
    }

    func testWaitForPendingWritesCompletesAfterARejection() throws {
        let client = EmberClient()
        defer { client.close() }
        let order = Box<[String]>([])
        try client.write([updateM("c/ghost", n(1))]) { e in order.mutate { $0.append("w \(e?.code.name ?? "ok")") } }
        try client.waitForPendingWrites { e in order.mutate { $0.append("all \(e?.code.name ?? "ok")") } }
        settle(client)
        XCTAssertEqual(order.value, ["w NOT_FOUND", "all ok"])
    }

    func testCloseCancelsUnacknowledgedWritesAndWaiters() throws {
        let client = EmberClient()
        try client.disableNetwork()
        let order = Box<[String]>([])
        try client.write([setM("c/a", n(1))]) { e in order.mutate { $0.append("w \(e?.code.name ?? "ok")") } }
        try client.waitForPendingWrites { e in order.mutate { $0.append("all \(e?.code.name ?? "ok")") } }
        settle(client)
        XCTAssertEqual(order.value, [])
        client.close()
        XCTAssertEqual(order.value, ["w CANCELLED", "all CANCELLED"])
        XCTAssertThrowsError(try client.write([setM("c/b", n(1))])) { XCTAssertEqual(($0 as? EmberError)?.code, .failedPrecondition) }
        XCTAssertThrowsError(try client.listen(collection("c")) { _ in }) { XCTAssertEqual(($0 as? EmberError)?.code, .failedPrecondition) }
        client.close()   // idempotent
    }

    /// Regression: a closed client released while its messages to the backend were still queued
    /// (the disconnect, a commit, an unlisten) made the backend queue read a freed Backend
    /// through BackendConnection's unowned reference and crash the process.
    func testReleasingAClosedClientWithMessagesInFlight() throws {
        for i in 0..<300 {
            let client = EmberClient()   // released at the end of each iteration
            let token = try? client.listen(collection("c")) { _ in }
            _ = try? client.write([setM("c/\(i)", n(Int64(i)))])
            token?.remove()
            client.close()
        }
        let (c1, c2) = twoClients()
        _ = try? c1.write([setM("c/a", n(1))])
        c1.close()
        c2.close()
    }

    // MARK: one-shot reads

    /// A server read corrects what the cache had wrong (a document that stopped matching, one
    /// deleted, one created elsewhere) and keeps the client's own writes in the result, without
    /// running the query over the collection a second time.
    func testServerGetCorrectsAStaleCacheAndKeepsLocalWrites() throws {
        let (c1, c2) = twoClients()
        defer { c1.close(); c2.close() }
        XCTAssertNil(writeAndWait(c2, [setM("c/a", n(1)), setM("c/b", n(2)), setM("c/c", n(3))]))
        let gt1 = try ordered("c").filter(.field(FieldFilter(field: fp("n"), op: .greaterThan, value: .int(1))))
        XCTAssertEqual(ids(try c1.getDocuments(gt1)), ["b", "c"])
        XCTAssertNil(writeAndWait(c2, [setM("c/b", n(0)), deleteM("c/c"), setM("c/e", n(5))]))
        XCTAssertEqual(ids(try c1.getDocuments(gt1, source: .cache)), ["b", "c"])   // stale until asked
        try c1.write([setM("c/x", n(9)), setM("c/a", n(7))])
        let server = try c1.getDocuments(gt1)
        XCTAssertEqual(ids(server), ["e", "a", "x"])
        XCTAssertFalse(server.isFromCache)
        XCTAssertEqual(ids(try c1.getDocuments(gt1, source: .cache)), ["e", "a", "x"])
    }

    func testCountAndGetDocumentsBySource() throws {
        let (c1, c2) = twoClients()
        defer { c1.close(); c2.close() }
        XCTAssertNil(writeAndWait(c2, [setM("c/a", n(1)), setM("c/b", n(2)), setM("c/c", n(3))]))
        XCTAssertEqual(try c1.count(collection("c")), 3)
        XCTAssertEqual(try c1.count(try collection("c").limit(2)), 2)
        let gt1 = try collection("c").filter(.field(FieldFilter(field: fp("n"), op: .greaterThan, value: .int(1))))
        XCTAssertEqual(try c1.count(gt1), 2)
        XCTAssertEqual(try c1.count(collection("empty")), 0)

        let fromEmptyCache = try c1.getDocuments(ordered("c"), source: .cache)
        XCTAssertEqual(ids(fromEmptyCache), [])
        XCTAssertTrue(fromEmptyCache.isFromCache)

        let server = try c1.getDocuments(ordered("c"))
        XCTAssertEqual(ids(server), ["a", "b", "c"])
        XCTAssertFalse(server.isFromCache)
        XCTAssertFalse(server.hasPendingWrites)
        XCTAssertEqual(summary(server), ["added a -1 0", "added b -1 1", "added c -1 2"])

        let cached = try c1.getDocuments(ordered("c"), source: .cache)
        XCTAssertEqual(ids(cached), ["a", "b", "c"])
        XCTAssertTrue(cached.isFromCache)

        let top2 = try c1.getDocuments(try ordered("c", descending: true).limit(2), source: .server)
        XCTAssertEqual(ids(top2), ["c", "b"])
        XCTAssertFalse(top2.isFromCache)
        XCTAssertEqual(ids(try c1.getDocuments(gt1, source: .cache)), ["b", "c"])

        // A local write is in local results at once and in the count once committed.
        try c1.write([setM("c/d", n(4))])
        XCTAssertEqual(try c1.count(collection("c")), 4)
        let withLocal = try c1.getDocuments(ordered("c"), source: .cache)
        XCTAssertEqual(ids(withLocal), ["a", "b", "c", "d"])

        // Single documents.
        let a = try c1.getDocument(key("c/a"), source: .cache)
        XCTAssertTrue(a.fromCache)
        XCTAssertEqual(a.document?.data["n"], .int(1))
        let missing = try c1.getDocument(key("c/nope"))
        XCTAssertNil(missing.document)
        XCTAssertFalse(missing.fromCache)
        let missingCached = try c1.getDocument(key("c/nope"), source: .cache)   // known missing now
        XCTAssertNil(missingCached.document)
        XCTAssertTrue(missingCached.fromCache)
        XCTAssertThrowsError(try c1.getDocument(key("c/never"), source: .cache)) {
            XCTAssertEqual(($0 as? EmberError)?.code, .unavailable)
        }
        XCTAssertThrowsError(try c1.getDocuments(try collection("c").limit(1, type: .last))) {
            XCTAssertEqual(($0 as? EmberError)?.code, .invalidArgument)
        }
    }
}

// Tests of ListenerToken's removal contract: idempotent; once remove() returns no callback runs;
// a callback may remove itself or write; onGone runs exactly once, after the last callback.
import EmberConcurrency
import XCTest
import EmberModel
import EmberCore

final class ListenerTokenTests: XCTestCase {

    func testRemoveIsIdempotentAndOnGoneRunsOnce() throws {
        let client = EmberClient()
        defer { client.close() }
        let log = EventLog()
        let gone = Box(0)
        let token = try client.record(collection("c"), log, onGone: { gone.value += 1 })
        settle(client)
        XCTAssertTrue(token.isActive)
        token.remove()
        token.remove()
        XCTAssertFalse(token.isActive)
        try client.write([setM("c/a", n(1))])
        settle(client)
        token.remove()
        settle(client)
        XCTAssertEqual(log.lines, ["[]"])
        XCTAssertEqual(gone.value, 1)
    }

    func testConcurrentRemovesRunOnGoneOnce() throws {
        let client = EmberClient()
        defer { client.close() }
        let gone = Box(0)
        let tokens = try (0..<50).map { _ in try client.listen(collection("c"), onGone: { gone.value += 1 }) { _ in } }
        concurrently(4) { _ in for t in tokens { t.remove() } }
        settle(client)
        XCTAssertEqual(gone.value, 50)
    }

    /// Listeners that end with an error at once (the error is posted before listen() returns)
    /// get it once and run onGone once; repeated so ThreadSanitizer sees the hand-over.
    func testListenersEndedByAnErrorRunOnGoneOnce() throws {
        let client = EmberClient()
        defer { client.close() }
        let gone = Box(0), errors = Box(0), snapshots = Box(0)
        var tokens: [ListenerToken] = []
        for _ in 0..<200 {
            tokens.append(try client.listen(try collection("c").limit(1, type: .last), onGone: { gone.value += 1 }) { e in
                if case .error = e { errors.value += 1 } else { snapshots.value += 1 }
            })
        }
        settle(client)
        for t in tokens { t.remove() }
        settle(client)
        XCTAssertEqual(errors.value, 200)
        XCTAssertEqual(snapshots.value, 0)
        XCTAssertEqual(gone.value, 200)
    }

    /// Closing the client ends its listeners: each onGone runs once during close (its owner may
    /// free the listener's context there), no callback runs after close, and a later remove()
    /// does nothing more.
    func testCloseEndsListenersAndRunsOnGoneOnce() throws {
        let client = EmberClient()
        let gone = Box(0)
        let log = EventLog()
        let token = try client.record(collection("c"), log, onGone: { gone.value += 1 })
        let other = try client.listen(Query(document: key("c/a")), onGone: { gone.value += 1 }) { _ in }
        settle(client)
        client.close()
        XCTAssertEqual(gone.value, 2)
        XCTAssertFalse(token.isActive)
        XCTAssertFalse(other.isActive)
        token.remove()
        other.remove()
        XCTAssertEqual(gone.value, 2)
        XCTAssertEqual(log.lines, ["[]"])
    }

    /// A callback running while another thread closes the client may call back into it: close
    /// does not wait for that callback under the worker (no deadlock), and onGone follows it.
    func testCloseWhileACallbackCallsBackIn() throws {
        for _ in 0..<50 {
            let client = EmberClient()
            let gone = Box(0)
            let token = try client.listen(collection("c"), onGone: { gone.value += 1 }) { _ in
                _ = try? client.write([setM("c/x", n(1))])
            }
            try client.write([setM("c/a", n(1))])
            client.close()
            XCTAssertEqual(gone.value, 1)
            token.remove()
        }
    }

    /// onGone runs after every callback of the listener, on the event thread.
    func testOnGoneRunsAfterTheLastCallback() throws {
        let client = EmberClient()
        defer { client.close() }
        let order = Box<[String]>([])
        let events = client.events
        let token = try client.listen(collection("c"), onGone: {
            XCTAssertTrue(events.isCurrent)
            order.mutate { $0.append("gone") }
        }) { _ in order.mutate { $0.append("event") } }
        settle(client)
        for i in 0..<20 { try client.write([setM("c/\(i)", n(Int64(i)))]) }
        token.remove()   // events may still be queued: they are dropped, and onGone comes after
        settle(client)
        XCTAssertEqual(order.value.last, "gone")
        XCTAssertEqual(order.value.filter { $0 == "gone" }.count, 1)
    }

    /// Stress: a thread writes continuously while another removes listeners; once remove()
    /// has returned, the callback never runs again.
    func testNoCallbackRunsAfterRemoveReturns() throws {
        let client = EmberClient()
        defer { client.close() }
        let stop = Box(false)
        let writer = Thread {
            var i: Int64 = 0
            while !stop.value {
                _ = try? client.write([setM("c/\(i % 10)", n(i))])
                i += 1
            }
        }
        writer.start()
        defer { stop.value = true }
        let late = Box(0)
        let delivered = Box(0)
        for round in 0..<40 {
            let removed = Box(false)
            let started = Semaphore()
            let count = Box(0)
            let token = try client.listen(collection("c"), options: ListenOptions(includeMetadataChanges: true)) { _ in
                if removed.value { late.value += 1 }
                count.value += 1
                if count.value == 3 { started.signal() }
            }
            XCTAssertTrue(started.wait(seconds: 10), "round \(round): the listener never saw events")
            let removerDone = Semaphore()
            Thread.detachNewThread {
                token.remove()
                removed.value = true
                removerDone.signal()
            }
            XCTAssertTrue(removerDone.wait(seconds: 10))
            // let more events be produced and delivered (or dropped) after the removal
            drainLocal(client)
            delivered.value += count.value
        }
        stop.value = true
        settle(client)
        XCTAssertEqual(late.value, 0, "a callback ran after remove() returned")
        XCTAssertGreaterThan(delivered.value, 0)
    }

    /// remove() from another thread waits for a callback that is running.
    func testRemoveWaitsForARunningCallback() throws {
        let client = EmberClient()
        defer { client.close() }
        let removeReturned = Box(false)
        let inCallback = Semaphore()
        let removerStarted = Box(false)
        let sawReturnWhileRunning = Box(false)
        let fire = Box(false)
        let token = try client.listen(collection("c")) { _ in
            guard fire.value else { return }
            fire.value = false
            inCallback.signal()
            // Stay in the callback until the remover has started, then a while longer (bounded
            // spinning, not a sleep): remove() must not return meanwhile.
            var spins = 0
            while !removerStarted.value && spins < 50_000_000 { spins += 1 }
            for _ in 0..<200_000 where removeReturned.value { sawReturnWhileRunning.value = true }
        }
        settle(client)
        fire.value = true
        try client.write([setM("c/a", n(1))])
        XCTAssertTrue(inCallback.wait(seconds: 10))
        let done = Semaphore()
        Thread.detachNewThread {
            removerStarted.value = true
            token.remove()
            removeReturned.value = true
            done.signal()
        }
        XCTAssertTrue(done.wait(seconds: 10))
        XCTAssertFalse(sawReturnWhileRunning.value)
    }

    func testCallbackThatRemovesItself() throws {
        let client = EmberClient()
        defer { client.close() }
        let log = EventLog()
        let gone = Box(0)
        let tokenBox = Box<ListenerToken?>(nil)
        let token = try client.listen(collection("c"), onGone: { gone.value += 1 }) { e in
            log.append(e)
            if log.all.count == 2 { tokenBox.value?.remove() }
        }
        tokenBox.value = token
        settle(client)
        try client.write([setM("c/a", n(1))])
        try client.write([setM("c/b", n(2))])
        try client.write([setM("c/c", n(3))])
        settle(client)
        XCTAssertEqual(log.lines, ["[]", "added a -1 0 [pending]"])
        XCTAssertFalse(token.isActive)
        XCTAssertEqual(gone.value, 1)
        token.remove()
        settle(client)
        XCTAssertEqual(gone.value, 1)
    }

    /// A callback may write (re-entrancy): each write's event follows in order, nothing deadlocks.
    func testCallbackThatWrites() throws {
        let client = EmberClient()
        defer { client.close() }
        let log = EventLog()
        let errors = Box(0)
        _ = try client.listen(ordered("c")) { e in
            log.append(e)
            guard case .snapshot(let s) = e, s.documents.count < 4 else { return }
            do { try client.write([setM("c/d\(s.documents.count)", n(Int64(s.documents.count)))]) } catch { errors.value += 1 }
        }
        // Each event's write raises the next one: wait for the chain (bounded) rather than for a
        // fixed number of settle rounds, then let the acknowledgements land.
        log.wait(for: 5)
        settle(client)
        XCTAssertEqual(log.lines, ["[]", "added d0 -1 0 [pending]", "added d1 -1 1 [pending]",
                                   "added d2 -1 2 [pending]", "added d3 -1 3 [pending]"])
        XCTAssertEqual(errors.value, 0)
        log.assertConsistent(includeMetadata: false)
    }

    /// A callback may read (a blocking round trip to the worker) and listen.
    func testCallbackThatReadsAndListens() throws {
        let (c1, c2) = twoClients()
        defer { c1.close(); c2.close() }
        XCTAssertNil(writeAndWait(c2, [setM("c/a", n(1))]))
        let inner = EventLog()
        let reads = Box<[String]>([])
        _ = try c1.listen(collection("c")) { _ in
            let count = (try? c1.count(collection("c"))) ?? -1
            let cached = (try? c1.getDocuments(collection("c"), source: .cache)).map(ids) ?? []
            reads.mutate { $0.append("\(count) \(cached)") }
            _ = try? c1.record(collection("c"), inner)
        }
        settle(c1)
        XCTAssertEqual(reads.value, ["1 [\"a\"]"])
        XCTAssertEqual(inner.lines, ["added a -1 0 []"])
    }
}

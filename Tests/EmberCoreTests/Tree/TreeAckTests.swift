import EmberConcurrency
import XCTest
import EmberModel
import EmberCore
@testable import EmberBackend
import EmberStorage

/// An acknowledged write's data stays visible (Firebase keeps it in the client's cache): an
/// observer that starts right after a write, before its acknowledgement, sees each child added
/// once, never a removal and a re-add, never a null value, when the acknowledgement carries no
/// ops (the backend had no listen of this client there when it applied the write) and the
/// listen's answer comes after it. Also with a second write, and with the network switched off
/// and on. The backend's queue is suspended to hold the acknowledgement back deterministically.
final class TreeAckTests: XCTestCase {
    var client: EmberClient!
    private var suspended = false
    override func setUp() { client = EmberClient() }
    override func tearDown() {
        resumeBackend()
        client.close()
    }

    /// Holds every message to the backend (writes, listens) until `resumeBackend`.
    private func suspendBackend() { client.backend.queue.suspend(); suspended = true }
    private func resumeBackend() { if suspended { suspended = false; client.backend.queue.resume() } }

    /// Events that must never appear: a removal, or a value event of null.
    private func assertNoFlicker(_ log: [String], file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertFalse(log.contains { $0.hasPrefix("removed") }, "no child_removed: \(log)", file: file, line: line)
        XCTAssertFalse(log.contains("value null"), "no null value: \(log)", file: file, line: line)
        let added = log.filter { $0.hasPrefix("added") }.map { $0.split(separator: " ")[1] }
        XCTAssertEqual(added.count, Set(added).count, "each child added once: \(log)", file: file, line: line)
    }

    /// Waits for write completions posted to the event thread (works offline, unlike `settle`).
    private func waitAcks(_ sem: EmberConcurrency.Semaphore, _ n: Int, file: StaticString = #filePath, line: UInt = #line) {
        for _ in 0..<n { XCTAssertTrue(sem.wait(seconds: 5), "acknowledged", file: file, line: line) }
        client.events.drain()
    }

    func testObserveRightAfterAnUnacknowledgedSet() throws {
        suspendBackend()
        try client.treeWrite([setOp("l", ["a": 1, "b": 2])])
        let log = TreeLog()
        try client.watch("l", TreeQuery(), [.childAdded, .childRemoved, .value], into: log)
        let expected = ["added a prev=nil", "added b prev=a", "value a,b"]
        XCTAssertEqual(log.wait(for: 3), expected, "raised at once from the pending write")
        resumeBackend()              // the ack (no ops), then the listen's answer
        try client.settle()
        XCTAssertEqual(client.treePendingWriteCount, 0)
        XCTAssertEqual(log.all, expected)
        assertNoFlicker(log.all)
        // The listen is live: a later change arrives once.
        _ = log.take()
        let other = EmberClient(persistence: MemoryPersistence(), backend: client.backend)
        defer { other.close() }
        try other.treeWrite([setOp("l/c", 3)])
        try other.settle()
        XCTAssertEqual(log.wait(for: 2), ["added c prev=b", "value a,b,c"])
    }

    /// Without holding the backend back: the ack lands before or after the observer starts;
    /// either way the events are the same.
    func testObserveRightAfterASetWhateverTheTiming() throws {
        for i in 0..<30 {
            try client.treeWrite([setOp("r\(i)", ["a": 1, "b": 2])])
            let log = TreeLog()
            let tokens = try client.watch("r\(i)", TreeQuery(), [.childAdded, .childRemoved, .value], into: log)
            log.wait(for: 3)
            try client.settle()
            XCTAssertEqual(log.all, ["added a prev=nil", "added b prev=a", "value a,b"], "round \(i)")
            tokens.forEach { $0.remove() }
        }
    }

    /// Write 1 is acknowledged before the observer starts (nothing listened: the client forgot
    /// it), write 2 after: the child write 2 set is raised at once and kept through its ack,
    /// the rest arrives with the listen's answer.
    func testOneWriteAckedBeforeTheObserverAndOneAfter() throws {
        try client.treeWrite([setOp("l", ["a": 1, "b": 2])])
        try client.settle()
        suspendBackend()
        try client.treeWrite([setOp("l/c", 3)])
        let log = TreeLog()
        try client.watch("l", TreeQuery(), [.childAdded, .childRemoved, .value], into: log)
        XCTAssertEqual(log.wait(for: 1), ["added c prev=nil"])
        resumeBackend()
        try client.settle()
        XCTAssertEqual(log.all, ["added c prev=nil", "added a prev=nil", "added b prev=a", "value a,b,c"])
        assertNoFlicker(log.all)
        XCTAssertEqual(try client.treeGet(tp("l")).value, tv(["a": 1, "b": 2, "c": 3]))
    }

    /// Both writes pending when the observer starts, each acknowledged without ops.
    func testTwoWritesBothAckedAfterTheObserver() throws {
        suspendBackend()
        try client.treeWrite([setOp("l", ["a": 1, "b": 2])])
        try client.treeWrite([setOp("l/c", 3), setOp("l/a", nil)])
        let log = TreeLog()
        try client.watch("l", TreeQuery(), [.childAdded, .childRemoved, .childChanged, .value], into: log)
        let expected = ["added b prev=nil", "added c prev=b", "value b,c"]
        XCTAssertEqual(log.wait(for: 3), expected)
        resumeBackend()
        try client.settle()
        XCTAssertEqual(log.all, expected)
        assertNoFlicker(log.all)
    }

    /// An observer below the written path (the ack's data is cut to it) and one above it.
    func testObserversBelowAndAboveTheWrittenPath() throws {
        suspendBackend()
        try client.treeWrite([setOp("p/l", ["a": ["x": 1], "b": ["x": 2]])])
        let below = TreeLog(), above = TreeLog()
        try client.watch("p/l/a", TreeQuery(), [.childAdded, .childRemoved, .value], into: below)
        try client.watch("p", TreeQuery(), [.childAdded, .childRemoved, .value], into: above)
        XCTAssertEqual(below.wait(for: 2), ["added x prev=nil", "value x"])
        XCTAssertEqual(above.wait(for: 1), ["added l prev=nil"], "p is not known whole: no value yet")
        resumeBackend()
        try client.settle()
        XCTAssertEqual(below.all, ["added x prev=nil", "value x"])
        XCTAssertEqual(above.all, ["added l prev=nil", "value l"])
        assertNoFlicker(below.all)
        assertNoFlicker(above.all)
    }

    /// Sent online, then the network is switched off before the ack arrives (so the listen is
    /// never sent): the data stays while offline and when the listen's answer comes online.
    func testAckArrivesWhileOfflineThenOnline() throws {
        let acks = EmberConcurrency.Semaphore()
        suspendBackend()
        try client.treeWrite([setOp("l", ["a": 1, "b": 2])]) { _ in acks.signal() }
        try client.disableNetwork()
        let log = TreeLog()
        try client.watch("l", TreeQuery(), [.childAdded, .childRemoved, .value], into: log)
        let expected = ["added a prev=nil", "added b prev=a", "value a,b"]
        XCTAssertEqual(log.wait(for: 3), expected)
        resumeBackend()
        waitAcks(acks, 1)
        client.backend.flush()
        client.events.drain()
        XCTAssertEqual(log.all, expected, "acknowledged offline: still shown")
        XCTAssertEqual(client.treePendingWriteCount, 0)
        try client.enableNetwork()
        try client.settle()
        XCTAssertEqual(log.all, expected)
        assertNoFlicker(log.all)
    }

    /// Issue 27 (the C test removal_inside_first_due_callback failed at random): a set at `p`,
    /// a value observer at `p` (shown at once from the pending set, the listen sent), the set's
    /// acknowledgement, and only then a second view at `p` (ordered by value), before the listen's
    /// answer. The acknowledged set is the backend's whole state at `p`, so the new view starts
    /// complete from it and the next write raises child_moved (it started empty and raised only
    /// child_added for the written children: the child_moved observer got nothing).
    func testViewAddedAfterTheAckBeforeTheListensAnswer() throws {
        let acks = EmberConcurrency.Semaphore(), release = EmberConcurrency.Semaphore()
        let keeper = TreeLog(), log = TreeLog()
        defer { release.signal() }
        try whileBackendHeld(client.backend) {
            // The backend's queue: the write, a hold, the listen.
            try client.treeWrite([setOp("p", ["a": 1, "b": 2, "c": 3])]) { _ in acks.signal() }
            client.backend.queue.async { release.wait() }
            try client.watch("p", TreeQuery(), [.value], into: keeper)
            XCTAssertEqual(keeper.wait(for: 1), ["value a,b,c"], "shown from the pending set")
        }
        waitAcks(acks, 1)
        XCTAssertEqual(client.treePendingWriteCount, 0)
        try client.watch("p", try TreeQuery().orderBy(.value), [.childAdded, .childMoved, .value], into: log)
        XCTAssertEqual(log.wait(for: 4), ["added a prev=nil", "added b prev=a", "added c prev=b", "value a,b,c"],
                       "starts from the acknowledged data")
        _ = log.take()
        try client.treeWrite([setOp("p/a", 10), setOp("p/b", 20)])
        XCTAssertEqual(log.wait(for: 3), ["moved a prev=c", "moved b prev=a", "value c,a,b"])
        release.signal()
        try client.settle()
        XCTAssertEqual(log.all, ["moved a prev=c", "moved b prev=a", "value c,a,b"], "the listen's answer changes nothing")
        XCTAssertEqual(keeper.all, ["value a,b,c", "value a,b,c"])
    }

    /// Written and observed offline, then online: the listen goes before the write.
    func testWriteAndObserveOfflineThenOnline() throws {
        try client.treeWrite([setOp("l", ["a": 1])])
        try client.settle()
        try client.disableNetwork()
        try client.treeWrite([setOp("l", ["a": 1, "b": 2])])
        try client.treeWrite([setOp("l/c", 3)])
        let log = TreeLog()
        try client.watch("l", TreeQuery(), [.childAdded, .childRemoved, .value], into: log)
        let expected = ["added a prev=nil", "added b prev=a", "added c prev=b", "value a,b,c"]
        XCTAssertEqual(log.wait(for: 4), expected)
        try client.enableNetwork()
        try client.settle()
        XCTAssertEqual(log.all, expected)
        assertNoFlicker(log.all)
        XCTAssertEqual(client.backend.readTree(tp("l")), tv(["a": 1, "b": 2, "c": 3]))
    }
}

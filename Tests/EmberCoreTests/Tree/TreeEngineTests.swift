import EmberConcurrency
import XCTest
import EmberModel
import EmberCore
import EmberStorage

/// The client tree engine through EmberClient: attach, child and value events in order with
/// previous keys (docs/semantics.md 20), windows (21), multi-path atomicity, network, removal.
final class TreeEngineTests: XCTestCase {
    var client: EmberClient!
    override func setUp() { client = EmberClient() }
    override func tearDown() { client.close() }

    func seedList() throws {
        try client.treeWrite([setOp("list", ["a": ["n": 3], "b": ["n": 1], "c": ["n": 2]])])
        try client.settle()
    }

    func testAttachRaisesChildAddedPerChildThenValue() throws {
        try seedList()
        let log = TreeLog()
        try client.watch("list", TreeQuery(), [.childAdded, .value], into: log)
        XCTAssertEqual(log.wait(for: 4), ["added a prev=nil", "added b prev=a", "added c prev=b", "value a,b,c"])
    }

    func testAddChangeMoveRemoveByChild() throws {
        try seedList()
        let log = TreeLog()
        let q = try TreeQuery().orderBy(.child(tp("n")))
        try client.watch("list", q, allChildEvents + [.value], into: log)
        XCTAssertEqual(log.wait(for: 4), ["added b prev=nil", "added c prev=b", "added a prev=c", "value b,c,a"])
        _ = log.take()
        try client.treeWrite([setOp("list/d", ["n": 0])])
        XCTAssertEqual(log.wait(for: 2), ["added d prev=nil", "value d,b,c,a"])
        _ = log.take()
        // b moves to the end.
        try client.treeWrite([setOp("list/b/n", 10)])
        XCTAssertEqual(log.wait(for: 3), ["moved b prev=a", "changed b prev=a", "value d,c,a,b"])
        _ = log.take()
        // A change that does not touch the ordered value: changed only.
        try client.treeWrite([setOp("list/c/title", "x")])
        XCTAssertEqual(log.wait(for: 2), ["changed c prev=d", "value d,c,a,b"])
        _ = log.take()
        try client.treeWrite([setOp("list/a", nil)])
        XCTAssertEqual(log.wait(for: 2), ["removed a prev=nil", "value d,c,b"])
    }

    func testMultiPathUpdateIsOneValueEvent() throws {
        try seedList()
        let log = TreeLog()
        try client.watch("list", TreeQuery(), [.value, .childChanged], into: log)
        log.wait(for: 1)
        _ = log.take()
        try client.treeWrite([setOp("list/a/n", 5), setOp("list/b/n", 6), setOp("list/e", ["n": 1])])
        try client.settle()
        XCTAssertEqual(log.all, ["changed a prev=nil", "changed b prev=a", "value a,b,c,e"])
        XCTAssertEqual(log.all.filter { $0.hasPrefix("value") }.count, 1)
    }

    func testLimitToFirstRefillsWhenAChildLeaves() throws {
        try seedList()   // by n: b=1 c=2 a=3
        let log = TreeLog()
        let q = try TreeQuery().orderBy(.child(tp("n"))).limit(2, .first)
        try client.watch("list", q, [.childAdded, .childRemoved, .value], into: log)
        XCTAssertEqual(log.wait(for: 3), ["added b prev=nil", "added c prev=b", "value b,c"])
        _ = log.take()
        try client.treeWrite([setOp("list/b", nil)])
        XCTAssertEqual(log.wait(for: 3), ["removed b prev=nil", "added a prev=c", "value c,a"])
        _ = log.take()
        try client.treeWrite([setOp("list/z", ["n": 0])])
        XCTAssertEqual(log.wait(for: 3), ["removed a prev=nil", "added z prev=nil", "value z,c"])
    }

    func testLimitToLastKeepsTheLastChildren() throws {
        try seedList()
        let log = TreeLog()
        let q = try TreeQuery().orderBy(.child(tp("n"))).limit(2, .last)
        try client.watch("list", q, [.childAdded, .childRemoved, .childMoved, .value], into: log)
        XCTAssertEqual(log.wait(for: 3), ["added c prev=nil", "added a prev=c", "value c,a"])
        _ = log.take()
        try client.treeWrite([setOp("list/b/n", 9)])
        XCTAssertEqual(log.wait(for: 3), ["removed c prev=nil", "added b prev=a", "value a,b"])
        _ = log.take()
        try client.treeWrite([setOp("list/b/n", -1)])     // b drops out, c comes back
        XCTAssertEqual(log.wait(for: 3), ["removed b prev=nil", "added c prev=nil", "value c,a"])
    }

    func testNetworkOffOn() throws {
        try seedList()
        let log = TreeLog()
        try client.watch("list", TreeQuery(), [.childAdded, .childChanged], into: log)
        log.wait(for: 3)
        _ = log.take()
        try client.disableNetwork()
        try client.treeWrite([setOp("list/d", ["n": 4])])
        XCTAssertEqual(log.wait(for: 1), ["added d prev=c"])
        XCTAssertEqual(client.treePendingWriteCount, 1)
        XCTAssertTrue(client.backend.readTree(tp("list/d")).isNull)
        try client.enableNetwork()
        try client.settle()
        XCTAssertEqual(client.treePendingWriteCount, 0)
        XCTAssertEqual(client.backend.readTree(tp("list/d/n")), .int(4))
        XCTAssertEqual(log.all, ["added d prev=c"])
    }

    func testSecondClientSeesChanges() throws {
        try seedList()
        let other = EmberClient(persistence: MemoryPersistence(), backend: client.backend)
        defer { other.close() }
        let log = TreeLog()
        try other.watch("list", TreeQuery(), [.childAdded, .childRemoved], into: log)
        log.wait(for: 3)
        _ = log.take()
        try client.treeWrite([setOp("list/a", nil)])
        XCTAssertEqual(log.wait(for: 1), ["removed a prev=nil"])
    }

    func testCallbackRemovingItselfGetsNoMoreEvents() throws {
        try seedList()
        let log = TreeLog()
        var token: ListenerToken?
        let lock = Lock()
        let (_, t) = try client.treeObserve(tp("list"), type: .childAdded) { e in
            log.record(e)
            if case .event(_, let s, _) = e, s.key == "z" { lock.withLock { token }!.remove() }
        }
        lock.withLock { token = t }
        try client.settle()
        try client.treeWrite([setOp("list/z", 1)])
        try client.treeWrite([setOp("list/y", 1)])
        try client.settle()
        XCTAssertEqual(log.all, ["added a prev=nil", "added b prev=a", "added c prev=b", "added z prev=c"])
        t.remove()
    }

    func testWritesBeforeTheBackendAnswersRaiseChildEventsAtOnce() throws {
        try seedList()
        let other = EmberClient(persistence: MemoryPersistence(), backend: client.backend)
        defer { other.close() }
        try other.disableNetwork()                                  // the listen stays unanswered
        try other.treeWrite([setOp("list/p1", ["n": 9])])          // known whole before observing
        let log = TreeLog()
        try other.watch("list", TreeQuery(), [.childAdded, .childRemoved, .value], into: log)
        XCTAssertEqual(log.wait(for: 1), ["added p1 prev=nil"])
        try other.treeWrite([setOp("list/p2", ["n": 10])])
        try other.treeWrite([setOp("list/a/n", 7)])                 // a is not known whole: nothing
        XCTAssertEqual(log.wait(for: 2), ["added p1 prev=nil", "added p2 prev=p1"])
        try other.enableNetwork()                                   // complete: the rest, then the value
        XCTAssertEqual(Array(log.wait(for: 6)[2...]), ["added a prev=nil", "added b prev=a", "added c prev=b", "value a,b,c,p1,p2"])
    }

    func testValueOfALeafAndOfALocationWithoutData() throws {
        let log = TreeLog()
        try client.watch("leaf", TreeQuery(), [.value], into: log)
        XCTAssertEqual(log.wait(for: 1), ["value null"])
        try client.treeWrite([setOp("leaf", 5)])
        try client.treeWrite([setOp("leaf", 5)])                    // unchanged: no event
        try client.treeWrite([setOp("leaf", "x")])
        try client.settle()
        XCTAssertEqual(log.all, ["value null", "value 5", "value \"x\""])
    }

    func testAFilteredQueryOnALeafShowsNothing() throws {
        try client.treeWrite([setOp("leaf2", 5)])
        try client.settle()
        let log = TreeLog()
        try client.watch("leaf2", try TreeQuery().limit(2, .first), [.value], into: log)
        try client.watch("leaf2", try TreeQuery().orderBy(.value), [.value], into: log)
        XCTAssertEqual(log.wait(for: 2).sorted(), ["value 5", "value null"])
    }
}

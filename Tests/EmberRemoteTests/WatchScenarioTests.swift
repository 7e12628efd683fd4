@testable import EmberCore
import EmberModel
import EmberStorage
import Foundation
import ScriptedFirestore
import XCTest

/// Watch scenarios played by a scripted Firestore server, each checking what the Firebase SDKs'
/// spec scenarios (firebase-js-sdk `test/unit/specs`) require of a client: when an event is
/// raised, with which documents and metadata, and what the client sends. Each test names the
/// rule it holds; the numbers are the items of the Firebase watch rules in docs/remote.md.
final class WatchScenarioTests: XCTestCase {
    private var s: WatchScenario!
    override func setUpWithError() throws { s = try WatchScenario() }
    override func tearDown() { s?.close() }

    /// Listens to `c` and plays `a`=1 into it until the target is current at 1000.
    private func syncedListen(includeMetadataChanges: Bool = true) throws -> (Events, ListenerToken, Int32) {
        let (events, token) = try s.listen(collection("c"), includeMetadataChanges: includeMetadataChanges)
        let t = try s.added()
        s.server.send(.added(t), .doc("c/a", version: 1000, ["v": 1], in: [t]), .current(t, token: "t1"), .global(1000))
        events.wait { $0.count == 1 }
        XCTAssertEqual(events.snapshots.map(brief), ["[a=1] cache=false pending=false"])
        return (events, token, t)
    }

    // MARK: listens and global snapshots

    func testResultIsRaisedOnceAtTheGlobalSnapshotAfterCurrent() throws {
        let (events, _, _) = try syncedListen()
        s.settle()
        XCTAssertEqual(events.snapshots.count, 1)
    }

    /// 5. One global snapshot raises one event per query: a change to a delivered target and a
    /// second target's first result in the same snapshot.
    func testOneGlobalSnapshotRaisesOneEventPerQuery() throws {
        let (first, _, t1) = try syncedListen()
        let (second, _) = try s.listen(collection("c").filter(.field(FieldFilter(field: fp("v"), op: .greaterThan, value: .int(0)))))
        second.wait { $0.count == 1 }   // a=1 is cached: raised from the cache at once
        let t2 = try s.added()
        s.server.send(.added(t2), .doc("c/b", version: 2000, ["v": 2], in: [t1, t2]),
                      .doc("c/a", version: 1000, ["v": 1], in: [t2]), .current(t2, token: "t2"), .global(2000))
        first.wait { $0.count == 2 }
        second.wait { $0.count == 2 }
        s.settle()
        XCTAssertEqual(first.snapshots.map(brief), ["[a=1] cache=false pending=false", "[a=1 b=2] cache=false pending=false"])
        XCTAssertEqual(second.snapshots.map(brief), ["[a=1] cache=true pending=false", "[a=1 b=2] cache=false pending=false"])
    }

    /// 7. A global snapshot raises what a target not yet current holds, from the cache.
    func testGlobalSnapshotRaisesTargetNotCurrentAsFromCache() throws {
        let (events, _) = try s.listen(collection("c"))
        let t = try s.added()
        s.server.send(.added(t), .doc("c/a", version: 1000, ["v": 1], in: [t]), .global(1000))
        events.wait { $0.count == 1 }
        s.server.send(.current(t, token: "t1"), .global(2000))
        events.wait { $0.count == 2 }
        XCTAssertEqual(events.snapshots.map(brief), ["[a=1] cache=true pending=false", "[a=1] cache=false pending=false"])
    }

    /// 7. Listening again to a query synced before raises its cached result at once, from the
    /// cache, also when it is empty; the target resumes with its token.
    func testRelistenRaisesCachedResultAtOnceEvenEmpty() throws {
        let (events, token) = try s.listen(collection("d"))
        let t = try s.added()
        s.server.send(.added(t), .current(t, token: "t1"), .global(1000))
        events.wait { $0.count == 1 }
        token.remove()
        XCTAssertEqual(try s.server.nextListen(), .remove(targetId: t))
        let (again, _) = try s.listen(collection("d"))
        again.wait { $0.count == 1 }
        XCTAssertEqual(again.snapshots.map(brief), ["[] cache=true pending=false"])
        guard case .add(_, "d", let resume, _) = try s.server.nextListen() else { return XCTFail("expected the target again") }
        XCTAssertEqual(resume, "t1")
    }

    // MARK: writes

    /// 1. An acknowledgement raises nothing: the document stays pending until watch sends a
    /// version at or after the commit; an older watch version is ignored.
    func testWriteStaysPendingUntilWatchCatchesUp() throws {
        let (events, _, t) = try syncedListen()
        try s.client.write([setM("c/a", ["v": .int(2)])])
        events.wait { $0.count == 2 }
        XCTAssertEqual(try s.server.nextWrite(), .writes(["c/a"]))
        try s.server.ack(version: 3000)
        s.server.send(.doc("c/a", version: 2000, ["v": 7], in: [t]), .global(2000))
        s.settle()
        XCTAssertEqual(events.snapshots.map(brief), ["[a=1] cache=false pending=false", "[a=2*] cache=false pending=true"])
        s.server.send(.doc("c/a", version: 3000, ["v": 2], in: [t]), .global(3000))
        events.wait { $0.count == 3 }
        XCTAssertEqual(events.snapshots.last.map(brief), "[a=2] cache=false pending=false")
    }

    /// 9. Disabling the network closes both streams; the Write stream ends with an empty request.
    func testDisableNetworkClosesStreams() throws {
        let (_, _, _) = try syncedListen()
        try s.client.write([setM("c/x", ["v": .int(1)])])
        XCTAssertEqual(try s.server.nextWrite(), .writes(["c/x"]))
        try s.server.ack(version: 2000)
        s.settle()
        try s.client.disableNetwork()
        XCTAssertEqual(try s.server.nextWrite(), .empty)
        XCTAssertEqual(try s.server.nextWrite(), .closed)
        XCTAssertEqual(try s.server.nextListen(), .closed)
    }

    /// 9. A limit query and its limit-to-last mirror (the same target) share one target.
    func testLimitAndLimitToLastShareATarget() throws {
        let q = try collection("c").order(by: fp("v"), descending: true).limit(2)
        let mirror = try collection("c").order(by: fp("v")).limit(2, type: .last)
        _ = try s.listen(q)
        _ = try s.added()
        _ = try s.listen(mirror)
        s.settle(0.5)
        XCTAssertEqual(s.server.pendingListens(), [])
    }

    // MARK: deletes, filters, limbo

    /// 3. A DocumentDelete removes a document the view had from the cache.
    func testDocumentDeleteRemovesCachedDocument() throws {
        let (events, token, t) = try syncedListen()
        token.remove()
        XCTAssertEqual(try s.server.nextListen(), .remove(targetId: t))
        let (again, _) = try s.listen(collection("c"))
        let t2 = try s.added()
        again.wait { $0.count == 1 }
        s.server.send(.added(t2), .deleted("c/a", readTime: 2000, out: [t2]), .current(t2, token: "t2"), .global(2000))
        again.wait { $0.count == 2 }
        XCTAssertEqual(again.snapshots.map(brief), ["[a=1] cache=true pending=false", "[] cache=false pending=false"])
        XCTAssertEqual(s.server.unaryCalls, [])
        _ = events
    }

    /// 4. A single-document target whose existence filter counts 0 deletes the document at once.
    func testDocumentTargetFilterZeroDeletes() throws {
        let q = Query(document: key("c/a"))
        let (events, _) = try s.listen(q)
        let t = try s.added()
        s.server.send(.added(t), .doc("c/a", version: 1000, ["v": 1], in: [t]), .current(t, token: "t1"), .global(1000))
        events.wait { $0.count == 1 }
        s.server.send(.filter(t, count: 0), .global(2000))
        events.wait { $0.count == 2 }
        XCTAssertEqual(events.snapshots.last.map(brief), "[] cache=false pending=false")
    }

    /// 4. A query target whose existence filter differs: fromCache while the target is re-run.
    func testFilterMismatchTurnsFromCacheAndRelistens() throws {
        let (events, _, t) = try syncedListen()
        s.server.send(.filter(t, count: 2), .global(2000))
        events.wait { $0.count == 2 }
        XCTAssertEqual(events.snapshots.last.map(brief), "[a=1] cache=true pending=false")
        XCTAssertEqual(try s.server.nextListen(), .remove(targetId: t))
        guard case .add(let t2, "c", nil, _) = try s.server.nextListen() else { return XCTFail("expected the target re-run") }
        s.server.send(.removed(t), .added(t2), .doc("c/a", version: 1000, ["v": 1], in: [t2]), .doc("c/b", version: 1500, ["v": 2], in: [t2]),
                      .current(t2, token: "t3"), .global(3000))
        events.wait { $0.count == 3 }
        XCTAssertEqual(events.snapshots.last.map(brief), "[a=1 b=2] cache=false pending=false")
    }

    /// 4. A mismatch the filter's bloom filter explains: the documents it lacks go to limbo, the
    /// target goes on (no re-run); a resume tells the server the count it expects.
    func testFilterMismatchExplainedByTheBloomFilter() throws {
        let (events, _, t) = try syncedListen()
        s.server.send(.doc("c/b", version: 1500, ["v": 2], in: [t]), .global(1500, token: "t2"))
        events.wait { $0.count == 2 }
        s.server.send(.filter(t, count: 1, bloomOf: ["c/b"]), .global(2000))
        guard case .add(let limbo, "c/a", nil, _) = try s.server.nextListen() else { return XCTFail("expected a limbo target") }
        events.wait { $0.count == 3 }
        XCTAssertEqual(events.snapshots.last.map(brief), "[a=1 b=2] cache=true pending=false")
        s.server.send(.added(limbo), .current(limbo, token: "l1"), .global(3000))
        events.wait { $0.count == 4 }
        XCTAssertEqual(events.snapshots.last.map(brief), "[b=2] cache=false pending=false")
        XCTAssertEqual(try s.server.nextListen(), .remove(targetId: limbo))
        s.server.failListen()
        guard case .add(let resumed, "c", "t2", _) = try s.server.nextListen() else { return XCTFail("expected the resumed target") }
        XCTAssertEqual(s.server.expectedCount(of: resumed), 1, "the keys the server holds in it")
    }

    /// 2. A cached document the server's result does not confirm is in limbo: the result is
    /// fromCache while a document target resolves it; the document target ends with it.
    func testLimboDocumentIsResolvedByADocumentTarget() throws {
        _ = try syncedListen()
        // A second query, new to the server: a=1 matches it in the cache.
        let (second, _) = try s.listen(collection("c").filter(.field(FieldFilter(field: fp("v"), op: .greaterThan, value: .int(0)))))
        second.wait { $0.count == 1 }
        let t2 = try s.added()
        // The server's result: current and empty. a is not confirmed: it is in limbo.
        s.server.send(.added(t2), .current(t2, token: "t2"), .global(2000))
        guard case .add(let limbo, "c/a", nil, _) = try s.server.nextListen() else { return XCTFail("expected a limbo target") }
        s.settle()
        XCTAssertEqual(second.snapshots.map(brief), ["[a=1] cache=true pending=false"])
        // The document target is current without the document: it does not exist.
        s.server.send(.added(limbo), .current(limbo, token: "l1"), .global(3000))
        second.wait { $0.count == 2 }
        XCTAssertEqual(second.snapshots.last.map(brief), "[] cache=false pending=false")
        XCTAssertEqual(try s.server.nextListen(), .remove(targetId: limbo))
        XCTAssertEqual(s.server.unaryCalls, [])
    }

    /// 2. A limbo document the server still holds (it left the query) is resolved with its new state.
    func testLimboDocumentThatChangedLeavesTheView() throws {
        let (first, _, t1) = try syncedListen()
        let (second, _) = try s.listen(collection("c").filter(.field(FieldFilter(field: fp("v"), op: .greaterThan, value: .int(0)))))
        let t2 = try s.added()
        s.server.send(.added(t2), .current(t2, token: "t2"), .global(2000))
        guard case .add(let limbo, "c/a", nil, _) = try s.server.nextListen() else { return XCTFail("expected a limbo target") }
        s.server.send(.added(limbo), .doc("c/a", version: 1500, ["v": 0], in: [t1, limbo]), .current(limbo, token: "l1"), .global(3000))
        second.wait { $0.count == 2 }
        first.wait { $0.count == 2 }
        XCTAssertEqual(second.snapshots.map(brief), ["[a=1] cache=true pending=false", "[] cache=false pending=false"])
        XCTAssertEqual(first.snapshots.last.map(brief), "[a=0] cache=false pending=false")
        XCTAssertEqual(try s.server.nextListen(), .remove(targetId: limbo))
    }

    // MARK: online state

    /// 6. One stream failure raises nothing (online state unknown); the resumed target is current again.
    func testOneStreamFailureRaisesNothing() throws {
        let (events, _, _) = try syncedListen()
        s.server.failListen()
        guard case .add(let t2, "c", "t1", _) = try s.server.nextListen() else { return XCTFail("expected the resumed target") }
        s.server.send(.added(t2), .current(t2, token: "t2"), .global(2000))
        s.settle()
        XCTAssertEqual(events.snapshots.map(brief), ["[a=1] cache=false pending=false"])
    }

    /// 6. A second failure before the stream answered again: offline, the result from the cache.
    func testSecondStreamFailureGoesOffline() throws {
        let (events, _, _) = try syncedListen()
        s.server.failListen()
        _ = try s.server.nextListen()
        s.server.failListen()
        events.wait { $0.count == 2 }
        XCTAssertEqual(events.snapshots.last.map(brief), "[a=1] cache=true pending=false")
    }

    /// 6. A server that does not answer: offline once the online state has been unknown for its
    /// timeout (the listener raises the cache's empty result); online again at its first answer.
    func testUnknownOnlineStateTimesOutToOffline() throws {
        let saved = SyncEngine.onlineStateTimeout.current
        SyncEngine.onlineStateTimeout.withLockedValue { $0 = 0.3 }
        defer { SyncEngine.onlineStateTimeout.withLockedValue { $0 = saved } }
        let (events, _) = try s.listen(collection("c"))
        let t = try s.added()
        events.wait { $0.count == 1 }
        XCTAssertEqual(events.snapshots.map(brief), ["[] cache=true pending=false"])
        s.server.send(.added(t), .doc("c/a", version: 1000, ["v": 1], in: [t]), .current(t, token: "t1"), .global(1000))
        events.wait { $0.count == 2 }
        XCTAssertEqual(events.snapshots.last.map(brief), "[a=1] cache=false pending=false")
    }

    /// 8. A target-less NO_CHANGE's resume token applies to every target: a resume sends it.
    func testGlobalResumeTokenIsWhatAResumeSends() throws {
        _ = try syncedListen()
        s.server.send(.global(2000, token: "g2"))
        s.settle()
        s.server.failListen()
        guard case .add(_, "c", let token, _) = try s.server.nextListen() else { return XCTFail("expected the resumed target") }
        XCTAssertEqual(token, "g2")
    }
}

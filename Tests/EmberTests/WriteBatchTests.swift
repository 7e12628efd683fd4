import XCTest
import Foundation
import Ember

/// WriteBatch: up to 500 writes applied atomically (locally at once, at the backend together),
/// the whole batch refused when any write is invalid or rejected.
final class WriteBatchTests: XCTestCase {
    var db: Firestore!

    override func setUpWithError() throws { db = try openDB() }
    override func tearDown() { db.terminate(); db = nil }

    func testBatchAppliesEveryKindOfWrite() throws {
        seed(db, ["cities/SF": ["population": 1], "cities/LA": ["name": "LA"], "cities/DC": ["capital": true]])
        let b = db.batch()
        b.setData(["name": "New York City"], forDocument: db.document("cities/NYC"))
        b.updateData(["population": 1_000_000, "meta.updated": true], forDocument: db.document("cities/SF"))
        b.setData(["state": "CA"], forDocument: db.document("cities/LA"), merge: true)
        b.setData(["a": 1, "b": 2], forDocument: db.document("cities/MF"), mergeFields: ["a"])
        b.deleteDocument(db.document("cities/DC"))
        XCTAssertNil(waitError { b.commit(completion: $0) })
        XCTAssertSame(get(db.document("cities/NYC"))?.data(), ["name": "New York City"])
        XCTAssertSame(get(db.document("cities/SF"))?.data(), ["population": 1_000_000, "meta": ["updated": true]])
        XCTAssertSame(get(db.document("cities/LA"))?.data(), ["name": "LA", "state": "CA"])
        XCTAssertSame(get(db.document("cities/MF"))?.data(), ["a": 1])
        XCTAssertEqual(get(db.document("cities/DC"))?.exists, false)
    }

    func testChainedBatchAndAsyncCommit() throws {
        let b = db.batch()
            .setData(["v": 1], forDocument: db.document("c/a"))
            .setData(["v": 2], forDocument: db.document("c/b"))
            .updateData(["v": 3], forDocument: db.document("c/a"))
        try runAsync { try await b.commit() }.get()
        XCTAssertEqual(ids(db.collection("c")), ["a", "b"])
        XCTAssertEqual(get(db.document("c/a"))?.get("v") as? Int, 3, "later writes of a batch see the earlier ones")
    }

    func testBatchIsOneSnapshotForListeners() {
        let seen = Recorder<[String]>()
        let reg = db.collection("c").addSnapshotListener { s, _ in seen.append(s?.documents.map { $0.documentID } ?? []) }
        defer { reg.remove() }
        XCTAssertEqual(seen.wait(for: 1), [[]])
        let b = db.batch()
        for id in ["a", "b", "c", "d"] { b.setData(["v": id], forDocument: db.document("c/\(id)")) }
        b.commit()
        XCTAssertEqual(seen.wait(for: 2), [[], ["a", "b", "c", "d"]])
        XCTAssertNil(waitError { db.waitForPendingWrites(completion: $0) })
        set(db.document("c/e"), [:])
        XCTAssertEqual(seen.wait(for: 3).count, 3, "the batch was raised once (the ack is metadata only)")
    }

    func testAnInvalidWriteFailsTheWholeBatch() {
        let b = db.batch()
        b.setData(["v": 1], forDocument: db.document("c/a"))
        b.setData(["v": [[1]]], forDocument: db.document("c/b"))
        b.setData(["v": 3], forDocument: db.document("c/c"))
        XCTAssertEqual(code(waitError { b.commit(completion: $0) }), .invalidArgument)
        XCTAssertEqual(get(db.collection("c"))?.count, 0)
        let bad = db.batch()
        bad.setData(["v": 1], forDocument: db.document("c/a"))
        bad.deleteDocument(db.document("odd"))
        XCTAssertEqual(code(waitError { bad.commit(completion: $0) }), .invalidArgument)
        XCTAssertEqual(get(db.collection("c"))?.count, 0)
    }

    func testARejectedWriteLeavesNothingApplied() {
        seed(db, ["c/x": ["v": 0]])
        let seen = Recorder<[String]>()
        let reg = db.collection("c").addSnapshotListener { s, _ in seen.append(s?.documents.map { "\($0.documentID)=\($0.get("v") ?? "-")" } ?? []) }
        defer { reg.remove() }
        XCTAssertEqual(seen.wait(for: 1), [["x=0"]])
        let b = db.batch()
        b.setData(["v": 1], forDocument: db.document("c/a"))
        b.updateData(["v": 2], forDocument: db.document("c/missing"))
        b.updateData(["v": 3], forDocument: db.document("c/x"))
        XCTAssertEqual(code(waitError { b.commit(completion: $0) }), .notFound)
        XCTAssertEqual(get(db.collection("c"))?.documents.map { $0.documentID }, ["x"])
        XCTAssertEqual(get(db.document("c/x"))?.get("v") as? Int, 0)
        // Listeners saw the optimistic state and then its reversal.
        XCTAssertEqual(seen.wait(for: 3), [["x=0"], ["a=1", "x=3"], ["x=0"]])
    }

    func testMoreThan500WritesFail() {
        let b = db.batch()
        for i in 0..<501 { b.setData(["i": i], forDocument: db.document("c/d\(i)")) }
        let e = waitError { b.commit(completion: $0) }
        XCTAssertEqual(code(e), .invalidArgument)
        XCTAssertEqual(get(db.collection("c"))?.count, 0)
        let ok = db.batch()
        for i in 0..<500 { ok.setData(["i": i], forDocument: db.document("c/d\(i)")) }
        XCTAssertNil(waitError { ok.commit(completion: $0) })
        XCTAssertEqual(get(db.collection("c"))?.count, 500)
    }

    func testEmptyBatchAndCommitTwice() throws {
        let b = db.batch()
        XCTAssertNil(waitError { b.commit(completion: $0) })
        XCTAssertEqual(code(waitError { b.commit(completion: $0) }), .failedPrecondition)
        let c = db.batch()
        c.setData(["v": 1], forDocument: db.document("c/a"))
        try runAsync { try await c.commit() }.get()
        XCTAssertThrowsError(try runAsync { try await c.commit() }.get()) { XCTAssertEqual(code($0), .failedPrecondition) }
    }

    func testBatchCommittedOfflineIsAcknowledgedLater() {
        XCTAssertNil(waitError { db.disableNetwork(completion: $0) })
        let acked = Recorder<Error?>()
        let b = db.batch()
        b.setData(["v": 1], forDocument: db.document("c/a"))
        b.setData(["v": 2], forDocument: db.document("c/b"))
        b.commit { acked.append($0) }
        XCTAssertEqual(get(db.collection("c"), source: .cache)?.count, 2)
        XCTAssertEqual(acked.count, 0)
        XCTAssertNil(waitError { db.enableNetwork(completion: $0) })
        XCTAssertEqual(acked.wait(for: 1).count, 1)
        XCTAssertNil(acked.all[0])
        XCTAssertEqual(get(db.collection("c"), source: .server)?.count, 2)
    }
}

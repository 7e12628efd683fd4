import XCTest
import Foundation
import Ember

/// Snapshots: DocumentSnapshot (data, get, subscript, exists, reference, metadata),
/// QuerySnapshot (documents, count, isEmpty, metadata) and DocumentChange (type, oldIndex,
/// newIndex with UInt(NSNotFound) where there is none, docs/semantics.md 8).
final class SnapshotsTests: XCTestCase {
    var db: Firestore!

    override func setUpWithError() throws { db = try openDB() }
    override func tearDown() { db.terminate(); db = nil }

    let none = UInt(NSNotFound)

    func testDocumentSnapshotAccessors() {
        let ref = db.document("cities/SF")
        set(ref, ["name": "San Francisco", "m": ["a.b": 1, "c": ["d": true]], "list": [1, 2]])
        guard let s = get(ref) else { return XCTFail() }
        XCTAssertTrue(s.exists)
        XCTAssertEqual(s.documentID, "SF")
        XCTAssertEqual(s.reference.path, "cities/SF")
        XCTAssertEqual(s.get("name") as? String, "San Francisco")
        XCTAssertEqual(s["name"] as? String, "San Francisco")
        XCTAssertEqual(s.get("m.c.d") as? Bool, true)
        XCTAssertEqual(s.get(FieldPath(["m", "a.b"])) as? Int, 1)
        XCTAssertNil(s.get("m.a.b"))
        XCTAssertNil(s.get("nope"))
        XCTAssertNil(s.get("name.deeper"))
        XCTAssertNil(s.get("a..b"), "an invalid path reads as nil")
        XCTAssertNil(s.get(42))
        XCTAssertSame(s.get("list"), [1, 2] as [Any])
        XCTAssertEqual(s.metadata, get(ref)?.metadata)
        XCTAssertFalse(s.metadata.hasPendingWrites)
        XCTAssertFalse(s.metadata.isFromCache)

        guard let missing = get(db.document("cities/NONE")) else { return XCTFail() }
        XCTAssertFalse(missing.exists)
        XCTAssertNil(missing.data())
        XCTAssertNil(missing.get("name"))
        XCTAssertEqual(missing.documentID, "NONE")
        XCTAssertEqual(missing.reference.path, "cities/NONE")
    }

    func testQuerySnapshotAccessors() {
        seed(db, ["c/a": ["n": 1], "c/b": ["n": 2], "c/c": ["n": 3]])
        guard let s = get(db.collection("c").order(by: "n", descending: true)) else { return XCTFail() }
        XCTAssertEqual(s.count, 3)
        XCTAssertFalse(s.isEmpty)
        XCTAssertEqual(s.documents.map { $0.documentID }, ["c", "b", "a"])
        XCTAssertEqual(s.documents.map { $0.data()["n"] as? Int }, [3, 2, 1])
        XCTAssertTrue(s.documents.allSatisfy { $0.exists })
        XCTAssertEqual(s.documentChanges.map { $0.type }, [.added, .added, .added])
        XCTAssertEqual(s.documentChanges.map { $0.newIndex }, [0, 1, 2])
        XCTAssertEqual(s.documentChanges.map { $0.oldIndex }, [none, none, none])
        XCTAssertFalse(s.metadata.isFromCache)
        guard let empty = get(db.collection("nothing")) else { return XCTFail() }
        XCTAssertTrue(empty.isEmpty)
        XCTAssertEqual(empty.count, 0)
        XCTAssertEqual(empty.documentChanges.count, 0)
    }

    func summary(_ s: QuerySnapshot) -> [String] {
        s.documentChanges.map { c in
            let t = c.type == .added ? "added" : c.type == .modified ? "modified" : "removed"
            let o = c.oldIndex == none ? "-" : "\(c.oldIndex)"
            let n = c.newIndex == none ? "-" : "\(c.newIndex)"
            return "\(t) \(c.document.documentID) \(o) \(n)"
        }
    }

    func testDocumentChangeIndexes() {
        seed(db, ["c/a": ["n": 1], "c/b": ["n": 2], "c/c": ["n": 3]])
        let seen = Recorder<QuerySnapshot>()
        let reg = db.collection("c").order(by: "n").addSnapshotListener { s, _ in if let s { seen.append(s) } }
        defer { reg.remove() }
        XCTAssertEqual(summary(seen.wait(for: 1)[0]), ["added a - 0", "added b - 1", "added c - 2"])
        db.document("c/d").setData(["n": 0])
        XCTAssertEqual(summary(seen.wait(for: 2)[1]), ["added d - 0"])
        db.document("c/b").delete()
        XCTAssertEqual(summary(seen.wait(for: 3)[2]), ["removed b 2 -"])
        db.document("c/a").setData(["n": 10])   // moves from index 1 to the end
        XCTAssertEqual(summary(seen.wait(for: 4)[3]), ["modified a 1 2"])
        db.document("c/c").updateData(["x": true])   // modified in place
        XCTAssertEqual(summary(seen.wait(for: 5)[4]), ["modified c 1 1"])
        // One batch: removed, then added, then modified, indexes computed step by step.
        let b = db.batch()
        b.deleteDocument(db.document("c/d"))
        b.setData(["n": 5], forDocument: db.document("c/e"))
        b.setData(["n": 0], forDocument: db.document("c/a"))
        b.commit()
        let last = seen.wait(for: 6)[5]
        XCTAssertEqual(summary(last), ["removed d 0 -", "added e - 1", "modified a 2 0"])
        XCTAssertEqual(last.documents.map { $0.documentID }, ["a", "c", "e"])
        // Removed documents carry their last data.
        db.document("c/e").delete()
        let removed = seen.wait(for: 7)[6].documentChanges
        XCTAssertEqual(removed.count, 1)
        XCTAssertEqual(removed.first?.type, .removed)
        XCTAssertEqual(removed.first?.document.data()["n"] as? Int, 5)
    }

    func testReplayingChangesOnThePreviousListGivesTheNewList() {
        let q = db.collection("r").order(by: "v").limit(to: 5)
        let seen = Recorder<QuerySnapshot>()
        let reg = q.addSnapshotListener { s, _ in if let s { seen.append(s) } }
        defer { reg.remove() }
        seen.wait(for: 1)
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<80 {
            let ref = db.document("r/d\(Int.random(in: 0..<10, using: &rng))")
            switch Int.random(in: 0..<3, using: &rng) {
            case 0: ref.delete()
            case 1: ref.setData(["v": Int.random(in: 0..<20, using: &rng)])
            default: ref.setData(["v": Int.random(in: 0..<20, using: &rng), "w": Int.random(in: 0..<3, using: &rng)])
            }
        }
        db.document("r/sentinel").setData(["v": -1])
        seen.wait(until: { $0.documents.first?.documentID == "sentinel" })
        XCTAssertNil(waitError { db.waitForPendingWrites(completion: $0) })
        XCTAssertEqual(seen.all.last?.documents.map { $0.documentID }, ids(q))
        // Check every consecutive pair.
        let snaps = seen.all
        var list: [String] = []
        for s in snaps {
            for c in s.documentChanges {
                switch c.type {
                case .removed:
                    XCTAssertEqual(list[Int(c.oldIndex)], c.document.documentID)
                    XCTAssertEqual(c.newIndex, none)
                    list.remove(at: Int(c.oldIndex))
                case .added:
                    XCTAssertEqual(c.oldIndex, none)
                    list.insert(c.document.documentID, at: Int(c.newIndex))
                case .modified:
                    XCTAssertEqual(list[Int(c.oldIndex)], c.document.documentID)
                    list.remove(at: Int(c.oldIndex))
                    list.insert(c.document.documentID, at: Int(c.newIndex))
                }
            }
            XCTAssertEqual(list, s.documents.map { $0.documentID })
        }
    }

    func testMetadataChangesAndPendingWrites() {
        let seen = Recorder<QuerySnapshot>()
        let reg = db.collection("m").addSnapshotListener(includeMetadataChanges: true) { s, _ in if let s { seen.append(s) } }
        defer { reg.remove() }
        let first = seen.wait(for: 1)[0]
        XCTAssertFalse(first.metadata.isFromCache)
        XCTAssertFalse(first.metadata.hasPendingWrites)
        db.document("m/a").setData(["v": 1])
        let local = seen.wait(for: 2)[1]
        XCTAssertTrue(local.metadata.hasPendingWrites)
        XCTAssertTrue(local.documents[0].metadata.hasPendingWrites)
        XCTAssertEqual(summary(local), ["added a - 0"])
        let acked = seen.wait(for: 3)[2]
        XCTAssertFalse(acked.metadata.hasPendingWrites)
        XCTAssertFalse(acked.documents[0].metadata.hasPendingWrites)
        // The acknowledgement is a metadata-only change, reported as modified only when asked for.
        XCTAssertEqual(acked.documentChanges(includeMetadataChanges: true).map { $0.type }, [.modified])
        XCTAssertEqual(acked.documentChanges(includeMetadataChanges: false).count, 0)
    }

    func testHasPendingWritesCoversOnlyDocumentsInTheResult() {
        let seen = Recorder<QuerySnapshot>()
        let reg = db.collection("p").whereField("in", isEqualTo: true).addSnapshotListener(includeMetadataChanges: true) { s, _ in
            if let s { seen.append(s) }
        }
        defer { reg.remove() }
        seen.wait(for: 1)
        set(db.document("p/a"), ["in": true])
        let n = seen.wait(for: 3).count
        XCTAssertNil(waitError { db.disableNetwork(completion: $0) })
        let offline = seen.wait(for: n + 1)
        XCTAssertEqual(offline.last?.metadata.isFromCache, true)
        db.document("p/b").setData(["in": false])   // not in the result
        db.document("p/c").setData(["in": true])
        let last = seen.wait(for: n + 2).last
        XCTAssertEqual(last?.documents.map { $0.documentID }, ["a", "c"])
        XCTAssertEqual(last?.metadata.hasPendingWrites, true)
        XCTAssertEqual(last?.documents.map { $0.metadata.hasPendingWrites }, [false, true])
    }
}

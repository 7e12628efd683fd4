import XCTest
import Foundation
import Dispatch
import EmberModel
@testable import EmberStorage
@testable import EmberBackend

/// A commit never builds on a stored row it cannot read: a row whose fields do not decode
/// fails the commit with `dataLoss` and stays as it is (read as absent, an update would be
/// refused as "not found" and a merge would replace the document, its create time reset).
final class BackendDamagedRowTests: XCTestCase {
    private func storedData(_ p: SQLitePersistence) -> [UInt8]? {
        p.access(nil) { db in
            let st = try db.statement("SELECT data FROM backend_docs WHERE id = 'bad'")
            defer { st.rewind() }
            return try st.step() ? st.blobArray(0) : nil
        }
    }

    func testACommitOnADamagedRowFailsAndLeavesTheRow() throws {
        let dir = try TemporaryDirectory("damaged")
        let key = try DocumentKey(parsing: "c/bad")
        do {
            let db = try DurableBackend(path: dir.database, sharedDocuments: true)
            guard case .acknowledged = db.connection.commitNow(MutationBatch(batchId: 1, localWriteTime: 0,
                mutations: [Mutation(key: key, kind: .set(MapValue(["keep": .int(1)])))])) else { return XCTFail("the set was not stored") }
            XCTAssertTrue(db.persistence.access(false) { db in try db.exec("UPDATE backend_docs SET data = x'81a361' WHERE id = 'bad'"); return true })
            db.close(storingExactClock: true)
        }
        // Reopened: the store's recent rows do not know the row.
        let db = try DurableBackend(path: dir.database, sharedDocuments: true)
        defer { db.close(storingExactClock: false) }
        let p = db.persistence, conn = db.connection
        let x = try FieldPath(parsing: "x")
        let writes: [(String, Mutation)] = [
            ("a merge", Mutation(key: key, kind: .patch(MapValue(["x": .int(1)]), mask: [x]))),
            ("an update", Mutation(key: key, kind: .patch(MapValue(["x": .int(2)]), mask: [x]), precondition: .exists(true))),
            ("a set with a transform", Mutation(key: key, kind: .set(MapValue(["x": .int(3)])),
                                                transforms: [FieldTransform(path: try FieldPath(parsing: "t"), op: .serverTimestamp)])),
        ]
        for (n, (what, m)) in writes.enumerated() {
            switch conn.commitNow(MutationBatch(batchId: Int64(2 + n), localWriteTime: 0, mutations: [m])) {
            case .notStored(let e): XCTAssertEqual(e.code, .dataLoss, what)
            case .rejected(let e): XCTFail("\(what) was refused with \(e) instead of failing on the damaged row")
            case .acknowledged: XCTFail("\(what) was stored over the damaged row")
            }
            XCTAssertEqual(storedData(p), [0x81, 0xa3, 0x61], "\(what) left the row as it was")
        }
    }
}

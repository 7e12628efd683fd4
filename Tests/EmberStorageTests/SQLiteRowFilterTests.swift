import XCTest
import Foundation
@testable import EmberModel
@testable import EmberStorage

/// SQLiteRowFilter: a filtered collection scan runs the query's AND filters inside SQLite; it
/// returns what the full check would keep, counts every row it saw, lets damaged rows through to
/// the full check, and a value written in SQL can never pose as its bound filter.
final class SQLiteRowFilterTests: XCTestCase {
    func testAFilteredScanKeepsWhatTheQueryKeepsAndCountsEveryRow() throws {
        let dir = TempDir()
        let p = try SQLitePersistence(path: dir.file(), sharedDocuments: true)
        defer { p.close() }
        try p.runTransaction("fill") {
            for i in 0..<300 { p.backendDocuments.put(sdoc("c/d\(i)", ["g": .int(Int64(i % 7)), "s": .string("x\(i % 3)")])) }
            for i in 0..<20 { p.backendDocuments.put(Document.missing(skey("c/gone\(i)"), version: 1)) }
            p.backendDocuments.put(sdoc("other/d1", ["g": .int(3)]))
        }
        let q = try Query(collection: spath("c"))
            .filter(.field(FieldFilter(field: FieldPath(parsing: "g"), op: .equal, value: .int(3))))
            .filter(.field(FieldFilter(field: FieldPath(parsing: "s"), op: .notEqual, value: .string("x0"))))
        // What the store lists itself, before the query's own check: the rows SQLite admitted.
        let listed = p.backendDocuments.documents(matching: q)
        let expected = (0..<300).filter { $0 % 7 == 3 && $0 % 3 != 0 }.map { "d\($0)" }
        XCTAssertEqual(Set(listed.map { $0.key.id }), Set(expected))
        XCTAssertTrue(listed.allSatisfy { !$0.fieldsDecoded }, "the filter ran on the bytes")
        XCTAssertNil(p.indexManager?.lastRead.usedIndex)
        XCTAssertEqual(p.indexManager?.lastRead.documentsRead, 320, "every row of the collection, tombstones too")
        let all = p.backendDocuments.documents(matching: try Query(collection: spath("c")))
        XCTAssertEqual(all.count, 320, "without filters every row comes back")
    }

    func testRowsWhoseBytesDoNotReadPassToTheFullCheck() throws {
        let dir = TempDir()
        let p = try SQLitePersistence(path: dir.file(), sharedDocuments: true)
        defer { p.close() }
        p.backendDocuments.put(sdoc("c/good", ["g": .int(3)]))
        p.backendDocuments.put(sdoc("c/bad", ["g": .int(3)]))
        damageStoredFields(ofId: "bad", in: p)
        let q = try Query(collection: spath("c")).filter(.field(FieldFilter(field: FieldPath(parsing: "g"), op: .equal, value: .int(3))))
        let listed = p.backendDocuments.documents(matching: q)
        XCTAssertEqual(Set(listed.map { $0.key.id }), ["good", "bad"], "the damaged row is not dropped by the scan")
    }

    func testSQLCannotPoseAsABoundFilter() throws {
        let dir = TempDir()
        let p = try SQLitePersistence(path: dir.file(), sharedDocuments: true)
        defer { p.close() }
        XCTAssertEqual(p.access(-1) { db in try db.scalarInt("SELECT ember_admits(1, x'80', x'0102030405060708')") ?? -2 }, 1)
        XCTAssertEqual(p.access(-1) { db in try db.scalarInt("SELECT ember_admits(0, NULL, 12345)") ?? -2 }, 1)
    }
}

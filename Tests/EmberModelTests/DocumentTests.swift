// Tests for Document.swift: existing documents, tombstones, field access and content comparison.
import XCTest
@testable import EmberModel

final class DocumentTests: XCTestCase {

    func testExistingDocumentKeepsItsFieldsAndTimes() {
        let d = Document(key: key("cities/SF"), data: MapValue(["name": str("San Francisco")]), version: 17, createTime: 10, updateTime: 17)
        XCTAssertTrue(d.exists)
        XCTAssertEqual(d.key, key("cities/SF"))
        XCTAssertEqual(d.data["name"], str("San Francisco"))
        XCTAssertEqual(d.version, 17)
        XCTAssertEqual(d.createTime, 10)
        XCTAssertEqual(d.updateTime, 17)
        XCTAssertFalse(d.hasLocalMutations)
        XCTAssertEqual(d.description, "Document(cities/SF, v17)")
        let local = Document(key: key("cities/SF"), data: MapValue(), version: 17, createTime: 10, updateTime: 17, hasLocalMutations: true)
        XCTAssertEqual(local.description, "Document(cities/SF, v17, local)")
    }

    func testMissingDocumentIsATombstoneAtAVersion() {
        let m = Document.missing(key("cities/LA"), version: 9)
        XCTAssertFalse(m.exists)
        XCTAssertTrue(m.data.isEmpty)
        XCTAssertEqual(m.version, 9)
        XCTAssertEqual(m.createTime, 0)
        XCTAssertEqual(m.updateTime, 0)
        XCTAssertFalse(m.hasLocalMutations)
        XCTAssertEqual(m.description, "Missing(cities/LA, v9)")
        XCTAssertTrue(Document.missing(key("cities/LA"), version: 0, hasLocalMutations: true).hasLocalMutations)
    }

    func testFieldAccess() {
        let d = doc("cities/SF", ["pop": .int(860_000), "address": map(["city": str("SF"), "zip": .null]), "a.b": .int(7)])
        XCTAssertEqual(d.field(fp("pop")), .int(860_000))
        XCTAssertEqual(d.field(fp("address.city")), str("SF"))
        XCTAssertEqual(d.field(fp("address.zip")), .null, "a null field is present")
        XCTAssertNil(d.field(fp("address.country")))
        XCTAssertNil(d.field(fp("missing")))
        XCTAssertNil(d.field(fp("pop.x")))
        XCTAssertEqual(d.field(fp("`a.b`")), .int(7), "a dotted field name is one segment")
        XCTAssertNil(d.field(fp("a.b")))
    }

    func testDocumentIdFieldIsTheReference() {
        let d = doc("cities/SF/landmarks/gg", ["__name__": str("shadowed?")])
        XCTAssertEqual(d.field(.documentId), ref("cities/SF/landmarks/gg"))
        XCTAssertEqual(Document.missing(key("a/b"), version: 1).field(.documentId), ref("a/b"))
    }

    func testHasSameContentIgnoresVersions() {
        let a = Document(key: key("a/b"), data: MapValue(["x": .int(1)]), version: 1, createTime: 1, updateTime: 1)
        let b = Document(key: key("a/b"), data: MapValue(["x": .int(1)]), version: 5, createTime: 1, updateTime: 5)
        XCTAssertTrue(a.hasSameContent(as: b))
        let c = Document(key: key("a/b"), data: MapValue(["x": .double(1)]), version: 1, createTime: 1, updateTime: 1)
        XCTAssertFalse(a.hasSameContent(as: c), "int 1 and double 1.0 are different content")
        let d = Document(key: key("a/b"), data: MapValue(["x": .int(1)]), version: 1, createTime: 1, updateTime: 1, hasLocalMutations: true)
        XCTAssertFalse(a.hasSameContent(as: d), "pending state counts")
        XCTAssertFalse(a.hasSameContent(as: Document.missing(key("a/b"), version: 1)))
        XCTAssertTrue(Document.missing(key("a/b"), version: 1).hasSameContent(as: Document.missing(key("a/b"), version: 2)))
    }
}

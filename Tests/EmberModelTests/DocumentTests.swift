// Tests for Document.swift: existing documents, tombstones, field access, content comparison, and
// documents read from a file (stored fields decoded on first use, from any thread).
import XCTest
import EmberConcurrency
import Dispatch
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

    // MARK: documents read from a file (stored fields, decoded on first use)

    private func stored(_ p: String, _ fields: [String: Value]) -> Document {
        Document(key: key(p), storedFields: ValueMessagePack.encode(map(fields)), version: 3, createTime: 2, updateTime: 3)
    }

    func testStoredFieldsDecodeOnFirstUseToTheSameValues() {
        let fields: [String: Value] = ["pop": .int(860_000), "address": map(["city": str("SF")]), "tags": .array([str("a"), .double(1.5)])]
        let d = stored("cities/SF", fields)
        XCTAssertFalse(d.fieldsDecoded)
        XCTAssertEqual(d.data, MapValue(fields))
        XCTAssertTrue(d.fieldsDecoded)
        XCTAssertEqual(d.data, MapValue(fields), "the decoded fields are kept")
        XCTAssertEqual([d.version, d.createTime, d.updateTime], [3, 2, 3])
        XCTAssertTrue(d.exists)
        XCTAssertFalse(d.hasLocalMutations)
    }

    func testStoredFieldReadsOneFieldWithoutDecodingTheRest() {
        let d = stored("cities/SF", ["pop": .int(860_000), "address": map(["city": str("SF"), "zip": .null]), "a.b": .int(7)])
        XCTAssertEqual(d.field(fp("pop")), .int(860_000))
        XCTAssertEqual(d.field(fp("address.city")), str("SF"))
        XCTAssertEqual(d.field(fp("address.zip")), .null, "a null field is present")
        XCTAssertEqual(d.field(fp("address")), map(["city": str("SF"), "zip": .null]))
        XCTAssertNil(d.field(fp("address.country")))
        XCTAssertNil(d.field(fp("missing")))
        XCTAssertNil(d.field(fp("pop.x")))
        XCTAssertEqual(d.field(fp("`a.b`")), .int(7))
        XCTAssertNil(d.field(fp("a.b")))
        XCTAssertEqual(d.field(.documentId), ref("cities/SF"))
        XCTAssertFalse(d.fieldsDecoded, "one field is read from the bytes")
        _ = d.data
        XCTAssertEqual(d.field(fp("address.city")), str("SF"), "and from the decoded fields once they exist")
    }

    func testStoredKeysOutOfOrderAreReadThroughTheFullDecode() {
        // {"b": 1, "a": 2}: Ember never writes keys out of order; the full decode sorts them.
        let d = Document(key: key("a/b"), storedFields: [0x82, 0xa1, 0x62, 0x01, 0xa1, 0x61, 0x02], version: 1, createTime: 1, updateTime: 1)
        XCTAssertEqual(d.field(fp("a")), .int(2))
        XCTAssertEqual(d.field(fp("b")), .int(1))
        XCTAssertEqual(d.data, MapValue(["a": .int(2), "b": .int(1)]))
    }

    func testDamagedStoredFieldsReadAsNoFields() {
        // A map of one entry whose key is cut short.
        let d = Document(key: key("a/b"), storedFields: [0x81, 0xa3, 0x61], version: 1, createTime: 1, updateTime: 1)
        XCTAssertFalse(d.storedFieldsKnownDamaged, "not decoded yet")
        XCTAssertNil(d.field(fp("a")))
        XCTAssertTrue(d.data.isEmpty)
        XCTAssertTrue(d.exists)
        XCTAssertTrue(d.storedFieldsKnownDamaged)
        XCTAssertEqual(d.storedFieldsError?.code, .dataLoss)
        XCTAssertThrowsError(try d.decodedData()) { XCTAssertEqual(($0 as? EmberError)?.code, .dataLoss) }
        let good = stored("a/b", ["a": .int(1)])
        XCTAssertNil(good.storedFieldsError)
        XCTAssertEqual(try good.decodedData(), MapValue(["a": .int(1)]))
        XCTAssertFalse(good.storedFieldsKnownDamaged)
    }

    func testStoredAndBuiltDocumentsCompareByContent() {
        let fields: [String: Value] = ["x": .int(1), "y": str("z")]
        let built = Document(key: key("a/b"), data: MapValue(fields), version: 1, createTime: 1, updateTime: 1)
        XCTAssertTrue(stored("a/b", fields).hasSameContent(as: built))
        XCTAssertTrue(built.hasSameContent(as: stored("a/b", fields)))
        XCTAssertTrue(stored("a/b", fields).hasSameContent(as: stored("a/b", fields)), "equal bytes")
        XCTAssertFalse(stored("a/b", fields).hasSameContent(as: stored("a/b", ["x": .double(1), "y": str("z")])))
        XCTAssertFalse(stored("a/b", fields).hasSameContent(as: Document.missing(key("a/b"), version: 1)))
    }

    func testFirstDecodeFromManyThreadsGivesOneValue() {
        let fields: [String: Value] = ["n": .int(5), "m": map(["k": .array([.int(1), .int(2)])])]
        for _ in 0..<50 {
            let d = stored("a/b", fields)
            let seen = LockedValueBox([MapValue?](repeating: nil, count: 8))
            DispatchQueue.concurrentPerform(iterations: 8) { i in
                let v = i % 2 == 0 ? d.data : MapValue(["n": d.field(fp("n")) ?? .null, "m": d.data["m"] ?? .null])
                seen.withLockedValue { $0[i] = v }
            }
            for s in seen.current { XCTAssertEqual(s, MapValue(fields)) }
        }
    }
}

import EmberFirestoreProto
import EmberModel
import EmberWire
@testable import EmberServer
import XCTest

/// Names, values and queries between the wire and Ember's model.
final class WireTests: XCTestCase {
    let db = try! DatabaseName(project: "p", database: "(default)")

    func testNamesParseIntoTheDatabaseNamespace() throws {
        let (d, key) = try DatabaseName.parse(document: "projects/p/databases/(default)/documents/rooms/a/msgs/1")
        XCTAssertEqual(d, db)
        XCTAssertEqual(key.path.segments, [".p:p", ".d:(default)", "rooms", "a", "msgs", "1"])
        XCTAssertEqual(db.name(of: key), "projects/p/databases/(default)/documents/rooms/a/msgs/1")
        let (_, root) = try DatabaseName.parse(resource: "projects/p/databases/d2/documents")
        XCTAssertTrue(root.isEmpty)
        for bad in ["projects/p/databases/(default)/documents/rooms", "projects/p/documents/a/b", "projects/p/databases/x/documents/a//b",
                    "projects/p/databases/x/documents/a/__x__", "projects/p q/databases/x/documents/a/b"] {
            XCTAssertThrowsError(try DatabaseName.parse(document: bad), bad) { XCTAssertEqual(($0 as? EmberError)?.code, .invalidArgument) }
        }
    }

    func testBackendMessagesNameDocumentsAsTheWireDoes() {
        XCTAssertEqual(DatabaseName.externalize("No document to update: .p:demo/.d:(default)/cities/LA"),
                       "No document to update: projects/demo/databases/(default)/documents/cities/LA")
        XCTAssertEqual(DatabaseName.externalize("'.p:a/.d:b/x/y' and '.p:c/.d:d/z/w'"),
                       "'projects/a/databases/b/documents/x/y' and 'projects/c/databases/d/documents/z/w'")
        XCTAssertEqual(DatabaseName.externalize("no path .p: here"), "no path .p: here")
    }

    func testEveryValueTypeRoundTrips() throws {
        let codec = WireCodec(db: db)
        let key = db.key(try ResourcePath(parsing: "a/b"))
        let values: [Value] = [.null, .bool(true), .int(-7), .double(2.5), .double(.infinity), .timestamp(Timestamp(micros: 1_700_000_000_123_456)),
                               .string("é\u{0}x"), .bytes([0, 255]), .reference(key), .geoPoint(GeoPoint(latitude: 1, longitude: -2)),
                               .array([.int(1), .array([])]), .map(MapValue(["k": .string("v"), "m": .map(MapValue())]))]
        for v in values {
            let back = try codec.value(codec.wire(v))
            XCTAssertEqual(Value.compare(back, v), 0, "\(v)")
        }
        XCTAssertEqual(codec.wire(.reference(key)).referenceValue, "projects/p/databases/(default)/documents/a/b")
    }

    func testBadValuesAreRefused() {
        let codec = WireCodec(db: db)
        XCTAssertThrowsError(try codec.value(WireValue())) { XCTAssertEqual(($0 as? EmberError)?.code, .invalidArgument) }
        var ref = WireValue()
        ref.referenceValue = "projects/other/databases/(default)/documents/a/b"
        XCTAssertThrowsError(try codec.value(ref))
        var deep = WireValue()
        deep.integerValue = 1
        for _ in 0..<200 {
            var a = Google_Firestore_V1_ArrayValue()
            a.values = [deep]
            var w = WireValue()
            w.arrayValue = a
            deep = w
        }
        XCTAssertThrowsError(try codec.value(deep))
        var ts = WireValue()
        ts.timestampValue.seconds = 999_999_999_999
        XCTAssertThrowsError(try codec.value(ts))
    }

    func testQueriesReadEveryPart() throws {
        var sq = StructuredQuery()
        var from = StructuredQuery.CollectionSelector()
        from.collectionID = "msgs"
        from.allDescendants = true
        sq.from = [from]
        var n = WireValue(); n.integerValue = 3
        var s = WireValue(); s.stringValue = "x"
        var or = StructuredQuery.Filter()
        or.compositeFilter.op = .or
        or.compositeFilter.filters = [W.field("n", .greaterThan, n), W.field("s", .equal, s)]
        sq.where = or
        var o = StructuredQuery.Order(); o.field.fieldPath = "n"; o.direction = .descending
        sq.orderBy = [o]
        sq.limit.value = 2
        sq.offset = 1
        var sel = StructuredQuery.FieldReference(); sel.fieldPath = "n"
        sq.select.fields = [sel]
        let wq = try WireQuery(parent: "projects/p/databases/(default)/documents/rooms/a", structured: sq)
        XCTAssertEqual(wq.query.collectionGroup, "msgs")
        XCTAssertEqual(wq.query.path.segments, [".p:p", ".d:(default)", "rooms", "a"])
        XCTAssertEqual(wq.query.limit, 3, "the offset is taken off the front of limit + offset")
        XCTAssertEqual(wq.offset, 1)
        XCTAssertEqual(wq.projection, [try FieldPath(parsing: "n")])
        // The group under a parent holds only documents below it.
        let inside = Document(key: db.key(try ResourcePath(parsing: "rooms/a/msgs/1")), data: MapValue(["n": .int(5)]), version: 1, createTime: 1, updateTime: 1)
        let outside = Document(key: db.key(try ResourcePath(parsing: "rooms/b/msgs/1")), data: MapValue(["n": .int(5)]), version: 1, createTime: 1, updateTime: 1)
        XCTAssertTrue(wq.query.matches(inside))
        XCTAssertFalse(wq.query.matches(outside))
    }

    func testBadQueriesAreRefused() {
        let parent = "projects/p/databases/(default)/documents"
        XCTAssertThrowsError(try WireQuery(parent: parent, structured: StructuredQuery()))
        var sq = StructuredQuery()
        var from = StructuredQuery.CollectionSelector()
        from.collectionID = "c"
        sq.from = [from]
        var v = WireValue(); v.integerValue = 1
        sq.where = W.field("a", .unspecified, v)
        XCTAssertThrowsError(try WireQuery(parent: parent, structured: sq)) { XCTAssertEqual(($0 as? EmberError)?.code, .invalidArgument) }
        sq.where = StructuredQuery.Filter()
        XCTAssertThrowsError(try WireQuery(parent: parent, structured: sq))
        sq.clearWhere()
        sq.offset = -1
        XCTAssertThrowsError(try WireQuery(parent: parent, structured: sq))
        XCTAssertThrowsError(try WireQuery(parent: parent + "/c", structured: StructuredQuery()))
    }
}

import EmberWire
import EmberFirestoreProto
import EmberModel
@testable import EmberRemote
@testable import EmberServer
import XCTest

/// Ember queries as the wire asks them, read back by the server's own reader (WireQuery): the
/// same query, order, cursors and limit; limit-to-last reversed; null and NaN as unary filters.
final class RemoteQueryTests: XCTestCase {
    let codec = WireCodec(db: try! DatabaseName(project: "demo-ember", database: "(default)"), keys: .plain)

    /// The query the server reads from the wire form, with its database prefix taken off.
    private func roundTrip(_ q: Query) throws -> (RemoteQuery, Query) {
        let wq = RemoteQuery(q, codec)
        let read = try WireQuery(parent: wq.parent, structured: wq.structured).query
        return (wq, read)
    }

    func testCollectionsGroupsFiltersOrderCursorsAndLimitSurviveTheWire() throws {
        var q = Query(collection: try ResourcePath(parsing: "cities/SF/landmarks"))
        q = try q.filter(.composite(CompositeFilter(op: .or, filters: [
            .field(FieldFilter(field: fp("a"), op: .equal, value: .int(1))),
            .field(FieldFilter(field: fp("b"), op: .in, value: .array([.string("x"), .reference(key("c/d"))]))),
        ])))
        q = try q.filter(.field(FieldFilter(field: fp("n"), op: .greaterThan, value: .double(2.5))))
        q = try q.order(by: fp("n"), descending: true).start([.double(9)], inclusive: false).end([.int(3)], inclusive: true).limit(4)
        let (wq, read) = try roundTrip(q)
        XCTAssertEqual(wq.parent, "projects/demo-ember/databases/(default)/documents/cities/SF")
        XCTAssertEqual(wq.structured.from.first?.collectionID, "landmarks")
        XCTAssertFalse(wq.reversesResult)
        XCTAssertEqual(read.path.segments.suffix(3), ["cities", "SF", "landmarks"])
        let fields = { (q: Query) in q.filters.flatMap { $0.fieldFilters }.map { "\($0.field) \($0.op.rawValue)" } }
        XCTAssertEqual(fields(read), fields(q))
        XCTAssertTrue(read.filters.contains { $0.hasOr }, "the OR stays an OR")
        XCTAssertEqual(read.normalizedOrderBy, q.normalizedOrderBy)
        XCTAssertEqual(read.startAt?.inclusive, false)
        XCTAssertEqual(read.endAt?.inclusive, true)
        XCTAssertEqual(read.limit, 4)

        let group = try Query(collectionGroup: "sub").filter(.field(FieldFilter(field: fp("v"), op: .arrayContains, value: .int(1))))
        let (gw, gread) = try roundTrip(group)
        XCTAssertEqual(gw.parent, "projects/demo-ember/databases/(default)/documents")
        XCTAssertEqual(gw.structured.from.first?.allDescendants, true)
        XCTAssertEqual(gread.collectionGroup, "sub")
    }

    func testLimitToLastGoesReversed() throws {
        let q = try Query(collection: try ResourcePath(parsing: "c")).order(by: fp("n")).start([.int(1)], inclusive: true).limit(2, type: .last)
        let (wq, read) = try roundTrip(q)
        XCTAssertTrue(wq.reversesResult)
        XCTAssertEqual(read.normalizedOrderBy.map { $0.descending }, [true, true], "n and __name__ descending")
        XCTAssertNil(read.startAt)
        XCTAssertEqual(read.endAt?.inclusive, true, "the start cursor became the end")
        XCTAssertEqual(read.limit, 2)
        XCTAssertEqual(read.limitType, .first)
    }

    func testNullAndNaNComparisonsAreUnaryFilters() throws {
        let q = try Query(collection: try ResourcePath(parsing: "c"))
            .filter(.field(FieldFilter(field: fp("a"), op: .equal, value: .null)))
            .filter(.field(FieldFilter(field: fp("b"), op: .notEqual, value: .double(.nan))))
        let wq = RemoteQuery(q, codec)
        let ops = wq.structured.where.compositeFilter.filters.map { $0.unaryFilter.op }
        XCTAssertEqual(ops, [.isNull, .isNotNan])
        XCTAssertNoThrow(try WireQuery(parent: wq.parent, structured: wq.structured))
    }
}

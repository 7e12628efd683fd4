// Tests for Query.swift: building queries and every client-side error of docs/semantics.md 7.
import XCTest
@testable import EmberModel

final class QueryTests: XCTestCase {
    let cities = Query(collection: ResourcePath(segments: ["cities"]))
    let landmarks = Query(collectionGroup: "landmarks")

    func ff(_ field: String, _ op: FilterOperator, _ value: Value) -> Filter {
        .field(FieldFilter(field: fp(field), op: op, value: value))
    }

    func ints(_ n: Int) -> Value { .array((0..<n).map { .int(Int64($0)) }) }

    // MARK: kinds of queries

    func testCollectionGroupAndDocumentQueries() throws {
        XCTAssertFalse(cities.isDocumentQuery)
        XCTAssertFalse(cities.isCollectionGroupQuery)
        XCTAssertNil(cities.documentKey)
        XCTAssertEqual(cities.path.canonical, "cities")

        XCTAssertTrue(landmarks.isCollectionGroupQuery)
        XCTAssertFalse(landmarks.isDocumentQuery)
        XCTAssertEqual(landmarks.collectionGroup, "landmarks")
        XCTAssertTrue(landmarks.path.isEmpty)

        let one = Query(document: key("cities/SF"))
        XCTAssertTrue(one.isDocumentQuery)
        XCTAssertEqual(one.documentKey, key("cities/SF"))
        XCTAssertFalse(one.isCollectionGroupQuery)
    }

    func testBuildingKeepsEachStep() throws {
        let q = try cities.filter(ff("state", .equal, str("CA")))
            .order(by: fp("pop"), descending: true)
            .limit(10)
        XCTAssertEqual(q.filters.count, 1)
        XCTAssertEqual(q.explicitOrderBy, [OrderBy(field: fp("pop"), descending: true)])
        XCTAssertEqual(q.limit, 10)
        XCTAssertEqual(q.limitType, .first)
        XCTAssertTrue(q.description.hasPrefix("cities where "), q.description)
        XCTAssertTrue(q.description.hasSuffix(" order pop desc limit 10"), q.description)
        XCTAssertEqual(cities.filters.count, 0, "queries are values: building returns a new one")
        let last = try cities.order(by: fp("pop")).limit(3, type: .last)
        XCTAssertEqual(last.limitType, .last)
        XCTAssertTrue(last.description.hasSuffix("limitToLast 3"))
        XCTAssertEqual(landmarks.description, "group(landmarks)")
    }

    func testEmptyCompositeFilterIsIgnored() throws {
        let q = try cities.filter(.composite(CompositeFilter(op: .and, filters: [])))
        XCTAssertTrue(q.filters.isEmpty)
    }

    // MARK: limit

    func testLimitMustBePositive() {
        assertInvalid("positive", "0") { try cities.limit(0) }
        assertInvalid("positive", "-1") { try cities.limit(-1, type: .last) }
        XCTAssertNoThrow(try cities.limit(1))
    }

    func testLimitToLastNeedsAnOrderByWhenRun() throws {
        let q = try cities.limit(3, type: .last)   // building is fine ...
        assertInvalid("limit(toLast:)", "order(by:)") { try q.validateForExecution() }   // ... running is not
        XCTAssertNoThrow(try cities.order(by: fp("pop")).limit(3, type: .last).validateForExecution())
        XCTAssertNoThrow(try cities.limit(3).validateForExecution())
        XCTAssertNoThrow(try cities.validateForExecution())
        // An inequality filter's implicit order-by does not count: an explicit one is needed.
        let implicit = try cities.filter(ff("pop", .greaterThan, .int(1))).limit(3, type: .last)
        assertInvalid("limit(toLast:)") { try implicit.validateForExecution() }
    }

    // MARK: operator combinations

    func testConflictingOperatorsMatrix() throws {
        let conflicting: Set<[String]> = [
            ["!=", "!="], ["!=", "not-in"], ["not-in", "!="],
            ["not-in", "not-in"], ["not-in", "in"], ["in", "not-in"],
            ["not-in", "array-contains-any"], ["array-contains-any", "not-in"],
        ]
        func operand(_ op: FilterOperator) -> Value { op.takesArray ? arr(.int(1)) : .int(1) }
        for a in FilterOperator.allCases {
            for b in FilterOperator.allCases {
                let first = try cities.filter(ff("a", a, operand(a)))
                let build = { try first.filter(self.ff("b", b, operand(b))) }
                if conflicting.contains([a.rawValue, b.rawValue]) {
                    let fragment = a == b ? "more than one '\(a.rawValue)' filter" : "'\(b.rawValue)' filters with '\(a.rawValue)' filters"
                    assertInvalid(fragment) { try build() }
                    // The same inside one composite filter.
                    assertInvalid() { try cities.filter(.composite(CompositeFilter(op: .or, filters: [ff("a", a, operand(a)), ff("b", b, operand(b))]))) }
                } else {
                    XCTAssertNoThrow(try build(), "\(a.rawValue) then \(b.rawValue)")
                }
            }
        }
    }

    func testMultipleInequalityFieldsAreAllowed() throws {
        let q = try cities.filter(ff("a", .greaterThan, .int(1))).filter(ff("b", .lessThan, .int(2))).filter(ff("c", .notEqual, .int(3)))
        XCTAssertEqual(q.filters.count, 3)
        XCTAssertNoThrow(try cities.filter(ff("a", .arrayContains, .int(1))).filter(ff("b", .arrayContains, .int(1))))
        XCTAssertNoThrow(try cities.filter(ff("a", .in, arr(.int(1)))).filter(ff("b", .arrayContainsAny, arr(.int(1)))))
    }

    // MARK: operands

    func testArrayOperatorsNeedANonEmptyArray() {
        for op: FilterOperator in [.in, .notIn, .arrayContainsAny] {
            assertInvalid("non-empty array", "'\(op.rawValue)'") { try cities.filter(ff("a", op, arr())) }
            assertInvalid("non-empty array", "'\(op.rawValue)'") { try cities.filter(ff("a", op, .int(1))) }
        }
    }

    func testArrayOperandSizeLimits() {
        XCTAssertNoThrow(try cities.filter(ff("a", .in, ints(30))))
        XCTAssertNoThrow(try cities.filter(ff("a", .arrayContainsAny, ints(30))))
        XCTAssertNoThrow(try cities.filter(ff("a", .notIn, ints(10))))
        assertInvalid("maximum of 30", "got 31") { try cities.filter(ff("a", .in, ints(31))) }
        assertInvalid("maximum of 30", "'array-contains-any'") { try cities.filter(ff("a", .arrayContainsAny, ints(31))) }
        assertInvalid("maximum of 10", "got 11") { try cities.filter(ff("a", .notIn, ints(11))) }
    }

    /// Firestore's limit of 30 disjunctions after normalization (issue 10.4). The emulator's
    /// answers: Or of 30 ok, of 31 refused; in(6) AND in(5) ok, in(6) AND in(6) refused (36);
    /// array-contains-any counts like in (6 x 6 = 36, 30 x 2 = 60 refused); Or(in 20, in 11) = 31
    /// refused; Or(2) AND Or(15) = 30 ok, Or(2) AND Or(16) = 32 refused; not-in with OR refused.
    func testAtMost30DisjunctionsAfterNormalization() throws {
        func or(_ n: Int, _ f: String = "a") -> Filter {
            .composite(CompositeFilter(op: .or, filters: (0..<n).map { ff(f, .equal, .int(Int64($0))) }))
        }
        func and(_ fs: Filter...) -> Filter { .composite(CompositeFilter(op: .and, filters: fs)) }
        XCTAssertNoThrow(try cities.filter(or(30)))
        assertInvalid("31 disjunctions", "maximum of 30") { try cities.filter(or(31)) }
        XCTAssertNoThrow(try cities.filter(ff("a", .in, ints(6))).filter(ff("b", .in, ints(5))))
        assertInvalid("36 disjunctions") { try cities.filter(ff("a", .in, ints(6))).filter(ff("b", .in, ints(6))) }
        assertInvalid("36 disjunctions") { try cities.filter(and(ff("b", .arrayContainsAny, ints(6)), ff("a", .in, ints(6)))) }
        assertInvalid("60 disjunctions") { try cities.filter(ff("b", .arrayContainsAny, ints(30))).filter(ff("a", .in, ints(2))) }
        assertInvalid("31 disjunctions") {
            try cities.filter(.composite(CompositeFilter(op: .or, filters: [ff("a", .in, ints(20)), ff("a", .in, ints(11))])))
        }
        XCTAssertNoThrow(try cities.filter(and(or(2, "a"), or(15, "c"))))
        assertInvalid("32 disjunctions") { try cities.filter(and(or(2, "a"), or(16, "c"))) }
        // Repeated values count once (the emulator ran this one, seed 782898498 of the
        // differential test: 11 values with 1 and 5 twice and -2^63 as int and double, times 3).
        let repeated: [Value] = [.int(.max), .int(1), .int(5), .double(-9.223372036854776e18), .int(5), .int(9007199254740992),
                                 .int(0), .int(1), .int(-1), .int(.min), .double(.infinity)]
        XCTAssertNoThrow(try cities.filter(ff("a", .in, .array(repeated))).filter(ff("a", .in, .array([.double(0), .int(9007199254740992), .double(1)]))))
        assertInvalid("maximum of 30", "got 32") { try cities.filter(ff("a", .in, .array((0..<31).map { .int(Int64($0)) } + [.int(3)]))) }
        assertInvalid("not-in", "OR") { try cities.filter(ff("a", .notIn, ints(10))).filter(or(2, "c")) }
        assertInvalid("not-in", "OR") { try cities.filter(or(2, "c")).filter(ff("a", .notIn, ints(3))) }
    }

    func testNullAndNaNOnlyWithEqualityOperators() {
        for op in FilterOperator.allCases where op != .equal && op != .notEqual && !op.takesArray {
            assertInvalid("Null only supports '==' and '!='", "'\(op.rawValue)'") { try cities.filter(ff("a", op, .null)) }
            assertInvalid("NaN only supports '==' and '!='", "'\(op.rawValue)'") { try cities.filter(ff("a", op, .double(.nan))) }
        }
        XCTAssertNoThrow(try cities.filter(ff("a", .equal, .null)))
        XCTAssertNoThrow(try cities.filter(ff("a", .notEqual, .null)))
        XCTAssertNoThrow(try cities.filter(ff("a", .equal, .double(.nan))))
        XCTAssertNoThrow(try cities.filter(ff("a", .notEqual, .double(.nan))))
        XCTAssertNoThrow(try cities.filter(ff("a", .in, arr(.null))), "null inside an `in` array is allowed")
    }

    func testDocumentIdFilters() throws {
        XCTAssertNoThrow(try cities.filter(ff("__name__", .equal, ref("cities/SF"))))
        XCTAssertNoThrow(try cities.filter(ff("__name__", .in, arr(ref("cities/SF"), ref("cities/LA")))))
        // A reference to a document of another collection (or below one) is taken, as the
        // Firebase SDKs take any DocumentReference, and compared by path like any other.
        XCTAssertNoThrow(try cities.filter(ff("__name__", .equal, ref("towns/SF"))))
        XCTAssertNoThrow(try cities.filter(ff("__name__", .greaterThan, ref("cities/SF/landmarks/gg"))))
        XCTAssertNoThrow(try cities.filter(ff("__name__", .notIn, arr(ref("cities/SF"), ref("x/y")))))
        assertInvalid("valid document ID", "string") { try cities.filter(ff("__name__", .equal, str("SF"))) }
        assertInvalid("'array-contains'", "documentId()") { try cities.filter(ff("__name__", .arrayContains, ref("cities/SF"))) }
        assertInvalid("'array-contains-any'") { try cities.filter(ff("__name__", .arrayContainsAny, arr(ref("cities/SF")))) }
        // A collection group spans collections: any document path will do.
        XCTAssertNoThrow(try landmarks.filter(ff("__name__", .equal, ref("cities/SF/landmarks/gg"))))
        XCTAssertNoThrow(try landmarks.filter(ff("__name__", .greaterThanOrEqual, ref("a/b"))))
    }

    func testDocumentIdFiltersWithReferencesElsewhereCompareByPath() throws {
        let sf = doc("cities/SF"), sz = doc("cities/SZ")
        let other = try cities.filter(ff("__name__", .equal, ref("towns/SF")))
        XCTAssertFalse(other.matches(sf), "a document of another collection is never one of this one")
        let after = try cities.filter(ff("__name__", .greaterThan, ref("cities/SF/landmarks/gg")))
        XCTAssertFalse(after.matches(sf), "cities/SF sorts before the documents below it")
        XCTAssertTrue(after.matches(sz))
        let notIn = try cities.filter(ff("__name__", .notIn, arr(ref("cities/SF"), ref("x/y"))))
        XCTAssertFalse(notIn.matches(sf))
        XCTAssertTrue(notIn.matches(sz))
    }

    // MARK: order-by and cursors

    func testOrderByAfterACursorIsAnError() throws {
        for q in [try cities.order(by: fp("a")).start([.int(1)], inclusive: true),
                  try cities.order(by: fp("a")).start([.int(1)], inclusive: false),
                  try cities.order(by: fp("a")).end([.int(1)], inclusive: true),
                  try cities.order(by: fp("a")).end([.int(1)], inclusive: false)] {
            assertInvalid("order(by:) after") { try q.order(by: fp("b")) }
        }
    }

    func testDocumentQueriesCannotBeOrdered() {
        assertInvalid("document query") { try Query(document: key("cities/SF")).order(by: fp("a")) }
    }

    func testTooManyCursorValues() throws {
        // User-given values count against the explicit order-bys (Firebase JS newQueryBoundFromFields);
        // only cursors built from a document follow the normalized order (explicit, then __name__).
        let byPop = try cities.order(by: fp("pop"))
        XCTAssertNoThrow(try byPop.start([.int(1)], inclusive: true))
        assertInvalid("Too many arguments", "2 values for 1") { try byPop.start([.int(1), str("SF")], inclusive: true) }
        XCTAssertNoThrow(try byPop.start([.int(1), str("SF")], inclusive: true, fromDocument: true))
        let ordered = try byPop.order(by: .documentId)
        XCTAssertNoThrow(try ordered.start([.int(1), str("SF")], inclusive: true))
        assertInvalid("Too many arguments", "start(at:)", "3 values for 2") { try ordered.start([.int(1), str("SF"), .int(3)], inclusive: true) }
        assertInvalid("Too many arguments", "start(after:)") { try ordered.start([.int(1), str("SF"), .int(3)], inclusive: false) }
        assertInvalid("Too many arguments", "end(at:)") { try ordered.end([.int(1), str("SF"), .int(3)], inclusive: true) }
        assertInvalid("Too many arguments", "end(before:)") { try ordered.end([.int(1), str("SF"), .int(3)], inclusive: false) }
        assertInvalid("Too many arguments", "1 values for 0") { try cities.start([str("a")], inclusive: true) }
    }

    func testDocumentIdCursorOfACollectionQueryIsAPlainId() throws {
        let byName = try cities.order(by: .documentId)
        let q = try byName.start([str("SF")], inclusive: true)
        XCTAssertEqual(q.startAt?.values, [ref("cities/SF")])
        XCTAssertEqual(q.startAt?.inclusive, true)
        let sub = try Query(collection: path("cities/SF/landmarks")).order(by: .documentId).end([str("gg")], inclusive: false)
        XCTAssertEqual(sub.endAt?.values, [ref("cities/SF/landmarks/gg")])
        XCTAssertEqual(sub.endAt?.inclusive, false)
        assertInvalid("plain document ID", "cities/SF", "start(at:)") { try byName.start([str("cities/SF")], inclusive: true) }
        assertInvalid("plain document ID", "end(before:)") { try byName.end([str("a/b/c")], inclusive: false) }
        assertInvalid("plain document ID") { try byName.start([str("")], inclusive: false) }
        assertInvalid("reserved") { try byName.start([str("__x__")], inclusive: true) }
        assertInvalid("'..'") { try byName.start([str("..")], inclusive: true) }
        assertInvalid("Expected a string", "integer") { try byName.start([.int(1)], inclusive: true) }
        // A reference is taken as it is.
        XCTAssertEqual(try byName.start([ref("cities/LA")], inclusive: true).startAt?.values, [ref("cities/LA")])
        // The id cursor follows explicit order-bys.
        let byPop = try cities.order(by: fp("pop")).order(by: .documentId).start([.int(5), str("SF")], inclusive: false)
        XCTAssertEqual(byPop.startAt?.values, [.int(5), ref("cities/SF")])
    }

    func testDocumentIdCursorOfACollectionGroupQueryIsAPath() throws {
        let landmarks = try self.landmarks.order(by: .documentId)
        let q = try landmarks.start([str("cities/SF/landmarks/gg")], inclusive: true)
        XCTAssertEqual(q.startAt?.values, [ref("cities/SF/landmarks/gg")])
        XCTAssertEqual(try landmarks.end([str("a/b")], inclusive: true).endAt?.values, [ref("a/b")])
        assertInvalid("valid document path", "odd number of segments", "'gg'") { try landmarks.start([str("gg")], inclusive: true) }
        assertInvalid("valid document path") { try landmarks.end([str("cities/SF/landmarks")], inclusive: false) }
        assertInvalid("valid document path") { try landmarks.start([str("a//b")], inclusive: true) }
        assertInvalid("valid document path") { try landmarks.start([str("")], inclusive: true) }
    }

    func testExplicitDocumentIdOrderByCursor() throws {
        let q = try cities.order(by: .documentId, descending: true).start([str("SF")], inclusive: true)
        XCTAssertEqual(q.startAt?.values, [ref("cities/SF")])
        assertInvalid("plain document ID") { try cities.order(by: .documentId).start([str("x/y")], inclusive: true) }
    }

    // MARK: cursors from documents

    func testCursorValuesFollowTheNormalizedOrder() throws {
        let q = try cities.filter(ff("area", .greaterThan, .int(0))).order(by: fp("pop"), descending: true)
        let d = doc("cities/SF", ["pop": .int(860), "area": .double(121.4)])
        XCTAssertEqual(try q.cursorValues(for: d), [.int(860), .double(121.4), ref("cities/SF")])
        assertInvalid("'area'", "does not exist") { try q.cursorValues(for: doc("cities/LA", ["pop": .int(1)])) }
        XCTAssertEqual(try cities.cursorValues(for: d), [ref("cities/SF")])
        // They make a valid cursor for the same query.
        XCTAssertNoThrow(try q.start(q.cursorValues(for: d), inclusive: false, fromDocument: true))
        assertInvalid("Too many arguments") { try q.start(q.cursorValues(for: d), inclusive: false) }
    }

    func testTypeNames() {
        let names = [Value.null, .bool(true), .int(1), .double(1), ts(0), str(""), .bytes([]), ref("a/b"), geo(0, 0), arr(), map([:])].map { $0.typeName }
        XCTAssertEqual(names, ["null", "boolean", "integer", "double", "timestamp", "string", "bytes", "reference", "geopoint", "array", "map"])
    }
}

// Tests for Query+Matching.swift: normalized order-by (docs/semantics.md 6), path membership,
// matches() with filters, order-by presence (docs/semantics.md 5) and cursors, compare(),
// canonical ids.
import XCTest
@testable import EmberModel

final class QueryMatchingTests: XCTestCase {
    let cities = Query(collection: ResourcePath(segments: ["cities"]))

    func ff(_ field: String, _ op: FilterOperator, _ value: Value) -> Filter {
        .field(FieldFilter(field: fp(field), op: op, value: value))
    }

    func ob(_ field: String, _ desc: Bool = false) -> OrderBy { OrderBy(field: fp(field), descending: desc) }

    /// Ids of `docs` in the query, sorted in query order.
    func run(_ q: Query, _ docs: [Document]) -> [String] {
        let order = q.normalizedOrderBy
        return docs.filter { q.matches($0) }.sorted { Query.compare($0, $1, orderBy: order) < 0 }.map { $0.key.id }
    }

    // MARK: normalizedOrderBy

    func testDefaultOrderIsByDocumentName() {
        XCTAssertEqual(cities.normalizedOrderBy, [OrderBy(field: .documentId, descending: false)])
    }

    func testImplicitNameTakesTheLastExplicitDirection() throws {
        XCTAssertEqual(try cities.order(by: fp("a"), descending: true).normalizedOrderBy, [ob("a", true), ob("__name__", true)])
        XCTAssertEqual(try cities.order(by: fp("a"), descending: true).order(by: fp("b")).normalizedOrderBy,
                       [ob("a", true), ob("b"), ob("__name__")])
        XCTAssertEqual(try cities.order(by: fp("a")).order(by: fp("b"), descending: true).normalizedOrderBy,
                       [ob("a"), ob("b", true), ob("__name__", true)])
    }

    func testInequalityFieldsFollowSortedThenName() throws {
        let q = try cities
            .filter(ff("z", .greaterThan, .int(1)))
            .filter(ff("b", .lessThan, .int(2)))
            .filter(ff("eq", .equal, .int(1)))
            .filter(ff("m", .notEqual, .int(3)))
            .filter(ff("tags", .arrayContains, .int(1)))
            .filter(ff("in", .in, arr(.int(1))))
            .filter(ff("any", .arrayContainsAny, arr(.int(1))))
            .filter(ff("b", .greaterThan, .int(0)))
        XCTAssertEqual(q.normalizedOrderBy, [ob("b"), ob("m"), ob("z"), ob("__name__")])
        // not-in is an inequality too (it cannot be combined with != or in).
        let notIn = try cities.filter(ff("y", .lessThanOrEqual, .int(1))).filter(ff("k", .notIn, arr(.int(1)))).filter(ff("x", .greaterThanOrEqual, .int(0)))
        XCTAssertEqual(notIn.normalizedOrderBy, [ob("k"), ob("x"), ob("y"), ob("__name__")])
    }

    func testExplicitOrderComesFirstAndInequalitiesTakeItsDirection() throws {
        let q = try cities
            .filter(ff("z", .greaterThan, .int(1)))
            .filter(ff("b", .lessThan, .int(2)))
            .order(by: fp("z"), descending: true)
        XCTAssertEqual(q.normalizedOrderBy, [ob("z", true), ob("b", true), ob("__name__", true)])
    }

    func testInequalityFieldsAreSortedSegmentBySegment() throws {
        let q = try cities.filter(ff("a.z", .greaterThan, .int(1))).filter(ff("`a.b`", .greaterThan, .int(1))).filter(ff("B", .lessThan, .int(1)))
        XCTAssertEqual(q.normalizedOrderBy.map { $0.field }, [fp("B"), fp("a.z"), fp("`a.b`"), .documentId])
    }

    func testInequalitiesInsideCompositeFiltersCount() throws {
        let or = Filter.composite(CompositeFilter(op: .or, filters: [ff("y", .lessThan, .int(1)), ff("x", .greaterThan, .int(5))]))
        XCTAssertEqual(try cities.filter(or).normalizedOrderBy, [ob("x"), ob("y"), ob("__name__")])
    }

    func testExplicitNameOrderIsNotRepeated() throws {
        XCTAssertEqual(try cities.order(by: .documentId, descending: true).normalizedOrderBy, [OrderBy(field: .documentId, descending: true)])
        XCTAssertEqual(try cities.order(by: .documentId).order(by: fp("a"), descending: true).normalizedOrderBy,
                       [ob("__name__"), ob("a", true)])
    }

    func testInequalityOnTheNameStaysLast() throws {
        // JS queryNormalizedOrderBy skips key-field inequalities: the name is always the final tie-breaker,
        // even though "__name__" sorts before lowercase field names.
        let q = try cities.filter(ff("__name__", .greaterThan, ref("cities/A"))).filter(ff("z", .lessThan, .int(5)))
        XCTAssertEqual(q.normalizedOrderBy, [ob("z"), ob("__name__")])
        let desc = try q.order(by: fp("a"), descending: true)
        XCTAssertEqual(desc.normalizedOrderBy, [ob("a", true), ob("z", true), ob("__name__", true)])
    }

    // MARK: matchesPath

    func testCollectionQueryMatchesDirectChildrenOnly() throws {
        XCTAssertTrue(cities.matchesPath(key("cities/SF")))
        XCTAssertFalse(cities.matchesPath(key("cities/SF/landmarks/gg")))
        XCTAssertFalse(cities.matchesPath(key("towns/SF")))
        XCTAssertFalse(cities.matchesPath(key("citiesX/SF")))
        let sub = Query(collection: path("cities/SF/landmarks"))
        XCTAssertTrue(sub.matchesPath(key("cities/SF/landmarks/gg")))
        XCTAssertFalse(sub.matchesPath(key("cities/LA/landmarks/gg")))
        XCTAssertFalse(sub.matchesPath(key("cities/SF")))
    }

    func testCollectionGroupMatchesEveryCollectionWithThatId() {
        let q = Query(collectionGroup: "landmarks")
        XCTAssertTrue(q.matchesPath(key("landmarks/x")))
        XCTAssertTrue(q.matchesPath(key("cities/SF/landmarks/gg")))
        XCTAssertTrue(q.matchesPath(key("a/b/c/d/landmarks/e")))
        XCTAssertFalse(q.matchesPath(key("cities/SF")))
        XCTAssertFalse(q.matchesPath(key("landmarks/x/other/y")))
        XCTAssertFalse(q.matchesPath(key("landmarksX/x")))
    }

    func testDocumentQueryMatchesItsOwnKey() {
        let q = Query(document: key("cities/SF"))
        XCTAssertTrue(q.matchesPath(key("cities/SF")))
        XCTAssertFalse(q.matchesPath(key("cities/LA")))
        XCTAssertFalse(q.matchesPath(key("cities/SF/landmarks/gg")))
        XCTAssertTrue(q.matches(doc("cities/SF", ["anything": .null])))
        XCTAssertFalse(q.matches(Document.missing(key("cities/SF"), version: 3)))
        XCTAssertFalse(q.matches(doc("cities/LA")))
    }

    func testPathsMatchByBytes() {
        // "é" precomposed and decomposed are different ids, so different collections and documents.
        let pre = "\u{E9}", dec = "e\u{301}"
        XCTAssertFalse(Query(collection: ResourcePath(segments: [pre])).matchesPath(key("\(dec)/x")))
        XCTAssertFalse(Query(collection: ResourcePath(segments: ["c", "\(pre)", "sub"])).matchesPath(key("c/\(dec)/sub/x")))
        XCTAssertFalse(Query(collectionGroup: pre).matchesPath(key("a/b/\(dec)/x")))
        XCTAssertFalse(Query(document: key("c/\(pre)")).matchesPath(key("c/\(dec)")))
        XCTAssertTrue(Query(collection: ResourcePath(segments: [pre])).matchesPath(key("\(pre)/x")))
    }

    // MARK: matches

    func testMatchesAppliesFilters() throws {
        let q = try cities.filter(ff("state", .equal, str("CA"))).filter(ff("pop", .greaterThan, .int(100)))
        XCTAssertTrue(q.matches(doc("cities/SF", ["state": str("CA"), "pop": .int(860)])))
        XCTAssertFalse(q.matches(doc("cities/SF", ["state": str("CA"), "pop": .int(50)])))
        XCTAssertFalse(q.matches(doc("cities/SF", ["state": str("NV"), "pop": .int(860)])))
        XCTAssertFalse(q.matches(doc("towns/SF", ["state": str("CA"), "pop": .int(860)])))
        XCTAssertFalse(q.matches(Document.missing(key("cities/SF"), version: 1)))
    }

    func testOrderByExcludesDocumentsWithoutTheField() throws {
        let q = try cities.order(by: fp("pop"))
        XCTAssertTrue(q.matches(doc("cities/SF", ["pop": .int(1)])))
        XCTAssertTrue(q.matches(doc("cities/SF", ["pop": .null])), "null is a value")
        XCTAssertFalse(q.matches(doc("cities/SF", ["name": str("SF")])))
        XCTAssertTrue(cities.matches(doc("cities/SF", ["name": str("SF")])), "without the order-by it matches")
        let nested = try cities.order(by: fp("a.b"))
        XCTAssertTrue(nested.matches(doc("cities/SF", ["a": map(["b": .int(1)])])))
        XCTAssertFalse(nested.matches(doc("cities/SF", ["a": .int(1)])))
        // An explicit orderBy list can be passed in.
        XCTAssertFalse(cities.matches(doc("cities/SF", [:]), orderBy: [ob("x")]))
    }

    // MARK: cursors

    let pops: [Document] = [
        doc("cities/a", ["pop": .int(1)]),
        doc("cities/b", ["pop": .int(2)]),
        doc("cities/c", ["pop": .double(2.0)]),
        doc("cities/d", ["pop": .int(3)]),
        doc("cities/e", ["name": str("no pop")]),
    ]

    func testCursorsOnOneField() throws {
        let q = try cities.order(by: fp("pop"))
        XCTAssertEqual(run(q, pops), ["a", "b", "c", "d"])
        XCTAssertEqual(run(try q.start([.int(2)], inclusive: true), pops), ["b", "c", "d"])
        XCTAssertEqual(run(try q.start([.int(2)], inclusive: false), pops), ["d"])
        XCTAssertEqual(run(try q.end([.int(2)], inclusive: true), pops), ["a", "b", "c"])
        XCTAssertEqual(run(try q.end([.int(2)], inclusive: false), pops), ["a"])
        XCTAssertEqual(run(try q.start([.double(1.5)], inclusive: true).end([.int(3)], inclusive: false), pops), ["b", "c"])
        XCTAssertEqual(run(try q.start([.int(5)], inclusive: true), pops), [])
    }

    func testCursorsIncludingTheDocumentName() throws {
        let q = try cities.order(by: fp("pop")).order(by: .documentId)
        XCTAssertEqual(run(try q.start([.int(2), str("b")], inclusive: false), pops), ["c", "d"])
        XCTAssertEqual(run(try q.start([.int(2), str("c")], inclusive: true), pops), ["c", "d"])
        XCTAssertEqual(run(try q.end([.int(2), str("b")], inclusive: true), pops), ["a", "b"])
        XCTAssertEqual(run(try q.end([.int(2), str("c")], inclusive: false), pops), ["a", "b"])
        XCTAssertEqual(run(try q.start([.int(2), str("bb")], inclusive: true), pops), ["c", "d"])
    }

    func testCursorsOnADescendingOrder() throws {
        let q = try cities.order(by: fp("pop"), descending: true)
        XCTAssertEqual(run(q, pops), ["d", "c", "b", "a"])
        XCTAssertEqual(run(try q.start([.int(2)], inclusive: true), pops), ["c", "b", "a"])
        XCTAssertEqual(run(try q.start([.int(2)], inclusive: false), pops), ["a"])
        XCTAssertEqual(run(try q.end([.int(2)], inclusive: true), pops), ["d", "c", "b"])
        XCTAssertEqual(run(try q.end([.int(2)], inclusive: false), pops), ["d"])
        XCTAssertEqual(run(try q.order(by: .documentId, descending: true).start([.int(2), str("c")], inclusive: false), pops), ["b", "a"])
    }

    func testPartialCursorsOnTwoFields() throws {
        let docs = [
            doc("c/1", ["a": .int(1), "b": .int(1)]),
            doc("c/2", ["a": .int(1), "b": .int(2)]),
            doc("c/3", ["a": .int(2), "b": .int(1)]),
            doc("c/4", ["a": .int(2), "b": .int(2)]),
        ]
        let q = try Query(collection: path("c")).order(by: fp("a")).order(by: fp("b"), descending: true)
        XCTAssertEqual(run(q, docs), ["2", "1", "4", "3"])
        XCTAssertEqual(run(try q.start([.int(1)], inclusive: false), docs), ["4", "3"], "startAfter a partial cursor skips the whole prefix")
        XCTAssertEqual(run(try q.start([.int(1)], inclusive: true), docs), ["2", "1", "4", "3"])
        XCTAssertEqual(run(try q.start([.int(1), .int(1)], inclusive: true), docs), ["1", "4", "3"])
        XCTAssertEqual(run(try q.end([.int(2)], inclusive: false), docs), ["2", "1"])
        XCTAssertEqual(run(try q.end([.int(2), .int(2)], inclusive: true), docs), ["2", "1", "4"])
    }

    func testCursorsOnTheDocumentName() throws {
        let docs = ["a", "b", "c", "d"].map { doc("cities/\($0)") }
        let byName = try cities.order(by: .documentId)
        XCTAssertEqual(run(try byName.start([str("b")], inclusive: false), docs), ["c", "d"])
        XCTAssertEqual(run(try byName.start([str("b")], inclusive: true).end([str("c")], inclusive: true), docs), ["b", "c"])
        let desc = try cities.order(by: .documentId, descending: true)
        XCTAssertEqual(run(desc, docs), ["d", "c", "b", "a"])
        XCTAssertEqual(run(try desc.start([str("c")], inclusive: false), docs), ["b", "a"])
    }

    func testCollectionGroupCursorsUseFullPaths() throws {
        let docs = [doc("a/1/landmarks/x"), doc("b/1/landmarks/a"), doc("landmarks/z"), doc("b/1/other/a")]
        let q = Query(collectionGroup: "landmarks")
        XCTAssertEqual(run(q, docs), ["x", "a", "z"])
        let byName = try q.order(by: .documentId)
        XCTAssertEqual(run(try byName.start([str("b/1/landmarks/a")], inclusive: false), docs), ["z"])
        XCTAssertEqual(run(try byName.end([str("b/1/landmarks/a")], inclusive: true), docs), ["x", "a"])
    }

    func testCursorOfAnotherTypeUsesTheTypeOrder() throws {
        let docs = [doc("c/n", ["v": .int(5)]), doc("c/s", ["v": str("x")]), doc("c/b", ["v": .bytes([1])]), doc("c/t", ["v": .bool(true)])]
        let q = try Query(collection: path("c")).order(by: fp("v"))
        XCTAssertEqual(run(q, docs), ["t", "n", "s", "b"])
        XCTAssertEqual(run(try q.start([str("")], inclusive: true), docs), ["s", "b"])
        XCTAssertEqual(run(try q.end([.int(Int64.max)], inclusive: true), docs), ["t", "n"])
    }

    // MARK: compare

    func testCompareUsesTheOrderByAndTheName() {
        let a = doc("c/a", ["v": .int(2)]), b = doc("c/b", ["v": .double(2.0)]), c = doc("c/c", ["v": .int(1)])
        let asc = [ob("v"), OrderBy(field: .documentId, descending: false)]
        XCTAssertEqual(Query.compare(a, b, orderBy: asc), -1, "equal values: the name decides")
        XCTAssertEqual(Query.compare(c, a, orderBy: asc), -1)
        XCTAssertEqual(Query.compare(a, a, orderBy: asc), 0)
        let desc = [ob("v", true), OrderBy(field: .documentId, descending: true)]
        XCTAssertEqual(Query.compare(a, b, orderBy: desc), 1)
        XCTAssertEqual(Query.compare(c, a, orderBy: desc), 1)
        XCTAssertEqual(Query.compare(a, b, orderBy: []), 0)
    }

    func testCompareSortsMissingValuesFirst() {
        let has = doc("c/a", ["v": .null]), lacks = doc("c/b", [:])
        XCTAssertEqual(Query.compare(lacks, has, orderBy: [ob("v")]), -1)
        XCTAssertEqual(Query.compare(has, lacks, orderBy: [ob("v")]), 1)
        XCTAssertEqual(Query.compare(lacks, doc("c/c", [:]), orderBy: [ob("v")]), 0)
        XCTAssertEqual(Query.compare(lacks, has, orderBy: [ob("v", true)]), 1)
    }

    func testSortingMixedTypesFollowsTheValueOrder() throws {
        let values: [Value] = [.null, .bool(false), .double(.nan), .int(-1), .double(0.5), ts(0), str("a"), .bytes([0]), ref("x/y"), geo(0, 0), arr(), map([:])]
        let docs = values.enumerated().map { doc("c/\(100 + values.count - $0.offset)", ["v": $0.element]) }
        let q = try Query(collection: path("c")).order(by: fp("v"))
        XCTAssertEqual(run(q, docs.shuffled()), docs.map { $0.key.id })
        XCTAssertEqual(run(try Query(collection: path("c")).order(by: fp("v"), descending: true), docs.shuffled()), docs.reversed().map { $0.key.id })
    }

    // MARK: canonical ids

    func testCanonicalIdDistinguishesQueries() throws {
        let a = try cities.filter(ff("v", .equal, .int(1))).order(by: fp("pop")).limit(3)
        let same = try cities.filter(ff("v", .equal, .int(1))).order(by: fp("pop")).limit(3)
        XCTAssertEqual(a.canonicalId, same.canonicalId)
        let ids = try [
            a.canonicalId,
            cities.filter(ff("v", .equal, .double(1))).order(by: fp("pop")).limit(3).canonicalId,
            cities.filter(ff("v", .equal, .int(1))).order(by: fp("pop"), descending: true).limit(3).canonicalId,
            cities.filter(ff("v", .equal, .int(1))).order(by: fp("pop")).limit(3, type: .last).canonicalId,
            cities.filter(ff("v", .equal, .int(1))).order(by: fp("pop")).limit(4).canonicalId,
            cities.filter(ff("v", .equal, .int(1))).order(by: fp("pop")).limit(3).start([.int(1)], inclusive: true).canonicalId,
            cities.filter(ff("v", .equal, .int(1))).order(by: fp("pop")).limit(3).start([.int(1)], inclusive: false).canonicalId,
            cities.filter(ff("v", .equal, .int(1))).order(by: fp("pop")).limit(3).end([.int(1)], inclusive: true).canonicalId,
            cities.filter(ff("v", .notEqual, .int(1))).order(by: fp("pop")).limit(3).canonicalId,
            Query(collectionGroup: "cities").filter(ff("v", .equal, .int(1))).order(by: fp("pop")).limit(3).canonicalId,
            cities.filter(ff("v", .equal, str("i1"))).order(by: fp("pop")).limit(3).canonicalId,
        ]
        XCTAssertEqual(Set(ids).count, ids.count, ids.joined(separator: "\n"))
    }

    /// A limit-to-last query is watched as its mirror: the limit query in the reverse order with
    /// the cursors swapped; the limit type still tells the two apart as queries.
    func testTargetCanonicalIdOfALimitToLastQueryIsItsMirrors() throws {
        let last = try cities.order(by: fp("pop")).start([.int(1)], inclusive: true).end([.int(9)], inclusive: false).limit(3, type: .last)
        let mirror = try cities.order(by: fp("pop"), descending: true).start([.int(9)], inclusive: false).end([.int(1)], inclusive: true).limit(3)
        XCTAssertEqual(last.targetCanonicalId, mirror.targetCanonicalId)
        XCTAssertNotEqual(last.canonicalId, mirror.canonicalId)
        XCTAssertNotEqual(try cities.order(by: fp("pop")).limit(3).targetCanonicalId, mirror.targetCanonicalId)
        XCTAssertEqual(cities.targetCanonicalId, try cities.order(by: FieldPath.documentId).targetCanonicalId,
                       "the normalized order: ordering by the name is the default")
    }

    /// Queries that differ only in text Swift finds canonically equivalent ("\u{E9}" and
    /// "e\u{301}"; two orders of the same combining marks, which have the same byte length) are
    /// different queries: their ids differ as Swift Strings (dictionary keys), and are ASCII.
    func testCanonicalIdsOfCanonicallyEquivalentQueriesDiffer() throws {
        let variants = [("\u{E9}", "e\u{301}"), ("a\u{301}\u{323}", "a\u{323}\u{301}")]
        for (x, y) in variants {
            XCTAssertEqual(x, y, "the premise: Swift's String merges them")
            let pairs: [(Query, Query)] = try [
                (Query(collection: path(x)), Query(collection: path(y))),
                (Query(collection: path("c/\(x)/d")), Query(collection: path("c/\(y)/d"))),
                (Query(collectionGroup: x), Query(collectionGroup: y)),
                (cities.filter(ff(x, .equal, .int(1))), cities.filter(ff(y, .equal, .int(1)))),
                (cities.filter(ff("v", .equal, str(x))), cities.filter(ff("v", .equal, str(y)))),
                (cities.order(by: fp(x)), cities.order(by: fp(y))),
                (cities.order(by: fp("v")).start([str(x)], inclusive: true), cities.order(by: fp("v")).start([str(y)], inclusive: true)),
            ]
            for (a, b) in pairs {
                XCTAssertNotEqual(a.canonicalId, b.canonicalId)
                XCTAssertTrue(a.canonicalId.utf8.allSatisfy { $0 < 0x80 }, a.canonicalId)
            }
        }
        XCTAssertNotEqual(try Query(collection: path("%41")).canonicalId, try Query(collection: path("A")).canonicalId, "the escape character is escaped")
    }

    func testCanonicalStringsAreTypeTagged() {
        XCTAssertEqual(Value.int(1).canonicalString, "i1")
        XCTAssertNotEqual(Value.double(1).canonicalString, Value.int(1).canonicalString)
        XCTAssertNotEqual(Value.double(0).canonicalString, Value.double(-0.0).canonicalString)
        XCTAssertEqual(str("ab").canonicalString, "s2:ab")
        XCTAssertNotEqual(arr(str("a,b")).canonicalString, arr(str("a"), str("b")).canonicalString)
        XCTAssertEqual(ref("a/b").canonicalString, "r3:a/b")
    }

    /// `in` / `not-in` / `array-contains-any` take arrays as elements (issue 10.4). The emulator:
    /// in [[1, 2]] matches v == [1, 2]; not-in [[1, 2]] excludes it; array-contains-any [[1, 2]]
    /// matches an array holding the element [1, 2], not [1, 2] itself.
    func testArrayElementsOfListOperators() {
        let pair: Value = .array([.int(1), .int(2)])
        let d = doc("c/x", ["v": pair])
        XCTAssertTrue(ff("v", .in, .array([pair])).matches(d))
        XCTAssertFalse(ff("v", .notIn, .array([pair])).matches(d))
        XCTAssertTrue(ff("v", .notIn, .array([.array([.int(2)])])).matches(d))
        XCTAssertFalse(ff("v", .arrayContainsAny, .array([pair])).matches(d))
    }
}

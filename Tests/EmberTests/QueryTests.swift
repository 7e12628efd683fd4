import XCTest
import Foundation
import Ember

/// Query: filters, order, limits, cursors (values and snapshots), count, listeners, and the
/// client-side errors of docs/semantics.md 7 reaching getDocuments, listeners and validate().
final class QueryTests: XCTestCase {
    var db: Firestore!
    var cities: CollectionReference!

    override func setUpWithError() throws {
        db = try openDB()
        cities = db.collection("cities")
        seed(db, [
            "cities/SF": ["name": "San Francisco", "state": "CA", "country": "USA", "capital": false, "population": 860000,
                          "regions": ["west_coast", "norcal"]],
            "cities/LA": ["name": "Los Angeles", "state": "CA", "country": "USA", "capital": false, "population": 3900000,
                          "regions": ["west_coast", "socal"]],
            "cities/DC": ["name": "Washington D.C.", "state": NSNull(), "country": "USA", "capital": true, "population": 680000,
                          "regions": ["east_coast"]],
            "cities/TOK": ["name": "Tokyo", "state": NSNull(), "country": "Japan", "capital": true, "population": 9000000,
                           "regions": ["kanto", "honshu"]],
            "cities/BJ": ["name": "Beijing", "state": NSNull(), "country": "China", "capital": true, "population": 21500000,
                          "regions": ["jingjinji", "hebei"]],
        ])
    }
    override func tearDown() { db.terminate(); db = nil }

    // MARK: filters and order

    func testFilters() {
        XCTAssertEqual(ids(cities.whereField("state", isEqualTo: "CA")), ["LA", "SF"])
        XCTAssertEqual(ids(cities.whereField("capital", isEqualTo: true)), ["BJ", "DC", "TOK"])
        XCTAssertEqual(ids(cities.whereField("population", isLessThan: 1_000_000)), ["DC", "SF"])
        XCTAssertEqual(ids(cities.whereField("population", isLessThanOrEqualTo: 860000)), ["DC", "SF"])
        XCTAssertEqual(ids(cities.whereField("population", isGreaterThan: 9_000_000)), ["BJ"])
        XCTAssertEqual(ids(cities.whereField("population", isGreaterThanOrEqualTo: 9_000_000.0)), ["TOK", "BJ"])
        XCTAssertEqual(ids(cities.whereField("state", isNotEqualTo: "CA")), [], "!= excludes missing and null")
        XCTAssertEqual(ids(cities.whereField("country", isNotEqualTo: "USA")), ["BJ", "TOK"])
        XCTAssertEqual(ids(cities.whereField("state", isEqualTo: NSNull())), ["BJ", "DC", "TOK"])
        XCTAssertEqual(ids(cities.whereField("regions", arrayContains: "west_coast")), ["LA", "SF"])
        XCTAssertEqual(ids(cities.whereField("regions", arrayContainsAny: ["west_coast", "kanto"])), ["LA", "SF", "TOK"])
        XCTAssertEqual(ids(cities.whereField("country", in: ["USA", "Japan"])), ["DC", "LA", "SF", "TOK"])
        XCTAssertEqual(ids(cities.whereField("country", notIn: ["USA", "Japan"])), ["BJ"])
        XCTAssertEqual(ids(cities.whereField(FieldPath(["country"]), isEqualTo: "Japan")), ["TOK"])
        XCTAssertEqual(ids(cities.whereField(FieldPath.documentID(), isEqualTo: "SF")), ["SF"])
        XCTAssertEqual(ids(cities.whereField(FieldPath.documentID(), in: ["SF", "LA", "XX"])), ["LA", "SF"])
        XCTAssertEqual(ids(cities.whereField("state", isEqualTo: "CA").whereField("population", isGreaterThan: 1_000_000)), ["LA"])
        XCTAssertEqual(ids(cities.whereField("population", isGreaterThan: 700000).whereField("capital", isNotEqualTo: false)), ["TOK", "BJ"],
                       "multiple inequality fields are allowed (ordered by capital, population, name)")
    }

    func testNameOrderWithGreaterThanOrEqual() {
        XCTAssertEqual(ids(cities.whereField("name", isGreaterThanOrEqualTo: "San Francisco")), ["SF", "TOK", "DC"])
    }

    func testCompositeFilters() {
        let q = cities.whereFilter(Filter.orFilter([
            Filter.whereField("capital", isEqualTo: true),
            Filter.whereField("population", isGreaterThanOrEqualTo: 1_000_000),
        ]))
        // The inequality inside the or adds an implicit order by population.
        XCTAssertEqual(ids(q), ["DC", "LA", "TOK", "BJ"])
        let and = cities.whereFilter(Filter.andFilter([
            Filter.whereField("state", isEqualTo: "CA"),
            Filter.orFilter([Filter.whereField("name", isEqualTo: "San Francisco"), Filter.whereField("population", isGreaterThan: 3_000_000)]),
        ]))
        XCTAssertEqual(ids(and), ["SF", "LA"])
        XCTAssertEqual(ids(cities.whereFilter(Filter.whereField("country", in: ["China"]))), ["BJ"])
    }

    func testOrderAndLimit() {
        XCTAssertEqual(ids(cities.order(by: "population")), ["DC", "SF", "LA", "TOK", "BJ"])
        XCTAssertEqual(ids(cities.order(by: "population", descending: true).limit(to: 2)), ["BJ", "TOK"])
        XCTAssertEqual(ids(cities.order(by: "population").limit(toLast: 2)), ["TOK", "BJ"])
        XCTAssertEqual(ids(cities.order(by: "state").order(by: "population")), ["DC", "TOK", "BJ", "SF", "LA"])
        XCTAssertEqual(ids(cities.order(by: FieldPath(["country"])).order(by: "name", descending: true)), ["BJ", "TOK", "DC", "SF", "LA"])
        XCTAssertEqual(ids(cities.order(by: FieldPath.documentID(), descending: true)), ["TOK", "SF", "LA", "DC", "BJ"])
        set(db.document("cities/NOPOP"), ["name": "No population"])
        XCTAssertEqual(ids(cities.order(by: "population")), ["DC", "SF", "LA", "TOK", "BJ"], "order(by:) excludes documents without the field")
        XCTAssertEqual(get(cities)?.count, 6)
        XCTAssertEqual(code(waitResult { self.cities.limit(to: 0).getDocuments(completion: $0) }.1), .invalidArgument)
        XCTAssertEqual(code(waitResult { self.cities.limit(toLast: -1).getDocuments(completion: $0) }.1), .invalidArgument)
    }

    func testLimitToLastWithoutOrderByErrorsWhenRun() {
        let q = cities.limit(toLast: 2)
        XCTAssertThrowsError(try q.validate()) { XCTAssertEqual(code($0), .invalidArgument) }
        let (s, e) = waitResult { q.getDocuments(completion: $0) }
        XCTAssertNil(s)
        XCTAssertEqual(code(e), .invalidArgument)
        assertListenerEndsWithOneError(q)
        XCTAssertEqual(code(waitResult { q.getDocuments(source: .cache, completion: $0) }.1), .invalidArgument)
        XCTAssertNoThrow(try cities.order(by: "name").limit(toLast: 2).validate())
    }

    // MARK: cursors

    func testValueCursors() {
        let byPop = cities.order(by: "population")
        XCTAssertEqual(ids(byPop.start(at: [860000])), ["SF", "LA", "TOK", "BJ"])
        XCTAssertEqual(ids(byPop.start(after: [860000])), ["LA", "TOK", "BJ"])
        XCTAssertEqual(ids(byPop.end(at: [3900000])), ["DC", "SF", "LA"])
        XCTAssertEqual(ids(byPop.end(before: [3900000])), ["DC", "SF"])
        XCTAssertEqual(ids(byPop.start(after: [680000]).end(before: [9000000])), ["SF", "LA"])
        let byCountry = cities.order(by: "country").order(by: "population")
        XCTAssertEqual(ids(byCountry.start(at: ["USA"])), ["DC", "SF", "LA"])
        XCTAssertEqual(ids(byCountry.start(after: ["USA", 860000])), ["LA"])
        XCTAssertEqual(ids(cities.order(by: FieldPath.documentID()).start(after: ["LA"])), ["SF", "TOK"])
        XCTAssertEqual(ids(cities.order(by: FieldPath.documentID()).end(at: [db.document("cities/DC")])), ["BJ", "DC"])
    }

    func testSnapshotCursors() {
        guard let sf = get(db.document("cities/SF")) else { return XCTFail() }
        let byPop = cities.order(by: "population")
        XCTAssertEqual(ids(byPop.start(atDocument: sf)), ["SF", "LA", "TOK", "BJ"])
        XCTAssertEqual(ids(byPop.start(afterDocument: sf)), ["LA", "TOK", "BJ"])
        XCTAssertEqual(ids(byPop.end(atDocument: sf)), ["DC", "SF"])
        XCTAssertEqual(ids(byPop.end(beforeDocument: sf)), ["DC"])
        // The document's name breaks ties.
        set(db.document("cities/SF2"), ["population": 860000])
        XCTAssertEqual(ids(byPop.start(afterDocument: sf)), ["SF2", "LA", "TOK", "BJ"])
        XCTAssertEqual(ids(byPop.start(at: [860000])), ["SF", "SF2", "LA", "TOK", "BJ"])
        // Pagination with the last document of a page, as in the Firebase docs.
        let first = cities.order(by: "population").limit(to: 2)
        guard let page1 = get(first), let last = page1.documents.last else { return XCTFail() }
        XCTAssertEqual(page1.documents.map { $0.documentID }, ["DC", "SF"])
        XCTAssertEqual(ids(cities.order(by: "population").start(afterDocument: last).limit(to: 2)), ["SF2", "LA"])
        // A query snapshot document works as a cursor; without order-by the name is the order.
        XCTAssertEqual(ids(cities.start(afterDocument: last)), ["SF2", "TOK"])
        // A missing document, or one without the ordered field, cannot be a cursor.
        guard let missing = get(db.document("cities/NONE")) else { return XCTFail() }
        assertInvalid(byPop.start(atDocument: missing))
        guard let sf2 = get(db.document("cities/SF2")) else { return XCTFail() }
        assertInvalid(cities.order(by: "name").start(afterDocument: sf2))
    }

    // MARK: errors of docs/semantics.md 7

    func invalidQueries() -> [(String, Query)] {
        let nan = Double.nan
        return [
            ("!= with !=", cities.whereField("a", isNotEqualTo: 1).whereField("b", isNotEqualTo: 2)),
            ("!= with not-in", cities.whereField("a", isNotEqualTo: 1).whereField("b", notIn: [2])),
            ("not-in with !=", cities.whereField("b", notIn: [2]).whereField("a", isNotEqualTo: 1)),
            ("not-in with in", cities.whereField("a", notIn: [1]).whereField("b", in: [2])),
            ("in with not-in", cities.whereField("b", in: [2]).whereField("a", notIn: [1])),
            ("not-in with array-contains-any", cities.whereField("a", notIn: [1]).whereField("b", arrayContainsAny: [2])),
            ("not-in with not-in", cities.whereField("a", notIn: [1]).whereField("b", notIn: [2])),
            ("not-in and != in one or", cities.whereFilter(Filter.orFilter([Filter.whereField("a", notIn: [1]), Filter.whereField("b", isNotEqualTo: 2)]))),
            ("empty in", cities.whereField("a", in: [])),
            ("empty not-in", cities.whereField("a", notIn: [])),
            ("empty array-contains-any", cities.whereField("a", arrayContainsAny: [])),
            ("31 in", cities.whereField("a", in: Array(0..<31))),
            ("31 array-contains-any", cities.whereField("a", arrayContainsAny: Array(0..<31))),
            ("11 not-in", cities.whereField("a", notIn: Array(0..<11))),
            ("more cursor values than order-bys", cities.order(by: "a").start(at: [1, "x", 3])),
            ("order by after a cursor", cities.order(by: "a").start(at: [1]).order(by: "b")),
            ("document-id cursor with a slash", cities.order(by: FieldPath.documentID()).start(at: ["a/b"])),
            ("document-id cursor not a string", cities.order(by: FieldPath.documentID()).end(before: [1])),
            ("document-id filter with a slash", cities.whereField(FieldPath.documentID(), isEqualTo: "a/b")),
            ("null with <", cities.whereField("a", isLessThan: NSNull())),
            ("null with >=", cities.whereField("a", isGreaterThanOrEqualTo: NSNull())),
            ("null with array-contains", cities.whereField("a", arrayContains: NSNull())),
            ("NaN with >", cities.whereField("a", isGreaterThan: nan)),
            ("NaN with <=", cities.whereField("a", isLessThanOrEqualTo: nan)),
            ("invalid field path", cities.whereField("a..b", isEqualTo: 1)),
            ("unsupported operand", cities.whereField("a", isEqualTo: Set([1]))),
            ("nested array operand", cities.whereField("a", isEqualTo: [[1]])),
            ("invalid order-by path", cities.order(by: "")),
        ]
    }

    func testEachInvalidQueryReachesGetDocumentsAndValidate() {
        for (what, q) in invalidQueries() {
            XCTAssertThrowsError(try q.validate(), what) { XCTAssertEqual(code($0), .invalidArgument, what) }
            let (s, e) = waitResult { q.getDocuments(completion: $0) }
            XCTAssertNil(s, what)
            XCTAssertEqual(code(e), .invalidArgument, what)
            XCTAssertEqual(code(waitResult { q.count.getAggregation(source: .server, completion: $0) }.1), .invalidArgument, what)
            // Deriving more from an invalid query keeps the first error.
            XCTAssertThrowsError(try q.limit(to: 1).whereField("z", isEqualTo: 1).validate(), what)
        }
        XCTAssertThrowsError(try runAsync { [cities] in try await cities.whereField("a", in: []).getDocuments() }.get()) {
            XCTAssertEqual(code($0), .invalidArgument)
        }
    }

    func testEachInvalidQueryEndsItsListenerWithOneError() {
        for (what, q) in invalidQueries() {
            assertListenerEndsWithOneError(q, what)
        }
    }

    func testValidEdgeQueriesAreAccepted() {
        for q in [cities.whereField("a", isEqualTo: NSNull()), cities.whereField("a", isNotEqualTo: Double.nan),
                  cities.whereField("a", in: Array(0..<30)), cities.whereField("a", notIn: Array(0..<10)),
                  cities.whereField("a", isNotEqualTo: 1).whereField("b", in: [2]),
                  cities.whereField("a", isGreaterThan: 1).whereField("b", isLessThan: 2),
                  cities.order(by: "a").order(by: "b").start(at: [1, 2]),
                  cities.whereField("a", arrayContains: 1).whereField("b", arrayContainsAny: [1])] {
            XCTAssertNoThrow(try q.validate())
            XCTAssertNotNil(get(q))
        }
    }

    /// The listener is called exactly once, with the error, and never again.
    func assertListenerEndsWithOneError(_ q: Query, _ what: String = "", file: StaticString = #filePath, line: UInt = #line) {
        let calls = Recorder<String>()
        let reg = q.addSnapshotListener { s, e in calls.append(s != nil ? "snapshot" : "error \(code(e).map { "\($0)" } ?? "?")") }
        XCTAssertEqual(calls.wait(for: 1, file: file, line: line), ["error invalidArgument"], what, file: file, line: line)
        // A later write to the collection, seen by a valid listener, is not heard by the ended one.
        let barrier = Recorder<Int>()
        let other = cities.addSnapshotListener(includeMetadataChanges: true) { s, _ in barrier.append(s?.count ?? -1) }
        barrier.wait(for: 1, file: file, line: line)
        let n = barrier.count
        db.document("cities/ZZ\(what.hashValue & 0xffff)").setData(["a": 1, "b": 2, "name": "z"])
        barrier.wait(for: n + 1, file: file, line: line)
        other.remove()
        XCTAssertEqual(calls.all, ["error invalidArgument"], what, file: file, line: line)
        reg.remove()
    }

    func assertInvalid(_ q: Query, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try q.validate(), file: file, line: line) { XCTAssertEqual(code($0), .invalidArgument, file: file, line: line) }
        XCTAssertEqual(code(waitResult { q.getDocuments(completion: $0) }.1), .invalidArgument, file: file, line: line)
    }

    // MARK: count

    func testCountAtTheServer() throws {
        XCTAssertEqual(waitResult { self.cities.count.getAggregation(source: .server, completion: $0) }.0?.count, 5)
        XCTAssertEqual(waitResult { self.cities.whereField("state", isEqualTo: "CA").count.getAggregation(source: .server, completion: $0) }.0?.count, 2)
        XCTAssertEqual(waitResult { self.cities.limit(to: 3).count.getAggregation(source: .server, completion: $0) }.0?.count, 3)
        XCTAssertEqual(waitResult { self.db.collection("none").count.getAggregation(source: .server, completion: $0) }.0?.count, 0)
        let agg = try runAsync { [cities] in try await cities.whereField("capital", isEqualTo: true).count.getAggregation(source: .server) }.get()
        XCTAssertEqual(agg.count, 3)
        XCTAssertEqual(agg.count.intValue, 3)
    }

    func testCountSeesAcknowledgedWritesOnly() {
        XCTAssertNil(waitError { db.disableNetwork(completion: $0) })
        db.document("cities/NEW").setData(["state": "CA"])
        XCTAssertNil(waitError { db.enableNetwork(completion: $0) })
        XCTAssertNil(waitError { db.waitForPendingWrites(completion: $0) })
        XCTAssertEqual(waitResult { self.cities.count.getAggregation(source: .server, completion: $0) }.0?.count, 6)
    }

    // MARK: sources and snapshots

    func testGetDocumentsSources() {
        let q = cities.whereField("state", isEqualTo: "CA")
        // The acknowledged seed batch is in this client's cache.
        let cached = get(q, source: .cache)
        XCTAssertEqual(cached?.metadata.isFromCache, true)
        XCTAssertEqual(cached?.documents.map { $0.documentID }, ["LA", "SF"])
        // Another database (its own backend) starts with an empty cache.
        guard let other = try? openDB() else { return XCTFail() }
        defer { other.terminate() }
        XCTAssertEqual(get(other.collection("cities"), source: .cache)?.isEmpty, true)
        let server = get(q, source: .server)
        XCTAssertEqual(server?.metadata.isFromCache, false)
        XCTAssertEqual(server?.documents.map { $0.documentID }, ["LA", "SF"])
        XCTAssertEqual(get(q, source: .cache)?.documents.map { $0.documentID }, ["LA", "SF"])
        XCTAssertEqual(server?.query.firestore === db, true)
    }

    func testQueryListenerFollowsWritesAndLimitWindows() {
        let q = cities.order(by: "population", descending: true).limit(to: 2)
        let seen = Recorder<[String]>()
        let reg = q.addSnapshotListener { s, _ in seen.append(s?.documents.map { $0.documentID } ?? ["error"]) }
        defer { reg.remove() }
        XCTAssertEqual(seen.wait(for: 1), [["BJ", "TOK"]])
        db.document("cities/BJ").delete()
        XCTAssertEqual(seen.wait(for: 2).last, ["TOK", "LA"], "the next one refills the window")
        db.document("cities/BIG").setData(["population": 50_000_000])
        XCTAssertEqual(seen.wait(for: 3).last, ["BIG", "TOK"])
        let last = Recorder<[String]>()
        let r2 = cities.order(by: "population").limit(toLast: 2).addSnapshotListener { s, _ in last.append(s?.documents.map { $0.documentID } ?? ["error"]) }
        defer { r2.remove() }
        XCTAssertEqual(last.wait(for: 1), [["TOK", "BIG"]])
        db.document("cities/BIG").delete()
        XCTAssertEqual(last.wait(for: 2).last, ["LA", "TOK"])
    }
}

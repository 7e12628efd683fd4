// Tests for RulesQuery.swift, FieldBounds.swift and the query-time stand-ins in the evaluator:
// a `list` rule is allowed only when it holds for every document the query could return. Pins,
// ranges and array-contains decide what they can; anything else done with the partial
// `resource` (null checks, map literals, method receivers or arguments, `is`) denies. Also the
// read budget shared by one request's evaluations, get() of another database, and collection
// groups under rules_version 1.
import XCTest
import EmberModel
@testable import EmberRules

final class QueryRulesTests: XCTestCase {
    private func list(_ condition: String, _ filters: [(String, FilterOperator, Value)] = [], limit: Int? = nil,
                      query: Bool = true) throws -> Bool {
        let rules = try RulesTestSupport.rules(condition, methods: "list")
        var r = RulesRequest(method: .list, path: ["c"], auth: RulesAuth(uid: "u"))
        if query {
            r.query = RulesQuery(filters: try filters.map { .field(FieldFilter(field: try FieldPath(parsing: $0.0), op: $0.1, value: $0.2)) },
                                 limit: limit)
        }
        return rules.evaluate(r).allowed
    }

    func testPinsRangesAndArrayContainsDecideWhatTheyCan() throws {
        XCTAssertTrue(try list("resource.data.owner == request.auth.uid", [("owner", .equal, .string("u"))]))
        XCTAssertFalse(try list("resource.data.owner == request.auth.uid", [("owner", .equal, .string("v"))]))
        XCTAssertFalse(try list("resource.data.owner == request.auth.uid"))
        XCTAssertTrue(try list("resource.data.owner == request.auth.uid", [("owner", .in, .array([.string("u")]))]))
        XCTAssertFalse(try list("resource.data.owner == request.auth.uid", [("owner", .in, .array([.string("u"), .string("v")]))]))
        XCTAssertTrue(try list("resource.data.n < 100", [("n", .lessThan, .int(50))]))
        XCTAssertTrue(try list("resource.data.n < 100", [("n", .lessThanOrEqual, .int(99))]))
        XCTAssertFalse(try list("resource.data.n < 100", [("n", .lessThanOrEqual, .int(100))]))
        XCTAssertFalse(try list("resource.data.n < 100", [("n", .greaterThan, .int(10))]))
        XCTAssertTrue(try list("resource.data.n > 5 && resource.data.n < 100", [("n", .greaterThan, .int(10)), ("n", .lessThan, .int(20))]))
        XCTAssertFalse(try list("!(resource.data.n < 100)", [("n", .lessThan, .int(50))]))
        XCTAssertTrue(try list("request.auth.uid in resource.data.members", [("members", .arrayContains, .string("u"))]))
        XCTAssertFalse(try list("request.auth.uid in resource.data.members", [("members", .arrayContains, .string("w"))]))
        XCTAssertTrue(try list("request.query.limit <= 10", limit: 5))
        XCTAssertFalse(try list("request.query.limit <= 10", limit: 20))
        XCTAssertFalse(try list("request.query.limit <= 10"))
    }

    func testWhatTheQueryDoesNotDecideDenies() throws {
        // A listing (no query at all) is a query with no filter: resource is not null.
        XCTAssertFalse(try list("resource == null || resource.data.owner == request.auth.uid", query: false))
        XCTAssertFalse(try list("resource == null", [("owner", .equal, .string("u"))]))
        // Map literals, methods and `is` on partial values.
        XCTAssertFalse(try list("resource.get(['data', 'banned'], false) == false"))
        XCTAssertFalse(try list("resource.data.get('banned', false) == false"))
        XCTAssertFalse(try list("![5].hasAny({'v': resource.data.x}.values())", [("x", .greaterThan, .int(0))]))
        XCTAssertFalse(try list("!([resource.data.x].hasAny([5]))", [("x", .greaterThan, .int(0))]))
        XCTAssertFalse(try list("!(resource.data.keys().hasAny(['banned']))", [("owner", .equal, .string("u"))]))
        XCTAssertFalse(try list("!(resource.data.x is string)", [("x", .greaterThan, .int(0))]))
        XCTAssertFalse(try list("resource.data.x != 5", [("x", .greaterThan, .int(0))]))
        XCTAssertTrue(try list("resource.data.x != 5", [("x", .greaterThan, .int(5))]))
    }

    func testGetReadsAreBoundedPerRequestAndStayInTheDatabase() throws {
        let rules = try RulesTestSupport.rules("exists(/databases/$(database)/documents/u/$(request.resource.data.k))", methods: "create")
        let lookup: RulesDocumentLookup = { _ in MapValue() }
        let budget = RulesReadBudget(limit: 3)
        func create(_ k: String) -> Bool {
            rules.evaluate(RulesRequest(method: .create, path: ["c", k], auth: RulesAuth(uid: "u"), newData: MapValue(["k": .string(k)])),
                           lookup: lookup, budget: budget).allowed
        }
        XCTAssertEqual(["a", "b", "a", "c", "d"].map(create), [true, true, true, true, false], "the fourth distinct read is refused")
        let other = try RulesTestSupport.rules("exists(/databases/other/documents/u/a)", methods: "create")
        XCTAssertFalse(other.evaluate(RulesRequest(method: .create, path: ["c", "x"], newData: MapValue()), lookup: lookup).allowed)
        let slash = try RulesTestSupport.rules("exists(/databases/$(database)/documents/u/$(request.resource.data.k))", methods: "create")
        XCTAssertFalse(slash.evaluate(RulesRequest(method: .create, path: ["c", "x"], newData: MapValue(["k": .string("a/b/c")])),
                                      lookup: lookup).allowed)
    }

    func testCollectionGroupsNeedRulesVersionTwo() throws {
        for (version, allowed) in [("rules_version = '2';", true), ("", false)] {
            let rules = try Rules(source: "\(version) service cloud.firestore { match /databases/{d}/documents { match /{p=**}/c/{id} { allow list; } } }")
            var r = RulesRequest(method: .list, path: ["c"])
            r.collectionGroup = true
            XCTAssertEqual(rules.evaluate(r).allowed, allowed, version)
        }
    }
}

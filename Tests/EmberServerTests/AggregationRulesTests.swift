import EmberFirestoreProto
import EmberModel
import EmberWire
@testable import EmberServer
import XCTest

/// AggregationRules and the sum/avg order WireQuery gives an aggregation (each expectation is
/// what the Firestore emulator answers to the same request).
final class AggregationRulesTests: XCTestCase {
    static func afterName(_ fields: String) -> String {
        "This query requires an index that has fields [\(fields)] after __name__ and Firestore does not currently support such an index. Please try the query again with additional ordering on those fields."
    }

    func testTheList() {
        let q = W.query()
        XCTAssertEqual(W.refusal(q, aggregations: []), "Aggregations can not be empty.")
        XCTAssertEqual(W.refusal(q, aggregations: [W.sum("n", "x"), W.avg("n", "x")]), "Aggregation aliases contain duplicate alias: x.")
        XCTAssertEqual(W.refusal(q, aggregations: [W.count(""), W.count("field_1")]), "Aggregation aliases contain duplicate alias: field_1.")
        XCTAssertEqual(W.refusal(q, aggregations: [W.count("y"), W.count("y"), W.count("__x__")]), "The property.name \"__x__\" is reserved.",
                       "every alias is read before duplicates are looked for")
        XCTAssertEqual(W.refusal(q, aggregations: [W.sum("__name__", "x"), W.count("x")]), "Aggregations are not supported for the property: __key__")
        XCTAssertEqual(W.refusal(q, aggregations: [W.count("x"), W.count("x"), W.sum("a..b", "y")]), WireQueryRulesTests.badPath("a..b"))
        XCTAssertEqual(W.refusal(q, aggregations: [W.count("c", upTo: -1)]),
                       "The `up_to` value in a COUNT aggregation must be greater than or equal to zero.")
        XCTAssertNil(W.refusal(q, aggregations: [W.count("c", upTo: 0)]))
        XCTAssertEqual(W.refusal(W.query(limit: -1), aggregations: [W.count("x"), W.count("x")]), "Aggregation aliases contain duplicate alias: x.",
                       "the list is checked before offset and limit")
        XCTAssertEqual(W.refusal(W.query(W.field("a..b", .equal, W.int(1))), aggregations: [W.count("x"), W.count("x")]), WireQueryRulesTests.badPath("a..b"))
    }

    func testSumAndAvgFieldsBeforeTheName() {
        XCTAssertEqual(W.refusal(W.query(order: ["__name__"]), aggregations: [W.sum("n", "s")]), Self.afterName("n"))
        XCTAssertEqual(W.refusal(W.query(order: ["__name__"]), aggregations: [W.sum("n", "s"), W.avg("m", "a")]), Self.afterName("m, n"))
        XCTAssertEqual(W.refusal(W.query(W.field("__name__", .greaterThan, W.ref("c/d"))), aggregations: [W.sum("n", "s")]), Self.afterName("n"),
                       "an inequality on the name orders by it")
        XCTAssertEqual(W.refusal(W.query(order: ["__name__", "a"]), aggregations: [W.sum("n", "s")]), Self.afterName("n"),
                       "before the order-by rules")
        XCTAssertNil(W.refusal(W.query(order: ["n", "__name__"]), aggregations: [W.sum("n", "s")]))
        XCTAssertNil(W.refusal(W.query(order: ["__name__"]), aggregations: [W.count("c")]))
    }

    func order(_ sq: StructuredQuery, _ aggregations: [WireAggregation]) throws -> [String] {
        try WireQuery(parent: W.parent, structured: sq, aggregations: aggregations).query.normalizedOrderBy
            .map { $0.field.canonical + ($0.descending ? " desc" : "") }
    }

    func testSumAndAvgOrderTheQueryByTheirFields() throws {
        XCTAssertEqual(try order(W.query(limit: 2), [W.sum("n", "s"), W.count("c")]), ["n", "__name__"])
        XCTAssertEqual(try order(W.query(order: ["s"], descending: true), [W.sum("n", "s")]), ["s desc", "n desc", "__name__ desc"],
                       "in the direction of the last order-by")
        XCTAssertEqual(try order(W.query(W.field("g", .greaterThan, W.int(0))), [W.sum("n", "s")]), ["g", "n", "__name__"],
                       "after the inequality fields")
        XCTAssertEqual(try order(W.query(), [W.sum("n", "s"), W.avg("m", "a")]), ["m", "n", "__name__"], "sorted")
        XCTAssertEqual(try order(W.query(order: ["n"]), [W.sum("n", "s")]), ["n", "__name__"])
        XCTAssertEqual(try order(W.query(), [W.count("c")]), ["__name__"], "count alone keeps the query")
    }

    /// Aliases whose names Swift finds canonically equivalent ("\u{E9}", "e\u{301}") are two
    /// aliases with two results; the same bytes twice are refused.
    func testAliasesDifferingOnlyInNormalizationAreTwo() throws {
        let a = "\u{E9}", b = "e\u{301}"
        XCTAssertNil(W.refusal(W.query(), aggregations: [W.count(a), W.count(b)]))
        XCTAssertNotNil(W.refusal(W.query(), aggregations: [W.count(a), W.count(a)]))
        let r = try Aggregations([W.count(a), W.sum("n", b)]).evaluate([W.doc("x", ["n": .int(5)])], codec: WireCodec(db: W.db))
        XCTAssertEqual(r.map { Array($0.key.utf8) }, [Array(a.utf8), Array(b.utf8)])
        XCTAssertEqual(r.map { $0.value.integerValue }, [1, 5])
    }

    /// A reserved name in a field path is refused however it is written, `\_` escapes included.
    func testReservedNamesInFieldPathsAreRefusedWhenEscaped() {
        XCTAssertThrowsError(try WireDataRules.check(fieldPath: "__x__"))
        XCTAssertThrowsError(try WireDataRules.check(fieldPath: "`_\\_x_\\_`"))
        XCTAssertThrowsError(try WireDataRules.check(fieldPath: "a.`\\_\\_y\\_\\_`"))
        XCTAssertNoThrow(try WireDataRules.check(fieldPath: "a.`_x`"))
    }

    func testOnlyDocumentsHavingTheFieldsAreAggregated() throws {
        let docs = [W.doc("a", ["n": .int(1), "m": .int(5)]), W.doc("b", ["n": .int(2)]), W.doc("c", ["n": .int(-10), "m": .int(1)]),
                    W.doc("d", ["m": .int(3)]), W.doc("e", ["n": .string("x")])]
        func run(_ sq: StructuredQuery, _ aggregations: [WireAggregation]) throws -> [Google_Firestore_V1_MapField] {
            let wq = try WireQuery(parent: W.parent, structured: sq, aggregations: aggregations)
            let matching = docs.filter { wq.query.matches($0) }.sorted { Query.compare($0, $1, orderBy: wq.query.normalizedOrderBy) < 0 }
            let limited = wq.query.limit.map { Array(matching.prefix($0)) } ?? matching
            return try Aggregations(aggregations).evaluate(wq.window(limited), codec: WireCodec(db: W.db))
        }
        let all = try run(W.query(), [W.sum("n", "s"), W.count("c")])
        XCTAssertEqual(all["s"]?.integerValue, -7)
        XCTAssertEqual(all["c"]?.integerValue, 4, "d has no n")
        let lowest = try run(W.query(limit: 2), [W.sum("n", "s"), W.count("c")])
        XCTAssertEqual(lowest["s"]?.integerValue, -9, "a limit keeps the lowest values")
        let both = try run(W.query(), [W.sum("n", "s"), W.avg("m", "a"), W.count("c")])
        XCTAssertEqual(both["c"]?.integerValue, 2, "two fields keep the documents having both")
        XCTAssertEqual(both["s"]?.integerValue, -9)
        let capped = try run(W.query(), [W.count("c", upTo: 0)])
        XCTAssertEqual(capped["c"]?.integerValue, 0)
    }
}

import EmberFirestoreProto
import EmberModel
@testable import EmberServer
import XCTest

/// WireQueryRules: the Firestore backend's query rules, with its messages and in its order (each
/// expectation is what the Firestore emulator answers to the same request).
final class WireQueryRulesTests: XCTestCase {
    let neq1 = W.field("a", .notEqual, W.int(1)), neq2 = W.field("b", .notEqual, W.int(1))
    let badPath = W.field("a..b", .equal, W.int(1))
    let keyString = W.field("__name__", .equal, W.str("d"))
    let twoArrayContains = [W.field("b", .arrayContains, W.int(1)), W.field("b", .arrayContains, W.int(2))]
    var or31: StructuredQuery.Filter { W.composite(.or, (0..<31).map { W.field("a", .equal, W.int($0)) }) }

    static let single = "Only a single 'NOT_EQUAL', 'NOT_IN', 'IS_NOT_NAN', or 'IS_NOT_NULL' filter allowed per query."
    static let notIn = "'NOT_IN' cannot be used in the same query with 'IN', 'ARRAY_CONTAINS_ANY' or 'OR'."
    static let oneArrayContains = "A maximum of 1 'ARRAY_CONTAINS' filter is allowed per disjunction."
    static let notAKey = "__key__ filter value must be a Key"
    static let keyReserved = "the name __key__ is reserved"
    static func badPath(_ p: String) -> String {
        "Invalid property path \"\(p)\". Unquoted property paths must match regex ([a-zA-Z_][a-zA-Z_0-9]*), and quoted property paths must match regex (`(?:[^`\\\\]|(?:\\\\.))+`)"
    }
    static func disjunctions(_ n: Int) -> String {
        "Too many disjunctions after normalization. Result had \(n) disjunctions which is more than the maximum of 30"
    }

    func testOneNegationPerQueryWhereverItIs() {
        XCTAssertEqual(W.refusal(W.query(W.and(neq1, neq2))), Self.single)
        XCTAssertEqual(W.refusal(W.query(W.and(neq1, neq1))), Self.single, "the same filter twice counts twice")
        XCTAssertEqual(W.refusal(W.query(W.or(neq1, neq2))), Self.single, "OR branches count too")
        XCTAssertEqual(W.refusal(W.query(W.and(W.unary("a", .isNotNull), W.unary("b", .isNotNan)))), Self.single)
        XCTAssertEqual(W.refusal(W.query(W.and(W.field("a", .notIn, W.ints(0..<1)), W.field("b", .notIn, W.ints(0..<1))))), Self.single)
        XCTAssertEqual(W.refusal(W.query(W.and(neq1, neq2, badPath))), Self.single, "read before anything else")
    }

    func testNotInExcludesInArrayContainsAnyAndOr() {
        let notIn = W.field("a", .notIn, W.ints(0..<1))
        XCTAssertEqual(W.refusal(W.query(W.and(notIn, W.field("b", .in, W.ints(0..<1))))), Self.notIn)
        XCTAssertEqual(W.refusal(W.query(W.and(W.field("b", .arrayContainsAny, W.ints(0..<1)), notIn))), Self.notIn)
        XCTAssertEqual(W.refusal(W.query(W.and(notIn, W.or(W.field("b", .equal, W.int(1)))))), Self.notIn, "even an OR of one filter")
        XCTAssertEqual(W.refusal(W.query(W.and(W.field("a", .in, W.ints(0..<31)), W.field("b", .notIn, W.ints(0..<1))))), Self.notIn,
                       "before the list's size")
        XCTAssertNil(W.refusal(W.query(W.and(notIn, W.and(W.field("b", .equal, W.int(1)))))))
    }

    func testListOperands() {
        XCTAssertEqual(W.refusal(W.query(W.field("a", .in, W.int(1)))), "'IN' requires an ArrayValue.")
        XCTAssertEqual(W.refusal(W.query(W.field("a", .in, W.list([])))), "'IN' requires an non-empty ArrayValue.")
        XCTAssertEqual(W.refusal(W.query(W.field("b", .arrayContainsAny, W.list([])))), "'ARRAY_CONTAINS_ANY' requires an non-empty ArrayValue.")
        XCTAssertEqual(W.refusal(W.query(W.field("a", .in, W.ints(0..<31)))), "'IN' supports up to 30 comparison values.")
        XCTAssertEqual(W.refusal(W.query(W.field("a", .in, W.list(Array(repeating: W.int(1), count: 31))))),
                       "'IN' supports up to 30 comparison values.", "repeated values count")
        XCTAssertEqual(W.refusal(W.query(W.field("a", .notIn, W.ints(0..<11)))), "'NOT_IN' supports up to 10 comparison values.")
        XCTAssertNil(W.refusal(W.query(W.field("a", .in, W.ints(0..<30)))))
    }

    func testPropertyPathsAsTheBackendReadsThem() {
        for bad in ["a..b", ".a", "a.", "1a", "a-b", "é", "``", "`a`b", "`a", "`a\\"] {
            XCTAssertEqual(W.refusal(W.query(W.field(bad, .equal, W.int(1)))), Self.badPath(bad), bad)
        }
        XCTAssertEqual(W.refusal(W.query(W.field("", .equal, W.int(1)))), "Invalid empty property path string.")
        XCTAssertEqual(W.refusal(W.query(W.field("a.__x__", .equal, W.int(1)))), "Invalid reserved name in field path __x__")
        XCTAssertEqual(W.refusal(W.query(order: ["`__x__`"])), "Invalid reserved name in field path __x__")
        XCTAssertEqual(try WirePropertyPath.parse("a.`b c`.`d\\`e`").segments, ["a", "b c", "d`e"])
        XCTAssertEqual(try WirePropertyPath.parse("`__name__`"), .documentId)
        var sq = W.query()
        var sel = StructuredQuery.FieldReference(); sel.fieldPath = "x..y"
        sq.select.fields = [sel]
        sq.where = badPath
        XCTAssertEqual(W.refusal(sq), Self.badPath("a..b"), "the filters are read before select")
        sq.clearWhere()
        sq.orderBy = W.query(order: ["c..d"]).orderBy
        XCTAssertEqual(W.refusal(sq), Self.badPath("x..y"), "select before the order-bys")
    }

    func testCursorsAgainstTheGivenOrderBys() {
        var sq = W.query(order: ["a"])
        sq.startAt = W.cursor(W.int(1), W.ref("c/d"))
        XCTAssertEqual(W.refusal(sq), "Cursor has too many values.", "implicit order-bys take no cursor value")
        sq = W.query(order: ["__name__"])
        sq.startAt = W.cursor(W.str("d"))
        XCTAssertEqual(W.refusal(sq), "Cursor __key__ value is not a document reference.")
        sq.startAt = W.cursor(W.ref("other/d"))
        XCTAssertNil(W.refusal(sq), "a document of another collection positions like any other")
    }

    func testOffsetThenLimit() {
        XCTAssertEqual(W.refusal(W.query(limit: -1, offset: -1)), "offset is negative")
        XCTAssertEqual(W.refusal(W.query(limit: -1)), "limit is negative")
        XCTAssertEqual(W.refusal(W.query(badPath, limit: -1)), Self.badPath("a..b"), "paths are read first")
        XCTAssertEqual(W.refusal(W.query(keyString, limit: -1)), "limit is negative", "before the key's operands")
    }

    func testFiltersAndOrdersTotal() {
        let eq = { (n: Int) in (0..<n).map { W.field("g\($0)", .equal, W.int(1)) } }
        XCTAssertEqual(W.refusal(W.query(W.composite(.and, eq(100)), order: ["z"])),
                       "The query may not have more than 100 filters + sort orders + ancestor total. Currently there are 100 filters, 1 sort orders, and no ancestor filter.")
        XCTAssertEqual(W.refusal(W.query(W.composite(.and, eq(100))), parent: W.parent + "/c/a"),
                       "The query may not have more than 100 filters + sort orders + ancestor total. Currently there are 100 filters, 0 sort orders, and one ancestor filter.")
        XCTAssertEqual(W.refusal(W.query(W.and(W.field("n", .notIn, W.ints(0..<10)), W.composite(.and, eq(91))))),
                       "The query may not have more than 100 filters + sort orders + ancestor total. Currently there are 101 filters, 0 sort orders, and no ancestor filter.",
                       "a list counts each value")
        XCTAssertNil(W.refusal(W.query(W.composite(.and, eq(100)))))
        XCTAssertNil(W.refusal(W.query(W.composite(.or, Array(repeating: W.field("a", .equal, W.int(1)), count: 101)))), "equal siblings count once")
    }

    func testOneArrayContainsPerDisjunction() {
        XCTAssertEqual(W.refusal(W.query(W.composite(.and, twoArrayContains))), Self.oneArrayContains)
        XCTAssertEqual(W.refusal(W.query(W.and(W.field("b", .arrayContainsAny, W.ints(0..<1)), W.field("b", .arrayContainsAny, W.ints(1..<2))))),
                       Self.oneArrayContains)
        let ac1 = W.field("b", .arrayContains, W.int(1))
        XCTAssertEqual(W.refusal(W.query(W.and(ac1, W.or(ac1, W.field("a", .equal, W.int(1)))))), Self.oneArrayContains, "counted on the tree")
        XCTAssertNil(W.refusal(W.query(W.composite(.or, twoArrayContains))))
        XCTAssertNil(W.refusal(W.query(W.and(ac1, ac1))), "the same filter twice is one")
        XCTAssertEqual(W.refusal(W.query(W.composite(.and, twoArrayContains + [keyString]))), Self.oneArrayContains, "before the key's operands")
    }

    func testKeyFilters() throws {
        XCTAssertEqual(W.refusal(W.query(keyString)), Self.notAKey)
        XCTAssertEqual(W.refusal(W.query(W.field("__name__", .in, W.list([W.ref("c/a"), W.str("x")])))), Self.notAKey)
        XCTAssertEqual(W.refusal(W.query(W.unary("__name__", .isNull))), Self.notAKey)
        XCTAssertEqual(W.refusal(W.query(W.field("__name__", .arrayContains, W.ref("c/a")))), Self.keyReserved)
        XCTAssertEqual(W.refusal(W.query(W.field("a.__name__", .equal, W.int(1)))), Self.keyReserved)
        XCTAssertEqual(W.refusal(W.query(W.and(or31, keyString))), Self.notAKey, "before the disjunctions")
        // A reference of another collection, or below this one, is compared by path.
        let other = try WireQuery(parent: W.parent, structured: W.query(W.field("__name__", .equal, W.ref("other/d"))))
        XCTAssertFalse(other.query.matches(W.doc("d", [:])))
        let below = try WireQuery(parent: W.parent, structured: W.query(W.field("__name__", .greaterThan, W.ref("c/a/sub/x"))))
        XCTAssertFalse(below.query.matches(W.doc("a", [:])))
        XCTAssertTrue(below.query.matches(W.doc("b", [:])))
    }

    func testDisjunctionsOfTheNormalForm() throws {
        XCTAssertEqual(W.refusal(W.query(or31)), Self.disjunctions(31))
        XCTAssertEqual(W.refusal(W.query(W.and(W.field("a", .in, W.ints(0..<6)), W.field("b", .in, W.ints(0..<6))))), Self.disjunctions(36))
        XCTAssertEqual(W.refusal(W.query(W.and(W.field("a", .in, W.ints(0..<8)), W.field("b", .in, W.list((0..<8).map { W.dbl(Double($0)) }))))),
                       "Too many disjunctions after normalization, the maximum is 30", "an AND past 60 terms stops")
        XCTAssertEqual(W.refusal(W.query(W.and(W.field("a", .in, W.list((0..<8).map(W.int) + (0..<8).map { W.dbl(Double($0)) })),
                                               W.field("b", .in, W.ints(0..<2))))), Self.disjunctions(32), "1 is not 1.0")
        XCTAssertNil(W.refusal(W.query(W.and(W.field("a", .in, W.ints(0..<10)), W.field("a", .in, W.ints(0..<10))))), "equal siblings once")
        // Equal terms once: 30 disjunctions, though Ember's Query alone would count 31.
        let wq = try WireQuery(parent: W.parent, structured: W.query(W.or(W.field("a", .in, W.ints(0..<30)), W.field("a", .equal, W.int(0)))))
        XCTAssertTrue(wq.query.matches(W.doc("x", ["a": .int(0)])))
        XCTAssertTrue(wq.query.matches(W.doc("y", ["a": .int(29)])))
        XCTAssertFalse(wq.query.matches(W.doc("z", ["a": .int(30)])))
    }

    func testKeyEqualityBesideAnInequality() {
        let keyEq = W.field("__name__", .equal, W.ref("c/a"))
        let message = "Equality on key is not allowed if there are other inequality fields and key does not appear in inequalities."
        XCTAssertEqual(W.refusal(W.query(W.and(W.field("a", .greaterThan, W.int(0)), keyEq))), message)
        XCTAssertEqual(W.refusal(W.query(W.or(W.unary("a", .isNotNull), keyEq))), message)
        XCTAssertNil(W.refusal(W.query(W.and(W.field("a", .greaterThan, W.int(0)), W.field("__name__", .greaterThan, W.ref("c/0")), keyEq))))
        XCTAssertNil(W.refusal(W.query(W.and(W.unary("a", .isNan), keyEq))))
        XCTAssertEqual(W.refusal(W.query(W.and(W.field("a", .greaterThan, W.int(0)), keyEq, or31))), Self.disjunctions(31), "after the disjunctions")
    }

    func testOrderBys() {
        XCTAssertEqual(W.refusal(W.query(order: ["s", "s"])), "order by clause cannot contain duplicate fields s")
        XCTAssertEqual(W.refusal(W.query(order: ["__name__", "a"])), "order by clause cannot contain more fields after the key")
        XCTAssertEqual(W.refusal(W.query(order: ["__name__", "__name__"])), "order by clause cannot contain more fields after the key")
        XCTAssertEqual(W.refusal(W.query(order: ["a", "a", "__name__", "b"])), "order by clause cannot contain duplicate fields a")
        XCTAssertEqual(W.refusal(W.query(or31, order: ["a", "a"])), Self.disjunctions(31), "the last rule")
        XCTAssertEqual(W.refusal(W.query(keyString, order: ["a", "a"])), Self.notAKey)
    }

    func testOperandsAreNotDocumentData() throws {
        // `in [[1, 2]]` holds an array inside an array: refused in a document, taken as an operand.
        let wq = try WireQuery(parent: W.parent, structured: W.query(W.field("n", .in, W.list([W.list([W.int(1), W.int(2)])]))))
        XCTAssertTrue(wq.query.matches(W.doc("j", ["n": .array([.int(1), .int(2)])])))
        XCTAssertFalse(wq.query.matches(W.doc("k", ["n": .int(1)])))
        XCTAssertNil(W.refusal(W.query(W.field("n", .equal, W.list([W.list([W.int(1)])])))))
    }

    /// Filters on fields whose names Swift finds canonically equivalent ("\u{E9}", "e\u{301}")
    /// are two filters: the simplification that keeps equal filters once must keep both.
    func testFiltersOnFieldsDifferingOnlyInNormalizationAreBothKept() throws {
        let a = "\u{E9}", b = "e\u{301}"
        let sq = W.query(W.and(W.field("`\(a)`", .equal, W.int(1)), W.field("`\(b)`", .equal, W.int(1))))
        let q = try WireQuery(parent: W.parent, structured: sq, aggregations: nil).query
        XCTAssertFalse(q.matches(W.doc("d", [a: .int(1)])), "the filter on e\\u{301} was dropped")
        let both = Document(key: W.db.key(ResourcePath(segments: ["c", "d"])),
                            data: MapValue(uniqueEntries: [(key: a, value: .int(1)), (key: b, value: .int(1))])!,
                            version: 1, createTime: 1, updateTime: 1)
        XCTAssertTrue(q.matches(both))
        // An `in` list keeps operands that are equal Swift Strings but different bytes (two
        // orders of the same combining marks have the same length).
        let x = "a\u{301}\u{323}", y = "a\u{323}\u{301}"
        let inList = try WireQuery(parent: W.parent, structured: W.query(W.field("s", .in, W.list([W.str(x), W.str(y)]))), aggregations: nil).query
        XCTAssertTrue(inList.matches(W.doc("d", ["s": .string(y)])))
        XCTAssertTrue(inList.matches(W.doc("d", ["s": .string(x)])))
    }
}

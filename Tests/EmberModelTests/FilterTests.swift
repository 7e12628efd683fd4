// Tests for Filter.swift: every operator against documents (docs/semantics.md 2 and 4), composites,
// and operator parsing.
import XCTest
@testable import EmberModel

final class FilterTests: XCTestCase {

    func f(_ field: String, _ op: FilterOperator, _ value: Value) -> Filter {
        .field(FieldFilter(field: fp(field), op: op, value: value))
    }

    /// One document per interesting value of field "v", plus one without it.
    let docs: [String: Document] = [
        "missing": doc("c/missing", ["other": .int(1)]),
        "null": doc("c/null", ["v": .null]),
        "false": doc("c/false", ["v": .bool(false)]),
        "true": doc("c/true", ["v": .bool(true)]),
        "nan": doc("c/nan", ["v": .double(.nan)]),
        "int0": doc("c/int0", ["v": .int(0)]),
        "negzero": doc("c/negzero", ["v": .double(-0.0)]),
        "int1": doc("c/int1", ["v": .int(1)]),
        "double1": doc("c/double1", ["v": .double(1.0)]),
        "int2": doc("c/int2", ["v": .int(2)]),
        "double2.5": doc("c/double2.5", ["v": .double(2.5)]),
        "ts": doc("c/ts", ["v": ts(5)]),
        "a": doc("c/a", ["v": str("a")]),
        "b": doc("c/b", ["v": str("b")]),
        "bytes": doc("c/bytes", ["v": .bytes([1])]),
        "ref": doc("c/ref", ["v": ref("x/y")]),
        "geo": doc("c/geo", ["v": geo(1, 2)]),
        "arr": doc("c/arr", ["v": arr(.int(1), str("a"))]),
        "arr1.0": doc("c/arr1.0", ["v": arr(.double(1.0))]),
        "arrnan": doc("c/arrnan", ["v": arr(.double(.nan), .null)]),
        "map": doc("c/map", ["v": map(["k": .int(1)])]),
    ]

    func matching(_ filter: Filter) -> Set<String> {
        Set(docs.filter { filter.matches($0.value) }.map { $0.key })
    }

    func testEqualCompareNumbersNumerically() {
        XCTAssertEqual(matching(f("v", .equal, .int(1))), ["int1", "double1"])
        XCTAssertEqual(matching(f("v", .equal, .double(1.0))), ["int1", "double1"])
        XCTAssertEqual(matching(f("v", .equal, .int(0))), ["int0", "negzero"])
        XCTAssertEqual(matching(f("v", .equal, .double(.nan))), ["nan"])
        XCTAssertEqual(matching(f("v", .equal, .null)), ["null"])
        XCTAssertEqual(matching(f("v", .equal, str("a"))), ["a"])
        XCTAssertEqual(matching(f("v", .equal, arr(.int(1), str("a")))), ["arr"])
        XCTAssertEqual(matching(f("v", .equal, arr(.int(1)))), ["arr1.0"], "arrays compare by order too")
        XCTAssertEqual(matching(f("v", .equal, map(["k": .double(1)]))), ["map"])
        XCTAssertEqual(matching(f("v", .equal, .bool(false))), ["false"])
    }

    func testRangeOperatorsOnlyMatchTheSameTypeGroup() {
        // NaN is in no range (the Firestore emulator's answer, see EmulatorDifferentialTests).
        XCTAssertEqual(matching(f("v", .lessThan, .int(2))), ["int0", "negzero", "int1", "double1"])
        XCTAssertEqual(matching(f("v", .lessThanOrEqual, .int(2))), ["int0", "negzero", "int1", "double1", "int2"])
        XCTAssertEqual(matching(f("v", .greaterThanOrEqual, .double(-.infinity))), ["int0", "negzero", "int1", "double1", "int2", "double2.5"])
        XCTAssertEqual(matching(f("v", .greaterThan, .int(1))), ["int2", "double2.5"])
        XCTAssertEqual(matching(f("v", .greaterThanOrEqual, .double(1))), ["int1", "double1", "int2", "double2.5"])
        XCTAssertEqual(matching(f("v", .greaterThan, .double(-.infinity))), ["int0", "negzero", "int1", "double1", "int2", "double2.5"])
        XCTAssertEqual(matching(f("v", .lessThan, str("b"))), ["a"])
        XCTAssertEqual(matching(f("v", .greaterThanOrEqual, str(""))), ["a", "b"])
        XCTAssertEqual(matching(f("v", .greaterThan, .bool(false))), ["true"])
        XCTAssertEqual(matching(f("v", .lessThan, ts(6))), ["ts"])
        XCTAssertEqual(matching(f("v", .greaterThan, .bytes([]))), ["bytes"])
        XCTAssertEqual(matching(f("v", .greaterThan, ref("a/a"))), ["ref"])
        XCTAssertEqual(matching(f("v", .lessThan, geo(90, 0))), ["geo"])
        XCTAssertEqual(matching(f("v", .greaterThan, arr())), ["arr", "arr1.0", "arrnan"])
        XCTAssertEqual(matching(f("v", .greaterThanOrEqual, .map(MapValue()))), ["map"])
    }

    func testNotEqualExcludesMissingAndNullButIncludesNaN() {
        let all = Set(docs.keys)
        XCTAssertEqual(matching(f("v", .notEqual, .int(1))), all.subtracting(["missing", "null", "int1", "double1"]))
        XCTAssertTrue(matching(f("v", .notEqual, .int(1))).contains("nan"))
        XCTAssertEqual(matching(f("v", .notEqual, .null)), all.subtracting(["missing", "null"]))
        XCTAssertEqual(matching(f("v", .notEqual, .double(.nan))), all.subtracting(["missing", "null", "nan"]))
        XCTAssertEqual(matching(f("v", .notEqual, str("a"))), all.subtracting(["missing", "null", "a"]))
        XCTAssertEqual(matching(f("v", .notEqual, .double(0))), all.subtracting(["missing", "null", "int0", "negzero"]))
    }

    func testNotInExcludesMissingAndNullButIncludesNaN() {
        let all = Set(docs.keys)
        XCTAssertEqual(matching(f("v", .notIn, arr(.int(1), str("a")))), all.subtracting(["missing", "null", "int1", "double1", "a"]),
                       "numbers compare numerically: int 1 also excludes double 1.0")
        XCTAssertTrue(matching(f("v", .notIn, arr(.int(5)))).contains("nan"))
        XCTAssertEqual(matching(f("v", .notIn, arr(.double(.nan)))), all.subtracting(["missing", "null"]),
                       "NaN equals nothing at the top level, so not-in [NaN] keeps NaN")
    }

    func testNotInNullMatchesNothing() {
        XCTAssertEqual(matching(f("v", .notIn, arr(.null))), [])
        XCTAssertEqual(matching(f("v", .notIn, arr(.int(1), .null))), [])
    }

    // `in`, `not-in`, `array-contains` and `array-contains-any` follow the Firestore emulator
    // (docs/semantics.md 2 says to check it; EmulatorDifferentialTests asks it): numbers compare
    // numerically, and a top-level null or NaN equals nothing; inside arrays values compare by order.

    func testInComparesNumbersNumerically() {
        XCTAssertEqual(matching(f("v", .in, arr(.int(1), str("b")))), ["int1", "double1", "b"])
        XCTAssertEqual(matching(f("v", .in, arr(.double(1.0)))), ["int1", "double1"])
        XCTAssertEqual(matching(f("v", .in, arr(.double(.nan)))), [])
        XCTAssertEqual(matching(f("v", .in, arr(.null))), [])
        XCTAssertEqual(matching(f("v", .in, arr(.int(0)))), ["int0", "negzero"])
        XCTAssertEqual(matching(f("v", .in, arr(arr(.double(1.0))))), ["arr1.0"])
        XCTAssertEqual(matching(f("v", .in, arr(arr(.int(1))))), ["arr1.0"])
        XCTAssertEqual(matching(f("v", .in, .int(1))), [], "a non-array operand matches nothing")
    }

    func testArrayContainsComparesNumbersNumerically() {
        XCTAssertEqual(matching(f("v", .arrayContains, .int(1))), ["arr", "arr1.0"])
        XCTAssertEqual(matching(f("v", .arrayContains, .double(1.0))), ["arr", "arr1.0"])
        XCTAssertEqual(matching(f("v", .arrayContains, str("a"))), ["arr"])
        XCTAssertEqual(matching(f("v", .arrayContains, .double(.nan))), [])
        XCTAssertEqual(matching(f("v", .arrayContains, .null)), [])
        XCTAssertEqual(matching(f("v", .arrayContains, str("z"))), [])
    }

    func testArrayContainsAnyComparesNumbersNumerically() {
        XCTAssertEqual(matching(f("v", .arrayContainsAny, arr(.int(1), .null))), ["arr", "arr1.0"])
        XCTAssertEqual(matching(f("v", .arrayContainsAny, arr(.double(1.0)))), ["arr", "arr1.0"])
        XCTAssertEqual(matching(f("v", .arrayContainsAny, arr(str("q")))), [])
        XCTAssertEqual(matching(f("v", .arrayContainsAny, .int(1))), [], "a non-array operand matches nothing")
    }

    func testMissingFieldNeverMatches() {
        let d = docs["missing"]!
        for op in FilterOperator.allCases {
            let value: Value = op.takesArray ? arr(.int(5)) : .int(5)
            XCTAssertFalse(f("v", op, value).matches(d), op.rawValue)
        }
    }

    func testNestedFieldsAndDocumentId() {
        let d = doc("cities/SF", ["address": map(["city": str("SF")])])
        XCTAssertTrue(f("address.city", .equal, str("SF")).matches(d))
        XCTAssertFalse(f("address.zip", .equal, str("SF")).matches(d))
        XCTAssertTrue(f("__name__", .equal, ref("cities/SF")).matches(d))
        XCTAssertTrue(f("__name__", .greaterThan, ref("cities/LA")).matches(d))
        XCTAssertFalse(f("__name__", .lessThan, ref("cities/LA")).matches(d))
        XCTAssertTrue(f("__name__", .in, arr(ref("cities/LA"), ref("cities/SF"))).matches(d))
        XCTAssertFalse(f("__name__", .equal, str("SF")).matches(d), "the id is a reference, not a string")
    }

    // MARK: composites

    func testAndComposite() {
        let and = Filter.composite(CompositeFilter(op: .and, filters: [f("v", .greaterThan, .int(0)), f("v", .lessThan, .int(2))]))
        XCTAssertEqual(matching(and), ["int1", "double1"])
        XCTAssertEqual(matching(.composite(CompositeFilter(op: .and, filters: []))), Set(docs.keys), "an empty AND matches everything")
    }

    func testOrComposite() {
        let or = Filter.composite(CompositeFilter(op: .or, filters: [f("v", .equal, str("a")), f("v", .equal, .int(2)), f("other", .equal, .int(1))]))
        XCTAssertEqual(matching(or), ["a", "int2", "missing"])
        XCTAssertEqual(matching(.composite(CompositeFilter(op: .or, filters: []))), [], "an empty OR matches nothing")
    }

    func testNestedComposites() {
        let inner = Filter.composite(CompositeFilter(op: .or, filters: [f("v", .equal, str("a")), f("v", .equal, str("b"))]))
        let outer = Filter.composite(CompositeFilter(op: .and, filters: [inner, f("v", .lessThan, str("b"))]))
        XCTAssertEqual(matching(outer), ["a"])
        XCTAssertEqual(outer.fieldFilters.count, 3)
        XCTAssertEqual(outer.fieldFilters.map { $0.op }, [.equal, .equal, .lessThan])
    }

    // MARK: operators

    func testOperatorParsing() throws {
        for op in FilterOperator.allCases { XCTAssertEqual(try FilterOperator(parsing: op.rawValue), op) }
        XCTAssertEqual(try FilterOperator(parsing: "array_contains"), .arrayContains)
        XCTAssertEqual(try FilterOperator(parsing: "array_contains_any"), .arrayContainsAny)
        XCTAssertEqual(try FilterOperator(parsing: "not_in"), .notIn)
        assertInvalid("'=~'", "array-contains-any") { try FilterOperator(parsing: "=~") }
        assertInvalid() { try FilterOperator(parsing: "") }
        assertInvalid() { try FilterOperator(parsing: "IN") }
    }

    func testOperatorClassification() {
        let inequalities = FilterOperator.allCases.filter { $0.isInequality }
        XCTAssertEqual(Set(inequalities), [.lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual, .notEqual, .notIn])
        let arrays = FilterOperator.allCases.filter { $0.takesArray }
        XCTAssertEqual(Set(arrays), [.in, .notIn, .arrayContainsAny])
    }
}

// Tests for Value+Order.swift: the total order of values (docs/semantics.md 1-3) and strict equality.
import XCTest
@testable import EmberModel

final class ValueOrderTests: XCTestCase {

    /// Groups in ascending order; values inside one group are order-equal (compare == 0).
    static let sortedGroups: [[Value]] = [
        [.null],
        [.bool(false)],
        [.bool(true)],
        [.double(.nan), .double(Double(bitPattern: 0x7FF8_0000_0000_0001)), .double(-Double.nan)],
        [.double(-.infinity)],
        [.int(Int64.min), .double(-9_223_372_036_854_775_808.0)],
        [.int(Int64.min + 1)],
        [.double(-1.5)],
        [.int(-1), .double(-1.0)],
        [.double(-Double.leastNonzeroMagnitude)],
        [.int(0), .double(0.0), .double(-0.0)],
        [.double(Double.leastNonzeroMagnitude)],
        [.double(0.5)],
        [.int(1), .double(1.0)],
        [.double(1.5)],
        [.int(9_007_199_254_740_992), .double(9_007_199_254_740_992.0)],   // 2^53
        [.int(9_007_199_254_740_993)],                                      // 2^53 + 1: no double has it
        [.int(9_007_199_254_740_994), .double(9_007_199_254_740_994.0)],
        [.double(9_223_372_036_854_774_784.0), .int(9_223_372_036_854_774_784)], // largest double below 2^63
        [.int(Int64.max - 1)],
        [.int(Int64.max)],
        [.double(9.223372036854776e18)],                                    // 2^63
        [.double(.infinity)],
        [ts(Timestamp.minMicros)],
        [ts(-1)],
        [ts(0)],
        [ts(1)],
        [ts(Timestamp.maxMicros)],
        [str("")],
        [str("A")],
        [str("a")],
        [str("ab")],
        [str("b")],
        [str("e\u{301}")],
        [str("\u{E9}")],
        [str("\u{FF61}")],
        [str("\u{1F600}")],
        [.bytes([])],
        [.bytes([0])],
        [.bytes([0, 1])],
        [.bytes([1])],
        [.bytes([255])],
        [ref("a/__id-9223372036854775808__")],                            // numeric ids first, by number
        [ref("a/__id-5__")],
        [ref("a/__id7__")],
        [ref("a/__id12__")],
        [ref("a/b")],
        [ref("a/b/c/d")],
        [ref("a/c")],
        [ref("a-b/c")],
        [ref("b/a")],
        [geo(-90, 180)],
        [geo(0, -180)],
        [geo(0, 0), geo(-0.0, -0.0)],
        [geo(0, 1)],
        [geo(90, -180)],
        [.array([])],
        [.array([.null])],
        [.array([.int(1)]), .array([.double(1.0)])],
        [.array([.int(1), .int(2)])],
        [.array([.int(1), str("a")])],
        [.array([.int(2)])],
        [.array([str("a")])],
        // Vectors, between arrays and maps: by length, then element by element.
        [vec(9.0)],
        [vec(-1.0, 5.0)],
        [vec(1.0, 2.0)],
        [vec(0.5, 0.5, 0.5)],
        [.map(MapValue())],
        [map(["a": .int(1)]), map(["a": .double(1)])],
        [map(["a": .int(1), "b": .int(0)])],
        [map(["a": .int(2)])],
        [map(["b": .int(0)])],
        [map(["\u{FF61}": .null])],
        [map(["\u{1F600}": .null])],
    ]

    func testSortedTableIsConsistentForEveryPair() {
        let flat: [(group: Int, value: Value)] = ValueOrderTests.sortedGroups.enumerated().flatMap { g in g.element.map { (g.offset, $0) } }
        XCTAssertGreaterThan(ValueOrderTests.sortedGroups.count, 30)
        for (gi, a) in flat {
            for (gj, b) in flat {
                let expected = gi < gj ? -1 : (gi > gj ? 1 : 0)
                let c = Value.compare(a, b)
                if c != expected {
                    XCTFail("compare(\(a), \(b)) = \(c), expected \(expected) (groups \(gi), \(gj))")
                }
            }
        }
    }

    func testSortingAShuffledTableRestoresItsOrder() {
        let flat = ValueOrderTests.sortedGroups.map { $0[0] }
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<5 {
            let sorted = flat.shuffled(using: &rng).sorted { Value.compare($0, $1) < 0 }
            XCTAssertEqual(sorted, flat)
        }
    }

    // MARK: cross-type order

    func testTypeOrderFollowsFirestore() {
        let oneOfEach: [Value] = [.null, .bool(true), .int(-5), .timestamp(Timestamp(micros: 0)), .string(""), .bytes([]),
                                  ref("a/b"), geo(0, 0), .array([]), vec(1), .map(MapValue())]
        XCTAssertEqual(oneOfEach.map { $0.typeOrder }, Array(0...10))
        XCTAssertEqual(map(["__type__": str("other"), "value": arr()]).typeOrder, 10, "only __vector__ makes a vector")
        XCTAssertEqual(Value.double(1).typeOrder, Value.int(1).typeOrder)
        for i in 0..<oneOfEach.count {
            for j in 0..<oneOfEach.count {
                XCTAssertEqual(Value.compare(oneOfEach[i], oneOfEach[j]), i < j ? -1 : (i > j ? 1 : 0), "\(oneOfEach[i]) vs \(oneOfEach[j])")
            }
        }
        // Type order wins over any value: the biggest number is below the smallest timestamp, etc.
        assertOrder(.bool(true), .double(-.infinity), -1)
        assertOrder(.double(.infinity), ts(Timestamp.minMicros), -1)
        assertOrder(.string("\u{1F600}\u{1F600}"), .bytes([]), -1)
        assertOrder(.bytes([255, 255]), ref("a/b"), -1)
        assertOrder(ref("z/z"), geo(-90, -180), -1)
        assertOrder(geo(90, 180), .array([]), -1)
        assertOrder(.array([map(["z": .int(1)])]), .map(MapValue()), -1)
    }

    func testTypePredicates() {
        XCTAssertTrue(Value.double(.nan).isNaN)
        XCTAssertFalse(Value.double(1).isNaN)
        XCTAssertFalse(Value.int(0).isNaN)
        XCTAssertTrue(Value.null.isNull)
        XCTAssertFalse(Value.bool(false).isNull)
        XCTAssertTrue(Value.int(1).isNumber)
        XCTAssertTrue(Value.double(.nan).isNumber)
        XCTAssertFalse(Value.string("1").isNumber)
    }

    // MARK: numbers

    func testMixedIntDoubleComparisonIsExact() {
        // Int64.max converts to 2^63 as a double; the exact comparison must still say it is smaller.
        assertOrder(.int(Int64.max), .double(9.223372036854776e18), -1)
        XCTAssertEqual(Double(Int64.max), 9.223372036854776e18, "the naive conversion would call them equal")
        // 2^53 + 1 rounds to 2^53 as a double but is bigger.
        assertOrder(.int(9_007_199_254_740_993), .double(9_007_199_254_740_992.0), 1)
        assertOrder(.int(-9_007_199_254_740_993), .double(-9_007_199_254_740_992.0), -1)
        assertOrder(.int(Int64.min), .double(-9_223_372_036_854_775_808.0), 0)
        assertOrder(.int(Int64.min), .double(-9.223372036854778e18), 1)      // next double below -2^63
        assertOrder(.int(5), .double(5.5), -1)
        assertOrder(.int(6), .double(5.5), 1)
        assertOrder(.int(-5), .double(-5.5), 1)
        assertOrder(.int(-6), .double(-5.5), -1)
        assertOrder(.int(0), .double(0.1), -1)
        assertOrder(.int(0), .double(-0.1), 1)
        assertOrder(.int(3), .double(3.0), 0)
        assertOrder(.int(Int64.max), .double(.infinity), -1)
        assertOrder(.int(Int64.min), .double(-.infinity), 1)
    }

    func testCompareMixedDirectly() {
        XCTAssertEqual(Value.compareMixed(Int64.max, 9.223372036854776e18), -1)
        XCTAssertEqual(Value.compareMixed(Int64.min, -9.223372036854775808e18), 0)
        XCTAssertEqual(Value.compareMixed(0, .nan), 1)
        XCTAssertEqual(Value.compareMixed(0, -0.0), 0)
        XCTAssertEqual(Value.compareMixed(1, 1.0000000000000002), -1)
        XCTAssertEqual(Value.compareMixed(1, 0.9999999999999999), 1)
    }

    func testNaNSortsFirstAndEqualsItself() {
        assertOrder(.double(.nan), .double(.nan), 0)
        assertOrder(.double(.nan), .double(-.infinity), -1)
        assertOrder(.double(.nan), .int(Int64.min), -1)
        assertOrder(.double(.nan), .bool(true), 1)
        XCTAssertEqual(Value.compareDoubles(.nan, .nan), 0)
        XCTAssertEqual(Value.compareDoubles(.nan, -.infinity), -1)
        XCTAssertEqual(Value.compareDoubles(-.infinity, .nan), 1)
    }

    func testNegativeZeroEqualsZeroForOrdering() {
        assertOrder(.double(-0.0), .double(0.0), 0)
        assertOrder(.double(-0.0), .int(0), 0)
        XCTAssertEqual(Value.compareDoubles(-0.0, 0.0), 0)
        assertOrder(.double(-0.0), .double(-Double.leastNonzeroMagnitude), 1)
    }

    // MARK: other types

    func testStringsCompareByUTF8Bytes() {
        assertOrder(str("\u{FF61}"), str("\u{1F600}"), -1)     // UTF-16 order is the opposite
        assertOrder(str("\u{E9}"), str("e\u{301}"), 1)          // precomposed and decomposed differ
        assertOrder(str("Z"), str("a"), -1)
        assertOrder(str("a"), str("a\u{0}"), -1)
        assertOrder(str("abc"), str("abd"), -1)
        assertOrder(str("\u{7F}"), str("\u{80}"), -1)
    }

    func testArraysCompareElementWiseThenByLength() {
        assertOrder(arr(.int(1), .int(2)), arr(.int(1), .int(3)), -1)
        assertOrder(arr(.int(2)), arr(.int(1), .int(3)), 1)
        assertOrder(arr(.int(1)), arr(.int(1), .null), -1)
        assertOrder(arr(.int(1), .int(2)), arr(.int(1), str("")), -1)   // element types follow the type order
        assertOrder(arr(.double(.nan)), arr(.int(Int64.min)), -1)
        assertOrder(arr(.int(1), .double(2)), arr(.double(1), .int(2)), 0)
        assertOrder(arr(), arr(), 0)
    }

    func testMapsCompareBySortedKeysThenValuesThenSize() {
        assertOrder(map(["a": .int(1), "c": .int(1)]), map(["b": .int(0)]), -1)          // key before size
        assertOrder(map(["a": .int(2)]), map(["a": .int(1), "z": .int(0)]), 1)            // value before size
        assertOrder(map(["a": .int(1)]), map(["a": .int(1), "b": .int(1)]), -1)           // then size
        assertOrder(map(["b": .int(1), "a": .int(1)]), map(["a": .int(1), "b": .int(2)]), -1) // keys are sorted first
        assertOrder(map(["\u{FF61}": .null]), map(["\u{1F600}": .null]), -1)              // keys by UTF-8
        assertOrder(map(["a": .int(1)]), map(["a": .double(1)]), 0)
        assertOrder(map(["a": map(["x": .int(1)])]), map(["a": map(["x": .int(2)])]), -1)
    }

    func testReferencesCompareSegmentBySegment() {
        // As whole strings "a-b/c" < "a/z" ('-' < '/'); segment by segment "a" < "a-b".
        assertOrder(ref("a/z"), ref("a-b/c"), -1)
        assertOrder(ref("a/b"), ref("a/b/c/d"), -1)
        assertOrder(ref("a/b/c/d"), ref("a/c"), -1)
        assertOrder(ref("c/\u{FF61}"), ref("c/\u{1F600}"), -1)
        assertOrder(ref("c/d"), ref("c/d"), 0)
    }

    func testGeoPointsCompareByLatitudeThenLongitude() {
        assertOrder(geo(1, 100), geo(2, -100), -1)
        assertOrder(geo(1, -100), geo(1, 100), -1)
        assertOrder(geo(1, 1), geo(1, 1), 0)
        assertOrder(geo(-0.0, 0), geo(0, -0.0), 0)
    }

    func testTimestampsCompareWithMicrosecondPrecision() {
        assertOrder(ts(1_000_000), ts(1_000_001), -1)
        assertOrder(.timestamp(Timestamp(seconds: 1, nanoseconds: 1_000)), .timestamp(Timestamp(seconds: 1, nanoseconds: 1_999)), 0)
        assertOrder(.timestamp(Timestamp(seconds: 1, nanoseconds: 1_999)), .timestamp(Timestamp(seconds: 1, nanoseconds: 2_000)), -1)
        assertOrder(ts(-1), ts(0), -1)
    }

    func testBytesCompareUnsigned() {
        assertOrder(.bytes([0x7F]), .bytes([0x80]), -1)
        assertOrder(.bytes([1, 2]), .bytes([1, 2, 0]), -1)
        assertOrder(.bytes([2]), .bytes([1, 255]), 1)
    }

    // MARK: strict equality

    func testStrictEqualityKeepsIntAndDoubleApart() {
        XCTAssertNotEqual(Value.int(1), Value.double(1.0))
        XCTAssertEqual(Value.compare(.int(1), .double(1.0)), 0, "but they are order-equal")
        XCTAssertNotEqual(Value.int(0), Value.double(0))
        XCTAssertEqual(Value.int(1), Value.int(1))
        XCTAssertEqual(Value.double(1.5), Value.double(1.5))
        XCTAssertNotEqual(arr(.int(1)), arr(.double(1)))
        XCTAssertNotEqual(map(["a": .int(1)]), map(["a": .double(1)]))
    }

    func testStrictEqualityNaNAndNegativeZero() {
        XCTAssertEqual(Value.double(.nan), Value.double(.nan))
        XCTAssertEqual(Value.double(.nan), Value.double(Double(bitPattern: 0x7FF8_0000_0000_0001)))
        XCTAssertNotEqual(Value.double(-0.0), Value.double(0.0))
        XCTAssertEqual(Value.double(-0.0), Value.double(-0.0))
        XCTAssertEqual(arr(.double(.nan)), arr(.double(.nan)))
        XCTAssertNotEqual(arr(.double(-0.0)), arr(.double(0.0)))
    }

    func testStrictEqualityOfOtherTypes() {
        XCTAssertEqual(Value.null, Value.null)
        XCTAssertNotEqual(Value.null, Value.bool(false))
        XCTAssertEqual(Value.bool(true), Value.bool(true))
        XCTAssertNotEqual(Value.bool(true), Value.bool(false))
        XCTAssertEqual(ts(5), ts(5))
        XCTAssertNotEqual(ts(5), ts(6))
        XCTAssertEqual(str("x"), str("x"))
        XCTAssertNotEqual(str("\u{E9}"), str("e\u{301}"), "strings are equal only byte for byte")
        XCTAssertEqual(Value.bytes([1, 2]), Value.bytes([1, 2]))
        XCTAssertNotEqual(Value.bytes([1, 2]), Value.bytes([1]))
        XCTAssertEqual(ref("a/b"), ref("a/b"))
        XCTAssertNotEqual(ref("a/b"), ref("a/c"))
        XCTAssertEqual(geo(1, 2), geo(1, 2))
        XCTAssertNotEqual(geo(1, 2), geo(2, 1))
        XCTAssertEqual(map(["a": arr(.int(1), str("x"))]), map(["a": arr(.int(1), str("x"))]))
        XCTAssertNotEqual(str("1"), Value.int(1))
        XCTAssertNotEqual(Value.bytes([]), str(""))
    }

    func testReferencesWithCanonicallyEquivalentIdsAreDifferent() {
        // Firestore compares ids by bytes: these are two documents. Strict equality must agree with the order.
        let a = ref("c/\u{E9}"), b = ref("c/e\u{301}")
        XCTAssertNotEqual(Value.compare(a, b), 0)
        XCTAssertNotEqual(a, b)
    }

    func testStrictEqualityImpliesOrderEquality() {
        for group in ValueOrderTests.sortedGroups {
            for a in group {
                for b in group where a == b {
                    XCTAssertEqual(Value.compare(a, b), 0)
                }
            }
        }
        let all = ValueOrderTests.sortedGroups.flatMap { $0 }
        for a in all { XCTAssertEqual(a, a, "\(a) equals itself") }
    }
}

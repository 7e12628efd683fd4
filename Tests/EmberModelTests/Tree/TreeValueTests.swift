import XCTest
@testable import EmberModel

/// Node values: set/get at paths, pruning, equality, arrays, value order (docs/semantics.md 16),
/// limits.
final class TreeValueTests: XCTestCase {
    func testSetAndPrune() {
        var v = TreeValue.null
        v.set(["a", "b", "c"], .int(1))
        v.set(["a", "d"], .string("x"))
        XCTAssertEqual(v.value(at: ["a", "b", "c"]), .int(1))
        v.set(["a", "b", "c"], .null)
        XCTAssertTrue(v.value(at: ["a", "b"]).isNull)
        XCTAssertEqual(v.childCount, 1)
        v.set(["a", "d"], .null)
        XCTAssertTrue(v.isNull)                     // empty objects disappear
        v.set(["x"], .int(5))
        v.set(["x", "y"], .bool(true))              // a leaf on the way becomes an object
        XCTAssertEqual(v.value(at: ["x", "y"]), .bool(true))
        v.set(["nothing", "here"], .null)
        XCTAssertNil(v.value(at: ["nothing"]).object)
    }

    func testCopyOnWriteKeepsSnapshots() {
        var v = TreeValue.null
        v.set(["list", "a"], .int(1))
        let snapshot = v
        v.set(["list", "b"], .int(2))
        XCTAssertEqual(snapshot.value(at: ["list"]).childCount, 1)
        XCTAssertEqual(v.value(at: ["list"]).childCount, 2)
        XCTAssertFalse(snapshot.isIdentical(to: v))
        let same = v
        XCTAssertTrue(same.isIdentical(to: v))
    }

    func testNumbersCompareNumerically() {
        XCTAssertEqual(TreeValue.int(1), TreeValue.double(1.0))
        XCTAssertLessThan(TreeValue.compareNumbers(.int(Int64.max), .double(9.3e18)), 0)
        XCTAssertGreaterThan(TreeValue.compareNumbers(.double(2.5), .int(2)), 0)
        XCTAssertEqual(TreeValue.compareNumbers(.int(9_007_199_254_740_993), .double(9_007_199_254_740_992)), 1)
    }

    func testValueOrderTable() {
        let ordered: [TreeValue] = [.null, .bool(false), .bool(true), .double(-1.5), .int(0), .double(0.5), .int(2), .string(""), .string("A"), .string("a"), .string("b")]
        for (i, a) in ordered.enumerated() {
            for (j, b) in ordered.enumerated() {
                let c = TreeValue.compareIndexed(a, b)
                XCTAssertEqual(c < 0, i < j, "\(a) vs \(b)")
                XCTAssertEqual(c == 0, i == j, "\(a) vs \(b)")
            }
        }
        let o1 = TreeValue.object(TreeObject(["x": .int(1)])), o2 = TreeValue.object(TreeObject(["y": .int(2)]))
        XCTAssertEqual(TreeValue.compareIndexed(o1, o2), 0)          // objects are equal to each other
        XCTAssertGreaterThan(TreeValue.compareIndexed(o1, .string("zzz")), 0)
    }

    func testTiesBrokenByKey() {
        let entries = [ChildEntry(key: "b", sortValue: .int(1)), ChildEntry(key: "a", sortValue: .int(1)), ChildEntry(key: "10", sortValue: .int(1)), ChildEntry(key: "2", sortValue: .int(1))]
        XCTAssertEqual(entries.sorted { ChildEntry.compare($0, $1) < 0 }.map { $0.key }, ["2", "10", "a", "b"])
    }

    func testArrayLength() {
        func obj(_ keys: [String]) -> TreeValue { .object(TreeObject(Dictionary(uniqueKeysWithValues: keys.map { ($0, TreeValue.int(1)) }))) }
        XCTAssertEqual(obj(["0", "1", "2"]).arrayLength, 3)
        XCTAssertEqual(obj(["0", "2"]).arrayLength, 3)                  // highest 2 < 2 x 2: a list with a hole
        XCTAssertNil(obj(["0", "7"]).arrayLength)                       // too sparse
        XCTAssertNil(obj(["00", "1"]).arrayLength)                      // not canonical
        XCTAssertNil(obj(["0", "a"]).arrayLength)
        XCTAssertEqual(obj(["1"]).arrayLength, 2)
    }

    func testWriteLimits() throws {
        var deep = TreeValue.int(1)
        for _ in 0..<31 { deep = .object(TreeObject(["d": deep])) }
        XCTAssertNoThrow(try TreeLimits.validate(deep, at: TreePath(parsing: "a")))
        XCTAssertThrowsError(try TreeLimits.validate(deep, at: TreePath(parsing: "a/b")))
        XCTAssertThrowsError(try TreeLimits.validate(.double(.nan), at: .root))
        XCTAssertThrowsError(try TreeLimits.validate(.double(.infinity), at: .root))
        XCTAssertThrowsError(try TreeLimits.validate(.object(TreeObject(["a.b": .int(1)])), at: .root))
        let ops = [TreeWriteOp(path: try TreePath(parsing: "a"), value: .int(1)), TreeWriteOp(path: try TreePath(parsing: "a/b"), value: .int(1))]
        XCTAssertThrowsError(try TreeLimits.validate(ops))
        XCTAssertNoThrow(try TreeLimits.validate([ops[1], TreeWriteOp(path: try TreePath(parsing: "a/c"), value: .int(1))]))
    }

    func testChildMatchingFindsTheChildWithTheSameBytes() {
        let long = String(repeating: "x", count: 30)
        let small = TreeObject(["score": .int(1), "title": .string("t"), "\u{E9}": .int(2), long: .int(3)])
        XCTAssertEqual(small.child(matching: UTF8String("score")), .int(1))
        XCTAssertEqual(small.child(matching: UTF8String("title")), .string("t"))
        XCTAssertEqual(small.child(matching: UTF8String("\u{E9}")), .int(2))
        XCTAssertTrue(small.child(matching: UTF8String("e\u{301}")).isNull, "canonically equivalent, other bytes")
        XCTAssertTrue(small.child(matching: UTF8String("scorf")).isNull)
        XCTAssertTrue(small.child(matching: UTF8String("")).isNull)
        // A long key from another storage: not identical, found by its bytes.
        XCTAssertEqual(small.child(matching: UTF8String(String(decoding: Array(long.utf8), as: UTF8.self))), .int(3))
        // More than 8 children: the hash lookup, with the same answers.
        var d: [String: TreeValue] = ["score": .int(1), "\u{E9}": .int(2)]
        for i in 0..<12 { d["f\(i)"] = .int(Int64(i)) }
        let large = TreeObject(d)
        XCTAssertEqual(large.child(matching: UTF8String("score")), .int(1))
        XCTAssertEqual(large.child(matching: UTF8String("\u{E9}")), .int(2))
        XCTAssertTrue(large.child(matching: UTF8String("e\u{301}")).isNull)
        XCTAssertEqual(large.child(matching: UTF8String("f11")), .int(11))
        XCTAssertTrue(TreeObject().child(matching: UTF8String("score")).isNull)
    }
}

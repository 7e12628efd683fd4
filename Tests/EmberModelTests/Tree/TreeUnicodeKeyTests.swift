import XCTest
import EmberModel

/// Tree keys, paths and string values told apart by their UTF-8 bytes: "\u{E9}" and "e\u{301}"
/// are equal Swift Strings but two Realtime Database keys.
final class TreeUnicodeKeyTests: XCTestCase {
    let a = "\u{E9}", b = "e\u{301}"

    func testObjectKeepsBothChildren() {
        var v = TreeValue.null
        v.set(TreePath(unchecked: ["t", a]), .int(1))
        v.set(TreePath(unchecked: ["t", b]), .int(2))
        XCTAssertEqual(v.value(at: ["t", a]), .int(1))
        XCTAssertEqual(v.value(at: ["t", b]), .int(2))
        XCTAssertEqual(v.child("t").childCount, 2)
        XCTAssertEqual(v.child("t").object?.sortedKeys().map { Array($0.utf8) }, [Array(b.utf8), Array(a.utf8)])
    }

    func testPathsAndStringsCompareByBytes() {
        let pa = TreePath(unchecked: ["x", a]), pb = TreePath(unchecked: ["x", b])
        XCTAssertNotEqual(pa, pb)
        XCTAssertEqual(Set([pa, pb, TreePath(unchecked: ["x", a])]).count, 2)
        XCTAssertFalse(pa.isAncestorOrSelf(of: pb.child("y")))
        XCTAssertTrue(pb < pa || pa < pb)
        XCTAssertNotEqual(TreeValue.string(a), TreeValue.string(b))
        XCTAssertNotEqual(ChildEntry.compare(ChildEntry(key: a, sortValue: .null), ChildEntry(key: b, sortValue: .null)), 0)
        XCTAssertNoThrow(try TreeLimits.validate([TreeWriteOp(path: pa, value: .int(1)), TreeWriteOp(path: pb, value: .int(2))]))
    }

    func testQueriesDifferingOnlyInABoundsKeyAreTwo() throws {
        let qa = try TreeQuery().orderBy(.value).start(.at, .null, key: a)
        let qb = try TreeQuery().orderBy(.value).start(.at, .null, key: b)
        XCTAssertNotEqual(qa, qb)
        XCTAssertNotEqual(qa.identity, qb.identity)
        XCTAssertEqual(Set([qa, qb]).count, 2)
        // Equal bounds hash alike (1 and 1.0 are one bound).
        let one = try TreeQuery().orderBy(.value).start(.at, .int(1), key: nil), oneDouble = try TreeQuery().orderBy(.value).start(.at, .double(1), key: nil)
        XCTAssertEqual(one, oneDouble)
        XCTAssertEqual(one.hashValue, oneDouble.hashValue)
    }

    /// A string value and a key that read alike in the query's text are two queries.
    func testIdentityTellsValuesFromKeys() throws {
        let x = try TreeQuery().orderBy(.value).start(.at, .string("x\",k=y"), key: nil)
        let y = try TreeQuery().orderBy(.value).start(.at, .string("x"), key: "y\"")
        XCTAssertNotEqual(x.identity, y.identity)
    }

    func testTrieKeepsBothPaths() {
        let t = PathTrie<Int>()
        t[TreePath(unchecked: [a])] = 1
        t[TreePath(unchecked: [b])] = 2
        XCTAssertEqual(t[TreePath(unchecked: [a])], 1)
        XCTAssertEqual(t[TreePath(unchecked: [b])], 2)
    }
}

import XCTest
@testable import EmberModel

/// Paths: parsing, limits, relations.
final class TreePathTests: XCTestCase {
    func testParsingIgnoresEmptySegments() throws {
        XCTAssertEqual(try TreePath(parsing: "/a//b/").segments, ["a", "b"])
        XCTAssertTrue(try TreePath(parsing: "/").isRoot)
        XCTAssertEqual(try TreePath(parsing: "a/b").description, "/a/b")
    }

    func testInvalidPaths() {
        for bad in ["a.b/c", "a/$x", "a/#", "a/[0]", "a\u{1}"] {
            XCTAssertThrowsError(try TreePath(parsing: bad), bad)
        }
        let deep = (0..<33).map { "k\($0)" }.joined(separator: "/")
        XCTAssertThrowsError(try TreePath(parsing: deep))
        XCTAssertNoThrow(try TreePath(parsing: (0..<32).map { "k\($0)" }.joined(separator: "/")))
        XCTAssertThrowsError(try TreePath(parsing: (0..<10).map { _ in String(repeating: "x", count: 80) }.joined(separator: "/")))
    }

    func testRelations() throws {
        let a = try TreePath(parsing: "a"), ab = try TreePath(parsing: "a/b"), ac = try TreePath(parsing: "a/c")
        XCTAssertTrue(a.isAncestor(of: ab))
        XCTAssertFalse(ab.isAncestor(of: ab))
        XCTAssertTrue(ab.isAncestorOrSelf(of: ab))
        XCTAssertFalse(ab.overlaps(ac))
        XCTAssertTrue(TreePath.root.overlaps(ac))
        XCTAssertEqual(Array(a.relative(ab)), ["b"])
        XCTAssertEqual(ab.parent, a)
        XCTAssertNil(TreePath.root.parent)
    }

    func testASlashBeforeACombiningMarkSeparatesKeys() throws {
        XCTAssertEqual(try TreePath(parsing: "a/\u{301}b").segments, ["a", "\u{301}b"])
        XCTAssertEqual(try TreePath(parsing: "//a//\u{301}b/").segments, ["a", "\u{301}b"])
    }
}

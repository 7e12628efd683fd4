import XCTest
@testable import EmberModel

/// The path index engines use to find listeners above and below a change.
final class PathTrieTests: XCTestCase {
    func p(_ s: String) -> TreePath { try! TreePath(parsing: s) }

    func testAncestorsAndDescendants() {
        let t = PathTrie<String>()
        t[.root] = "root"
        t[p("a")] = "a"
        t[p("a/b/c")] = "abc"
        t[p("x")] = "x"
        var up: [String] = []
        t.forEachAncestorOrSelf(of: p("a/b/c/d")) { _, v in up.append(v) }
        XCTAssertEqual(up, ["root", "a", "abc"])
        var down: [String] = []
        t.forEachDescendant(of: p("a")) { _, v in down.append(v) }
        XCTAssertEqual(down, ["abc"])
        XCTAssertTrue(t.hasDescendant(of: p("a/b")))
        t[p("a/b/c")] = nil
        XCTAssertFalse(t.hasDescendant(of: p("a")))
        XCTAssertEqual(t.count, 3)
        XCTAssertTrue(t.hasAncestorOrSelf(of: p("q")))
    }
}

import XCTest
@testable import EmberModel

/// The prefetching pass gives every child once, with the sort value `TreeIndex.sortValue(of:)`
/// gives it, in every order (key, value, one-segment and nested child paths), for nodes smaller
/// and larger than its prefetch distance and children with keys like the sort child's.
final class ChildPassTests: XCTestCase {
    func testGivesEveryChildOnceWithItsSortValue() throws {
        var rng = SystemRandomNumberGenerator()
        func leaf() -> TreeValue {
            [TreeValue.int(Int64.random(in: 0..<9, using: &rng)), .string("s"), .bool(true), .double(0.5)].randomElement(using: &rng)!
        }
        func child() -> TreeValue {
            switch Int.random(in: 0..<7, using: &rng) {
            case 0: return leaf()
            case 1: return .object(TreeObject(["scorf": leaf(), "title": .string("t")]))
            case 2: return .object(TreeObject(["score": .object(TreeObject(["a": leaf()])), "e\u{301}": leaf()]))
            case 3:
                var d: [String: TreeValue] = ["score": leaf(), "\u{E9}": leaf()]
                for i in 0..<9 { d["f\(i)"] = leaf() }
                return .object(TreeObject(d))
            default: return .object(TreeObject(["score": leaf(), "title": .string("t")]))
            }
        }
        let orders: [TreeIndex] = [.key, .value, .child(try TreePath(parsing: "score")), .child(try TreePath(parsing: "score/a")),
                                   .child(try TreePath(parsing: "\u{E9}")), .child(try TreePath(parsing: "missing"))]
        for round in 0..<200 {
            var d: [String: TreeValue] = [:]
            for i in 0..<Int.random(in: 1..<(round % 4 == 0 ? 300 : 20), using: &rng) { d["k\(i)"] = child() }
            let node = TreeObject(d)
            for index in orders {
                var seen: [String: TreeValue] = [:]
                index.forEachSortValue(in: node) { i, sv in
                    let k = node.children.keys[i].s
                    XCTAssertNil(seen[k], "\(k) given twice")
                    seen[k] = sv
                }
                XCTAssertEqual(seen.count, node.count, "round \(round), \(index)")
                for (k, v) in node.children {
                    XCTAssertEqual(seen[k.s], index.sortValue(of: v), "round \(round), \(index), \(k.s)")
                }
            }
        }
    }
}

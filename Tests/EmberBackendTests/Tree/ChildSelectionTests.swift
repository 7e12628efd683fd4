import XCTest
import EmberModel
@testable import EmberBackend

/// A first window taken by one pass over the children: the same entries and truncation as every
/// in-range child sorted, for random nodes (numbers, strings, booleans, nulls, objects, missing
/// sort children, children with keys like the sort child's, or more than 8 of them) and random
/// limited queries of every order, with and without ranges.
final class ChildSelectionTests: XCTestCase {
    func p(_ s: String) -> TreePath { try! TreePath(parsing: s) }

    func testMatchesASortOfEveryChild() throws {
        var rng = SystemRandomNumberGenerator()
        func leaf() -> TreeValue {
            switch Int.random(in: 0..<6, using: &rng) {
            case 0: return .string(["a", "b", "ab", "10", "9"].randomElement(using: &rng)!)
            case 1: return .bool(Bool.random(using: &rng))
            case 2: return .double(Double(Int.random(in: 0..<20, using: &rng)) / 2)
            default: return .int(Int64.random(in: 0..<20, using: &rng))
            }
        }
        func child() -> TreeValue {
            switch Int.random(in: 0..<10, using: &rng) {
            case 0: return leaf()
            case 1: return .object(TreeObject(["other": .int(1)]))
            // Keys of the sort key's length, or its bytes in another form: not the sort child.
            case 2: return .object(TreeObject(["scorf": leaf(), "title": .string("t")]))
            case 3: return .object(TreeObject(["score": leaf(), "title": .string("t"), "sc\u{F6}re": leaf()]))
            case 4:
                // More than 8 children: found by hashing, not by comparing keys.
                var d: [String: TreeValue] = ["score": leaf()]
                for i in 0..<10 { d["f\(i)"] = .int(Int64(i)) }
                return .object(TreeObject(d))
            default: return .object(TreeObject(["score": leaf()]))
            }
        }
        let bounds: [TreeValue] = [.int(5), .int(12), .string("ab"), .bool(true), .double(3.5)]
        for round in 0..<300 {
            var d: [String: TreeValue] = [:]
            let size = Int.random(in: 0..<(round % 10 == 0 ? 400 : 60), using: &rng)
            for i in 0..<size { d[Int.random(in: 0..<3, using: &rng) == 0 ? "\(i)" : "k\(i)"] = child() }
            let node: TreeValue = d.isEmpty ? .null : .object(TreeObject(d))
            var q = try TreeQuery().orderBy([TreeIndex.key, .value, .child(p("score")), .child(p("sc\u{F6}re"))].randomElement(using: &rng)!)
            if q.index != .key, Bool.random(using: &rng) {
                q = try q.start(.at, bounds.randomElement(using: &rng)!, key: nil)
            }
            if q.index != .key, Bool.random(using: &rng) {
                q = try q.end(.at, bounds.randomElement(using: &rng)!, key: nil)
            }
            q = try q.limit(Int.random(in: 1..<8, using: &rng), Bool.random(using: &rng) ? .first : .last)
            let w = ChildSelection.window(q, node: node)
            let (keys, truncated) = windowBySorting(node, q)
            XCTAssertEqual(w.entries.map { $0.key }, keys, "round \(round), \(q)")
            XCTAssertEqual(w.truncated, truncated, "round \(round), \(q)")
            XCTAssertEqual(w.entries.map { $0.key }, BackendChildIndex(index: q.index, node: node).window(q).entries.map { $0.key })
        }
    }

    func testAHugeLimitKeepsEveryChild() throws {
        let node = TreeValue.object(TreeObject(["a": .int(2), "b": .int(1)]))
        let q = try TreeQuery().orderBy(.value).limit(Int.max, .last)
        let w = ChildSelection.window(q, node: node)
        XCTAssertEqual(w.entries.map { $0.key }, ["b", "a"])
        XCTAssertFalse(w.truncated)
        XCTAssertEqual(BackendChildIndex(index: q.index, node: node).window(q).entries.map { $0.key }, ["b", "a"])
    }
}

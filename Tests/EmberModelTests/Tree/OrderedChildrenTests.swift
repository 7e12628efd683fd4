import XCTest
@testable import EmberModel

/// The chunked sorted index against a plain sorted array.
final class OrderedChildrenTests: XCTestCase {
    func testRandomOperationsMatchASortedArray() {
        var rng = SystemRandomNumberGenerator()
        var index = OrderedChildren()
        var model: [String: Int64] = [:]
        for step in 0..<5_000 {
            let k = "k\(Int.random(in: 0..<800, using: &rng))"
            if let old = model[k] {
                XCTAssertTrue(index.remove(ChildEntry(key: k, sortValue: .int(old))))
                model[k] = nil
            }
            if Bool.random(using: &rng) {
                let v = Int64.random(in: 0..<50, using: &rng)
                index.insert(ChildEntry(key: k, sortValue: .int(v)))
                model[k] = v
            }
            if step % 500 == 0 || step == 4_999 {
                let expected = model.map { ChildEntry(key: $0.key, sortValue: .int($0.value)) }.sorted { ChildEntry.compare($0, $1) < 0 }.map { $0.key }
                XCTAssertEqual(index.all.map { $0.key }, expected)
                XCTAssertEqual(index.count, expected.count)
                if expected.count > 3 {
                    XCTAssertEqual(index.entry(fromStart: 2)?.key, expected[2])
                    XCTAssertEqual(index.entry(fromEnd: 1)?.key, expected[expected.count - 2])
                    let third = index.entry(fromStart: 2)!
                    XCTAssertEqual(index.predecessor(of: third)?.key, expected[1])
                    var seen: [String] = []
                    index.forEach(from: third, inclusive: false) { seen.append($0.key); return seen.count < 2 }
                    XCTAssertEqual(seen, Array(expected[3..<5]))
                }
            }
        }
    }
}

import XCTest
@testable import EmberModel

/// The bounded heap keeps the best entries whatever the order of the offers, and says whether it
/// dropped any; a node's best children leave out only in-range ones when they say so.
final class BoundedHeapTests: XCTestCase {
    func testKeepsTheBestUnderAnyOrderOfOffers() {
        for _ in 0..<200 {
            let values = (0..<Int.random(in: 0..<40)).map { _ in Int64.random(in: 0..<30) }
            let k = Int.random(in: 0..<10)
            let largest = Bool.random()
            var heap = BoundedHeap(capacity: k, keepLargest: largest)
            for (i, v) in values.enumerated() { heap.offer(ChildEntry(key: "k\(i)", sortValue: .int(v))) }
            let entries = values.enumerated().map { ChildEntry(key: "k\($0.offset)", sortValue: .int($0.element)) }
                .sorted { ChildEntry.compare($0, $1) < 0 }
            let want = largest ? Array(entries.suffix(k)) : Array(entries.prefix(k))
            XCTAssertEqual(Set(heap.items.map { $0.key }), Set(want.map { $0.key }))
            XCTAssertEqual(heap.rejected, values.count > k)
        }
    }

    func testOutOfRangeChildrenAreNotLeftOut() throws {
        var d: [String: TreeValue] = [:]
        for i in 0..<20 { d["k\(i)"] = .int(Int64(i)) }
        let q = try TreeQuery().orderBy(.value).end(.at, .int(4), key: nil).limit(5, .last)
        let heap = q.bestChildren(q.windowSize, of: TreeObject(d))
        XCTAssertEqual(heap.items.map { $0.key }.sorted(), ["k0", "k1", "k2", "k3", "k4"])
        XCTAssertFalse(heap.rejected, "only children outside the range were passed over")
    }
}

import XCTest
@testable import EmberModel

/// Push ids (docs/semantics.md 17).
final class PushIdTests: XCTestCase {
    func testShapeAndTimestamp() {
        let id = PushId.next(now: 1_700_000_000_000)
        XCTAssertEqual(id.utf8.count, 20)
        XCTAssertTrue(id.utf8.allSatisfy { PushId.alphabet.contains($0) })
        XCTAssertGreaterThanOrEqual(PushId.timestamp(of: id)!, 1_700_000_000_000)
        XCTAssertNil(TreeKey.int32Value(id))
    }

    func testStrictlyIncreasingOverTenThousandInATightLoop() {
        var last = PushId.next()
        for _ in 0..<10_000 {
            let id = PushId.next()
            XCTAssertLessThan(TreeKey.compare(last, id), 0, "\(last) !< \(id)")
            XCTAssertTrue(last < id)                                    // plain string order too
            last = id
        }
    }

    func testSameMillisecondAndClockGoingBackStillIncrease() {
        let a = PushId.next(now: 4_000_000_000_000)
        let b = PushId.next(now: 4_000_000_000_000)
        let c = PushId.next(now: 3_000_000_000_000)                    // clock stepped back
        XCTAssertLessThan(a, b)
        XCTAssertLessThan(b, c)
        XCTAssertEqual(a.prefix(8), b.prefix(8))
        XCTAssertEqual(b.prefix(8), c.prefix(8))
    }
}

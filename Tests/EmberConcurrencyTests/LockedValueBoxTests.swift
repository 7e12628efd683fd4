// Tests for LockedValueBox.swift: changes from many threads at once all count.
import XCTest
import Dispatch
import EmberConcurrency

final class LockedValueBoxTests: XCTestCase {
    func testChangesFromManyThreadsAllCount() {
        let box = LockedValueBox([Int]())
        DispatchQueue.concurrentPerform(iterations: 8) { i in
            for j in 0..<500 { box.withLockedValue { $0.append(i * 1000 + j) } }
        }
        XCTAssertEqual(box.current.count, 4000)
        XCTAssertEqual(Set(box.current).count, 4000)
    }
}

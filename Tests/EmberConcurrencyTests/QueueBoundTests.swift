// Tests for QueueBound.swift: a bound value is read on its queue after a trip through other
// threads; asyncConfined keeps the queue's order; a confined completion runs on the queue.
// (Reading off the queue traps: that is dispatchPrecondition's, not tested in process.)
import XCTest
import Dispatch
import EmberConcurrency

final class QueueBoundTests: XCTestCase {
    /// State that is only touched on `queue`, not Sendable.
    final class Counter { var n = 0; var order: [Int] = [] }

    func testAValueComesBackToItsQueueThroughOtherThreads() {
        let queue = DispatchQueue(label: "test.bound")
        let done = Semaphore()
        let seen = LockedValueBox(-1)
        queue.async {
            let counter = Counter()
            counter.n = 41
            let bound = QueueBound(counter, on: queue)
            DispatchQueue.global().async {
                queue.async {
                    bound.value.n += 1
                    seen.withLockedValue { $0 = bound.value.n }
                    done.signal()
                }
            }
        }
        XCTAssertTrue(done.wait(seconds: 10))
        XCTAssertEqual(seen.current, 42)
    }

    func testAsyncConfinedKeepsTheQueuesOrder() {
        let queue = DispatchQueue(label: "test.order")
        let counter = Counter()
        for i in 0..<100 { queue.asyncConfined { counter.order.append(i) } }
        let order = queue.sync { counter.order }
        XCTAssertEqual(order, Array(0..<100))
    }

    func testAConfinedCompletionRunsOnItsQueue() {
        let queue = DispatchQueue(label: "test.completion")
        let counter = Counter()
        let done = Semaphore()
        let completion = queue.confined { (v: Int) in
            counter.n = v
            done.signal()
        }
        DispatchQueue.global().async { queue.async { completion(5) } }
        XCTAssertTrue(done.wait(seconds: 10))
        XCTAssertEqual(queue.sync { counter.n }, 5)
    }
}

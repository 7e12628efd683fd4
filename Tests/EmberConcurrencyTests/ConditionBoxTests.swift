// Tests for ConditionBox.swift and Condition.swift: a waiter sees the value another thread sets,
// and a deadline (past, negative, NaN or soon) ends the wait with nil.
import XCTest
import Dispatch
import EmberConcurrency

final class ConditionBoxTests: XCTestCase {
    func testAWaiterSeesTheValueAnotherThreadSets() {
        let box = ConditionBox(0)
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.01) { box.update { $0 = 7 } }
        let got = box.wait(until: { $0 == 7 }, deadline: Deadline(secondsFromNow: 10)) { v -> Int in
            v += 1
            return v
        }
        XCTAssertEqual(got, 8, "the body runs under the lock once the value is ready")
        XCTAssertEqual(box.wait(until: { _ in true }) { $0 }, 8)
    }

    func testADeadlineEndsTheWait() {
        let box = ConditionBox(false)
        XCTAssertNil(box.wait(until: { $0 }, deadline: Deadline(secondsFromNow: 0.02)) { _ in () })
        XCTAssertNil(box.wait(until: { $0 }, deadline: Deadline(secondsFromNow: -5)) { _ in () })
        XCTAssertNil(box.wait(until: { $0 }, deadline: Deadline(secondsFromNow: .nan)) { _ in () })
    }

    func testAReadyValueNeedsNoWait() {
        let box = ConditionBox(true)
        XCTAssertNotNil(box.wait(until: { $0 }, deadline: Deadline(secondsFromNow: 0)) { _ in () })
    }
}

// Tests for Semaphore.swift: a signal is consumed once, a timed wait times out, and waiters on
// other threads are woken.
import XCTest
import Dispatch
import EmberConcurrency

final class SemaphoreTests: XCTestCase {
    func testASignalBeforeTheWaitIsKept() {
        let s = Semaphore()
        s.signal()
        XCTAssertTrue(s.wait(seconds: 0), "the signal was counted")
        XCTAssertFalse(s.wait(seconds: 0.01), "and consumed once")
    }

    func testATimedWaitTimesOutAndOddTimeoutsReturnAtOnce() {
        let s = Semaphore()
        XCTAssertFalse(s.wait(seconds: 0.02))
        XCTAssertFalse(s.wait(seconds: -1))
        XCTAssertFalse(s.wait(seconds: .nan))
    }

    func testEachSignalWakesOneWaiter() {
        let s = Semaphore(), woken = LockedValueBox(0), done = Semaphore()
        for _ in 0..<4 {
            DispatchQueue.global().async {
                if s.wait(seconds: 10) { woken.withLockedValue { $0 += 1 } }
                done.signal()
            }
        }
        for _ in 0..<3 { s.signal() }
        for _ in 0..<3 { XCTAssertTrue(done.wait(seconds: 10)) }
        XCTAssertEqual(woken.current, 3)
        s.signal()
        XCTAssertTrue(done.wait(seconds: 10))
        XCTAssertEqual(woken.current, 4)
    }
}

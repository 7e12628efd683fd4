// Tests of EventThread (one thread, posted order, drain, stop) and Semaphore.
import EmberConcurrency
import XCTest
import Synchronization
@testable import EmberCore

final class EventThreadTests: XCTestCase {

    func testSpinFollowsTheStreamsLongestRecentGap() {
        let base = EventThread.baseSpinNanos, most = EventThread.maxSpinNanos
        XCTAssertEqual(EventThread.spin(forLevel: 0), base)                 // back to back
        XCTAssertEqual(EventThread.spin(forLevel: 10_000), base)            // covered by the base spin
        XCTAssertEqual(EventThread.spin(forLevel: 60_000), 120_000)         // a stream every ~60 µs
        XCTAssertEqual(EventThread.spin(forLevel: most / 2 + 1), most)      // capped
        XCTAssertEqual(EventThread.spin(forLevel: most), most)
        // A longer gap raises the level at once; shorter ones lower it by 1/256 each.
        var level = EventThread.nextLevel(0, afterGap: 25_000)
        XCTAssertEqual(level, 25_000)
        level = EventThread.nextLevel(level, afterGap: 150_000)             // one slower write
        XCTAssertEqual(level, 150_000)
        for _ in 0..<20 { level = EventThread.nextLevel(level, afterGap: 25_000) }
        XCTAssertGreaterThan(level, 135_000)                                // still remembered
        XCTAssertEqual(EventThread.spin(forLevel: level), most)             // so the next slow one is caught
        for _ in 0..<2_000 { level = EventThread.nextLevel(level, afterGap: 25_000) }
        XCTAssertEqual(level, 25_000)                                       // forgotten in the end
        // Gaps past the longest spin (no stream) halve it: a few isolated events, and it is the base.
        level = 150_000
        for _ in 0..<4 { level = EventThread.nextLevel(level, afterGap: 5_000_000_000) }
        XCTAssertEqual(EventThread.spin(forLevel: level), base)
    }

    func testWorkPostedAfterPausesOfEveryLengthRuns() {
        // Posts that find the thread spinning, parking or parked: each runs once, in order.
        let events = EventThread(name: "t")
        defer { events.stop() }
        let seen = Box<[Int]>([])
        for (i, pause) in [0, 20, 80, 150, 300, 1_000, 5_000, 40, 40, 40, 0].enumerated() {
            if pause > 0 { usleep(useconds_t(pause)) }
            events.post { seen.mutate { $0.append(i) } }
        }
        events.drain()
        XCTAssertEqual(seen.value, Array(0..<11))
    }

    func testRunsWorkInPostedOrderOnItsOwnThread() {
        let events = EventThread(name: "t")
        defer { events.stop() }
        XCTAssertFalse(events.isCurrent)
        let seen = Box<[Int]>([])
        let offThread = Box(0)
        for i in 0..<2000 {
            events.post {
                if !events.isCurrent { offThread.value += 1 }
                seen.mutate { $0.append(i) }
            }
        }
        events.drain()
        XCTAssertEqual(seen.value, Array(0..<2000))
        XCTAssertEqual(offThread.value, 0)
    }

    func testPostsFromManyThreadsKeepEachThreadsOrder() {
        let events = EventThread(name: "t")
        defer { events.stop() }
        let seen = Box<[[Int]]>(Array(repeating: [], count: 4))
        concurrently(4) { t in
            for i in 0..<1000 { events.post { seen.mutate { $0[t].append(i) } } }
        }
        events.drain()
        for t in 0..<4 { XCTAssertEqual(seen.value[t], Array(0..<1000)) }
    }

    func testDrainWaitsForWorkPostedBeforeIt() {
        let events = EventThread(name: "t")
        defer { events.stop() }
        let gate = Semaphore()
        let done = Box(false)
        events.post { gate.wait(); done.value = true }
        Thread.detachNewThread { gate.signal() }
        events.drain()
        XCTAssertTrue(done.value)
        events.post { events.drain() }   // from the event thread drain returns at once (no deadlock)
        events.drain()
    }

    func testStopRunsWhatWasPostedThenIgnoresLaterPosts() {
        let events = EventThread(name: "t")
        let count = Box(0)
        for _ in 0..<100 { events.post { count.value += 1 } }
        events.stop()
        XCTAssertEqual(count.value, 100)
        events.post { count.value += 1 }
        events.drain()                   // returns: nothing will run it
        events.stop()                    // idempotent
        XCTAssertEqual(count.value, 100)
    }

    func testStopFromTheEventThreadItself() {
        let events = EventThread(name: "t")
        let count = Box(0)
        let stopped = Semaphore()
        events.post { events.stop(); count.value += 1; stopped.signal() }
        XCTAssertTrue(stopped.wait(seconds: 5))
        events.post { count.value += 100 }
        events.drain()
        XCTAssertEqual(count.value, 1)
    }

    func testSemaphoreTimedWait() {
        let sem = Semaphore()
        XCTAssertFalse(sem.wait(seconds: 0.01))
        sem.signal()
        sem.signal()
        XCTAssertTrue(sem.wait(seconds: 0.01))
        XCTAssertTrue(sem.wait(seconds: 0))
        XCTAssertFalse(sem.wait(seconds: 0))
        Thread.detachNewThread { sem.signal() }
        XCTAssertTrue(sem.wait(seconds: 10))
    }

    /// A second `stop()` waits for the thread to end like the first; `drain()` once the thread
    /// is stopping waits for what was posted before to run (it used to return at once).
    func testASecondStopAndADrainWaitForTheLastCallback() {
        let t = EventThread(name: "test.events")
        let started = Semaphore(), release = Semaphore()
        let ran = Atomic<Int>(0)
        t.post { started.signal(); release.wait(); ran.add(1, ordering: .releasing) }
        t.post { ran.add(1, ordering: .releasing) }
        started.wait()
        let firstStopped = Semaphore()
        DispatchQueue.global().async { t.stop(); firstStopped.signal() }
        usleep(20_000)
        let done = DispatchGroup()
        DispatchQueue.global().async(group: done) {
            t.stop()
            XCTAssertEqual(ran.load(ordering: .acquiring), 2, "a second stop returned before the thread ended")
        }
        DispatchQueue.global().async(group: done) {
            t.drain()
            XCTAssertEqual(ran.load(ordering: .acquiring), 2, "drain returned before what was posted had run")
        }
        usleep(20_000)
        release.signal()
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
        firstStopped.wait()
    }
}

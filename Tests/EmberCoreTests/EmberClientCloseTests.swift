import EmberConcurrency
import XCTest
import Synchronization
import EmberModel
@testable import EmberCore

/// How a client's close ends, whoever calls it and wherever its last reference goes: a close
/// made on its own worker (the last reference let go by a block the worker ran) does not trap,
/// and a second close waits for the first, and for the event thread's last callback, before it
/// returns.
final class EmberClientCloseTests: XCTestCase {
    /// A listener's removal queues a block on the worker that holds the client; the caller then
    /// lets the client go before that block runs: the block's release of it runs `deinit`, so
    /// `close()`, on the worker (where a `sync` onto the worker traps).
    func testAClientLetGoRightAfterARemoveClosesOnItsWorker() throws {
        var client: EmberClient? = EmberClient()
        let closed = Atomic<Bool>(false)
        client!.atClose { closed.store(true, ordering: .releasing) }
        let token = try client!.listen(Query(document: key("c/a"))) { _ in }
        let worker = client!.worker
        let hold = Semaphore()
        worker.async { hold.wait() }
        token.remove()
        client = nil
        hold.signal()
        worker.sync {}
        XCTAssertTrue(closed.load(ordering: .acquiring), "the client was closed, on its worker")
    }

    /// The first close runs inside a callback (the event thread stops after that callback); a
    /// second close from another thread returns only once that callback has finished.
    func testASecondCloseWaitsForTheFirstAndTheLastCallback() throws {
        let client = EmberClient()
        let inside = Semaphore()
        let finished = Atomic<Bool>(false)
        client.events.post {
            client.close()
            inside.signal()
            usleep(200_000)
            finished.store(true, ordering: .releasing)
        }
        inside.wait()
        client.close()
        XCTAssertTrue(finished.load(ordering: .acquiring), "close() returned while a callback still ran")
    }

    /// Two threads close at once: both return after the close is done.
    func testConcurrentClosesBothReturnClosed() throws {
        for _ in 0..<20 {
            let client = EmberClient()
            let inCallback = Semaphore(), release = Semaphore()
            let finished = Atomic<Int>(0)
            // A callback that keeps the event thread busy until released.
            client.events.post { inCallback.signal(); release.wait(); finished.add(1, ordering: .releasing) }
            inCallback.wait()
            let done = DispatchGroup()
            for _ in 0..<2 {
                DispatchQueue.global().async(group: done) {
                    client.close()
                    XCTAssertEqual(finished.load(ordering: .acquiring), 1, "a close returned before the callback ended")
                }
            }
            usleep(2_000)
            release.signal()
            XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
        }
    }
}

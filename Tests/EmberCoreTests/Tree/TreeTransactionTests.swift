import EmberConcurrency
import XCTest
import Foundation
import EmberModel
import EmberCore
import EmberStorage
@testable import EmberBackend

/// Tree transactions on the in-process backend (the same compare-and-set by hash a server does):
/// clients contending on one counter add up, the update's first call sees null when the client
/// knows nothing and then the backend's value, abort, local events on and off, 25 lost
/// attempts, a value that cannot be written, close, and a durable client's write ids.
final class TreeTransactionTests: XCTestCase {
    typealias Outcome = (error: EmberError?, committed: Bool, value: TreeValue?)

    /// Starts a transaction; the returned wait blocks (bounded) for its completion.
    static func start(_ c: EmberClient, _ path: String, applyLocally: Bool = true,
               _ update: @escaping (TreeValue) -> TreeTransactionOutcome) throws -> () -> Outcome? {
        let sem = Semaphore()
        let box = Locked<Outcome?>(nil)
        try c.treeTransaction(tp(path), applyLocally: applyLocally, update: update) { e, committed, v in
            box.withLock { $0 = (e, committed, v) }
            sem.signal()
        }
        return {
            guard sem.wait(seconds: 20) else { XCTFail("the transaction never completed"); return nil }
            return box.withLock { $0 }
        }
    }

    static func run(_ c: EmberClient, _ path: String, applyLocally: Bool = true, _ update: @escaping (TreeValue) -> TreeTransactionOutcome) throws -> Outcome? {
        try Self.start(c, path, applyLocally: applyLocally, update)()
    }

    static func increment(_ v: TreeValue) -> TreeTransactionOutcome {
        if case .int(let n) = v { return .write(.int(n + 1)) }
        return .write(.int(1))
    }

    func testCountersFromFourClientsOnOneBackendAddUp() throws {
        let first = EmberClient()
        let clients = [first] + (1..<4).map { _ in EmberClient(persistence: MemoryPersistence(), backend: first.backend) }
        defer { clients.reversed().forEach { $0.close() } }
        let failures = Locked<[String]>([])
        DispatchQueue.concurrentPerform(iterations: clients.count) { i in
            for _ in 0..<25 {
                guard let r = try? Self.run(clients[i], "counter", TreeTransactionTests.increment) else { return failures.withLock { $0.append("start") } }
                if r.error != nil || !r.committed { failures.withLock { $0.append("\(String(describing: r.error))") } }
            }
        }
        XCTAssertEqual(failures.withLock { $0 }, [])
        XCTAssertEqual(first.backend.readTree(tp("counter")), .int(100))
    }

    func testTheFirstCallSeesNullWhenNothingIsKnownThenTheBackendsValue() throws {
        let a = EmberClient()
        let b = EmberClient(persistence: MemoryPersistence(), backend: a.backend)
        defer { b.close(); a.close() }
        writeAndWaitTree(a, [setOp("n", 41)])
        let seen = Locked<[TreeValue]>([])
        let r = try Self.run(b, "n") { v in
            seen.withLock { $0.append(v) }
            return TreeTransactionTests.increment(v)
        }
        XCTAssertEqual(seen.withLock { $0 }, [.null, .int(41)], "null first (b knew nothing), then the backend's value")
        XCTAssertNil(r?.error)
        XCTAssertEqual(r?.committed, true)
        XCTAssertEqual(r?.value, .int(42))
        XCTAssertEqual(a.backend.readTree(tp("n")), .int(42))
    }

    func testAnObservedLocationRunsOnceWithItsValue() throws {
        let c = EmberClient()
        defer { c.close() }
        writeAndWaitTree(c, [setOp("n", ["a": 1])])
        let log = TreeLog()
        try c.watch("n", TreeQuery(), [.value], into: log)
        log.wait(for: 1)
        let calls = Locked(0)
        let r = try Self.run(c, "n") { v in
            calls.withLock { $0 += 1 }
            return .write(v.child("a") == .int(1) ? tv(["a": 2]) : .null)
        }
        XCTAssertEqual(calls.withLock { $0 }, 1)
        XCTAssertEqual(r?.value, tv(["a": 2]))
    }

    func testAbortCompletesUncommittedWithoutErrorAndWritesNothing() throws {
        let c = EmberClient()
        defer { c.close() }
        writeAndWaitTree(c, [setOp("n", 7)])
        let log = TreeLog()
        try c.watch("n", TreeQuery(), [.value], into: log)
        log.wait(for: 1)
        let r = try Self.run(c, "n") { _ in .abort }
        XCTAssertNil(r?.error)
        XCTAssertEqual(r?.committed, false)
        XCTAssertEqual(r?.value, .int(7))
        try c.settle()
        XCTAssertEqual(log.all, ["value 7"], "an aborted transaction raises nothing")
    }

    func testLocalEventsComeBeforeTheBackendAnswersOrNotAtAll() throws {
        for applyLocally in [true, false] {
            let c = EmberClient()
            writeAndWaitTree(c, [setOp("n", 1)])
            let log = TreeLog()
            try c.watch("n", TreeQuery(), [.value], into: log)
            log.wait(for: 1)
            c.backend.queue.suspend()
            let wait = try Self.start(c, "n", applyLocally: applyLocally, TreeTransactionTests.increment)
            // The update runs on the event thread, then the attempt is applied on the worker.
            for _ in 0..<100 where log.all.count < 2 && applyLocally { usleep(2_000) }
            c.events.drain()
            XCTAssertEqual(log.all, applyLocally ? ["value 1", "value 2"] : ["value 1"], "applyLocally \(applyLocally)")
            c.backend.queue.resume()
            XCTAssertEqual(wait()?.committed, true)
            c.events.drain()
            XCTAssertEqual(log.all, ["value 1", "value 2"], "applyLocally \(applyLocally)")
            c.close()
        }
    }

    func testTwentyFiveLostAttemptsFailTheTransaction() throws {
        let a = EmberClient()
        let b = EmberClient(persistence: MemoryPersistence(), backend: a.backend)
        defer { b.close(); a.close() }
        let calls = Locked(0)
        let r = try Self.run(a, "n") { v in
            // Another client changes the value after every read: each attempt is stale.
            let n = calls.withLock { $0 += 1; return $0 }
            writeAndWaitTree(b, [setOp("n", "other \(n)")])
            return .write(.string("mine"))
        }
        XCTAssertEqual(calls.withLock { $0 }, 25)
        XCTAssertEqual(r?.error?.code, .aborted)
        XCTAssertEqual(r?.error?.message, "The transaction had too many retries")
        XCTAssertEqual(r?.committed, false)
        XCTAssertEqual(a.backend.readTree(tp("n")), .string("other 25"))
    }

    func testAValueTheTreeCannotHoldFailsTheTransaction() throws {
        let c = EmberClient()
        defer { c.close() }
        var deep = TreeValue.int(1)
        for _ in 0..<40 { deep = .object(TreeObject(["d": deep])) }
        let tooDeep = deep
        let r = try Self.run(c, "n") { _ in .write(tooDeep) }
        XCTAssertEqual(r?.error?.code, .invalidArgument)
        XCTAssertEqual(r?.committed, false)
        let failed = try Self.run(c, "n") { _ in .fail(EmberError(.invalidArgument, "bad value")) }
        XCTAssertEqual(failed?.error?.message, "bad value")
        XCTAssertEqual(c.backend.readTree(tp("n")), .null)
    }

    func testClosingCancelsARunningTransaction() throws {
        let c = EmberClient()
        let inUpdate = Semaphore(), release = Semaphore()
        let wait = try Self.start(c, "n") { _ in
            inUpdate.signal()
            _ = release.wait(seconds: 5)
            return .write(.int(1))
        }
        XCTAssertTrue(inUpdate.wait(seconds: 5))
        let closed = Semaphore()
        DispatchQueue.global().async { c.close(); closed.signal() }
        usleep(50_000)
        release.signal()
        XCTAssertTrue(closed.wait(seconds: 10))
        let r = wait()
        XCTAssertEqual(r?.error?.code, .cancelled)
        XCTAssertEqual(r?.committed, false)
    }

    func testADurableClientNeverReusesATransactionsWriteId() throws {
        let dir = makeTemporaryDirectory("tree-tx")
        defer { removeTemporaryDirectory(dir) }
        let options = EmberOptions(path: dir + "/db.ember", persistence: true)
        var c = try EmberClient(options: options)
        XCTAssertEqual(try Self.run(c, "n", TreeTransactionTests.increment)?.committed, true)
        c.close()
        // The backend recorded the transaction's write id as applied: a later write that took
        // the same id would be acknowledged without being applied.
        c = try EmberClient(options: options)
        defer { c.close() }
        writeAndWaitTree(c, [setOp("m", "after")])
        XCTAssertEqual(c.backend.readTree(tp("m")), .string("after"))
        XCTAssertEqual(c.backend.readTree(tp("n")), .int(1))
    }
}

/// Writes and waits (bounded) for the acknowledgement.
func writeAndWaitTree(_ c: EmberClient, _ ops: [TreeWriteOp], file: StaticString = #filePath, line: UInt = #line) {
    let sem = Semaphore()
    do {
        try c.treeWrite(ops) { e in XCTAssertNil(e, file: file, line: line); sem.signal() }
    } catch {
        return XCTFail("write threw \(error)", file: file, line: line)
    }
    XCTAssertTrue(sem.wait(seconds: 10), "acknowledged", file: file, line: line)
}

extension TreeTransactionTests {
    func testAServerValueInATransactionIsFilledIn() throws {
        let c = EmberClient()
        defer { c.close() }
        let before = TreeServerValues.clockMillis()
        let r = try Self.run(c, "at") { _ in .write(TreeServerValues.timestamp) }
        XCTAssertEqual(r?.committed, true)
        guard case .int(let at)? = r?.value else { return XCTFail("a number: \(String(describing: r?.value))") }
        XCTAssertTrue((before...TreeServerValues.clockMillis()).contains(at))
        XCTAssertEqual(c.backend.readTree(tp("at")), .int(at))
    }
}

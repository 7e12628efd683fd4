import EmberConcurrency
import XCTest
import Dispatch
import Synchronization
import EmberModel
import EmberCore

/// The thread contract for tree observers: writers on several threads, observers removed from
/// other threads and from inside their callbacks (after remove() returns the callback never
/// runs), and callbacks that call back into Ember. Also run under ThreadSanitizer (make test-tsan).
final class TreeConcurrencyTests: XCTestCase {
    func testRemovalIsFinalUnderConcurrentWrites() throws {
        let client = EmberClient()
        defer { client.close() }
        let removed = Atomic<Bool>(false)
        let lateCalls = Atomic<Int>(0)
        let calls = Atomic<Int>(0)
        let (_, token) = try client.treeObserve(tp("c"), type: .childAdded) { _ in
            calls.add(1, ordering: .relaxed)
            if removed.load(ordering: .acquiring) { lateCalls.add(1, ordering: .relaxed) }
        }
        let group = DispatchGroup()
        for t in 0..<4 {
            DispatchQueue.global().async(group: group) {
                for i in 0..<200 { try? client.treeWrite([setOp("c/t\(t)-\(i)", i)]) }
            }
        }
        while calls.load(ordering: .relaxed) < 50 { sched_yield() }
        token.remove()
        removed.store(true, ordering: .releasing)
        group.wait()
        try client.settle()
        XCTAssertEqual(lateCalls.load(ordering: .relaxed), 0)
    }

    func testCallbacksMayWriteAndObserveAndRemoveThemselves() throws {
        let client = EmberClient()
        defer { client.close() }
        let log = TreeLog()
        let box = TokenBox()
        let (_, token) = try client.treeObserve(tp("ping"), type: .value) { e in
            log.record(e)
            guard case .event(_, let s, _) = e, case .int(let n) = s.value else { return }
            if n < 5 {
                try? client.treeWrite([setOp("ping", Int(n) + 1)])        // back into Ember
            } else {
                _ = try? client.treeObserve(tp("pong"), type: .value) { log.record($0) }
                box.token?.remove()
            }
        }
        box.token = token
        try client.treeWrite([setOp("ping", 1)])
        log.wait(for: 6)
        try client.settle()
        try client.treeWrite([setOp("ping", 9)])                         // removed: not heard
        try client.settle()
        let all = log.all
        XCTAssertFalse(all.contains("value 9"))
        XCTAssertTrue(all.contains("value 5"))
    }

    func testClosingWithPendingWritesFailsTheirCompletions() throws {
        let client = EmberClient()
        try client.disableNetwork()
        let errors = TreeLog()
        let sem = Semaphore()
        try client.treeWrite([setOp("x", 1)]) { e in
            errors.record(.cancelled(e ?? EmberError(.ok, "")))
            sem.signal()
        }
        client.close()
        XCTAssertTrue(sem.wait(seconds: 5))
        XCTAssertEqual(errors.all, ["cancelled CANCELLED"])
        XCTAssertThrowsError(try client.treeWrite([setOp("x", 2)]))
    }
}

final class TokenBox: @unchecked Sendable {
    private let lock = Lock()
    private var stored: ListenerToken?
    var token: ListenerToken? {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}

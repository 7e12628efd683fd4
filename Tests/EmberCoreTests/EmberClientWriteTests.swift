import EmberConcurrency
import XCTest
import EmberModel
@testable import EmberCore

/// EmberClient.write: a stream of memory-cache writes is handed to the worker without waiting,
/// and nothing a caller can observe changes: order, reads after writes, completions, close.
final class EmberClientWriteTests: XCTestCase {
    func testAStreamOfWritesKeepsItsOrderForReadsAndListeners() throws {
        let client = EmberClient()
        defer { client.close() }
        let seen = Locked<[Int64]>([])
        let token = try client.listen(Query(document: key("c/a"))) { event in
            guard case .snapshot(let s) = event, let d = s.documents.first, case .int(let v)? = d.data["n"] else { return }
            seen.withLock { $0.append(v) }
        }
        defer { token.remove() }
        let acked = Locked<Int>(0)
        func write(_ range: ClosedRange<Int>) throws {
            for i in range {
                try client.write([setM("c/a", n(Int64(i)))]) { error in
                    XCTAssertNil(error)
                    acked.withLock { $0 += 1 }
                }
                if i % 500 == 0 {
                    // A read right after a write sees it, handed over or not.
                    XCTAssertEqual(try client.getDocument(key("c/a"), source: .cache).document?.data["n"], .int(Int64(i)))
                }
            }
        }
        // The first thousand go while the backend holds every commit, so writes stay
        // unacknowledged and the stream is handed over however fast this machine is;
        // the rest race a free backend.
        try whileBackendHeld(client.backend) { try write(1...1_000) }
        try write(1_001...3_000)
        XCTAssertGreaterThan(client.writesHandedOver, 0, "the stream never took the path under test")
        waitForPendingWrites(client)
        settle(client)
        XCTAssertEqual(acked.withLock { $0 }, 3_000)
        let values = seen.withLock { $0 }
        XCTAssertEqual(values.last, 3_000)
        XCTAssertEqual(values, values.sorted(), "snapshots arrived out of write order")
    }

    func testClosingDuringAStreamCompletesEveryWriteOnce() throws {
        for _ in 0..<5 {
            let client = EmberClient()
            let completed = Locked<Int>(0)
            var made = 0
            // The backend holds every commit: nothing is acknowledged, so the stream is handed over.
            whileBackendHeld(client.backend) {
                for i in 0..<2_000 {
                    do {
                        try client.write([setM("c/\(i % 50)", n(Int64(i)))]) { _ in completed.withLock { $0 += 1 } }
                        made += 1
                    } catch {
                        XCTAssertEqual((error as? EmberError)?.code, .failedPrecondition)
                    }
                    if i == 1_500 { DispatchQueue.global().async { client.close() } }
                }
                XCTAssertGreaterThan(client.writesHandedOver, 0)
                client.close()
            }
            let deadline = Date().addingTimeInterval(10)
            while completed.withLock({ $0 }) < made && Date() < deadline { usleep(1_000) }
            XCTAssertEqual(completed.withLock { $0 }, made, "a write's completion never ran (or ran twice)")
        }
    }

    /// Offline writes are never sent, so they never make a stream: each is applied before
    /// write() returns, as a lone write is (no thread wake-up in an offline app's latency).
    func testOfflineWritesAreAppliedBeforeWriteReturns() throws {
        let client = EmberClient()
        defer { client.close() }
        try client.disableNetwork()
        for i in 0..<200 { try client.write([setM("c/\(i)", n(Int64(i)))]) }
        XCTAssertEqual(client.writesHandedOver, 0)
    }
}

/// A value shared between the test and Ember's threads.
final class Locked<T>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: T
    init(_ v: T) { value = v }
    func withLock<R>(_ body: (inout T) -> R) -> R {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
}

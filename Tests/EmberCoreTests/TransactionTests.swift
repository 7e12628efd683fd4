// Tests of runTransaction / TransactionContext: read-modify-write, retries on contention, reads
// after writes, offline refusal, body errors.
import XCTest
import EmberModel
import EmberCore

final class TransactionTests: XCTestCase {
    private struct BodyError: Error {}

    private func value(_ c: EmberClient, _ k: String) throws -> Value? {
        try c.getDocument(key(k), source: .server).document?.data["n"]
    }

    func testReadModifyWrite() throws {
        let (c1, c2) = twoClients()
        defer { c1.close(); c2.close() }
        XCTAssertNil(writeAndWait(c1, [setM("c/counter", n(41))]))
        let watcher = EventLog()
        try c2.record(collection("c"), watcher, metadata: true)
        settle(c2)
        let result = try c1.runTransaction { tx -> Int64 in
            guard case .int(let v)? = try tx.get(key("c/counter"))?.data["n"] else { throw BodyError() }
            tx.write(setM("c/counter", n(v + 1)))
            return v + 1
        }
        XCTAssertEqual(result, 42)
        XCTAssertEqual(try value(c1, "c/counter"), .int(42))
        settle(c1, c2)
        XCTAssertEqual(watcher.lines, ["added counter -1 0 []", "modified counter 0 0 []"])
    }

    func testCreatesADocumentReadAsMissing() throws {
        let client = EmberClient()
        defer { client.close() }
        try client.runTransaction { tx in
            XCTAssertNil(try tx.get(key("c/new")))
            tx.write(setM("c/new", n(1)))
        }
        XCTAssertEqual(try value(client, "c/new"), .int(1))
    }

    /// A document changed between the read and the commit: the body runs again on fresh data.
    func testContentionIsRetried() throws {
        let (c1, c2) = twoClients()
        defer { c1.close(); c2.close() }
        XCTAssertNil(writeAndWait(c1, [setM("c/counter", n(0))]))
        let attempts = Box(0)
        try c1.runTransaction { tx in
            attempts.value += 1
            guard case .int(let v)? = try tx.get(key("c/counter"))?.data["n"] else { throw BodyError() }
            if attempts.value == 1 { XCTAssertNil(writeAndWait(c2, [setM("c/counter", n(100))])) }
            tx.write(setM("c/counter", n(v + 1)))
        }
        XCTAssertEqual(attempts.value, 2)
        XCTAssertEqual(try value(c1, "c/counter"), .int(101))
    }

    /// A document only read (not written) is verified at commit too.
    func testAReadOnlyDocumentChangedMeanwhileIsRetried() throws {
        let (c1, c2) = twoClients()
        defer { c1.close(); c2.close() }
        XCTAssertNil(writeAndWait(c1, [setM("c/src", n(5)), setM("c/dst", n(0))]))
        let attempts = Box(0)
        try c1.runTransaction { tx in
            attempts.value += 1
            guard case .int(let v)? = try tx.get(key("c/src"))?.data["n"] else { throw BodyError() }
            if attempts.value == 1 { XCTAssertNil(writeAndWait(c2, [setM("c/src", n(7))])) }
            tx.write(setM("c/dst", n(v)))
        }
        XCTAssertEqual(attempts.value, 2)
        XCTAssertEqual(try value(c1, "c/dst"), .int(7))
    }

    /// Two threads each run 50 increments in transactions (default maxAttempts): exactly 100,
    /// whether they use two clients of one backend or share one client. (Retrying at once made
    /// the two loops collide in lockstep; retries now back off with jitter.)
    func testTwoThreadsIncrementingGiveExactlyOneHundred() throws {
        for sameClient in [false, true] {
            let (c1, c2) = twoClients()
            defer { c1.close(); c2.close() }
            XCTAssertNil(writeAndWait(c1, [setM("c/counter", n(0))]))
            let attempts = Box(0)
            let failures = Box<[String]>([])
            concurrently(2) { t in
                let client = t == 0 || sameClient ? c1 : c2
                for _ in 0..<50 {
                    do {
                        try client.runTransaction { tx in
                            attempts.value += 1
                            guard case .int(let v)? = try tx.get(key("c/counter"))?.data["n"] else { throw BodyError() }
                            tx.write(setM("c/counter", n(v + 1)))
                        }
                    } catch {
                        failures.mutate { $0.append("\(error)") }
                    }
                }
            }
            XCTAssertEqual(failures.value, [], "same client: \(sameClient)")
            XCTAssertEqual(try value(c1, "c/counter"), .int(100), "same client: \(sameClient)")
            XCTAssertGreaterThanOrEqual(attempts.value, 100)
        }
    }

    func testReadsAfterWritesAreRejected() throws {
        let client = EmberClient()
        defer { client.close() }
        let attempts = Box(0)
        XCTAssertThrowsError(try client.runTransaction { tx in
            attempts.value += 1
            tx.write(setM("c/a", n(1)))
            _ = try tx.get(key("c/b"))
        }) { XCTAssertEqual(($0 as? EmberError)?.code, .invalidArgument) }
        XCTAssertEqual(attempts.value, 1)
        XCTAssertNil(try client.getDocument(key("c/a"), source: .server).document, "nothing was committed")
    }

    func testBodyErrorIsThrownWithoutRetry() throws {
        let client = EmberClient()
        defer { client.close() }
        let attempts = Box(0)
        XCTAssertThrowsError(try client.runTransaction { tx in
            attempts.value += 1
            _ = try tx.get(key("c/a"))
            tx.write(setM("c/a", n(1)))
            throw BodyError()
        }) { XCTAssertTrue($0 is BodyError, "\($0)") }
        XCTAssertEqual(attempts.value, 1)
        XCTAssertNil(try client.getDocument(key("c/a"), source: .server).document, "nothing was committed")
    }

    func testRefusedWithUnavailableWhileTheNetworkIsDisabled() throws {
        let client = EmberClient()
        defer { client.close() }
        try client.disableNetwork()
        let attempts = Box(0)
        XCTAssertThrowsError(try client.runTransaction { _ in attempts.value += 1 }) {
            XCTAssertEqual(($0 as? EmberError)?.code, .unavailable)
        }
        XCTAssertEqual(attempts.value, 0)
        try client.enableNetwork()
        XCTAssertNoThrow(try client.runTransaction { tx in tx.write(setM("c/a", n(1))) })
    }

    func testMaxAttemptsMustBePositive() throws {
        let client = EmberClient()
        defer { client.close() }
        XCTAssertThrowsError(try client.runTransaction(maxAttempts: 0) { _ in }) {
            XCTAssertEqual(($0 as? EmberError)?.code, .invalidArgument)
        }
    }

    /// Contention every time: the transaction gives up after maxAttempts with `aborted`.
    func testGivesUpAfterMaxAttempts() throws {
        let (c1, c2) = twoClients()
        defer { c1.close(); c2.close() }
        XCTAssertNil(writeAndWait(c1, [setM("c/counter", n(0))]))
        let attempts = Box(0)
        XCTAssertThrowsError(try c1.runTransaction(maxAttempts: 3) { tx in
            attempts.value += 1
            _ = try tx.get(key("c/counter"))
            XCTAssertNil(writeAndWait(c2, [setM("c/counter", n(Int64(1000 + attempts.value)))]))
            tx.write(setM("c/counter", n(-1)))
        }) { XCTAssertEqual(($0 as? EmberError)?.code, .aborted) }
        XCTAssertEqual(attempts.value, 3)
        XCTAssertEqual(try value(c1, "c/counter"), .int(1003))
    }
}

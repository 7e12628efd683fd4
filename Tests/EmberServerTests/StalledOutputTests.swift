import EmberFirestoreProto
@testable import EmberServer
import Foundation
import GRPCCore
import XCTest

/// A client that stops reading a response stream cannot make the server hold an unbounded
/// backlog: past the bound, with no write completing for the grace, the stream is ended with
/// RESOURCE_EXHAUSTED and what it queued is let go (OutputGate). (A client that stops reading at
/// the TCP level is Tests/server/test_hardening.py's: gRPC Swift's client reads ahead.)
final class StalledOutputTests: XCTestCase {
    typealias S = ServerTests

    static func small(_ c: inout EmberServer.Configuration) {
        c.maxQueuedOutputBytes = 256 << 10
        c.stalledOutputGrace = .seconds(1)
    }

    /// 40 documents of 100 KB in `c`.
    static func fill(_ fs: FirestoreClient, prefix: String = "d") async throws {
        for batch in 0..<4 {
            let writes = (0..<10).map { i in S.set("c/\(prefix)\(batch)-\(i)", ["pad": S.value(String(repeating: "p", count: 100_000))]) }
            _ = try await S.commit(fs, writes)
        }
    }

    /// Polls `condition` every 100 ms for at most `seconds`.
    static func eventually(_ seconds: Double, _ condition: () -> Bool) async -> Bool {
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(100))
        }
        return condition()
    }

    /// The gate alone: output queued past the bound with no write completing ends the run with
    /// RESOURCE_EXHAUSTED and cancels the writing; the total goes back to zero.
    func testTheGateEndsAStalledWriterAndLetsGo() async throws {
        let ledger = OutputLedger()
        let gate = OutputGate(limits: .init(bound: 1_000, grace: .milliseconds(300)), ledger: ledger)
        gate.queued(5_000)
        do {
            try await gate.run { try await Task.sleep(for: .seconds(60)) }
            XCTFail("the stalled run ended without an error")
        } catch let e as RPCError {
            XCTAssertEqual(e.code, .resourceExhausted)
        }
        XCTAssertEqual(ledger.queuedBytes, 0)
    }

    /// Writes that complete keep a stream alive however much passes through it.
    func testTheGateKeepsAStreamThatMakesProgress() async throws {
        let ledger = OutputLedger()
        let gate = OutputGate(limits: .init(bound: 1_000, grace: .milliseconds(300)), ledger: ledger)
        try await gate.run {
            for _ in 0..<20 {
                gate.queued(3_000)
                try await Task.sleep(for: .milliseconds(50))
                gate.written(3_000)
            }
        }
        XCTAssertEqual(ledger.queuedBytes, 0)
    }

    /// A client that reads slowly but steadily is never ended, however much it is sent.
    func testASlowButSteadyReaderGetsEverything() async throws {
        try await S.serve(configure: Self.small) { fs, _ in
            try await Self.fill(fs)
            var req = Google_Firestore_V1_RunQueryRequest()
            req.parent = S.root
            var from = Google_Firestore_V1_StructuredQuery.CollectionSelector()
            from.collectionID = "c"
            req.structuredQuery.from = [from]
            let count = try await fs.runQuery(req) { response in
                var n = 0
                for try await m in response.messages where m.hasDocument {
                    n += 1
                    try await Task.sleep(for: .milliseconds(50))
                }
                return n
            }
            XCTAssertEqual(count, 40)
        }
    }
}

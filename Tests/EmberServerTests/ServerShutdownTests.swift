import EmberFirestoreProto
import EmberServer
import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2
import XCTest

/// The shutdown's bound: calls still running after the grace period are cancelled, so a stop
/// always ends (and the file closes) whatever a client does.
final class ServerShutdownTests: XCTestCase {
    /// A query whose client reads one result and then stops reading keeps its handler waiting on
    /// HTTP/2 flow control (200 results of 100 KB are far more than a stream's window). A
    /// graceful shutdown alone would wait for it forever.
    func testACallStillRunningAfterTheGracePeriodIsCancelled() async throws {
        let server = try await EmberServer(configuration: .init(host: "127.0.0.1", port: 0, shutdownGrace: .milliseconds(500)))
        let serving = Task { try await server.run() }
        let port = try await server.listeningPort
        let stopped = try await withGRPCClient(transport: ServerTests.transport(port: port)) { client in
            let fs = FirestoreClient(wrapping: client)
            let big = ServerTests.value(String(repeating: "x", count: 100_000))
            for b in 0..<4 {
                _ = try await ServerTests.commit(fs, (0..<50).map { ServerTests.set("big/d\(b)-\($0)", ["s": big]) })
            }
            var req = Google_Firestore_V1_RunQueryRequest()
            req.parent = ServerTests.root
            var from = Google_Firestore_V1_StructuredQuery.CollectionSelector()
            from.collectionID = "big"
            req.structuredQuery.from = [from]
            let (firstResult, sawFirst) = AsyncStream.makeStream(of: Void.self)
            let reading = Task {
                try await fs.runQuery(req) { response in
                    for try await _ in response.messages {
                        sawFirst.yield()
                        try await Task.sleep(for: .seconds(3600))
                    }
                }
            }
            for await _ in firstResult { break }
            server.shutDown()
            let stopped = await ServerTests.finishes(within: .seconds(30)) { _ = try? await serving.value }
            reading.cancel()
            _ = await reading.result
            return stopped
        }
        XCTAssertTrue(stopped, "the server still waited for the call 30 s after a shutdown with a 0.5 s grace period")
        _ = try? await serving.value
    }
}

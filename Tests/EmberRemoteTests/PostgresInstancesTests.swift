import EmberBackend
import EmberCore
import EmberModel
@testable import EmberRemote
import EmberStorage
import Foundation
import XCTest

/// Ember's clients of two `ember serve` instances sharing one PostgreSQL (the test run's:
/// `EMBER_TEST_POSTGRES_URL`, set by Tests/scripts/with_postgres.py under `make test`): a resume
/// token one instance gave is valid on the other, which sends only what changed since; one older
/// than the log's retention gets the whole result.
final class PostgresInstancesTests: XCTestCase {
    private func postgresServer(retention: Double = 3600) throws -> TestServer {
        guard let url = ProcessInfo.processInfo.environment["EMBER_TEST_POSTGRES_URL"] else {
            throw XCTSkip("EMBER_TEST_POSTGRES_URL is not set: run under Tests/scripts/with_postgres.py (make test does)")
        }
        return try TestServer(configure: { $0.postgres = url; $0.logRetention = retention })
    }

    func testAResumeTokenFromOneInstanceIsValidOnTheOther() throws {
        let a = try postgresServer(), b = try postgresServer()
        defer { a.stop(); b.stop() }
        XCTAssertEqual(try resume(from: a, on: b, waiting: 0), 3, "only the changed and added documents")
    }

    /// The log keeps commits for 0.2 s here: a token older than what it keeps gets a RESET and
    /// the whole result, as Firestore answers a token it no longer honours (never a silent gap).
    func testATokenOlderThanTheRetentionGetsTheWholeResult() throws {
        let a = try postgresServer(retention: 0.2), b = try postgresServer(retention: 0.2)
        defer { a.stop(); b.stop() }
        XCTAssertEqual(try resume(from: a, on: b, waiting: 1.5), 21, "the whole result after a reset")
    }

    /// Listens to a collection of 20 documents on `a` (a durable cache keeps the token), changes
    /// two and adds one through `b`, waits `waiting` seconds, listens again on `b` with the
    /// token, and returns how many documents `b` sent.
    private func resume(from a: TestServer, on b: TestServer, waiting: Double) throws -> Int {
        let col = "resume-" + UUID().uuidString.prefix(8).lowercased()
        let (writer, writerRemote) = try b.client()
        defer { writer.close(); writerRemote.close() }
        XCTAssertNil(try written(writer, (0..<20).map { setM("\(col)/d\($0)", ["n": .int(Int64($0))]) }))
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ember-pg-resume-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("cache.ember").path

        func open(_ server: TestServer) throws -> (EmberClient, RemoteBackend, SQLitePersistence) {
            let cache = try SQLitePersistence(path: path)
            let remote = try RemoteBackend(host: "127.0.0.1", port: server.port, project: server.project)
            return (EmberClient(persistence: cache, backend: Backend(persistence: MemoryPersistence()), documents: remote), remote, cache)
        }

        // On instance A: the whole result, and a token stored with it.
        do {
            let (c, remote, cache) = try open(a)
            let events = Events()
            let token = try c.listen(collection(col), options: ListenOptions(includeMetadataChanges: true), events.append)
            events.wait { s in s.last.map { !$0.isFromCache && $0.documents.count == 20 } ?? false }
            let deadline = Date().addingTimeInterval(10)
            while remote.stats.resumeTokensDelivered == 0 && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
            token.remove()
            c.close()
            remote.close()
            cache.close()
        }
        // Meanwhile, through B: two changes and one new document.
        XCTAssertNil(try written(writer, [setM("\(col)/d1", ["n": .int(100)]), setM("\(col)/d2", ["n": .int(200)]),
                                          setM("\(col)/new", ["n": .int(7)])]))
        Thread.sleep(forTimeInterval: waiting)
        // On instance B with A's token.
        let (c, remote, cache) = try open(b)
        defer { c.close(); remote.close(); cache.close() }
        let events = Events()
        let token = try c.listen(collection(col), options: ListenOptions(includeMetadataChanges: true), events.append)
        defer { token.remove() }
        events.wait { s in
            guard let last = s.last, !last.isFromCache else { return false }
            return last.documents.count == 21 && last.documents.first { $0.key.id == "d1" }?.data["n"] == .int(100)
        }
        return remote.stats.documentsReceived
    }
}

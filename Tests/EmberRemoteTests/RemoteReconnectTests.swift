import EmberBackend
import EmberCore
import EmberModel
@testable import EmberRemote
import EmberStorage
import XCTest

/// A server that goes away and comes back (same port, same file): the listener turns fromCache
/// meanwhile, the Listen stream is opened again and its target resumed with its token (nothing unchanged is sent again), the writes made
/// meanwhile are sent again on a new Write stream and acknowledged.
final class RemoteReconnectTests: XCTestCase {
    func testListenersAndQueuedWritesResumeWhenTheServerComesBack() throws {
        if TestServer.externalPort != nil { throw XCTSkip("restarts an in-process server") }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ember-remote-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("server.ember").path

        var server = try TestServer(path: file)
        let port = server.port
        let (a, remote) = try server.client()
        defer { a.close(); remote.close() }
        XCTAssertNil(try written(a, [setM("c/before", ["n": .int(1)])]))
        let events = Events()
        let token = try a.listen(collection("c"), options: ListenOptions(includeMetadataChanges: true), events.append)
        defer { token.remove() }
        events.wait { s in s.last.map { !$0.isFromCache && $0.documents.count == 1 } ?? false }

        let sentBefore = remote.stats.documentsReceived
        server.stop()
        // The connection loss is no error: the listener's snapshot turns fromCache.
        events.wait { s in s.last.map { $0.isFromCache && $0.documents.count == 1 } ?? false }
        XCTAssertFalse(events.all.contains { if case .error = $0 { return true }; return false })
        // Written while the server is away: shown at once, pending.
        let acked = DispatchSemaphore(value: 0)
        let ackError = Box<EmberError?>()
        try a.write([setM("c/during", ["n": .int(2)])]) { e in ackError.value = e; acked.signal() }
        events.wait { s in s.last?.documents.count == 2 && s.last?.hasPendingWrites == true }

        server = try TestServer(port: port, path: file)
        defer { server.stop() }
        XCTAssertEqual(acked.wait(timeout: .now() + 20), .success, "the queued write is sent again once the server is back")
        XCTAssertNil(ackError.value ?? nil)
        events.wait(timeout: 20) { s in s.last.map { $0.documents.count == 2 && !$0.hasPendingWrites && !$0.isFromCache } ?? false }

        // Another client sees both documents; `a`'s listener sees that client's write.
        let (b, remoteB) = try server.client()
        defer { b.close(); remoteB.close() }
        XCTAssertEqual(try b.getDocuments(collection("c"), source: .server).documents.map { $0.key.id }, ["before", "during"])
        XCTAssertNil(try written(b, [setM("c/after", ["n": .int(3)])]))
        events.wait { s in s.last?.documents.map { $0.key.id } == ["after", "before", "during"] }
        // The target was resumed with its token: "before" was not sent again, only the two new ones.
        XCTAssertEqual(remote.stats.documentsReceived - sentBefore, 2)
    }
}

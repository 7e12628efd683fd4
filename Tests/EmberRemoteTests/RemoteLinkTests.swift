import EmberBackend
import EmberCore
import EmberModel
@testable import EmberRemote
import EmberStorage
import XCTest

/// Clients whose documents sync through `RemoteLink` with an in-process `ember serve`: what one
/// writes, another's listeners see; a local write is pending until the server acknowledges it;
/// a query listener follows documents entering, changing in and leaving it; a batch the server
/// refuses is rolled back and its completion gets the error.
final class RemoteLinkTests: XCTestCase {
    var server: TestServer!
    var clients: [(EmberClient, RemoteBackend)] = []

    override func setUpWithError() throws { server = try TestServer() }

    override func tearDown() {
        for (c, r) in clients { c.close(); r.close() }
        clients = []
        server?.stop()
        server = nil
    }

    private func client() throws -> EmberClient {
        let c = try server.client()
        clients.append(c)
        return c.0
    }

    func testASetIsSeenByAListenerOfAnotherClient() throws {
        let (a, b) = (try client(), try client())
        let events = Events()
        let token = try a.listen(Query(document: key("cities/SF")), events.append)
        defer { token.remove() }
        // First a from-cache event, then the server's answer: the document does not exist.
        events.wait { s in s.contains { !$0.isFromCache && $0.documents.isEmpty } }
        XCTAssertNil(try written(b, [setM("cities/SF", ["name": .string("San Francisco")])]))
        events.wait { s in s.last?.documents.first?.data["name"] == .string("San Francisco") }
        let last = events.snapshots.last!
        XCTAssertFalse(last.isFromCache)
        XCTAssertFalse(last.hasPendingWrites)
        XCTAssertEqual(last.changes.map { $0.kind }, [.added])
    }

    func testALocalWriteIsPendingUntilTheServerAcknowledgesIt() throws {
        let a = try client()
        let events = Events()
        let token = try a.listen(Query(document: key("c/d")), options: ListenOptions(includeMetadataChanges: true), events.append)
        defer { token.remove() }
        events.wait { s in s.contains { !$0.isFromCache } }
        let before = events.snapshots.count
        XCTAssertNil(try written(a, [setM("c/d", ["n": .int(1)])]))
        events.wait { s in s.count > before && s.last?.hasPendingWrites == false && s.last?.documents.count == 1 }
        let after = Array(events.snapshots[before...])
        // The local write at once (pending), then the acknowledgement: the same data, not pending.
        XCTAssertEqual(after.first?.hasPendingWrites, true, "\(after.map(describe))")
        XCTAssertEqual(after.first?.documents.first?.data["n"], .int(1))
        XCTAssertEqual(after.last?.documents.first?.data["n"], .int(1))
        XCTAssertEqual(after.last?.documents.first?.hasLocalMutations, false)
        XCTAssertFalse(after.contains { $0.documents.isEmpty }, "no flicker back to the old state: \(after.map(describe))")
        XCTAssertFalse(after.last!.isFromCache)
        // The cache holds the committed document: a cache read sees it, not pending.
        let cached = try a.getDocument(key("c/d"), source: .cache)
        XCTAssertEqual(cached.document?.data["n"], .int(1))
        XCTAssertFalse(cached.hasPendingWrites)
    }

    func testAQueryListenerSeesDocumentsAddedModifiedAndRemovedByAnotherClient() throws {
        let (a, b) = (try client(), try client())
        XCTAssertNil(try written(b, [setM("cities/LA", ["pop": .int(4)]), setM("cities/SF", ["pop": .int(1)])]))
        let big = try collection("cities").filter(.field(FieldFilter(field: fp("pop"), op: .greaterThanOrEqual, value: .int(2))))
        let events = Events()
        let token = try a.listen(big, events.append)
        defer { token.remove() }
        events.wait { s in s.last.map { !$0.isFromCache && $0.documents.map { $0.key.id } == ["LA"] } ?? false }

        XCTAssertNil(try written(b, [setM("cities/NY", ["pop": .int(8)])]))
        events.wait { s in s.last?.documents.map { $0.key.id } == ["LA", "NY"] }
        XCTAssertEqual(events.snapshots.last!.changes.map { "\($0.kind) \($0.document.key.id)" }, ["added NY"])

        XCTAssertNil(try written(b, [updateM("cities/LA", ["pop": .int(5)])]))
        events.wait { s in s.last?.documents.first?.data["pop"] == .int(5) }
        XCTAssertEqual(events.snapshots.last!.changes.map { "\($0.kind) \($0.document.key.id)" }, ["modified LA"])

        // Leaving the query by a change (the server says DocumentRemove, without the new state).
        XCTAssertNil(try written(b, [updateM("cities/LA", ["pop": .int(0)])]))
        events.wait { s in s.last?.documents.map { $0.key.id } == ["NY"] }
        XCTAssertEqual(events.snapshots.last!.changes.map { "\($0.kind) \($0.document.key.id)" }, ["removed LA"])

        // Leaving it by a delete.
        XCTAssertNil(try written(b, [deleteM("cities/NY")]))
        events.wait { s in s.last?.documents.isEmpty == true }
        XCTAssertEqual(events.snapshots.last!.changes.map { "\($0.kind) \($0.document.key.id)" }, ["removed NY"])
        XCTAssertFalse(events.snapshots.last!.isFromCache)
    }

    func testARejectedBatchIsRolledBackAndItsCompletionFails() throws {
        let a = try client()
        let events = Events()
        let token = try a.listen(collection("c"), options: ListenOptions(includeMetadataChanges: true), events.append)
        defer { token.remove() }
        events.wait { s in s.contains { !$0.isFromCache } }
        // One batch: a set that would succeed and an update of a missing document that cannot.
        let error = try written(a, [setM("c/x", ["v": .int(1)]), updateM("c/none", ["v": .int(2)])])
        XCTAssertEqual(error?.code, .notFound)
        if server.server != nil {   // the emulator words it its own way ("no entity to update")
            XCTAssertEqual(error?.message.hasPrefix("No document to update: \(server.documentsRoot)/c/none"), true, "\(String(describing: error))")
        }
        events.wait { s in s.last?.documents.isEmpty == true && s.last?.hasPendingWrites == false }
        let ids = events.snapshots.map { $0.documents.map { $0.key.id } }
        XCTAssertTrue(ids.contains(["x"]), "the set was shown locally first: \(events.snapshots.map(describe))")
        XCTAssertNil(try a.getDocument(key("c/x"), source: .server).document, "nothing of the batch was applied")
        // The stream is open again: the next write goes through.
        XCTAssertNil(try written(a, [setM("c/y", ["v": .int(3)])]))
        events.wait { s in s.last?.documents.map { $0.key.id } == ["y"] && s.last?.hasPendingWrites == false }
    }
}

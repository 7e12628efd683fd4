// Tests of what SyncEngine does with a server link's own events: a lost connection (listeners
// turn fromCache, writes stay pending, a new result turns them back) and a target the server
// removes with an error (its listeners end with it; others go on).
import XCTest
import Dispatch
import EmberModel
import EmberCore
import EmberStorage
@testable import EmberBackend

final class LinkEventsTests: XCTestCase {
    /// The in-process backend behind a link that a test can make lose its connection, come back,
    /// or reject a target, as a server's link does.
    final class ScriptedEndpoint: BackendEndpoint {
        let backend: Backend
        private(set) var link: ScriptedLink?
        init(_ backend: Backend) { self.backend = backend }

        func openLink(client: BackendClient, queue: DispatchQueue, clientPersistence: Persistence?) -> any BackendLink {
            let l = ScriptedLink(inner: backend.openLink(client: client, queue: queue, clientPersistence: clientPersistence),
                                 client: client, queue: queue)
            link = l
            return l
        }
    }

    final class ScriptedLink: BackendLink, @unchecked Sendable { // confined to `queue`
        let inner: any BackendLink
        weak var client: BackendClient?
        let queue: DispatchQueue
        /// Targets listened to (id -> query), as the core asked; touched on `queue` only.
        private var listened: [Int: Query] = [:]
        /// While the connection is lost, batches wait here (a server link's Write stream sends them
        /// again on reconnection).
        private var lost = false
        private var held: [MutationBatch] = []

        init(inner: any BackendLink, client: BackendClient, queue: DispatchQueue) {
            self.inner = inner
            self.client = client
            self.queue = queue
        }

        /// Tells the core the connection is gone (nothing is listened to on the backend meanwhile).
        func loseConnection() {
            queue.async { [self] in
                lost = true
                for id in listened.keys { inner.unlisten(targetId: id) }
                client?.backend(self, didSend: .connectionLost)
            }
        }

        /// Listens to every target again: each sends its result, as after a reconnection.
        func reconnect() {
            queue.async { [self] in
                lost = false
                for (id, q) in listened { inner.listen(targetId: id, query: q, knownKeys: []) }
                held.forEach(inner.commit)
                held.removeAll()
            }
        }

        /// Removes the targets listening to `query` with `error`, as a server's REMOVE with a cause.
        func reject(_ query: Query, _ error: EmberError) {
            queue.async { [self] in
                for (id, q) in listened where q.canonicalId == query.canonicalId {
                    listened[id] = nil
                    inner.unlisten(targetId: id)
                    client?.backend(self, didSend: .targetRejected(targetId: id, error: error))
                }
            }
        }

        func commit(_ batch: MutationBatch) {
            if lost { held.append(batch) } else { inner.commit(batch) }
        }
        func commitTransaction(_ mutations: [Mutation], completion: @escaping @Sendable (Result<Int64, EmberError>) -> Void) {
            inner.commitTransaction(mutations, completion: completion)
        }
        func listen(targetId: Int, query: Query, knownKeys: [DocumentKey], resumeToken: [UInt8]?) {
            listened[targetId] = query
            inner.listen(targetId: targetId, query: query, knownKeys: knownKeys)
        }
        func unlisten(targetId: Int) {
            listened[targetId] = nil
            inner.unlisten(targetId: targetId)
        }
        func fetchDocuments(_ keys: [DocumentKey], completion: @escaping @Sendable (Result<FetchedDocuments, EmberError>) -> Void) {
            inner.fetchDocuments(keys, completion: completion)
        }
        func fetchQuery(_ query: Query, knownKeys: [DocumentKey], completion: @escaping @Sendable (Result<FetchedQuery, EmberError>) -> Void) {
            inner.fetchQuery(query, knownKeys: knownKeys, completion: completion)
        }
        func fetchCount(_ query: Query, completion: @escaping @Sendable (Result<Int, EmberError>) -> Void) {
            inner.fetchCount(query, completion: completion)
        }
        func fetchCollectionIds(under parent: ResourcePath, completion: @escaping @Sendable (Result<[String], EmberError>) -> Void) {
            inner.fetchCollectionIds(under: parent, completion: completion)
        }
        func disconnect() { inner.disconnect() }
    }

    private func scriptedClient() -> (EmberClient, ScriptedEndpoint) {
        let backend = Backend(persistence: MemoryPersistence())
        let endpoint = ScriptedEndpoint(backend)
        let client = EmberClient(persistence: MemoryPersistence(), backend: backend, documents: endpoint)
        return (client, endpoint)
    }

    func testAListenerTurnsFromCacheWhenTheConnectionIsLostAndBackWithTheNextResult() throws {
        let (c, endpoint) = scriptedClient()
        defer { c.close() }
        XCTAssertNil(writeAndWait(c, [setM("c/a", n(1))]))
        let log = EventLog()
        try c.record(ordered("c"), log, metadata: true)
        settle(c)
        XCTAssertEqual(log.lines, ["added a -1 0 [cache]", "[]"])

        endpoint.link!.loseConnection()
        settle(c)
        XCTAssertEqual(log.lines, ["added a -1 0 [cache]", "[]", "[cache]"])

        // A write while the connection is gone: shown at once, pending, not acknowledged yet.
        let acked = Box<[String]>([])
        try c.write([setM("c/b", n(2))]) { e in acked.mutate { $0.append(e?.code.name ?? "ok") } }
        settle(c)
        XCTAssertEqual(log.lines.last, "added b -1 1 [pending,cache]")

        XCTAssertEqual(acked.value, [])

        endpoint.link!.reconnect()
        settle(c)
        XCTAssertEqual(log.snapshots.last.map { $0.isFromCache }, false, log.lines.joined(separator: " | "))
        XCTAssertEqual(log.snapshots.last.map { $0.hasPendingWrites }, false, log.lines.joined(separator: " | "))
        XCTAssertEqual(acked.value, ["ok"], "the held write is sent and acknowledged once")
        XCTAssertEqual(log.snapshots.last.map(ids), ["a", "b"])
    }

    func testATargetRejectedByTheServerEndsItsListenersWithTheErrorAndNoOthers() throws {
        let (c, endpoint) = scriptedClient()
        defer { c.close() }
        XCTAssertNil(writeAndWait(c, [setM("c/a", n(1)), setM("d/x", n(1))]))
        let first = EventLog(), second = EventLog(), other = EventLog()
        let gone = Box<Int>(0)
        try c.record(ordered("c"), first, onGone: { gone.mutate { $0 += 1 } })
        try c.record(ordered("c"), second)
        try c.record(ordered("d"), other)
        settle(c)

        endpoint.link!.reject(ordered("c"), EmberError(.permissionDenied, "Missing or insufficient permissions."))
        settle(c)
        // (Each first event is from the cache or not, as the result raced the second listen.)
        XCTAssertEqual(first.lines.map { $0.hasPrefix("added a -1 0") ? "added a" : $0 }, ["added a", "error PERMISSION_DENIED"])
        XCTAssertEqual(second.lines.map { $0.hasPrefix("added a -1 0") ? "added a" : $0 }, ["added a", "error PERMISSION_DENIED"])
        XCTAssertEqual(gone.value, 1, "the ended listener's onGone runs once")

        // The ended listeners hear nothing more; the other query's listener goes on.
        XCTAssertNil(writeAndWait(c, [setM("c/b", n(2)), setM("d/y", n(2))]))
        settle(c)
        XCTAssertEqual(first.lines.count, 2)
        XCTAssertEqual(second.lines.count, 2)
        XCTAssertEqual(other.lines.last, "added y -1 1 [pending]")
        XCTAssertFalse(other.lines.contains { $0.hasPrefix("error") })

        // Listening again to the same query starts a new target.
        let again = EventLog()
        try c.record(ordered("c"), again)
        settle(c)
        XCTAssertEqual(again.snapshots.last.map(ids), ["a", "b"])
    }
}

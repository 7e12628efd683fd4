import EmberConcurrency
import Dispatch
import EmberBackend
import EmberModel
import EmberWire
import EmberStorage
import Foundation

/// Responsible for: one client's link to a server, behind the core's `BackendLink`: targets go
/// to the Listen stream, queued batches to the Write stream, one-shot reads and transactions to
/// request/response calls. Its state lives on its own serial queue; everything it sends the
/// client (events and replies) arrives, in order, on the client's delivery queue. After
/// `disconnect` nothing more is delivered.
///
///     let link = remote.openLink(client: engine, queue: worker, clientPersistence: nil)
final class RemoteLink: BackendLink {
    private let queue = DispatchQueue(label: "ember.remote")
    private let deliveryQueue: DispatchQueue
    /// Read and cleared on `deliveryQueue` only.
    private weak var client: BackendClient?
    /// Keeps the endpoint (and its connection) alive while the link is.
    private let endpoint: RemoteBackend
    private let calls: RemoteCalls
    private var watch: WatchStream!
    private var writes: WriteStream!

    init(endpoint: RemoteBackend, client: BackendClient, deliveryQueue: DispatchQueue) {
        self.endpoint = endpoint
        self.client = client
        self.deliveryQueue = deliveryQueue
        self.calls = RemoteCalls(client: endpoint.firestore, database: endpoint.remoteDatabase)
        let send: (BackendEvent) -> Void = { [weak self] e in self?.send(e) }
        watch = WatchStream(queue: queue, client: endpoint.firestore, database: endpoint.remoteDatabase, stats: endpoint.stats,
                            log: endpoint.connectionLog, deliver: send)
        writes = WriteStream(queue: queue, client: endpoint.firestore, database: endpoint.remoteDatabase, log: endpoint.connectionLog, deliver: send)
    }

    /// Called on `queue`: hands an event to the client, in order.
    private func send(_ event: BackendEvent) {
        deliveryQueue.asyncConfined { [weak self] in
            guard let self, let client = self.client else { return }
            client.backend(self, didSend: event)
        }
    }

    /// Runs `call` and hands its outcome to `completion` on the delivery queue.
    private func reply<T: Sendable>(_ completion: @escaping @Sendable (Result<T, EmberError>) -> Void, _ call: @escaping @Sendable () async throws -> T) {
        let deliveryQueue = self.deliveryQueue
        Task {
            let r: Result<T, EmberError>
            do { r = .success(try await call()) } catch { r = .failure(.remote(error)) }
            deliveryQueue.asyncConfined { completion(r) }
        }
    }

    // MARK: BackendLink

    func commit(_ batch: MutationBatch) {
        queue.asyncConfined { [self] in writes.enqueue(batch) }
    }

    func commitTransaction(_ mutations: [Mutation], completion: @escaping @Sendable (Result<Int64, EmberError>) -> Void) {
        let calls = self.calls
        reply(completion) { try await calls.commit(mutations) }
    }

    func listen(targetId: Int, query: Query, knownKeys: [DocumentKey], resumeToken: [UInt8]?) {
        queue.asyncConfined { [self] in
            watch.add(Int32(truncatingIfNeeded: targetId), query: query, knownKeys: knownKeys, resumeToken: resumeToken.map { Data($0) })
        }
    }

    func unlisten(targetId: Int) {
        queue.asyncConfined { [self] in watch.remove(Int32(truncatingIfNeeded: targetId)) }
    }

    func fetchDocuments(_ keys: [DocumentKey], completion: @escaping @Sendable (Result<FetchedDocuments, EmberError>) -> Void) {
        let calls = self.calls
        reply(completion) { try await calls.batchGet(keys) }
    }

    func fetchQuery(_ query: Query, knownKeys: [DocumentKey], completion: @escaping @Sendable (Result<FetchedQuery, EmberError>) -> Void) {
        let calls = self.calls
        reply(completion) {
            let (docs, version) = try await calls.runQuery(query)
            let inResult = Set(docs.map { $0.key })
            let others = knownKeys.filter { !inResult.contains($0) }
            let resolved = try await calls.batchGet(others).documents
            return FetchedQuery(documents: docs, resolved: resolved, readVersion: version)
        }
    }

    func fetchCount(_ query: Query, completion: @escaping @Sendable (Result<Int, EmberError>) -> Void) {
        let calls = self.calls
        reply(completion) { try await calls.count(query) }
    }

    func fetchCollectionIds(under parent: ResourcePath, completion: @escaping @Sendable (Result<[String], EmberError>) -> Void) {
        let calls = self.calls
        reply(completion) { try await calls.collectionIds(under: parent) }
    }

    var reportsTargetMembership: Bool { true }

    func setNetworkEnabled(_ enabled: Bool) {
        queue.asyncConfined { [self] in
            watch.setEnabled(enabled)
            writes.setEnabled(enabled)
        }
    }

    func disconnect() {
        queue.asyncConfined { [self] in
            watch.close()
            writes.close()
            deliveryQueue.asyncConfined { [self] in client = nil }
        }
    }
}

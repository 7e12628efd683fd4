import Dispatch
import EmberModel
import EmberStorage

/// Responsible for: the in-process backend behind the core's `BackendLink` boundary: a
/// `BackendConnection` is a link whose reads never fail, and a `Backend` opens them.
extension BackendConnection: BackendLink {
    /// The in-process backend always answers with the whole result: the token is not needed.
    public func listen(targetId: Int, query: Query, knownKeys: [DocumentKey], resumeToken: [UInt8]?) {
        listen(targetId: targetId, query: query, knownKeys: knownKeys)
    }

    public func fetchDocuments(_ keys: [DocumentKey], completion: @escaping @Sendable (Result<FetchedDocuments, EmberError>) -> Void) {
        lookup(keys) { docs, version in completion(.success(FetchedDocuments(documents: docs, readVersion: version))) }
    }

    public func fetchQuery(_ query: Query, knownKeys: [DocumentKey], completion: @escaping @Sendable (Result<FetchedQuery, EmberError>) -> Void) {
        runQuery(query, knownKeys: knownKeys) { docs, resolved, version in
            completion(.success(FetchedQuery(documents: docs, resolved: resolved, readVersion: version)))
        }
    }

    public func fetchCount(_ query: Query, completion: @escaping @Sendable (Result<Int, EmberError>) -> Void) {
        count(query) { completion(.success($0)) }
    }

    public func fetchCollectionIds(under parent: ResourcePath, completion: @escaping @Sendable (Result<[String], EmberError>) -> Void) {
        collectionIds(under: parent) { completion(.success($0)) }
    }
}

extension Backend: BackendEndpoint {
    public func openLink(client: BackendClient, queue: DispatchQueue, clientPersistence: Persistence?) -> any BackendLink {
        connect(client: client, queue: queue, clientPersistence: clientPersistence)
    }
}

import Dispatch
import EmberModel
import EmberStorage

/// Responsible for: what a client's core needs from the backend it syncs with, whatever that
/// backend is (the in-process `Backend` through a `BackendConnection`, or a server through a
/// remote link). Everything is asynchronous: messages the backend sends (listen results, changes,
/// acknowledgements, rejections) arrive as `BackendEvent`s, and replies to the one-shot reads as
/// completions, in order, on the queue the link was opened with. A read that cannot be answered
/// (a server out of reach) completes with an error; the in-process backend never fails one.
///
///     let link = endpoint.openLink(client: engine, queue: worker, clientPersistence: cache)
///     link.listen(targetId: 1, query: q, knownKeys: [])   // -> .listenResult, then .commit events
///     link.commit(batch)                                  // -> .commit(ack:) / .acknowledged / .writeRejected
public protocol BackendLink: AnyObject {
    /// Sends a queued batch; its outcome arrives as an acknowledgement (`.commit` with `ack`, or
    /// `.acknowledged`) or `.writeRejected`, batches in the order they were sent.
    func commit(_ batch: MutationBatch)
    /// Commits a transaction's writes (with their preconditions) outside the write queue; the
    /// commit version or the error that refused it.
    func commitTransaction(_ mutations: [Mutation], completion: @escaping @Sendable (Result<Int64, EmberError>) -> Void)
    /// Starts watching `query` as `targetId` (`knownKeys`: the documents the client's view holds,
    /// whose current state the result must settle); `.listenResult` follows, then `.commit` events.
    /// With a `resumeToken` the client last got from this backend (`.resumeToken`), a server sends
    /// only what changed since, then an empty `.listenResult`; the in-process backend ignores it.
    func listen(targetId: Int, query: Query, knownKeys: [DocumentKey], resumeToken: [UInt8]?)
    func unlisten(targetId: Int)
    /// The current states of `keys` (tombstones for missing ones), in order, and the read version.
    func fetchDocuments(_ keys: [DocumentKey], completion: @escaping @Sendable (Result<FetchedDocuments, EmberError>) -> Void)
    /// A query's result once (limit applied), plus the current state of each known key not in it.
    func fetchQuery(_ query: Query, knownKeys: [DocumentKey], completion: @escaping @Sendable (Result<FetchedQuery, EmberError>) -> Void)
    /// The number of documents in the query's result (limit applied).
    func fetchCount(_ query: Query, completion: @escaping @Sendable (Result<Int, EmberError>) -> Void)
    /// The ids of the collections directly under `parent` (a document path, or the root) holding a document.
    func fetchCollectionIds(under parent: ResourcePath, completion: @escaping @Sendable (Result<[String], EmberError>) -> Void)
    /// Stops every target; nothing reaches the client after it.
    func disconnect()
    /// See the extension's defaults (false; nothing to do).
    var reportsTargetMembership: Bool { get }
    func setNetworkEnabled(_ enabled: Bool)
}

extension BackendLink {
    /// Whether the link reports its targets' membership (`BackendEvent.watch`, a server's
    /// Listen stream): the client then tracks which documents the server holds in each target
    /// and resolves the others (limbo documents) with targets of their own. `knownKeys` of
    /// `listen` are then the keys the server last held in the target.
    public var reportsTargetMembership: Bool { false }

    /// The client's network switch: a link to a server closes its streams when it is turned
    /// off and opens them again (sending what is still queued) when it is turned on.
    public func setNetworkEnabled(_ enabled: Bool) {}

    /// Starts watching `query` from scratch (no resume token).
    public func listen(targetId: Int, query: Query, knownKeys: [DocumentKey]) {
        listen(targetId: targetId, query: query, knownKeys: knownKeys, resumeToken: nil)
    }
}

/// Responsible for: the outcome of a batch committed on the caller's thread
/// (`BackendConnection.commitNow`): acknowledged (the event the client would have received),
/// refused by the backend (a precondition, a limit), or not stored (a full disk, an I/O error:
/// the batch was not applied, and the writer is told at once).
public enum InlineCommitOutcome {
    case acknowledged(BackendEvent)
    case rejected(EmberError)
    case notStored(EmberError)
}

/// Responsible for: opening links to one backend (the in-process `Backend`, a server's address).
public protocol BackendEndpoint: AnyObject {
    /// A link whose events and replies are delivered to `client` on `queue`. `clientPersistence`
    /// is the client's store (the in-process backend uses it to recognise a client caching in its
    /// own durable file).
    func openLink(client: BackendClient, queue: DispatchQueue, clientPersistence: Persistence?) -> any BackendLink
}

/// Responsible for: the answer to `fetchDocuments`: one state per key asked, and the read version.
public struct FetchedDocuments: Sendable {
    public let documents: [Document]
    public let readVersion: Int64
    public init(documents: [Document], readVersion: Int64) {
        self.documents = documents
        self.readVersion = readVersion
    }
}

/// Responsible for: the answer to `fetchQuery`: the result, the current state of known keys not in
/// it (documents that left the result or no longer exist), and the read version.
public struct FetchedQuery: Sendable {
    public let documents: [Document]
    public let resolved: [Document]
    public let readVersion: Int64
    public init(documents: [Document], resolved: [Document], readVersion: Int64) {
        self.documents = documents
        self.resolved = resolved
        self.readVersion = readVersion
    }
}

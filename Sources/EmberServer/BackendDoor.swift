import EmberConcurrency
import Dispatch
import EmberBackend
import EmberModel
import EmberWire
import GRPCCore

/// Responsible for: the server's one connection to the backend for request/response calls
/// (reads, queries, commits), as async functions. The backend stays the store: the server only
/// translates. Lookups and commits wait on the backend's queue from the request's own thread, so
/// one on an idle backend runs where its request was read, with no thread hand-off there and
/// back (docs/performance.md); a busy backend holds the caller as it would hold the answer.
/// Queries and collection listings, which may scan, are answered on the door's queue instead.
/// With a shared log (`--postgres`) a commit waits on PostgreSQL on the backend's queue, so
/// nothing waits on that queue from an event loop: every call is answered on the door's queue.
final class BackendDoor: BackendClient, Sendable {
    let backend: Backend
    private let queue = DispatchQueue(label: "ember.server.door", attributes: .concurrent)
    /// Set once, in `init` (the connection needs `self` as its client).
    private let opened = LockedValueBox<BackendConnection?>(nil)
    private var connection: BackendConnection { opened.current! }
    /// Whether lookups and commits wait on the backend's queue from the request's thread.
    private let waits: Bool

    init(backend: Backend) {
        self.backend = backend
        waits = backend.commitLog == nil
        let connection = backend.connect(client: self, queue: queue)
        opened.withLockedValue { $0 = connection }
    }

    /// Unary calls watch nothing: no event is expected.
    func backend(_ link: any BackendLink, didSend event: BackendEvent) {}

    func lookup(_ keys: [DocumentKey]) async -> (documents: [Document], version: Int64) {
        if waits { return connection.lookupWaiting(keys) }
        return await withCheckedContinuation { c in connection.lookup(keys) { c.resume(returning: ($0.0, $0.1)) } }
    }

    /// A query may scan a whole collection: it does not hold the request's thread (an event
    /// loop other connections share) but is answered on the door's queue.
    func run(_ query: Query) async -> (documents: [Document], version: Int64) {
        await withCheckedContinuation { c in connection.runQuery(query, knownKeys: []) { c.resume(returning: ($0.0, $0.2)) } }
    }

    /// `authorize` (the caller's rules) is asked about each document inside the commit.
    func commit(_ mutations: [Mutation], reads: [DocumentKey: Int64] = [:], authorize: CommitAuthorizer? = nil) async throws -> CommitOutcome {
        if waits { return try connection.commitWaiting(mutations, reads: reads, authorize: authorize).mapError(RPCError.init(ember:)).get() }
        let result = await withCheckedContinuation { c in
            connection.commit(mutations, reads: reads, authorize: authorize) { c.resume(returning: $0) }
        }
        return try result.mapError(RPCError.init(ember:)).get()
    }

    func collectionIds(under parent: ResourcePath) async -> [String] {
        await withCheckedContinuation { c in connection.collectionIds(under: parent) { c.resume(returning: $0) } }
    }

    func close() { connection.disconnect() }
}

extension RPCError {
    /// Ember's error with its status code and message.
    init(ember e: EmberError) {
        self.init(code: RPCError.Code(ember: e.code), message: DatabaseName.externalize(e.message))
    }
}

extension RPCError.Code {
    init(ember code: ErrorCode) {
        switch code {
        case .ok, .unknown: self = .unknown
        case .cancelled: self = .cancelled
        case .invalidArgument: self = .invalidArgument
        case .deadlineExceeded: self = .deadlineExceeded
        case .notFound: self = .notFound
        case .alreadyExists: self = .alreadyExists
        case .permissionDenied: self = .permissionDenied
        case .resourceExhausted: self = .resourceExhausted
        case .failedPrecondition: self = .failedPrecondition
        case .aborted: self = .aborted
        case .outOfRange: self = .outOfRange
        case .unimplemented: self = .unimplemented
        case .internal: self = .internalError
        case .unavailable: self = .unavailable
        case .dataLoss: self = .dataLoss
        case .unauthenticated: self = .unauthenticated
        }
    }
}

/// Runs `body`, turning Ember's errors into gRPC statuses.
func rpc<T>(_ body: () async throws -> T) async throws -> T {
    do { return try await body() } catch let e as EmberError { throw RPCError(ember: e) }
}

import EmberBackend
import EmberFirestoreProto
import EmberModel
import EmberWire
import GRPCCore
import GRPCNIOTransportHTTP2

typealias FirestoreClient = Google_Firestore_V1_Firestore.Client<HTTP2ClientTransport.Posix>

/// Responsible for: the request/response calls a link makes (BatchGetDocuments, RunQuery,
/// RunAggregationQuery's count, Commit, ListCollectionIds), as async functions in Ember's terms.
/// A call fails at once with UNAVAILABLE when the server cannot be reached (it does not wait for
/// a connection) and after `timeout` seconds at most.
///
///     let docs = try await calls.batchGet([key])      // one state per key, in order
struct RemoteCalls: Sendable {
    let client: FirestoreClient
    let database: RemoteDatabase
    var timeout: Duration = .seconds(30)

    private var options: CallOptions {
        var o = CallOptions.defaults
        o.timeout = timeout
        o.waitForReady = false
        return o
    }

    /// The current state of each key (tombstones at the read time for missing ones), in order.
    func batchGet(_ keys: [DocumentKey]) async throws -> FetchedDocuments {
        guard !keys.isEmpty else { return FetchedDocuments(documents: [], readVersion: 0) }
        var req = Google_Firestore_V1_BatchGetDocumentsRequest()
        req.database = database.name
        req.documents = keys.map(database.codec.name(of:))
        let database = self.database
        let (found, missing, version): ([DocumentKey: Document], [DocumentKey: Int64], Int64) =
            try await client.batchGetDocuments(req, metadata: database.metadata, options: options) { response in
                var found: [DocumentKey: Document] = [:]
                var missing: [DocumentKey: Int64] = [:]
                var version: Int64 = 0
                for try await r in response.messages {
                    let readTime = WireCodec.micros(r.readTime)
                    version = max(version, readTime)
                    switch r.result {
                    case .found(let d)?: let doc = try database.codec.document(d); found[doc.key] = doc
                    case .missing(let name)?: missing[try database.codec.key(name)] = readTime
                    case nil: break
                    }
                }
                return (found, missing, version)
            }
        let docs = keys.map { key in found[key] ?? Document.missing(key, version: missing[key] ?? version) }
        return FetchedDocuments(documents: docs, readVersion: version)
    }

    /// The query's result in its order (limit applied) and the read time.
    func runQuery(_ query: Query) async throws -> ([Document], Int64) {
        if let key = query.documentKey {
            let got = try await batchGet([key])
            return (got.documents.filter { $0.exists }, got.readVersion)
        }
        let wq = RemoteQuery(query, database.codec)
        var req = Google_Firestore_V1_RunQueryRequest()
        req.parent = wq.parent
        req.structuredQuery = wq.structured
        let database = self.database
        let (docs, version): ([Document], Int64) = try await client.runQuery(req, metadata: database.metadata, options: options) { response in
            var docs: [Document] = []
            var version: Int64 = 0
            for try await r in response.messages {
                if r.hasReadTime { version = max(version, WireCodec.micros(r.readTime)) }
                if r.hasDocument { docs.append(try database.codec.document(r.document)) }
            }
            return (docs, version)
        }
        return (wq.reversesResult ? docs.reversed() : docs, version)
    }

    /// The number of documents in the query's result (limit applied).
    func count(_ query: Query) async throws -> Int {
        if query.documentKey != nil { return try await runQuery(query).0.count }
        let wq = RemoteQuery(query, database.codec)
        var agg = Google_Firestore_V1_StructuredAggregationQuery()
        agg.structuredQuery = wq.structured
        var count = Google_Firestore_V1_StructuredAggregationQuery.Aggregation()
        count.count = .init()
        count.alias = "count"
        agg.aggregations = [count]
        var req = Google_Firestore_V1_RunAggregationQueryRequest()
        req.parent = wq.parent
        req.structuredAggregationQuery = agg
        return try await client.runAggregationQuery(req, metadata: database.metadata, options: options) { response in
            var n: Int64 = 0
            for try await r in response.messages {
                if let v = r.result.aggregateFields.last(where: { $0.key == "count" })?.value, case .integerValue(let i)? = v.valueType { n = i }
            }
            return Int(n)
        }
    }

    /// Commits `mutations` atomically outside the Write stream (a transaction's writes and
    /// verifies); the commit time.
    func commit(_ mutations: [Mutation]) async throws -> Int64 {
        let writes = RemoteWrites(codec: database.codec)
        var req = Google_Firestore_V1_CommitRequest()
        req.database = database.name
        req.writes = mutations.map(writes.write)
        let r = try await client.commit(req, metadata: database.metadata, options: options)
        return WireCodec.micros(r.commitTime)
    }

    /// The ids of the collections under `parent` holding a document, every page. (Listing is an
    /// admin operation: without a token of its own the client asks as the emulator's `owner`,
    /// which `ember serve` without rules does not read.)
    func collectionIds(under parent: ResourcePath) async throws -> [String] {
        var metadata = database.metadata
        if database.authToken == nil { metadata.addString("Bearer owner", forKey: "authorization") }
        var ids: [String] = []
        var req = Google_Firestore_V1_ListCollectionIdsRequest()
        req.parent = database.codec.name(of: parent)
        req.pageSize = 1000
        while true {
            let r = try await client.listCollectionIds(req, metadata: metadata, options: options)
            ids += r.collectionIds
            if r.nextPageToken.isEmpty { return ids }
            req.pageToken = r.nextPageToken
        }
    }
}

extension EmberError {
    /// Ember's error for what a call threw: a gRPC status keeps its code and message.
    static func remote(_ error: Error) -> EmberError {
        if let e = error as? EmberError { return e }
        if let e = error as? RPCError {
            return EmberError(ErrorCode(rawValue: Int32(e.code.rawValue)) ?? .unknown, e.message)
        }
        if error is CancellationError { return EmberError(.cancelled, "The call was cancelled.") }
        return EmberError(.unavailable, "The server could not be reached: \(error)")
    }
}

import EmberBackend
import EmberFirestoreProto
import EmberModel
import EmberWire
import EmberRules
import Foundation
import GRPCCore
import SwiftProtobuf

typealias FS = Google_Firestore_V1_Firestore

/// Responsible for: the google.firestore.v1.Firestore service over Ember's backend: each RPC
/// parses its request (names, values, queries, writes), asks the backend, and answers in the
/// wire format with Firestore's status codes and wording. The Listen and Write streams are
/// sessions of their own (ListenSession, WriteSession). Every read, query and write is decided
/// by `access` (the rules, for the call's `Caller`) before anything is answered or applied.
final class FirestoreService: FS.SimpleServiceProtocol, Sendable {
    let door: BackendDoor
    let transactions = Transactions()
    let streams: StreamRegistry
    let access: AccessControl
    /// What a response stream may queue while its client does not read (OutputGate).
    let outputLimits: OutputGate.Limits
    let ledger = OutputLedger()

    init(door: BackendDoor, streams: StreamRegistry, access: AccessControl, outputLimits: OutputGate.Limits) {
        self.door = door
        self.streams = streams
        self.access = access
        self.outputLimits = outputLimits
    }

    // MARK: documents

    func getDocument(request: Google_Firestore_V1_GetDocumentRequest, context: ServerContext) async throws -> WireDocument {
        try await rpc {
            let (db, key) = try DatabaseName.parse(document: request.name)
            if case .readTime(let t)? = request.consistencySelector { try await refuseHistory(t) }
            let (docs, _) = await door.lookup([key])
            try access.checkGet(Caller.current, db, docs)
            if case .transaction(let t)? = request.consistencySelector { try transactions.noteReads(Caller.current, t, db: db, documents: docs) }
            guard let d = docs.first, d.exists else {
                throw EmberError(.notFound, "Document \"\(request.name)\" not found.")
            }
            return WireCodec(db: db).document(d, mask: try mask(request.hasMask ? request.mask : nil, db))
        }
    }

    func batchGetDocuments(request: Google_Firestore_V1_BatchGetDocumentsRequest, response: RPCWriter<Google_Firestore_V1_BatchGetDocumentsResponse>, context: ServerContext) async throws {
        try await rpc {
            let db = try DatabaseName(parsing: request.database)
            // A document named twice is answered once, as Firestore does.
            var keys: [DocumentKey] = []
            var names: [String] = []
            var seen = Set<DocumentKey>()
            for name in request.documents {
                let (d, key) = try DatabaseName.parse(document: name)
                guard d == db else { throw EmberError.invalidArgument("Document '\(name)' is not in database '\(db.name)'") }
                if seen.insert(key).inserted { keys.append(key); names.append(name) }
            }
            if case .readTime(let t)? = request.consistencySelector { try await refuseHistory(t) }
            let txn = try transaction(for: request.consistencySelector, db: db)
            let (docs, version) = await door.lookup(keys)
            try access.checkGet(Caller.current, db, docs)
            if let txn { try transactions.noteReads(Caller.current, txn.id, db: db, documents: docs) }
            let codec = WireCodec(db: db)
            let fields = try mask(request.hasMask ? request.mask : nil, db)
            var first = true
            for (i, d) in docs.enumerated() {
                var r = Google_Firestore_V1_BatchGetDocumentsResponse()
                if d.exists { r.found = codec.document(d, mask: fields) } else { r.missing = names[i] }
                r.readTime = WireCodec.timestamp(micros: version)
                if first, let txn, txn.isNew { r.transaction = txn.id }
                first = false
                try await response.write(r)
            }
            if first, let txn, txn.isNew {
                var r = Google_Firestore_V1_BatchGetDocumentsResponse()
                r.transaction = txn.id
                r.readTime = WireCodec.timestamp(micros: version)
                try await response.write(r)
            }
        }
    }

    func listDocuments(request: Google_Firestore_V1_ListDocumentsRequest, context: ServerContext) async throws -> Google_Firestore_V1_ListDocumentsResponse {
        try await rpc {
            let (db, parent) = try DatabaseName.parse(resource: request.parent)
            guard !parent.isCollectionPath || parent.isEmpty else { throw EmberError.invalidArgument("Invalid parent '\(request.parent)': a collection's parent is the documents root or a document") }
            guard !request.collectionID.isEmpty else { throw EmberError.invalidArgument("collection_id is required") }
            try ResourcePath.validateSegment(request.collectionID)
            if !request.orderBy.isEmpty && request.orderBy != "__name__" && request.orderBy != "__name__ asc" {
                throw EmberError(.unimplemented, "ListDocuments orders by document name only")
            }
            guard request.pageSize >= 0 else { throw EmberError.invalidArgument("page_size is negative") }
            if case .readTime(let t)? = request.consistencySelector { try await refuseHistory(t) }
            try access.checkList(Caller.current, db, collection: parent.appending(request.collectionID),
                                 query: RulesQuery(limit: request.pageSize > 0 ? Int(request.pageSize) : nil))
            let collection = db.internalPath(parent.appending(request.collectionID))
            let (docs, _) = await door.run(Query(collection: collection))
            if case .transaction(let t)? = request.consistencySelector { try transactions.noteReads(Caller.current, t, db: db, documents: docs) }
            let codec = WireCodec(db: db)
            var names: [(String, Document?)] = docs.map { (codec.db.name(of: $0.key), $0) }
            if request.showMissing {
                // Documents that do not exist but have a subcollection holding a document, as
                // names only. (The store's "collection ids under a path", asked of a collection,
                // gives the ids of its documents with something below them.)
                let present = Set(docs.map { UTF8String($0.key.id) })
                for id in await door.collectionIds(under: collection) where !present.contains(UTF8String(id)) {
                    names.append((codec.db.name(of: DocumentKey(unchecked: collection.appending(id))), nil))
                }
                names.sort { compareUTF8($0.0, $1.0) < 0 }
            }
            if !request.pageToken.isEmpty {
                names = names.filter { compareUTF8($0.0, request.pageToken) > 0 }
            }
            var out = Google_Firestore_V1_ListDocumentsResponse()
            let size = request.pageSize > 0 ? Int(request.pageSize) : Int.max
            let page = names.prefix(size)
            let fields = try mask(request.hasMask ? request.mask : nil, db)
            out.documents = page.map { name, doc in
                if let doc { return codec.document(doc, mask: fields) }
                var w = WireDocument()
                w.name = name
                return w
            }
            if names.count > size, let last = page.last { out.nextPageToken = last.0 }
            return out
        }
    }

    func createDocument(request: Google_Firestore_V1_CreateDocumentRequest, context: ServerContext) async throws -> WireDocument {
        try await rpc {
            let (db, parent) = try DatabaseName.parse(resource: request.parent)
            guard !parent.isCollectionPath || parent.isEmpty else { throw EmberError.invalidArgument("Invalid parent '\(request.parent)'") }
            try ResourcePath.validateSegment(request.collectionID)
            let id = request.documentID.isEmpty ? AutoId.make() : request.documentID
            try ResourcePath.validateSegment(id)
            var doc = request.document
            doc.name = db.documentsRoot + "/" + parent.appending(request.collectionID).appending(id).canonical
            var w = WireWrite()
            w.update = doc
            w.currentDocument.exists = false
            return try await writeOne(w, db: db, mask: request.hasMask ? request.mask : nil)
        }
    }

    func updateDocument(request: Google_Firestore_V1_UpdateDocumentRequest, context: ServerContext) async throws -> WireDocument {
        try await rpc {
            let (db, _) = try DatabaseName.parse(document: request.document.name)
            var w = WireWrite()
            w.update = request.document
            if request.hasUpdateMask { w.updateMask = request.updateMask }
            if request.hasCurrentDocument { w.currentDocument = request.currentDocument }
            return try await writeOne(w, db: db, mask: request.hasMask ? request.mask : nil)
        }
    }

    func deleteDocument(request: Google_Firestore_V1_DeleteDocumentRequest, context: ServerContext) async throws -> Google_Protobuf_Empty {
        try await rpc {
            let (db, _) = try DatabaseName.parse(document: request.name)
            var w = WireWrite()
            w.delete = request.name
            if request.hasCurrentDocument { w.currentDocument = request.currentDocument }
            _ = try await door.commit([try WireWrites(codec: WireCodec(db: db)).mutation(w)],
                                      authorize: try access.commitAuthorizer(Caller.current, db))
            return Google_Protobuf_Empty()
        }
    }

    private func writeOne(_ w: WireWrite, db: DatabaseName, mask m: Google_Firestore_V1_DocumentMask?) async throws -> WireDocument {
        let codec = WireCodec(db: db)
        let mutation = try WireWrites(codec: codec).mutation(w)
        let outcome = try await door.commit([mutation], authorize: try access.commitAuthorizer(Caller.current, db))
        guard let d = outcome.documents[mutation.key], d.exists else {
            throw EmberError(.internal, "The written document is missing")
        }
        // The answer holds the whole document: only for a caller who may read it (a write rule
        // alone gets the name and times).
        if (try? access.checkGet(Caller.current, db, [d])) == nil { return codec.document(d, mask: []) }
        return codec.document(d, mask: try mask(m, db))
    }

    // MARK: commits and transactions

    func commit(request: Google_Firestore_V1_CommitRequest, context: ServerContext) async throws -> Google_Firestore_V1_CommitResponse {
        try await rpc {
            let db = try DatabaseName(parsing: request.database)
            let writes = WireWrites(codec: WireCodec(db: db))
            let mutations = try request.writes.map(writes.mutation)
            var reads: [DocumentKey: Int64] = [:]
            if !request.transaction.isEmpty {
                let t = try transactions.finish(Caller.current, request.transaction, db: db)
                if t.readOnly, !mutations.isEmpty { throw EmberError.invalidArgument("Cannot modify entities in a read-only transaction.") }
                reads = t.reads
            }
            var out = Google_Firestore_V1_CommitResponse()
            if mutations.isEmpty && reads.isEmpty {
                let (_, version) = await door.lookup([])
                out.commitTime = WireCodec.timestamp(micros: version)
                return out
            }
            let outcome = try await door.commit(mutations, reads: reads, authorize: try access.commitAuthorizer(Caller.current, db))
            out.commitTime = WireCodec.timestamp(micros: outcome.version)
            out.writeResults = mutations.map { writes.result(of: $0, committed: outcome.documents[$0.key], commitTime: outcome.version) }
            return out
        }
    }

    func batchWrite(request: Google_Firestore_V1_BatchWriteRequest, context: ServerContext) async throws -> Google_Firestore_V1_BatchWriteResponse {
        try await rpc {
            let db = try DatabaseName(parsing: request.database)
            let writes = WireWrites(codec: WireCodec(db: db))
            var keys = Set<DocumentKey>()
            var out = Google_Firestore_V1_BatchWriteResponse()
            let authorize = try access.commitAuthorizer(Caller.current, db)
            // Each write is applied on its own (BatchWrite is not atomic); one document twice is refused.
            for w in request.writes {
                var status = Google_Rpc_Status()
                var result = Google_Firestore_V1_WriteResult()
                do {
                    let m = try writes.mutation(w)
                    guard keys.insert(m.key).inserted else {
                        throw EmberError.invalidArgument("A BatchWrite cannot write the same document twice")
                    }
                    let outcome = try await door.commit([m], authorize: authorize)
                    result = writes.result(of: m, committed: outcome.documents[m.key], commitTime: outcome.version)
                } catch let e as EmberError {
                    status.code = e.code.rawValue
                    status.message = DatabaseName.externalize(e.message)
                } catch let e as RPCError {
                    status.code = Int32(e.code.rawValue)
                    status.message = e.message
                }
                out.writeResults.append(result)
                out.status.append(status)
            }
            return out
        }
    }

    func beginTransaction(request: Google_Firestore_V1_BeginTransactionRequest, context: ServerContext) async throws -> Google_Firestore_V1_BeginTransactionResponse {
        try await rpc {
            let db = try DatabaseName(parsing: request.database)
            if case .readOnly(let ro)? = request.options.mode, case .readTime(let t)? = ro.consistencySelector { try await refuseHistory(t) }
            var out = Google_Firestore_V1_BeginTransactionResponse()
            out.transaction = try transactions.begin(Caller.current, db: db, readOnly: isReadOnly(request.options))
            return out
        }
    }

    private func isReadOnly(_ o: Google_Firestore_V1_TransactionOptions) -> Bool {
        if case .readOnly? = o.mode { return true }
        return false
    }

    func rollback(request: Google_Firestore_V1_RollbackRequest, context: ServerContext) async throws -> Google_Protobuf_Empty {
        try await rpc {
            let db = try DatabaseName(parsing: request.database)
            try transactions.rollback(Caller.current, request.transaction, db: db)
            return Google_Protobuf_Empty()
        }
    }

    /// The transaction a read runs in: an existing one, or a new one begun for it (returned to
    /// the client in the first response).
    private func transaction<S>(for selector: S?, db: DatabaseName) throws -> (id: Data, isNew: Bool)? {
        switch selector {
        case let s as Google_Firestore_V1_BatchGetDocumentsRequest.OneOf_ConsistencySelector:
            switch s {
            case .transaction(let t): try transactions.check(Caller.current, t, db: db); return (t, false)
            case .newTransaction(let o): return (try transactions.begin(Caller.current, db: db, readOnly: isReadOnly(o)), true)
            case .readTime: return nil
            }
        case let s as Google_Firestore_V1_RunQueryRequest.OneOf_ConsistencySelector:
            switch s {
            case .transaction(let t): try transactions.check(Caller.current, t, db: db); return (t, false)
            case .newTransaction(let o): return (try transactions.begin(Caller.current, db: db, readOnly: isReadOnly(o)), true)
            case .readTime: return nil
            }
        case let s as Google_Firestore_V1_RunAggregationQueryRequest.OneOf_ConsistencySelector:
            switch s {
            case .transaction(let t): try transactions.check(Caller.current, t, db: db); return (t, false)
            case .newTransaction(let o): return (try transactions.begin(Caller.current, db: db, readOnly: isReadOnly(o)), true)
            case .readTime: return nil
            }
        default:
            return nil
        }
    }

    // MARK: queries

    func runQuery(request: Google_Firestore_V1_RunQueryRequest, response: RPCWriter<Google_Firestore_V1_RunQueryResponse>, context: ServerContext) async throws {
        try await rpc {
            guard case .structuredQuery(let sq)? = request.queryType else { throw EmberError.invalidArgument("RunQuery needs a structured_query") }
            let (db, parentPath) = try DatabaseName.parse(resource: request.parent)
            let wq = try WireQuery(db: db, parentPath: parentPath, structured: sq)
            try access.checkQuery(Caller.current, db, parentPath: parentPath, structured: sq, query: wq.query)
            if case .readTime(let t)? = request.consistencySelector { try await refuseHistory(t) }
            let txn = try transaction(for: request.consistencySelector, db: db)
            let (all, version) = KindlessQuery.isKindless(sq)
                ? try await KindlessQuery(door: door, db: db, parentPath: parentPath, structured: sq).run(wq)
                : await door.run(wq.query)
            let docs = wq.window(all)
            if let txn { try transactions.noteReads(Caller.current, txn.id, db: db, documents: Array(docs)) }
            let codec = WireCodec(db: db)
            let readTime = WireCodec.timestamp(micros: version)
            // The answer is written as the client reads it; one that stops reading is ended
            // (the gate) instead of holding the answer forever.
            let gate = OutputGate(limits: outputLimits, ledger: ledger)
            gate.queued(docs.reduce(0) { $0 + OutputGate.estimate($1) })
            let newTransaction = txn.flatMap { $0.isNew ? $0.id : nil }
            try await gate.run {
                var first = true
                for d in docs {
                    var r = Google_Firestore_V1_RunQueryResponse()
                    r.document = codec.document(d, mask: wq.projection)
                    r.readTime = readTime
                    if first, let t = newTransaction { r.transaction = t }
                    first = false
                    try await response.write(r)
                    gate.written(OutputGate.estimate(d))
                }
                // The last message says the query is done (and carries the read time when no
                // document did), as Firestore's.
                var done = Google_Firestore_V1_RunQueryResponse()
                done.readTime = readTime
                done.done = true
                if first, let t = newTransaction { done.transaction = t }
                try await response.write(done)
            }
        }
    }

    func runAggregationQuery(request: Google_Firestore_V1_RunAggregationQueryRequest, response: RPCWriter<Google_Firestore_V1_RunAggregationQueryResponse>, context: ServerContext) async throws {
        try await rpc {
            guard case .structuredAggregationQuery(let aq)? = request.queryType, case .structuredQuery(let sq)? = aq.queryType else {
                throw EmberError.invalidArgument("RunAggregationQuery needs a structured_aggregation_query")
            }
            let (db, parentPath) = try DatabaseName.parse(resource: request.parent)
            let wq = try WireQuery(db: db, parentPath: parentPath, structured: sq, aggregations: aq.aggregations)
            let aggregations = try Aggregations(aq.aggregations)
            try access.checkQuery(Caller.current, db, parentPath: parentPath, structured: sq, query: wq.query)
            if case .readTime(let t)? = request.consistencySelector { try await refuseHistory(t) }
            let txn = try transaction(for: request.consistencySelector, db: db)
            let (all, version) = KindlessQuery.isKindless(sq)
                ? try await KindlessQuery(door: door, db: db, parentPath: parentPath, structured: sq).run(wq)
                : await door.run(wq.query)
            let docs = wq.window(all)
            if let txn { try transactions.noteReads(Caller.current, txn.id, db: db, documents: Array(docs)) }
            var r = Google_Firestore_V1_RunAggregationQueryResponse()
            r.result.aggregateFields = aggregations.evaluate(docs, codec: WireCodec(db: db))
            r.readTime = WireCodec.timestamp(micros: version)
            if let txn, txn.isNew { r.transaction = txn.id }
            try await response.write(r)
        }
    }

    func listCollectionIds(request: Google_Firestore_V1_ListCollectionIdsRequest, context: ServerContext) async throws -> Google_Firestore_V1_ListCollectionIdsResponse {
        try await rpc {
            let (db, parent) = try DatabaseName.parse(resource: request.parent)
            guard parent.isEmpty || parent.isDocumentPath else { throw EmberError.invalidArgument("Invalid parent '\(request.parent)': collections are listed under the documents root or a document") }
            guard request.pageSize >= 0 else { throw EmberError.invalidArgument("page_size is negative") }
            try access.checkAdmin(Caller.current, db)
            if case .readTime(let t)? = request.consistencySelector { try await refuseHistory(t) }
            var ids = await door.collectionIds(under: db.internalPath(parent))
            if !request.pageToken.isEmpty { ids = ids.filter { compareUTF8($0, request.pageToken) > 0 } }
            var out = Google_Firestore_V1_ListCollectionIdsResponse()
            let size = request.pageSize > 0 ? Int(request.pageSize) : Int.max
            out.collectionIds = Array(ids.prefix(size))
            if ids.count > size, let last = out.collectionIds.last { out.nextPageToken = last }
            return out
        }
    }

    // MARK: streams

    func write(request: RPCAsyncSequence<Google_Firestore_V1_WriteRequest, any Error>, response: RPCWriter<Google_Firestore_V1_WriteResponse>, context: ServerContext) async throws {
        try await WriteSession(door: door, streams: streams, access: access, caller: Caller.current).run(request: request, response: response)
    }

    func listen(request: RPCAsyncSequence<Google_Firestore_V1_ListenRequest, any Error>, response: RPCWriter<Google_Firestore_V1_ListenResponse>, context: ServerContext) async throws {
        try await ListenSession(backend: door.backend, streams: streams, access: access, caller: Caller.current,
                                output: outputLimits, ledger: ledger).run(request: request, response: response)
    }

    // MARK: helpers

    /// Ember keeps no history of documents: a read at a time before the last commit cannot be
    /// answered as of that time, and is refused rather than answered with newer data.
    private func refuseHistory(_ t: Google_Protobuf_Timestamp) async throws {
        let (_, now) = await door.lookup([])
        if WireCodec.micros(t) < now {
            throw EmberError(.failedPrecondition, "Reads at a past read_time are not supported: Ember keeps no history of documents, and this read_time is before the last commit")
        }
    }

    private func mask(_ m: Google_Firestore_V1_DocumentMask?, _ db: DatabaseName) throws -> [FieldPath]? {
        guard let m else { return nil }
        let codec = WireCodec(db: db)
        return try m.fieldPaths.map { try codec.fieldPath($0) }
    }
}

/// Responsible for: document ids made by the server (CreateDocument without an id): 20
/// characters of [A-Za-z0-9], as Firestore's.
enum AutoId {
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
    static func make() -> String { String((0..<20).map { _ in alphabet.randomElement()! }) }
}

import EmberConcurrency
import Dispatch
import EmberBackend
import EmberFirestoreProto
import EmberModel
import EmberWire
import Foundation
import GRPCCore

typealias ListenResponse = Google_Firestore_V1_ListenResponse

/// Responsible for: one Listen stream. Targets are added and removed by the client (ids it
/// chooses; 0 asks the server for one); each becomes one backend target (a documents target, one
/// per document). The session keeps, per target, the documents the client holds in it, and turns
/// the backend's events into Firestore's sequence: ADD, the documents, CURRENT, then a global
/// NO_CHANGE with the read time (every target is consistent at it) and a resume token; later,
/// per commit, only the documents that entered, changed in or left a target (a limit query's
/// window included), then NO_CHANGE again. A target added with a resume token (or read time)
/// gets only documents updated since, then an existence filter with its size so a client that
/// missed a removal resets. A target that cannot be served is removed with its error as cause.
/// A target the rules refuse the stream's caller (`list` for a query, decided when it is added;
/// `get` of each document of a documents target, when it is added and as its documents change)
/// is removed with PERMISSION_DENIED, the stream staying open. A client that stops reading is
/// ended with RESOURCE_EXHAUSTED once its queued output stalls over the bound (`OutputGate`).
/// All state is touched on `queue` only, where the backend delivers its events.
final class ListenSession: BackendClient {
    /// Each session's serial queue runs on the global (not overcommitting) pool: thousands of
    /// sessions share a few threads, instead of each busy one getting a thread of its own (the
    /// pool grew to ~260 threads under 5,000 streams). Work on it never waits for another
    /// session; it may wait for the backend's queue, which has a thread of its own.
    private static let pool = DispatchQueue.global(qos: .default)
    private let queue = DispatchQueue(label: "ember.server.listen", target: ListenSession.pool)
    private let backend: Backend
    private let streams: StreamRegistry
    private let access: AccessControl
    private let caller: Caller
    private var connection: BackendConnection?
    /// Batches for the writer, with their estimated bytes (counted by `gate` until written).
    private let output: AsyncThrowingStream<([ListenResponse], Int), any Error>
    private let sink: AsyncThrowingStream<([ListenResponse], Int), any Error>.Continuation
    private let gate: OutputGate

    private final class Target {
        let id: Int32
        let codec: WireCodec
        let query: Query?              // nil for a documents target
        let documents: Set<DocumentKey>
        let orderBy: [OrderBy]
        let resumeVersion: Int64?
        let once: Bool
        var pending: Int               // backend listens not answered yet
        var keys = Set<DocumentKey>()  // what the client holds in this target
        var window: DocumentSet?       // limit queries: the documents in the window
        var backendIds: [Int] = []
        var sentSinceResume = 0

        init(id: Int32, codec: WireCodec, query: Query?, documents: Set<DocumentKey>, resumeVersion: Int64?, once: Bool, pending: Int) {
            self.id = id
            self.codec = codec
            self.query = query
            self.documents = documents
            self.orderBy = query?.normalizedOrderBy ?? []
            self.resumeVersion = resumeVersion
            self.once = once
            self.pending = pending
            if let q = query, q.limit != nil { window = DocumentSet(orderBy: orderBy) }
        }

        func matches(_ doc: Document) -> Bool {
            guard doc.exists else { return false }
            if let q = query { return q.matches(doc, orderBy: orderBy) }
            return documents.contains(doc.key)
        }
    }
    private var outbox: [ListenResponse] = []
    private var targets: [Int32: Target] = [:]
    private var byBackendId: [Int: Target] = [:]
    private var nextBackendId = 1
    private var lastVersion: Int64 = 0
    /// Targets being added whose resume token is older than the log's floor (a RESET follows
    /// their ADD).
    private var resetting = Set<Int32>()

    init(backend: Backend, streams: StreamRegistry, access: AccessControl, caller: Caller, output limits: OutputGate.Limits, ledger: OutputLedger) {
        self.backend = backend
        self.streams = streams
        self.access = access
        self.caller = caller
        gate = OutputGate(limits: limits, ledger: ledger)
        (output, sink) = AsyncThrowingStream.makeStream(of: ([ListenResponse], Int).self, bufferingPolicy: .unbounded)
    }

    func run(request: RPCAsyncSequence<Google_Firestore_V1_ListenRequest, any Error>, response: RPCWriter<ListenResponse>) async throws {
        guard let token = streams.register({ [sink] in sink.finish(throwing: RPCError(code: .unavailable, message: "The server is shutting down")) }) else {
            throw RPCError(code: .unavailable, message: "The server is shutting down")
        }
        // The session's queue is entered without blocking a Swift task's thread (it runs on the
        // shared pool those threads come from).
        await onQueue { [self] in connection = backend.connect(client: self, queue: queue) }
        do {
            try await serve(request: request, response: response)
        } catch {
            streams.unregister(token)
            await onQueue { [self] in connection?.disconnect(); connection = nil }
            throw error
        }
        streams.unregister(token)
        await onQueue { [self] in connection?.disconnect(); connection = nil }
    }

    /// Runs `body` on the session's queue and waits for it.
    private func onQueue(_ body: @escaping () -> Void) async {
        let work = QueueBound(body, on: queue)
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            queue.async { work.value(); c.resume() }
        }
    }

    private func serve(request: RPCAsyncSequence<Google_Firestore_V1_ListenRequest, any Error>, response: RPCWriter<ListenResponse>) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            // The writer, ended with RESOURCE_EXHAUSTED when its client stops reading (the gate).
            group.addTask { [output, gate] in
                try await gate.run {
                    for try await (batch, bytes) in output {
                        try await response.write(contentsOf: batch)
                        gate.written(bytes)
                    }
                }
            }
            let me = QueueBound(self, on: queue), queue = self.queue
            group.addTask {
                var database: String?
                for try await req in request {
                    if database == nil { database = req.database }
                    let r = req
                    queue.async { me.value.handle(r) }
                }
                // The client half-closed: the stream ends once what is queued is written.
                queue.async { me.value.sink.finish() }
            }
            do {
                for try await _ in group {}
            } catch {
                group.cancelAll()
                throw error
            }
        }
    }

    // MARK: requests (on queue)

    /// What one request or one backend event produced goes out as one batch: one hand-off to
    /// the stream's writer and one flush on the connection, not one per message (a commit's
    /// changes and its NO_CHANGE travel together to each of many listeners).
    private func send(_ r: ListenResponse) { outbox.append(r) }

    /// A batch larger than this goes to the writer in parts of about this size: what a stream
    /// whose client stopped reading leaves inside gRPC's transport (past the gate) is one part.
    static let writeBytes = 256 << 10

    private func flush() {
        guard !outbox.isEmpty else { return }
        var start = 0
        var bytes = 0
        for (i, r) in outbox.enumerated() {
            bytes += OutputGate.estimate(r)
            if bytes >= Self.writeBytes || i == outbox.count - 1 {
                gate.queued(bytes)
                sink.yield((start == 0 && i == outbox.count - 1 ? outbox : Array(outbox[start...i]), bytes))
                start = i + 1
                bytes = 0
            }
        }
        outbox.removeAll(keepingCapacity: true)
    }

    private func targetChange(_ type: Google_Firestore_V1_TargetChange.TargetChangeType, _ ids: [Int32], cause: EmberError? = nil, version: Int64? = nil) {
        var tc = Google_Firestore_V1_TargetChange()
        tc.targetChangeType = type
        tc.targetIds = ids
        if let cause {
            tc.cause.code = cause.code.rawValue
            tc.cause.message = DatabaseName.externalize(cause.message)
        }
        if let version {
            tc.readTime = WireCodec.timestamp(micros: version)
            tc.resumeToken = ResumeToken.encode(version)
        }
        var r = ListenResponse()
        r.targetChange = tc
        send(r)
    }

    private func handle(_ req: Google_Firestore_V1_ListenRequest) {
        defer { flush() }
        guard let connection else { return }
        switch req.targetChange {
        case .addTarget(let t)?:
            var id = t.targetID
            if id == 0 { id = (targets.keys.max() ?? 0) + 1 }
            do {
                guard targets[id] == nil else { throw EmberError.invalidArgument("Target id \(id) is already in use on this stream") }
                let target = try makeTarget(t, id: id, database: req.database)
                targets[id] = target
                targetChange(.add, [id])
                if resetting.remove(id) != nil { targetChange(.reset, [id]) }
                let queries: [Query] = target.query.map { [$0] } ?? target.documents.map { Query(document: $0) }
                if queries.isEmpty { finishInitial(target, version: lastVersion) }
                for q in queries {
                    let bid = nextBackendId
                    nextBackendId += 1
                    target.backendIds.append(bid)
                    byBackendId[bid] = target
                    connection.listen(targetId: bid, query: q, knownKeys: [])
                }
            } catch let e as EmberError {
                resetting.remove(id)
                targetChange(.remove, [id], cause: e)
            } catch {
                targetChange(.remove, [id], cause: EmberError(.internal, "\(error)"))
            }
        case .removeTarget(let id)?:
            guard let t = targets.removeValue(forKey: id) else {
                targetChange(.remove, [id], cause: EmberError.invalidArgument("Target id \(id) is not on this stream"))
                return
            }
            drop(t)
            targetChange(.remove, [id])
        case nil:
            break
        }
    }

    private func drop(_ t: Target) {
        for bid in t.backendIds {
            byBackendId[bid] = nil
            connection?.unlisten(targetId: bid)
        }
    }

    private func makeTarget(_ t: Google_Firestore_V1_Target, id: Int32, database: String) throws -> Target {
        var resume: Int64?
        switch t.resumeType {
        case .resumeToken(let data)?: resume = ResumeToken.decode(data)
        case .readTime(let ts)?: resume = WireCodec.micros(ts)
        case nil: resume = nil
        }
        // Older than the shared log keeps (its retention): answered whole, after a RESET.
        if let r = resume, r < backend.resumeFloor { resume = nil; resetting.insert(id) }
        switch t.targetType {
        case .query(let qt)?:
            guard case .structuredQuery(let sq)? = qt.queryType else { throw EmberError.invalidArgument("A query target needs a structured_query") }
            let wq = try WireQuery(parent: qt.parent, structured: sq)
            if wq.offset > 0 || wq.limitZero || wq.projection != nil {
                throw EmberError.invalidArgument("A listened query cannot have an offset, a zero limit or a projection")
            }
            let (db, parentPath) = try DatabaseName.parse(resource: qt.parent)
            try access.checkQuery(caller, db, parentPath: parentPath, structured: sq, query: wq.query)
            return Target(id: id, codec: WireCodec(db: db), query: wq.query, documents: [], resumeVersion: resume, once: t.once, pending: 1)
        case .documents(let dt)?:
            guard !dt.documents.isEmpty else { throw EmberError.invalidArgument("A documents target needs at least one document") }
            guard dt.documents.count <= 500 else { throw EmberError.invalidArgument("A documents target names at most 500 documents") }
            var keys = Set<DocumentKey>()
            var db: DatabaseName?
            for name in dt.documents {
                let (d, key) = try DatabaseName.parse(document: name)
                if let db, db != d { throw EmberError.invalidArgument("A documents target's documents must be in one database") }
                db = d
                keys.insert(key)
            }
            try access.checkGet(caller, db!, keys: Array(keys))
            return Target(id: id, codec: WireCodec(db: db!), query: nil, documents: keys, resumeVersion: resume, once: t.once, pending: keys.count)
        case nil:
            throw EmberError.invalidArgument("A target needs a query or documents")
        }
    }

    // MARK: backend events (on queue)

    func backend(_ link: any BackendLink, didSend event: BackendEvent) {
        // After the stream ended (its connection dropped), events still on their way are not for anyone.
        guard connection != nil else { return }
        defer { flush() }
        switch event {
        case .listenResult(let bid, let documents, _, let version):
            lastVersion = max(lastVersion, version)
            guard let t = byBackendId[bid], targets[t.id] === t else { return }
            if mayNotRead(t, documents) { return refuse(t) }
            for d in documents where d.exists {
                t.keys.insert(d.key)
                _ = t.window?.insert(d)
                if t.resumeVersion.map({ d.updateTime > $0 }) ?? true {
                    var dc = Google_Firestore_V1_DocumentChange()
                    dc.document = t.codec.document(d)
                    dc.targetIds = [t.id]
                    var r = ListenResponse()
                    r.documentChange = dc
                    send(r)
                }
            }
            t.pending -= 1
            if t.pending == 0 { finishInitial(t, version: max(version, lastVersion)) }
        case .commit(let version, let documents, _):
            lastVersion = max(lastVersion, version)
            applyCommit(version: version, documents: documents)
        case .writeRejected, .acknowledged, .targetRejected, .connectionLost, .resumeToken, .watch, .reached:
            break
        }
    }

    /// The target's initial results are out: an existence filter after a resume, CURRENT, then
    /// the global consistent point.
    private func finishInitial(_ t: Target, version: Int64) {
        if t.resumeVersion != nil {
            var f = Google_Firestore_V1_ExistenceFilter()
            f.targetID = t.id
            f.count = Int32(t.keys.count)
            var r = ListenResponse()
            r.filter = f
            send(r)
        }
        targetChange(.current, [t.id], version: version)
        targetChange(.noChange, [], version: version)
        if t.once {
            targets[t.id] = nil
            drop(t)
            targetChange(.remove, [t.id])
        }
    }

    /// A documents target is decided per document by its `get` rule, also as the documents
    /// change (an update or a create can make a document one the caller may not read): true when
    /// one of `documents` it holds is refused.
    private func mayNotRead(_ t: Target, _ documents: [Document]) -> Bool {
        guard t.query == nil, access.rules != nil else { return false }
        let mine = documents.filter { t.documents.contains($0.key) }
        guard !mine.isEmpty else { return false }
        do {
            try access.checkGet(caller, t.codec.db, mine)
            return false
        } catch {
            return true
        }
    }

    /// Removes a target the rules refuse, with PERMISSION_DENIED; the stream goes on.
    private func refuse(_ t: Target) {
        targets[t.id] = nil
        drop(t)
        targetChange(.remove, [t.id], cause: EmberError(.permissionDenied, AccessControl.denied))
    }

    private func applyCommit(version: Int64, documents: [Document]) {
        guard !targets.isEmpty else { return }
        if access.rules != nil {
            for t in Array(targets.values) where t.pending == 0 && mayNotRead(t, documents) { refuse(t) }
        }
        guard !targets.isEmpty else { return }
        // Per document: the targets it is in now and those it left.
        var added: [DocumentKey: [Int32]] = [:]
        var removed: [DocumentKey: [Int32]] = [:]
        var latest: [DocumentKey: Document] = [:]
        for d in documents { latest[d.key] = d }
        // What the commit changed (`latest` also gains documents pushed out of a window).
        let committed = Set(latest.keys)
        for t in targets.values where t.pending == 0 {
            // The changed documents the client held in this target before the commit: one pushed
            // out of a limit window below must then be removed, not merely left unsent.
            var heldBefore = Set<DocumentKey>()
            for d in documents {
                let was = t.keys.contains(d.key)
                if was { heldBefore.insert(d.key) }
                if t.matches(d) {
                    if var w = t.window { _ = w.remove(d.key); _ = w.insert(d); t.window = w }
                    t.keys.insert(d.key)
                    added[d.key, default: []].append(t.id)
                } else if was {
                    _ = t.window?.remove(d.key)
                    t.keys.remove(d.key)
                    removed[d.key, default: []].append(t.id)
                }
            }
            // A limit query's window keeps `limit` documents: whatever sorts past the edge now (a
            // newcomer, or a held document that moved) leaves it. The client is told of the
            // removal when it held the document before this commit (whether or not the commit
            // changed it); a document that entered and left within the commit is never sent.
            if var w = t.window, let limit = t.query?.limit, w.count > limit {
                let keep = Set(w.window(limit: limit, type: t.query!.limitType).map { $0.key })
                for d in w.window(limit: nil, type: .first) where !keep.contains(d.key) {
                    _ = w.remove(d.key)
                    t.keys.remove(d.key)
                    if let i = added[d.key]?.firstIndex(of: t.id) { added[d.key]!.remove(at: i) }
                    let changed = committed.contains(d.key)
                    if !changed || heldBefore.contains(d.key) { removed[d.key, default: []].append(t.id) }
                    if latest[d.key] == nil { latest[d.key] = d }
                }
                t.window = w
            }
        }
        var sent = false
        for (key, doc) in latest {
            let inIds = added[key] ?? []
            let outIds = removed[key] ?? []
            if inIds.isEmpty && outIds.isEmpty { continue }
            sent = true
            var r = ListenResponse()
            if !inIds.isEmpty {
                var dc = Google_Firestore_V1_DocumentChange()
                dc.document = codec(for: key).document(doc)
                dc.targetIds = inIds
                dc.removedTargetIds = outIds
                r.documentChange = dc
            } else if !doc.exists {
                var dd = Google_Firestore_V1_DocumentDelete()
                dd.document = codec(for: key).db.name(of: key)
                dd.removedTargetIds = outIds
                dd.readTime = WireCodec.timestamp(micros: version)
                r.documentDelete = dd
            } else {
                var dr = Google_Firestore_V1_DocumentRemove()
                dr.document = codec(for: key).db.name(of: key)
                dr.removedTargetIds = outIds
                dr.readTime = WireCodec.timestamp(micros: version)
                r.documentRemove = dr
            }
            send(r)
        }
        if sent { targetChange(.noChange, [], version: version) }
    }

    private func codec(for key: DocumentKey) -> WireCodec {
        WireCodec(db: DatabaseName.of(key) ?? targets.values.first!.codec.db)
    }
}

/// Responsible for: resume tokens: the backend version a client's view of a target is current
/// at, 8 bytes big-endian. Anything else decodes to nil (a full resend).
enum ResumeToken {
    static func encode(_ version: Int64) -> Data {
        withUnsafeBytes(of: version.bigEndian) { Data($0) }
    }
    static func decode(_ data: Data) -> Int64? {
        guard data.count == 8 else { return nil }
        return data.reduce(Int64(0)) { ($0 << 8) | Int64($1) }
    }
}

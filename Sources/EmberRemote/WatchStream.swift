import EmberConcurrency
import Dispatch
import EmberBackend
import EmberFirestoreProto
import EmberModel
import EmberWire
import Foundation
import GRPCCore

typealias ListenRequest = Google_Firestore_V1_ListenRequest

/// Responsible for: a link's Listen stream: one stream for every target, opened with the first
/// target, each target added with its query (or its document) and removed by id; the
/// `WatchAggregator` reads the messages, and each consistent snapshot it hands over becomes the
/// core's events in order: first the documents that changed (`.commit` without acknowledgement),
/// then each newly current target's `.listenResult`. A snapshot whose targets held documents not
/// in their result, or whose documents left a target without their new state, waits for one
/// BatchGetDocuments of those keys (later snapshots wait behind it). When the stream fails it is
/// opened again after a backoff (a stream the server never answered is told to the
/// `ConnectionLog`): a target already delivered is resumed with its last resume token (the
/// server sends only what changed since), any other is added again from scratch; the core hears
/// `.connectionLost` first (its listeners turn fromCache). A target the server removes with an
/// error becomes `.targetRejected` (its listeners end with the error). State lives on the link's
/// queue.
///
///     watch.add(1, query: q, knownKeys: [])      // -> .listenResult, then .commit events
final class WatchStream {
    private let queue: DispatchQueue
    private let client: FirestoreClient
    private let calls: RemoteCalls
    private let database: RemoteDatabase
    private let deliver: (BackendEvent) -> Void
    private let stats: RemoteStats
    private let log: ConnectionLog
    let aggregator: WatchAggregator

    private var sink: AsyncStream<ListenRequest>.Continuation?
    private var generation = 0
    /// Whether the server answered the current stream.
    private var answered = false
    private var backoff = Backoff()
    private var restartScheduled = false
    private var closed = false

    /// Snapshots in order; one waiting for its lookup holds back those behind it.
    private final class Outgoing {
        let snapshot: WatchSnapshot
        var fetched: [DocumentKey: Document]?
        /// Events that came after this snapshot, delivered right after it.
        var after: [BackendEvent] = []
        init(_ s: WatchSnapshot) { snapshot = s }
    }
    private var outbox: [Outgoing] = []

    init(queue: DispatchQueue, client: FirestoreClient, calls: RemoteCalls, database: RemoteDatabase, stats: RemoteStats,
         log: ConnectionLog, deliver: @escaping (BackendEvent) -> Void) {
        self.queue = queue
        self.stats = stats
        self.log = log
        self.client = client
        self.calls = calls
        self.database = database
        self.deliver = deliver
        self.aggregator = WatchAggregator(codec: database.codec)
    }

    /// With a `resumeToken` (stored by the client with what `knownKeys` names) the target is
    /// resumed: the server sends only what changed since.
    func add(_ id: Int32, query: Query, knownKeys: [DocumentKey], resumeToken: Data? = nil) {
        guard !closed else { return }
        aggregator.add(id, query: query, knownKeys: knownKeys, resumeToken: resumeToken)
        if sink == nil { open() } else { sink!.yield(addRequest(id)) }
    }

    func remove(_ id: Int32) {
        guard aggregator.targets[id] != nil else { return }
        aggregator.remove(id)
        var req = ListenRequest()
        req.database = database.name
        req.removeTarget = id
        sink?.yield(req)
    }

    func close() {
        closed = true
        sink?.finish()
        sink = nil
    }

    // MARK: requests

    private func addRequest(_ id: Int32) -> ListenRequest {
        let t = aggregator.targets[id]!
        var target = Google_Firestore_V1_Target()
        target.targetID = id
        if t.delivered, let token = t.resumeToken { target.resumeToken = token }
        if let key = t.query.documentKey {
            target.documents.documents = [database.codec.name(of: key)]
        } else {
            let wq = RemoteQuery(t.query, database.codec)
            target.query.parent = wq.parent
            target.query.structuredQuery = wq.structured
        }
        var req = ListenRequest()
        req.database = database.name
        req.addTarget = target
        return req
    }

    // MARK: the stream (on queue)

    private func open() {
        guard !closed, sink == nil, !aggregator.targets.isEmpty else { return }
        generation += 1
        let gen = generation
        answered = false
        let (requests, sink) = AsyncStream.makeStream(of: ListenRequest.self)
        self.sink = sink
        for id in aggregator.targets.keys.sorted() { sink.yield(addRequest(id)) }
        let client = self.client
        let queue = self.queue
        let database = self.database
        let me = QueueBound(self, on: queue)
        Task {
            let failure: Error?
            do {
                var options = CallOptions.defaults
                options.waitForReady = false
                try await client.listen(metadata: database.metadata, options: options, requestProducer: { w in
                    for await r in requests { try await w.write(r) }
                }, onResponse: { response in
                    for try await m in response.messages { queue.async { me.value.received(m, gen) } }
                })
                failure = nil
            } catch {
                failure = error
            }
            queue.async { me.value.ended(gen, failure) }
        }
    }

    private func received(_ r: ListenResponse, _ gen: Int) {
        guard gen == generation, !closed else { return }
        if !answered {
            answered = true
            log.reached()
        }
        let before = aggregator.documentsReceived
        defer { stats.addDocumentsReceived(aggregator.documentsReceived - before) }
        do {
            if let s = try aggregator.handle(r) {
                // A consistent snapshot, not only an answer, ends the backoff: a server that keeps
                // sending what the client refuses is retried ever more slowly, not in a loop.
                backoff.reset()
                enqueue(s)
            }
        } catch {
            // A message the client cannot read (a server bug): start over on a new stream.
            sink?.finish()
            return
        }
        for id in aggregator.takeRelisten() {
            var remove = ListenRequest()
            remove.database = database.name
            remove.removeTarget = id
            sink?.yield(remove)
            sink?.yield(addRequest(id))
        }
        for (id, error) in aggregator.takeRejected() {
            deliverInOrder(.targetRejected(targetId: Int(id), error: error))
        }
    }

    private func ended(_ gen: Int, _ failure: Error?) {
        guard gen == generation else { return }
        sink?.finish()
        sink = nil
        guard !closed else { return }
        aggregator.resetAll()
        guard !aggregator.targets.isEmpty else { return }
        deliverInOrder(.connectionLost)
        guard !restartScheduled else { return }
        restartScheduled = true
        let delay = backoff.next()
        if let failure, !answered, ConnectionLog.isUnreachable(failure) { log.failed(failure, retryIn: delay) }
        queue.asyncAfterConfined(deadline: .now() + delay) { [self] in
            restartScheduled = false
            open()
        }
    }

    // MARK: delivery (on queue)

    private func enqueue(_ s: WatchSnapshot) {
        let o = Outgoing(s)
        outbox.append(o)
        let keys = s.keysToFetch
        if keys.isEmpty {
            o.fetched = [:]
            return drain()
        }
        let calls = self.calls, queue = self.queue
        let waiting = QueueBound((stream: self, outgoing: o), on: queue)
        Task {
            let got = try? await calls.batchGet(keys)
            queue.async {
                var byKey: [DocumentKey: Document] = [:]
                for d in got?.documents ?? [] { byKey[d.key] = d }
                waiting.value.outgoing.fetched = byKey
                waiting.value.stream.drain()
            }
        }
    }

    /// Delivers `e` after the snapshots still waiting for their lookups.
    private func deliverInOrder(_ e: BackendEvent) {
        if let last = outbox.last { last.after.append(e) } else { deliver(e) }
    }

    private func drain() {
        while let o = outbox.first, let fetched = o.fetched {
            outbox.removeFirst()
            let s = o.snapshot
            let changed = s.changed + s.refetch.compactMap { fetched[$0] }
            if !changed.isEmpty { deliver(.commit(version: s.version, documents: changed, ack: nil)) }
            for r in s.results {
                deliver(.listenResult(targetId: r.targetId, documents: r.documents,
                                      resolved: r.resolve.compactMap { fetched[$0] }, version: s.version))
            }
            // A resumed target current again: an empty result (its changes came above).
            for id in s.recovered {
                deliver(.listenResult(targetId: id, documents: [], resolved: [], version: s.version))
            }
            for (id, token) in s.tokens {
                deliver(.resumeToken(targetId: id, token: [UInt8](token)))
                stats.addResumeTokenDelivered()
            }
            o.after.forEach(deliver)
        }
    }
}

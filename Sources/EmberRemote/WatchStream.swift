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
/// `WatchAggregator` reads the messages, and each consistent event it hands over goes to the
/// core as `.watch`, in order. The first message of each stream tells the core the server is
/// reached (`.reached`). When the stream fails it is opened again after a backoff (a stream the
/// server never answered is told to the `ConnectionLog`) and every target is added again, with
/// the resume token of the last event handed over (the server sends only what changed since);
/// the core hears `.connectionLost` first. A target the server removes with an error becomes
/// `.targetRejected`. With the network switched off the stream is closed (the client's side
/// first) and nothing opens it until it is switched on. State lives on the link's queue.
///
///     watch.add(1, query: q, knownKeys: [])      // -> .watch events
final class WatchStream {
    private let queue: DispatchQueue
    private let client: FirestoreClient
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

    /// Off while the client's network is switched off.
    private var enabled = true

    init(queue: DispatchQueue, client: FirestoreClient, database: RemoteDatabase, stats: RemoteStats,
         log: ConnectionLog, deliver: @escaping (BackendEvent) -> Void) {
        self.queue = queue
        self.stats = stats
        self.log = log
        self.client = client
        self.database = database
        self.deliver = deliver
        self.aggregator = WatchAggregator(codec: database.codec)
    }

    /// With a `resumeToken` (stored by the client with what `knownKeys` names) the target is
    /// resumed: the server sends only what changed since.
    func add(_ id: Int32, query: Query, knownKeys: [DocumentKey], resumeToken: Data? = nil) {
        guard !closed else { return }
        aggregator.add(id, query: query, knownKeys: knownKeys, resumeToken: resumeToken)
        if sink == nil { open() } else { send(addRequest(id), for: id) }
    }

    func remove(_ id: Int32) {
        guard aggregator.targets[id] != nil else { return }
        aggregator.remove(id)
        sink?.yield(removeRequest(id))
    }

    /// Switches the network: off closes the stream (the client's side first: the server sees
    /// its end), on opens it again for the targets added since.
    func setEnabled(_ on: Bool) {
        guard on != enabled else { return }
        enabled = on
        if on { return open() }
        generation += 1
        sink?.finish()
        sink = nil
        aggregator.resetAll()
    }

    func close() {
        closed = true
        sink?.finish()
        sink = nil
    }

    // MARK: requests

    /// Yields `request` (an add or a remove of `id`): the target waits for its acknowledgement.
    private func send(_ request: ListenRequest, for id: Int32) {
        guard let sink else { return }
        aggregator.sent(id)
        sink.yield(request)
    }

    private func removeRequest(_ id: Int32) -> ListenRequest {
        var req = ListenRequest()
        req.database = database.name
        req.removeTarget = id
        return req
    }

    private func addRequest(_ id: Int32) -> ListenRequest {
        let t = aggregator.targets[id]!
        var target = Google_Firestore_V1_Target()
        target.targetID = id
        if let token = t.deliveredToken {
            // As the SDKs: the count a resume expects, so the server may send a bloom filter.
            target.resumeToken = token
            target.expectedCount.value = Int32(clamping: t.remoteKeys.count)
        }
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
        guard !closed, enabled, sink == nil, !aggregator.targets.isEmpty else { return }
        generation += 1
        let gen = generation
        answered = false
        let (requests, sink) = AsyncStream.makeStream(of: ListenRequest.self)
        self.sink = sink
        for id in aggregator.targets.keys.sorted() { send(addRequest(id), for: id) }
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
            deliver(.reached)
        }
        let before = aggregator.documentsReceived
        defer { stats.addDocumentsReceived(aggregator.documentsReceived - before) }
        do {
            if let e = try aggregator.handle(r) {
                // A consistent event, not only an answer, ends the backoff: a server that keeps
                // sending what the client refuses is retried ever more slowly, not in a loop.
                backoff.reset()
                for c in e.targets where c.resumeToken != nil { stats.addResumeTokenDelivered() }
                deliver(.watch(e))
            }
        } catch {
            // A message the client cannot read (a server bug): start over on a new stream.
            sink?.finish()
            return
        }
        for id in aggregator.takeRelisten() where aggregator.targets[id] != nil {
            send(removeRequest(id), for: id)
            send(addRequest(id), for: id)
        }
        for (id, error) in aggregator.takeRejected() {
            deliver(.targetRejected(targetId: Int(id), error: error))
        }
    }

    private func ended(_ gen: Int, _ failure: Error?) {
        guard gen == generation else { return }
        sink?.finish()
        sink = nil
        guard !closed else { return }
        aggregator.resetAll()
        guard !aggregator.targets.isEmpty else { return }
        deliver(.connectionLost)
        guard !restartScheduled else { return }
        restartScheduled = true
        let delay = backoff.next()
        if let failure, !answered, ConnectionLog.isUnreachable(failure) { log.failed(failure, retryIn: delay) }
        queue.asyncAfterConfined(deadline: .now() + delay) { [self] in
            restartScheduled = false
            open()
        }
    }
}

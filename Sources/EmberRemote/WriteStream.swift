import EmberConcurrency
import Dispatch
import EmberBackend
import EmberFirestoreProto
import EmberModel
import EmberWire
import Foundation
import GRPCCore

typealias WriteRequest = Google_Firestore_V1_WriteRequest
typealias WriteResponse = Google_Firestore_V1_WriteResponse

/// Responsible for: a link's Write stream. Batches are queued in order; the stream opens with
/// the handshake (a request naming the database; the answer carries the stream id and token),
/// then every queued batch is sent, one request each with the last token, pipelined. Each answer
/// acknowledges the oldest batch sent: its write results and commit time become the core's
/// `.acknowledged`. The server ends the stream with its error when it refuses a batch: a
/// permanent error (Firebase's list, ABORTED aside) rejects the oldest batch (`.writeRejected`),
/// any other keeps it; the stream is then opened again (after a backoff) and the batches still
/// queued are sent again, in order (a stream the server never answered is told to the
/// `ConnectionLog`). With the network switched off the stream ends with an empty request and
/// the batches wait. State lives on the link's queue.
///
///     writes.enqueue(batch)      // -> .acknowledged / .writeRejected, in order
final class WriteStream {
    private let queue: DispatchQueue
    private let client: FirestoreClient
    private let database: RemoteDatabase
    private let log: ConnectionLog
    private let deliver: (BackendEvent) -> Void

    /// Batches not acknowledged yet, oldest first; the first `sent` went on the current stream.
    private var queued: [MutationBatch] = []
    private var sent = 0
    private var sink: AsyncStream<WriteRequest>.Continuation?
    private var generation = 0
    private var handshakeDone = false
    private var token = Data()
    private var backoff = Backoff()
    private var restartScheduled = false
    private var closed = false
    /// Off while the client's network is switched off.
    private var enabled = true

    init(queue: DispatchQueue, client: FirestoreClient, database: RemoteDatabase, log: ConnectionLog,
         deliver: @escaping (BackendEvent) -> Void) {
        self.queue = queue
        self.client = client
        self.database = database
        self.log = log
        self.deliver = deliver
    }

    /// Queues a batch and sends it once the stream's handshake is done.
    func enqueue(_ batch: MutationBatch) {
        guard !closed else { return }
        queued.append(batch)
        if sink == nil { open() } else if handshakeDone { sendQueued() }
    }

    /// Switches the network: off ends the stream as the SDKs do (an empty request, then the
    /// client's end), keeping the batches not acknowledged; on opens it and sends them again.
    func setEnabled(_ on: Bool) {
        guard on != enabled else { return }
        enabled = on
        if on { return open() }
        if let sink, handshakeDone {
            var bye = WriteRequest()
            bye.streamToken = token
            sink.yield(bye)
        }
        generation += 1
        sink?.finish()
        sink = nil
        handshakeDone = false
        sent = 0
    }

    func close() {
        closed = true
        sink?.finish()
        sink = nil
    }

    // MARK: the stream (on queue)

    private func open() {
        guard !closed, enabled, sink == nil, !queued.isEmpty else { return }
        generation += 1
        let gen = generation
        handshakeDone = false
        sent = 0
        let (requests, sink) = AsyncStream.makeStream(of: WriteRequest.self)
        self.sink = sink
        var hello = WriteRequest()
        hello.database = database.name
        sink.yield(hello)
        let client = self.client
        let queue = self.queue
        let database = self.database
        let me = QueueBound(self, on: queue)
        Task {
            let failure: Error?
            do {
                var options = CallOptions.defaults
                options.waitForReady = false
                try await client.write(metadata: database.metadata, options: options, requestProducer: { w in
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

    private func sendQueued() {
        guard let sink else { return }
        let writes = RemoteWrites(codec: database.codec)
        while sent < queued.count {
            var req = WriteRequest()
            req.streamToken = token
            req.writes = queued[sent].mutations.map(writes.write)
            sink.yield(req)
            sent += 1
        }
    }

    private func received(_ r: WriteResponse, _ gen: Int) {
        guard gen == generation, !closed else { return }
        token = r.streamToken
        guard handshakeDone else {
            handshakeDone = true
            backoff.reset()
            log.reached()
            sendQueued()
            return
        }
        guard sent > 0 else { return }
        let batch = queued.removeFirst()
        sent -= 1
        let commitTime = WireCodec.micros(r.commitTime)
        let writes = RemoteWrites(codec: database.codec)
        do {
            let results = try r.writeResults.map { try writes.result($0, commitTime: commitTime) }
            deliver(.acknowledged(batchId: batch.batchId, version: commitTime, results: results))
        } catch {
            // The batch is committed; only its results could not be read: acknowledge it
            // without them (the listen stream brings the documents).
            deliver(.acknowledged(batchId: batch.batchId, version: commitTime, results: []))
        }
    }

    private func ended(_ gen: Int, _ failure: Error?) {
        guard gen == generation else { return }
        sink?.finish()
        sink = nil
        let wasOpen = handshakeDone
        handshakeDone = false
        guard !closed else { return }
        if let failure, wasOpen, sent > 0 {
            let e = EmberError.remote(failure)
            if WriteStream.isPermanent(e.code) {
                let batch = queued.removeFirst()
                deliver(.writeRejected(batchId: batch.batchId, error: e))
            }
        }
        scheduleOpen(after: wasOpen ? nil : failure)
    }

    /// `failure`: why a stream the server never answered ended (told to the `ConnectionLog`).
    private func scheduleOpen(after failure: Error?) {
        guard !queued.isEmpty, !restartScheduled else { return }
        restartScheduled = true
        let delay = backoff.next()
        if let failure, ConnectionLog.isUnreachable(failure) { log.failed(failure, retryIn: delay) }
        queue.asyncAfterConfined(deadline: .now() + delay) { [self] in
            restartScheduled = false
            open()
        }
    }

    /// Errors that refuse a batch for good (Firebase's `IsPermanentWriteError`): retrying it
    /// cannot succeed. ABORTED is retried.
    static func isPermanent(_ code: ErrorCode) -> Bool {
        switch code {
        case .invalidArgument, .notFound, .alreadyExists, .permissionDenied, .failedPrecondition,
             .outOfRange, .unimplemented, .dataLoss:
            return true
        default:
            return false
        }
    }
}

import EmberFirestoreProto
import EmberModel
import EmberWire
import Foundation
import EmberConcurrency
import GRPCCore

/// Responsible for: one Write stream, Firestore's handshake then one batch per request: the
/// first request names the database and gets a stream id and token; each later request carries
/// the last token and its writes, committed atomically and in order, answered with the results,
/// the commit time and a new token. A refused batch ends the stream with its error, as Firestore.
/// A shutdown ends the stream with UNAVAILABLE once the batch in hand (if any) is answered, also
/// while it waits for a request: a client keeps an idle Write stream open, which would otherwise
/// hold the graceful shutdown open. Each batch is decided by the rules for the stream's caller:
/// a refused one ends the stream with PERMISSION_DENIED, nothing of it applied.
struct WriteSession {
    let door: BackendDoor
    let streams: StreamRegistry
    let access: AccessControl
    let caller: Caller

    func run(request: RPCAsyncSequence<Google_Firestore_V1_WriteRequest, any Error>, response: RPCWriter<Google_Firestore_V1_WriteResponse>) async throws {
        try await rpc {
            // The requests pass through a stream the shutdown can end.
            let (requests, sink) = AsyncThrowingStream.makeStream(of: Google_Firestore_V1_WriteRequest.self)
            guard let token = streams.register({ sink.finish(throwing: EmberError(.unavailable, "The server is shutting down")) }) else {
                throw EmberError(.unavailable, "The server is shutting down")
            }
            defer { streams.unregister(token) }
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    do {
                        for try await r in request { sink.yield(r) }
                        sink.finish()
                    } catch {
                        sink.finish(throwing: error)
                    }
                }
                defer { group.cancelAll() }
                try await serve(requests, response: response)
            }
        }
    }

    private func serve(_ request: AsyncThrowingStream<Google_Firestore_V1_WriteRequest, any Error>, response: RPCWriter<Google_Firestore_V1_WriteResponse>) async throws {
        var db: DatabaseName?
        var streamId = ""
        var counter: Int64 = 0
        for try await req in request {
            if streams.isShuttingDown { throw EmberError(.unavailable, "The server is shutting down") }
            if db == nil {
                db = try DatabaseName(parsing: req.database)
                guard req.writes.isEmpty, req.streamID.isEmpty else {
                    throw EmberError.invalidArgument("The first request on a Write stream is the handshake: a database and no writes")
                }
                streamId = AutoId.make()
                var r = Google_Firestore_V1_WriteResponse()
                r.streamID = streamId
                r.streamToken = ResumeToken.encode(counter)
                try await response.write(r)
                continue
            }
            guard req.streamID.isEmpty || req.streamID == streamId else {
                throw EmberError.invalidArgument("Unknown stream id '\(req.streamID)'")
            }
            let writes = WireWrites(codec: WireCodec(db: db!))
            let mutations = try req.writes.map(writes.mutation)
            counter += 1
            var r = Google_Firestore_V1_WriteResponse()
            r.streamID = streamId
            r.streamToken = ResumeToken.encode(counter)
            if mutations.isEmpty {
                let (_, version) = await door.lookup([])
                r.commitTime = WireCodec.timestamp(micros: version)
            } else {
                let outcome = try await door.commit(mutations, authorize: try access.commitAuthorizer(caller, db!))
                r.commitTime = WireCodec.timestamp(micros: outcome.version)
                r.writeResults = mutations.map { writes.result(of: $0, committed: outcome.documents[$0.key], commitTime: outcome.version) }
            }
            try await response.write(r)
        }
    }
}

/// Responsible for: the open streams, so that a shutdown ends each with UNAVAILABLE (a stream
/// would otherwise hold the graceful shutdown open), and no new one starts after it began.
final class StreamRegistry: Sendable {
    private struct State {
        var enders: [Int: (@Sendable () -> Void)?] = [:]
        var next = 0
        var isShuttingDown = false
    }
    private let state = LockedValueBox(State())

    var isShuttingDown: Bool { state.withLockedValue { $0.isShuttingDown } }

    /// Registers a stream; nil once the shutdown began.
    func register(_ end: (@Sendable () -> Void)?) -> Int? {
        state.withLockedValue { s in
            if s.isShuttingDown { return nil }
            s.next += 1
            s.enders[s.next] = end
            return s.next
        }
    }

    func unregister(_ token: Int) {
        state.withLockedValue { _ = $0.enders.removeValue(forKey: token) }
    }

    var count: Int { state.withLockedValue { $0.enders.count } }

    func shutDown() {
        let all = state.withLockedValue { s in
            s.isShuttingDown = true
            return s.enders.values.compactMap { $0 }
        }
        for end in all { end() }
    }
}

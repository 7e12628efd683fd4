import EmberFirestoreProto
import Foundation
import GRPCCore
import SwiftProtobuf

private typealias P = Google_Firestore_V1_Firestore

/// Responsible for: the scripted server's gRPC surface. Listen and Write record each request
/// in the `ScriptState` and send what the test queues on the newest stream; the Write stream
/// answers its handshake itself. Every other call is counted and refused with UNIMPLEMENTED.
struct ScriptedService: P.SimpleServiceProtocol {
    let state: ScriptState

    func listen(request: RPCAsyncSequence<ListenRequest, any Error>, response: RPCWriter<ListenResponse>,
                context: ServerContext) async throws {
        let (out, sink) = AsyncStream.makeStream(of: ScriptState.Outgoing<ListenResponse>.self)
        state.listenOut.withLockedValue { _ = $0?.yield(.end); $0 = sink }
        state.counters.withLockedValue { $0.listenStreams += 1; $0.listenOpen = true }
        defer { state.counters.withLockedValue { $0.listenOpen = false } }
        let state = self.state
        let reading = Task {
            do {
                for try await r in request {
                    if case .addTarget(let t)? = r.targetChange, t.hasExpectedCount {
                        state.counters.withLockedValue { $0.expectedCounts[t.targetID] = t.expectedCount.value }
                    }
                    state.listenRequests.put(ScriptedService.seen(r))
                }
                state.listenRequests.put(.closed)
            } catch {}
            sink.yield(.end)
        }
        defer { reading.cancel() }
        try await ScriptedService.play(out, to: response)
    }

    static func seen(_ r: ListenRequest) -> ListenSeen {
        switch r.targetChange {
        case .addTarget(let t)?:
            let token = t.resumeToken.isEmpty ? nil : String(decoding: t.resumeToken, as: UTF8.self)
            let path: String
            var limit: Int32?
            switch t.targetType {
            case .documents(let d)?: path = d.documents.first.map(ScriptedService.relative) ?? ""
            case .query(let q)?:
                let sq = q.structuredQuery
                let parent = ScriptedService.relative(q.parent)
                path = (parent.isEmpty ? "" : parent + "/") + (sq.from.first?.collectionID ?? "")
                if sq.hasLimit { limit = sq.limit.value }
            default: path = ""
            }
            return .add(targetId: t.targetID, path: path, resumeToken: token, limit: limit)
        case .removeTarget(let id)?:
            return .remove(targetId: id)
        case nil:
            return .closed
        }
    }

    /// A name below `…/documents/`, or "" for the root.
    static func relative(_ name: String) -> String {
        guard let r = name.range(of: "/documents") else { return name }
        return String(name[r.upperBound...].drop(while: { $0 == "/" }))
    }

    func write(request: RPCAsyncSequence<WriteRequest, any Error>, response: RPCWriter<Google_Firestore_V1_WriteResponse>,
               context: ServerContext) async throws {
        let (out, sink) = AsyncStream.makeStream(of: ScriptState.Outgoing<Google_Firestore_V1_WriteResponse>.self)
        state.writeOut.withLockedValue { _ = $0?.yield(.end); $0 = sink }
        state.unacked.withLockedValue { $0.removeAll() }
        state.counters.withLockedValue { $0.writeStreams += 1 }
        let state = self.state
        let reading = Task {
            var first = true
            do {
                for try await r in request {
                    if first {
                        // The handshake: answered at once with a stream id and token.
                        first = false
                        var hello = Google_Firestore_V1_WriteResponse()
                        hello.streamID = "scripted"
                        hello.streamToken = Data("w0".utf8)
                        sink.yield(.message(hello))
                        continue
                    }
                    if r.writes.isEmpty {
                        state.writeRequests.put(.empty)
                    } else {
                        state.unacked.withLockedValue { $0.append(r.writes.count) }
                        state.writeRequests.put(.writes(r.writes.map { w -> String in
                            switch w.operation {
                            case .update(let d)?: return ScriptedService.relative(d.name)
                            case .delete(let n)?: return ScriptedService.relative(n)
                            default: return ""
                            }
                        }))
                    }
                }
                state.writeRequests.put(.closed)
            } catch {}
            sink.yield(.end)
        }
        defer { reading.cancel() }
        try await ScriptedService.play(out, to: response)
    }

    /// Writes what the test queued for a stream until it ends it (or fails it with an error).
    static func play<M: Sendable>(_ out: AsyncStream<ScriptState.Outgoing<M>>, to response: RPCWriter<M>) async throws {
        for await o in out {
            switch o {
            case .message(let m): try await response.write(m)
            case .fail(let e): throw e
            case .end: return
            }
        }
    }

    private func refuse(_ name: String) -> RPCError {
        state.counters.withLockedValue { $0.unary.append(name) }
        return RPCError(code: .unimplemented, message: "the scripted server answers only Listen and Write (\(name))")
    }

    func getDocument(request: Google_Firestore_V1_GetDocumentRequest, context: ServerContext) async throws -> Google_Firestore_V1_Document {
        throw refuse("GetDocument")
    }
    func listDocuments(request: Google_Firestore_V1_ListDocumentsRequest, context: ServerContext) async throws -> Google_Firestore_V1_ListDocumentsResponse {
        throw refuse("ListDocuments")
    }
    func updateDocument(request: Google_Firestore_V1_UpdateDocumentRequest, context: ServerContext) async throws -> Google_Firestore_V1_Document {
        throw refuse("UpdateDocument")
    }
    func deleteDocument(request: Google_Firestore_V1_DeleteDocumentRequest, context: ServerContext) async throws -> Google_Protobuf_Empty {
        throw refuse("DeleteDocument")
    }
    func batchGetDocuments(request: Google_Firestore_V1_BatchGetDocumentsRequest, response: RPCWriter<Google_Firestore_V1_BatchGetDocumentsResponse>,
                           context: ServerContext) async throws {
        throw refuse("BatchGetDocuments")
    }
    func beginTransaction(request: Google_Firestore_V1_BeginTransactionRequest, context: ServerContext) async throws -> Google_Firestore_V1_BeginTransactionResponse {
        throw refuse("BeginTransaction")
    }
    func commit(request: Google_Firestore_V1_CommitRequest, context: ServerContext) async throws -> Google_Firestore_V1_CommitResponse {
        throw refuse("Commit")
    }
    func rollback(request: Google_Firestore_V1_RollbackRequest, context: ServerContext) async throws -> Google_Protobuf_Empty {
        throw refuse("Rollback")
    }
    func runQuery(request: Google_Firestore_V1_RunQueryRequest, response: RPCWriter<Google_Firestore_V1_RunQueryResponse>,
                  context: ServerContext) async throws {
        throw refuse("RunQuery")
    }
    func runAggregationQuery(request: Google_Firestore_V1_RunAggregationQueryRequest,
                             response: RPCWriter<Google_Firestore_V1_RunAggregationQueryResponse>, context: ServerContext) async throws {
        throw refuse("RunAggregationQuery")
    }
    func listCollectionIds(request: Google_Firestore_V1_ListCollectionIdsRequest, context: ServerContext) async throws -> Google_Firestore_V1_ListCollectionIdsResponse {
        throw refuse("ListCollectionIds")
    }
    func batchWrite(request: Google_Firestore_V1_BatchWriteRequest, context: ServerContext) async throws -> Google_Firestore_V1_BatchWriteResponse {
        throw refuse("BatchWrite")
    }
    func createDocument(request: Google_Firestore_V1_CreateDocumentRequest, context: ServerContext) async throws -> Google_Firestore_V1_Document {
        throw refuse("CreateDocument")
    }
}

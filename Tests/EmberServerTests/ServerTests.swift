import EmberFirestoreProto
import EmberModel
import EmberServer
import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2
import XCTest

typealias FirestoreClient = Google_Firestore_V1_Firestore.Client<HTTP2ClientTransport.Posix>

/// The server end to end through a gRPC client: writes, reads, queries, transactions, the
/// Listen and Write streams, errors, and the shutdown.
final class ServerTests: XCTestCase {
    static let root = "projects/demo-ember/databases/(default)/documents"
    static let database = "projects/demo-ember/databases/(default)"

    func withServer(path: String? = nil, _ body: @escaping @Sendable (FirestoreClient, EmberServer) async throws -> Void) async throws {
        try await Self.serve(path: path, body)
    }

    /// Runs `body` against a fresh in-memory server on a free port (with `rules`, if given, and
    /// what `configure` changes).
    static func serve(path: String? = nil, rules: String? = nil, configure: (inout EmberServer.Configuration) -> Void = { _ in },
                      _ body: @escaping @Sendable (FirestoreClient, EmberServer) async throws -> Void) async throws {
        var configuration = EmberServer.Configuration(host: "127.0.0.1", port: 0, path: path, rules: rules)
        configure(&configuration)
        let server = try await EmberServer(configuration: configuration)
        let serving = Task { try await server.run() }
        let port = try await server.listeningPort
        do {
            try await withGRPCClient(transport: Self.transport(port: port)) { client in
                try await body(FirestoreClient(wrapping: client), server)
            }
        } catch {
            server.shutDown()
            _ = try? await serving.value
            throw error
        }
        server.shutDown()
        try await serving.value
    }

    /// A client transport to a local server whose calls end with DEADLINE_EXCEEDED after two
    /// minutes unless they set their own timeout: a test waiting for a message that never comes
    /// fails instead of hanging.
    static func transport(port: Int) throws -> HTTP2ClientTransport.Posix {
        let bounded = MethodConfig(names: [MethodConfig.Name(service: "")], timeout: .seconds(120))
        return try .http2NIOPosix(target: .ipv4(address: "127.0.0.1", port: port), transportSecurity: .plaintext,
                                  serviceConfig: ServiceConfig(methodConfig: [bounded]))
    }

    /// Whether `body` ends within `limit` (it goes on running if it does not: awaiting a task's
    /// value is not cancellable, so a task group, which waits for all its children, would not do).
    static func finishes(within limit: Duration, _ body: @escaping @Sendable () async -> Void) async -> Bool {
        final class Once: @unchecked Sendable {
            private let lock = NSLock()
            private var done = false
            func claim() -> Bool { lock.lock(); defer { lock.unlock() }; if done { return false }; done = true; return true }
        }
        let once = Once()
        return await withCheckedContinuation { (c: CheckedContinuation<Bool, Never>) in
            Task { await body(); if once.claim() { c.resume(returning: true) } }
            Task { try? await Task.sleep(for: limit); if once.claim() { c.resume(returning: false) } }
        }
    }

    static func value(_ i: Int64) -> Google_Firestore_V1_Value { var v = Google_Firestore_V1_Value(); v.integerValue = i; return v }
    static func value(_ s: String) -> Google_Firestore_V1_Value { var v = Google_Firestore_V1_Value(); v.stringValue = s; return v }

    static func set(_ path: String, _ fields: [String: Google_Firestore_V1_Value]) -> Google_Firestore_V1_Write {
        var w = Google_Firestore_V1_Write()
        w.update.name = root + "/" + path
        w.update.fields = .init(fields)
        return w
    }

    static func commit(_ fs: FirestoreClient, _ writes: [Google_Firestore_V1_Write], transaction: Data? = nil) async throws -> Google_Firestore_V1_CommitResponse {
        var req = Google_Firestore_V1_CommitRequest()
        req.database = database
        req.writes = writes
        if let transaction { req.transaction = transaction }
        return try await fs.commit(req)
    }

    static func code(_ body: () async throws -> Void) async -> RPCError.Code? {
        do { try await body(); return nil } catch let e as RPCError { return e.code } catch { return .unknown }
    }

    func testCommitGetAndErrors() async throws {
        try await withServer { fs, _ in
            var inc = Google_Firestore_V1_DocumentTransform.FieldTransform()
            inc.fieldPath = "n"
            inc.increment = ServerTests.value(2)
            var w = ServerTests.set("c/a", ["s": ServerTests.value("x")])
            w.updateTransforms = [inc]
            let r = try await ServerTests.commit(fs, [w])
            XCTAssertEqual(r.writeResults.count, 1)
            XCTAssertEqual(r.writeResults[0].transformResults.first?.integerValue, 2)
            var get = Google_Firestore_V1_GetDocumentRequest()
            get.name = ServerTests.root + "/c/a"
            let doc = try await fs.getDocument(get)
            XCTAssertEqual(doc.fields["s"]?.stringValue, "x")
            XCTAssertEqual(doc.fields["n"]?.integerValue, 2)
            XCTAssertEqual(doc.updateTime, r.commitTime)
            get.name = ServerTests.root + "/c/missing"
            let notFound = await ServerTests.code { _ = try await fs.getDocument(get) }
            XCTAssertEqual(notFound, .notFound)
            // An update of a missing document: NOT_FOUND with Firestore's wording and the wire name.
            var upd = ServerTests.set("c/none", ["a": ServerTests.value(1)])
            upd.updateMask.fieldPaths = ["a"]
            upd.currentDocument.exists = true
            do {
                _ = try await ServerTests.commit(fs, [upd])
                XCTFail("expected NOT_FOUND")
            } catch let e as RPCError {
                XCTAssertEqual(e.code, .notFound)
                XCTAssertEqual(e.message, "No document to update: \(ServerTests.root)/c/none")
            }
            get.name = "projects/demo-ember/databases/(default)/documents/c"
            let invalid = await ServerTests.code { _ = try await fs.getDocument(get) }
            XCTAssertEqual(invalid, .invalidArgument)
        }
    }

    func testDatabasesAreSeparateNamespaces() async throws {
        try await withServer { fs, _ in
            _ = try await ServerTests.commit(fs, [ServerTests.set("c/a", ["v": ServerTests.value(1)])])
            var get = Google_Firestore_V1_GetDocumentRequest()
            get.name = "projects/other/databases/(default)/documents/c/a"
            let other = await ServerTests.code { _ = try await fs.getDocument(get) }
            XCTAssertEqual(other, .notFound)
            var ids = Google_Firestore_V1_ListCollectionIdsRequest()
            ids.parent = "projects/other/databases/(default)/documents"
            let none = try await fs.listCollectionIds(ids)
            XCTAssertEqual(none.collectionIds, [])
            ids.parent = ServerTests.root
            let mine = try await fs.listCollectionIds(ids)
            XCTAssertEqual(mine.collectionIds, ["c"])
        }
    }

    func testRunQueryOrdersFiltersAndPages() async throws {
        try await withServer { fs, _ in
            var writes: [Google_Firestore_V1_Write] = []
            for i in 0..<10 { writes.append(ServerTests.set("c/d\(i)", ["n": ServerTests.value(Int64(i)), "odd": ServerTests.value(i % 2 == 1 ? "y" : "n")])) }
            _ = try await ServerTests.commit(fs, writes)
            var req = Google_Firestore_V1_RunQueryRequest()
            req.parent = ServerTests.root
            var sq = Google_Firestore_V1_StructuredQuery()
            var from = Google_Firestore_V1_StructuredQuery.CollectionSelector()
            from.collectionID = "c"
            sq.from = [from]
            sq.where.fieldFilter.field.fieldPath = "odd"
            sq.where.fieldFilter.op = .equal
            sq.where.fieldFilter.value = ServerTests.value("y")
            var o = Google_Firestore_V1_StructuredQuery.Order()
            o.field.fieldPath = "n"
            o.direction = .descending
            sq.orderBy = [o]
            sq.offset = 1
            sq.limit.value = 2
            req.structuredQuery = sq
            let names = try await fs.runQuery(req) { response in
                var out: [String] = []
                for try await m in response.messages where m.hasDocument { out.append(m.document.name) }
                return out
            }
            XCTAssertEqual(names, ["d7", "d5"].map { ServerTests.root + "/c/" + $0 })
        }
    }

    func testTransactionAbortsWhenAReadDocumentChanged() async throws {
        try await withServer { fs, _ in
            _ = try await ServerTests.commit(fs, [ServerTests.set("c/a", ["v": ServerTests.value(1)])])
            var begin = Google_Firestore_V1_BeginTransactionRequest()
            begin.database = ServerTests.database
            let t = try await fs.beginTransaction(begin).transaction
            var get = Google_Firestore_V1_GetDocumentRequest()
            get.name = ServerTests.root + "/c/a"
            get.transaction = t
            _ = try await fs.getDocument(get)
            _ = try await ServerTests.commit(fs, [ServerTests.set("c/a", ["v": ServerTests.value(2)])])
            let aborted = await ServerTests.code { _ = try await ServerTests.commit(fs, [ServerTests.set("c/a", ["v": ServerTests.value(3)])], transaction: t) }
            XCTAssertEqual(aborted, .aborted)
            // A transaction whose reads still hold commits; its id is then spent.
            let t2 = try await fs.beginTransaction(begin).transaction
            get.transaction = t2
            _ = try await fs.getDocument(get)
            _ = try await ServerTests.commit(fs, [ServerTests.set("c/a", ["v": ServerTests.value(4)])], transaction: t2)
            let spent = await ServerTests.code { _ = try await ServerTests.commit(fs, [], transaction: t2) }
            XCTAssertEqual(spent, .invalidArgument)
        }
    }

    /// Listens to `c` (where n >= 0) with `limit`, writes, and checks the responses.
    func testListenSendsInitialResultsThenOnlyChanges() async throws {
        try await withServer { fs, _ in
            _ = try await ServerTests.commit(fs, [ServerTests.set("c/a", ["n": ServerTests.value(1)]), ServerTests.set("c/b", ["n": ServerTests.value(2)])])
            var target = Google_Firestore_V1_Target()
            target.targetID = 7
            target.query.parent = ServerTests.root
            var from = Google_Firestore_V1_StructuredQuery.CollectionSelector()
            from.collectionID = "c"
            target.query.structuredQuery.from = [from]
            let (log, token) = try await ServerTests.listen(fs, target, writes: [
                [ServerTests.set("c/z", ["n": ServerTests.value(3)])],
                [{ var w = Google_Firestore_V1_Write(); w.delete = ServerTests.root + "/c/a"; return w }()],
            ])
            XCTAssertEqual(log.sortedWithinBatches(), ["ADD[7]", "doc a [7]", "doc b [7]", "CURRENT[7]", "NO_CHANGE[]",
                                 "doc z [7]", "NO_CHANGE[]", "delete a -[7]", "NO_CHANGE[]"])
            // Resuming with the token: nothing changed since, so no document, then the filter.
            target.resumeToken = token
            let (resumed, _) = try await ServerTests.listen(fs, target, writes: [])
            XCTAssertEqual(resumed, ["ADD[7]", "filter 7 count 2", "CURRENT[7]", "NO_CHANGE[]"])
        }
    }

    /// Opens a Listen stream with `target`; after the first NO_CHANGE, commits each batch of
    /// `writes` in turn, waiting for the NO_CHANGE that follows it. Returns the responses in
    /// short form and the last resume token.
    static func listen(_ fs: FirestoreClient, _ target: Google_Firestore_V1_Target, writes: [[Google_Firestore_V1_Write]]) async throws -> ([String], Data) {
        let (requests, requestSink) = AsyncStream.makeStream(of: Google_Firestore_V1_ListenRequest.self)
        var add = Google_Firestore_V1_ListenRequest()
        add.database = database
        add.addTarget = target
        requestSink.yield(add)
        return try await fs.listen(requestProducer: { writer in
            for await r in requests { try await writer.write(r) }
        }, onResponse: { response in
            var log: [String] = []
            var token = Data()
            var pending = writes
            for try await m in response.messages {
                switch m.responseType {
                case .targetChange(let tc)?:
                    log.append("\(tc.targetChangeType)".uppercased().replacingOccurrences(of: "NOCHANGE", with: "NO_CHANGE") + "\(tc.targetIds)")
                    if tc.targetChangeType == .noChange && tc.targetIds.isEmpty {
                        token = tc.resumeToken
                        if pending.isEmpty { requestSink.finish(); return (log, token) }
                        _ = try await commit(fs, pending.removeFirst())
                    }
                case .documentChange(let dc)?:
                    log.append("doc \(dc.document.name.split(separator: "/").last!) \(dc.targetIds)" + (dc.removedTargetIds.isEmpty ? "" : " -\(dc.removedTargetIds)"))
                case .documentDelete(let dd)?:
                    log.append("delete \(dd.document.split(separator: "/").last!) -\(dd.removedTargetIds)")
                case .documentRemove(let dr)?:
                    log.append("remove \(dr.document.split(separator: "/").last!) -\(dr.removedTargetIds)")
                case .filter(let f)?:
                    log.append("filter \(f.targetID) count \(f.count)")
                case nil:
                    log.append("?")
                }
            }
            return (log, token)
        })
    }

    func testLimitQueryWindowSendsWhatLeavesIt() async throws {
        try await withServer { fs, _ in
            _ = try await ServerTests.commit(fs, [ServerTests.set("c/a", ["n": ServerTests.value(1)]), ServerTests.set("c/b", ["n": ServerTests.value(2)])])
            var target = Google_Firestore_V1_Target()
            target.targetID = 1
            target.query.parent = ServerTests.root
            var from = Google_Firestore_V1_StructuredQuery.CollectionSelector()
            from.collectionID = "c"
            var o = Google_Firestore_V1_StructuredQuery.Order()
            o.field.fieldPath = "n"
            o.direction = .ascending
            target.query.structuredQuery.from = [from]
            target.query.structuredQuery.orderBy = [o]
            target.query.structuredQuery.limit.value = 2
            let (log, _) = try await ServerTests.listen(fs, target, writes: [[ServerTests.set("c/z", ["n": ServerTests.value(0)])]])
            XCTAssertEqual(log.sortedWithinBatches(), ["ADD[1]", "doc a [1]", "doc b [1]", "CURRENT[1]", "NO_CHANGE[]",
                                 "doc z [1]", "remove b -[1]", "NO_CHANGE[]"].sortedWithinBatches())
        }
    }

    func testAnInvalidTargetIsRemovedWithItsError() async throws {
        try await withServer { fs, _ in
            var target = Google_Firestore_V1_Target()
            target.targetID = 3
            target.query.parent = ServerTests.root
            let (requests, sink) = AsyncStream.makeStream(of: Google_Firestore_V1_ListenRequest.self)
            var add = Google_Firestore_V1_ListenRequest()
            add.database = ServerTests.database
            add.addTarget = target
            sink.yield(add)
            let change = try await fs.listen(requestProducer: { w in for await r in requests { try await w.write(r) } }, onResponse: { response in
                for try await m in response.messages { if case .targetChange(let tc)? = m.responseType, tc.targetChangeType == .remove { sink.finish(); return tc } }
                return Google_Firestore_V1_TargetChange()
            })
            XCTAssertEqual(change.targetIds, [3])
            XCTAssertEqual(change.cause.code, 3)
        }
    }

    func testWriteStreamHandshakeThenBatches() async throws {
        try await withServer { fs, _ in
            let (requests, sink) = AsyncStream.makeStream(of: Google_Firestore_V1_WriteRequest.self)
            var hello = Google_Firestore_V1_WriteRequest()
            hello.database = ServerTests.database
            sink.yield(hello)
            let results = try await fs.write(requestProducer: { w in for await r in requests { try await w.write(r) } }, onResponse: { response in
                var out: [Google_Firestore_V1_WriteResponse] = []
                for try await m in response.messages {
                    out.append(m)
                    if out.count == 1 {
                        var batch = Google_Firestore_V1_WriteRequest()
                        batch.streamToken = m.streamToken
                        batch.writes = [ServerTests.set("w/a", ["v": ServerTests.value(1)]), ServerTests.set("w/b", ["v": ServerTests.value(2)])]
                        sink.yield(batch)
                    } else {
                        sink.finish()
                    }
                }
                return out
            })
            XCTAssertEqual(results.count, 2)
            XCTAssertFalse(results[0].streamID.isEmpty)
            XCTAssertEqual(results[1].writeResults.count, 2)
            XCTAssertNotEqual(results[1].streamToken, results[0].streamToken)
        }
    }

    func testShutdownEndsOpenListenStreamsWithUnavailable() async throws {
        let server = try await EmberServer(configuration: .init(host: "127.0.0.1", port: 0))
        let serving = Task { try await server.run() }
        let port = try await server.listeningPort
        let outcome: RPCError.Code? = try await withGRPCClient(transport: ServerTests.transport(port: port)) { client in
            let fs = FirestoreClient(wrapping: client)
            var target = Google_Firestore_V1_Target()
            target.targetID = 1
            target.documents.documents = [ServerTests.root + "/c/a"]
            let (requests, sink) = AsyncStream.makeStream(of: Google_Firestore_V1_ListenRequest.self)
            var add = Google_Firestore_V1_ListenRequest()
            add.database = ServerTests.database
            add.addTarget = target
            sink.yield(add)
            return await ServerTests.code {
                try await fs.listen(requestProducer: { w in for await r in requests { try await w.write(r) } }, onResponse: { response in
                    for try await m in response.messages {
                        if case .targetChange(let tc)? = m.responseType, tc.targetChangeType == .current { server.shutDown() }
                    }
                })
                sink.finish()
            }
        }
        XCTAssertEqual(outcome, .unavailable)
        try await serving.value
    }

    /// An idle Write stream (handshake done, no batch pending: what a client keeps open) ends with
    /// UNAVAILABLE at shutdown instead of holding the graceful shutdown open.
    func testShutdownEndsAnIdleWriteStreamWithUnavailable() async throws {
        let server = try await EmberServer(configuration: .init(host: "127.0.0.1", port: 0))
        let serving = Task { try await server.run() }
        let port = try await server.listeningPort
        let outcome: RPCError.Code? = try await withGRPCClient(transport: ServerTests.transport(port: port)) { client in
            let fs = FirestoreClient(wrapping: client)
            let (requests, sink) = AsyncStream.makeStream(of: Google_Firestore_V1_WriteRequest.self)
            var hello = Google_Firestore_V1_WriteRequest()
            hello.database = ServerTests.database
            sink.yield(hello)
            defer { sink.finish() }
            return await ServerTests.code {
                try await fs.write(requestProducer: { w in for await r in requests { try await w.write(r) } }, onResponse: { response in
                    for try await _ in response.messages { server.shutDown() }
                })
            }
        }
        XCTAssertEqual(outcome, .unavailable)
        try await serving.value
    }

    func testAReadAtAPastReadTimeIsRefused() async throws {
        try await withServer { fs, _ in
            let first = try await ServerTests.commit(fs, [ServerTests.set("c/a", ["v": ServerTests.value(1)])])
            _ = try await ServerTests.commit(fs, [ServerTests.set("c/a", ["v": ServerTests.value(2)])])
            var get = Google_Firestore_V1_GetDocumentRequest()
            get.name = ServerTests.root + "/c/a"
            get.readTime = first.commitTime
            let past = await ServerTests.code { _ = try await fs.getDocument(get) }
            XCTAssertEqual(past, .failedPrecondition)
            var now = first.commitTime
            now.seconds += 3600
            get.readTime = now
            let v = try await fs.getDocument(get).fields["v"]?.integerValue
            XCTAssertEqual(v, 2)
        }
    }

    func testANonLoopbackHostWithoutRulesIsRefused() async {
        do {
            _ = try await EmberServer(configuration: .init(host: "0.0.0.0", port: 0))
            XCTFail("a non-loopback host without rules was accepted")
        } catch {
            XCTAssertEqual((error as? EmberError)?.code, .invalidArgument)
            XCTAssertTrue((error as? EmberError)?.message.contains("without a rules file") == true, "\(error)")
        }
    }

    func testDurableStoreKeepsCommitsAcrossRestarts() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ember-serve-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("data.ember").path
        try await withServer(path: path) { fs, _ in
            _ = try await ServerTests.commit(fs, [ServerTests.set("c/a", ["v": ServerTests.value(42)])])
        }
        try await withServer(path: path) { fs, _ in
            var get = Google_Firestore_V1_GetDocumentRequest()
            get.name = ServerTests.root + "/c/a"
            let v = try await fs.getDocument(get).fields["v"]?.integerValue
            XCTAssertEqual(v, 42)
        }
    }
}

extension Array where Element == String {
    /// Sorts the document lines between two target changes (their order within a batch is free).
    func sortedWithinBatches() -> [String] {
        var out: [String] = []
        var run: [String] = []
        for s in self {
            if s.hasPrefix("doc ") || s.hasPrefix("remove ") || s.hasPrefix("delete ") { run.append(s) } else {
                out += run.sorted(); run = []; out.append(s)
            }
        }
        return out + run.sorted()
    }
}

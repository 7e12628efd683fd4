import EmberFirestoreProto
@testable import EmberServer
import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2
import GRPCProtobuf
import SwiftProtobuf
import XCTest

/// Bad input on the wire gets a status, never a crash: bytes that are not a message, values
/// nested past any limit, unknown enum values, a request over the size limit, many streams.
final class WireInputTests: XCTestCase {
    struct RawBytes: MessageSerializer {
        func serialize<Bytes: GRPCContiguousBytes>(_ message: [UInt8]) throws -> Bytes { Bytes(message) }
    }

    static func call(_ fs: GRPCClient<HTTP2ClientTransport.Posix>, commit bytes: [UInt8]) async -> RPCError.Code? {
        await ServerTests.code {
            _ = try await fs.unary(request: ClientRequest(message: bytes), descriptor: Google_Firestore_V1_Firestore.Method.Commit.descriptor,
                                   serializer: RawBytes(), deserializer: ProtobufDeserializer<Google_Firestore_V1_CommitResponse>(),
                                   options: .defaults) { try $0.message }
        }
    }

    func withRawClient(maxRequestBytes: Int = 16 << 20, _ body: @escaping @Sendable (GRPCClient<HTTP2ClientTransport.Posix>) async throws -> Void) async throws {
        let server = try await EmberServer(configuration: .init(host: "127.0.0.1", port: 0, maxRequestBytes: maxRequestBytes))
        let serving = Task { try await server.run() }
        let port = try await server.listeningPort
        try await withGRPCClient(transport: ServerTests.transport(port: port)) { client in
            try await body(client)
        }
        server.shutDown()
        try await serving.value
    }

    func testMalformedAndDeepMessagesGetAStatus() async throws {
        try await withRawClient { client in
            // Not a protobuf message at all.
            let garbage = await WireInputTests.call(client, commit: [0xFF, 0xFF, 0xFF, 0xFF, 0x0F, 0x12])
            XCTAssertNotNil(garbage)
            // A value nested 10,000 levels deep (array in array ...), as raw bytes.
            var value: [UInt8] = [0x10, 0x01]          // Value{integer_value: 1}
            for _ in 0..<10_000 {
                let array = [0x0A] + varint(value.count) + value      // ArrayValue{values: [value]}
                value = [0x4A] + varint(array.count) + array          // Value{array_value: ...}
            }
            let name = Array("projects/p/databases/(default)/documents/c/a".utf8)
            var doc: [UInt8] = [0x0A] + varint(name.count) + name
            let entryKey: [UInt8] = [0x0A, 0x01, 0x66]                // "f"
            let entry = entryKey + [0x12] + varint(value.count) + value
            doc += [0x12] + varint(entry.count) + entry
            let write = [0x0A] + varint(doc.count) + doc              // Write{update: doc}
            let db = Array("projects/p/databases/(default)".utf8)
            let request = [0x0A] + varint(db.count) + db + [0x12] + varint(write.count) + write
            let deep = await WireInputTests.call(client, commit: request)
            XCTAssertNotNil(deep)
            // Nested 25 levels: decoded, then refused by Firestore's depth limit of 20.
            var w = Google_Firestore_V1_Write()
            w.update.name = "projects/p/databases/(default)/documents/c/a"
            var v = Google_Firestore_V1_Value()
            v.integerValue = 1
            for _ in 0..<25 { var m = Google_Firestore_V1_Value(); m.mapValue.fields["x"] = v; v = m }
            w.update.fields = .init(["f": v])
            var req = Google_Firestore_V1_CommitRequest()
            req.database = "projects/p/databases/(default)"
            req.writes = [w]
            let refused = await WireInputTests.call(client, commit: Array(try req.serializedBytes() as [UInt8]))
            XCTAssertEqual(refused, .invalidArgument)
            // An operator value no version of the API has.
            var q = Google_Firestore_V1_RunQueryRequest()
            q.parent = "projects/p/databases/(default)/documents"
            var from = Google_Firestore_V1_StructuredQuery.CollectionSelector()
            from.collectionID = "c"
            q.structuredQuery.from = [from]
            q.structuredQuery.where.fieldFilter.field.fieldPath = "a"
            q.structuredQuery.where.fieldFilter.op = .UNRECOGNIZED(99)
            q.structuredQuery.where.fieldFilter.value = v
            let fs = Google_Firestore_V1_Firestore.Client(wrapping: client)
            let unknown = await ServerTests.code { try await fs.runQuery(q) { r in for try await _ in r.messages {} } }
            XCTAssertEqual(unknown, .invalidArgument)
        }
    }

    func testARequestOverTheLimitIsRefused() async throws {
        try await withRawClient(maxRequestBytes: 64 << 10) { client in
            let fs = Google_Firestore_V1_Firestore.Client(wrapping: client)
            var w = Google_Firestore_V1_Write()
            w.update.name = "projects/p/databases/(default)/documents/c/big"
            var s = Google_Firestore_V1_Value()
            s.stringValue = String(repeating: "x", count: 100 << 10)
            w.update.fields = .init(["s": s])
            var req = Google_Firestore_V1_CommitRequest()
            req.database = "projects/p/databases/(default)"
            req.writes = [w]
            let code = await ServerTests.code { _ = try await fs.commit(req) }
            XCTAssertNotNil(code)
            // The server still answers.
            w.update.fields = .init(["s": ServerTests.value("small")])
            req.writes = [w]
            _ = try await fs.commit(req)
        }
    }

    func testAThousandConcurrentStreamsAreServed() async throws {
        try await withRawClient { client in
            let fs = Google_Firestore_V1_Firestore.Client(wrapping: client)
            let currents = try await withThrowingTaskGroup(of: Bool.self) { group in
                for i in 0..<1_000 {
                    group.addTask {
                        var target = Google_Firestore_V1_Target()
                        target.targetID = 1
                        target.documents.documents = ["\(ServerTests.root)/many/d\(i)"]
                        let (requests, sink) = AsyncStream.makeStream(of: Google_Firestore_V1_ListenRequest.self)
                        var add = Google_Firestore_V1_ListenRequest()
                        add.database = ServerTests.database
                        add.addTarget = target
                        sink.yield(add)
                        // After CURRENT the client half-closes and reads to the end (the server then
                        // ends the stream with OK): returning early would cancel the stream, and a
                        // thousand cancellations at once trip HTTP/2's reset-flood protection.
                        return try await fs.listen(requestProducer: { w in for await r in requests { try await w.write(r) } }, onResponse: { response in
                            var current = false
                            for try await m in response.messages {
                                if case .targetChange(let tc)? = m.responseType, tc.targetChangeType == .current { current = true; sink.finish() }
                            }
                            return current
                        })
                    }
                }
                var n = 0
                for try await ok in group where ok { n += 1 }
                return n
            }
            XCTAssertEqual(currents, 1_000)
        }
    }
}

func varint(_ n: Int) -> [UInt8] {
    var out: [UInt8] = []
    var v = UInt64(n)
    repeat {
        var b = UInt8(v & 0x7F)
        v >>= 7
        if v != 0 { b |= 0x80 }
        out.append(b)
    } while v != 0
    return out
}

import EmberFirestoreProto
import EmberServer
import Foundation
import GRPCCore
import XCTest

/// The server's answers where Firestore's backend has its own rules (checked against the
/// Firestore emulator by Tests/server; here without it): reserved names and vectors in writes,
/// write results of deletes and of writes that change nothing, repeated names in a BatchGet, and
/// transactions after their end.
final class BackendRulesTests: XCTestCase {
    typealias S = ServerTests

    static func message(_ body: () async throws -> Void) async -> String? {
        do { try await body(); return nil } catch let e as RPCError { return e.message } catch { return "\(error)" }
    }

    static func vector(_ elements: [Google_Firestore_V1_Value]) -> Google_Firestore_V1_Value {
        var m = Google_Firestore_V1_MapValue()
        m.fields["__type__"] = S.value("__vector__")
        var a = Google_Firestore_V1_ArrayValue()
        a.values = elements
        var arr = Google_Firestore_V1_Value()
        arr.arrayValue = a
        m.fields["value"] = arr
        var v = Google_Firestore_V1_Value()
        v.mapValue = m
        return v
    }

    func testReservedNamesVectorsAndNestedArraysAreRefusedInTheBackendsWords() async throws {
        try await S.serve { fs, _ in
            func refusal(_ w: Google_Firestore_V1_Write) async -> String? { await Self.message { _ = try await S.commit(fs, [w]) } }
            var d = Google_Firestore_V1_Value()
            d.doubleValue = 1.5
            var inner = Google_Firestore_V1_Value()
            inner.mapValue.fields["__x__"] = S.value(1)
            var nested = Google_Firestore_V1_Value()
            nested.arrayValue.values = [S.value(1)]
            var outer = Google_Firestore_V1_Value()
            outer.arrayValue.values = [nested]
            let answers = [
                await refusal(S.set("c/d", ["__x__": S.value(1)])),
                await refusal(S.set("c/d", ["m": inner])),
                await refusal(S.set("c/d", ["v": Self.vector([])])),
                await refusal(S.set("c/d", ["v": Self.vector([S.value(1)])])),
                await refusal(S.set("c/d", ["a": outer])),
                await refusal(S.set("c/__x__", ["a": S.value(1)])),
                await refusal(S.set("__c__/d", ["a": S.value(1)])),
            ]
            XCTAssertEqual(answers, [
                "field name __x__ is reserved",
                "field name '__x__' is reserved.",
                "Cannot have a zero length vector.",
                "Vector must only contain values of type 'double'",
                "Cannot convert an array value in an array value.",
                "Resource id \"__x__\" is invalid because it is reserved.",
                "Collection id \"__c__\" is invalid because it is reserved.",
            ])
            // Accepted: a vector of doubles, `____`, a numeric id.
            _ = try await S.commit(fs, [S.set("c/v", ["v": Self.vector([d])]), S.set("c/____", ["a": S.value(1)]),
                                        S.set("c/__id7__", ["a": S.value(1)])])
        }
    }

    func testWriteResultsOfDeletesAndOfWritesThatChangeNothing() async throws {
        try await S.serve { fs, _ in
            let first = try await S.commit(fs, [S.set("c/a", ["v": S.value(1)])])
            let same = try await S.commit(fs, [S.set("c/a", ["v": S.value(1)])])
            XCTAssertGreaterThan(same.commitTime.seconds * 1_000_000_000 + Int64(same.commitTime.nanos),
                                 first.commitTime.seconds * 1_000_000_000 + Int64(first.commitTime.nanos))
            XCTAssertEqual(same.writeResults[0].updateTime, first.writeResults[0].updateTime, "unchanged: the previous update time")
            var del = Google_Firestore_V1_Write()
            del.delete = S.root + "/c/a"
            let deleted = try await S.commit(fs, [del])
            XCTAssertFalse(deleted.writeResults[0].hasUpdateTime, "no update time after a delete")
        }
    }

    func testBatchGetAnswersARepeatedNameOnce() async throws {
        try await S.serve { fs, _ in
            _ = try await S.commit(fs, [S.set("c/a", ["v": S.value(1)])])
            var req = Google_Firestore_V1_BatchGetDocumentsRequest()
            req.database = S.database
            req.documents = [S.root + "/c/a", S.root + "/c/b", S.root + "/c/a", S.root + "/c/b"]
            let names = try await fs.batchGetDocuments(req) { response in
                var names: [String] = []
                for try await r in response.messages { names.append(r.found.name.isEmpty ? "missing " + r.missing : r.found.name) }
                return names
            }
            XCTAssertEqual(names, [S.root + "/c/a", "missing " + S.root + "/c/b"])
        }
    }

    func testARollbackAfterTheEndSucceedsAndOtherUsesAreRefused() async throws {
        try await S.serve { fs, _ in
            func begin() async throws -> Data {
                var b = Google_Firestore_V1_BeginTransactionRequest()
                b.database = S.database
                return try await fs.beginTransaction(b).transaction
            }
            func rollback(_ t: Data) async throws {
                var r = Google_Firestore_V1_RollbackRequest()
                r.database = S.database
                r.transaction = t
                _ = try await fs.rollback(r)
            }
            // A commit that fails (create of an existing document) ends the transaction; the
            // client's rollback after it succeeds, and the failure keeps its own code.
            _ = try await S.commit(fs, [S.set("c/a", ["v": S.value(1)])])
            let t1 = try await begin()
            var create = S.set("c/a", ["v": S.value(2)])
            create.currentDocument.exists = false
            let code = await S.code { _ = try await S.commit(fs, [create], transaction: t1) }
            XCTAssertEqual(code, .alreadyExists)
            try await rollback(t1)
            try await rollback(t1)
            let again = await Self.message { _ = try await S.commit(fs, [], transaction: t1) }
            XCTAssertEqual(again, "Transaction is invalid or closed.")
            let unknown = await Self.message { try await rollback(Data(repeating: 7, count: 16)) }
            XCTAssertEqual(unknown, "Invalid transaction.")
        }
    }
}

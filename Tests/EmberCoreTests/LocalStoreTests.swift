// Tests for LocalStore.swift's committedDocuments: a batch acknowledged with write results only
// (a server) gives the documents the cache takes with the acknowledgement.
import XCTest
import EmberModel
import EmberStorage
@testable import EmberCore

final class LocalStoreTests: XCTestCase {
    func testCommittedDocumentsApplyTheBatchToTheCacheWithItsResults() throws {
        let local = LocalStore(persistence: MemoryPersistence())
        _ = local.applyRemote([doc("c/a", ["n": .int(1), "keep": .bool(true)], version: 10)])
        let (batch, _) = try local.write([
            updateM("c/a", ["n": .int(2)]),
            setM("c/b", ["v": .int(1)]),
            updateM("c/unknown", ["v": .int(1)]),
            deleteM("c/gone"),
            Mutation(key: key("c/a"), kind: .patch(MapValue(), mask: []), transforms: [FieldTransform(path: fp("n"), op: .increment(.int(5)))]),
        ], localWriteTime: 1)
        let docs = local.committedDocuments(batchId: batch.batchId, results: [
            MutationResult(version: 20), MutationResult(version: 20), MutationResult(version: 20),
            MutationResult(version: 20), MutationResult(version: 20, transformResults: [.int(7)]),
        ])
        let byId = Dictionary(uniqueKeysWithValues: docs.map { ($0.key.id, $0) })
        XCTAssertEqual(Set(byId.keys), ["a", "b", "gone"], "c/unknown is not cached: its committed state is unknown here")
        XCTAssertEqual(byId["a"]?.data, MapValue(["n": .int(7), "keep": .bool(true)]), "both writes on c/a, the transform's value from the server")
        XCTAssertEqual(byId["a"]?.version, 20)
        XCTAssertEqual(byId["b"]?.data, MapValue(["v": .int(1)]))
        XCTAssertEqual(byId["gone"]?.exists, false)
    }

    func testADocumentTheListenStreamAlreadyBroughtIsLeftAsItIs() throws {
        let local = LocalStore(persistence: MemoryPersistence())
        let (batch, _) = try local.write([setM("c/a", ["n": .int(1)])], localWriteTime: 1)
        // The listen stream delivered the committed document (version 20) before the acknowledgement.
        _ = local.applyRemote([doc("c/a", ["n": .int(1)], version: 20)])
        XCTAssertEqual(local.committedDocuments(batchId: batch.batchId, results: [MutationResult(version: 20)]).count, 0)
        XCTAssertEqual(local.committedDocuments(batchId: 999, results: [MutationResult(version: 20)]).count, 0, "unknown batch")
    }
}

import EmberBackend
import EmberCore
import EmberModel
@testable import EmberRemote
import EmberStorage
import XCTest

/// The request/response calls through a client on an in-process `ember serve`: reads from the
/// server, queries (limit-to-last), counts, collection listing, transactions (their reads'
/// verifies and contention), and transforms whose committed values come from the write results.
final class RemoteCallsTests: XCTestCase {
    var server: TestServer!
    var clients: [(EmberClient, RemoteBackend)] = []

    override func setUpWithError() throws { server = try TestServer() }

    override func tearDown() {
        for (c, r) in clients { c.close(); r.close() }
        clients = []
        server?.stop()
        server = nil
    }

    private func client() throws -> EmberClient {
        let c = try server.client()
        clients.append(c)
        return c.0
    }

    func testReadsFromTheServer() throws {
        let (a, b) = (try client(), try client())
        XCTAssertNil(try written(b, (1...5).map { setM("c/d\($0)", ["n": .int(Int64($0))]) } + [setM("c/d1/sub/x", ["n": .int(0)])]))
        let one = try a.getDocument(key("c/d3"), source: .server)
        XCTAssertEqual(one.document?.data["n"], .int(3))
        XCTAssertFalse(one.fromCache)
        XCTAssertNil(try a.getDocument(key("c/none"), source: .server).document)

        let byN = try collection("c").order(by: fp("n"))
        let last2 = try a.getDocuments(try byN.limit(2, type: .last), source: .server)
        XCTAssertEqual(last2.documents.map { $0.key.id }, ["d4", "d5"])
        XCTAssertFalse(last2.isFromCache)
        let after = try a.getDocuments(try byN.start([.int(2)], inclusive: false).end([.int(4)], inclusive: true), source: .server)
        XCTAssertEqual(after.documents.map { $0.key.id }, ["d3", "d4"])
        let odd = try collection("c").filter(.field(FieldFilter(field: fp("n"), op: .in, value: .array([.int(1), .int(3), .int(5)]))))
        XCTAssertEqual(try a.getDocuments(odd, source: .server).documents.map { $0.key.id }, ["d1", "d3", "d5"])
        XCTAssertEqual(try a.getDocuments(Query(collectionGroup: "sub"), source: .server).documents.map { $0.key.path.canonical }, ["c/d1/sub/x"])

        XCTAssertEqual(try a.count(collection("c")), 5)
        XCTAssertEqual(try a.count(try byN.limit(2)), 2)
        XCTAssertEqual(try a.count(odd), 3)

        XCTAssertEqual(try a.collectionIds(under: ResourcePath(segments: [])), ["c"])
        XCTAssertEqual(try a.collectionIds(under: try ResourcePath(parsing: "c/d1")), ["sub"])
    }

    func testAGetFromTheServerSettlesADocumentDeletedElsewhere() throws {
        let (a, b) = (try client(), try client())
        XCTAssertNil(try written(a, [setM("c/gone", ["v": .int(1)]), setM("c/kept", ["v": .int(2)])]))
        XCTAssertEqual(try a.getDocuments(collection("c"), source: .cache).documents.count, 2)
        XCTAssertNil(try written(b, [deleteM("c/gone")]))
        let fresh = try a.getDocuments(collection("c"), source: .server)
        XCTAssertEqual(fresh.documents.map { $0.key.id }, ["kept"])
        XCTAssertEqual(try a.getDocuments(collection("c"), source: .cache).documents.map { $0.key.id }, ["kept"],
                       "the known key not in the result was looked up and is gone from the cache")
    }

    func testTransformsTakeTheirCommittedValuesFromTheWriteResults() throws {
        let (a, b) = (try client(), try client())
        XCTAssertNil(try written(b, [setM("c/n", ["n": .int(10)])]))
        XCTAssertEqual(try a.getDocument(key("c/n"), source: .server).document?.data["n"], .int(10))
        // `a` does not listen: its cache keeps n = 10 while `b` makes it 20.
        XCTAssertNil(try written(b, [setM("c/n", ["n": .int(20)])]))
        let inc = Mutation(key: key("c/n"), kind: .patch(MapValue(), mask: []),
                           transforms: [FieldTransform(path: fp("n"), op: .increment(.int(1))),
                                        FieldTransform(path: fp("at"), op: .serverTimestamp)],
                           precondition: .exists(true))
        XCTAssertNil(try written(a, [inc]))
        // Locally the increment gave 11; the server's result (21) is what the cache holds now.
        let doc = try a.getDocument(key("c/n"), source: .cache).document
        XCTAssertEqual(doc?.data["n"], .int(21))
        XCTAssertEqual(doc?.hasLocalMutations, false)
        guard case .timestamp(let t)? = doc?.data["at"] else { return XCTFail("no server timestamp: \(String(describing: doc?.data))") }
        // ember serve stamps the commit time; the emulator the request's time (ms): within a second.
        XCTAssertLessThan(abs(t.micros - (doc?.updateTime ?? 0)), 1_000_000, "the server timestamp is about the commit time")
    }

    func testTransactionsCommitAtomicallyAndRetryOnContention() throws {
        let (a, b) = (try client(), try client())
        XCTAssertNil(try written(a, [setM("acct/x", ["v": .int(100)])]))
        let attempts = Box<Int>()
        attempts.value = 0
        try a.runTransaction { tx in
            attempts.value! += 1
            let x = try tx.get(key("acct/x"))
            let missing = try tx.get(key("acct/none"))
            XCTAssertNil(missing)
            if attempts.value == 1 {
                // Another client changes what this attempt read: its commit must fail and retry.
                XCTAssertNil(try written(b, [setM("acct/x", ["v": .int(50)])]))
            }
            guard case .int(let v)? = x?.data["v"] else { return XCTFail("no value") }
            tx.write(Mutation(key: key("acct/y"), kind: .set(MapValue(["v": .int(v)]))))
        }
        XCTAssertEqual(attempts.value, 2)
        XCTAssertEqual(try a.getDocument(key("acct/y"), source: .server).document?.data["v"], .int(50))
        XCTAssertNil(try a.getDocument(key("acct/none"), source: .server).document, "the verify of a missing document wrote nothing")
    }
}

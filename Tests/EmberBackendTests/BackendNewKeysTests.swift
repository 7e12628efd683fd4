import XCTest
import Foundation
import Dispatch
import EmberModel
import EmberStorage
@testable import EmberBackend

/// A commit in a file store inserts the keys of plain sets without reading them first while such
/// keys are mostly new (`Backend.newKeysGuess`); a key that turns out to be stored is read then,
/// inside the transaction, and the set applies to it as if it had been read first: its create
/// time stays, an unchanged document keeps its update time and is not announced.
final class BackendNewKeysTests: XCTestCase {
    /// Records the commits a connection receives (on its queue; read after `backend.flush()`).
    private final class Recorder: BackendClient, @unchecked Sendable {
        let queue = DispatchQueue(label: "test.newkeys.client")
        private var m = pthread_mutex_t()
        private var received: [BackendEvent] = []
        init() { pthread_mutex_init(&m, nil) }
        func backend(_ link: any BackendLink, didSend event: BackendEvent) {
            pthread_mutex_lock(&m); received.append(event); pthread_mutex_unlock(&m)
        }
        /// The documents of every commit event so far, in order.
        var commits: [[Document]] {
            pthread_mutex_lock(&m); defer { pthread_mutex_unlock(&m) }
            return received.compactMap { if case .commit(_, let docs, _) = $0 { return docs } else { return nil } }
        }
    }

    private var dir: String!
    private var persistence: SQLitePersistence!
    private var backend: Backend!
    private var writer: BackendConnection!
    private let watcher = Recorder()
    private var watching: BackendConnection!
    private var batch: Int64 = 0

    override func setUp() {
        dir = NSTemporaryDirectory() + "ember-newkeys-\(getpid())-\(UInt64.random(in: 0..<UInt64.max))"
        try! FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        persistence = try! SQLitePersistence(path: dir + "/db.ember")
        backend = Backend(persistence: persistence)
        let w = Recorder()
        writer = backend.connect(client: w, queue: w.queue)
        watching = backend.connect(client: watcher, queue: watcher.queue)
        watching.listen(targetId: 1, query: Query(collection: try! ResourcePath(parsing: "c")), knownKeys: [])
        backend.flush()
    }

    override func tearDown() {
        writer.disconnect()
        watching.disconnect()
        backend.flush()
        persistence.close()
        try? FileManager.default.removeItem(atPath: dir)
    }

    private func key(_ s: String) -> DocumentKey { try! DocumentKey(parsing: s) }
    private func set(_ k: String, _ v: Int64) -> Mutation { Mutation(key: key(k), kind: .set(MapValue(["v": .int(v)]))) }

    /// Commits `ms` as one batch and returns its version.
    private func commit(_ ms: [Mutation], file: StaticString = #filePath, line: UInt = #line) -> Int64 {
        batch += 1
        guard case .acknowledged(.commit(let version, _, _)) = writer.commitNow(MutationBatch(batchId: batch, localWriteTime: 0, mutations: ms)) else {
            XCTFail("batch \(batch) was not acknowledged", file: file, line: line)
            return 0
        }
        backend.flush()
        watcher.queue.sync {}   // the watcher's events are recorded
        return version
    }

    private func stored(_ k: String) -> Document? { backend.store.get(key(k)) }

    func testNewKeysAreStoredWithTheCommitAsTheirCreateTime() {
        XCTAssertGreaterThan(backend.newKeysGuess, 0, "a fresh backend guesses new keys")
        let v = commit((0..<50).map { set("c/d\($0)", Int64($0)) })
        for i in 0..<50 {
            let d = stored("c/d\(i)")
            XCTAssertEqual(d?.data["v"], .int(Int64(i)))
            XCTAssertEqual(d?.createTime, v)
            XCTAssertEqual(d?.updateTime, v)
        }
        XCTAssertEqual(watcher.commits.last?.count, 50, "the watcher heard of every new document")
        XCTAssertGreaterThan(backend.newKeysGuess, 0)
    }

    func testAStoredKeyIsReadWhenTheInsertFindsIt() {
        let v1 = commit((0..<10).map { set("c/d\($0)", 1) } + [set("c/gone", 1)])
        _ = commit([Mutation(key: key("c/gone"), kind: .delete)])
        XCTAssertGreaterThan(backend.newKeysGuess, 0, "still guessing new: this batch is inserted unread")
        let heard = watcher.commits.count
        // d0..d4 change, d5..d9 are set as they are, c/gone is set again after its delete, c/new is new.
        let v2 = commit((0..<10).map { set("c/d\($0)", $0 < 5 ? 2 : 1) } + [set("c/gone", 3), set("c/new", 4)])
        for i in 0..<10 {
            let d = stored("c/d\(i)")
            XCTAssertEqual(d?.createTime, v1, "d\(i): the create time stays")
            XCTAssertEqual(d?.updateTime, i < 5 ? v2 : v1, "d\(i): an unchanged document keeps its update time")
            XCTAssertEqual(d?.data["v"], .int(i < 5 ? 2 : 1))
        }
        XCTAssertEqual(stored("c/gone")?.createTime, v2, "set after a delete: created again")
        XCTAssertEqual(stored("c/gone")?.data["v"], .int(3))
        XCTAssertEqual(stored("c/new")?.createTime, v2)
        let event = watcher.commits.dropFirst(heard).first ?? []
        XCTAssertEqual(Set(event.map { $0.key.path.canonical }),
                       Set((0..<5).map { "c/d\($0)" } + ["c/gone", "c/new"]), "only what changed is announced")
        // (The backend deletes a row, it keeps no tombstone: c/gone is new again.)
        XCTAssertEqual(backend.newKeysGuess, 16 - 10 + 2, "ten stored keys and two new ones")
    }

    func testTheGuessFollowsTheKeysBothWays() {
        _ = commit((0..<40).map { set("c/d\($0)", 1) })
        _ = commit((0..<40).map { set("c/d\($0)", 2) })
        XCTAssertEqual(backend.newKeysGuess, -16, "stored keys turn the guess off")
        // Read first now: the reads still tell the guess whether the keys were new.
        let v = commit((0..<40).map { set("c/n\($0)", 1) })
        XCTAssertEqual(backend.newKeysGuess, 16, "new keys turn it on again")
        XCTAssertEqual(stored("c/n39")?.createTime, v)
        XCTAssertEqual(stored("c/d39")?.data["v"], .int(2))
    }

    func testAKeyWrittenTwiceInABatchIsReadFirst() {
        _ = commit([set("c/a", 1)])
        let created = stored("c/a")?.createTime
        // Not a lone plain set: the batch's second write applies to the first one's result, so
        // the key is read before the batch applies.
        let patch = Mutation(key: key("c/a"), kind: .patch(MapValue(["w": .int(2)]), mask: [try! FieldPath(parsing: "w")]))
        _ = commit([set("c/a", 5), patch])
        XCTAssertEqual(stored("c/a")?.createTime, created)
        XCTAssertEqual(stored("c/a")?.data, MapValue(["v": .int(5), "w": .int(2)]))
    }
}

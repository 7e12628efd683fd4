import XCTest
import Foundation
import EmberModel
import EmberCore
import EmberStorage

/// The tree on a durable database: reopen round trips of the backend's tree, the client's cache
/// (observers start from it at once, offline reads), pending writes (still pending, raised
/// locally, sent when online), memory cache settings, and the queue's cost after many offline
/// writes.
final class TreePersistenceTests: XCTestCase {
    var dir: String!
    var file: String { dir + "/db.ember" }

    override func setUp() { dir = makeTemporaryDirectory("tree") }
    override func tearDown() { removeTemporaryDirectory(dir) }

    func open(network: Bool = true, persistence: Bool = true) throws -> EmberClient {
        var o = EmberOptions(path: file, persistence: persistence)
        o.networkEnabled = network
        return try EmberClient(options: o)
    }

    func testBackendTreeSurvivesReopen() throws {
        let c = try open()
        try c.treeWrite([setOp("posts", ["a": ["n": 1, "t": "x"], "b": ["n": 2.5, "ok": true]])])
        try c.treeWrite([setOp("posts/c/n", 3), setOp("posts/a/t", nil)])
        try c.settle()
        c.close()
        let again = try open()
        defer { again.close() }
        XCTAssertEqual(try again.treeGet(tp("posts")).value, tv(["a": ["n": 1], "b": ["n": 2.5, "ok": true], "c": ["n": 3]]))
        XCTAssertEqual(again.backend.readTree(tp("posts/b/ok")), .bool(true))
    }

    func testCachedTreeServesObserversAtOnceAfterReopen() throws {
        let c = try open()
        try c.treeWrite([setOp("list", ["a": ["n": 3], "b": ["n": 1], "c": ["n": 2]]), setOp("elsewhere", 1)])
        let log = TreeLog()
        let tokens = try c.watch("list", TreeQuery(), [.value], into: log)
        log.wait(for: 1)
        try c.settle()
        tokens.forEach { $0.remove() }
        c.close()

        // Offline: the observer gets the cached node at once; reads of cached paths work.
        let offline = try open(network: false)
        let q = try TreeQuery().orderBy(.child(tp("n")))
        let log2 = TreeLog()
        try offline.watch("list", q, [.childAdded, .value], into: log2)
        XCTAssertEqual(log2.wait(for: 4), ["added b prev=nil", "added c prev=b", "added a prev=c", "value b,c,a"])
        XCTAssertEqual(try offline.treeGet(tp("list/a/n")).value, .int(3))
        XCTAssertThrowsError(try offline.treeGet(tp("elsewhere"))) { XCTAssertEqual(($0 as? EmberError)?.code, .unavailable) }
        // Back online: changes made meanwhile elsewhere arrive as ordinary events.
        offline.backend.flush()
        offline.close()

        let writer = try open()
        try writer.treeWrite([setOp("list/d", ["n": 0])])
        try writer.settle()
        writer.close()
        let online = try open(network: false)
        defer { online.close() }
        let log3 = TreeLog()
        try online.watch("list", q, [.childAdded, .value], into: log3)
        XCTAssertEqual(log3.wait(for: 4).last, "value b,c,a", "the stored cache first")
        _ = log3.take()
        try online.enableNetwork()
        XCTAssertEqual(log3.wait(for: 2), ["added d prev=nil", "value d,b,c,a"])
    }

    func testPendingWritesSurviveReopenAndAreSentOnline() throws {
        let c = try open(network: false)
        try c.treeWrite([setOp("todo/a", "one")])
        try c.treeWrite([setOp("todo/b", "two"), setOp("todo/c", "three")])
        try c.treeWrite([setOp("todo/a", nil)])
        XCTAssertEqual(c.treePendingWriteCount, 3)
        c.close()

        let again = try open(network: false)
        XCTAssertEqual(again.treePendingWriteCount, 3, "still pending after reopening")
        let log = TreeLog()
        try again.watch("todo", TreeQuery(), [.childAdded], into: log)
        XCTAssertEqual(log.wait(for: 2), ["added b prev=nil", "added c prev=b"], "raised from the pending writes at once")
        XCTAssertTrue(again.backend.readTree(tp("todo")).isNull, "nothing sent while offline")
        try again.enableNetwork()
        try again.settle()
        XCTAssertEqual(again.treePendingWriteCount, 0)
        XCTAssertEqual(again.backend.readTree(tp("todo")), tv(["b": "two", "c": "three"]))
        // New writes after the reopen get fresh ids (the backend's applied mark is not fooled).
        try again.treeWrite([setOp("todo/d", "four")])
        try again.settle()
        XCTAssertEqual(again.backend.readTree(tp("todo/d")), .string("four"))
        again.close()
        let third = try open()
        defer { third.close() }
        XCTAssertEqual(third.treePendingWriteCount, 0, "acknowledged writes left the stored queue")
        XCTAssertEqual(try third.treeGet(tp("todo")).value, tv(["b": "two", "c": "three", "d": "four"]))
    }

    /// A write the backend applied before a crash, its acknowledgement lost, is resent and
    /// acknowledged without being applied again; a later write by another connection replaced
    /// it meanwhile. The ack brings the current value, so the client does not keep its own
    /// (an acknowledged write's data otherwise stays in the client's cache).
    func testAResentWriteAppliedBeforeACrashShowsTheCurrentValue() throws {
        let c = try open(network: false)
        try c.treeWrite([setOp("x", 1)])
        XCTAssertEqual(c.treePendingWriteCount, 1)
        c.close()
        // As the file would be: write 1 applied, then x replaced by another connection.
        let p = try SQLitePersistence(path: file)
        try! p.runTransaction("simulated crash") {
            p.backendTree!.write(tp("x"), .int(2))
            p.setMetadata(PersistenceKey.backendAppliedTreeWrite, 1)
        }
        p.close()

        let again = try open(network: false)
        defer { again.close() }
        let log = TreeLog()
        try again.watch("x", TreeQuery(), [.value], into: log)
        XCTAssertEqual(log.wait(for: 1), ["value 1"], "the pending write at once")
        try again.enableNetwork()            // the listen, then write 1 again
        try again.settle()
        XCTAssertEqual(again.treePendingWriteCount, 0)
        XCTAssertEqual(again.backend.readTree(tp("x")), .int(2), "not applied twice")
        XCTAssertEqual(log.all, ["value 1", "value 2"])
        XCTAssertEqual(try again.treeGet(tp("x")).value, .int(2))
    }

    func testMemoryCacheKeepsTheClientTreeInMemory() throws {
        let c = try open(network: false, persistence: false)
        try c.treeWrite([setOp("x", 1)])
        c.close()
        let again = try open(network: false, persistence: false)
        defer { again.close() }
        XCTAssertEqual(again.treePendingWriteCount, 0, "a memory cache forgets pending writes at close")
        XCTAssertThrowsError(try again.treeGet(tp("x"))) { XCTAssertEqual(($0 as? EmberError)?.code, .unavailable) }
    }

    func testManyOfflineWritesAreAcknowledgedInLinearTime() throws {
        let c = EmberClient()
        defer { c.close() }
        try c.disableNetwork()
        let n = 20_000
        for i in 0..<n { try c.treeWrite([TreeWriteOp(path: tp("q/k\(i)"), value: .int(Int64(i)))]) }
        XCTAssertEqual(c.treePendingWriteCount, n)
        let t0 = DispatchTime.now().uptimeNanoseconds
        try c.enableNetwork()
        for _ in 0..<6000 where c.treePendingWriteCount > 0 { usleep(5000) }
        let secs = Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e9
        XCTAssertEqual(c.treePendingWriteCount, 0)
        XCTAssertLessThan(secs, 10, "\(n) acknowledgements took \(secs) s")
        XCTAssertEqual(c.backend.readTree(tp("q")).childCount, n)
    }

    /// A limited view that starts from the backend's window shows what one built from every
    /// child shows, and stays equal under random writes.
    func testWindowStartMatchesAFullScan() throws {
        let c = EmberClient()
        defer { c.close() }
        var d: [String: Any] = [:]
        for i in 0..<600 { d["k\(i)"] = ["score": Int.random(in: 0..<100)] }
        try c.treeWrite([setOp("posts", d)])
        try c.settle()
        let q = try TreeQuery().orderBy(.child(tp("score"))).limit(10, .last)
        let fast = TreeLog()
        try c.watch("posts", q, allChildEvents + [.value], into: fast)   // from the window (nothing cached)
        XCTAssertEqual(c.backend.treeWindowCount, 1)
        XCTAssertEqual(c.backend.treeWindowsFromPasses, 1, "the first window comes from a pass over the children")
        c.backend.flush()   // waits for the index's build, which runs off the backend's queue
        XCTAssertEqual(c.backend.treeIndexCount, 1, "then the index is built")
        fast.wait(for: 11)
        let slow = TreeLog()
        try c.watch("posts", TreeQuery(), [.value], into: TreeLog())     // caches all of /posts
        try c.settle()
        let q2 = try TreeQuery().orderBy(.child(tp("score"))).limit(10, .last).start(.at, .int(-1), key: nil)  // same window, another view
        try c.watch("posts", q2, allChildEvents + [.value], into: slow)
        slow.wait(for: 11)
        XCTAssertEqual(fast.all, slow.all)
        _ = fast.take(); _ = slow.take()
        for _ in 0..<200 {
            let k = "k\(Int.random(in: 0..<620))"
            try c.treeWrite([Int.random(in: 0..<5) == 0 ? setOp("posts/\(k)", nil) : setOp("posts/\(k)/score", Int.random(in: 0..<120))])
        }
        try c.settle()
        XCTAssertEqual(fast.all, slow.all)
        XCTAssertFalse(fast.all.isEmpty)
    }
}

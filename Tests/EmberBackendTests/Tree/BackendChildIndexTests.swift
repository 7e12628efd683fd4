import XCTest
import EmberModel
import EmberStorage
@testable import EmberBackend

/// The backend's child index: windows equal to a sort of every child, kept right under random
/// writes below the indexed node, dropped by a write at or above it; and limited listens carry
/// their window.
final class BackendChildIndexTests: XCTestCase {
    func p(_ s: String) -> TreePath { try! TreePath(parsing: s) }

    func testWindowsFollowRandomWrites() throws {
        let store = MemoryTreeStore()
        var rng = SystemRandomNumberGenerator()
        func child() -> TreeValue {
            Int.random(in: 0..<10, using: &rng) == 0 ? .string("x") : .object(TreeObject(["score": .int(Int64.random(in: 0..<50, using: &rng))]))
        }
        var d: [String: TreeValue] = [:]
        for i in 0..<300 { d["k\(i)"] = child() }
        store.write(p("posts"), .object(TreeObject(d)))
        let queries = [
            try TreeQuery().orderBy(.child(p("score"))).limit(5, .last),
            try TreeQuery().orderBy(.child(p("score"))).limit(7, .first),
            try TreeQuery().orderBy(.child(p("score"))).start(.at, .int(10), key: nil).end(.at, .int(30), key: nil).limit(4, .last),
            try TreeQuery().orderBy(.key).limit(3, .first),
            try TreeQuery().orderBy(.value).limit(3, .last),
        ]
        var indexes: [TreeIndex: BackendChildIndex] = [:]
        for q in queries where indexes[q.index] == nil { indexes[q.index] = BackendChildIndex(index: q.index, node: store.read(p("posts"))) }
        for step in 0..<500 {
            let k = "k\(Int.random(in: 0..<320, using: &rng))"
            let path: TreePath
            let v: TreeValue
            switch Int.random(in: 0..<4, using: &rng) {
            case 0: (path, v) = (p("posts/\(k)"), .null)
            case 1: (path, v) = (p("posts/\(k)/score"), .int(Int64.random(in: 0..<50, using: &rng)))
            case 2: (path, v) = (p("posts/\(k)/other"), .int(1))
            default: (path, v) = (p("posts/\(k)"), child())
            }
            store.write(path, v)
            for (_, i) in indexes { i.update(key: k, at: p("posts"), store: store) }
            for q in queries {
                let w = indexes[q.index]!.window(q)
                let (keys, truncated) = windowBySorting(store.read(p("posts")), q)
                XCTAssertEqual(w.entries.map { $0.key }, keys, "step \(step), \(q)")
                XCTAssertEqual(w.truncated, truncated, "step \(step), \(q)")
            }
        }
    }

    /// The build's sort (a 64-bit word per entry, ties sorted fully) gives exactly the order of
    /// a sort by the full comparison: numbers that tie in the word (integers past 2^53, an integer
    /// and the double next to it, -0 and 0), strings, booleans, nulls and objects.
    func testSortMatchesTheFullComparison() {
        var rng = SystemRandomNumberGenerator()
        let big: Int64 = 1 << 53
        func value() -> TreeValue {
            switch Int.random(in: 0..<10, using: &rng) {
            case 0: return .null
            case 1: return .bool(Bool.random(using: &rng))
            case 2: return .string(["a", "b", "ab", "10", "\u{E9}", "e\u{301}"].randomElement(using: &rng)!)
            case 3: return .object(TreeObject(["x": .int(1)]))
            case 4: return .int(big + Int64.random(in: -3...3, using: &rng))
            case 5: return .double(Double(big) + [0, 2, -1, 1].randomElement(using: &rng)!)
            case 6: return .double([0.0, -0.0, 0.5, -0.5, 1e-300, -1e-300, 1e300].randomElement(using: &rng)!)
            case 7: return .int(Int64.random(in: -3...3, using: &rng))
            case 8: return .int([Int64.min, Int64.max, Int64.max - 1].randomElement(using: &rng)!)
            default: return .double(Double(Int.random(in: -6...6, using: &rng)) / 2)
            }
        }
        for round in 0..<200 {
            let entries = (0..<Int.random(in: 0..<300, using: &rng)).map { i in ChildEntry(key: "k\(Int.random(in: 0..<40, using: &rng))-\(i)", sortValue: value()) }
            let want = entries.sorted { ChildEntry.compare($0, $1) < 0 }
            XCTAssertEqual(BackendChildIndex.sort(entries).map { $0.key }, want.map { $0.key }, "round \(round)")
        }
    }

    func testLimitedListenCarriesItsWindowAndIndexesFollowWrites() throws {
        let (backend, client, queue, conn) = backendWithFiftyPosts()
        let q = try TreeQuery().orderBy(.child(p("score"))).limit(3, .last)
        conn.listen(p("posts"), windows: [q])
        backend.flush(); queue.sync {}
        guard case .listenResult(_, let node, let windows)? = client.events.last else { return XCTFail("no listen result") }
        XCTAssertEqual(node.childCount, 50)
        XCTAssertEqual(windows.first?.entries.map { $0.key }, ["k44", "k45", "k46", "k47", "k48", "k49"])
        XCTAssertEqual(windows.first?.truncated, true)
        XCTAssertEqual(backend.treeWindowsFromPasses, 1, "the first window comes from a pass over the children")
        XCTAssertEqual(backend.treeIndexCount, 1, "the index is built right after the answer")
        // The next limited listen in that order reads the index.
        conn.listen(p("posts"), windows: [q])
        backend.flush(); queue.sync {}
        guard case .listenResult(_, _, let w1)? = client.events.last else { return XCTFail("no listen result") }
        XCTAssertEqual(w1.first?.entries.map { $0.key }, ["k44", "k45", "k46", "k47", "k48", "k49"])
        XCTAssertEqual(backend.treeWindowsFromPasses, 1)
        XCTAssertEqual(backend.treeIndexCount, 1)
        // A write under the node updates the index; the next listen's window shows it.
        conn.write(id: 2, [TreeWriteOp(path: p("posts/k0/score"), value: .int(100))])
        conn.listen(p("posts"), windows: [q])
        backend.flush(); queue.sync {}
        guard case .listenResult(_, _, let w2)? = client.events.last else { return XCTFail("no listen result") }
        XCTAssertEqual(w2.first?.entries.last?.key, "k0")
        // A write at the node drops its index; the next limited listen builds it again.
        conn.write(id: 3, [TreeWriteOp(path: p("posts"), value: .int(1))])
        backend.flush()
        XCTAssertEqual(backend.treeIndexCount, 0)
    }
}

extension BackendChildIndexTests {
    /// A write that reaches the backend between a pass's answer and the index's build is in the
    /// index (the node is read again).
    func testIndexBuiltAfterAWriteFollowsIt() throws {
        let (backend, client, queue, conn) = backendWithFiftyPosts()
        let q = try TreeQuery().orderBy(.child(p("score"))).limit(2, .last)
        // Hold the backend so the listen and the write queue up: the listen answers by a pass and
        // queues the build, which runs after the write.
        let held = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        backend.queue.async { held.signal(); release.wait() }
        held.wait()
        conn.listen(p("posts"), windows: [q])
        conn.write(id: 2, [TreeWriteOp(path: p("posts/k3/score"), value: .int(1000))])
        release.signal()
        backend.flush(); queue.sync {}
        XCTAssertEqual(backend.treeIndexCount, 1)
        conn.listen(p("posts"), windows: [q])
        backend.flush(); queue.sync {}
        guard case .listenResult(_, _, let w)? = client.events.last else { return XCTFail("no listen result") }
        XCTAssertEqual(w.first?.entries.map { $0.key }, ["k47", "k48", "k49", "k3"])
        XCTAssertEqual(backend.treeWindowsFromPasses, 1, "the second window came from the index")
    }
}

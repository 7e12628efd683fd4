import EmberConcurrency
import XCTest
import Dispatch
import EmberModel
import EmberStorage
@testable import EmberBackend

/// An index is built off the backend's queue: writes go on meanwhile, the children they touch
/// are in the index once it is installed, a write replacing the node drops the build, a second
/// limited listen meanwhile takes a pass and starts no second build, and `flush` waits for it.
final class BackendIndexBuildTests: XCTestCase {
    func p(_ s: String) -> TreePath { try! TreePath(parsing: s) }

    /// Builds the backend gives it, held until the test runs them.
    final class HeldBuilds: @unchecked Sendable {
        private let lock = NSLock()
        private var works: [@Sendable () -> Void] = []
        func add(_ w: @escaping @Sendable () -> Void) { lock.lock(); works.append(w); lock.unlock() }
        var count: Int { lock.lock(); defer { lock.unlock() }; return works.count }
        func take() -> [@Sendable () -> Void] { lock.lock(); defer { works = []; lock.unlock() }; return works }
    }

    func hold(_ backend: Backend) -> HeldBuilds {
        let held = HeldBuilds()
        backend.queue.sync { backend.tree.runBuild = { held.add($0) } }
        return held
    }

    func lastWindow(_ client: RecordingTreeClient, _ queue: DispatchQueue) -> TreeWindow? {
        queue.sync {
            guard case .listenResult(_, _, let windows)? = client.events.last else { return nil }
            return windows.first
        }
    }

    func testWritesDuringTheBuildAreInTheInstalledIndex() throws {
        let (backend, client, queue, conn) = backendWithFiftyPosts()
        let held = hold(backend)
        let q = try TreeQuery().orderBy(.child(p("score"))).limit(3, .last)
        conn.listen(p("posts"), windows: [q])
        backend.queue.sync {}
        XCTAssertEqual(held.count, 1, "the first limited listen starts a build")
        // A second listen while it builds: answered by a pass, no second build.
        conn.listen(p("posts"), windows: [q])
        backend.queue.sync {}
        XCTAssertEqual(held.count, 1)
        XCTAssertEqual(backend.queue.sync { backend.tree.windowsFromPasses }, 2)
        var rng = SystemRandomNumberGenerator()
        var id: Int64 = 1
        func randomWrites(_ n: Int) {
            for _ in 0..<n {
                let k = "k\(Int.random(in: 0..<60, using: &rng))"
                id += 1
                switch Int.random(in: 0..<3, using: &rng) {
                case 0: conn.write(id: id, [TreeWriteOp(path: p("posts/\(k)"), value: .null)])
                case 1: conn.write(id: id, [TreeWriteOp(path: p("posts/\(k)/score"), value: .int(Int64.random(in: 0..<100, using: &rng)))])
                default: conn.write(id: id, [TreeWriteOp(path: p("posts/\(k)"), value: .object(TreeObject(["score": .int(Int64.random(in: 0..<100, using: &rng))])))])
                }
            }
        }
        // Writes applied after the build took the node and before it is installed: the build
        // does not see them; the installation reads their children again.
        randomWrites(100)
        backend.queue.sync {}
        // Then the build runs on another thread while more writes are applied.
        let build = held.take()[0]
        DispatchQueue.global().async { build() }
        randomWrites(100)
        backend.flush()
        XCTAssertEqual(backend.treeIndexCount, 1, "installed once built")
        conn.listen(p("posts"), windows: [q])
        backend.flush(); queue.sync {}
        XCTAssertEqual(backend.treeWindowsFromPasses, 2, "this window came from the index")
        let (keys, truncated) = windowBySorting(backend.readTree(p("posts")), q)
        XCTAssertEqual(lastWindow(client, queue)?.entries.map { $0.key }, keys)
        XCTAssertEqual(lastWindow(client, queue)?.truncated, truncated)
    }

    /// Children written during the build are told apart by their bytes: "\u{E9}" and
    /// "e\u{301}" (equal as Swift strings) are two children, and both are read again at the
    /// installation (a `Set<String>` kept one: the other stayed in the index at its old place).
    func testCanonicallyEquivalentKeysWrittenDuringTheBuildAreBothReadAgain() throws {
        let (backend, client, queue, conn) = backendWithFiftyPosts()
        let composed = "\u{E9}", decomposed = "e\u{301}"
        conn.write(id: 2, [TreeWriteOp(path: p("posts/\(composed)"), value: .object(TreeObject(["score": .int(-1)]))),
                           TreeWriteOp(path: p("posts/\(decomposed)"), value: .object(TreeObject(["score": .int(-2)])))])
        let held = hold(backend)
        let q = try TreeQuery().orderBy(.child(p("score"))).limit(2, .last)
        conn.listen(p("posts"), windows: [q])
        backend.queue.sync {}
        XCTAssertEqual(held.count, 1)
        // Both move from the bottom to the top while the build is held.
        conn.write(id: 3, [TreeWriteOp(path: p("posts/\(composed)/score"), value: .int(1000))])
        conn.write(id: 4, [TreeWriteOp(path: p("posts/\(decomposed)/score"), value: .int(2000))])
        backend.queue.sync {}
        for build in held.take() { build() }
        backend.flush()
        XCTAssertEqual(backend.treeIndexCount, 1)
        conn.listen(p("posts"), windows: [q])
        backend.flush(); queue.sync {}
        let (keys, _) = windowBySorting(backend.readTree(p("posts")), q)
        XCTAssertEqual(keys.suffix(2).map { Array($0.utf8) }, [Array(composed.utf8), Array(decomposed.utf8)])
        XCTAssertEqual(lastWindow(client, queue)?.entries.map { Array($0.key.utf8) }, keys.map { Array($0.utf8) })
    }

    /// Builds on the global queue (not held) racing writes of every kind and listens in three
    /// orders: once flushed, each window the index gives equals the one sorting gives.
    func testBuildsRacingWritesGiveTheSortedWindows() throws {
        let (backend, client, queue, conn) = backendWithFiftyPosts()
        let qs = [try TreeQuery().orderBy(.child(p("score"))).limit(3, .last),
                  try TreeQuery().orderBy(.value).limit(2, .first),
                  try TreeQuery().orderBy(.key).limit(4, .last)]
        var rng = SystemRandomNumberGenerator()
        var id: Int64 = 1
        for round in 0..<8 {
            var children: [String: TreeValue] = [:]
            for i in 0..<2000 { children["k\(i)"] = .object(TreeObject(["score": .int(Int64.random(in: 0..<1000, using: &rng))])) }
            id += 1
            conn.write(id: id, [TreeWriteOp(path: p("posts"), value: .object(TreeObject(children)))])
            conn.listen(p("posts"), windows: qs)
            for _ in 0..<200 {
                let k = "k\(Int.random(in: 0..<2100, using: &rng))"
                id += 1
                switch Int.random(in: 0..<4, using: &rng) {
                case 0: conn.write(id: id, [TreeWriteOp(path: p("posts/\(k)"), value: .null)])
                case 1: conn.write(id: id, [TreeWriteOp(path: p("posts/\(k)/score"), value: .double(Double.random(in: -5...2000, using: &rng)))])
                case 2: conn.write(id: id, [TreeWriteOp(path: p("posts/\(k)"), value: .string("s\(Int.random(in: 0..<9, using: &rng))"))])
                default: conn.write(id: id, [TreeWriteOp(path: p("posts/\(k)/score"), value: .bool(Bool.random(using: &rng)))])
                }
                if Int.random(in: 0..<50, using: &rng) == 0 { conn.listen(p("posts"), windows: qs) }
            }
            backend.flush()
            conn.listen(p("posts"), windows: qs)
            backend.flush(); queue.sync {}
            let node = backend.readTree(p("posts"))
            let windows: [TreeWindow] = queue.sync {
                guard case .listenResult(_, _, let ws)? = client.events.last else { return [] }
                return ws
            }
            XCTAssertEqual(windows.count, qs.count)
            for (w, q) in zip(windows, qs) {
                XCTAssertEqual(w.entries.map { $0.key }, windowBySorting(node, q).0, "round \(round), \(q)")
            }
        }
    }

    func testAWriteReplacingTheNodeDropsTheBuild() throws {
        let (backend, client, queue, conn) = backendWithFiftyPosts()
        let held = hold(backend)
        let q = try TreeQuery().orderBy(.child(p("score"))).limit(2, .first)
        conn.listen(p("posts"), windows: [q])
        backend.queue.sync {}
        conn.write(id: 2, [TreeWriteOp(path: p("posts"), value: .object(TreeObject(["a": .object(TreeObject(["score": .int(7)]))])))])
        for w in held.take() { w() }
        backend.flush()
        XCTAssertEqual(backend.treeIndexCount, 0, "built from a node that was replaced: dropped")
        // The next limited listen takes a pass again and starts a new build, which is installed.
        backend.queue.sync { backend.tree.runBuild = { DispatchQueue.global().async(execute: $0) } }
        conn.listen(p("posts"), windows: [q])
        backend.flush(); queue.sync {}
        XCTAssertEqual(lastWindow(client, queue)?.entries.map { $0.key }, ["a"])
        XCTAssertEqual(backend.treeIndexCount, 1)
        XCTAssertEqual(backend.treeWindowsFromPasses, 2)
    }
}

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

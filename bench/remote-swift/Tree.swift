import EmberConcurrency
import EmberBackend
import EmberCore
import EmberModel
import EmberRemote
import EmberStorage
import Foundation
import Ember

// Responsible for: the Swift tree clients of issue 29's benchmarks (bench/tree-remote), driven by
// bench/tree-remote/bench_tree_remote.py over stdin/stdout:
//
//     EmberRemoteBench tree-listen DATABASE_HOST PATH     # `ready` once connected with PATH loaded,
//                                                        # then `cb LATENCY_NS` per child_added
//     EmberRemoteBench tree-push DATABASE_HOST PATH       # `ready` once connected; per stdin line
//                                                        # `w I`: pushes {"i": I, "t": CLOCK_MONOTONIC ns}
//     EmberRemoteBench tree-resume DATABASE_HOST PATH N CHANGES
//
// `tree-listen` and `tree-push` use the public API (`FirestoreSettings.databaseHost`).
// `tree-resume` needs the children the server sent (`RemoteTreeEndpoint.childrenReceived`), which the
// public API does not expose: it builds the same client from the internal modules, loads a list
// of N children, goes offline while another client pushes CHANGES children, comes back, and
// prints `initial_children`, `unchanged_children` (back with nothing changed) and
// `resume_children` (back after the pushes).

private func treeDatabase(_ host: String) -> Firestore {
    let settings = FirestoreSettings()
    settings.databaseHost = host
    settings.isSSLEnabled = false
    do { return try Firestore.open(settings: settings) } catch { fail("open: \(error)") }
}

/// Blocks until `.info/connected` is true and `path` was loaded once.
private func waitConnected(_ db: Firestore, _ path: String) {
    let connected = DispatchSemaphore(value: 0), loaded = DispatchSemaphore(value: 0)
    let info = db.database().reference(withPath: ".info/connected")
    let h1 = info.observe(.value) { s in if s.value as? Bool == true { connected.signal() } }
    let ref = db.database().reference(withPath: path)
    let h2 = ref.observe(.value) { _ in loaded.signal() }
    guard connected.wait(timeout: .now() + 30) == .success, loaded.wait(timeout: .now() + 30) == .success else { fail("no connection to the tree host") }
    info.removeObserver(withHandle: h1)
    ref.removeObserver(withHandle: h2)
}

func treeListen(host: String, path: String) -> Never {
    let db = treeDatabase(host)
    let ref = db.database().reference(withPath: path)
    waitConnected(db, path)
    _ = ref.observe(.childAdded) { s in
        let now = monotonicNs()
        guard let t = (s.value as? [String: Any])?["t"] as? Int else { return }
        say("cb \(now - Int64(t))")
    }
    say("ready")
    while let line = readLine(), line != "stop" {}
    db.terminate(completion: nil)
    say("done")
    exit(0)
}

func treePush(host: String, path: String) -> Never {
    let db = treeDatabase(host)
    let ref = db.database().reference(withPath: path)
    waitConnected(db, path)
    say("ready")
    while let line = readLine() {
        let parts = line.split(separator: " ")
        guard parts.count == 2, parts[0] == "w", let i = Int(parts[1]) else { break }
        ref.childByAutoId().setValue(["i": i, "t": Int(monotonicNs())])
    }
    db.terminate(completion: nil)
    say("done")
    exit(0)
}

func treeResume(host: String, path: String, n: Int, changes: Int) -> Never {
    guard let a = try? RemoteAddress(parsing: host) else { fail("bad DATABASE_HOST \(host)") }
    let settings = RealtimeClient.Settings(host: a.host, port: a.port, namespace: "demo-ember")
    let writer = EmberClient(persistence: MemoryPersistence(), backend: Backend(persistence: MemoryPersistence()),
                             tree: RemoteTreeEndpoint(settings: settings))
    let endpoint = RemoteTreeEndpoint(settings: settings)
    let reader = EmberClient(persistence: MemoryPersistence(), backend: Backend(persistence: MemoryPersistence()), tree: endpoint)
    let list: TreePath
    do { list = try TreePath(parsing: path) } catch { fail("bad PATH \(path)") }
    var children: [String: TreeValue] = [:]
    for i in 0..<n { children[PushId.next()] = .object(TreeObject(["i": .int(Int64(i)), "text": .string("message \(i)")])) }
    let acked = DispatchSemaphore(value: 0)
    do { try writer.treeWrite([TreeWriteOp(path: list, value: .object(TreeObject(children)))]) { _ in acked.signal() } } catch { fail("write: \(error)") }
    guard acked.wait(timeout: .now() + 60) == .success else { fail("the list was not written") }
    let lock = NSLock()
    var seen = 0
    do {
        _ = try reader.treeObserve(list, type: .childAdded) { _ in lock.lock(); seen += 1; lock.unlock() }
    } catch { fail("observe: \(error)") }
    func waitSeen(_ count: Int) {
        let end = Date().addingTimeInterval(60)
        while lock.withLock({ seen }) < count { if Date() > end { fail("saw \(lock.withLock { seen }) of \(count) children") }; usleep(2_000) }
    }
    /// Back online: a write's acknowledgement follows the listens' answers on the connection.
    func roundTrip() {
        let done = DispatchSemaphore(value: 0)
        do { try reader.treeWrite([TreeWriteOp(path: try TreePath(parsing: "bench-mark"), value: .int(Int64(monotonicNs())))]) { _ in done.signal() } } catch { fail("mark: \(error)") }
        guard done.wait(timeout: .now() + 60) == .success else { fail("no acknowledgement") }
    }
    waitSeen(n)
    let initial = endpoint.childrenReceived
    say("initial_children \(initial)")
    do { try reader.disableNetwork(); try reader.enableNetwork() } catch { fail("network: \(error)") }
    roundTrip()
    say("unchanged_children \(endpoint.childrenReceived - initial)")
    let before = endpoint.childrenReceived
    do { try reader.disableNetwork() } catch { fail("network: \(error)") }
    for i in 0..<changes {
        do { try writer.treeWrite([TreeWriteOp(path: list.child(PushId.next()), value: .object(TreeObject(["i": .int(Int64(n + i))])))]) { _ in acked.signal() } } catch { fail("push: \(error)") }
    }
    for _ in 0..<changes { guard acked.wait(timeout: .now() + 60) == .success else { fail("a push was not acknowledged") } }
    let t0 = monotonicNs()
    do { try reader.enableNetwork() } catch { fail("network: \(error)") }
    waitSeen(n + changes)
    say("resume_ms \(Double(monotonicNs() - t0) / 1e6)")
    say("resume_children \(endpoint.childrenReceived - before)")
    reader.close()
    writer.close()
    say("done")
    exit(0)
}

import XCTest
import EmberModel
import EmberStorage
@testable import EmberBackend

/// A limited query's window by brute force: every in-range child sorted, the best 2 x limit, and
/// whether in-range children were left out.
func windowBySorting(_ node: TreeValue, _ q: TreeQuery) -> ([String], Bool) {
    var all: [ChildEntry] = []
    for (k, v) in node.object?.children ?? [:] {
        let e = ChildEntry(key: k.s, sortValue: q.index.sortValue(of: v))
        if q.contains(e) { all.append(e) }
    }
    all.sort { ChildEntry.compare($0, $1) < 0 }
    let n = 2 * q.limit!
    let keep = q.limitType == .first ? Array(all.prefix(n)) : Array(all.suffix(n))
    return (keep.map { $0.key }, all.count > n)
}

/// A backend on memory storage, a tree connection recording what it is sent, and `/posts` written
/// with 50 children `k0`...`k49` whose `score` is their number.
func backendWithFiftyPosts() -> (Backend, RecordingTreeClient, DispatchQueue, TreeConnection) {
    let backend = Backend(persistence: MemoryPersistence())
    let client = RecordingTreeClient()
    let queue = DispatchQueue(label: "test.tree")
    let conn = backend.connectTree(client: client, queue: queue)
    var d: [String: TreeValue] = [:]
    for i in 0..<50 { d["k\(i)"] = .object(TreeObject(["score": .int(Int64(i))])) }
    conn.write(id: 1, [TreeWriteOp(path: try! TreePath(parsing: "posts"), value: .object(TreeObject(d)))])
    return (backend, client, queue, conn)
}

final class RecordingTreeClient: TreeBackendClient, @unchecked Sendable {
    var events: [TreeBackendEvent] = []
    func tree(_ connection: TreeConnection, didSend event: TreeBackendEvent) { events.append(event) }
}

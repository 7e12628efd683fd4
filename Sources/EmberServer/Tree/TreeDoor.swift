import EmberConcurrency
import Dispatch
import EmberBackend
import EmberModel
import Foundation

/// Responsible for: the tree's REST requests' one connection to the backend's tree, as async
/// functions: reads, and writes computed from the current tree (`TreeConnection.write(computing:)`),
/// each answered when the backend acknowledged or refused it. Acknowledged means in the file.
/// The door listens to nothing; its events are only its writes' outcomes. Thread-safe: pending
/// writes are kept under a lock, completions arrive on the door's own queue.
final class TreeDoor: TreeBackendClient, Sendable {
    private let queue = DispatchQueue(label: "ember.server.tree-door")
    /// Set once, in `init` (the connection needs `self` as its client).
    private let opened = LockedValueBox<TreeConnection?>(nil)
    private var connection: TreeConnection { opened.current! }
    /// The next write's id, and the writes waiting for their outcome.
    private struct Writes { var nextId: Int64 = 1; var pending: [Int64: CheckedContinuation<Void, any Error>] = [:] }
    private let writes = LockedValueBox(Writes())
    /// Told the path of every change under a watched path (`watch`), on the door's queue.
    private let watcher = LockedValueBox<(@Sendable (TreePath) -> Void)?>(nil)

    init(backend: Backend) {
        let connection = backend.connectTree(client: self, queue: queue)
        opened.withLockedValue { $0 = connection }
    }

    func tree(_ connection: TreeConnection, didSend event: TreeBackendEvent) {
        if case .change(let ops, _) = event, !ops.isEmpty, let w = watcher.current {
            for op in ops { w(op.path) }
        }
        switch event {
        case .change(_, let ack?):
            take(ack)?.resume()
        case .rejected(let id, let error):
            take(id)?.resume(throwing: error)
        case .change, .listenResult, .listenRevoked, .window:
            break
        }
    }

    private func take(_ id: Int64) -> CheckedContinuation<Void, any Error>? {
        writes.withLockedValue { $0.pending.removeValue(forKey: id) }
    }

    /// The node at `path`.
    func read(_ path: TreePath) async -> TreeValue {
        await withCheckedContinuation { c in connection.get(path) { c.resume(returning: $0) } }
    }

    /// What `body` makes of the tree as it is now (reads that see one state).
    func inspect<T: Sendable>(_ body: @escaping @Sendable (_ read: (TreePath) -> TreeValue) -> T) async -> T {
        await withCheckedContinuation { c in connection.inspect(body) { c.resume(returning: $0) } }
    }

    /// Applies what `compute` makes of the current tree; throws what it threw, or a storage error.
    func write(_ compute: @escaping @Sendable (_ read: (TreePath) -> TreeValue) throws -> [TreeWriteOp]) async throws {
        try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, any Error>) in
            let id = writes.withLockedValue { w in
                defer { w.nextId += 1 }
                w.pending[w.nextId] = c
                return w.nextId
            }
            connection.write(id: id, computing: compute)
        }
    }

    /// Listens to `path` and calls `changed` with the path of each change under it (whoever
    /// wrote it: another instance's writes too, with a shared tree log). Once.
    func watch(_ path: TreePath, _ changed: @escaping @Sendable (TreePath) -> Void) {
        watcher.withLockedValue { $0 = changed }
        connection.listen(path)
    }

    func close() { connection.disconnect() }
}

import Dispatch
import EmberBackend
import EmberConcurrency
import EmberModel

/// Responsible for: the backend's `TreeCommitLog` on PostgreSQL, so every `ember serve`
/// instance holds the same tree (docs/scale-out.md): one log (`ember_log_head` row "tree") for
/// every namespace. At attach it replays the whole log into the backend's tree (the tree's log
/// is never trimmed); every tree write is then one `ember_tree_commit` (a checked one expects
/// the position it was computed at), applied here only after every write before it; a tailer
/// applies the other instances' writes, woken by their NOTIFYs (through the documents' log,
/// whose listener and reachability it shares) or its poll.
///
///     let tree = try await PostgresTreeLog.attach(to: backend, store: store, documents: log)
public final class PostgresTreeLog: TreeCommitLog, @unchecked Sendable { // state on the backend's queue or in boxes
    private let store: PostgresStore
    private let db: Int32
    /// On the backend's queue (which the backend runs) it is alive; tasks and NOTIFYs reach
    /// it through `live`, which may be gone.
    private unowned let backend: Backend
    private weak var live: Backend?
    private let documents: PostgresCommitLog
    /// The last position applied to the backend's tree.
    private let applied: LockedValueBox<Int64>
    private let doorbell = Doorbell()
    private let tailing = LockedValueBox<Task<Void, Never>?>(nil)

    private init(store: PostgresStore, db: Int32, backend: Backend, documents: PostgresCommitLog, applied: Int64) {
        self.store = store
        self.db = db
        self.backend = backend
        self.live = backend
        self.documents = documents
        self.applied = LockedValueBox(applied)
    }

    /// Replays log `name` into `backend`'s tree, makes this its tree log and starts tailing.
    /// Before the backend's first tree connection.
    public static func attach(to backend: Backend, store: PostgresStore, documents: PostgresCommitLog,
                              name: String = "tree") async throws -> PostgresTreeLog {
        let head = try await store.database(named: name)
        var from: Int64 = 0
        while true {
            let batch = try await store.treeChanges(head.db, after: from, limit: 5000)
            guard let last = batch.last else { break }
            backend.onQueue { for c in batch { backend.applyLoggedTree(c.ops) } }
            from = last.seq
        }
        let log = PostgresTreeLog(store: store, db: head.db, backend: backend, documents: documents, applied: from)
        backend.onQueue { backend.treeLog = log }
        documents.alsoWake(head.db, log.doorbell)
        log.startTailing()
        return log
    }

    /// The last position applied to the tree.
    public var appliedPosition: Int64 { applied.current }

    public func stop() {
        tailing.withLockedValue { $0?.cancel(); $0 = nil }
        doorbell.ring()
    }

    // MARK: TreeCommitLog (on the backend's queue)

    public func append(_ ops: [TreeWriteOp], checked: Bool) -> Result<Void, EmberError> {
        guard documents.isReachable else { return .failure(PostgresCommitLog.outOfReach) }
        let store = self.store, db = self.db
        let expect: Int64? = checked ? applied.current : nil
        switch PostgresCommitLog.blocking(on: store.executor, { try await store.commitTree(db, ops, expect: expect) }) {
        case .failure(let e):
            return .failure(e as? EmberError ?? EmberError(.internal, "\(e)"))
        case .success(let position):
            Task(executorPreference: store.executor) { try? await store.notify(db) }
            guard position.seq == applied.current + 1 || apply(through: position.seq - 1) else {
                return .failure(EmberError(.unavailable, "The tree write was stored, but PostgreSQL did not answer afterwards"))
            }
            applied.withLockedValue { $0 = position.seq }
            return .success(())
        }
    }

    public func catchUp() {
        guard documents.isReachable else { return }
        _ = apply(through: nil)
    }

    /// Applies the log up to `limit` (nil: its head); false when it could not be read.
    private func apply(through limit: Int64?) -> Bool {
        let store = self.store, db = self.db
        while true {
            let from = applied.current
            if let limit, from >= limit { return true }
            guard case .success(let batch) = PostgresCommitLog.blocking(on: store.executor, { try await store.treeChanges(db, after: from, limit: 2000) }) else {
                return false
            }
            if batch.isEmpty { return limit == nil }
            applyBatch(batch, through: limit)
        }
    }

    /// Applies the writes of `batch` that come next, in order, up to `limit`. On the queue.
    private func applyBatch(_ batch: [(seq: Int64, ops: [TreeWriteOp])], through limit: Int64?) {
        for c in batch {
            if let limit, c.seq > limit { return }
            guard c.seq == applied.current + 1 else { continue }
            backend.applyLoggedTree(c.ops)
            applied.withLockedValue { $0 = c.seq }
        }
    }

    private func startTailing() {
        let store = self.store, db = self.db
        let task = Task(executorPreference: store.executor) { [weak self] in
            while !Task.isCancelled {
                guard let from = self?.applied.current else { return }
                let batch = (try? await store.treeChanges(db, after: from, limit: 2000)) ?? []
                guard let me = self else { return }
                if batch.isEmpty {
                    await me.doorbell.wait(upTo: me.documents.pollSeconds)
                    continue
                }
                guard let backend = me.live else { return }   // the backend is gone
                await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                    backend.onQueueAsync {
                        me.applyBatch(batch, through: nil)
                        c.resume()
                    }
                }
            }
        }
        tailing.withLockedValue { $0 = task }
    }
}

import EmberModel

/// Responsible for: the outcome of a commit made for a server request: its version and the
/// committed state of each key it wrote (tombstones for deletes).
public struct CommitOutcome: Sendable {
    public let version: Int64
    public let documents: [DocumentKey: Document]
}

/// Decides, inside a commit, whether the committer may make one document's change: the key, the
/// stored document before the commit (nil when missing), the document after it (a tombstone for
/// a delete), the commit's time (µs; the time of its server timestamps) and a reader of other
/// stored documents as they were before the commit (rules' `get()` and `exists()`). It runs on
/// the backend's queue; an error refuses the whole commit, nothing of it applied. It is also
/// asked about a write whose precondition failed (with the write as it would be without it):
/// its refusal is then reported instead of the failure, which would tell whether the document
/// exists.
public typealias CommitAuthorizer = @Sendable (_ key: DocumentKey, _ before: Document?, _ after: Document, _ time: Int64,
                                     _ read: (DocumentKey) -> Document?) -> EmberError?

extension BackendConnection {
    /// Commits `mutations` for a server request (a Commit, a transaction's commit, a Write stream
    /// batch). A read-write transaction passes the update time of every document it read (0 for a
    /// document that did not exist): when one has changed since, nothing is applied and the
    /// commit fails with ABORTED, as Firestore's optimistic transactions do.
    /// `authorize`, when given, is asked about every document the commit writes.
    public func commit(_ mutations: [Mutation], reads: [DocumentKey: Int64] = [:], authorize: CommitAuthorizer? = nil,
                       completion: @escaping @Sendable (Result<CommitOutcome, EmberError>) -> Void) {
        backend.queue.async { [self] in
            let result = applyRequestCommit(mutations, reads: reads, authorize: authorize)
            deliveryQueue.async { completion(result) }
        }
    }

    /// `commit(_:reads:authorize:completion:)` waited for on the caller's thread: the commit runs
    /// there when the backend's queue is idle (no thread hand-off), else after the queue's work.
    /// For a server's request handlers; never call it on the backend's queue.
    public func commitWaiting(_ mutations: [Mutation], reads: [DocumentKey: Int64] = [:],
                              authorize: CommitAuthorizer? = nil) -> Result<CommitOutcome, EmberError> {
        backend.queue.sync { applyRequestCommit(mutations, reads: reads, authorize: authorize) }
    }

    /// On the backend's queue: a request's commit, its transaction's reads checked first.
    private func applyRequestCommit(_ mutations: [Mutation], reads: [DocumentKey: Int64],
                                    authorize: CommitAuthorizer?) -> Result<CommitOutcome, EmberError> {
        backend.queue.assertCurrent()
        if backend.commitLog == nil {
            for (key, readTime) in reads {
                let now = backend.store.get(key).flatMap { $0.exists ? $0.updateTime : nil } ?? 0
                if now != readTime { return .failure(BackendConnection.contention) }
            }
        }
        // With a shared log the reads are checked there, against what every server committed.
        let result = backend.applyCommit(mutations, from: self, batchId: nil, authorize: authorize,
                                         reads: backend.commitLog == nil ? [:] : reads)
        if case .failure(let e) = result, e.code == .aborted, backend.commitLog != nil, !reads.isEmpty {
            return .failure(BackendConnection.contention)
        }
        return result.map { version in
            var docs: [DocumentKey: Document] = [:]
            for m in mutations where docs[m.key] == nil { docs[m.key] = backend.lookup(m.key) }
            return CommitOutcome(version: version, documents: docs)
        }
    }

    /// Firestore's answer to a transaction whose reads changed before it committed.
    static let contention = EmberError(.aborted, "Aborted due to cross-transaction contention. This occurs when multiple transactions attempt to access the same data, requiring Firestore to abort at least one in order to enforce serializability.")

    /// Current states of `keys` (tombstones for missing ones) and the read version, read on the
    /// caller's thread when the backend's queue is idle (see `commitWaiting`).
    public func lookupWaiting(_ keys: [DocumentKey]) -> ([Document], Int64) {
        backend.queue.sync { [backend = self.backend] in
            backend.readBarrier()
            return backend.lookup(keys)
        }
    }

    /// The ids of the collections under `parent` (a document path or the root) that hold a
    /// document, sorted by UTF-8 bytes; asked of a collection path, the ids of its documents that
    /// have a document below them (ListDocuments' show_missing).
    public func collectionIds(under parent: ResourcePath, completion: @escaping @Sendable ([String]) -> Void) {
        backend.queue.async { [self, backend = self.backend] in
            let ids = backend.store.collectionIds(under: parent)
            deliveryQueue.async { completion(ids) }
        }
    }
}

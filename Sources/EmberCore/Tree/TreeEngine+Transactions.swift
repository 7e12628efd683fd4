import EmberConcurrency
import Dispatch
import EmberModel
import EmberBackend

/// What a tree transaction's update function returns: the value to write, abort (completes
/// uncommitted, no error), or fail with an error (a value that cannot be written).
public enum TreeTransactionOutcome: Sendable {
    case write(TreeValue)
    case abort
    case fail(EmberError)
}

/// Responsible for: one tree transaction of a client (Firebase's `runTransactionBlock`): its
/// update function, completion, retries and the listen that keeps its location's data current.
/// Owned by the TreeEngine's worker queue; `update` and `completion` run on the event thread.
final class TreeTransaction {
    static let maxRetries = 25

    let path: TreePath
    let applyLocally: Bool
    let update: (TreeValue) -> TreeTransactionOutcome
    let completion: (EmberError?, Bool, TreeValue?) -> Void
    var retries = 0
    /// Set once the completion is posted (nothing happens after it).
    var finished = false

    init(path: TreePath, applyLocally: Bool, update: @escaping (TreeValue) -> TreeTransactionOutcome,
         completion: @escaping @Sendable (EmberError?, Bool, TreeValue?) -> Void) {
        self.path = path
        self.applyLocally = applyLocally
        self.update = update
        self.completion = completion
    }
}

/// The transactions of the tree, as the Firebase SDKs run them: the update function is called
/// with the location's latest value as this client knows it (null when it knows nothing yet,
/// the Firebase contract's first call), its result is applied locally at once (unless local
/// events are off) and sent as a compare-and-set: the server applies it only if its node still
/// hashes to the value the update saw (`TreeHash`). A refusal (`datastale`) rolls the local
/// write back and runs the update again with the data the listen has brought since, up to 25
/// times; then the transaction fails with "The transaction had too many retries". Worker queue.
///
///     engine.transaction(at: p, applyLocally: true, update: { v in .write(.int(v.intValue + 1)) }) { error, committed, snapshot in }
extension TreeEngine {
    func transaction(at path: TreePath, applyLocally: Bool, update: @escaping (TreeValue) -> TreeTransactionOutcome,
                     completion: @escaping @Sendable (EmberError?, Bool, TreeValue?) -> Void) {
        worker.assertCurrent()
        let t = TreeTransaction(path: path, applyLocally: applyLocally, update: update, completion: completion)
        runningTransactions.append(t)
        // The listen keeps the cache current at the location, so a retry sees what the server has.
        addListen(path)
        attempt(t)
    }

    /// Runs the update (on the event thread) with the latest value, then writes its result.
    private func attempt(_ t: TreeTransaction) {
        let base = local.value(at: t.path.segments)
        events.post { [self] in
            let outcome = t.update(base)
            worker.asyncConfined { [self] in write(t, outcome, over: base) }
        }
    }

    private func write(_ t: TreeTransaction, _ outcome: TreeTransactionOutcome, over base: TreeValue) {
        guard !t.finished else { return }
        guard !closed else { return finish(t, EmberError(.cancelled, "The database was closed before the transaction completed."), false, nil) }
        let value: TreeValue
        switch outcome {
        case .write(let v): value = v
        case .abort: return finish(t, nil, false, local.value(at: t.path.segments))
        case .fail(let error): return finish(t, error, false, nil)
        }
        let op = TreeWriteOp(path: t.path, value: value)
        let id: Int64
        do {
            try TreeLimits.validate([op])
            id = try takeWriteId(recording: true)
        } catch {
            return finish(t, error as? EmberError ?? EmberError(.internal, "\(error)"), false, nil)
        }
        let w = PendingWrite(id: id, ops: [op], completion: nil, expectedHash: TreeHash.of(base), transaction: t,
                             hidden: !t.applyLocally, localOps: estimate([op]))
        track(w)
        if t.applyLocally {
            changeLocal([t.path], fromLocalWrite: true) { local.set(t.path.segments[...], w.shownOps[0].value) }
        }
        if isOnline { send(w) }
    }

    /// The server applied attempt `w`: the transaction is committed with the value written.
    func transactionCommitted(_ t: TreeTransaction, _ w: PendingWrite) {
        finish(t, nil, true, cache.value(at: t.path.segments))
    }

    /// The server refused attempt `w`: run again when the data changed under it, else fail.
    func transactionRejected(_ t: TreeTransaction, _ error: EmberError) {
        guard !t.finished else { return }
        guard error.code == .aborted else { return finish(t, error, false, nil) }
        t.retries += 1
        if t.retries >= TreeTransaction.maxRetries {
            return finish(t, EmberError(.aborted, "The transaction had too many retries"), false, local.value(at: t.path.segments))
        }
        // Clients contending for one location would otherwise retry in step and keep losing
        // to the fastest: each waits a random while, up to 2^retries ms (at most 50 ms).
        let delay = Double.random(in: 0...min(0.001 * Double(1 << min(t.retries, 6)), 0.05))
        worker.asyncAfterConfined(deadline: .now() + .microseconds(Int(delay * 1_000_000))) { [self] in
            guard !t.finished else { return }
            if closed { return finish(t, EmberError(.cancelled, "The database was closed before the transaction completed."), false, nil) }
            attempt(t)
        }
    }

    private func finish(_ t: TreeTransaction, _ error: EmberError?, _ committed: Bool, _ value: TreeValue?) {
        guard !t.finished else { return }
        t.finished = true
        runningTransactions.removeAll { $0 === t }
        if !closed { removeListen(t.path) }
        events.post { t.completion(error, committed, value) }
    }

    /// Closing: every transaction still running fails as cancelled.
    func cancelTransactions() {
        let running = runningTransactions
        for t in running { finish(t, EmberError(.cancelled, "The database was closed before the transaction completed."), false, nil) }
    }
}

import EmberModel
import EmberBackend

/// Responsible for: the thread-safe entry points to the Realtime-Database tree of this
/// database (the same worker, event thread, backend and network switch as the documents).
/// Writes are validated here and applied on the worker before the call returns; observers
/// get their callbacks on the event thread, in order, and `ListenerToken.remove()` is final.
///
///     let (handle, token) = try client.treeObserve(path, query: TreeQuery(), type: .childAdded) { e in }
///     try client.treeWrite([TreeWriteOp(path: path.child(PushId.next()), value: .int(1))])
extension EmberClient {
    /// Applies the overwrites as one atomic write (an update: one op per child path; paths may
    /// not overlap). `completion` runs on the event thread when the backend acknowledges.
    public func treeWrite(_ ops: [TreeWriteOp], completion: ((EmberError?) -> Void)? = nil) throws {
        let serverValues = try TreeLimits.validate(ops)
        try onWorkerPublic { _ = try treeEngine.write(ops, serverValues: serverValues, completion: completion) }
    }

    /// Registers writes the server applies when this client's connection ends (Firebase's
    /// onDisconnect: a set, or an update under `path`), or cancels those at and below a path.
    /// With the in-process backend they are applied when the client closes. `completion` runs
    /// on the event thread once the server holds them.
    public func treeOnDisconnect(_ op: TreeOnDisconnect, completion: (@Sendable (EmberError?) -> Void)? = nil) throws {
        if case .write(_, let ops, _) = op { try TreeLimits.validate(ops) }
        try onWorkerPublic { treeEngine.onDisconnect(op, completion: completion) }
    }

    /// Runs a transaction at `path` (Firebase's `runTransactionBlock`): `update` runs on the
    /// event thread with the location's latest value as this client knows it (null when it
    /// knows nothing yet) and again, up to 25 times, whenever the server's value had changed.
    /// `completion` (event thread) gets the error, whether the value was committed, and the
    /// value then at `path` (nil when the transaction failed). `applyLocally`: whether each
    /// attempt raises local events before the server answers.
    public func treeTransaction(_ path: TreePath, applyLocally: Bool = true, update: @escaping (TreeValue) -> TreeTransactionOutcome,
                                completion: @escaping @Sendable (EmberError?, Bool, TreeValue?) -> Void) throws {
        try onWorkerPublic { treeEngine.transaction(at: path, applyLocally: applyLocally, update: update, completion: completion) }
    }

    /// Starts an observer of `type` at `path` through `query`. Returns its handle and token.
    public func treeObserve(_ path: TreePath, query: TreeQuery = TreeQuery(), type: TreeEventType, onGone: (() -> Void)? = nil,
                            _ callback: @escaping (TreeListenEvent) -> Void) throws -> (handle: UInt, token: ListenerToken) {
        let token = makeListenerToken(onGone: onGone)
        token.holdCallbacksUntilStarted()
        defer { token.started() }
        return (try treeObserve(path, query: query, type: type, token: token, callback), token)
    }

    /// Starts an observer with a token from `makeListenerToken`. Returns its handle.
    public func treeObserve(_ path: TreePath, query: TreeQuery = TreeQuery(), type: TreeEventType, token: ListenerToken,
                            _ callback: @escaping (TreeListenEvent) -> Void) throws -> UInt {
        let handle = try onWorkerPublic { treeEngine.observe(path, query: query, type: type, token: token, callback: callback) }
        token.detach = { [weak self] in
            guard let self, !self.closed else { return }
            self.worker.async { if !self.treeEngine.closed { self.treeEngine.removeObserver(handle) } }
        }
        return handle
    }

    /// The tokens of every observer at `path` (of `query` only when given; nil: every query).
    public func treeTokens(at path: TreePath, query: TreeQuery?) throws -> [ListenerToken] {
        try onWorkerPublic { treeEngine.tokens(at: path, query: query) }
    }

    /// The token of the observer `handle` when it observes `path`.
    public func treeToken(handle: UInt, at path: TreePath) throws -> ListenerToken? {
        try onWorkerPublic { treeEngine.token(handle: handle, at: path) }
    }

    /// Reads `path` once (through `query`); completion on the event thread.
    public func treeGet(_ path: TreePath, query: TreeQuery = TreeQuery(), completion: @escaping @Sendable (Result<TreeSnapshot, EmberError>) -> Void) throws {
        try query.validate()
        try onWorkerPublic { treeEngine.get(path, query: query, completion: completion) }
    }

    /// Blocking form of `treeGet` (never from the event thread).
    public func treeGet(_ path: TreePath, query: TreeQuery = TreeQuery(), timeout: Double = 30) throws -> TreeSnapshot {
        try wait(timeout) { done in try treeGet(path, query: query, completion: done) }
    }

    /// Writes not yet acknowledged (tests and diagnostics).
    public var treePendingWriteCount: Int { (try? onWorkerPublic { treeEngine.pendingWriteCount }) ?? 0 }
}

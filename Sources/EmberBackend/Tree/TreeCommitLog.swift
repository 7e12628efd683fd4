import EmberModel

/// Responsible for: the log every tree write must reach before a backend applies it, when
/// several servers share one store (`EmberPostgres`): the tree's counterpart of `CommitLog`.
/// `append` places a write (its overwrites, server values already resolved) among every
/// server's; a `checked` one was computed from the tree as this backend has it (a compare-and-
/// set, a transaction, an increment) and is refused with ABORTED when another server's tree
/// write came since, so the backend catches up and computes it again. Before `append` returns,
/// every earlier write is applied through `Backend.applyLoggedTree`, so the tree applies writes
/// in the log's order. Both run on the backend's queue and block it.
///
///     backend.treeLog = log          // before the first tree connection
public protocol TreeCommitLog: AnyObject {
    func append(_ ops: [TreeWriteOp], checked: Bool) -> Result<Void, EmberError>
    /// Applies every tree write logged so far that this backend has not applied.
    func catchUp()
}

extension Backend {
    /// The shared tree log (nil: this backend's tree is its own). Set before the first tree
    /// connection, on the backend's queue.
    public var treeLog: TreeCommitLog? {
        get { tree.log }
        set { tree.log = newValue }
    }

    /// Applies another server's tree write, logged in this order, and tells the connections
    /// listening under or above it. On the backend's queue, from the `TreeCommitLog` only.
    public func applyLoggedTree(_ ops: [TreeWriteOp]) {
        queue.assertCurrent()
        tree.applyLogged(ops)
    }
}

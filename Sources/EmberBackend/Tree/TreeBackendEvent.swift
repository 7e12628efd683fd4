import EmberModel

/// Responsible for: the messages the backend sends a tree client, in order, on the client's queue.
public enum TreeBackendEvent: Sendable {
    /// The current node at a path just listened to, and the windows of the limited queries the
    /// listen asked for (computed from the same state, from the backend's child indexes).
    case listenResult(path: TreePath, value: TreeValue, windows: [TreeWindow])
    /// A write changed the tree: the overwrites that fall under this client's listens (in
    /// order; an overwrite above a listened path comes cut to that path), and the client's own
    /// write id when it is the acknowledgement of that write. An acknowledged write's own data
    /// is the backend's state at its paths when the ack is sent (the client keeps it, even where
    /// the ops leave it out because the backend had no listen of that client there); the ack of
    /// a write applied before a crash and resent carries the current values at its paths instead.
    case change(ops: [TreeWriteOp], ack: Int64?)
    /// The client's write `writeId` was not applied (its transaction could not be stored).
    case rejected(writeId: Int64, error: EmberError)
    /// The listen at `path` is refused, or no longer allowed (a server's rules): its observers
    /// end with `error`. The in-process backend never sends it.
    case listenRevoked(path: TreePath, error: EmberError)
    /// The children a tagged query listen (`TreeLink.listen(_:query:tag:)`) selects now: the
    /// whole window each time it changes, first when the listen is answered. Only a server's
    /// link sends it.
    case window(tag: Int, value: TreeValue)
}

/// Responsible for: receiving a tree connection's events. Called on the queue given to `connectTree`.
public protocol TreeBackendClient: AnyObject {
    func tree(_ connection: TreeConnection, didSend event: TreeBackendEvent)
}

/// Responsible for: a limited query's first window as the backend's child index gives it: the
/// best 2 x limit children in the query's range (ascending), and whether others in range were
/// left out (all of them worse than those given), so a client can start the query's view
/// without a pass over every child.
public struct TreeWindow: Sendable {
    public let query: TreeQuery
    public let entries: [ChildEntry]
    public let truncated: Bool
    public init(query: TreeQuery, entries: [ChildEntry], truncated: Bool) {
        self.query = query
        self.entries = entries
        self.truncated = truncated
    }
}

import EmberModel

/// Responsible for: the messages the backend sends a tree client, in order, on the client's queue.
public enum TreeBackendEvent: Sendable {
    /// The current node at a path just listened to.
    case listenResult(path: TreePath, value: TreeValue)
    /// A write changed the tree: the overwrites that fall under this client's listens (in
    /// order; an overwrite above a listened path comes cut to that path), and the client's own
    /// write id when it is the acknowledgement of that write.
    case change(ops: [TreeWriteOp], ack: Int64?)
}

/// Responsible for: receiving a tree connection's events. Called on the queue given to `connectTree`.
public protocol TreeBackendClient: AnyObject {
    func tree(_ connection: TreeConnection, didSend event: TreeBackendEvent)
}

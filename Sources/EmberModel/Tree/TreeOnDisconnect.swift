/// Responsible for: one onDisconnect request of a tree client: overwrites a server applies when
/// the client's connection ends (a set: one op at `path`; an update: several under `path`), or
/// the cancellation of those registered at and below a path.
public enum TreeOnDisconnect: Sendable {
    case write(path: TreePath, ops: [TreeWriteOp], update: Bool)
    case cancel(TreePath)
}

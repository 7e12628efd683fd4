/// Responsible for: one overwrite of a multi-path tree write: the node at `path` becomes `value`
/// (null removes it). A set is one op; an update is one op per child path, applied atomically.
public struct TreeWriteOp: Sendable {
    public let path: TreePath
    public let value: TreeValue
    public init(path: TreePath, value: TreeValue) { self.path = path; self.value = value }
}
